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
 * theta = (beta[P], a) when alpha is sampled (D = P + 1; the default, mpar[0]
 * NA), or beta alone with a = mpar[0] fixed.  The gathered batch's eta
 * includes the offsets (sgfs_batch_columns).  y_i > 0 (checked in R).  Prior
 * weights w_i (lik->data->weights; 1 without) multiply row i's l_i, g_i and
 * curvature, as frequency weights.
 */
#include "sgfs.h"
#include <Rmath.h>

static int shape_sampled(const double *mpar)
{
    return ISNAN(mpar[0]);
}

static int gamma_n_par(int P, const double *mpar, int n_mpar)
{
    if (n_mpar < 1 || (!ISNAN(mpar[0]) && !R_FINITE(mpar[0]))) return -1;
    return P + shape_sampled(mpar);
}

static inline double log_shape(const sgfs_lik *lik, const double *theta)
{
    return shape_sampled(lik->mpar) ? theta[lik->data->P] : lik->mpar[0];
}

/* a row's terms at eta and a = log alpha: l, dl/deta, dl/da (into d[0..2]) */
static inline void row_terms(double y, double eta, double a, double *d)
{
    const double alpha = exp(a), r = y * exp(-eta), log_y = log(y);
    d[0] = alpha * (a - eta) - lgamma(alpha) + (alpha - 1.0) * log_y - alpha * r;
    d[1] = alpha * (r - 1.0);
    d[2] = alpha * (a - eta + 1.0 - digamma(alpha) + log_y - r);
}

/* a row's -d2l/deta2, -d2l/deta da and -d2l/da2 at eta and a (into h[0..2]),
   given its dl/deta and dl/da there (row_terms' d) */
static inline void row_curvature(double y, double eta, double a, const double *d, double *h)
{
    const double alpha = exp(a);
    h[0] = alpha * y * exp(-eta);
    h[1] = -d[1];
    h[2] = alpha * alpha * trigamma(alpha) - alpha - d[2];
}

static void gamma_score(sgfs_lik *lik, const double *theta, const int *idx, int n,
                        double *sum, double *G, double *loglik)
{
    const int P = lik->data->P, D = lik->D, sampled = shape_sampled(lik->mpar);
    const double a = log_shape(lik, theta);
    double *r = lik->eta, ll = 0.0, score_a = 0.0, d[3];
    const double *xb = sgfs_batch_columns(lik, theta, idx, n, r);
    for (int i = 0; i < n; i++) {
        const double w = sgfs_row_weight(lik->data, idx[i]);
        row_terms(lik->data->y[idx[i]], r[i], a, d);
        ll += w * d[0];
        score_a += w * d[2];
        if (G && sampled) G[P + (size_t) i * D] = w * d[2];
        r[i] = w * d[1];
    }
    sgfs_glm_scores(xb, P, n, r, sum, G, D);
    if (sampled) sum[P] = score_a;
    if (loglik) *loglik = ll;
}

/* control variates: sum_i g_i(theta) - g_i(centre) from one gather of the
   u_i, and with `second` plus H_i(centre) (theta - centre) (h from
   row_curvature at the centre; d_a = 0 for a fixed shape) */
static void gamma_score_change(sgfs_lik *lik, const double *theta, const double *centre,
                               int second, const int *idx, int n, double *sum)
{
    const int P = lik->data->P, sampled = shape_sampled(lik->mpar);
    const double a = log_shape(lik, theta), a_c = log_shape(lik, centre), d_a = a - a_c;
    double *r = lik->eta, *rc = lik->eta_centre, score_a = 0.0, t[3], tc[3], h[3];
    const double *xb = sgfs_batch_columns(lik, theta, idx, n, r);
    sgfs_xt_beta(xb, P, n, centre, rc);
    sgfs_add_offset(lik->data, idx, n, rc);
    for (int i = 0; i < n; i++) {
        const double y = lik->data->y[idx[i]], w = sgfs_row_weight(lik->data, idx[i]);
        row_terms(y, r[i], a, t);
        row_terms(y, rc[i], a_c, tc);
        double beta_part = t[1] - tc[1], a_part = t[2] - tc[2];
        if (second) {
            const double d_eta = r[i] - rc[i];
            row_curvature(y, rc[i], a_c, tc, h);
            beta_part += h[0] * d_eta + h[1] * d_a;
            a_part += h[1] * d_eta + h[2] * d_a;
        }
        r[i] = w * beta_part;
        score_a += w * a_part;
    }
    sgfs_x_r(xb, P, n, r, sum);
    if (sampled) sum[P] = score_a;
}

