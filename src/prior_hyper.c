/*
 * prior_hyper.c - learned prior scales (normal_gamma() in R): the
 * parameters j of group k (a network's layer) have the priors
 *
 *   theta_j | tau_k ~ N(0, 1 / (tau_k c_j)),   tau_k ~ Gamma(a_k, b_k)  (rate b_k),
 *
 * c_j a base precision (a layer's fan-in).  Given theta the precision's
 * conditional law is conjugate,
 *
 *   tau_k | theta ~ Gamma(a_k + n_k / 2, b_k + sum_{j in k} c_j theta_j^2 / 2),
 *
 * n_k the group's size, and it is drawn exactly after every step of the
 * rule: a Gibbs update of tau within the chain on theta (Neal, 1996, for
 * networks' weight precisions; Chen, Fox and Guestrin, 2014, section 4.3,
 * with SGHMC).  The engine's prior_scale and prior_prec are its own copies,
 * which follow tau: the rule's next gradient sees the new prior.  The
 * draws use R's gamma generator on R's stream (after the step's normals).
 *
 * For an optimiser (sga(), Adam) tau_k takes instead the conditional mode
 * of log tau_k, (a_k + n_k / 2) / (b_k + sum_{j in k} c_j theta_j^2 / 2):
 * coordinate ascent on the joint posterior of (theta, log tau), so that the
 * mode it finds has the layer scales the data support rather than the base
 * scales (tau = 1), and it is never 0 or infinite.
 */
#include "sgfs.h"
/* Rmath.h would remap the names df and beta (as in prior.c) */
double Rf_rgamma(double, double);

/* the prior arrays of the grouped coordinates at the current tau */
void sgfs_hyper_apply(sgfs_engine *e)
{
    const sgfs_hyper *h = e->hyper;
    for (int j = 0; j < e->D; j++) {
        const int k = h->group[j] - 1;
        if (k < 0) continue;
        e->prior_prec[j] = h->tau[k] * h->base[j];
        e->prior_scale[j] = 1.0 / sqrt(e->prior_prec[j]);
    }
}

void sgfs_hyper_update(sgfs_engine *e)
{
    sgfs_hyper *h = e->hyper;
    double *ss = h->ss;
    for (int k = 0; k < h->K; k++) ss[k] = 0.0;
    for (int j = 0; j < e->D; j++) {
        const int k = h->group[j] - 1;
        if (k >= 0) ss[k] += h->base[j] * e->xi[j] * e->xi[j];
    }
    const int mode = e->sampler->optimizer;
    for (int k = 0; k < h->K; k++) {
        const double rate_post = h->rate[k] + 0.5 * ss[k];
        h->tau[k] = mode ? h->shape_post[k] / rate_post
                         : Rf_rgamma(h->shape_post[k], 1.0 / rate_post);
    }
    sgfs_hyper_apply(e);
}
