/*
 * model_student.c - linear regression with Student t noise of nu degrees
 * of freedom (fixed; Lange, Little and Taylor 1989, JASA 84, 881-896;
 * brms's student() family with nu fixed): y_i = eta_i + sigma e_i, e_i ~
 * t_nu, whose heavy tails let outlying rows pull the fit less than a
 * gaussian's.  With a = log sigma and z_i = (y_i - eta_i) / sigma,
 *
 *   l_i = log Gamma((nu + 1) / 2) - log Gamma(nu / 2) - log(nu pi) / 2
 *         - a - (nu + 1) / 2 log(1 + z_i^2 / nu),
 *   dl_i/deta = (nu + 1) z_i / (sigma (nu + z_i^2)),
 *   dl_i/da   = (nu + 1) z_i^2 / (nu + z_i^2) - 1.
 *
 * The observed information in eta, (nu + 1)(nu - z^2) / (sigma^2 (nu +
 * z^2)^2), is negative for |z| > sqrt(nu) (the likelihood is not log
 * concave), so the curvature the passes use (metric, mode, second-order
 * control variates, whose full-data sum is computed from the same rows)
 * is the expected information of a row, positive everywhere:
 *
 *   -d2l/deta2 -> (nu + 1) / ((nu + 3) sigma^2),
 *   -d2l/deta da -> 0,   -d2l/da2 -> 2 nu / (nu + 3).
 *
 * mpar = (log sigma fixed, or NA: sampled as the last coordinate; nu).
 * No row_loglik: random-effect terms are refused in R.
 * The passes over rows are model_aux.c's; prior weights multiply a row's
 * terms (frequency weights).
 */
#include "sgfs.h"
#include <Rmath.h>

/* a row's terms at eta and a = log sigma: l, dl/deta, dl/da (into d[0..2]) */
static void row_terms(double y, double eta, double a, const double *mpar, double *d)
{
    const double nu = mpar[1], inv_sigma = exp(-a), z = (y - eta) * inv_sigma,
        q = nu + z * z;
    d[0] = lgammafn(0.5 * (nu + 1.0)) - lgammafn(0.5 * nu) - 0.5 * log(nu * M_PI) - a
           - 0.5 * (nu + 1.0) * log1p(z * z / nu);
    d[1] = (nu + 1.0) * z * inv_sigma / q;
    d[2] = (nu + 1.0) * z * z / q - 1.0;
}

/* a row's expected information at a (into h[0..2]) */
static void row_curvature(double y, double eta, double a, const double *mpar, const double *d,
                          double *h)
{
    (void) y;
    (void) eta;
    (void) d;
    const double nu = mpar[1];
    h[0] = (nu + 1.0) / (nu + 3.0) * exp(-2.0 * a);
    h[1] = 0.0;
    h[2] = 2.0 * nu / (nu + 3.0);
}

static const sgfs_aux_rows student_rows = {row_terms, row_curvature};

static int student_n_par(int P, const double *mpar, int n_mpar)
{
    if (n_mpar < 2 || !(mpar[1] > 0.0) || !R_FINITE(mpar[1])) return -1;
    return sgfs_aux_n_par(P, mpar, n_mpar);
}

static void student_score(sgfs_lik *lik, const double *theta, const int *idx, int n,
                          double *sum, double *G, double *loglik)
{
    sgfs_aux_score(&student_rows, lik, theta, idx, n, sum, G, loglik);
}

static void student_score_change(sgfs_lik *lik, const double *theta, const double *centre,
                                 int second, const int *idx, int n, double *sum)
{
    sgfs_aux_score_change(&student_rows, lik, theta, centre, second, idx, n, sum);
}

static double student_loglik(sgfs_lik *lik, const double *theta, const int *idx, int n)
{
    return sgfs_aux_loglik(&student_rows, lik, theta, idx, n);
}

static void student_neg_hessian(sgfs_lik *lik, const double *theta, const int *idx, int n,
                                double *H)
{
    sgfs_aux_neg_hessian(&student_rows, lik, theta, idx, n, H);
}

static void student_row_derivs(const sgfs_lik *lik, const double *theta, int row, double eta,
                               double *d)
{
    sgfs_aux_row_derivs(&student_rows, lik, theta, row, eta, d);
}

/* keep = predictive(): the predictive's mean eta and second moment eta^2 +
   sigma^2 nu / (nu - 2) (infinite for nu <= 2) */
static int student_n_pred(const double *mpar)
{
    (void) mpar;
    return 2;
}

static void student_predict(sgfs_lik *lik, const double *theta, const double *x, int m,
                            double *out)
{
    const double nu = lik->mpar[1];
    sgfs_xt_beta(x, lik->data->P, m, theta, lik->eta);
    sgfs_add_gaussian_pred(lik->eta, 1, m,
                           nu > 2.0 ? sgfs_aux_value(lik, theta) + 0.5 * log(nu / (nu - 2.0))
                                    : R_PosInf, out);
}

/* the mean z (the location; the mean itself for nu > 1) and the density of
   y on the internal scale (draws.c maps both to the response's) */
static double student_draw_value(int what, double y, double z, double log_aux,
                                 const double *mpar)
{
    if (what == SGFS_DRAW_MEAN) return z;
    double d[3];
    row_terms(y, z, log_aux, mpar, d);
    return d[0];
}

const sgfs_model sgfs_model_student = {
    .name = "student", .weighted = 1,
    .n_par = student_n_par, .score = student_score,
    .loglik = student_loglik, .neg_hessian = student_neg_hessian,
    .score_change = student_score_change, .row_derivs = student_row_derivs,
    .n_pred = student_n_pred, .predict = student_predict,
    .n_out = sgfs_glm_n_out, .outputs = sgfs_glm_outputs,
    .draw_value = student_draw_value, .draw_aux = 1
};
