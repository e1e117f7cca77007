/*
 * sampler_sgnht.c - stochastic gradient Nose-Hoover thermostat (Ding, Fang,
 * Babbush, Chen, Skeel and Neven, NIPS 2014), in the sgmcmc package's
 * parametrisation (algorithms vignette 2.7): step eps = eps_t (= h^2), diffusion
 * factor a = spar[0],
 *
 *   u     <- u + eps grad - xi u + sqrt(2 a eps) N(0, I)
 *   theta <- theta + u
 *   xi    <- xi + (u'u / D - eps)
 *
 * with u ~ N(0, eps I) and xi = a at the first step.  The thermostat xi
 * adapts the friction to the unknown minibatch noise.  At temperature T
 * (Ding et al.'s thermostat at kT): u ~ N(0, eps T I) at the first step,
 * noise sqrt(2 a eps T), and xi <- xi + (u'u / D - eps T).
 * State: u (D), xi, and the number of steps taken.
 */
#include "sgfs.h"

static int sgnht_step(sgfs_engine *e, double eps)
{
    const int D = e->D;
    const double a = e->rule.spar[0], T = e->rule.temperature, sd = sqrt(2.0 * a * eps * T);
    double *u = e->rule.state, *xi = e->rule.state + D, *count = e->rule.state + D + 1, *w = e->noise;
    if (*count == 0.0) {
        sgfs_rnorm(u, D);
        for (int j = 0; j < D; j++) u[j] *= sqrt(eps * T);
        *xi = a;
    }
    sgfs_rnorm(w, D);
    *count += 1.0;
    double uu = 0.0;
    for (int j = 0; j < D; j++) {
        u[j] += eps * e->grad[j] - *xi * u[j] + sd * w[j];
        e->theta[j] += u[j];
        uu += u[j] * u[j];
    }
    *xi += uu / D - eps * T;
    return 0;
}

const sgfs_sampler sgfs_sampler_sgnht = {
    .name = "sgnht", .tempered = 1, .state = {0, 1, 2}, .step = sgnht_step, .n_spar = 1,
    .spar_names = {"diffusion"},
    .state_parts = {{"u", {0, 1, 0}}, {"xi", {0, 0, 1}}, {"count", {0, 0, 1}}}
};