static double gamma_loglik(sgfs_lik *lik, const double *theta, const int *idx, int n)
{
    const double a = log_shape(lik, theta);
    double *eta = lik->eta, ll = 0.0, d[3];
    sgfs_batch_columns(lik, theta, idx, n, eta);
    for (int i = 0; i < n; i++) {
        row_terms(lik->data->y[idx[i]], eta[i], a, d);
        ll += sgfs_row_weight(lik->data, idx[i]) * d[0];
    }
    return ll;
}

/* minus the Hessian: sum_i w_i h_0 u_i u_i' (as sqrt(w_i h_0) u_i through
   lik->G: h_0 > 0), and for a sampled a its cross column and diagonal */
static void gamma_neg_hessian(sgfs_lik *lik, const double *theta, const int *idx, int n,
                              double *H)
{
    const int P = lik->data->P, D = lik->D, sampled = shape_sampled(lik->mpar);
    const double a = log_shape(lik, theta);
    double *eta = lik->eta, t[3], h[3], haa = 0.0;
    const double *xb = sgfs_batch_columns(lik, theta, idx, n, eta);
    double *cross = sampled ? H + (size_t) P * D : NULL;
    for (int i = 0; i < n; i++) {
        const double w = sgfs_row_weight(lik->data, idx[i]);
        row_terms(lik->data->y[idx[i]], eta[i], a, t);
        row_curvature(lik->data->y[idx[i]], eta[i], a, t, h);
        const double *restrict u = xb + (size_t) i * P;
        double *restrict g = lik->G + (size_t) i * P;
        const double root = sqrt(w * h[0]);
        for (int j = 0; j < P; j++) g[j] = root * u[j];
        if (sampled) {
            for (int j = 0; j < P; j++) cross[j] += w * h[1] * u[j];
            haa += w * h[2];
        }
    }
    sgfs_crossprod_add(lik->G, P, n, H, D);
    if (sampled) cross[P] += haa;
}

static int gamma_n_pred(const double *mpar)
{
    (void) mpar;
    return 1;
}

/* keep = predictive(): the means exp(u_i' beta) (no offsets: refused in R) */
static void gamma_predict(sgfs_lik *lik, const double *theta, const double *x, int m,
                          double *out)
{
    sgfs_xt_beta(x, lik->data->P, m, theta, lik->eta);
    for (int i = 0; i < m; i++) out[i] += exp(lik->eta[i]);
}

static void gamma_row_derivs(const sgfs_lik *lik, const double *theta, int row, double eta,
                             double *d)
{
    const double w = sgfs_row_weight(lik->data, row), y = lik->data->y[row],
        a = log_shape(lik, theta);
    double t[3], h[3];
    row_terms(y, eta, a, t);
    row_curvature(y, eta, a, t, h);
    d[0] = w * t[1];
    d[1] = w * h[0];
    d[2] = shape_sampled(lik->mpar) ? w * h[1] : 0.0;
    d[3] = shape_sampled(lik->mpar) ? w * h[2] : 0.0;
}

static double gamma_draw_value(int what, double y, double z, double log_aux)
{
    if (what == SGFS_DRAW_MEAN) return exp(z);
    double d[3];
    row_terms(y, z, log_aux, d);
    return d[0];
}

const sgfs_model sgfs_model_gamma = {
    .name = "gamma", .weighted = 1,
    .n_par = gamma_n_par, .score = gamma_score,
    .loglik = gamma_loglik, .neg_hessian = gamma_neg_hessian,
    .n_pred = gamma_n_pred, .predict = gamma_predict,
    .score_change = gamma_score_change, .row_derivs = gamma_row_derivs,
    .n_out = sgfs_glm_n_out, .outputs = sgfs_glm_outputs,
    .draw_value = gamma_draw_value, .draw_aux = 1
};
