/*
 * sgfs_blockdiag.c - one SGFS update (Ahn, Korattikara and Welling, ICML
 * 2012, Algorithm 1, with the corrections of algorithms vignette 2.8b) whose
 * Fisher estimate is block diagonal over K contiguous parameter blocks
 * [o_k, o_k + b_k), b_1 + ... + b_K = D.  SGFS-f (sampler_sgfs.c) is the
 * case K = 1; SGFS-b (sampler_sgfs_block.c) uses several blocks.  Per block
 * k, with Gc_k the rows o_k..o_k+b_k-1 of the centred scores Gc (D x m) of
 * the minibatch's first m = fisher_rows rows (fisher.c):
 *
 *   V_k   = Gc_k Gc_k' / (m - 1)
 *   I_k   = (1 - kappa_t) I_k + kappa_t V_k,      kappa_t = 1/t'  (fisher.c)
 *   A_k   = gamma N (1 + alpha^2) I_k + Lambda_k,  U_A,k' U_A,k = A_k
 *   eta_k = alpha sqrt(gamma N) U_I,k' xi_k,       U_I,k' U_I,k = I_k
 *   x_k   = A_k^{-1} (grad_k + eta_k)
 * and theta <- theta + 2 s x, s the burn-in trust-region factor (fisher.c).
 * The robust rule (spec$sgfs_robust; fisher.c) uses A = (1 + alpha^2) B and
 * eta ~ N(0, alpha^2 B) with B = gamma N I + Lambda: one factor, U_B'U_B
 * = B, serves both (x = B^{-1} (grad + eta) / (1 + alpha^2)), and the step
 * size enters only as the scalar alpha^2, so the factor need not follow
 * every iteration's small change of I_t.  It is refreshed when t' has grown
 * by REFRESH (5 %) since it was last computed (every iteration while t' <=
 * 20, then about ln(t'/20) / ln(1.05) times: 153 in 20,000 iterations)
 * and at the restart.  Between refreshes I_t = (1 - w) I_last + w Vbar,
 * Vbar the mean of the V since, w < 5 %: the factor's B differs from the
 * current one by w (Vbar - I_last), and once I_t has settled Vbar agrees
 * with it to within Vbar's sampling noise, so B's error is a small part
 * of 5 %, below I_t's own (about sqrt(D / (m t'))).  SGFS-f's cost per
 * iteration drops from O(m D^2 + 2 D^3 / 3) to O(m D^2)
 * (bench/results/peers-refresh.md).  The
 * paper's rule (robust = FALSE) has A depend on eps, and factors A and I
 * every iteration.
 *
 * With the posterior's curvature H at the mode (spec$sgfs_curvature, for
 * GLMs), H_k takes the place of N I_k + Lambda_k in both rules: B = H +
 * (gamma - 1) N I, A = H + (gamma (1 + alpha^2) - 1) N I.  The chain
 * theta' = theta + K (g + nu + eta) on a Gaussian posterior N(mu, H^-1),
 * with minibatch noise Var nu = (gamma - 1) N C (C the rows' score
 * covariance, which I_t estimates) and injected Var eta = E, is stationary
 * at N(mu, H^-1) exactly when K = 2 (H + (gamma - 1) N C + E)^-1: the
 * update above.  The paper's N I + Lambda equals H only where the model's
 * Fisher information equals the data's score covariance (the information
 * equality, Bernstein-von Mises); where it does not (overdispersed counts,
 * heteroscedastic residuals, rare levels: C far from the model's
 * curvature), the paper's rule samples a covariance off by the ratio of
 * the two, most at large batch fractions (gamma near 1), where H's share
 * of A is largest: 0.75 to 2 times the posterior sds on R's warpbreaks,
 * quine, CO2, airquality (bench/results/sgfs-curvature.md).
 * With control variates in the metric of the mode (fisher.c, SGFS-CV) the
 * curvature is the identity and B = I + s I_t, s the minibatch's noise
 * scale; B's factor is fixed after burn-in (the robust rule only).
 * The D normals xi are drawn in one sweep, in parameter order, after every
 * block is factored, so that K = 1 draws exactly as SGFS-f always did.
 *
 * Storage: the K blocks of a D x D quantity are packed one after another,
 * block k (b_k x b_k, column-major, upper triangle used) at offset
 * sum_{l<k} b_l^2; S = sum_k b_k^2 in all.
 *   state   : I (S), U (S: the factor of B, robust, or of I), the count
 *             t', the count at U's last refresh                 2S + 2
 *   scratch : V (B or A assembled), U_A (S each); gbar, rhs, xi (D)  2S + 3D
 * Cost per iteration O(m S + sum_k b_k^3) (robust: O(m S) between
 * refreshes); a block whose matrix no jitter makes positive definite fails
 * the step (the driver reports a divergence).
 */
