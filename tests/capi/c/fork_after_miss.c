/* A C host that forks right after kernel cache misses (src/tinytc_py/kernel_cache/writer.py):
 * each round compiles a new text in the parent, forks, and the child compiles another new text
 * (a miss of its own) and leaves through exit(); the parent waits for it. A child that hung on
 * something the parent's miss left held (the GIL, a lock of a writer thread)
 * would stop the program, which the test runs with a timeout. Usage: fork_after_miss ROUNDS; prints "ok";
 * the test then finds every entry, its statistics and no lock file in the cache folder, and a
 * second run finds them all. */
#include "marked_compile.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
    tinytc_core_info_t info;
    int rounds = argc > 1 ? atoi(argv[1]) : 1;
    OK(tinytc_core_info_intel_create_from_name(&info, "pvc"));
    for (int round = 0; round < rounds; ++round) {
        int status;
        pid_t child;
        if (compile_marked(info, "parent", round)) {
            return 1;
        }
        child = fork();
        EXPECT(child >= 0);
        if (child == 0) {
            exit(compile_marked(info, "child", round) ? 3 : 0);
        }
        EXPECT(waitpid(child, &status, 0) == child);
        EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    OK(tinytc_core_info_release(info));
    printf("ok\n");
    return 0;
}
