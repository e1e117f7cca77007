/*
 * metropolis.c - what the full-data Metropolis rules share (sampler_hmc.c:
 * HMC and MALA; sampler_sgfs_mh.c: SGFS with every row in every batch):
 * the tempered log posterior L(theta) / T and its gradient, the gradient in
 * the coordinates z = U theta of a constant metric H = U'U, and the
 * burn-in adaptation of a log step x towards a target acceptance rate a*:
 *
 *   x <- x + t^-0.6 (a_t - a*),   t <= burnin,
 *
 * a_t the iteration's acceptance probability (Robbins-Monro), frozen at
 * burn-in's end at the mean of x over burn-in's second half.
 */
#include "sgfs.h"

double sgfs_tempered_log_posterior(sgfs_engine *e, const double *theta, double *grad)
{
    const double lp = sgfs_log_posterior(e, theta, grad);
    if (e->rule.temperature == 1.0) return lp;
    for (int j = 0; j < e->Ds; j++) grad[j] /= e->rule.temperature;
    return lp / e->rule.temperature;
}

/* out = U'^{-1} g */
void sgfs_gradient_in_z(const double *U, int D, const double *g, double *out)
{
    memcpy(out, g, (size_t) D * sizeof(double));
    sgfs_upper_t_solve(U, D, out);
}

/* one adaptation of x (sum and count: x's sum over burn-in's second half) */
void sgfs_adapt_log_step(const sgfs_engine *e, double target, double accept_prob,
                         double *x, double *sum, double *count)
{
    const double t = *e->iter;
    if (t > e->run.burnin) return;
    *x += (accept_prob - target) / pow(t, 0.6);
    if (t > 0.5 * e->run.burnin) {
        *sum += *x;
        *count += 1.0;
    }
    if (t == e->run.burnin && *count > 0.0) *x = *sum / *count;
}

/* the acceptance probability min(1, exp(log_ratio)); 0 for NaN */
static double accept_prob_of(double log_ratio)
{
    return log_ratio >= 0.0 ? 1.0 : (ISNAN(log_ratio) ? 0.0 : exp(log_ratio));
}

/* the Metropolis-Hastings test of a proposal theta_new (its log density
   lp_new and gradient g_new) against the chain's (e->theta, *logpost,
   grad): one uniform; the chain takes the proposal if accepted, and past
   burn-in the counts of accepted and proposed moves grow.  Returns the
   acceptance probability (for the step's adaptation) */
double sgfs_metropolis_test(sgfs_engine *e, double log_ratio, const double *theta_new,
                            const double *g_new, double lp_new, double *grad, double *logpost,
                            double *accepted, double *proposed)
{
    const int D = e->Ds;
    const double accept_prob = accept_prob_of(log_ratio);
    const int accept = unif_rand() < accept_prob;
    if (accept) {
        memcpy(e->theta, theta_new, (size_t) D * sizeof(double));
        memcpy(grad, g_new, (size_t) D * sizeof(double));
        *logpost = lp_new;
    }
    if (*e->iter > e->run.burnin) {
        *accepted += accept;
        *proposed += 1.0;
    }
    return accept_prob;
}
