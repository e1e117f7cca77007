/*
 * model_negbin.c - negative binomial regression with the log link (NB2:
 * Hilbe 2011, Negative Binomial Regression, ch. 8; rstanarm's
 * neg_binomial_2, MASS::glm.nb), counts whose variance grows as
 * mu + mu^2 / phi.  With a = log phi and L_i = log(phi + mu_i),
 *
 *   l_i = lgamma(y_i + phi) - lgamma(phi) - lgamma(y_i + 1)
 *         + phi a + y_i eta_i - (y_i + phi) L_i,
 *   eta_i = u_i' beta + o_i,  mu_i = exp(eta_i),
 *
 * and with p_i = mu_i / (phi + mu_i) = sigmoid(eta_i - a), q_i = 1 - p_i:
 *
 *   dl_i/deta = y_i q_i - phi p_i                         (= phi (y_i - mu_i) / (phi + mu_i)),
 *   dl_i/da   = phi [psi(y_i + phi) - psi(phi) + log q_i] - dl_i/deta,
 *   -d2l_i/deta2    = (y_i + phi) p_i q_i,
 *   -d2l_i/deta da  = -p_i q_i (y_i - mu_i),
 *   -d2l_i/da2      = -(phi^2 [psi'(y_i + phi) - psi'(phi)] + phi p_i^2 + y_i q_i^2
 *                       + dl_i/da),
 *
 * psi the digamma function.  The last is the observed information, which
 * need not be positive row by row (the sum at the mode is).
 *
 * The passes over rows (scores, control variates, curvature; theta =
 * (beta, a) with a sampled, else beta) are model_aux.c's, from these two
 * row functions.  y_i are non-negative whole numbers (checked in R).
 * log(phi + mu) is computed as a log-sum-exp, so that neither a large eta
 * nor a large phi overflows; a chain whose eta or a still runs off gets a
 * non-finite state and the driver stops it as diverged.
 */
#include "sgfs.h"
#include <Rmath.h>

/* log(exp(a) + exp(b)) */
static inline double log_sum_exp(double a, double b)
{
    return a > b ? a + log1p(exp(b - a)) : b + log1p(exp(a - b));
}

/* a row's terms at eta and a = log phi: l, dl/deta, dl/da (into d[0..2]) */
static void row_terms(double y, double eta, double a, const double *mpar, double *d)
{
    (void) mpar;
    const double phi = exp(a), L = log_sum_exp(a, eta);
    const double p = exp(eta - L), log_q = a - L;
    d[0] = lgamma(y + phi) - lgamma(phi) - lgamma(y + 1.0) + phi * a + y * eta - (y + phi) * L;
    d[1] = y * exp(log_q) - phi * p;
    d[2] = phi * ((y > 0.0 ? digamma(y + phi) - digamma(phi) : 0.0) + log_q) - d[1];
}

/* a row's -d2l/deta2, -d2l/deta da and -d2l/da2 at eta and a (into h[0..2]),
   given its terms there */
static void row_curvature(double y, double eta, double a, const double *mpar, const double *d,
                          double *h)
{
    (void) mpar;
    const double phi = exp(a), L = log_sum_exp(a, eta);
    const double p = exp(eta - L), q = exp(a - L), mu = exp(eta);
    h[0] = (y + phi) * p * q;
    h[1] = -p * q * (y - mu);
    h[2] = -(phi * phi * (y > 0.0 ? trigamma(y + phi) - trigamma(phi) : 0.0)
             + phi * p * p + y * q * q + d[2]);
}

static const sgfs_aux_rows negbin_rows = {row_terms, row_curvature};

static void negbin_score(sgfs_lik *lik, const double *theta, const int *idx, int n,
                         double *sum, double *G, double *loglik)
{
    sgfs_aux_score(&negbin_rows, lik, theta, idx, n, sum, G, loglik);
}

static void negbin_score_change(sgfs_lik *lik, const double *theta, const double *centre,
                                int second, const int *idx, int n, double *sum)
{
    sgfs_aux_score_change(&negbin_rows, lik, theta, centre, second, idx, n, sum);
}

static double negbin_loglik(sgfs_lik *lik, const double *theta, const int *idx, int n)
{
    return sgfs_aux_loglik(&negbin_rows, lik, theta, idx, n);
}

static void negbin_neg_hessian(sgfs_lik *lik, const double *theta, const int *idx, int n,
                               double *H)
{
    sgfs_aux_neg_hessian(&negbin_rows, lik, theta, idx, n, H);
}

static void negbin_row_derivs(const sgfs_lik *lik, const double *theta, int row, double eta,
                              double *d)
{
    sgfs_aux_row_derivs(&negbin_rows, lik, theta, row, eta, d);
}

static double negbin_draw_value(int what, double y, double z, double log_aux,
                                const double *mpar)
{
    if (what == SGFS_DRAW_MEAN) return exp(z);
    double d[3];
    row_terms(y, z, log_aux, mpar, d);
    return d[0];
}

const sgfs_model sgfs_model_negbin = {
    .name = "negbin", .weighted = 1,
    .n_par = sgfs_aux_n_par, .score = negbin_score,
    .loglik = negbin_loglik, .neg_hessian = negbin_neg_hessian,
    .n_pred = sgfs_aux_n_pred, .predict = sgfs_aux_predict_exp,
    .score_change = negbin_score_change, .row_derivs = negbin_row_derivs,
    .n_out = sgfs_glm_n_out, .outputs = sgfs_glm_outputs,
    .draw_value = negbin_draw_value, .draw_aux = 1
};
