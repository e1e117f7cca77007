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
        e->prior.prec[j] = h->tau[k] * h->base[j];
        e->prior.scale[j] = 1.0 / sqrt(e->prior.prec[j]);
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
    for (int k = 0; k < h->K; k++)
        h->tau[k] = Rf_rgamma(h->shape_post[k], 1.0 / (h->rate[k] + 0.5 * ss[k]));
    sgfs_hyper_apply(e);
}
