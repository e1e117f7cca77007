/*
 * model_probit.c - binary regression with the probit link (binomial(link =
 * "probit"); McCullagh and Nelder 1989, sec. 4.3).
 *
 * With s_i = 2 y_i - 1 (y_i in {0, 1}), eta_i = u_i' beta + o_i (o_i the
 * row's offset, 0 without) and z_i = s_i eta_i:
 *
 *   l_i(beta) = y_i log Phi(eta_i) + (1 - y_i) log Phi(-eta_i) = log Phi(z_i),
 *   g_i(beta) = s_i lambda(z_i) u_i,    lambda(z) = phi(z) / Phi(z),
 *   minus the Hessian: sum_i w_i u_i u_i',  w_i = lambda(z_i) (z_i + lambda(z_i)),
 *
 * lambda the inverse Mills ratio; 0 < w < 1 (the log-likelihood is concave).
 * (This is the observed information; the expected one, phi^2 / (Phi (1 -
 * Phi)), differs away from the mode.)  Phi and phi come from R's
 * pnorm5/dnorm4 on the log scale, lambda(z) = exp(log phi(z) - log Phi(z)),
 * so that the far tail (z -> -inf, where Phi underflows and lambda(z) ~ -z)
 * stays finite: log Phi(z) is finite down to z ~ -1e154; below z = -100
 * lambda comes from the asymptotic series of Mills' ratio (mills()).
 *
 * Control variates (score_change): r(eta) - r(eta_c), r(eta) = s lambda(s
 * eta); second order, plus w(eta_c)(eta - eta_c) (the offset cancels in the
 * difference).
 *
 * theta = beta (D = P; the intercept, if any, is a column of ones in xt).
 *
 * Prior weights w_i (lik->data->weights; 1 without) multiply row i's l_i, g_i and
 * curvature.  A proportion y_i in (0, 1) (a binomial response of w_i
 * trials, as glm()) has l_i = y_i log Phi(eta_i) + (1 - y_i) log Phi(-eta_i),
 * residual y_i lambda(eta_i) - (1 - y_i) lambda(-eta_i) and curvature
 * y_i v(eta_i) + (1 - y_i) v(-eta_i), v(z) = lambda(z) (z + lambda(z));
 * y_i in {0, 1} takes the one-term forms above.
 */
#include "sgfs.h"
#include <Rmath.h>

static int probit_n_par(int P, const double *mpar, int n_mpar)
{
    (void) mpar;
    (void) n_mpar;
    return P;
}

/* log Phi(z) */
static inline double log_cdf(double z)
{
    return pnorm(z, 0.0, 1.0, 1, 1);
}

/* lambda(z) = phi(z) / Phi(z); below z = -100, where the difference of
   the two logs (each about -z^2/2) loses digits, from the asymptotic
   series of Mills' ratio, Phi(z) / phi(z) = (1/x)(1 - 1/x^2 + 3/x^4 -
   15/x^6 + ...), x = -z (truncation error below 1e-14 there) */
static inline double mills(double z)
{
    if (z < -100.0) {
        const double i2 = 1.0 / (z * z);
        return -z / (1.0 - i2 * (1.0 - i2 * (3.0 - 15.0 * i2)));
    }
    return exp(dnorm(z, 0.0, 1.0, 1) - log_cdf(z));
}

/* a response strictly between 0 and 1 (a proportion) */
static inline int fractional(double y)
{
    return y != 0.0 && y != 1.0;
}

/* the residual dl/deta at eta for the response y */
static inline double residual(double y, double eta)
{
    if (fractional(y)) return y * mills(eta) - (1.0 - y) * mills(-eta);
    const double s = y > 0.5 ? 1.0 : -1.0;
    return s * mills(s * eta);
}

/* minus d2l/deta2 of log Phi(z): lambda(z) (z + lambda(z)); far in
   the lower tail z + lambda(z) cancels, and its asymptotic series -1/z +
   2/z^3 - 10/z^5 (from lambda(z) ~ -z - 1/z + 2/z^3 - 10/z^5) is used
   instead; clamped to [0, 1], the range of the exact value */
static inline double curvature(double z)
{
    const double m = mills(z);
    double d = z + m;
    if (z < -100.0) {
        const double iz = 1.0 / z, iz2 = iz * iz;
        d = -iz * (1.0 - 2.0 * iz2 + 10.0 * iz2 * iz2);
    }
    const double w = m * d;
    return w < 0.0 ? 0.0 : (w > 1.0 ? 1.0 : w);
}

/* minus d2l/deta2 at eta for the response y */
static inline double weight(double y, double eta)
{
    if (fractional(y)) return y * curvature(eta) + (1.0 - y) * curvature(-eta);
    return curvature((y > 0.5 ? 1.0 : -1.0) * eta);
}

/* l at eta for the response y */
static inline double row_loglik(double y, double eta)
{
    if (fractional(y)) return y * log_cdf(eta) + (1.0 - y) * log_cdf(-eta);
    return log_cdf((y > 0.5 ? 1.0 : -1.0) * eta);
}

/* the residuals of a one-pass score (sgfs_rows_score) */
static double probit_residual(int row, double eta, double unused, const void *ctx)
{
    (void) unused;
    const sgfs_data *d = (const sgfs_data *) ctx;
    const double r = residual(d->y[row], eta + sgfs_row_offset(d, row));
    return d->weights ? d->weights[row] * r : r;
}

typedef struct change_ctx {
    const sgfs_data *d;
    int order;
} change_ctx;

