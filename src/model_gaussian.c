/*
 * model_gaussian.c - Gaussian linear regression (algorithms vignette 3.3).
 *
 *   l_i = -log sigma - log(2 pi)/2 - r_i^2 / (2 sigma^2),  r_i = y_i - u_i' beta - o_i,
 *   dl_i/dbeta      = r_i u_i / sigma^2,
 *   dl_i/dlog sigma = r_i^2 / sigma^2 - 1.
 *
 * Minus the Hessian (s = sigma^-2):
 *   beta, beta: s u_i u_i';  beta, log sigma: 2 s r_i u_i;  log sigma: 2 s r_i^2.
 *
 * theta = (beta[P], log_sigma) when sigma is sampled (D = P + 1), or beta
 * alone when the user fixed sigma (D = P).  mpar[0] is the fixed log sigma,
 * or NA when log sigma is a parameter.  o_i is the row's offset (lik->data->offset,
 * on the internal scale of y; 0 without), added to eta by
 * sgfs_batch_columns.
 *
 * Prior weights w_i (lik->data->weights; 1 without) are precisions, as in glm():
 * y_i ~ N(eta_i, sigma^2 / w_i), so that
 *   l_i = -log sigma + log(w_i)/2 - log(2 pi)/2 - w_i r_i^2 / (2 sigma^2),
 *   dl_i/dbeta = w_i r_i u_i / sigma^2,  dl_i/dlog sigma = w_i r_i^2 / sigma^2 - 1,
 * and minus the Hessian has w_i r_i, w_i r_i^2 and w_i u_i u_i' in place of
 * r_i, r_i^2 and u_i u_i'.  A row of weight 0 contributes nothing (not its
 * -log sigma, nor its 1 to the log sigma score).
 */
#include "sgfs.h"

#define HALF_LOG_2PI 0.918938533204672741780329736406

static int sigma_sampled(const double *mpar)
{
    return ISNAN(mpar[0]);
}

static int gaussian_n_par(int P, const double *mpar, int n_mpar)
{
    if (n_mpar < 1 || (!ISNAN(mpar[0]) && !R_FINITE(mpar[0]))) return -1;
    return P + sigma_sampled(mpar);
}

/* residuals r = y - xb' beta into lik->eta, and the columns xb; returns
   log sigma */
static double residuals(sgfs_lik *lik, const double *theta, const int *idx,
                        int n, const double **xb)
{
    double *r = lik->eta;
    *xb = sgfs_batch_columns(lik, theta, idx, n, r);
    for (int i = 0; i < n; i++) r[i] = lik->data->y[idx[i]] - r[i];
    return sigma_sampled(lik->mpar) ? theta[lik->data->P] : lik->mpar[0];
}

/* with weights: the batch's sum of w_i r_i^2 (r in lik->eta), its rows of
   positive weight (into *count) and their sum of log(w_i)/2 (into *logw) */
static double weighted_rss(const sgfs_lik *lik, const int *idx, int n,
                           double *count, double *logw)
{
    const double *r = lik->eta;
    double rss = 0.0, k = 0.0, lw = 0.0;
    for (int i = 0; i < n; i++) {
        const double w = lik->data->weights[idx[i]];
        if (w > 0.0) {
            rss += w * r[i] * r[i];
            k += 1.0;
            lw += 0.5 * log(w);
        }
    }
    *count = k;
    *logw = lw;
    return rss;
}

static void gaussian_score_weighted(sgfs_lik *lik, const double *theta,
                                    const int *idx, int n, double *sum, double *G,
                                    double *loglik)
{
    const int P = lik->data->P, D = lik->D, has_sigma = sigma_sampled(lik->mpar);
    double *r = lik->eta, count, logw;
    const double *xb;
    const double log_sigma = residuals(lik, theta, idx, n, &xb);
    const double prec = exp(-2.0 * log_sigma);
    const double rss = weighted_rss(lik, idx, n, &count, &logw);
    if (G)
        for (int i = 0; i < n; i++) {
            const double *restrict u = xb + (size_t) i * P;
            double *restrict g = G + (size_t) i * D;
            const double w = lik->data->weights[idx[i]], ri = w * r[i] * prec;
            for (int j = 0; j < P; j++) g[j] = ri * u[j];
            if (has_sigma) g[P] = w > 0.0 ? w * r[i] * r[i] * prec - 1.0 : 0.0;
        }
    for (int i = 0; i < n; i++) r[i] *= prec * lik->data->weights[idx[i]];
    sgfs_x_r(xb, P, n, r, sum);
    if (has_sigma) sum[P] = rss * prec - count;
    if (loglik) *loglik = -count * (log_sigma + HALF_LOG_2PI) + logw - 0.5 * rss * prec;
}

