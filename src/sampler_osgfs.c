/*
 * sampler_osgfs.c - "optimal" SGFS (algorithms vignette 2.9, after the El Hanchi
 * report), a Langevin rule with a constant preconditioner and constant
 * noise, both fixed at the posterior mode theta_hat:
 *
 *   theta <- theta + eps Dm grad + Q^{1/2} xi,    xi ~ N(0, I),
 *   Dm = (2 / gamma) H^{-1},
 *   Q  = 2 eps Dm - eps^2 N (gamma - 1) Dm C Dm - eps^2 Dm H Dm,
 *
 * H = minus the Hessian of the log posterior at theta_hat, C the
 * per-example score covariance there (so N (gamma - 1) C is the covariance
 * of the minibatch gradient), gamma = 1 + (N/n)(N - n)/(N - 1) as for SGFS
 * (the report's (N + n)/n for batches drawn with replacement).  For a
 * Gaussian posterior with C = H/N, Q = 2 eps (1 - eps) Dm and the chain's
 * stationary covariance is exactly H^{-1}.  R/samplers-osgfs.R computes
 * A = eps Dm and R = Q^{1/2} (negative eigenvalues of Q clipped to 0).
 * spar = (A (D x D), R (D x D)), both general column-major matrices.
 * At temperature T the R side takes gamma_T = 1 + (gamma - 1)/T for gamma in
 * Dm and Q = T (2 eps Dm - eps^2 M_T), M_T = N (gamma - 1) Dm C Dm / T +
 * Dm H Dm: stationary at N(theta_hat, T H^-1).
 * Scratch: xi and the product (2 D).  Cost per iteration O(n D + D^2).
 */
#include "sgfs.h"

static int osgfs_step(sgfs_engine *e, double eps)
{
    (void) eps;                  /* the step is part of A and R */
    const int D = e->D;
    const double *A = e->rule.spar, *R = e->rule.spar + (size_t) D * D;
    double *xi = e->rule.work, *out = e->rule.work + D;
    sgfs_matrix_times(A, D, e->grad, out);
    for (int j = 0; j < D; j++) e->theta[j] += out[j];
    sgfs_rnorm(xi, D);
    sgfs_matrix_times(R, D, xi, out);
    for (int j = 0; j < D; j++) e->theta[j] += out[j];
    return 0;
}

const sgfs_sampler sgfs_sampler_osgfs = {
    .name = "osgfs", .tempered = 1, .work = {0, 2, 0}, .step = osgfs_step   /* scratch: xi, product */
};
