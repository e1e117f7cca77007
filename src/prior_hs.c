/*
 * prior_hs.c - the regularised horseshoe (Piironen and Vehtari 2017,
 * Electronic Journal of Statistics 11, 5018-5051), a prior with sampled
 * parameters of its own, in the non-centred parametrisation of rstanarm:
 *
 *   beta_j    = w_j z_j tau lambda~_j,   lambda~_j^2 = c^2 lambda_j^2 / (c^2 + tau^2 lambda_j^2)
 *   z_j       ~ N(0, 1)
 *   lambda_j  ~ half-t(df, scale 1)
 *   tau       ~ half-t(global_df, scale global_scale)
 *   c^2       ~ Inv-Gamma(slab_df / 2, slab_df slab_scale^2 / 2)
 *
 * for the K model parameters idx[0..K-1] (0-based); w_j is 1 for the
 * package's hs() (internal scale), 1 / a_j for rstanarm's (its scales are
 * on the scale of the draws, coefficient = a_j internal one).  The funnel of
 * the centred form (beta_j against log lambda_j where the data say little)
 * becomes a near-independent z_j and lambda_j.
 *
 * Partial centring: where the data pin a coefficient down (a large one,
 * whose prior scale s_j the slab caps, far above its likelihood's spread),
 * z_j and log lambda_j form a curved ridge (beta_j = s_j z_j fixed) that
 * the centred form has not: such coefficients (centred[k] = 1, chosen in R)
 * are sampled as beta_j itself, with the prior N(0, s_j^2) on it.
 *
 * The sampler's unconstrained coordinates xi (Ds = D + K + 2 doubles): the
 * model's D parameters with z_j in place of beta_j at idx[k] (beta_j itself
 * where centred), then u_k = log lambda_k (K), v = log tau,
 * omega = log c^2.  With
 * r_k = c^2 / (c^2 + tau^2 lambda_k^2) and s_k = w_k tau lambda~_k
 * (beta = s z):  d log s_k / du_k = d log s_k / dv = r_k,
 * d log s_k / domega = (1 - r_k) / 2, so a gradient g in the model's
 * coordinates pulls back to
 *
 *   d/dz_k = g_j s_k,  d/du_k = g_j beta_j r_k,  d/dv = sum_k g_j beta_j r_k,
 *   d/domega = sum_k g_j beta_j (1 - r_k) / 2          (j = idx[k]; a
 *   centred coefficient's g_j stays, and adds nothing to the scales').
 *
 * The horseshoe's log prior on xi (prior.c leaves its coordinates alone):
 * z_j ~ N(0, 1), or for a centred beta_j ~ N(0, s_j^2), whose gradient in
 * log s_j, beta_j^2 / s_j^2 - 1, pulls back to u_k, v, omega as above; and
 * the scales' (Jacobians included):
 *
 *   half-t(nu, s) of x = e^u:  log 2 + lgamma((nu+1)/2) - lgamma(nu/2)
 *       - log(nu pi)/2 - log s + u - (nu+1)/2 log(1 + (x/s)^2 / nu),
 *       d/du = 1 - (nu+1) q / (1 + q),  q = (x/s)^2 / nu
 *   Inv-Gamma(a, b) of c^2 = e^omega:  a log b - lgamma(a) - a omega - b e^-omega,
 *       d/domega = -a + b e^-omega
 *
 * What the chain reports (e->report, Ds): the model's parameters, then
 * lambda_1..K, tau, c.
 */
#include "sgfs.h"
/* Rmath.h would remap the names df and beta */
double Rf_lgammafn(double);

#define LOG_PI 1.144729885849400174143427351353
#define HALF_LOG_2PI 0.918938533204672741780329736406

/* log(1 + e^x) without overflow */
static double log1p_exp(double x)
{
    return x > 35.0 ? x : (x < -35.0 ? exp(x) : log1p(exp(x)));
}

/* half-t(nu, s) of e^u, on u: log density and its derivative */
static double half_t_log(double u, double nu, double s, double *deriv)
{
    const double lq = 2.0 * (u - log(s)) - log(nu);      /* log q */
    const double p = 1.0 / (1.0 + exp(-lq));             /* q / (1 + q) */
    if (deriv) *deriv = 1.0 - (nu + 1.0) * p;
    return M_LN2 + Rf_lgammafn(0.5 * (nu + 1.0)) - Rf_lgammafn(0.5 * nu) - 0.5 * (log(nu) + LOG_PI)
        - log(s) + u - 0.5 * (nu + 1.0) * log1p_exp(lq);
}

/* spec$hs = list(idx = K ints (0-based), w = K doubles,
   par = c(df, global_df, global_scale, slab_df, slab_scale)) into the
   sgfs_hs in `raw`; `scratch`: 3 D doubles (s, r, a model-space point);
   sets e->hs and e->Ds */
