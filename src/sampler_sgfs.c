/*
 * sampler_sgfs.c - stochastic gradient Fisher scoring, full preconditioner
 * (SGFS-f; Ahn, Korattikara and Welling, ICML 2012, Algorithm 1), with the
 * two corrections of algorithms vignette 2.8b that make it exact on Gaussian
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
 * not average scores from the transient (algorithms vignette 2.8, note 4).
 * During burn-in, and until I_t has averaged scores of 2D examples, steps
 * are kept within a trust region (fisher.c).  A matrix that no jitter makes
 * positive definite fails the step (the driver reports a divergence).
 * State: I (D x D, upper triangle), a Cholesky factor (of B = gamma N I +
 * Lambda for the robust rule, refreshed when t' has grown by 5 %; of I
 * for the paper's), the count t' and the factor's.  Scratch: V, the
 * factor of A (paper's rule), gbar, the right-hand side and xi.  Cost per
 * iteration O(n D^2 + D^3), O(n D^2) between the robust rule's refreshes.
 * The update is that of sgfs_blockdiag.c with a single block.
 */
#include "sgfs.h"

/* the full matrix is the block-diagonal update with one block (the
   computation is in sgfs_blockdiag.c) */
static int sgfs_step(sgfs_engine *e, double eps)
{
    const double whole = e->D;
    return sgfs_blockdiag_step(e, eps, 1, &whole);
}

const sgfs_sampler sgfs_sampler_sgfs_full = {
    .name = "sgfs_full", .tempered = 1, .needs_scores = 1, .fixed_after_burnin = 1,
    .fisher = SGFS_FISHER_FULL,
    .state = {2, 0, 2},            /* I, U (D x D); count, last refresh      */
    .work = {2, 3, 0},             /* V, U_A (D x D); gbar, rhs, xi          */
    .step = sgfs_step, .n_spar = 1, .spar_names = {"restart"},
    .state_parts = {{"I", {1, 0, 0}}, {"U", {1, 0, 0}}, {"count", {0, 0, 1}},
                    {"refreshed", {0, 0, 1}}}
};