static void gaussian_score(sgfs_lik *lik, const double *theta,
                           const int *idx, int n, double *sum, double *G,
                           double *loglik)
{
    if (lik->data->weights) {
        gaussian_score_weighted(lik, theta, idx, n, sum, G, loglik);
        return;
    }
    const int P = lik->data->P, D = lik->D, has_sigma = sigma_sampled(lik->mpar);
    double *r = lik->eta, rss = 0.0;
    const double *xb;
    double log_sigma = residuals(lik, theta, idx, n, &xb);
    double prec = exp(-2.0 * log_sigma);
    for (int i = 0; i < n; i++) rss += r[i] * r[i];
    if (G && has_sigma)
        for (int i = 0; i < n; i++) G[P + (size_t) i * D] = r[i] * r[i] * prec - 1.0;
    for (int i = 0; i < n; i++) r[i] *= prec;
    sgfs_glm_scores(xb, P, n, r, sum, G, D);
    if (has_sigma) sum[P] = rss * prec - n;
    if (loglik) *loglik = -n * (log_sigma + HALF_LOG_2PI) - 0.5 * rss * prec;
}

/* sum_i [g_i(theta) - g_i(centre)] from one gather of the u_i: for beta
   sum_i (r_i s - rc_i sc) u_i, for log sigma sum_i (r_i^2 s - rc_i^2 sc),
   r, s and rc, sc the residuals and sigma^-2 at theta and at the centre.
   Second order, plus H_i (theta - centre) with H_i from the header at the
   centre (d = log sigma - its centre value, 0 for a fixed sigma): for beta
   sc [(rc_i - r_i) + 2 rc_i d] u_i, for log sigma 2 sc rc_i [(rc_i - r_i) +
   rc_i d].  With a fixed sigma the likelihood is quadratic in beta and the
   change is 0.  With weights every row's terms are multiplied by w_i (the
   -1 of the log sigma score cancels in the difference). */
static void gaussian_score_change(sgfs_lik *lik, const double *theta,
                                  const double *centre, int second,
                                  const int *idx, int n, double *sum)
{
    const int P = lik->data->P, has_sigma = sigma_sampled(lik->mpar);
    double *r = lik->eta, *rc = lik->eta_centre, rss = 0.0, rss_c = 0.0, cross = 0.0;
    const double *xb;
    const double log_sigma = residuals(lik, theta, idx, n, &xb);
    const double log_sigma_c = has_sigma ? centre[P] : lik->mpar[0];
    const double prec = exp(-2.0 * log_sigma), prec_c = exp(-2.0 * log_sigma_c);
    const double d = log_sigma - log_sigma_c;
    sgfs_xt_beta(xb, P, n, centre, rc);
    sgfs_add_offset(lik->data, idx, n, rc);
    const double *w = lik->data->weights;
    for (int i = 0; i < n; i++) {
        const double c = lik->data->y[idx[i]] - rc[i], wi = w ? w[idx[i]] : 1.0;
        rss += wi * r[i] * r[i];
        rss_c += wi * c * c;
        const double first = r[i] * prec - c * prec_c;
        if (second) {
            const double move = c - r[i];           /* eta_i - its centre value */
            cross += wi * c * (move + c * d);
            r[i] = first + prec_c * (move + 2.0 * c * d);
        } else {
            r[i] = first;
        }
        if (w) r[i] *= wi;
    }
    sgfs_x_r(xb, P, n, r, sum);
    if (has_sigma) sum[P] = rss * prec - rss_c * prec_c + (second ? 2.0 * prec_c * cross : 0.0);
}

static double gaussian_loglik(sgfs_lik *lik, const double *theta,
                              const int *idx, int n)
{
    double *r = lik->eta, rss = 0.0;
    const double *xb;
    double log_sigma = residuals(lik, theta, idx, n, &xb);
    if (lik->data->weights) {
        double count, logw;
        rss = weighted_rss(lik, idx, n, &count, &logw);
        return -count * (log_sigma + HALF_LOG_2PI) + logw - 0.5 * rss * exp(-2.0 * log_sigma);
    }
    for (int i = 0; i < n; i++) rss += r[i] * r[i];
    return -n * (log_sigma + HALF_LOG_2PI) - 0.5 * rss * exp(-2.0 * log_sigma);
}

