/*
 * sampler_sga.c - stochastic gradient ascent with momentum, the MAP
 * optimiser (algorithms vignette 2.1; heavy-ball momentum of Polyak 1964):
 *
 *   theta_new <- theta + eps_t grad + mu (theta - theta_prev),
 *
 * grad = grad log p(theta) + (N/n) sum_{i in S_t} g_i(theta).  mu = 0 is
 * plain SGA.  spar = (mu).  State: theta_prev (D), equal to theta at the
 * start.  No noise is injected: the chain converges to a mode.
 */
#include "sgfs.h"

static void sga_init(sgfs_engine *e)
{
    memcpy(e->rule.state, e->theta, (size_t) e->Ds * sizeof(double));
}

static int sga_step(sgfs_engine *e, double eps)
{
    const double mu = e->rule.spar[0];
    double *prev = e->rule.state;
    for (int j = 0; j < e->Ds; j++) {
        const double move = eps * e->grad[j] + mu * (e->theta[j] - prev[j]);
        prev[j] = e->theta[j];
        e->theta[j] += move;
    }
    return 0;
}

const sgfs_sampler sgfs_sampler_sga = {
    .name = "sga", .state = {0, 1, 0}, .init = sga_init, .step = sga_step,
    .n_spar = 1, .spar_names = {"momentum"}, .horseshoe = 1,
    .state_parts = {{"theta_prev", {0, 1, 0}}}
};
