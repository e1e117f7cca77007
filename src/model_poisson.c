/*
 * model_poisson.c - Poisson regression with the log link (the canonical
 * link; McCullagh and Nelder 1989, sec. 6.2), the GLM of counts.
 *
 *   l_i(beta) = y_i eta_i - exp(eta_i) - lgamma(y_i + 1),
 *   eta_i = u_i' beta + o_i,    o_i the row's offset (lik->data->offset, or 0),
 *   g_i(beta) = (y_i - mu_i) u_i,            mu_i = exp(eta_i),
 *   minus the Hessian: sum_i mu_i u_i u_i'   (the Fisher information: for
 *   the canonical link the observed and expected information agree).
 *
 * theta = beta (D = P; the intercept, if any, is a column of ones in xt).
 * The gathered batch's eta includes the offsets (sgfs_batch_columns); the
 * one-pass residuals add them themselves.
 * y_i are non-negative whole numbers (checked in R, code_response()).
 * Prior weights w_i (lik->data->weights; 1 without) multiply row i's l_i, g_i and
 * curvature (the residuals below are then w_i (y_i - mu_i)).
 *
 * Control variates (score_change): g_i(theta) - g_i(centre) =
 * (mu_c,i - mu_i) u_i; the second-order remainder adds H_i(centre)(theta -
 * centre) = mu_c,i (eta_i - eta_c,i) u_i (the offset cancels in the
 * difference).
 *
 * Overflow: eta is not clipped.  A chain that moves far enough for
 * exp(eta_i) to overflow (eta_i > 709) gets an infinite or NaN gradient,
 * hence a non-finite state, and the driver stops it as diverged with its
 * usual message (driver.c); the log-likelihood is then -Inf, which the
 * mode finder's step halving (R/mode.R) rejects.  Clipping eta would bend
 * the likelihood silently, which the divergence record would then hide.
 */
#include "sgfs.h"

static int poisson_n_par(int P, const double *mpar, int n_mpar)
{
    (void) mpar;
    (void) n_mpar;
    return P;
}

/* the residuals of a one-pass score (sgfs_rows_score): y - exp(eta + o) */
static double poisson_residual(int row, double eta, double unused, const void *ctx)
{
    (void) unused;
    const sgfs_data *d = (const sgfs_data *) ctx;
    const double r = d->y[row] - exp(eta + sgfs_row_offset(d, row));
    return d->weights ? d->weights[row] * r : r;
}

/* control variates: ctx the rows' data and the order */
typedef struct change_ctx {
    const sgfs_data *d;
    int order;
} change_ctx;

static double poisson_residual_change(int row, double eta, double eta_c, const void *ctx)
{
    const change_ctx *c = (const change_ctx *) ctx;
    const double o = sgfs_row_offset(c->d, row), mc = exp(eta_c + o), first = mc - exp(eta + o);
    const double r = c->order == 2 ? first + mc * (eta - eta_c) : first;
    return c->d->weights ? c->d->weights[row] * r : r;
}

static void poisson_score(sgfs_lik *lik, const double *theta,
                          const int *idx, int n, double *sum, double *G,
                          double *loglik)
{
    const int P = lik->data->P, D = lik->D;
    if (G == NULL && loglik == NULL) {        /* one pass, no copy */
        sgfs_rows_score(lik, idx, n, theta, NULL, poisson_residual, lik->data, sum);
        return;
    }
    double *r = lik->eta;
    const double *xb = sgfs_batch_columns(lik, theta, idx, n, r);
    if (lik->data->weights) {
        double ll = 0.0;
        for (int i = 0; i < n; i++) {
            const double y = lik->data->y[idx[i]], mu = exp(r[i]), w = lik->data->weights[idx[i]];
            if (loglik) ll += w * (y * r[i] - mu - lgamma(y + 1.0));
            r[i] = w * (y - mu);
        }
        if (loglik) *loglik = ll;
    } else if (loglik) {
        double ll = 0.0;
        for (int i = 0; i < n; i++) {
            const double y = lik->data->y[idx[i]], mu = exp(r[i]);
            ll += y * r[i] - mu - lgamma(y + 1.0);
            r[i] = y - mu;
        }
        *loglik = ll;
    } else {
        for (int i = 0; i < n; i++) r[i] = lik->data->y[idx[i]] - exp(r[i]);
    }
    sgfs_glm_scores(xb, P, n, r, sum, G, D);
}

