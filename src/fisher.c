/*
 * fisher.c - what the SGFS samplers (-f, -b and -d) share (Ahn et al.
 * 2012; the algorithms vignette, 2.8b): the finite-population gamma and the
 * running mean of the minibatch empirical Fisher, I_t = (1 - 1/t') I_{t-1} + V_t / t', restarted at
 * iteration spar[0] (t' counts from the restart, the mean before it worth
 * 2D rows); and the burn-in trust
 * region: the step theta <- theta + 2x, x = A^{-1} r, has squared A-norm
 * q = 4 x'Ax = 4 x'r, which at stationarity averages at most 4D.  Far from
 * the mode the empirical Fisher can be much smaller than the curvature (the
 * score variance is not the information there), and Fisher scoring then
 * overshoots into regions it cannot leave.  The same happens while I_t
 * still has rank < D (its first 2D/(m-1) iterations), when the step in the
 * missing directions is set by the prior alone.  So during burn-in, and
 * until t (m - 1) >= 2D, steps with q > 4D are shrunk to q = 4D; after
 * that the chain is never altered.
 *
 * The Fisher estimate's rows.  V_t is computed from the minibatch's first m
 * = fisher_rows of its n rows (a uniformly random subset of them): E V_t is
 * the same per-example score covariance, only V_t is noisier, and I_t
 * averages V_t over all the iterations since the restart, so the noise
 * averages out (relative error about sqrt(D / (m t')) per entry).  V_t costs
 * m D^2 instead of n D^2, the bulk of SGFS-f's work when D is not small
 * against n.  m = n is the paper's rule, draw for draw.
 *
 * The robust rule (spec$sgfs_robust, sgfs(robust = TRUE)).  A Gaussian
 * posterior N(., H^-1) is the chain's stationary law when the noise meets
 * Cov(eta) = A - H - Cov(grad).  The paper's A = gamma N (1 + alpha^2) I
 * + Lambda meets it, but in a direction the likelihood does not inform
 * (a one-hot factor's levels against the intercept: only the prior Lambda
 * acts) A = H there, the step 2 A^-1 grad maps theta to -theta and that
 * direction never mixes.  The robust rule scales the prior like the data:
 * B = gamma N I + Lambda, A = (1 + alpha^2) B, eta ~ N(0, alpha^2 B),
 * which meets the condition as well (N I the likelihood's curvature,
 * N (gamma - 1) I the minibatch noise) and contracts every direction by
 * 1 - 2 / (1 + alpha^2) at least.
 *
 * With control variates (SGFS-CV; the engine's centre and metric, R's
 * sgfs(control_variates = TRUE)).  The rule runs in the whitened
 * coordinates z = U theta of the mode's curvature H = U'U (metric.c), with
 * the gradient estimate of SGLD-CV (driver.c): the full-data score at the
 * mode plus the minibatch's remainders rho_i(theta) = g_i(theta) -
 * g_i(mode) + H_i (theta - mode), whose noise vanishes at the mode.  The
 * running mean I_t is then the covariance of the Fisher rows' whitened
 * remainders, and the noise the minibatch adds is W = s I_t with s =
 * (N' / n)(N' - n)/(N' - 1) N' / T = (gamma(N', n) - 1) N' / T
 * (sgfs_noise_scale; N' = N - |F| the rows not held in every batch).  H
 * whitened is I, so B = I + W, and on a Gaussian posterior the chain
 *   z' = z + 2/(1 + alpha^2) B^-1 (grad_z + nu + eta),
 *   Var nu = W, Var eta = alpha^2 T B,
 * is stationary at N(mu, T I) exactly: with h = 2 / (1 + alpha^2), C the
 * stationary covariance solves C = (I - h B^-1) C (I - h B^-1)' +
 * h^2 B^-1 (W + alpha^2 T B) B^-1, which C = T I does since h^2 (W / T +
 * alpha^2 B) = h^2 (B (1 + alpha^2) - I) = 2h B - h^2 I.  Near the mode W
 * is small (of order 1/n against the curvature's 1), the step moves about
 * h posterior sds, and alpha = 1 (h = 1) draws each iterate afresh on a
 * Gaussian: the N/n iterations per effective draw of the plain rule
 * become about one.  So that separated levels' exact updates (separated.c)
 * see a fixed rule, B is fixed after burn-in (sgfs_fisher_frozen), and
 * the remainders are computed during burn-in only.
 */
