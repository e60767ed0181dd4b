/* Times parse + compile of tensor-language programs to a SPIR-V binary through the C API, as an
 * application calls it. The same source is built against our libtinytc and against another
 * implementation's library (benchmarks/compile_capi.py does both), so it uses only functions
 * both declare.
 *
 * Usage: compile_capi REPEAT TARGET FILE...
 * Per file, one untimed run and then REPEAT timed runs; every run creates a compiler context,
 * parses the text, compiles and assembles it for TARGET (tgl, pvc, bmg; "tgl+f64" is tgl with
 * the float64 SPIR-V feature on: a GPU without 2-D block messages whose SPIR-V the CPU runtime
 * executes), and releases everything. With TINYTC_CACHE=0 each run is a cold compile; with our kernel cache on, the
 * timed runs compile a text the process compiled before (in-process cache hits). With
 * COMPILE_CAPI_FRESH=1 every run compiles a text no run compiled before (the file with a comment
 * line "; run N" appended, which changes the cache's key and nothing else): with the cache on
 * each timed run is a miss, the first start of a program, in the cache folder the untimed run
 * made; with TINYTC_CACHE=0 the same texts give the cold baseline of that miss. A fresh run is
 * followed by 5 ms of untimed work (a busy loop), as a program does something else after its
 * compile (a device build): the entry a miss writes behind, on the cache's writer thread, is
 * then written meanwhile, not counted in the next run's CPU time. The calling thread's CPU time
 * is taken too: what the caller pays, without the time another thread of the library (the
 * kernel cache's native writer, capi/helpers.c) spends meanwhile, which a loaded machine may
 * leave to run only during the next timed run.
 * With SPIRV_OUT_DIR set, the binary of each file is also written there as BASENAME.spv.
 * With COMPILE_CAPI_PAIRED=1 (our library only), every run compiles two fresh texts in turn
 * (the order alternating), one with the context's kernel-cache flag off and one with it on (a
 * miss): "off" and "miss" paired in one process, in the same state of the machine.
 * Prints one line per file: "file<TAB>median CPU ms<TAB>median elapsed ms<TAB>SPIR-V bytes<TAB>
 * median CPU ms of the calling thread", paired with two more fields, the median CPU ms of the
 * process and of the thread of the compiles with the cache off.
 * CPU time is the process's (all threads): on a shared machine the elapsed time of a run of a
 * few milliseconds mostly measures how long other processes held the cores. Any failing call
 * prints the status and the compiler's message and exits 1. */
#include <tinytc/tinytc.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void report(char const *what, const tinytc_location_t *location, void *user_data) {
    (void)location;
    (void)user_data;
    fprintf(stderr, "%s\n", what);
}

