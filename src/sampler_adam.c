/*
 * sampler_adam.c - Adam (Kingma and Ba, ICLR 2015), the MAP optimiser for
 * networks, whose curvatures differ too much across parameters for one
 * plain gradient step to suit them all:
 *
 *   m     <- b1 m + (1 - b1) grad,    v <- b2 v + (1 - b2) grad^2,
 *   theta <- theta + eps_t [m / (1 - b1^t)] / (sqrt(v / (1 - b2^t)) + delta),
 *
 * grad = grad log p(theta) + (N/n) sum_{i in S_t} g_i(theta) (ascent).
 * spar = (b1, b2, delta).  State: m (D), v (D), t.  No noise is injected.
 */
#include "sgfs.h"

static int adam_step(sgfs_engine *e, double eps)
{
    const int D = e->Ds;
    const double b1 = e->rule.spar[0], b2 = e->rule.spar[1], delta = e->rule.spar[2];
    double *m = e->rule.state, *v = m + D, *t = v + D;
    *t += 1.0;
    const double c1 = 1.0 - pow(b1, *t), c2 = 1.0 - pow(b2, *t);
    for (int j = 0; j < D; j++) {
        const double g = e->grad[j];
        m[j] = b1 * m[j] + (1.0 - b1) * g;
        v[j] = b2 * v[j] + (1.0 - b2) * g * g;
        e->theta[j] += eps * (m[j] / c1) / (sqrt(v[j] / c2) + delta);
    }
    return 0;
}

const sgfs_sampler sgfs_sampler_adam = {
    .name = "adam", .state = {0, 2, 1}, .step = adam_step, .n_spar = 3,
    .spar_names = {"beta1", "beta2", "delta"}, .horseshoe = 1,
    .state_parts = {{"m", {0, 1, 0}}, {"v", {0, 1, 0}}, {"t", {0, 0, 1}}}
};
