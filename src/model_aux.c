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
 * terms, as frequency weights.  The score and the control variates read
 * the rows in one pass (sgfs_rows_score, sparse rows by their entries).
 * Control variates (score_change): sum_i g_i(theta) - g_i(centre), and with
 * `second`
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

/* what the rows' one-pass residuals (sgfs_rows_score) read and add to:
   the row functions, a at theta and at the centre (and their difference),
   the order of the control variates, the sums of dl/da and l, and the
   last row's w dl/da */
typedef struct aux_ctx {
    const sgfs_aux_rows *rows;
    const sgfs_lik *lik;
    double a, a_c, d_a;
    int second;
    double score_a, ll, last_a;
} aux_ctx;

/* a row's w dl/deta at eta (offset not included), w dl/da and w l summed */
static double score_residual(int row, double eta, double unused, const void *ctx)
{
    (void) unused;
    aux_ctx *x = (aux_ctx *) ctx;                   /* (the caller's, writable) */
    const sgfs_data *d = x->lik->data;
    const double w = sgfs_row_weight(d, row);
    double t[3];
    x->rows->terms(d->y[row], eta + sgfs_row_offset(d, row), x->a, x->lik->mpar, t);
    x->ll += w * t[0];
    x->last_a = w * t[2];
    x->score_a += x->last_a;
    return w * t[1];
}

/* a row's change of w dl/deta from the centre (with `second` plus its
   curvature at the centre times the move), the change of w dl/da summed */
static double change_residual(int row, double eta, double eta_c, const void *ctx)
{
    aux_ctx *x = (aux_ctx *) ctx;
    const sgfs_data *d = x->lik->data;
    const double y = d->y[row], w = sgfs_row_weight(d, row), o = sgfs_row_offset(d, row);
    double t[3], tc[3], h[3];
    x->rows->terms(y, eta + o, x->a, x->lik->mpar, t);
    x->rows->terms(y, eta_c + o, x->a_c, x->lik->mpar, tc);
    double beta_part = t[1] - tc[1], a_part = t[2] - tc[2];
    if (x->second) {
        const double d_eta = eta - eta_c;
        x->rows->curvature(y, eta_c + o, x->a_c, x->lik->mpar, tc, h);
        beta_part += h[0] * d_eta + h[1] * x->d_a;
        a_part += h[1] * d_eta + h[2] * x->d_a;
    }
    x->score_a += w * a_part;
    return w * beta_part;
}

/* the score: beta's part in one pass over the rows (each read once, sparse
   rows by their entries); with per-example scores G, from one gather */
void sgfs_aux_score(const sgfs_aux_rows *rows, sgfs_lik *lik, const double *theta,
                    const int *idx, int n, double *sum, double *G, double *loglik)
{
    const int P = lik->data->P, D = lik->D, sampled = sgfs_aux_sampled(lik->mpar);
    aux_ctx x = {.rows = rows, .lik = lik, .a = sgfs_aux_value(lik, theta)};
    if (G == NULL) sgfs_rows_score(lik, idx, n, theta, NULL, score_residual, &x, sum);
    else {
        double *r = lik->eta;
        const double *xb = sgfs_batch_columns(lik, theta, idx, n, r);
        for (int i = 0; i < n; i++) {
            r[i] = score_residual(idx[i], r[i] - sgfs_row_offset(lik->data, idx[i]), 0.0, &x);
            if (sampled) G[P + (size_t) i * D] = x.last_a;
        }
        sgfs_glm_scores(xb, P, n, r, sum, G, D);
    }
    if (sampled) sum[P] = x.score_a;
    if (loglik) *loglik = x.ll;
}

void sgfs_aux_score_change(const sgfs_aux_rows *rows, sgfs_lik *lik, const double *theta,
                           const double *centre, int second, const int *idx, int n,
                           double *sum)
{
    const double a = sgfs_aux_value(lik, theta), a_c = sgfs_aux_value(lik, centre);
    aux_ctx x = {.rows = rows, .lik = lik, .a = a, .a_c = a_c, .d_a = a - a_c,
                 .second = second};
    sgfs_rows_score(lik, idx, n, theta, centre, change_residual, &x, sum);
    if (sgfs_aux_sampled(lik->mpar)) sum[lik->data->P] = x.score_a;
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