#define CHECK(X)                                                                               \
    do {                                                                                       \
        tinytc_status_t s_ = (X);                                                              \
        if (s_ != tinytc_status_success) {                                                     \
            fprintf(stderr, "%s: status %d\n", #X, (int)s_);                                   \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)

static double now_ms(clockid_t clock) {
    struct timespec t;
    clock_gettime(clock, &t);
    return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

static char *read_file(char const *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    char *text;
    long n;
    if (!f || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fprintf(stderr, "cannot read %s\n", path);
        exit(1);
    }
    text = malloc((size_t)n + 1);
    if (!text || fread(text, 1, (size_t)n, f) != (size_t)n) {
        fprintf(stderr, "cannot read %s\n", path);
        exit(1);
    }
    text[n] = '\0';
    fclose(f);
    *size = (size_t)n;
    return text;
}

static void write_spirv(char const *dir, char const *path, uint8_t const *data, size_t bytes) {
    char const *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    size_t n = strlen(dir) + strlen(base) + 6;
    char *out = malloc(n);
    FILE *f;
    snprintf(out, n, "%s/%s.spv", dir, base);
    f = fopen(out, "wb");
    if (!f || fwrite(data, 1, bytes, f) != bytes || fclose(f) != 0) {
        fprintf(stderr, "cannot write %s\n", out);
        exit(1);
    }
    free(out);
}

/* The context's kernel-cache flag for compile_once: -1 leaves it alone, 0 / 1 set it (our
 * library only: compile_capi.py defines COMPILE_CAPI_OURS for it; upstream has no such flag). */
static int cache_flag = -1;

/* One parse + compile + assemble from a new context; returns the SPIR-V size and writes the
 * binary to out_dir/BASENAME.spv unless out_dir is NULL. */
static size_t compile_once(char const *path, char const *text, size_t size,
                           const_tinytc_core_info_t info, char const *out_dir) {
    tinytc_compiler_context_t ctx;
    tinytc_prog_t prog;
    tinytc_binary_t bin;
    tinytc_bundle_format_t format;
    size_t bytes;
    uint8_t const *data;
    CHECK(tinytc_compiler_context_create(&ctx));
    CHECK(tinytc_compiler_context_set_error_reporter(ctx, report, NULL));
#ifdef COMPILE_CAPI_OURS
    if (cache_flag >= 0) {
        CHECK(tinytc_compiler_context_set_optimization_flag(ctx, tinytc_optflag_kernel_cache,
                                                            cache_flag));
    }
#endif
    CHECK(tinytc_parse_string(&prog, size, text, ctx));
    CHECK(tinytc_prog_compile_to_spirv_and_assemble(&bin, prog, info));
    CHECK(tinytc_binary_get_raw(bin, &format, &bytes, &data));
    if (out_dir) {
        write_spirv(out_dir, path, data, bytes);
    }
    CHECK(tinytc_binary_release(bin));
    CHECK(tinytc_prog_release(prog));
    CHECK(tinytc_compiler_context_release(ctx));
    return bytes;
}

static int cmp_double(void const *a, void const *b) {
    double x = *(double const *)a, y = *(double const *)b;
    return (x > y) - (x < y);
}

/* One timed compile of `text` with " ; run N[ SUFFIX]" appended when fresh (a text no run
 * compiled before), then, when fresh, 5 ms of untimed work; stores process CPU, elapsed and
 * thread CPU ms. */
static void timed(char const *path, char const *text, size_t size, char *run_text,
                  const_tinytc_core_info_t info, int fresh, int run, char const *suffix,
                  double *cpu, double *wall, double *thread) {
    double c0, w0, t0;
    size_t run_size = size;
    memcpy(run_text, text, size);
    if (fresh) {
        run_size += (size_t)snprintf(run_text + size, 32, "\n; run %d%s\n", run, suffix);
    }
    c0 = now_ms(CLOCK_PROCESS_CPUTIME_ID);
    w0 = now_ms(CLOCK_MONOTONIC);
    t0 = now_ms(CLOCK_THREAD_CPUTIME_ID);
    compile_once(path, run_text, run_size, info, NULL);
    *cpu = now_ms(CLOCK_PROCESS_CPUTIME_ID) - c0;
    *wall = now_ms(CLOCK_MONOTONIC) - w0;
    *thread = now_ms(CLOCK_THREAD_CPUTIME_ID) - t0;
    if (fresh) { /* busy, not asleep: a sleep leaves the next run with cold caches */
        double until = now_ms(CLOCK_MONOTONIC) + 5.0;
        while (now_ms(CLOCK_MONOTONIC) < until) {
        }
    }
}

int main(int argc, char **argv) {
    int repeat, i, f, fresh, paired;
    double *cpu, *wall, *thread, *off_cpu, *off_wall, *off_thread;
    tinytc_core_info_t info;
    if (argc < 4 || (repeat = atoi(argv[1])) < 1) {
        fprintf(stderr, "usage: %s REPEAT TARGET FILE...\n", argv[0]);
        return 2;
    }
    {
        char name[16];
        char *plus;
        snprintf(name, sizeof(name), "%s", argv[2]);
        plus = strchr(name, '+');
        if (plus) {
            *plus = '\0';
        }
        CHECK(tinytc_core_info_intel_create_from_name(&info, name));
        if (plus && strcmp(plus + 1, "f64") == 0) {
            CHECK(tinytc_core_info_set_spirv_feature(info, tinytc_spirv_feature_float64, 1));
        } else if (plus) {
            fprintf(stderr, "unknown target %s\n", argv[2]);
            return 2;
        }
    }
    fresh = getenv("COMPILE_CAPI_FRESH") && strcmp(getenv("COMPILE_CAPI_FRESH"), "1") == 0;
    paired = getenv("COMPILE_CAPI_PAIRED") && strcmp(getenv("COMPILE_CAPI_PAIRED"), "1") == 0;
#ifndef COMPILE_CAPI_OURS
    paired = 0;
#endif
    fresh = fresh || paired;
    off_cpu = malloc((size_t)repeat * sizeof(*off_cpu));
    off_wall = malloc((size_t)repeat * sizeof(*off_wall));
    off_thread = malloc((size_t)repeat * sizeof(*off_thread));
    cpu = malloc((size_t)repeat * sizeof(*cpu));
    wall = malloc((size_t)repeat * sizeof(*wall));
    thread = malloc((size_t)repeat * sizeof(*thread));
    for (f = 3; f < argc; ++f) {
        size_t size, bytes;
        char *text = read_file(argv[f], &size);
        char *run_text = malloc(size + 32);
        bytes = compile_once(argv[f], text, size, info, getenv("SPIRV_OUT_DIR")); /* untimed: warms up, fills a cache */
        for (i = 0; i < repeat; ++i) {
            int k;
            for (k = 0; k < 1 + paired; ++k) {
                int off = paired && (k + i) % 2 == 0; /* the order alternates from run to run */
                cache_flag = paired ? !off : -1;
                if (off) {
                    timed(argv[f], text, size, run_text, info, fresh, i, " off", &off_cpu[i],
                          &off_wall[i], &off_thread[i]);
                } else {
                    timed(argv[f], text, size, run_text, info, fresh, i, "", &cpu[i], &wall[i],
                          &thread[i]);
                }
            }
            cache_flag = -1;
        }
        qsort(cpu, (size_t)repeat, sizeof(*cpu), cmp_double);
        qsort(wall, (size_t)repeat, sizeof(*wall), cmp_double);
        qsort(thread, (size_t)repeat, sizeof(*thread), cmp_double);
        printf("%s\t%.4f\t%.4f\t%zu\t%.4f", argv[f], cpu[repeat / 2], wall[repeat / 2], bytes,
               thread[repeat / 2]);
        if (paired) {
            qsort(off_cpu, (size_t)repeat, sizeof(*off_cpu), cmp_double);
            qsort(off_thread, (size_t)repeat, sizeof(*off_thread), cmp_double);
            printf("\t%.4f\t%.4f", off_cpu[repeat / 2], off_thread[repeat / 2]);
        }
        printf("\n");
        fflush(stdout);
        free(run_text);
        free(text);
    }
    free(cpu);
    free(wall);
    free(thread);
    free(off_cpu);
    free(off_wall);
    free(off_thread);
    CHECK(tinytc_core_info_release(info));
    return 0;
}
