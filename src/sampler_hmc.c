/*
 * sampler_hmc.c - full-data Hamiltonian Monte Carlo with a constant mass
 * matrix M = U'U (algorithms vignette 2.2; Duane et al. 1987, Neal 2011), and
 * MALA as its one-leapfrog-step case.  In the coordinates z = U theta the
 * mass is the identity; with L(theta) = log p(theta) + sum_i l_i(theta)
 * (all N examples) and grad_z L = U'^{-1} grad L:
 *
 *   p ~ N(0, I);  p <- p + (h/2) grad_z L
 *   L times:  z <- z + h p;  p <- p + h grad_z L   (h/2 at the last step)
 *   accept theta* = U^{-1} z with probability min(1, exp(H0 - H1)),
 *   H = -L(theta) + |p|^2 / 2.
 *
 * With L = 1 this is MALA with proposal z* = z + (h^2/2) grad_z L + h xi.
 * With spar[1] = 0 the number of steps varies instead: each iteration
 * draws a trajectory length T_t = T (0.5 + U), U ~ U(0, 1), and takes
 * L_t = min(ceil(T_t / h), 1000) steps of h_t = T_t / L_t (a random length, independent
 * of the state, keeps detailed balance and breaks the periodicity that
 * makes a fixed length near half an oscillation period return -theta).
 * The step adapts during burn-in (iterations t <= burnin, if spar[2] != 0)
 * by the Robbins-Monro rule log h <- log h + t^-0.6 (a_t - target), a_t
 * the acceptance probability, and is frozen at burn-in's end at the mean
 * of log h over burn-in's second half (metropolis.c).  A non-finite L rejects.  At
 * temperature T the target is p^(1/T): L / T and its gradient in place of L.
 * With learned prior scales (prior_hyper.c), drawn by Gibbs after each
 * iteration, L(theta) is recomputed at the next one's start.
 * spar = (target, L (0: random lengths), adapt, T, U (D x D, upper
 * triangular)).
 * State: log h, L(theta), valid cache flag, accepted and proposed moves
 * after burn-in, sum and count of log h over burn-in's second half, the
 * number of leapfrog steps taken (full-data gradients, for the report), and
 * grad L(theta) (D).  Scratch: z, p, theta*, grad L(theta*), grad_z (5 D).
 * Cost per iteration: L full-data gradients, O(L N D + L D^2).
 */
#include "sgfs.h"

enum { LOG_H, LOGPOST, VALID, ACCEPTED, PROPOSED, LOGH_SUM, LOGH_COUNT, LEAPFROGS,
       N_SCALARS };

static double half_squared_norm(const double *x, int D)
{
    double s = 0.0;
    for (int j = 0; j < D; j++) s += x[j] * x[j];
    return 0.5 * s;
}

static int hmc_step(sgfs_engine *e, double eps)
{
    const int D = e->Ds;
    const double *U = e->rule.spar + 4;
    double *s = e->rule.state, *grad = s + N_SCALARS;
    double *z = e->rule.work, *p = z + D, *theta_new = p + D, *g = theta_new + D,
        *gz = g + D;
    if (s[VALID] == 0.0) {
        s[LOGPOST] = sgfs_tempered_log_posterior(e, e->theta, grad);
        s[LOG_H] = log(eps);
        s[VALID] = 1.0;
        if (!R_FINITE(s[LOGPOST])) return 1;
    } else if (e->hyper) {      /* the prior's scales moved (prior_hyper.c) */
        s[LOGPOST] = sgfs_tempered_log_posterior(e, e->theta, grad);
        if (!R_FINITE(s[LOGPOST])) return 1;
    }
    double h = exp(s[LOG_H]);
    int n_leap = (int) e->rule.spar[1];
    if (n_leap == 0) {
        const double length = e->rule.spar[3] * (0.5 + unif_rand());
        const double steps = ceil(length / h);
        n_leap = steps > 1000.0 ? 1000 : (int) fmax(steps, 1.0);
        h = length / n_leap;
    }
    memcpy(z, e->theta, (size_t) D * sizeof(double));
    sgfs_upper_times(U, D, z);
    sgfs_rnorm(p, D);
    const double kinetic0 = half_squared_norm(p, D);
    sgfs_gradient_in_z(U, D, grad, gz);
    double lp_new = R_NegInf;
    for (int j = 0; j < D; j++) p[j] += 0.5 * h * gz[j];
    s[LEAPFROGS] += n_leap;
    for (int k = 1; k <= n_leap; k++) {
        for (int j = 0; j < D; j++) z[j] += h * p[j];
        memcpy(theta_new, z, (size_t) D * sizeof(double));
        sgfs_upper_solve(U, D, theta_new);
        lp_new = sgfs_tempered_log_posterior(e, theta_new, g);
        if (!R_FINITE(lp_new) || !sgfs_all_finite(g, D)) {
            lp_new = R_NegInf;
            break;
        }
        sgfs_gradient_in_z(U, D, g, gz);
        const double w = k < n_leap ? h : 0.5 * h;
        for (int j = 0; j < D; j++) p[j] += w * gz[j];
    }
    const double log_ratio = R_FINITE(lp_new) ?
        lp_new - s[LOGPOST] + kinetic0 - half_squared_norm(p, D) : R_NegInf;
    const double accept_prob = sgfs_metropolis_test(e, log_ratio, theta_new, g, lp_new, grad,
                                                    s + LOGPOST, s + ACCEPTED, s + PROPOSED);
    if (e->rule.spar[2] != 0.0)
        sgfs_adapt_log_step(e, e->rule.spar[0], accept_prob, s + LOG_H, s + LOGH_SUM, s + LOGH_COUNT);
    e->run.eps_last = exp(s[LOG_H]);
    return 0;
}

const sgfs_sampler sgfs_sampler_hmc = {
    .name = "hmc", .tempered = 1, .horseshoe = 1,
    .state = {0, 1, N_SCALARS},    /* the scalars above, grad L(theta)       */
    .work = {0, 5, 0},             /* z, p, theta*, grad L(theta*), grad_z   */
    .step = hmc_step, .full_data = 1,
    .n_spar = 4, .spar_per_dd = 1, /* target, L, adapt, T, then U (D x D)    */
    .spar_names = {"target_accept", "n_leapfrog", "adapt", "trajectory_length"},
    .state_parts = {{"log_h", {0, 0, 1}}, {"log_post", {0, 0, 1}}, {"valid", {0, 0, 1}},
                    {"accepted", {0, 0, 1}}, {"proposed", {0, 0, 1}},
                    {"log_h_sum", {0, 0, 1}}, {"log_h_count", {0, 0, 1}},
                    {"leapfrogs", {0, 0, 1}}, {"grad", {0, 1, 0}}}
};
