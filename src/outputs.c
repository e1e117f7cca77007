/*
 * outputs.c - the output layers the GLMs and the networks share
 * (algorithms vignette 3.1, 3.2), and their predictive summaries.
 *
 *   binomial (logit):  l = y z - softplus(z),  dl/dz = y - sigmoid(z);
 *   categorical (softmax, class 0 the reference with logit 0):
 *     p_k = exp(z_k) / (1 + sum_l exp(z_l)),  l = z_y - log(1 + sum_l exp(z_l));
 *   gaussian: y ~ N(z, sigma^2), summarised by E y = z and E y^2 = z^2 + sigma^2.
 */
#include "sgfs.h"

double sgfs_sigmoid(double z)
{
    if (z >= 0.0) return 1.0 / (1.0 + exp(-z));
    const double t = exp(z);
    return t / (1.0 + t);
}

/* log(1 + exp(z)), without overflow */
double sgfs_softplus(double z)
{
    return z > 0.0 ? z + log1p(exp(-z)) : log1p(exp(z));
}

/* y - sigmoid(z), adding y z - softplus(z) to *ll (one exp, one log1p) */
double sgfs_binomial_residual(double y, double z, double *ll)
{
    const double t = exp(-fabs(z));
    *ll += y * z - (z > 0.0 ? z : 0.0) - log1p(t);
    return y - (z >= 0.0 ? 1.0 / (1.0 + t) : t / (1.0 + t));
}

/* The K1 logits z[0], z[stride], ... (classes 1..K1) to their class
   probabilities in place; returns the normaliser 1 + sum_k exp(z_k) as
   exp(m) times the value returned, with m = max(0, z_k) in *shift, and the
   reference class's probability exp(-m) / (that value) in *p_ref (either
   may be NULL): no logarithm, for callers that want probabilities only. */
double sgfs_softmax_sum(double *z, size_t stride, int K1, double *shift, double *p_ref)
{
    double m = 0.0, s;
    for (int k = 0; k < K1; k++) if (z[k * stride] > m) m = z[k * stride];
    const double e0 = exp(-m);
    s = e0;
    for (int k = 0; k < K1; k++) {
        z[k * stride] = exp(z[k * stride] - m);
        s += z[k * stride];
    }
    for (int k = 0; k < K1; k++) z[k * stride] /= s;
    if (shift) *shift = m;
    if (p_ref) *p_ref = e0 / s;
    return s;
}

/* the same, returning the log normaliser log(1 + sum_k exp(z_k)) */
double sgfs_softmax_ref(double *z, size_t stride, int K1)
{
    double m;
    const double s = sgfs_softmax_sum(z, stride, K1, &m, NULL);
    return m + log(s);
}

/* out[i] += sigmoid(z[i * stride]), i < m */
void sgfs_add_binomial_pred(const double *z, size_t stride, int m, double *out)
{
    for (int i = 0; i < m; i++) out[i] += sgfs_sigmoid(z[i * stride]);
}

/* out[2i] += z_i, out[2i + 1] += z_i^2 + sigma^2 (z_i = z[i * stride]) */
void sgfs_add_gaussian_pred(const double *z, size_t stride, int m,
                            double log_sigma, double *out)
{
    const double s2 = exp(2.0 * log_sigma);
    for (int i = 0; i < m; i++) {
        const double mu = z[i * stride];
        out[2 * i] += mu;
        out[2 * i + 1] += mu * mu + s2;
    }
}

/* the K1 logits of example i at z + i * by_example (stride by_class) to
   probabilities in place, and all K1 + 1 class probabilities added to
   out[(K1 + 1) i + k] */
void sgfs_add_class_pred(double *z, size_t by_class, size_t by_example, int m,
                         int K1, double *out)
{
    for (int i = 0; i < m; i++) {
        double *zi = z + i * by_example, rest = 1.0;
        double *o = out + (size_t) (K1 + 1) * i;
        sgfs_softmax_ref(zi, by_class, K1);
        for (int k = 0; k < K1; k++) {
            o[k + 1] += zi[k * by_class];
            rest -= zi[k * by_class];
        }
        o[0] += rest;
    }
}
