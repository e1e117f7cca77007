/*
 * model_cumulative.c - ordinal regression with a cumulative link
 * (McCullagh 1980, JRSS B 42, 109-142; MASS::polr's and rstanarm's
 * stan_polr's model): K ordered classes, cutpoints c_1 < ... < c_{K-1},
 *
 *   P(y_i <= k) = F(c_k - eta_i),  eta_i = u_i' beta (no intercept),
 *   l_i = log(F(c_{y_i} - eta_i) - F(c_{y_i - 1} - eta_i))  (c_0 = -Inf, c_K = Inf),
 *
 * F the logistic (mpar[0] = 0) or normal (1) distribution function.  With
 * a = c_y - eta, b = c_{y-1} - eta, D = F(a) - F(b) and f = F':
 *
 *   dl/da = f(a) / D,   dl/db = -f(b) / D,   dl/deta = -(dl/da + dl/db),
 *   d2l/da2 = f'(a) / D - (f(a) / D)^2,   d2l/db2 = -f'(b) / D - (f(b) / D)^2,
 *   d2l/da db = f(a) f(b) / D^2,
 *
 * concave in (a, b) for a log-concave f (Pratt 1981, JASA 76, 103-106), so
 * minus the Hessian in (eta, c) is positive semi-definite.
 *
 * The cutpoints are sampled as stick-breaking logits v (K - 1 of them): the
 * classes' probabilities at eta = 0 are p_k = phi_k s_{k-1}, phi_k =
 * logistic(v_k), s_k = prod_{j <= k} (1 - phi_j), and c_k = F^-1(1 - s_k).
 * A Dirichlet(alpha) prior on (p_1, ..., p_K), rstanarm's prior_counts, is
 * then independent Beta(alpha_k, alpha_{k+1} + ... + alpha_K) laws on the
 * phi_k (prior.c's logit_beta).  The Jacobian is
 *
 *   dc_k / dv_m = g_k phi_m  (m <= k; 0 for m > k),  g_k = s_k / f(c_k),
 *
 * so J' r (r over cutpoints) is a suffix sum, phi_m sum_{k >= m} g_k r_k.
 * The curvature the passes use is J' H_c J with H_c minus the Hessian in c
 * (positive semi-definite): the Hessian in v without the term of J's own
 * derivative, as Gauss-Newton (the control variates stay exact: their
 * full-data sum uses the same curvature).  s_k is kept on the log scale
 * (log s_k = -sum_j softplus(v_j)), so that rare extreme classes keep their
 * digits.
 *
 * theta = (beta[P], v[K-1]); y_i in 0..K-1; mpar = (link, K).  Prior
 * weights multiply a row's terms (frequency weights).  The draw-level
 * outputs are eta and c_k - eta (k = 1..K-1), which class_value maps to
 * the K class probabilities or the log probability of a class.
 */
#include "sgfs.h"
#include <Rmath.h>

enum { LINK_LOGIT = 0, LINK_PROBIT = 1 };

static int n_class(const double *mpar)
{
    return (int) mpar[1];
}

/* log F(x), log(1 - F(x)), log f(x) and f'(x) / f(x) */
typedef struct link_values {
    double log_F, log_S, log_f, dlog_f;
} link_values;

/* F(x) and 1 - F(x) of the logistic from one exp; returns e = exp(-|x|) */
static double logistic_parts(double x, double *F, double *S)
{
    const double e = exp(-fabs(x)), r = 1.0 / (1.0 + e);
    *F = x >= 0.0 ? r : e * r;
    *S = x >= 0.0 ? e * r : r;
    return e;
}

static link_values link_at(int link, double x)
{
    link_values o;
    if (link == LINK_LOGIT) {
        double F, S;
        const double l = log1p(logistic_parts(x, &F, &S));
        o.log_F = -(x < 0.0 ? -x : 0.0) - l;
        o.log_S = -(x > 0.0 ? x : 0.0) - l;
        o.log_f = o.log_F + o.log_S;
        o.dlog_f = S - F;
    } else {
        o.log_F = pnorm(x, 0.0, 1.0, 1, 1);
        o.log_S = pnorm(x, 0.0, 1.0, 0, 1);
        o.log_f = dnorm(x, 0.0, 1.0, 1);
        o.dlog_f = -x;
    }
    return o;
}

/* the cutpoint F^-1(1 - s) at log s */
static double cutpoint_of(int link, double log_s)
{
    return link == LINK_LOGIT ? log1mexp(-log_s) - log_s : qnorm(log_s, 0.0, 1.0, 0, 1);
}

