/*
 * sampler_sgld.c - stochastic gradient Langevin dynamics (Welling and Teh
 * 2011; ALGORITHMS.md 2.3):
 *
 *   theta <- theta + (eps_t / 2) grad + sqrt(eps_t) xi,   xi ~ N(0, I_D),
 *
 * grad = grad log p(theta) + (N/n) sum_{i in S_t} g_i(theta) (from the driver).
 * No state, no scratch.
 */
#include "sgfs.h"

static int sgld_step(sgfs_engine *e, double eps)
{
    const double half = 0.5 * eps, sd = sqrt(eps);
    for (int j = 0; j < e->D; j++)
        e->theta[j] += half * e->grad[j] + sd * norm_rand();
    return 0;
}

const sgfs_sampler sgfs_sampler_sgld = {
    "sgld", 0, {0, 0, 0}, {0, 0, 0}, NULL, sgld_step, 0, NULL, NULL    /* no state, no scratch */
};
