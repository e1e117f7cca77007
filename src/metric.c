/*
 * metric.c - a constant metric for the stochastic-gradient samplers
 * (the algorithms vignette, 2.12: preconditioning by the curvature at the mode).
 *
 * With H = U'U the curvature of the log posterior at its mode (U upper
 * triangular; or U = diag(s), s_j = sqrt(H_jj), beyond a few hundred
 * parameters), the sampler runs in the whitened coordinates
 *
 *   z = U theta,   grad_z = U'^{-1} grad_theta,   theta = U^{-1} z,
 *
 * in which the posterior near its mode is N(., I): one step size suits
 * every direction.  SGLD there is theta <- theta + (eps/2) H^{-1} grad +
 * N(0, eps H^{-1}), the Riemann-manifold Langevin rule with a constant
 * metric (Girolami and Calderhead 2011), so its stationary law is the
 * posterior's as eps -> 0, as for the plain rule.  The driver keeps theta
 * (the model's parameters, e->par) and z (the sampler's, e->theta) in step;
 * the metric is a part of its own (sgfs_metric), which these functions take.
 * without a metric both are the same array and nothing is transformed.
 *
 * Beyond a few hundred parameters the diagonal is corrected along the
 * directions where it is most wrong (R/laplace.R, lowrank_metric()): with
 * A = S^-1 H S^-1 the curvature in the diagonal's coordinates and V (D x k,
 * orthonormal) its eigenvectors of eigenvalues lambda far from 1,
 *
 *   U = C S,   C = I + V diag(lambda^(1/2) - 1) V',
 *   C^-1 = I + V diag(lambda^(-1/2) - 1) V',
 *
 * so that U'U = S C^2 S agrees with H on span(V) and with the diagonal
 * elsewhere; each transform costs two D x k products (lowrank()).
 *
 * Clipping (sgfs_metric_clip): where the posterior is far from Gaussian,
 * such as the exponential wall of a separated one-hot level's coefficient,
 * the curvature a few sd from the mode can exceed the mode's by orders of
 * magnitude, and one unadjusted step at the whitened step size would throw
 * the chain many sd away.  Each whitened gradient coordinate is therefore
 * clipped to +-drift_limit (set so that one step's drift is at most about
 * one posterior sd); in the bulk of a near-Gaussian posterior, where the
 * whitened gradient is about N(0, 1) per coordinate, it never binds.
 */
#include "sgfs.h"

/* x <- x + V diag(c) V' x for the m <= 2 columns of x (D x m): C x with c
   = metric_up, C^-1 x with metric_down (nothing without a low-rank part);
   two columns at once read V twice, not four times (V is D x k: 3.8 MB
   at D = 94,500, k = 5, beyond the caches) */
static void lowrank(const sgfs_metric *mt, const double *c, double *x, int m)
{
    const int D = mt->D, k = mt->rank;
    if (k == 0) return;
    double *w = mt->work;
    sgfs_gemm('T', 'N', k, m, D, mt->vectors, D, x, D, 0.0, w, k);
    for (int i = 0; i < m; i++)
        for (int j = 0; j < k; j++) w[j + i * k] *= c[j];
    sgfs_gemm('N', 'N', D, m, k, mt->vectors, D, w, k, 1.0, x, D);
}

/* z = U theta */
void sgfs_metric_to_z(const sgfs_metric *mt, const double *theta, double *z)
{
    const int D = mt->D;
    memcpy(z, theta, (size_t) D * sizeof(double));
    if (mt->dense) sgfs_upper_times(mt->U, D, z);
    else {
        for (int j = 0; j < D; j++) z[j] *= mt->U[j];
        lowrank(mt, mt->up, z, 1);
    }
}

/* theta = U^{-1} z */
void sgfs_metric_to_theta(const sgfs_metric *mt, const double *z, double *theta)
{
    const int D = mt->D;
    memcpy(theta, z, (size_t) D * sizeof(double));
    if (mt->dense) sgfs_upper_solve(mt->U, D, theta);
    else {
        lowrank(mt, mt->down, theta, 1);
        for (int j = 0; j < D; j++) theta[j] /= mt->U[j];
    }
}

/* g <- U'^{-1} g (= C^-1 S^-1 g with a low-rank part) for each of the m
   columns of g (D x m) */
void sgfs_metric_gradients(const sgfs_metric *mt, double *g, int m)
{
    const int D = mt->D;
    if (mt->dense) {
        if (m == 1) sgfs_upper_t_solve(mt->U, D, g);
        else sgfs_upper_t_solve_columns(mt->U, D, m, g);
        return;
    }
    for (int i = 0; i < m; i++) {
        double *gi = g + (size_t) i * D;
        for (int j = 0; j < D; j++) gi[j] /= mt->U[j];
    }
    for (int i = 0; i < m; i += 2)
        lowrank(mt, mt->down, g + (size_t) i * D, m - i >= 2 ? 2 : 1);
}

/* clips each coordinate of the whitened gradient g to +-mt->drift_limit */
void sgfs_metric_clip(sgfs_metric *mt, double *g)
{
    const double c = mt->drift_limit;
    if (c <= 0.0) return;
    for (int j = 0; j < mt->D; j++) {
        if (g[j] > c) { g[j] = c; mt->clipped += 1.0; }
        else if (g[j] < -c) { g[j] = -c; mt->clipped += 1.0; }
    }
}
