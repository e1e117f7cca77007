/*
 * model_gamma.c - Gamma regression with the log link (McCullagh and Nelder
 * 1989, Generalized Linear Models, ch. 8; rstanarm's stan_glm(family =
 * Gamma(link = "log"))), positive responses whose sd is proportional to
 * their mean: y_i ~ Gamma(shape alpha, rate alpha / mu_i).  With a = log
 * alpha,
 *
 *   l_i = alpha a - alpha eta_i - lgamma(alpha) + (alpha - 1) log y_i
 *         - alpha y_i exp(-eta_i),
 *   eta_i = u_i' beta + o_i,  mu_i = exp(eta_i),
 *
 * and with r_i = y_i / mu_i:
 *
 *   dl_i/deta = alpha (r_i - 1),
 *   dl_i/da   = alpha [a - eta_i + 1 - psi(alpha) + log y_i - r_i],
 *   -d2l_i/deta2   = alpha r_i,
 *   -d2l_i/deta da = -dl_i/deta,
 *   -d2l_i/da2     = alpha^2 psi'(alpha) - alpha - dl_i/da,
 *
 * psi the digamma function.  The last is the observed information, which
 * need not be positive row by row (its expectation alpha (alpha psi'(alpha)
 * - 1) is, and so is the sum at the mode).
 *
 * The passes over rows (scores, control variates, curvature; theta =
 * (beta, a) with a sampled, else beta) are model_aux.c's, from these two
 * row functions.  y_i > 0 (checked in R).
 */
#include "sgfs.h"
#include <Rmath.h>

/* a row's terms at eta and a = log alpha: l, dl/deta, dl/da (into d[0..2]) */
static void row_terms(double y, double eta, double a, const double *mpar, double *d)
{
    (void) mpar;
    const double alpha = exp(a), r = y * exp(-eta), log_y = log(y);
    d[0] = alpha * (a - eta) - lgamma(alpha) + (alpha - 1.0) * log_y - alpha * r;
    d[1] = alpha * (r - 1.0);
    d[2] = alpha * (a - eta + 1.0 - digamma(alpha) + log_y - r);
}

/* a row's -d2l/deta2, -d2l/deta da and -d2l/da2 at eta and a (into h[0..2]),
   given its terms there */
static void row_curvature(double y, double eta, double a, const double *mpar, const double *d,
                          double *h)
{
    (void) mpar;
    const double alpha = exp(a);
    h[0] = alpha * y * exp(-eta);
    h[1] = -d[1];
    h[2] = alpha * alpha * trigamma(alpha) - alpha - d[2];
}

static const sgfs_aux_rows gamma_rows = {row_terms, row_curvature};

static void gamma_score(sgfs_lik *lik, const double *theta, const int *idx, int n,
                        double *sum, double *G, double *loglik)
{
    sgfs_aux_score(&gamma_rows, lik, theta, idx, n, sum, G, loglik);
}

static void gamma_score_change(sgfs_lik *lik, const double *theta, const double *centre,
                               int second, const int *idx, int n, double *sum)
{
    sgfs_aux_score_change(&gamma_rows, lik, theta, centre, second, idx, n, sum);
}

static double gamma_loglik(sgfs_lik *lik, const double *theta, const int *idx, int n)
{
    return sgfs_aux_loglik(&gamma_rows, lik, theta, idx, n);
}

static void gamma_neg_hessian(sgfs_lik *lik, const double *theta, const int *idx, int n,
                              double *H)
{
    sgfs_aux_neg_hessian(&gamma_rows, lik, theta, idx, n, H);
}

static void gamma_row_derivs(const sgfs_lik *lik, const double *theta, int row, double eta,
                             double *d)
{
    sgfs_aux_row_derivs(&gamma_rows, lik, theta, row, eta, d);
}

static double gamma_draw_value(int what, double y, double z, double log_aux,
                               const double *mpar)
{
    if (what == SGFS_DRAW_MEAN) return exp(z);
    double d[3];
    row_terms(y, z, log_aux, mpar, d);
    return d[0];
}

const sgfs_model sgfs_model_gamma = {
    .name = "gamma", .weighted = 1,
    .n_par = sgfs_aux_n_par, .score = gamma_score,
    .loglik = gamma_loglik, .neg_hessian = gamma_neg_hessian,
    .n_pred = sgfs_aux_n_pred, .predict = sgfs_aux_predict_exp,
    .score_change = gamma_score_change, .row_derivs = gamma_row_derivs,
    .n_out = sgfs_glm_n_out, .outputs = sgfs_glm_outputs,
    .draw_value = gamma_draw_value, .draw_aux = 1
};
