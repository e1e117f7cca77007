/*
 * model_logistic.c - Bayesian logistic regression (algorithms vignette 3.1).
 *
 *   l_i(beta) = y_i eta_i - log(1 + exp(eta_i)),  eta_i = u_i' beta + o_i,
 *   g_i(beta) = (y_i - sgfs_sigmoid(eta_i)) u_i,       y_i in {0, 1}.
 *
 * theta = beta (D = P; the intercept, if any, is a column of ones in xt);
 * o_i the row's offset (lik->data->offset; 0 without), added to the gathered
 * batch's eta by sgfs_batch_columns and by the one-pass residuals.
 * With prior weights w_i (lik->data->weights; 1 without) row i contributes
 * w_i l_i, w_i g_i and w_i times its curvature; y_i may then be a
 * proportion in [0, 1] (a binomial response of w_i trials, as glm()).
 * Without offsets and weights the one-pass score uses a residual function
 * that reads neither (the common case pays no test).
 * The minibatch's columns xb (P x n; gathered, or read in place for the
 * contiguous chunks of a full-data pass) give eta = xb' beta and the score
 * sum xb r; the per-example score of example i is r_i times its column, so
 * G costs one pass over xb.
 * Minus the Hessian: sum_i w_i v_i u_i u_i',  v_i = sgfs_sigmoid(eta_i)(1 - sgfs_sigmoid(eta_i)).
 */
#include "sgfs.h"

static int logistic_n_par(int P, const double *mpar, int n_mpar)
{
    (void) mpar;
    (void) n_mpar;
    return P;
}

/* the residuals of a one-pass score (sgfs_rows_score), without and with
   offsets or weights (two functions: the common case pays no test) */
static double logistic_residual(int row, double eta, double unused, const void *ctx)
{
    (void) unused;
    return ((const sgfs_data *) ctx)->y[row] - sgfs_sigmoid(eta);
}

static double logistic_residual_general(int row, double eta, double unused, const void *ctx)
{
    (void) unused;
    const sgfs_data *d = (const sgfs_data *) ctx;
    const double r = d->y[row] - sgfs_sigmoid(eta + sgfs_row_offset(d, row));
    return d->weights ? d->weights[row] * r : r;
}

/* control variates: the rows' data and the order (1 or 2) */
typedef struct change_ctx {
    const sgfs_data *d;
    int order;
} change_ctx;

static double logistic_residual_change(int row, double eta, double eta_c, const void *ctx)
{
    const change_ctx *c = (const change_ctx *) ctx;
    if (c->d->offset) {
        eta += c->d->offset[row];
        eta_c += c->d->offset[row];
    }
    const double pc = sgfs_sigmoid(eta_c), first = pc - sgfs_sigmoid(eta);
    const double r = c->order == 2 ? first + pc * (1.0 - pc) * (eta - eta_c) : first;
    return c->d->weights ? c->d->weights[row] * r : r;
}

static void logistic_score(sgfs_lik *lik, const double *theta,
                           const int *idx, int n, double *sum, double *G,
                           double *loglik)
{
    const int P = lik->data->P, D = lik->D;
    if (G == NULL && loglik == NULL) {        /* one pass, no copy */
        const sgfs_data *d = lik->data;
        sgfs_rows_score(lik, idx, n, theta, NULL,
                        d->offset || d->weights ? logistic_residual_general : logistic_residual,
                        d, sum);
        return;
    }
    double *r = lik->eta;
    const double *xb = sgfs_batch_columns(lik, theta, idx, n, r);
    if (lik->data->weights) {
        double ll = 0.0;
        for (int i = 0; i < n; i++) {
            const double w = lik->data->weights[idx[i]];
            double li = 0.0;
            r[i] = w * sgfs_binomial_residual(lik->data->y[idx[i]], r[i], &li);
            ll += w * li;
        }
        if (loglik) *loglik = ll;
    } else if (loglik) {
        double ll = 0.0;
        for (int i = 0; i < n; i++) r[i] = sgfs_binomial_residual(lik->data->y[idx[i]], r[i], &ll);
        *loglik = ll;
    } else {
        for (int i = 0; i < n; i++) r[i] = lik->data->y[idx[i]] - sgfs_sigmoid(r[i]);
    }
    sgfs_glm_scores(xb, P, n, r, sum, G, D);
}

