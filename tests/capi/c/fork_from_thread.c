/* Forks of a C host from threads other than the one that started the embedded interpreter
 * (capi/helpers.c, the fork handlers): the child keeps the forking thread's Python thread state
 * and calls the library. Modes (usage: fork_from_thread MODE ROUNDS; prints "ok"):
 *   worker-init  a worker thread makes the library's first call and ends; main forks;
 *   fresh-thread main starts the library; a thread that never called it forks;
 *   busy         a thread compiles in a loop while main forks: the child must not find the
 *                library's lock held by that thread (capi/errors.py).
 * Each child compiles a text of its own (a miss) and leaves through _exit(), which runs no exit
 * hook: its counts must be in the folder's totals all the same (a child saves at once); the
 * test compares them with the entries. The parent waits for each child (the test runs the
 * program with a timeout: a hung child fails it) and checks it exited with 0. */
#include "marked_compile.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* compile_marked with a core info of the calling thread's own; 0 on success. */
static int compile(char const *who, int round) {
    tinytc_core_info_t info;
    OK(tinytc_core_info_intel_create_from_name(&info, "pvc"));
    int failed = compile_marked(info, who, round);
    OK(tinytc_core_info_release(info));
    return failed;
}

/* Forks `rounds` children that each compile "child ROUND" and _exit; 0 when all exited 0. */
static int forks(int rounds) {
    for (int round = 0; round < rounds; ++round) {
        int status;
        pid_t child = fork();
        EXPECT(child >= 0);
        if (child == 0) {
            _exit(compile("child", round) ? 3 : 0);
        }
        EXPECT(waitpid(child, &status, 0) == child);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "child %d: status %d\n", round, status);
            return 1;
        }
    }
    return 0;
}

static int rounds = 1;
static volatile int stop = 0;
static int busy_compiles = 0;

static void *first_call(void *arg) { return (void *)(intptr_t)compile((char const *)arg, 0); }
static void *forker(void *arg) { (void)arg; return (void *)(intptr_t)forks(rounds); }
static void *busy(void *arg) {
    (void)arg;
    while (!stop) {
        if (compile("busy", busy_compiles++)) {
            return (void *)1;
        }
    }
    return NULL;
}

/* Runs `fn` in a thread of its own and returns its result. */
static int in_thread(void *(*fn)(void *), void *arg) {
    pthread_t thread;
    void *result;
    EXPECT(pthread_create(&thread, NULL, fn, arg) == 0);
    EXPECT(pthread_join(thread, &result) == 0);
    return (int)(intptr_t)result;
}

int main(int argc, char **argv) {
    char const *mode = argc > 1 ? argv[1] : "";
    rounds = argc > 2 ? atoi(argv[2]) : 1;
    if (!strcmp(mode, "worker-init")) {
        EXPECT(in_thread(first_call, "worker") == 0);
        EXPECT(forks(rounds) == 0);
    } else if (!strcmp(mode, "fresh-thread")) {
        EXPECT(compile("main", 0) == 0);
        EXPECT(in_thread(forker, NULL) == 0);
    } else if (!strcmp(mode, "busy")) {
        pthread_t thread;
        void *result;
        EXPECT(compile("main", 0) == 0);
        EXPECT(pthread_create(&thread, NULL, busy, NULL) == 0);
        EXPECT(forks(rounds) == 0);
        stop = 1;
        EXPECT(pthread_join(thread, &result) == 0);
        EXPECT(result == NULL);
        fprintf(stderr, "busy thread compiled %d texts\n", busy_compiles);
    } else {
        fprintf(stderr, "unknown mode %s\n", mode);
        return 2;
    }
    printf("ok\n");
    return 0;
}