static void poisson_score_change(sgfs_lik *lik, const double *theta,
                                 const double *centre, int second,
                                 const int *idx, int n, double *sum)
{
    change_ctx c = { lik->data, second ? 2 : 1 };
    sgfs_rows_score(lik, idx, n, theta, centre, poisson_residual_change, &c, sum);
}

static double poisson_loglik(sgfs_lik *lik, const double *theta,
                             const int *idx, int n)
{
    double *eta = lik->eta, ll = 0.0;
    sgfs_batch_columns(lik, theta, idx, n, eta);
    for (int i = 0; i < n; i++) {
        const double y = lik->data->y[idx[i]];
        ll += sgfs_row_weight(lik->data, idx[i]) * (y * eta[i] - exp(eta[i]) - lgamma(y + 1.0));
    }
    return ll;
}

static void poisson_neg_hessian(sgfs_lik *lik, const double *theta,
                                const int *idx, int n, double *H)
{
    const int P = lik->data->P;
    double *eta = lik->eta;
    const double *xb = sgfs_batch_columns(lik, theta, idx, n, eta);
    for (int i = 0; i < n; i++) {
        double w = exp(0.5 * eta[i]);                  /* sqrt(w_i mu_i) */
        if (lik->data->weights) w *= sqrt(lik->data->weights[idx[i]]);
        const double *restrict u = xb + (size_t) i * P;
        double *restrict a = lik->G + (size_t) i * P;
        for (int j = 0; j < P; j++) a[j] = w * u[j];
    }
    sgfs_crossprod_add(lik->G, P, n, H, P);
}

static int poisson_n_pred(const double *mpar)
{
    (void) mpar;
    return 1;
}

/* keep = predictive(): the means exp(u_i' beta) (the R front end refuses
   an offset with keep = predictive()) */
static void poisson_predict(sgfs_lik *lik, const double *theta,
                            const double *x, int m, double *out)
{
    sgfs_xt_beta(x, lik->data->P, m, theta, lik->eta);
    for (int i = 0; i < m; i++) out[i] += exp(lik->eta[i]);
}

static double poisson_row_residual(const sgfs_lik *lik, int row, double eta)
{
    return sgfs_row_weight(lik->data, row) * (lik->data->y[row] - exp(eta));
}

static double poisson_row_loglik(const sgfs_lik *lik, const double *theta, int row,
                                 double eta)
{
    (void) theta;
    return sgfs_row_weight(lik->data, row) * (lik->data->y[row] * eta - exp(eta));
}

static void poisson_row_derivs(const sgfs_lik *lik, const double *theta, int row,
                               double eta, double *d)
{
    (void) theta;
    d[0] = poisson_row_residual(lik, row, eta);
    d[1] = sgfs_row_weight(lik->data, row) * exp(eta);
    d[2] = d[3] = 0.0;
}

static double poisson_draw_value(int what, double y, double z, double log_aux,
                                 const double *mpar)
{
    (void) mpar;
    (void) log_aux;
    if (what == SGFS_DRAW_MEAN) return exp(z);
    return y * z - exp(z) - lgamma(y + 1.0);
}

const sgfs_model sgfs_model_poisson = {
    .name = "poisson", .weighted = 1,
    .n_par = poisson_n_par, .score = poisson_score,
    .loglik = poisson_loglik, .neg_hessian = poisson_neg_hessian,
    .n_pred = poisson_n_pred, .predict = poisson_predict,
    .score_change = poisson_score_change, .row_loglik = poisson_row_loglik,
    .row_residual = poisson_row_residual, .row_derivs = poisson_row_derivs,
    .n_out = sgfs_glm_n_out, .outputs = sgfs_glm_outputs,
    .draw_value = poisson_draw_value
};
