/* A C host whose kernel-cache entries its library writes behind, on a native thread
 * (capi/helpers.c): tests/capi/test_capi_kernel_cache.py runs several at once in one folder.
 *
 * Usage: cache_writers WHO N [clear]
 * Compiles the marked texts "; shared 0" .. "; shared N-1" (the same in every process) and
 * "; WHO 0" (its own), then "; shared 0" again (answered from memory). With "clear", the
 * kernels folder is emptied and removed after each compile but the last, as another process's
 * `tinytc-cache clear` would, racing the write behind of the entry just compiled. Prints ok. */
#include "marked_compile.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void clear_folder(void) {
    char path[4096];
    DIR *dir;
    struct dirent *e;
    snprintf(path, sizeof(path), "%s/kernels", getenv("TINYTC_CACHE_DIR"));
    dir = opendir(path);
    if (!dir) {
        return;
    }
    while ((e = readdir(dir)) != NULL) {
        char file[8192];
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
            snprintf(file, sizeof(file), "%s/%s", path, e->d_name);
            unlink(file);
        }
    }
    closedir(dir);
    rmdir(path);
}

int main(int argc, char **argv) {
    tinytc_core_info_t info;
    int n, i, clear;
    if (argc < 3 || (n = atoi(argv[2])) < 1) {
        fprintf(stderr, "usage: %s WHO N [clear]\n", argv[0]);
        return 2;
    }
    clear = argc > 3 && strcmp(argv[3], "clear") == 0;
    OK(tinytc_core_info_intel_create_from_name(&info, "pvc"));
    for (i = 0; i < n; ++i) {
        EXPECT(compile_marked(info, "shared", i) == 0);
        if (clear) {
            clear_folder();
        }
    }
    EXPECT(compile_marked(info, argv[1], 0) == 0);
    EXPECT(compile_marked(info, "shared", 0) == 0);
    OK(tinytc_core_info_release(info));
    printf("ok\n");
    return 0;
}
