/*
 * outputs.c - the output layers the GLMs and the networks share
 * (ALGORITHMS.md 3.1, 3.2).
 *
 *   binomial (logit):  l = y z - softplus(z),  dl/dz = y - sigmoid(z);
 *   categorical (softmax, class 0 the reference with logit 0):
 *     p_k = exp(z_k) / (1 + sum_l exp(z_l)),  l = z_y - log(1 + sum_l exp(z_l)).
 */
#include "sgfs.h"

/* y - sigmoid(z), adding y z - softplus(z) to *ll (one exp, one log1p) */
double sgfs_binomial_residual(double y, double z, double *ll)
{
    const double t = exp(-fabs(z));
    *ll += y * z - (z > 0.0 ? z : 0.0) - log1p(t);
    return y - (z >= 0.0 ? 1.0 / (1.0 + t) : t / (1.0 + t));
}

/* The K1 logits z[0], z[stride], ... (classes 1..K1) to their class
   probabilities in place; returns log(1 + sum_k exp(z_k)), the log
   normaliser with the reference class. */
double sgfs_softmax_ref(double *z, size_t stride, int K1)
{
    double m = 0.0, s;
    for (int k = 0; k < K1; k++) if (z[k * stride] > m) m = z[k * stride];
    s = exp(-m);
    for (int k = 0; k < K1; k++) {
        z[k * stride] = exp(z[k * stride] - m);
        s += z[k * stride];
    }
    for (int k = 0; k < K1; k++) z[k * stride] /= s;
    return m + log(s);
}
