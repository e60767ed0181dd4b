/* The native writer of a C host's kernel-cache entries (capi/helpers.c), seen from the host.
 * libtinytc is loaded with dlopen (RTLD_GLOBAL), as a plugin host would.
 *
 * Usage: writer_thread LIB MODE ROUND
 * Compiles a text of its own (a miss, whose entry the writer thread writes), then:
 *   thread   checks that the thread runs, named "tinytc-writer" (/proc/self/task/x/comm), with
 *            SIGINT, SIGTERM, SIGUSR1 and SIGCHLD blocked although the host blocks none;
 *   dlclose  unloads the library at once (its exit hook waits for the write), forks (the
 *            child leaves at once) and exits: the thread, which goes on in the library's code
 *            to wait for work, must not crash the process (the library stays mapped);
 *   rmroot   removes the whole cache folder (TINYTC_CACHE_DIR) at once, while the entry's
 *            write is pending (the test slows it down), and exits (which waits for it);
 *   many     compiles ROUND+1 and ROUND+2 as well.
 * Prints ok. */
#define _GNU_SOURCE
#include <tinytc/tinytc.h>

#include "scale_body.h"

#include <dirent.h>
#include <errno.h>
#include <dlfcn.h>
#include <ftw.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define EXPECT(c)                                                                                \
    do {                                                                                         \
        if (!(c)) {                                                                              \
            fprintf(stderr, "%s:%d: failed: %s\n", __FILE__, __LINE__, #c);                      \
            exit(1);                                                                             \
        }                                                                                        \
    } while (0)
#define LOAD(f) __typeof__(f) *p_##f = (__typeof__(f) *)dlsym(lib, #f)

static void *lib;

static void compile(int round) {
    char text[sizeof(body) + 64];
    int size = snprintf(text, sizeof(text), "%s; writer_thread %d\n", body, round);
    LOAD(tinytc_core_info_intel_create_from_name);
    LOAD(tinytc_core_info_release);
    LOAD(tinytc_parse_string);
    LOAD(tinytc_prog_compile_to_spirv_and_assemble);
    LOAD(tinytc_prog_release);
    LOAD(tinytc_binary_release);
    tinytc_core_info_t info;
    tinytc_prog_t prog;
    tinytc_binary_t bin;
    EXPECT(p_tinytc_core_info_intel_create_from_name(&info, "pvc") == tinytc_status_success);
    EXPECT(p_tinytc_parse_string(&prog, (size_t)size, text, NULL) == tinytc_status_success);
    EXPECT(p_tinytc_prog_compile_to_spirv_and_assemble(&bin, prog, info) ==
           tinytc_status_success);
    p_tinytc_binary_release(bin);
    p_tinytc_prog_release(prog);
    p_tinytc_core_info_release(info);
}

/* The task id of the thread named tinytc-writer, or 0. */
static long find_writer(void) {
    DIR *dir = opendir("/proc/self/task");
    struct dirent *e;
    long found = 0;
    EXPECT(dir);
    while (!found && (e = readdir(dir)) != NULL) {
        char path[300], comm[64] = "";
        FILE *f;
        snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
        if ((f = fopen(path, "r")) != NULL) {
            if (fgets(comm, sizeof(comm), f) && strcmp(comm, "tinytc-writer\n") == 0) {
                found = atol(e->d_name);
            }
            fclose(f);
        }
    }
    closedir(dir);
    return found;
}

/* The writer's task id, once it has named itself (it may not have started yet); 0 when no
 * such thread comes within 10 s. */
static long writer_tid(void) {
    long tid = 0;
    for (int i = 0; i < 10000 && (tid = find_writer()) == 0; ++i) {
        usleep(1000);
    }
    return tid;
}

/* Line `key` of /proc/self/task/TID/status (its value), into `value`. */
static void task_status(long tid, const char *key, char *value, size_t size) {
    char path[64], line[256];
    FILE *f;
    snprintf(path, sizeof(path), "/proc/self/task/%ld/status", tid);
    EXPECT((f = fopen(path, "r")) != NULL);
    value[0] = '\0';
    while (fgets(line, sizeof(line), f)) {
        if (strncmp(line, key, strlen(key)) == 0 && line[strlen(key)] == ':') {
            snprintf(value, size, "%s", line + strlen(key) + 1);
        }
    }
    fclose(f);
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st;
    (void)flag;
    (void)ftw;
    if (remove(path) != 0 && errno != ENOENT) {
        perror(path);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv) {
    sigset_t none;
    int round;
    if (argc < 4) {
        fprintf(stderr, "usage: %s LIB MODE ROUND\n", argv[0]);
        return 2;
    }
    round = atoi(argv[3]);
    sigemptyset(&none);
    EXPECT(pthread_sigmask(SIG_SETMASK, &none, NULL) == 0);
    EXPECT((lib = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL)) != NULL);
    compile(round);
    if (strcmp(argv[2], "thread") == 0) {
        char blocked[64];
        unsigned long long mask;
        long tid = writer_tid();
        EXPECT(tid != 0);
        task_status(tid, "SigBlk", blocked, sizeof(blocked));
        mask = strtoull(blocked, NULL, 16);
        EXPECT(mask & (1ull << (SIGINT - 1)) && mask & (1ull << (SIGTERM - 1)));
        EXPECT(mask & (1ull << (SIGUSR1 - 1)) && mask & (1ull << (SIGCHLD - 1)));
    } else if (strcmp(argv[2], "dlclose") == 0) {
        pid_t child;
        int status;
        EXPECT(dlclose(lib) == 0); /* its exit hook waits for the write, the thread goes on */
        child = fork();
        EXPECT(child >= 0);
        if (child == 0) {
            _exit(0);
        }
        EXPECT(waitpid(child, &status, 0) == child && WIFEXITED(status));
        usleep(20000);
    } else if (strcmp(argv[2], "rmroot") == 0) {
        EXPECT(nftw(getenv("TINYTC_CACHE_DIR"), remove_one, 16, FTW_DEPTH | FTW_PHYS) == 0);
    } else if (strcmp(argv[2], "many") == 0) {
        compile(round + 1);
        compile(round + 2);
    }
    printf("ok\n");
    return 0;
}
