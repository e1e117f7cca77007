/*
 * sampler_sgfs_mh.c - SGFS with every row in every batch, Metropolis
 * adjusted.  With the full data the gradient is exact, there is no
 * minibatch noise (gamma = 1), and the SGFS step in the coordinates z =
 * U theta of the mode's curvature H = U'U (fisher.c, with B = I) is the
 * proposal
 *
 *   z* = z + h grad_z L(z) + sqrt(T) h alpha xi,   h = 2 / (1 + alpha^2),
 *
 * L the log posterior, xi ~ N(0, I).  On a Gaussian posterior N(mu, T H^-1)
 * it is reversible (z* - mu = (1 - h)(z - mu) + N(0, T (2h - h^2))), so
 * every proposal is accepted and h = 1 (alpha = 1) draws each iterate
 * afresh; elsewhere the Metropolis-Hastings test
 *
 *   log r = L(z*)/T - L(z)/T + log q(z | z*) - log q(z* | z),
 *   q(b | a) = N(b; a + h grad_z L(a), T h^2 alpha^2 I),
 *
 * makes the chain exact for any h.  Unlike MALA (noise variance 2 x its
 * drift), the proposal's noise is the one that is exact on a Gaussian
 * (variance (2 - h) x the drift), so near-Gaussian posteriors accept
 * nearly every move at large steps.  h = min(1, exp(x)): x adapts during
 * burn-in towards the target acceptance rate spar[0] (metropolis.c), from
 * the schedule's first step (eps = 4 / alpha^2, h = 2 eps / (eps + 4)), and
 * is fixed after; h <= 1, as the plain rule's alpha >= 1, keeps the chain
 * from the over-relaxed moves (1 - h < 0) that make variances noisy.
 * spar = (target acceptance, U (D x D, upper triangular)).
 * State: x, L(theta)/T, valid cache flag, accepted and proposed moves
 * after burn-in, sum and count of x over burn-in's second half, grad
 * L(theta)/T (D).  Scratch: z, z*, theta*, grad L(theta*)/T, the two
 * whitened gradients (6 D).  Cost per iteration: one full-data gradient,
 * O(N D + D^2).
 */
#include "sgfs.h"

enum { LOG_H, LOGPOST, VALID, ACCEPTED, PROPOSED, LOGH_SUM, LOGH_COUNT, N_SCALARS };

/* -|b - a - d|^2 / (2 v): log q(b | a) up to a constant, d the drift */
static double log_proposal(const double *b, const double *a, const double *drift, double h,
                           double v, int D)
{
    double s = 0.0;
    for (int j = 0; j < D; j++) {
        const double r = b[j] - a[j] - h * drift[j];
        s += r * r;
    }
    return -0.5 * s / v;
}

static int sgfs_mh_step(sgfs_engine *e, double eps)
{
    const int D = e->Ds;
    const double *U = e->rule.spar + 1, T = e->rule.temperature;
    double *s = e->rule.state, *grad = s + N_SCALARS;
    double *z = e->rule.work, *z_new = z + D, *theta_new = z_new + D, *g = theta_new + D,
        *gz = g + D, *gz_new = gz + D;
    if (s[VALID] == 0.0) {
        s[LOG_H] = log(fmin(1.0, 2.0 * eps / (eps + 4.0)));
        s[VALID] = 1.0;
        s[LOGPOST] = sgfs_tempered_log_posterior(e, e->theta, grad);
        if (!R_FINITE(s[LOGPOST])) return 1;
    } else if (e->hyper) {      /* the prior's scales moved (prior_hyper.c) */
        s[LOGPOST] = sgfs_tempered_log_posterior(e, e->theta, grad);
        if (!R_FINITE(s[LOGPOST])) return 1;
    }
    const double h = exp(s[LOG_H]), alpha2 = 2.0 / h - 1.0;    /* (log h <= 0) */
    const double v = T * h * h * alpha2;           /* the proposal's variance */
    memcpy(z, e->theta, (size_t) D * sizeof(double));
    sgfs_upper_times(U, D, z);
    sgfs_gradient_in_z(U, D, grad, gz);             /* (of L / T: times T below) */
    sgfs_rnorm(z_new, D);
    const double sd = sqrt(v);
    for (int j = 0; j < D; j++) {
        gz[j] *= T;
        z_new[j] = z[j] + h * gz[j] + sd * z_new[j];
    }
    memcpy(theta_new, z_new, (size_t) D * sizeof(double));
    sgfs_upper_solve(U, D, theta_new);
    double lp_new = sgfs_tempered_log_posterior(e, theta_new, g);
    double log_ratio = R_NegInf;
    if (R_FINITE(lp_new) && sgfs_all_finite(g, D)) {
        sgfs_gradient_in_z(U, D, g, gz_new);
        for (int j = 0; j < D; j++) gz_new[j] *= T;
        log_ratio = lp_new - s[LOGPOST] + log_proposal(z, z_new, gz_new, h, v, D) -
                    log_proposal(z_new, z, gz, h, v, D);
    }
    const double accept_prob = sgfs_metropolis_test(e, log_ratio, theta_new, g, lp_new, grad,
                                                    s + LOGPOST, s + ACCEPTED, s + PROPOSED);
    sgfs_adapt_log_step(e, e->rule.spar[0], accept_prob, s + LOG_H, s + LOGH_SUM, s + LOGH_COUNT);
    if (s[LOG_H] > 0.0) s[LOG_H] = 0.0;             /* (h <= 1) */
    const double h_next = exp(s[LOG_H]);
    e->run.eps_last = 4.0 * h_next / (2.0 - h_next);     /* 4 / alpha^2, as the plain rule's */
    return 0;
}

static const char *check_target(const double *spar, R_xlen_t n_spar, int D)
{
    (void) n_spar;
    (void) D;
    return spar[0] > 0.0 && spar[0] < 1.0 ? NULL : "the target acceptance must be in (0, 1)";
}

const sgfs_sampler sgfs_sampler_sgfs_mh = {
    .name = "sgfs_mh", .tempered = 1,
    .state = {0, 1, N_SCALARS},    /* the scalars above, grad L(theta) / T  */
    .work = {0, 6, 0},             /* z, z*, theta*, grad L(theta*), 2 grad_z */
    .step = sgfs_mh_step, .full_data = 1, .check = check_target,
    .n_spar = 1, .spar_per_dd = 1, /* target, then U (D x D)                 */
    .spar_names = {"target_accept"},
    .state_parts = {{"log_h", {0, 0, 1}}, {"log_post", {0, 0, 1}}, {"valid", {0, 0, 1}},
                    {"accepted", {0, 0, 1}}, {"proposed", {0, 0, 1}},
                    {"log_h_sum", {0, 0, 1}}, {"log_h_count", {0, 0, 1}},
                    {"grad", {0, 1, 0}}}
};
