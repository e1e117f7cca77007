/*
 * sampler_sgfs_block.c - SGFS with a block-diagonal preconditioner (SGFS-b;
 * Ahn, Korattikara and Welling, ICML 2012, section 4: "factor the Fisher
 * information into k independent blocks of variables", cost O(k d^3)), with
 * the corrections of algorithms vignette 2.8b.  For contiguous parameter blocks
 * k = 1..K, theta_k = theta[o_k, o_k + b_k):
 *
 *   V_k   = Gc_k Gc_k' / (n - 1)              block k of the minibatch Fisher
 *   I_k   = (1 - kappa_t) I_k + kappa_t V_k,   kappa_t = 1/t'
 *   gamma = 1 + (N/n) (N - n)/(N - 1)
 *   A_k   = gamma N (1 + alpha^2) I_k + Lambda_k
 *   eta_k = alpha sqrt(gamma N) U_k' xi_k,  U_k'U_k = I_k
 *   theta_k <- theta_k + 2 A_k^{-1} (grad_k + eta_k),   alpha^2 = 4 / eps,
 *
 * i.e. SGFS-f (sampler_sgfs.c) with the off-diagonal blocks of I_t set to
 * zero: the same restart of the running mean at spar[0], burn-in trust
 * region and random numbers (D normals per iteration, in parameter order),
 * so that one block gives SGFS-f's chain.  The chain targets the posterior
 * exactly only when the posterior precision is block diagonal too; across
 * blocks it behaves like SGFS-d (it under-estimates variances at large
 * steps when the blocks are correlated).
 *
 * spar = (restart iteration, K, b_1, ..., b_K), b_1 + ... + b_K = D.
 * State: the K blocks of I and of a Cholesky factor (S = sum_k b_k^2
 * doubles each), the count t' and the factor's; scratch 2S + 3D
 * (sgfs_blockdiag.c, which does the computation).
 * Cost per iteration O(n S + sum_k b_k^3), memory O(S): never D^2.
 */
#include "sgfs.h"

/* S = sum_k b_k^2 for a spar that describes blocks covering 1..D exactly,
   else -1 */
static R_xlen_t block_square_sum(const double *spar, R_xlen_t n_spar, int D)
{
    if (n_spar < 3 || spar[1] != (double) (n_spar - 2)) return -1;
    const int K = (int) spar[1];
    double total = 0.0;
    for (int k = 0; k < K; k++) {
        const double b = spar[2 + k];
        if (!(b >= 1.0 && b <= D && b == floor(b))) return -1;
        total += b;
    }
    return total == D ? sgfs_blocks_square_sum(K, spar + 2) : -1;
}

static R_xlen_t block_state_len(const double *spar, R_xlen_t n_spar, int D)
{
    const R_xlen_t S = block_square_sum(spar, n_spar, D);
    return S < 0 ? -1 : 2 * S + 2;           /* I, U; count, last refresh */
}

static R_xlen_t block_work_len(const double *spar, R_xlen_t n_spar, int D)
{
    const R_xlen_t S = block_square_sum(spar, n_spar, D);
    return S < 0 ? -1 : 2 * S + 3 * (R_xlen_t) D;    /* V, U_A; gbar, rhs, xi */
}

static int block_step(sgfs_engine *e, double eps)
{
    return sgfs_blockdiag_step(e, eps, (int) e->rule.spar[1], e->rule.spar + 2);
}

const sgfs_sampler sgfs_sampler_sgfs_block = {
    .name = "sgfs_block", .tempered = 1, .needs_scores = 1, .fixed_after_burnin = 1,
    .fisher = SGFS_FISHER_FULL, .step = block_step,
    .state_len = block_state_len, .work_len = block_work_len,   /* from the blocks in spar */
    .n_spar = 3, .spar_names = {"restart", "blocks"}      /* then the blocks' sizes */
};
