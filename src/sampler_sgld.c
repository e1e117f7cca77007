/*
 * sampler_sgld.c - stochastic gradient Langevin dynamics (Welling and Teh
 * 2011; algorithms vignette 2.3), with the Euler-Maruyama noise of the paper
 * (spar[0] = 0):
 *
 *   theta <- theta + (eps_t / 2) grad + sqrt(eps_t) xi_t,   xi_t ~ N(0, I_D),
 *
 * or the Leimkuhler-Matthews noise (spar[0] = 1; Leimkuhler and Matthews
 * 2013, Applied Mathematics Research eXpress 2013(1), 34-56), the mean of
 * two consecutive draws:
 *
 *   theta <- theta + (eps_t / 2) grad + sqrt(eps_t) (xi_t + xi_{t+1}) / 2.
 *
 * Same cost, one gradient per step; but its stationary law differs from the
 * posterior by O(eps^2) rather than O(eps) in every expectation of the
 * position (for a Gaussian posterior and exact gradients its variance is
 * exact at any stable step: with a = 1 - eps lambda / 2, b = sqrt(eps) / 2,
 * Var = b^2 2 / (1 - a) = 1 / lambda), so a step of the same size leaves
 * far less bias on skewed posteriors.  The minibatch noise's part of the
 * bias, (eps / 4) times its variance, is the same for both.
 *
 * At temperature T the noise is sqrt(T) times larger, sqrt(eps_t T) xi_t: the
 * Langevin diffusion with drift (1/2) grad log p and diffusion T is
 * stationary at p^(1/T), with the step in the posterior's own units.
 * grad = grad log p(theta) + (N/n) sum_{i in S_t} g_i(theta) (from the driver).
 * State with the LM noise: xi_{t+1} of the last step and a flag (0 until the
 * first step draws xi_1), so that a continued run equals a longer one.
 */
#include "sgfs.h"

static int leimkuhler_matthews(const double *spar, R_xlen_t n_spar)
{
    return n_spar > 0 && spar[0] == 1.0;
}

static int sgld_step(sgfs_engine *e, double eps)
{
    const int D = e->Ds;
    const double half = 0.5 * eps, sd = sqrt(eps * e->rule.temperature);
    double *next = e->noise;
    if (e->rule.state_len == 0) {
        sgfs_rnorm(next, D);
        for (int j = 0; j < D; j++) e->theta[j] += half * e->grad[j] + sd * next[j];
        return 0;
    }
    double *xi = e->rule.state, *started = e->rule.state + D;
    if (*started == 0.0) {
        sgfs_rnorm(xi, D);
        *started = 1.0;
    }
    sgfs_rnorm(next, D);
    for (int j = 0; j < D; j++) {
        e->theta[j] += half * e->grad[j] + 0.5 * sd * (xi[j] + next[j]);
        xi[j] = next[j];
    }
    return 0;
}

static R_xlen_t sgld_state_len(const double *spar, R_xlen_t n_spar, int D)
{
    return leimkuhler_matthews(spar, n_spar) ? (R_xlen_t) D + 1 : 0;
}

const sgfs_sampler sgfs_sampler_sgld = {
    .name = "sgld", .step = sgld_step, .tempered = 1, .horseshoe = 1,
    .state_len = sgld_state_len, .n_spar = 1,  /* state: the LM noise's next draw */
    .spar_names = {"lm_noise"}
};