/* the cutpoints at v: c[K-1], g[K-1] = s_k / f(c_k) and phi[K-1] */
typedef struct cutpoints {
    double *c, *g, *phi;
} cutpoints;

static cutpoints cutpoints_at(int link, const double *v, int K1, double *scratch)
{
    cutpoints cp = {scratch, scratch + K1, scratch + 2 * K1};
    double log_s = 0.0;
    for (int k = 0; k < K1; k++) {
        log_s -= sgfs_softplus(v[k]);
        cp.phi[k] = sgfs_sigmoid(v[k]);
        cp.c[k] = cutpoint_of(link, log_s);
        cp.g[k] = exp(log_s - link_at(link, cp.c[k]).log_f);
    }
    return cp;
}

/* out[m] (+)= phi_m sum_{k >= m} g_k r_k: J' r */
static void jacobian_t(const cutpoints *cp, int K1, const double *r, double *out, int add)
{
    double tail = 0.0;
    for (int m = K1 - 1; m >= 0; m--) {
        tail += cp->g[m] * r[m];
        out[m] = (add ? out[m] : 0.0) + cp->phi[m] * tail;
    }
}

/* a row's terms between a = c_y - eta (has_a: y < K - 1) and b = c_{y-1}
   - eta (has_b: y > 0): l, dl/da, dl/db and minus the Hessian in (a, b)
   (into t[0..5]: l, la, lb, haa, hbb, hab), on the log scale throughout
   (D = F(a) - F(b) by its larger tail and Rmath's log1mexp(x) = log(1 -
   exp(-x))) */
static void terms_between_log(int link, int has_a, double a, int has_b, double b, double *t)
{
    link_values fa = {0}, fb = {0};
    if (has_a) fa = link_at(link, a);
    if (has_b) fb = link_at(link, b);
    double log_D;
    if (!has_b) log_D = fa.log_F;
    else if (!has_a) log_D = fb.log_S;
    else if (a + b > 0.0) log_D = fb.log_S + log1mexp(fb.log_S - fa.log_S);
    else log_D = fa.log_F + log1mexp(fa.log_F - fb.log_F);
    const double ra = has_a ? exp(fa.log_f - log_D) : 0.0,
                 rb = has_b ? exp(fb.log_f - log_D) : 0.0;
    t[0] = log_D;
    t[1] = ra;
    t[2] = -rb;
    t[3] = has_a ? ra * ra - fa.dlog_f * ra : 0.0;
    t[4] = has_b ? rb * rb + fb.dlog_f * rb : 0.0;
    t[5] = -ra * rb;
}

/* ... the same for the logit link from F and 1 - F directly (one exp per
   end, one log for l), D by its larger tail; where D is below 1e-5 of
   that tail (a narrow class far in a tail: cancellation) or underflows,
   the log-scale version */
static void terms_between(int link, int has_a, double a, int has_b, double b, double *t)
{
    if (link != LINK_LOGIT) {
        terms_between_log(link, has_a, a, has_b, b, t);
        return;
    }
    double Fa = 1.0, Sa = 0.0, Fb = 0.0, Sb = 1.0;
    if (has_a) logistic_parts(a, &Fa, &Sa);
    if (has_b) logistic_parts(b, &Fb, &Sb);
    const int upper = has_b && (!has_a || a + b > 0.0);
    const double tail = upper ? Sb : Fa, D = upper ? Sb - Sa : Fa - Fb;
    if (!(D > 1e-5 * tail) || !(D > 1e-300)) {
        terms_between_log(link, has_a, a, has_b, b, t);
        return;
    }
    const double fa = Fa * Sa, fb = Fb * Sb, ra = fa / D, rb = fb / D;
    t[0] = log(D);
    t[1] = ra;
    t[2] = -rb;
    t[3] = has_a ? ra * ra - (Sa - Fa) * ra : 0.0;
    t[4] = has_b ? rb * rb + (Sb - Fb) * rb : 0.0;
    t[5] = -ra * rb;
}

/* ... of a row of class y at eta, the cutpoints c[K1] */
static void row_terms(int link, int y, int K1, double eta, const double *c, double *t)
{
    terms_between(link, y < K1, y < K1 ? c[y] - eta : 0.0, y > 0, y > 0 ? c[y - 1] - eta : 0.0,
                  t);
}

