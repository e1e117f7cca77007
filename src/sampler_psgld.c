/*
 * sampler_psgld.c - preconditioned SGLD (Li, Chen, Carlson and Carin, AAAI
 * 2016; algorithms vignette 2.5), with an RMSprop diagonal preconditioner:
 *
 *   gbar  = (1/n) sum_{i in S_t} g_i(theta)        (mean score, no prior)
 *   V     = alpha V + (1 - alpha) gbar^2,   V = gbar^2 at t = 1 (authors' code)
 *   G     = 1 / (lambda + sqrt(V))
 *   theta <- theta + (eps_t / 2) G grad + sqrt(eps_t G) xi,   xi ~ N(0, I).
 *
 * At temperature T the noise is sqrt(eps_t G T) xi (as for SGLD, sampler_sgld.c).
 * The Gamma term (the divergence of G) is dropped, as in the paper's
 * practical algorithm: the bias it leaves is controlled by alpha -> 1.
 * spar = (alpha, lambda).  State: V (D) and the number of updates.
 */
#include "sgfs.h"

static int psgld_step(sgfs_engine *e, double eps)
{
    const int D = e->D;
    const double alpha = e->rule.spar[0], lambda = e->rule.spar[1], T = e->rule.temperature;
    double *V = e->rule.state, *count = e->rule.state + D, *xi = e->noise;
    sgfs_rnorm(xi, D);
    for (int j = 0; j < D; j++) {
        double gbar = e->grad_lik[j] / e->data.N;
        V[j] = *count == 0.0 ? gbar * gbar : alpha * V[j] + (1.0 - alpha) * gbar * gbar;
        double G = 1.0 / (lambda + sqrt(V[j]));
        e->theta[j] += 0.5 * eps * G * e->grad[j] + sqrt(eps * G * T) * xi[j];
    }
    *count += 1.0;
    return 0;
}

const sgfs_sampler sgfs_sampler_psgld = {
    .name = "psgld", .tempered = 1, .state = {0, 1, 1}, .step = psgld_step, .n_spar = 2,
    .spar_names = {"decay", "lambda"},
    .state_parts = {{"V", {0, 1, 0}}, {"count", {0, 0, 1}}}
};
