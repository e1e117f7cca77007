/*
 * model_aux.c - the passes of a GLM of one linear predictor and one more
 * parameter a, sampled on the log scale as the last coordinate of theta
 * (negative binomial's log phi, model_negbin.c; Gamma's log shape,
 * model_gamma.c; Student t's log sigma, model_student.c), from the model's
 * two row functions (sgfs_aux_rows), given its settings mpar:
 *
 *   terms(y, eta, a) -> l, dl/deta, dl/da,
 *   curvature(y, eta, a; its terms) -> -d2l/deta2, -d2l/deta da, -d2l/da2
 *   (the observed information, or where that can be negative the
 *   expected one: h0 > 0),
 *
 * l_i the row's log-likelihood and eta_i = u_i' beta + o_i (offset included,
 * sgfs_batch_columns).  theta = (beta[P], a) when a is sampled (mpar[0] NA),
 * else beta alone with a = mpar[0].  Prior weights w_i multiply each row's
 * terms, as frequency weights.  Control variates (score_change): sum_i
 * g_i(theta) - g_i(centre) from one gather of the u_i, and with `second`
 * plus H_i(centre) (theta - centre): for beta [h0 d_eta + h1 d_a] u_i, for a
 * h1 d_eta + h2 d_a (d_eta = eta_i - its centre value, the offset
 * cancelling; d_a = 0 for a fixed a).  Minus the Hessian: sum_i w_i h0 u_i
 * u_i' (as sqrt(w_i h0) u_i through lik->G, h0 > 0) and for a sampled a its
 * cross column and diagonal.
 */
#include "sgfs.h"

int sgfs_aux_sampled(const double *mpar)
{
    return ISNAN(mpar[0]);
}

int sgfs_aux_n_par(int P, const double *mpar, int n_mpar)
{
    if (n_mpar < 1 || (!ISNAN(mpar[0]) && !R_FINITE(mpar[0]))) return -1;
    return P + sgfs_aux_sampled(mpar);
}

double sgfs_aux_value(const sgfs_lik *lik, const double *theta)
{
    return sgfs_aux_sampled(lik->mpar) ? theta[lik->data->P] : lik->mpar[0];
}

void sgfs_aux_score(const sgfs_aux_rows *rows, sgfs_lik *lik, const double *theta,
                    const int *idx, int n, double *sum, double *G, double *loglik)
{
    const int P = lik->data->P, D = lik->D, sampled = sgfs_aux_sampled(lik->mpar);
    const double a = sgfs_aux_value(lik, theta);
    double *r = lik->eta, ll = 0.0, score_a = 0.0, d[3];
    const double *xb = sgfs_batch_columns(lik, theta, idx, n, r);
    for (int i = 0; i < n; i++) {
        const double w = sgfs_row_weight(lik->data, idx[i]);
        rows->terms(lik->data->y[idx[i]], r[i], a, lik->mpar, d);
        ll += w * d[0];
        score_a += w * d[2];
        if (G && sampled) G[P + (size_t) i * D] = w * d[2];
        r[i] = w * d[1];
    }
    sgfs_glm_scores(xb, P, n, r, sum, G, D);
    if (sampled) sum[P] = score_a;
    if (loglik) *loglik = ll;
}

void sgfs_aux_score_change(const sgfs_aux_rows *rows, sgfs_lik *lik, const double *theta,
                           const double *centre, int second, const int *idx, int n,
                           double *sum)
{
    const int P = lik->data->P, sampled = sgfs_aux_sampled(lik->mpar);
    const double a = sgfs_aux_value(lik, theta), a_c = sgfs_aux_value(lik, centre),
        d_a = a - a_c;
    double *r = lik->eta, *rc = lik->eta_centre, score_a = 0.0, t[3], tc[3], h[3];
    const double *xb = sgfs_batch_columns(lik, theta, idx, n, r);
    sgfs_xt_beta(xb, P, n, centre, rc);
    sgfs_add_offset(lik->data, idx, n, rc);
    for (int i = 0; i < n; i++) {
        const double y = lik->data->y[idx[i]], w = sgfs_row_weight(lik->data, idx[i]);
        rows->terms(y, r[i], a, lik->mpar, t);
        rows->terms(y, rc[i], a_c, lik->mpar, tc);
        double beta_part = t[1] - tc[1], a_part = t[2] - tc[2];
        if (second) {
            const double d_eta = r[i] - rc[i];
            rows->curvature(y, rc[i], a_c, lik->mpar, tc, h);
            beta_part += h[0] * d_eta + h[1] * d_a;
            a_part += h[1] * d_eta + h[2] * d_a;
        }
        r[i] = w * beta_part;
        score_a += w * a_part;
    }
    sgfs_x_r(xb, P, n, r, sum);
    if (sampled) sum[P] = score_a;
}

double sgfs_aux_loglik(const sgfs_aux_rows *rows, sgfs_lik *lik, const double *theta,
                       const int *idx, int n)
{
    const double a = sgfs_aux_value(lik, theta);
    double *eta = lik->eta, ll = 0.0, d[3];
    sgfs_batch_columns(lik, theta, idx, n, eta);
    for (int i = 0; i < n; i++) {
        rows->terms(lik->data->y[idx[i]], eta[i], a, lik->mpar, d);
        ll += sgfs_row_weight(lik->data, idx[i]) * d[0];
    }
    return ll;
}

void sgfs_aux_neg_hessian(const sgfs_aux_rows *rows, sgfs_lik *lik, const double *theta,
                          const int *idx, int n, double *H)
{
    const int P = lik->data->P, D = lik->D, sampled = sgfs_aux_sampled(lik->mpar);
    const double a = sgfs_aux_value(lik, theta);
    double *eta = lik->eta, t[3], h[3], haa = 0.0;
    const double *xb = sgfs_batch_columns(lik, theta, idx, n, eta);
    double *cross = sampled ? H + (size_t) P * D : NULL;
    for (int i = 0; i < n; i++) {
        const double w = sgfs_row_weight(lik->data, idx[i]), y = lik->data->y[idx[i]];
        rows->terms(y, eta[i], a, lik->mpar, t);
        rows->curvature(y, eta[i], a, lik->mpar, t, h);
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

void sgfs_aux_row_derivs(const sgfs_aux_rows *rows, const sgfs_lik *lik, const double *theta,
                         int row, double eta, double *d)
{
    const double w = sgfs_row_weight(lik->data, row), y = lik->data->y[row],
        a = sgfs_aux_value(lik, theta);
    const int sampled = sgfs_aux_sampled(lik->mpar);
    double t[3], h[3];
    rows->terms(y, eta, a, lik->mpar, t);
    rows->curvature(y, eta, a, lik->mpar, t, h);
    d[0] = w * t[1];
    d[1] = w * h[0];
    d[2] = sampled ? w * h[1] : 0.0;
    d[3] = sampled ? w * h[2] : 0.0;
}

/* keep = predictive(): the means exp(u_i' beta) of a log link (no offsets:
   refused in R) */
int sgfs_aux_n_pred(const double *mpar)
{
    (void) mpar;
    return 1;
}

void sgfs_aux_predict_exp(sgfs_lik *lik, const double *theta, const double *x, int m,
                          double *out)
{
    sgfs_xt_beta(x, lik->data->P, m, theta, lik->eta);
    for (int i = 0; i < m; i++) out[i] += exp(lik->eta[i]);
}