/* minus the row's Hessian in (eta, c_y, c_{y-1}) from its terms t: h_ee,
   h_e.hi, h_e.lo, h_hi.hi, h_lo.lo, h_hi.lo (a = c_y - eta, b = c_{y-1} - eta) */
static void row_curvature(const double *t, double *h)
{
    const double haa = t[3], hbb = t[4], hab = t[5];
    h[0] = haa + 2.0 * hab + hbb;
    h[1] = -(haa + hab);
    h[2] = -(hab + hbb);
    h[3] = haa;
    h[4] = hbb;
    h[5] = hab;
}

/* the scratch: the batch's predictors (n), the cutpoints at theta and at
   the centre (3 (K - 1) each), the cutpoint sums (2 (K - 1)), their change
   at the centre (K - 1), and the cross block in c (P (K - 1)) */
static R_xlen_t cumulative_scratch(int P, int n, const double *mpar)
{
    return (R_xlen_t) n + (R_xlen_t) (n_class(mpar) - 1) * (P + 9);
}

static double *cut_scratch(const sgfs_lik *lik, int n)
{
    return lik->eta + n;
}

static int cumulative_n_par(int P, const double *mpar, int n_mpar)
{
    if (n_mpar < 2 || !(mpar[0] == LINK_LOGIT || mpar[0] == LINK_PROBIT) ||
        !(mpar[1] >= 2 && mpar[1] <= 1e5) || mpar[1] != floor(mpar[1]) ||
        (double) P + mpar[1] - 1 > INT_MAX)
        return -1;
    return P + n_class(mpar) - 1;
}

/* what the rows' one-pass residuals (sgfs_rows_score) read and add to:
   the cutpoints at theta (c) and at the centre (cc), J_centre (v -
   v_centre) (dc, second order), and the cutpoint sums at theta (sum_t)
   and at the centre (sum_c), the log-likelihood and the last row's terms */
typedef struct rows_ctx {
    const sgfs_data *d;
    int link, K1, second;
    const double *c, *cc, *dc;
    double *sum_t, *sum_c, ll, t[6];
} rows_ctx;

/* a row's residual w dl/deta at eta (offset not included), its cutpoint
   scores added to sum_t */
static double score_residual(int row, double eta, double unused, const void *ctx)
{
    (void) unused;
    rows_ctx *x = (rows_ctx *) ctx;                 /* (the caller's, writable) */
    const int y = (int) x->d->y[row];
    const double w = sgfs_row_weight(x->d, row);
    double *t = x->t;
    row_terms(x->link, y, x->K1, eta + sgfs_row_offset(x->d, row), x->c, t);
    x->ll += w * t[0];
    if (y < x->K1) x->sum_t[y] += w * t[1];
    if (y > 0) x->sum_t[y - 1] += w * t[2];
    return -w * (t[1] + t[2]);
}

/* a row's change of residual from the centre (and with `second` its
   curvature at the centre times the move), the cutpoint parts added to
   sum_t and sum_c: h the row's curvature at the centre in (eta, c_y,
   c_{y-1}), d_eta = eta - eta_centre, dc the cutpoints' move */
static double change_residual(int row, double eta, double eta_c, const void *ctx)
{
    rows_ctx *x = (rows_ctx *) ctx;
    const int y = (int) x->d->y[row], K1 = x->K1;
    const double w = sgfs_row_weight(x->d, row), o = sgfs_row_offset(x->d, row);
    double t[6], tc[6], h[6];
    row_terms(x->link, y, K1, eta + o, x->c, t);
    row_terms(x->link, y, K1, eta_c + o, x->cc, tc);
    double beta_part = -(t[1] + t[2]) + (tc[1] + tc[2]);
    if (y < K1) x->sum_t[y] += w * t[1];
    if (y > 0) x->sum_t[y - 1] += w * t[2];
    double hi_part = y < K1 ? -tc[1] : 0.0, lo_part = y > 0 ? -tc[2] : 0.0;
    if (x->second) {
        row_curvature(tc, h);
        const double d_eta = eta - eta_c, d_hi = y < K1 ? x->dc[y] : 0.0,
                     d_lo = y > 0 ? x->dc[y - 1] : 0.0;
        beta_part += h[0] * d_eta + h[1] * d_hi + h[2] * d_lo;
        hi_part += h[1] * d_eta + h[3] * d_hi + h[5] * d_lo;
        lo_part += h[2] * d_eta + h[5] * d_hi + h[4] * d_lo;
    }
    if (y < K1) x->sum_c[y] += w * hi_part;
    if (y > 0) x->sum_c[y - 1] += w * lo_part;
    return w * beta_part;
}

