/* Measured FMA peak of the ISA this file is compiled for (-march=native, or -mavx2 -mfma):
 * every OpenMP thread runs a loop of fused multiply-adds on 10 independent vector accumulators
 * (enough to cover the FMA latency times the FMA units of current cores), for f32 and f64, and
 * the program prints "f32<TAB>GFLOP/s" and "f64<TAB>GFLOP/s" (2 flops per lane and FMA; the
 * best of 5 runs of ITERATIONS loop trips) and "isa<TAB>avx512|avx2". */
#include <omp.h>
#include <stdio.h>

#ifdef __AVX512F__
#define VBYTES 64
#define ISA "avx512"
#else
#define VBYTES 32
#define ISA "avx2"
#endif
#define ITERATIONS 20000000L

typedef float vf __attribute__((vector_size(VBYTES)));
typedef double vd __attribute__((vector_size(VBYTES)));

#define FMA_LOOP(T, E, NAME)                                                                   \
    static double NAME(void) {                                                                 \
        double sink = 0.0, t0, t;                                                              \
        t0 = omp_get_wtime();                                                                  \
        _Pragma("omp parallel reduction(+ : sink)") {                                          \
            T x = (T){0} + (E)1 - (E)(omp_get_thread_num() + 1) * (E)1e-6, y = x * (E)0.5;  \
            T c0 = x, c1 = x + (E)1, c2 = x + (E)2, c3 = x + (E)3, c4 = x + (E)4;           \
            T c5 = x + (E)5, c6 = x + (E)6, c7 = x + (E)7, c8 = x + (E)8, c9 = x + (E)9;     \
            long i;                                                                            \
            for (i = 0; i < ITERATIONS; ++i) {                                                 \
                c0 = c0 * x + y;                                                               \
                c1 = c1 * x + y;                                                               \
                c2 = c2 * x + y;                                                               \
                c3 = c3 * x + y;                                                               \
                c4 = c4 * x + y;                                                               \
                c5 = c5 * x + y;                                                               \
                c6 = c6 * x + y;                                                               \
                c7 = c7 * x + y;                                                               \
                c8 = c8 * x + y;                                                               \
                c9 = c9 * x + y;                                                               \
            }                                                                                  \
            c0 = c0 + c1 + c2 + c3 + c4 + c5 + c6 + c7 + c8 + c9;                              \
            sink += c0[0];                                                                     \
        }                                                                                      \
        t = omp_get_wtime() - t0;                                                              \
        if (sink == 42.0) {                                                                    \
            printf("#\n"); /* keeps the result alive */                                        \
        }                                                                                      \
        return 10.0 * ITERATIONS * 2.0 * (VBYTES / sizeof(E))      * omp_get_max_threads() / \
               t * 1e-9;                                                                       \
    }

FMA_LOOP(vf, float, peak_f32)
FMA_LOOP(vd, double, peak_f64)

int main(void) {
    double best32 = 0.0, best64 = 0.0;
    int r;
    for (r = 0; r < 5; ++r) {
        double p32 = peak_f32(), p64 = peak_f64();
        best32 = p32 > best32 ? p32 : best32;
        best64 = p64 > best64 ? p64 : best64;
    }
    printf("f32\t%.2f\nf64\t%.2f\nisa\t%s\n", best32, best64, ISA);
    return 0;
}
