/*
 * prior.c - independent priors on each coordinate of theta (internal scale).
 *
 *   normal(m, s):  log p = -((theta - m)/s)^2 / 2 - log s - log(2 pi)/2,
 *                  d/dtheta = -(theta - m) / s^2
 *   laplace(m, s): log p = -|theta - m| / s - log(2 s),
 *                  d/dtheta = -sign(theta - m) / s
 *
 * The prior precision used by SGFS's preconditioner (ALGORITHMS.md 2.8b) is
 * computed in R (1/s^2 for normal, 1/(2 s^2), the precision of a normal with
 * the Laplace variance, for laplace) and read from e->prior_prec.
 *
 * A chain is diverging when a coordinate is not finite or more than SGFS_FAR
 * prior scales from the prior's location (log prior below -5e23: no data
 * outweighs that), which catches an exploding chain long before it
 * overflows.
 */
#include "sgfs.h"

#define HALF_LOG_2PI 0.918938533204672741780329736406

double sgfs_prior_logdens(const sgfs_engine *e, const double *theta)
{
    double lp = 0.0;
    for (int j = 0; j < e->D; j++) {
        double s = e->prior_scale[j], z = (theta[j] - e->prior_loc[j]) / s;
        if (e->prior_type[j] == SGFS_PRIOR_LAPLACE)
            lp += -fabs(z) - log(2.0 * s);
        else
            lp += -0.5 * z * z - log(s) - HALF_LOG_2PI;
    }
    return lp;
}

int sgfs_prior_far(const sgfs_engine *e, const double *theta)
{
    for (int j = 0; j < e->D; j++)
        if (!R_FINITE(theta[j]) ||
            fabs(theta[j] - e->prior_loc[j]) > SGFS_FAR * e->prior_scale[j])
            return 1;
    return 0;
}

void sgfs_prior_grad_add(const sgfs_engine *e, const double *theta,
                         double *grad)
{
    for (int j = 0; j < e->D; j++) {
        double s = e->prior_scale[j], d = theta[j] - e->prior_loc[j];
        if (e->prior_type[j] == SGFS_PRIOR_LAPLACE)
            grad[j] -= ((d > 0.0) - (d < 0.0)) / s;
        else
            grad[j] -= d / (s * s);
    }
}