/* the score: beta's part sum_i r_i u_i in one pass over the rows (each
   read once, sparse rows by their entries), the cutpoints' J' sum_t; with
   per-example scores G, from one gather of the rows instead */
static void cumulative_score(sgfs_lik *lik, const double *theta, const int *idx, int n,
                             double *sum, double *G, double *loglik)
{
    const int P = lik->data->P, D = lik->D, K1 = n_class(lik->mpar) - 1,
              link = (int) lik->mpar[0];
    double *work = cut_scratch(lik, n);
    const cutpoints cp = cutpoints_at(link, theta + P, K1, work);
    rows_ctx x = {.d = lik->data, .link = link, .K1 = K1, .c = cp.c, .sum_t = work + 6 * K1};
    for (int k = 0; k < K1; k++) x.sum_t[k] = 0.0;
    if (G == NULL) sgfs_rows_score(lik, idx, n, theta, NULL, score_residual, &x, sum);
    else {
        double *r = lik->eta;
        const double *xb = sgfs_batch_columns(lik, theta, idx, n, r);
        for (int i = 0; i < n; i++) {
            const int y = (int) lik->data->y[idx[i]];
            const double w = sgfs_row_weight(lik->data, idx[i]);
            r[i] = score_residual(idx[i], r[i] - sgfs_row_offset(lik->data, idx[i]), 0.0, &x);
            double *g = G + P + (size_t) i * D, tail = 0.0;   /* J' (its two entries) */
            for (int m = K1 - 1; m >= 0; m--) {
                if (m == y) tail += cp.g[m] * w * x.t[1];
                if (m == y - 1) tail += cp.g[m] * w * x.t[2];
                g[m] = cp.phi[m] * tail;
            }
        }
        sgfs_glm_scores(xb, P, n, r, sum, G, D);
    }
    jacobian_t(&cp, K1, x.sum_t, sum + P, 0);
    if (loglik) *loglik = x.ll;
}

static double cumulative_loglik(sgfs_lik *lik, const double *theta, const int *idx, int n)
{
    const int P = lik->data->P, K1 = n_class(lik->mpar) - 1, link = (int) lik->mpar[0];
    double *eta = lik->eta, ll = 0.0, t[6];
    const cutpoints cp = cutpoints_at(link, theta + P, K1, cut_scratch(lik, n));
    sgfs_batch_columns(lik, theta, idx, n, eta);
    for (int i = 0; i < n; i++) {
        row_terms(link, (int) lik->data->y[idx[i]], K1, eta[i], cp.c, t);
        ll += sgfs_row_weight(lik->data, idx[i]) * t[0];
    }
    return ll;
}

/* H += J' Hc J for the tridiagonal Hc (diagonal dg, superdiagonal up), into
   the v block (rows and columns P..P+K1-1 of H, leading dimension D, upper
   triangle): with A = diag(g) Hc diag(g) and R(m) the sum of A over rows
   and columns >= m, (J' Hc J)[m, m'] = phi_m phi_m' (R(m') + A[m'-1, m'] [m < m']) */
static void add_cutpoint_block(const cutpoints *cp, int K1, const double *dg, const double *up,
                               double *H, int P, int D)
{
    double R = 0.0;
    for (int mm = K1 - 1; mm >= 0; mm--) {
        R += cp->g[mm] * cp->g[mm] * dg[mm] +
             (mm + 1 < K1 ? 2.0 * cp->g[mm] * cp->g[mm + 1] * up[mm] : 0.0);
        const double above = mm > 0 ? cp->g[mm - 1] * cp->g[mm] * up[mm - 1] : 0.0;
        double *col = H + P + (size_t) (P + mm) * D;
        for (int m = 0; m < mm; m++) col[m] += cp->phi[m] * cp->phi[mm] * (R + above);
        col[mm] += cp->phi[mm] * cp->phi[mm] * R;
    }
}