static double probit_residual_change(int row, double eta, double eta_c, const void *ctx)
{
    const change_ctx *c = (const change_ctx *) ctx;
    const double o = sgfs_row_offset(c->d, row), y = c->d->y[row];
    const double first = residual(y, eta + o) - residual(y, eta_c + o);
    const double r = c->order == 2 ? first + weight(y, eta_c + o) * (eta - eta_c) : first;
    return c->d->weights ? c->d->weights[row] * r : r;
}

static void probit_score(sgfs_lik *lik, const double *theta,
                         const int *idx, int n, double *sum, double *G,
                         double *loglik)
{
    const int P = lik->data->P, D = lik->D;
    if (G == NULL && loglik == NULL) {        /* one pass, no copy */
        sgfs_rows_score(lik, idx, n, theta, NULL, probit_residual, lik->data, sum);
        return;
    }
    double *r = lik->eta;                      /* eta, with offsets */
    const double *xb = sgfs_batch_columns(lik, theta, idx, n, r);
    double ll = 0.0;
    for (int i = 0; i < n; i++) {
        const double y = lik->data->y[idx[i]];
        if (fractional(y) || lik->data->weights) {
            const double w = sgfs_row_weight(lik->data, idx[i]);
            ll += w * row_loglik(y, r[i]);
            r[i] = w * residual(y, r[i]);
            continue;
        }
        const double z = (y > 0.5 ? 1.0 : -1.0) * r[i], lc = log_cdf(z);
        ll += lc;
        r[i] = (y > 0.5 ? 1.0 : -1.0) *
            (z < -100.0 ? mills(z) : exp(dnorm(z, 0.0, 1.0, 1) - lc));
    }
    if (loglik) *loglik = ll;
    sgfs_glm_scores(xb, P, n, r, sum, G, D);
}

static void probit_score_change(sgfs_lik *lik, const double *theta,
                                const double *centre, int second,
                                const int *idx, int n, double *sum)
{
    change_ctx c = { lik->data, second ? 2 : 1 };
    sgfs_rows_score(lik, idx, n, theta, centre, probit_residual_change, &c, sum);
}

static double probit_loglik(sgfs_lik *lik, const double *theta,
                            const int *idx, int n)
{
    double *eta = lik->eta, ll = 0.0;
    sgfs_batch_columns(lik, theta, idx, n, eta);
    for (int i = 0; i < n; i++)
        ll += sgfs_row_weight(lik->data, idx[i]) * row_loglik(lik->data->y[idx[i]], eta[i]);
    return ll;
}

static void probit_neg_hessian(sgfs_lik *lik, const double *theta,
                               const int *idx, int n, double *H)
{
    const int P = lik->data->P;
    double *eta = lik->eta;
    const double *xb = sgfs_batch_columns(lik, theta, idx, n, eta);
    for (int i = 0; i < n; i++) {
        const double w = sqrt(sgfs_row_weight(lik->data, idx[i]) * weight(lik->data->y[idx[i]], eta[i]));
        const double *restrict u = xb + (size_t) i * P;
        double *restrict a = lik->G + (size_t) i * P;
        for (int j = 0; j < P; j++) a[j] = w * u[j];
    }
    sgfs_crossprod_add(lik->G, P, n, H, P);
}

static int probit_n_pred(const double *mpar)
{
    (void) mpar;
    return 1;
}

/* keep = predictive(): Phi(u_i' beta) (no offsets: refused in R) */
static void probit_predict(sgfs_lik *lik, const double *theta,
                           const double *x, int m, double *out)
{
    sgfs_xt_beta(x, lik->data->P, m, theta, lik->eta);
    for (int i = 0; i < m; i++) out[i] += pnorm(lik->eta[i], 0.0, 1.0, 1, 0);
}

static double probit_row_residual(const sgfs_lik *lik, int row, double eta)
{
    return sgfs_row_weight(lik->data, row) * residual(lik->data->y[row], eta);
}

static double probit_row_loglik(const sgfs_lik *lik, const double *theta, int row,
                                double eta)
{
    (void) theta;
    const double y = lik->data->y[row];
    return sgfs_row_weight(lik->data, row) * (y * log_cdf(eta) + (1.0 - y) * log_cdf(-eta));
}

static void probit_row_derivs(const sgfs_lik *lik, const double *theta, int row,
                              double eta, double *d)
{
    (void) theta;
    d[0] = probit_row_residual(lik, row, eta);
    d[1] = sgfs_row_weight(lik->data, row) * weight(lik->data->y[row], eta);
    d[2] = d[3] = 0.0;
}

static double probit_draw_value(int what, double y, double z, double log_aux,
                                const double *mpar)
{
    (void) mpar;
    (void) log_aux;
    if (what == SGFS_DRAW_MEAN) return pnorm(z, 0.0, 1.0, 1, 0);
    return row_loglik(y, z);
}

const sgfs_model sgfs_model_probit = {
    .name = "probit", .weighted = 1,
    .n_par = probit_n_par, .score = probit_score,
    .loglik = probit_loglik, .neg_hessian = probit_neg_hessian,
    .n_pred = probit_n_pred, .predict = probit_predict,
    .score_change = probit_score_change, .row_loglik = probit_row_loglik,
    .row_residual = probit_row_residual, .row_derivs = probit_row_derivs,
    .n_out = sgfs_glm_n_out, .outputs = sgfs_glm_outputs,
    .draw_value = probit_draw_value
};
