/*
 * design_copy.c - the engine's one copy of the data:
 *
 *   xt = (t(x) - center) / scale      x: N x P (R's layout), xt: P x N,
 *
 * so that one example is one contiguous column (a minibatch gather is n
 * short contiguous reads).  Before the copy is written, Linux is asked to
 * back it with transparent huge pages (madvise MADV_HUGEPAGE): random
 * minibatches of a large data set otherwise pay a TLB miss per example
 * (DESIGN.md section 2).  The transpose is blocked so that both the reads
 * of x and the writes of xt stay in cache.
 */
#if defined(__linux__)
# include <sys/mman.h>
#endif
#include <stdint.h>
#include "sgfs.h"

#define HUGE_PAGE ((uintptr_t) 2 << 20)
#define BLOCK 64

void sgfs_advise_huge_pages(void *p, size_t bytes)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    uintptr_t start = ((uintptr_t) p + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
    uintptr_t end = ((uintptr_t) p + bytes) & ~(HUGE_PAGE - 1);
    if (end > start) (void) madvise((void *) start, end - start, MADV_HUGEPAGE);
#else
    (void) p;
    (void) bytes;
#endif
}

/* the design x (N x P doubles) and its P centres and scales, or an error */
void sgfs_check_design(SEXP x, SEXP center, SEXP scale)
{
    if (TYPEOF(x) != REALSXP || !Rf_isMatrix(x))
        Rf_error("internal error: 'x' must be a double matrix");
    const int P = Rf_ncols(x);
    if (TYPEOF(center) != REALSXP || TYPEOF(scale) != REALSXP ||
        Rf_length(center) != P || Rf_length(scale) != P)
        Rf_error("internal error: 'center' and 'scale' must have %d values", P);
}

SEXP sgfs_design_copy(SEXP x, SEXP center, SEXP scale)
{
    sgfs_check_design(x, center, scale);
    const int N = Rf_nrows(x), P = Rf_ncols(x);
    SEXP xt = PROTECT(Rf_allocMatrix(REALSXP, P, N));
    double *out = REAL(xt);
    const double *in = REAL(x), *c = REAL(center), *s = REAL(scale);
    sgfs_advise_huge_pages(out, (size_t) P * N * sizeof(double));
    for (int i0 = 0; i0 < N; i0 += BLOCK) {
        int i1 = i0 + BLOCK < N ? i0 + BLOCK : N;
        for (int j = 0; j < P; j++) {
            const double *col = in + (size_t) j * N;
            for (int i = i0; i < i1; i++)
                out[j + (size_t) P * i] = (col[i] - c[j]) / s[j];
        }
    }
    UNPROTECT(1);
    return xt;
}