static void cumulative_neg_hessian(sgfs_lik *lik, const double *theta, const int *idx, int n,
                                   double *H)
{
    const int P = lik->data->P, D = lik->D, K1 = n_class(lik->mpar) - 1,
              link = (int) lik->mpar[0];
    double *eta = lik->eta, *work = cut_scratch(lik, n), t[6], h[6];
    const cutpoints cp = cutpoints_at(link, theta + P, K1, work);
    double *dg = work + 6 * K1, *up = dg + K1, *cross = work + 9 * K1;
    for (int k = 0; k < K1; k++) dg[k] = up[k] = 0.0;
    for (size_t k = 0; k < (size_t) P * K1; k++) cross[k] = 0.0;
    const double *xb = sgfs_batch_columns(lik, theta, idx, n, eta);
    for (int i = 0; i < n; i++) {
        const int y = (int) lik->data->y[idx[i]];
        const double w = sgfs_row_weight(lik->data, idx[i]);
        row_terms(link, y, K1, eta[i], cp.c, t);
        row_curvature(t, h);
        const double *restrict u = xb + (size_t) i * P;
        double *restrict gcol = lik->G + (size_t) i * P;
        const double root = sqrt(w * (h[0] > 0.0 ? h[0] : 0.0));
        for (int j = 0; j < P; j++) gcol[j] = root * u[j];
        if (y < K1) {
            double *restrict x_hi = cross + (size_t) y * P;
            for (int j = 0; j < P; j++) x_hi[j] += w * h[1] * u[j];
            dg[y] += w * h[3];
        }
        if (y > 0) {
            double *restrict x_lo = cross + (size_t) (y - 1) * P;
            for (int j = 0; j < P; j++) x_lo[j] += w * h[2] * u[j];
            dg[y - 1] += w * h[4];
        }
        if (y > 0 && y < K1) up[y - 1] += w * h[5];
    }
    sgfs_crossprod_add(lik->G, P, n, H, D);
    for (int j = 0; j < P; j++) {          /* the (beta, v) block: cross J */
        double tail = 0.0;
        for (int m = K1 - 1; m >= 0; m--) {
            tail += cp.g[m] * cross[j + (size_t) m * P];
            H[j + (size_t) (P + m) * D] += cp.phi[m] * tail;
        }
    }
    add_cutpoint_block(&cp, K1, dg, up, H, P, D);
}

/* sum_i g_i(theta) - g_i(centre) in one pass over the rows, and with
   `second` plus H_i(centre) (theta - centre), H_i = J' H_c J at the
   centre: for beta u_i (h_ee d_eta + h_e.c dc), for v J' (h_c.e d_eta +
   H_cc dc), with d_eta = eta_i - its centre value and dc = J (v - v_centre) */
static void cumulative_score_change(sgfs_lik *lik, const double *theta, const double *centre,
                                    int second, const int *idx, int n, double *sum)
{
    const int P = lik->data->P, K1 = n_class(lik->mpar) - 1, link = (int) lik->mpar[0];
    double *work = cut_scratch(lik, n);
    const cutpoints cp = cutpoints_at(link, theta + P, K1, work);
    const cutpoints cc = cutpoints_at(link, centre + P, K1, work + 3 * K1);
    rows_ctx x = {.d = lik->data, .link = link, .K1 = K1, .second = second, .c = cp.c,
                  .cc = cc.c, .sum_t = work + 6 * K1, .sum_c = work + 7 * K1};
    double *dc = work + 8 * K1;
    for (int k = 0; k < K1; k++) x.sum_t[k] = x.sum_c[k] = 0.0;
    if (second) {                          /* dc = J_centre (v - v_centre): prefix sums */
        double head = 0.0;
        for (int k = 0; k < K1; k++) {
            head += cc.phi[k] * (theta[P + k] - centre[P + k]);
            dc[k] = cc.g[k] * head;
        }
    }
    x.dc = dc;
    sgfs_rows_score(lik, idx, n, theta, centre, change_residual, &x, sum);
    jacobian_t(&cp, K1, x.sum_t, sum + P, 0);
    jacobian_t(&cc, K1, x.sum_c, sum + P, 1);
}

/* a row's derivatives in eta (offset included), for R's minibatch strata:
   w dl/deta and w h_ee, from the row's two cutpoints alone (log s_k summed
   up to class y); the cutpoints are several coordinates, not the one
   after beta row_derivs describes (d[2] = d[3] = 0) */
static void cumulative_row_derivs(const sgfs_lik *lik, const double *theta, int row, double eta,
                                  double *d)
{
    const int P = lik->data->P, K1 = n_class(lik->mpar) - 1, link = (int) lik->mpar[0],
              y = (int) lik->data->y[row];
    const double w = sgfs_row_weight(lik->data, row);
    double t[6], h[6], log_s = 0.0, lo = 0.0, hi = 0.0;
    for (int k = 0; k <= y && k < K1; k++) {
        log_s -= sgfs_softplus(theta[P + k]);
        if (k == y - 1) lo = cutpoint_of(link, log_s);
        if (k == y) hi = cutpoint_of(link, log_s);
    }
    terms_between(link, y < K1, hi - eta, y > 0, lo - eta, t);
    row_curvature(t, h);
    d[0] = -w * (t[1] + t[2]);
    d[1] = w * h[0];
    d[2] = d[3] = 0.0;
}