#include "sgfs.h"

double sgfs_gamma_fpc(int N, int n)
{
    if (N <= 1) return 1.0;
    return 1.0 + ((double) N / n) * ((double) (N - n) / (N - 1));
}

/* gamma at the run's temperature T: 1 + (gamma - 1) / T.  A Gaussian
   posterior tempered to N(mu, T H^-1) is the chain's stationary law when
   A = H + Cov(grad + eta) / T (the condition at T = 1 with the target's
   covariance scaled by T); with the minibatch noise (gamma - 1) N I
   untempered and the injected noise T times the rule's, every rule's A and
   eta keep their form with gamma_T for gamma and eta scaled by sqrt(T) */
double sgfs_gamma_tempered(const sgfs_engine *e)
{
    return 1.0 + (sgfs_gamma_fpc(e->data.N, e->n) - 1.0) / e->rule.temperature;
}

/* the same for R (the default steps of R/curvature.R and the samplers'
   set-up): gamma of N rows in batches of n, 1 <= n <= N */
SEXP sgfs_gamma(SEXP N, SEXP n)
{
    const int rows = Rf_asInteger(N), batch = Rf_asInteger(n);
    if (rows == NA_INTEGER || batch == NA_INTEGER || batch < 1 || batch > rows)
        Rf_error("internal error: gamma needs 1 <= n <= N");
    return Rf_ScalarReal(sgfs_gamma_fpc(rows, batch));
}

/* the noise the minibatch adds per unit of the rows' score covariance, at
   temperature T: (gamma(N', n) - 1) N' / T, N' the rows not held in every
   batch (their gradient is exact) */
double sgfs_noise_scale(const sgfs_engine *e)
{
    const int pool = e->data.N - e->held.n;
    return (sgfs_gamma_fpc(pool, e->n) - 1.0) * pool / e->rule.temperature;
}

/* 1 when the rule's Fisher estimate is fixed: past burn-in, in a metric,
   for a rule whose table says so */
int sgfs_fisher_frozen(const sgfs_engine *e)
{
    return e->metric.U != NULL && e->rule.sampler->fixed_after_burnin && *e->iter > e->run.burnin;
}

/* kappa_t = 1/t' of the running mean; at the restart (iteration spar[0])
   t' (*count) falls to c0 = ceil(2D / (m - 1)), so that the mean so far
   counts as 2D rows' worth, as many as the new scores need to reach full
   rank: I_t >= c0 / t' I_restart while they accumulate.  (Restarting from
   nothing left I with a few rows' noisy scores, and B's smallest
   directions far too small: the trust region's steps, in B's norm, then
   threw the chain far off, and SGFS returns only by e-folds of
   (1 + alpha^2) gamma / 2 iterations: a logistic regression of 500,000
   rows in batches of 500 was 123 posterior sds off at the end of a
   10,000-iteration burn-in, with the restart at 5,001; 1 sd without it.) */
double sgfs_fisher_weight(const sgfs_engine *e, double *count)
{
    if (*e->iter == e->rule.spar[0]) {
        const double c0 = ceil(2.0 * e->D / (e->rule.fisher_rows - 1.0));
        if (*count > c0) *count = c0;
    }
    *count += 1.0;
    return 1.0 / *count;
}

/* mean <- (1 - kappa) mean + kappa x, elementwise over len values */
void sgfs_running_mean(double *restrict mean, const double *restrict x, int len,
                       double kappa)
{
    for (int j = 0; j < len; j++) mean[j] += kappa * (x[j] - mean[j]);
}

/* factor (<= 1) to apply to x = A^{-1} r during burn-in, from the step's
   squared A-norm q = 4 x'r */
double sgfs_burnin_shrink_q(const sgfs_engine *e, double q)
{
    const double t = *e->iter;
    if (t > e->run.burnin && t * (e->rule.fisher_rows - 1.0) >= 2.0 * e->D) return 1.0;
    return q > 4.0 * e->D ? sqrt(4.0 * e->D / q) : 1.0;
}

/* ... from x and r */
double sgfs_burnin_shrink(const sgfs_engine *e, const double *x, const double *r)
{
    double q = 0.0;
    for (int j = 0; j < e->D; j++) q += 4.0 * x[j] * r[j];
    return sgfs_burnin_shrink_q(e, q);
}
