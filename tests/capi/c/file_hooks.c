/* An LD_PRELOAD library for tests/capi/test_capi_kernel_cache.py: slows down or fails the file
 * operations of the kernel cache's writers whose path contains a given text, to open the
 * windows the tests need without timing anything.
 *   HOOK_SLOW_RENAME=TEXT   rename(old, new) with TEXT in `new` first sleeps 300 ms
 *   HOOK_SLOW_MKOSTEMP=TEXT mkostemp(template) with TEXT in `template` first sleeps 300 ms
 *   HOOK_FAIL_MKOSTEMP=TEXT mkostemp(template) with TEXT in `template` fails with EDQUOT
 * Python's own writes create their temporary files with open(), not mkostemp(): only the
 * native writer of libtinytc (capi/helpers.c) meets the mkostemp hooks. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int matches(const char *name, const char *path) {
    const char *text = getenv(name);
    return text && *text && path && strstr(path, text);
}

static void pause_300ms(void) {
    struct timespec ts = {0, 300000000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

int rename(const char *old, const char *new) {
    int (*real)(const char *, const char *) =
        (int (*)(const char *, const char *))dlsym(RTLD_NEXT, "rename");
    if (matches("HOOK_SLOW_RENAME", new)) {
        pause_300ms();
    }
    return real(old, new);
}

static int hooked_mkostemp(const char *real_name, char *template, int flags) {
    int (*real)(char *, int) = (int (*)(char *, int))dlsym(RTLD_NEXT, real_name);
    if (matches("HOOK_FAIL_MKOSTEMP", template)) {
        errno = EDQUOT;
        return -1;
    }
    if (matches("HOOK_SLOW_MKOSTEMP", template)) {
        pause_300ms();
    }
    return real(template, flags);
}

/* Both names: a caller built with _FILE_OFFSET_BITS=64 (as Python.h sets it) calls the second. */
int mkostemp(char *template, int flags) { return hooked_mkostemp("mkostemp", template, flags); }

int mkostemp64(char *template, int flags) {
    return hooked_mkostemp("mkostemp64", template, flags);
}