void sgfs_hs_setup(sgfs_engine *e, SEXP hs, SEXP raw, double *scratch)
{
    if (TYPEOF(hs) != VECSXP) Rf_error("internal error: 'hs' must be a list");
    SEXP idx = sgfs_list_elt(hs, "idx"), w = sgfs_list_elt(hs, "w"),
        par = sgfs_list_elt(hs, "par"), centred = sgfs_list_elt(hs, "centred");
    const int K = Rf_length(idx);
    if (TYPEOF(idx) != INTSXP || TYPEOF(w) != REALSXP || Rf_length(w) != K ||
        TYPEOF(par) != REALSXP || Rf_length(par) != 5 || K < 1 || K > e->D ||
        TYPEOF(centred) != INTSXP || Rf_length(centred) != K)
        Rf_error("internal error: malformed horseshoe settings");
    sgfs_hs *h = (sgfs_hs *) RAW(raw);
    memset(h, 0, sizeof(sgfs_hs));
    h->D = e->D;
    h->K = K;
    h->idx = INTEGER(idx);
    h->w = REAL(w);
    h->centred = INTEGER(centred);
    const double *p = REAL(par);
    for (int k = 0; k < 5; k++)
        if (!(p[k] > 0.0) || !R_FINITE(p[k]))
            Rf_error("internal error: horseshoe settings must be positive");
    h->df = p[0];
    h->global_df = p[1];
    h->global_scale = p[2];
    h->slab_df = p[3];
    h->slab_scale = p[4];
    for (int k = 0; k < K; k++)
        if (h->idx[k] < 0 || h->idx[k] >= e->D || (k > 0 && h->idx[k] <= h->idx[k - 1]) ||
            !(h->w[k] > 0.0) || !R_FINITE(h->w[k]) || (h->centred[k] != 0 && h->centred[k] != 1) ||
            e->prior.type[h->idx[k]] != SGFS_PRIOR_HS)
            Rf_error("internal error: horseshoe indices or factors out of range");
    h->s = scratch;
    h->r = scratch + e->D;
    h->beta = scratch + 2 * (size_t) e->D;
    e->hs = h;
    e->Ds = e->D + K + 2;
}

/* beta (D) from xi (Ds), and s, r (the pull-back's factors) */
void sgfs_hs_beta(const sgfs_hs *h, const double *xi, double *beta)
{
    const int D = h->D, K = h->K;
    const double v = xi[D + K], omega = xi[D + K + 1];
    memcpy(beta, xi, (size_t) D * sizeof(double));
    for (int k = 0; k < K; k++) {
        const double u = xi[D + k];
        const double lq = 2.0 * (v + u) - omega;               /* log(tau^2 lambda^2 / c^2) */
        const double log_r = -log1p_exp(lq);
        h->r[k] = exp(log_r);
        h->s[k] = h->w[k] * exp(v + u + 0.5 * log_r);
        if (!h->centred[k]) beta[h->idx[k]] = h->s[k] * xi[h->idx[k]];
    }
}

/* the reported values (Ds): beta, then lambda, tau, c */
void sgfs_hs_report(const sgfs_hs *h, const double *xi, const double *beta, double *out)
{
    const int D = h->D, K = h->K;
    memcpy(out, beta, (size_t) D * sizeof(double));
    for (int k = 0; k < K; k++) out[D + k] = exp(xi[D + k]);
    out[D + K] = exp(xi[D + K]);
    out[D + K + 1] = exp(0.5 * xi[D + K + 1]);
}

/* g (Ds; on entry its first D doubles are the gradient in beta at
   sgfs_hs_beta's last point) <- the gradient in xi */
void sgfs_hs_pullback(const sgfs_hs *h, const double *beta, double *g)
{
    const int D = h->D, K = h->K;
    double dv = 0.0, domega = 0.0;
    for (int k = 0; k < K; k++) {
        const int j = h->idx[k];
        if (h->centred[k]) {
            g[D + k] = 0.0;
            continue;
        }
        const double t = g[j] * beta[j];
        g[j] *= h->s[k];
        g[D + k] = t * h->r[k];
        dv += t * h->r[k];
        domega += 0.5 * t * (1.0 - h->r[k]);
    }
    g[D + K] = dv;
    g[D + K + 1] = domega;
}

/* the horseshoe's log prior at xi, with s and r of sgfs_hs_beta at xi;
   adds its gradient to g (Ds) if g != NULL */
double sgfs_hs_prior(const sgfs_hs *h, const double *xi, double *g)
{
    const int D = h->D, K = h->K;
    double lp = 0.0, d;
    for (int k = 0; k < K; k++) {             /* z_j ~ N(0, 1), beta_j ~ N(0, s_j^2) */
        const int j = h->idx[k];
        if (!h->centred[k]) {
            lp += -0.5 * xi[j] * xi[j] - HALF_LOG_2PI;
            if (g) g[j] -= xi[j];
            continue;
        }
        const double s = h->s[k], zz = xi[j] / s, q = zz * zz - 1.0, r = h->r[k];
        lp += -0.5 * zz * zz - log(s) - HALF_LOG_2PI;
        if (g) {
            g[j] -= zz / s;
            g[D + k] += q * r;
            g[D + K] += q * r;
            g[D + K + 1] += 0.5 * q * (1.0 - r);
        }
    }
    for (int k = 0; k < K; k++) {
        lp += half_t_log(xi[D + k], h->df, 1.0, &d);
        if (g) g[D + k] += d;
    }
    lp += half_t_log(xi[D + K], h->global_df, h->global_scale, &d);
    if (g) g[D + K] += d;
    const double a = 0.5 * h->slab_df, b = 0.5 * h->slab_df * h->slab_scale * h->slab_scale;
    const double omega = xi[D + K + 1], be = b * exp(-omega);
    lp += a * log(b) - Rf_lgammafn(a) - a * omega - be;
    if (g) g[D + K + 1] += -a + be;
    return lp;
}

/* 1 if a hyperparameter's log is not finite or beyond +-500 (a diverging
   chain: exp() would soon overflow) */
int sgfs_hs_far(const sgfs_hs *h, const double *xi)
{
    for (int k = h->D; k < h->D + h->K + 2; k++)
        if (!R_FINITE(xi[k]) || fabs(xi[k]) > 500.0) return 1;
    return 0;
}