#include "sgfs.h"

#define REFRESH 0.05

R_xlen_t sgfs_blocks_square_sum(int K, const double *size)
{
    R_xlen_t S = 0;
    for (int k = 0; k < K; k++) S += (R_xlen_t) size[k] * (R_xlen_t) size[k];
    return S;
}

/* A = scale I + Lambda for the b x b block at parameter o (upper
   triangle), or, given the curvature H (D x D), A = (scale - N) I + H_oo:
   H in place of N I + Lambda; in the metric of the mode (control
   variates), where H is the identity, A = I + s I (s the minibatch's
   noise scale, fisher.c) */
static void preconditioner_block(const sgfs_engine *e, const double *fisher, int o, int b,
                                 double scale, double *A)
{
    const double *H = e->rule.curvature;
    const size_t D = (size_t) e->D;
    if (e->metric.U) {
        const double s = sgfs_noise_scale(e);
        for (int j = 0; j < b; j++) {
            for (int i = 0; i <= j; i++) A[i + (size_t) j * b] = s * fisher[i + (size_t) j * b];
            A[j + (size_t) j * b] += 1.0;
        }
        return;
    }
    for (int j = 0; j < b; j++) {
        for (int i = 0; i <= j; i++)
            A[i + (size_t) j * b] = H == NULL ? scale * fisher[i + (size_t) j * b]
                : (scale - e->data.N) * fisher[i + (size_t) j * b] + H[(o + i) + (o + j) * D];
        if (H == NULL) A[j + (size_t) j * b] += e->prior.prec[o + j];
    }
}

/* whether the robust rule's factor of B is computed again this iteration
   (count: t', just advanced, lowered at the restart; last: t' at the last
   refresh, 0 for none) */
static int refresh_factor(double count, double *last)
{
    if (*last == 0.0 || count <= *last || count >= (1.0 + REFRESH) * *last) {
        *last = count;
        return 1;
    }
    return 0;
}