/* sum_i [g_i(theta) - g_i(centre)] = sum_i [s(c_i) - s(eta_i)] u_i (s the
   sigmoid, c_i = u_i' centre), from one gather of the u_i; second order:
   plus w_i (eta_i - c_i) u_i, w_i = s(c_i)(1 - s(c_i)) */
static void logistic_score_change(sgfs_lik *lik, const double *theta,
                                  const double *centre, int second,
                                  const int *idx, int n, double *sum)
{
    change_ctx c = { lik->data, second ? 2 : 1 };
    sgfs_rows_score(lik, idx, n, theta, centre, logistic_residual_change, &c, sum);
}

static double logistic_loglik(sgfs_lik *lik, const double *theta,
                              const int *idx, int n)
{
    double *eta = lik->eta, ll = 0.0;
    sgfs_batch_columns(lik, theta, idx, n, eta);
    if (lik->data->weights)
        for (int i = 0; i < n; i++)
            ll += lik->data->weights[idx[i]] * (lik->data->y[idx[i]] * eta[i] - sgfs_softplus(eta[i]));
    else
        for (int i = 0; i < n; i++)
            ll += lik->data->y[idx[i]] * eta[i] - sgfs_softplus(eta[i]);
    return ll;
}

static void logistic_neg_hessian(sgfs_lik *lik, const double *theta,
                                 const int *idx, int n, double *H)
{
    const int P = lik->data->P;
    double *eta = lik->eta;
    const double *xb = sgfs_batch_columns(lik, theta, idx, n, eta);
    for (int i = 0; i < n; i++) {
        const double p = sgfs_sigmoid(eta[i]);
        const double w = sqrt(sgfs_row_weight(lik->data, idx[i]) * p * (1.0 - p));
        const double *restrict u = xb + (size_t) i * P;
        double *restrict a = lik->G + (size_t) i * P;
        for (int j = 0; j < P; j++) a[j] = w * u[j];
    }
    sgfs_crossprod_add(lik->G, P, n, H, P);
}

static int logistic_n_pred(const double *mpar)
{
    (void) mpar;
    return 1;
}

static void logistic_predict(sgfs_lik *lik, const double *theta,
                             const double *x, int m, double *out)
{
    sgfs_xt_beta(x, lik->data->P, m, theta, lik->eta);
    sgfs_add_binomial_pred(lik->eta, 1, m, out);
}

static double logistic_row_loglik(const sgfs_lik *lik, const double *theta, int row,
                                  double eta)
{
    (void) theta;
    return sgfs_row_weight(lik->data, row) * (lik->data->y[row] * eta - sgfs_softplus(eta));
}

static double logistic_row_residual(const sgfs_lik *lik, int row, double eta)
{
    return sgfs_row_weight(lik->data, row) * (lik->data->y[row] - sgfs_sigmoid(eta));
}

static void logistic_row_derivs(const sgfs_lik *lik, const double *theta, int row,
                                double eta, double *d)
{
    (void) theta;
    const double p = sgfs_sigmoid(eta);
    d[0] = logistic_row_residual(lik, row, eta);
    d[1] = sgfs_row_weight(lik->data, row) * p * (1.0 - p);
    d[2] = d[3] = 0.0;
}

static double logistic_draw_value(int what, double y, double z, double log_aux,
                                  const double *mpar)
{
    (void) mpar;
    (void) log_aux;
    if (what == SGFS_DRAW_MEAN) return sgfs_sigmoid(z);
    double ll = 0.0;
    sgfs_binomial_residual(y, z, &ll);
    return ll;
}

const sgfs_model sgfs_model_logistic = {
    .name = "logistic", .weighted = 1,
    .n_par = logistic_n_par, .score = logistic_score,
    .loglik = logistic_loglik, .neg_hessian = logistic_neg_hessian,
    .n_pred = logistic_n_pred, .predict = logistic_predict,
    .score_change = logistic_score_change, .row_loglik = logistic_row_loglik,
    .row_residual = logistic_row_residual, .row_derivs = logistic_row_derivs,
    .n_out = sgfs_glm_n_out, .outputs = sgfs_glm_outputs,
    .draw_value = logistic_draw_value
};