static void gaussian_neg_hessian(sgfs_lik *lik, const double *theta,
                                 const int *idx, int n, double *H)
{
    const int P = lik->data->P, D = lik->D;
    double *r = lik->eta;
    const double *xb;
    const double prec = exp(-2.0 * residuals(lik, theta, idx, n, &xb)), root = sqrt(prec);
    const double *wt = lik->data->weights;
    for (int i = 0; i < n; i++) {
        const double *restrict u = xb + (size_t) i * P;
        double *restrict a = lik->G + (size_t) i * P;
        const double ri = wt ? root * sqrt(wt[idx[i]]) : root;
        for (int j = 0; j < P; j++) a[j] = ri * u[j];
    }
    sgfs_crossprod_add(lik->G, P, n, H, D);     /* the leading beta block */
    if (!sigma_sampled(lik->mpar)) return;
    double rss = 0.0, *cross = H + (size_t) P * D;
    for (int i = 0; i < n; i++) {
        const double *restrict u = xb + (size_t) i * P;
        const double wi = wt ? wt[idx[i]] : 1.0, w = 2.0 * prec * wi * r[i];
        for (int j = 0; j < P; j++) cross[j] += w * u[j];
        rss += wi * r[i] * r[i];
    }
    cross[P] += 2.0 * prec * rss;
}

static int gaussian_n_pred(const double *mpar)
{
    (void) mpar;
    return 2;
}

static void gaussian_predict(sgfs_lik *lik, const double *theta,
                             const double *x, int m, double *out)
{
    sgfs_xt_beta(x, lik->data->P, m, theta, lik->eta);
    sgfs_add_gaussian_pred(lik->eta, 1, m,
                           sigma_sampled(lik->mpar) ? theta[lik->data->P] : lik->mpar[0], out);
}

/* a row's derivatives at eta (offset included): w r / sigma^2, w / sigma^2
   and, with log sigma sampled, 2 w r / sigma^2 and 2 w r^2 / sigma^2
   (r = y - eta) */
static void gaussian_row_derivs(const sgfs_lik *lik, const double *theta, int row,
                                double eta, double *d)
{
    const int sampled = sigma_sampled(lik->mpar);
    const double prec = exp(-2.0 * (sampled ? theta[lik->data->P] : lik->mpar[0]));
    const double w = sgfs_row_weight(lik->data, row), r = lik->data->y[row] - eta;
    d[0] = w * r * prec;
    d[1] = w * prec;
    d[2] = sampled ? 2.0 * w * r * prec : 0.0;
    d[3] = sampled ? 2.0 * w * r * r * prec : 0.0;
}

/* w_i l_i = the log density of y_i ~ N(eta, sigma^2 / w_i) (0 at w_i = 0) */
static double gaussian_row_loglik(const sgfs_lik *lik, const double *theta, int row,
                                  double eta)
{
    const double log_sigma = sigma_sampled(lik->mpar) ? theta[lik->data->P] : lik->mpar[0];
    const double w = sgfs_row_weight(lik->data, row);
    if (!(w > 0.0)) return 0.0;
    const double r = (lik->data->y[row] - eta) * exp(-log_sigma);
    return 0.5 * log(w) - log_sigma - HALF_LOG_2PI - 0.5 * w * r * r;
}

/* the mean z and the density of y on the internal scale (draws.c maps
   both to the response's) */
static double gaussian_draw_value(int what, double y, double z, double log_aux,
                                  const double *mpar)
{
    (void) mpar;
    if (what == SGFS_DRAW_MEAN) return z;
    const double r = (y - z) * exp(-log_aux);
    return -log_aux - HALF_LOG_2PI - 0.5 * r * r;
}

/* the means u_i' beta (log sigma, the last row of theta if sampled, is
   not read) */
const sgfs_model sgfs_model_gaussian = {
    .name = "gaussian", .weighted = 1,
    .n_par = gaussian_n_par, .score = gaussian_score,
    .loglik = gaussian_loglik, .neg_hessian = gaussian_neg_hessian,
    .n_pred = gaussian_n_pred, .predict = gaussian_predict,
    .score_change = gaussian_score_change, .row_derivs = gaussian_row_derivs,
    .row_loglik = gaussian_row_loglik, .quadratic = 1,
    .n_out = sgfs_glm_n_out, .outputs = sgfs_glm_outputs,
    .draw_value = gaussian_draw_value, .draw_aux = 1
};