/* keep = predictive(): the K class probabilities */
static int cumulative_n_pred(const double *mpar)
{
    return n_class(mpar);
}

static void cumulative_class_value(int what, const double *zk, size_t ldk, int n_out, int y,
                                   const double *mpar, double *dest, size_t plane);

/* each example's outputs (eta, then c_k - eta) mapped by class_value */
static void cumulative_predict(sgfs_lik *lik, const double *theta, const double *x, int m,
                               double *out)
{
    const int P = lik->data->P, K1 = n_class(lik->mpar) - 1, K = K1 + 1,
              link = (int) lik->mpar[0];
    double *work = cut_scratch(lik, m), *z = work + 3 * K1, *p = z + K;
    const cutpoints cp = cutpoints_at(link, theta + P, K1, work);
    sgfs_xt_beta(x, P, m, theta, lik->eta);
    for (int i = 0; i < m; i++) {
        z[0] = lik->eta[i];
        for (int k = 0; k < K1; k++) z[k + 1] = cp.c[k] - z[0];
        cumulative_class_value(SGFS_DRAW_MEAN, z, 1, K, 0, lik->mpar, p, 1);
        for (int k = 0; k < K; k++) out[k + (size_t) i * K] += p[k];
    }
}

/* the draw-level outputs: eta, then c_k - eta for k = 1..K-1 */
static int cumulative_n_out(const double *mpar, const sgfs_model **out)
{
    (void) out;
    return n_class(mpar);
}

static void cumulative_outputs(sgfs_lik *lik, const double *theta, int S, const double *x,
                               int m, double *z, size_t ldz, size_t ldk)
{
    const int P = lik->data->P, D = lik->D, K1 = n_class(lik->mpar) - 1,
              link = (int) lik->mpar[0];
    sgfs_linear_outputs(theta, D, P, 1, S, x, m, z, ldz, ldk);
    double *work = cut_scratch(lik, 0);
    for (int s = 0; s < S; s++) {
        const cutpoints cp = cutpoints_at(link, theta + (size_t) s * D + P, K1, work);
        for (int i = 0; i < m; i++) {
            double *zi = z + s + (size_t) i * ldz;
            for (int k = 0; k < K1; k++) zi[(k + 1) * ldk] = cp.c[k] - zi[0];
        }
    }
}

static int cumulative_n_class(int n_out)
{
    return n_out;
}

/* the outputs zk (eta, then c_k - eta) to the link (the K outputs), the
   K class probabilities or the log probability of class y */
static void cumulative_class_value(int what, const double *zk, size_t ldk, int n_out, int y,
                                   const double *mpar, double *dest, size_t plane)
{
    const int K1 = n_out - 1, link = (int) mpar[0];
    double t[6];
    if (what == SGFS_DRAW_LINK) {
        for (int k = 0; k < n_out; k++) dest[k * plane] = zk[k * ldk];
        return;
    }
    const int first = what == SGFS_DRAW_LOGLIK ? y : 0, last = what == SGFS_DRAW_LOGLIK ? y : K1;
    for (int k = first; k <= last; k++) {
        terms_between(link, k < K1, k < K1 ? zk[(k + 1) * ldk] : 0.0, k > 0,
                      k > 0 ? zk[k * ldk] : 0.0, t);
        dest[(k - first) * plane] = what == SGFS_DRAW_LOGLIK ? t[0] : exp(t[0]);
    }
}

const sgfs_model sgfs_model_cumulative = {
    .name = "cumulative", .weighted = 1,
    .n_par = cumulative_n_par, .score = cumulative_score,
    .loglik = cumulative_loglik, .neg_hessian = cumulative_neg_hessian,
    .scratch = cumulative_scratch,
    .n_pred = cumulative_n_pred, .predict = cumulative_predict,
    .score_change = cumulative_score_change, .row_derivs = cumulative_row_derivs,
    .n_out = cumulative_n_out, .outputs = cumulative_outputs,
    .n_class = cumulative_n_class, .class_value = cumulative_class_value
};
