/*
 * sampler_sgfs.c - stochastic gradient Fisher scoring, full preconditioner
 * (SGFS-f; Ahn, Korattikara and Welling, ICML 2012, Algorithm 1), with the
 * two corrections of ALGORITHMS.md 2.8b that make it exact on Gaussian
 * posteriors at any batch fraction:
 *
 *   V_t   = Gc Gc' / (n - 1)               empirical Fisher of the minibatch
 *   I_t   = (1 - kappa_t) I_{t-1} + kappa_t V_t,   kappa_t = 1/t'
 *   gamma = 1 + (N/n) (N - n)/(N - 1)     (without-replacement batches)
 *   A     = gamma N (1 + alpha^2) I_t + Lambda      (Lambda: prior precision)
 *   eta   = alpha sqrt(gamma N) U' xi,  U'U = I_t   (eta ~ N(0, 4B/eps),
 *                                                    B = gamma N I_t)
 *   theta <- theta + 2 A^{-1} (grad + eta),          alpha^2 = 4 / eps.
 *
 * t' counts the iterations since the running mean was last restarted: at
 * iteration spar[0] (half-way through burn-in) it restarts, so that I_t does
 * not average scores from the transient (ALGORITHMS.md 2.8, note 4).
 * During burn-in, and until I_t has averaged scores of 2D examples, steps
 * are kept within a trust region (fisher.c).  A matrix that no jitter makes
 * positive definite fails the step (the driver reports a divergence).
 * State: I (D x D, upper triangle) and the count t'.  Scratch: V, the
 * Cholesky factors of A and I, gbar, the right-hand side and xi.
 * Cost per iteration O(n D^2 + D^3).
 */
#include "sgfs.h"

static int sgfs_step(sgfs_engine *e, double eps)
{
    const int D = e->D;
    const size_t DD = (size_t) D * D;
    double *fisher = e->sstate, *count = e->sstate + DD;
    double *V = e->work, *UA = V + DD, *UI = UA + DD;
    double *gbar = UI + DD, *rhs = gbar + D, *xi = rhs + D;
    const double gamma = sgfs_gamma_fpc(e->N, e->n);
    const double alpha2 = R_FINITE(eps) ? 4.0 / eps : 0.0;
    const double gN = gamma * e->N;

    sgfs_centered_crossprod(e->G, D, e->n, gbar, V);
    sgfs_fisher_update(e, count, fisher, V, 1);

    /* A = gamma N (1 + alpha^2) I + Lambda  (upper triangle into V) */
    for (int j = 0; j < D; j++) {
        for (int i = 0; i <= j; i++)
            V[i + (size_t) j * D] = gN * (1.0 + alpha2) * fisher[i + (size_t) j * D];
        V[j + (size_t) j * D] += e->prior_prec[j];
    }
    if (sgfs_chol_upper(V, D, UA) < 0.0) return 1;

    memcpy(rhs, e->grad, (size_t) D * sizeof(double));
    if (alpha2 > 0.0) {
        if (sgfs_chol_upper(fisher, D, UI) < 0.0) return 1;
        for (int j = 0; j < D; j++) xi[j] = norm_rand();
        sgfs_upper_t_times(UI, D, xi, gbar);          /* gbar = U' xi */
        const double s = sqrt(alpha2 * gN);
        for (int j = 0; j < D; j++) rhs[j] += s * gbar[j];
    }
    memcpy(xi, rhs, (size_t) D * sizeof(double));
    sgfs_chol_solve(UA, D, rhs);                      /* rhs = A^{-1} rhs */
    const double shrink = sgfs_burnin_shrink(e, rhs, xi);
    for (int j = 0; j < D; j++) e->theta[j] += 2.0 * shrink * rhs[j];
    return 0;
}

const sgfs_sampler sgfs_sampler_sgfs_full = {
    "sgfs_full", 1,
    {1, 0, 1},            /* state: I (D x D), count                       */
    {3, 3, 0},            /* scratch: V, U_A, U_I (D x D); gbar, rhs, xi   */
    NULL, sgfs_step, 0
};
