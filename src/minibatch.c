/*
 * minibatch.c - drawing a minibatch and gathering its columns.
 *
 * sgfs_minibatch: n distinct indices, uniformly without replacement, by a
 *   partial Fisher-Yates shuffle of a persistent permutation perm[0..N-1]:
 *   for i = 0..n-1, j = i + U{0..N-i-1} (R_unif_index), swap perm[i], perm[j];
 *   the batch is perm[0..n-1].  Before drawing, the O(n) entries the previous
 *   draw moved are put back, so every draw starts from the identity and uses
 *   exactly the R draws of sample.int(N - i, 1) - 1, i = 0..n-1 (which is
 *   what the pure-R reference chains in the tests replay).
 *
 * sgfs_gather: copies the n columns xt[, idx] (P x N, one example per
 *   column) into the contiguous P x n buffer xb, prefetching the columns a
 *   few examples ahead: the random reads, not the arithmetic, dominate the
 *   cost of a minibatch gradient on large data (DESIGN.md section 2).
 */
#include "sgfs.h"
#include <R_ext/Random.h>

#define PREFETCH_AHEAD 8

/* puts back the entries the last draw of n moved: perm is the identity */
void sgfs_minibatch_reset(int *perm, int n)
{
    for (int i = 0; i < n; i++) {
        int v = perm[i];
        if (v >= n) perm[v] = v;
    }
    for (int i = 0; i < n; i++) perm[i] = i;
}

void sgfs_minibatch(int *perm, int N, int n)
{
    sgfs_minibatch_reset(perm, n);
    for (int i = 0; i < n; i++) {
        int j = i + (int) R_unif_index((double) (N - i));
        int tmp = perm[i];
        perm[i] = perm[j];
        perm[j] = tmp;
    }
}

void sgfs_gather(const double *xt, int P, const int *idx, int n, double *xb)
{
    const size_t bytes = (size_t) P * sizeof(double);
    for (int i = 0; i < n; i++) {
#if defined(__GNUC__)
        if (i + PREFETCH_AHEAD < n) {
            const char *next = (const char *) (xt + (size_t) idx[i + PREFETCH_AHEAD] * P);
            for (size_t off = 0; off < bytes; off += 64)
                __builtin_prefetch(next + off, 0, 0);
        }
#endif
        memcpy(xb + (size_t) i * P, xt + (size_t) idx[i] * P, bytes);
    }
}

int sgfs_all_finite(const double *x, int n)
{
    for (int i = 0; i < n; i++)
        if (!R_FINITE(x[i])) return 0;
    return 1;
}
