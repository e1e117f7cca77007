/*
 * sampler_sghmc.c - stochastic gradient Hamiltonian Monte Carlo (Chen, Fox
 * and Guestrin, ICML 2014), in the paper's practical parametrisation (its
 * eq. 15; algorithms vignette 2.6): learning rate eta = eps_t, friction alpha,
 *
 *   v     <- (1 - alpha) v + eta grad + sqrt(2 eta (alpha - beta)) xi
 *   theta <- theta + v                       (with the new v)
 *
 * v ~ N(0, eta I) at the first step and, if spar[1] = L > 0, again before
 * every L-th step (a trajectory of L steps, as in the sgmcmc package).
 * beta = 0, or with spar[2] = 1 the estimated gradient-noise term
 * beta_j = (eta / 2) (N^2 / n) Var_j, Var_j the minibatch's score variance,
 * with alpha - beta clipped at 0.  At temperature T the momentum's law is
 * N(0, eta T I) and the total noise 2 eta alpha T: injected
 * 2 eta (alpha T - beta), v ~ N(0, eta T I) at a (re)start.  spar = (alpha, L, estimate beta).
 * State: v (D) and the number of steps taken.  Scratch: score moments (2D).
 */
#include "sgfs.h"

static int sghmc_step(sgfs_engine *e, double eta)
{
    const int D = e->D;
    const double alpha = e->rule.spar[0], L = e->rule.spar[1];
    double *v = e->rule.state, *count = e->rule.state + D;
    double *gbar = e->rule.work, *var = e->rule.work + D;
    double *xi = e->noise;
    if (*count == 0.0 || (L > 0.0 && fmod(*count, L) == 0.0)) {
        sgfs_rnorm(v, D);
        for (int j = 0; j < D; j++) v[j] *= sqrt(eta * e->rule.temperature);
    }
    *count += 1.0;
    const int estimate = e->rule.sampler->needs_scores;     /* spar[2], checked */
    if (estimate) sgfs_row_moments(e->lik.G, D, e->n, gbar, var);
    const double noise_scale = 0.5 * eta * e->data.N * ((double) e->data.N / e->n);
    sgfs_rnorm(xi, D);
    for (int j = 0; j < D; j++) {
        double beta = estimate ? noise_scale * var[j] : 0.0;
        double injected = 2.0 * eta * fmax(alpha * e->rule.temperature - beta, 0.0);
        v[j] = (1.0 - alpha) * v[j] + eta * e->grad[j] + sqrt(injected) * xi[j];
        e->theta[j] += v[j];
    }
    return 0;
}

/* friction alpha in [0, 1], L a whole number >= 0, and the estimate's flag
   that of the rule (its variant has the per-example scores) */
static const char *check_settings(const double *spar, R_xlen_t n_spar, int D, int estimate)
{
    (void) n_spar;
    (void) D;
    if (!(spar[0] >= 0.0 && spar[0] <= 1.0)) return "the friction must be in [0, 1]";
    if (!(spar[1] >= 0.0 && spar[1] == floor(spar[1]))) return "L must be a whole number >= 0";
    if (spar[2] != (double) estimate) return "the noise estimate's flag does not match the rule";
    return NULL;
}

static const char *check_plain(const double *spar, R_xlen_t n_spar, int D)
{
    return check_settings(spar, n_spar, D, 0);
}

static const char *check_noise(const double *spar, R_xlen_t n_spar, int D)
{
    return check_settings(spar, n_spar, D, 1);
}

const sgfs_sampler sgfs_sampler_sghmc = {
    /* state: v, count; scratch: moments */
    .name = "sghmc", .tempered = 1, .state = {0, 1, 1}, .work = {0, 2, 0}, .step = sghmc_step, .n_spar = 3,
    .check = check_plain, .spar_names = {"friction", "resample_every", "noise_estimate"},
    .state_parts = {{"v", {0, 1, 0}}, {"count", {0, 0, 1}}}
};

/* the same rule with the gradient-noise estimate (needs per-example scores) */
const sgfs_sampler sgfs_sampler_sghmc_noise = {
    .name = "sghmc_noise", .tempered = 1, .needs_scores = 1, .state = {0, 1, 1}, .work = {0, 2, 0},
    .step = sghmc_step, .n_spar = 3, .check = check_noise,
    .spar_names = {"friction", "resample_every", "noise_estimate"},
    .state_parts = {{"v", {0, 1, 0}}, {"count", {0, 0, 1}}}
};