int sgfs_blockdiag_step(sgfs_engine *e, double eps, int K, const double *size)
{
    const int D = e->D;
    const size_t S = (size_t) sgfs_blocks_square_sum(K, size);
    double *fisher = e->rule.state, *U = fisher + S, *count = U + S, *last = count + 1;
    double *V = e->rule.work, *UA = V + S;
    double *gbar = UA + S, *rhs = gbar + D, *xi = rhs + D;
    const double alpha2 = R_FINITE(eps) ? 4.0 / eps : 0.0;
    const double gN = sgfs_gamma_tempered(e) * e->data.N;   /* (at temperature T: fisher.c) */
    const int robust = e->rule.robust;      /* B = gN I + Lambda (fisher.c) */

    /* (in a metric, past burn-in, I and B's factor stay as they are) */
    const int frozen = sgfs_fisher_frozen(e);
    double kappa = 0.0;
    if (!frozen) {
        sgfs_row_means(e->lik.G, D, e->rule.fisher_rows, gbar);
        kappa = sgfs_fisher_weight(e, count);          /* (fisher.c) */
    }
    /* (a chain frozen from its first iteration, burnin = 0, factors B = I
       once, no noise measured, and marks it so with last = -1) */
    const int first = frozen && *last == 0.0;
    const int refresh = !robust || first || (!frozen && refresh_factor(*count, last));
    if (first) *last = -1.0;
    /* per block (at: its offset in the packed arrays): the running mean I
       (upper triangle), and the Cholesky factors: of B (robust, when
       refreshed), or of A and, for the noise, of I */
    size_t at = 0;
    for (int k = 0, o = 0; k < K; k++) {
        const int b = (int) size[k];
        if (!frozen)
            sgfs_crossprod_mean_update(e->lik.G, D, e->rule.fisher_rows, o, b, gbar + o, kappa,
                                       fisher + at);
        if (robust) {                  /* U'U = B, A = (1 + alpha^2) B */
            if (refresh) {
                preconditioner_block(e, fisher + at, o, b, gN, V + at);
                if (sgfs_chol_upper(V + at, b, U + at) < 0.0) return 1;
            }
        } else {                       /* A = gN (1 + alpha^2) I + Lambda, U'U = I */
            preconditioner_block(e, fisher + at, o, b, gN * (1.0 + alpha2), V + at);
            if (alpha2 > 0.0 && sgfs_chol_upper(fisher + at, b, U + at) < 0.0) return 1;
            if (sgfs_chol_upper(V + at, b, UA + at) < 0.0) return 1;
        }
        o += b;
        at += (size_t) b * b;
    }

    if (alpha2 > 0.0) sgfs_rnorm(xi, D);
    const double s = sqrt(e->rule.temperature) * (robust ? sqrt(alpha2) : sqrt(alpha2 * gN));
    if (robust) {
        /* per block, with r = grad + s U' xi (eta = s U' xi, U'U = B):
           y = U'^-1 r = U'^-1 grad + s xi, x = B^-1 r / (1 + alpha^2)
           = U^-1 y / (1 + alpha^2), two triangular solves; the trust
           region's 4 x'r is 4 y'y / (1 + alpha^2) */
        double yy = 0.0;
        at = 0;
        for (int k = 0, o = 0; k < K; k++) {
            const int b = (int) size[k];
            memcpy(rhs + o, e->grad + o, (size_t) b * sizeof(double));
            sgfs_upper_t_solve(U + at, b, rhs + o);
            if (alpha2 > 0.0)
                for (int j = o; j < o + b; j++) rhs[j] += s * xi[j];
            for (int j = o; j < o + b; j++) yy += rhs[j] * rhs[j];
            sgfs_upper_solve(U + at, b, rhs + o);
            for (int j = o; j < o + b; j++) rhs[j] /= 1.0 + alpha2;
            o += b;
            at += (size_t) b * b;
        }
        const double shrink = sgfs_burnin_shrink_q(e, 4.0 * yy / (1.0 + alpha2));
        for (int j = 0; j < D; j++) e->theta[j] += 2.0 * shrink * rhs[j];
        return 0;
    }
    /* the paper's rule, per block: rhs = grad + eta, kept in xi for the
       trust region, then rhs <- A^{-1} rhs */
    at = 0;
    for (int k = 0, o = 0; k < K; k++) {
        const int b = (int) size[k];
        memcpy(rhs + o, e->grad + o, (size_t) b * sizeof(double));
        if (alpha2 > 0.0) {
            sgfs_upper_t_times(U + at, b, xi + o, gbar + o);    /* gbar = U' xi */
            for (int j = o; j < o + b; j++) rhs[j] += s * gbar[j];
        }
        memcpy(xi + o, rhs + o, (size_t) b * sizeof(double));
        sgfs_chol_solve(UA + at, b, rhs + o);                   /* A^{-1} rhs */
        o += b;
        at += (size_t) b * b;
    }
    const double shrink = sgfs_burnin_shrink(e, rhs, xi);
    for (int j = 0; j < D; j++) e->theta[j] += 2.0 * shrink * rhs[j];
    return 0;
}
