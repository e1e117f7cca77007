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
 * theta = (beta[P], a) when phi is sampled (D = P + 1; the default, mpar[0]
 * NA), or beta alone with a = mpar[0] fixed.  The gathered batch's eta
 * includes the offsets (sgfs_batch_columns).  y_i are non-negative whole
 * numbers (checked in R).  Prior weights w_i (lik->data->weights; 1 without)
 * multiply row i's l_i, g_i and curvature, as frequency weights.
 * log(phi + mu) is computed as a log-sum-exp, so that neither a large eta
 * nor a large phi overflows; a chain whose eta or a still runs off gets a
 * non-finite state and the driver stops it as diverged.
 */
#include "sgfs.h"
#include <Rmath.h>

static int phi_sampled(const double *mpar)
{
    return ISNAN(mpar[0]);
}

static int negbin_n_par(int P, const double *mpar, int n_mpar)
{
    if (n_mpar < 1 || (!ISNAN(mpar[0]) && !R_FINITE(mpar[0]))) return -1;
    return P + phi_sampled(mpar);
}

static inline double log_phi(const sgfs_lik *lik, const double *theta)
{
    return phi_sampled(lik->mpar) ? theta[lik->data->P] : lik->mpar[0];
}

/* log(exp(a) + exp(b)) */
static inline double log_sum_exp(double a, double b)
{
    return a > b ? a + log1p(exp(b - a)) : b + log1p(exp(a - b));
}

/* a row's terms at eta and a = log phi: l, dl/deta, dl/da (into d[0..2]) */
static inline void row_terms(double y, double eta, double a, double *d)
{
    const double phi = exp(a), L = log_sum_exp(a, eta);
    const double p = exp(eta - L), log_q = a - L;
    d[0] = lgamma(y + phi) - lgamma(phi) - lgamma(y + 1.0) + phi * a + y * eta - (y + phi) * L;
    d[1] = y * exp(log_q) - phi * p;
    d[2] = phi * ((y > 0.0 ? digamma(y + phi) - digamma(phi) : 0.0) + log_q) - d[1];
}

/* a row's -d2l/deta2, -d2l/deta da and -d2l/da2 at eta and a (into h[0..2]),
   given its dl/da there (row_terms' d[2]) */
static inline void row_curvature(double y, double eta, double a, double dl_da, double *h)
{
    const double phi = exp(a), L = log_sum_exp(a, eta);
    const double p = exp(eta - L), q = exp(a - L), mu = exp(eta);
    h[0] = (y + phi) * p * q;
    h[1] = -p * q * (y - mu);
    h[2] = -(phi * phi * (y > 0.0 ? trigamma(y + phi) - trigamma(phi) : 0.0)
             + phi * p * p + y * q * q + dl_da);
}

static void negbin_score(sgfs_lik *lik, const double *theta, const int *idx, int n,
                         double *sum, double *G, double *loglik)
{
    const int P = lik->data->P, D = lik->D, sampled = phi_sampled(lik->mpar);
    const double a = log_phi(lik, theta);
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
   u_i, and with `second` plus H_i(centre) (theta - centre), H_i minus row
   i's Hessian: for beta [h0 d_eta + h1 d_a] u_i, for a h1 d_eta + h2 d_a
   (h from row_curvature at the centre, d_eta = eta_i - its centre value,
   the offset cancelling, d_a = a - its centre value; 0 for a fixed phi) */
static void negbin_score_change(sgfs_lik *lik, const double *theta, const double *centre,
                                int second, const int *idx, int n, double *sum)
{
    const int P = lik->data->P, sampled = phi_sampled(lik->mpar);
    const double a = log_phi(lik, theta), a_c = log_phi(lik, centre), d_a = a - a_c;
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
            row_curvature(y, rc[i], a_c, tc[2], h);
            beta_part += h[0] * d_eta + h[1] * d_a;
            a_part += h[1] * d_eta + h[2] * d_a;
        }
        r[i] = w * beta_part;
        score_a += w * a_part;
    }
    sgfs_x_r(xb, P, n, r, sum);
    if (sampled) sum[P] = score_a;
}

static double negbin_loglik(sgfs_lik *lik, const double *theta, const int *idx, int n)
{
    const double a = log_phi(lik, theta);
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
static void negbin_neg_hessian(sgfs_lik *lik, const double *theta, const int *idx, int n,
                               double *H)
{
    const int P = lik->data->P, D = lik->D, sampled = phi_sampled(lik->mpar);
    const double a = log_phi(lik, theta);
    double *eta = lik->eta, t[3], h[3], haa = 0.0;
    const double *xb = sgfs_batch_columns(lik, theta, idx, n, eta);
    double *cross = sampled ? H + (size_t) P * D : NULL;
    for (int i = 0; i < n; i++) {
        const double w = sgfs_row_weight(lik->data, idx[i]);
        row_terms(lik->data->y[idx[i]], eta[i], a, t);
        row_curvature(lik->data->y[idx[i]], eta[i], a, t[2], h);
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

static int negbin_n_pred(const double *mpar)
{
    (void) mpar;
    return 1;
}

/* keep = predictive(): the means exp(u_i' beta) (no offsets: refused in R) */
static void negbin_predict(sgfs_lik *lik, const double *theta, const double *x, int m,
                           double *out)
{
    sgfs_xt_beta(x, lik->data->P, m, theta, lik->eta);
    for (int i = 0; i < m; i++) out[i] += exp(lik->eta[i]);
}

static void negbin_row_derivs(const sgfs_lik *lik, const double *theta, int row, double eta,
                              double *d)
{
    const double w = sgfs_row_weight(lik->data, row), y = lik->data->y[row], a = log_phi(lik, theta);
    double t[3], h[3];
    row_terms(y, eta, a, t);
    row_curvature(y, eta, a, t[2], h);
    d[0] = w * t[1];
    d[1] = w * h[0];
    d[2] = phi_sampled(lik->mpar) ? w * h[1] : 0.0;
    d[3] = phi_sampled(lik->mpar) ? w * h[2] : 0.0;
}

static double negbin_draw_value(int what, double y, double z, double log_aux)
{
    if (what == SGFS_DRAW_MEAN) return exp(z);
    double d[3];
    row_terms(y, z, log_aux, d);
    return d[0];
}

const sgfs_model sgfs_model_negbin = {
    .name = "negbin", .weighted = 1,
    .n_par = negbin_n_par, .score = negbin_score,
    .loglik = negbin_loglik, .neg_hessian = negbin_neg_hessian,
    .n_pred = negbin_n_pred, .predict = negbin_predict,
    .score_change = negbin_score_change, .row_derivs = negbin_row_derivs,
    .n_out = sgfs_glm_n_out, .outputs = sgfs_glm_outputs,
    .draw_value = negbin_draw_value, .draw_aux = 1
};
