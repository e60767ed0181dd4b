/* Batched small GEMM through libxsmm, the small-GEMM JIT SeisSol uses on CPUs, for the libxsmm
 * column of benchmarks/gemm_batched.py (loaded with ctypes). Built against Debian's header-only
 * libxsmm-dev (libxsmm_source.h compiles libxsmm into this library); LIBXSMM_TARGET (e.g. hsw)
 * picks the ISA of the generated code.
 *
 * xsmm_gemm_batch: C_i = A_i B_i (alpha 1, beta 0) for i < batch; A, B, C column-major m x k,
 * k x n and m x n matrices stored one after the other; the batch is split over the OpenMP
 * threads. With resident > 0, call i computes entry i % resident instead, so that A, B and C
 * stay in the caches (the "cached" figure of benchmarks/gemm_ab.py). Returns 0, or 1 when
 * libxsmm has no kernel for the shape. */
#include <libxsmm_source.h>

int xsmm_gemm_batch(int f64, int m, int n, int k, long batch, long resident, const void *a,
                    const void *b, void *c) {
    libxsmm_blasint lda = m, ldb = k, ldc = m;
    long sa = (long)m * k, sb = (long)k * n, sc = (long)m * n, i;
    if (f64) {
        const double alpha = 1.0, beta = 0.0;
        libxsmm_dmmfunction kernel =
            libxsmm_dmmdispatch(m, n, k, &lda, &ldb, &ldc, &alpha, &beta, NULL, NULL);
        const double *pa = a, *pb = b;
        double *pc = c;
        if (!kernel) {
            return 1;
        }
#pragma omp parallel for schedule(static)
        for (i = 0; i < batch; ++i) {
            const long e = resident > 0 ? i % resident : i;
            kernel(pa + e * sa, pb + e * sb, pc + e * sc);
        }
    } else {
        const float alpha = 1.0f, beta = 0.0f;
        libxsmm_smmfunction kernel =
            libxsmm_smmdispatch(m, n, k, &lda, &ldb, &ldc, &alpha, &beta, NULL, NULL);
        const float *pa = a, *pb = b;
        float *pc = c;
        if (!kernel) {
            return 1;
        }
#pragma omp parallel for schedule(static)
        for (i = 0; i < batch; ++i) {
            const long e = resident > 0 ? i % resident : i;
            kernel(pa + e * sa, pb + e * sb, pc + e * sc);
        }
    }
    return 0;
}
