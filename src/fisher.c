/*
 * fisher.c - what SGFS-f and SGFS-d share (Ahn et al. 2012; ALGORITHMS.md
 * 2.8b): the finite-population gamma and the running mean of the minibatch
 * empirical Fisher, I_t = (1 - 1/t') I_{t-1} + V_t / t', restarted at
 * iteration spar[0] (t' counts from the restart).
 */
#include "sgfs.h"

double sgfs_gamma_fpc(int N, int n)
{
    if (N <= 1) return 1.0;
    return 1.0 + ((double) N / n) * ((double) (N - n) / (N - 1));
}

/* full != 0: fisher and V are D x D (upper triangle); else length D */
void sgfs_fisher_update(sgfs_engine *e, double *count, double *fisher,
                        const double *V, int full)
{
    const int D = e->D;
    if (*e->iter == e->spar[0]) *count = 0.0;
    *count += 1.0;
    const double kappa = 1.0 / *count;
    if (full) {
        for (int j = 0; j < D; j++)
            for (int i = 0; i <= j; i++) {
                size_t k = i + (size_t) j * D;
                fisher[k] += kappa * (V[k] - fisher[k]);
            }
    } else {
        for (int j = 0; j < D; j++) fisher[j] += kappa * (V[j] - fisher[j]);
    }
}
