/*
 * ranef.c - the random-effect blocks of a mixed model's Gibbs sampler
 * (vignette("internals"), "Mixed models").  Row i's linear predictor is
 *
 *   eta_i = x_i' beta + o_i + sum_t z_ti' b_t,g_t(i),   b_t,g ~ N(0, Sigma_t),
 *
 * and each block below leaves its conditional exactly invariant:
 *
 * - a group's effects b (q numbers, its n rows), whose conditional is
 *     log p(b | .) = sum_i w_i l(y_i, eta0_i + z_i' b) - b' Sigma^-1 b / 2,
 *   eta0 the rows' predictors without the group's effects: for a model
 *   whose log-likelihood is quadratic in eta (gaussian) the exact normal
 *   draw; otherwise an independence Metropolis-Hastings step proposing a
 *   multivariate t with 4 degrees of freedom at the conditional's Laplace
 *   approximation, found by Newton's method from the group's last mode
 *   (the conditional is log-concave: the proposal does not depend on the
 *   current b), whose polynomial tails bound the
 *   ratio target / proposal (a uniformly ergodic chain; Tierney 1994);
 * - a term's covariance Sigma = S Omega S given its G groups' effects,
 *   through Q = sum_g b_g b_g':
 *     det(Sigma)^(-G/2) exp(-tr(Sigma^-1 Q) / 2) p(S) LKJ(Omega | zeta),
 *   by slice sampling (Neal 2003: stepping out, shrinking) of each of its
 *   unconstrained coordinates in turn, the log sds and the canonical
 *   partial correlations' atanh (Lewandowski, Kurowicka and Joe 2009),
 *   with their Jacobian;
 * - the translation of a coefficient both fixed (beta_j ~ N(m, s^2)) and
 *   varying: beta_j + delta with every group's coefficient minus delta
 *   leaves every eta_i unchanged, so delta's conditional is normal with
 *   precision 1 / s^2 + G P_cc and mean (-(beta_j - m) / s^2 +
 *   sum_g (P b_g)_c) / precision, P = Sigma^-1 (Liu and Sabatti 2000);
 * - the non-centred scale move: every effect of a term and its sds
 *   multiplied by exp(v) (Yu and Meng 2011's interweaving); the effects'
 *   normal density and the move's Jacobian cancel, leaving the term's
 *   rows' likelihood and the sds' prior, sampled by slice sampling in v.
 *
 * The sds' priors are rstanarm's: half-normal, half-t or exponential on
 * each sd, or decov(): s_k = d tau sqrt(q pi_k), tau ~ Gamma(shape, rate
 * 1 / scale), pi ~ Dirichlet(concentration), d the noise sd of a gaussian
 * model (else 1).  Random numbers come from R's stream in the order of the
 * plain-R reference (tests/testthat/helper-mixed-reference.R), which the
 * tests replay draw for draw.
 */
#include "sgfs.h"
#include "ranef.h"
#include <R_ext/Lapack.h>
/* Rmath.h would remap the names df and beta (as in prior.c) */
double Rf_rchisq(double);
double Rf_lgammafn(double);

#define HALF_LOG_2PI 0.918938533204672741780329736406
#define LOG_PI 1.144729885849400174143427351353

/* ---- a group's conditional ------------------------------------------ */

/* the log conditional of a group's effects b at its m rows, and (grad,
   H not NULL) its gradient and minus its Hessian (upper triangle, q x q) */
static double group_logdens(const sgfs_ranef_group *g, const double *b, double *grad,
                            double *H)
{
    const int q = g->q, m = g->m;
    const sgfs_model *model = g->lik->model;
    double f = 0.0, d[4];
    if (grad)
        for (int c = 0; c < q; c++) {
            grad[c] = 0.0;
            for (int k = 0; k <= c; k++) H[k + c * q] = 0.0;
        }
    for (int i = 0; i < m; i++) {
        const int row = g->rows[i];
        double eta = g->eta0[i];
        for (int c = 0; c < q; c++) eta += g->z[i + (size_t) c * m] * b[c];
        f += model->row_loglik(g->lik, g->theta, row, eta);
        if (!grad) continue;
        model->row_derivs(g->lik, g->theta, row, eta, d);
        for (int c = 0; c < q; c++) {
            const double zc = g->z[i + (size_t) c * m];
            grad[c] += d[0] * zc;
            for (int k = 0; k <= c; k++) H[k + c * q] += d[1] * g->z[i + (size_t) k * m] * zc;
        }
    }
    /* the normal prior: - b' P b / 2 */
    for (int c = 0; c < q; c++) {
        double pb = 0.0;
        for (int k = 0; k < q; k++) pb += g->prec[c + k * q] * b[k];
        f -= 0.5 * b[c] * pb;
        if (grad) {
            grad[c] -= pb;
            for (int k = 0; k <= c; k++) H[k + c * q] += g->prec[k + c * q];
        }
    }
    return f;
}

/* the conditional's mode by Newton's method (halving a step where the
   density would fall) from g->start (the group's last mode), or from 0
   where there is none or the density is not finite there, into mode, and
   the upper Cholesky factor of minus its Hessian there into U; returns 0,
   or -1 when a Hessian is not positive definite or the density not finite
   at 0.  The conditional is log-concave (a GLM's likelihood in its linear
   predictor, a normal prior), so the mode found to the decrement's 1e-12
   does not depend on the start, and neither does the proposal on the
   current effects.  Scratch: the group's work (5 q + 2 q^2 doubles) */
static int group_laplace(const sgfs_ranef_group *g, double *mode, double *U)
{
    const int q = g->q;
    double *grad = g->work, *step = grad + q, *trial = step + q, *gnew = trial + q,
        *H = gnew + q, *Hnew = H + q * q;
    for (int c = 0; c < q; c++) mode[c] = g->start ? g->start[c] : 0.0;
    double f = group_logdens(g, mode, grad, H);
    if (!R_FINITE(f) && g->start) {
        for (int c = 0; c < q; c++) mode[c] = 0.0;
        f = group_logdens(g, mode, grad, H);
    }
    if (!R_FINITE(f)) return -1;
    for (int it = 0; it < 100; it++) {
        if (sgfs_chol_upper(H, q, U) != 0.0) return -1;
        memcpy(step, grad, (size_t) q * sizeof(double));
        sgfs_chol_solve(U, q, step);
        double decrement = 0.0;
        for (int c = 0; c < q; c++) decrement += step[c] * grad[c];
        if (decrement < 1e-12) return 0;
        double s = 1.0, fnew = R_NegInf;
        for (int half = 0; half < 60; half++, s *= 0.5) {
            for (int c = 0; c < q; c++) trial[c] = mode[c] + s * step[c];
            fnew = group_logdens(g, trial, gnew, Hnew);
            if (R_FINITE(fnew) && fnew >= f) break;
        }
        if (!(R_FINITE(fnew) && fnew >= f)) break;      /* no ascent: at the mode */
        memcpy(mode, trial, (size_t) q * sizeof(double));
        memcpy(grad, gnew, (size_t) q * sizeof(double));
        memcpy(H, Hnew, (size_t) q * q * sizeof(double));
        f = fnew;
    }
    return sgfs_chol_upper(H, q, U) == 0.0 ? 0 : -1;
}

/* log of the t proposal's density at x, up to a constant */
static double t_log_density(const double *U, int q, const double *mode, const double *x,
                            double df, double *work)
{
    for (int c = 0; c < q; c++) work[c] = x[c] - mode[c];
    sgfs_upper_times(U, q, work);
    double ss = 0.0;
    for (int c = 0; c < q; c++) ss += work[c] * work[c];
    return -0.5 * (df + q) * log1p(ss / df);
}

int sgfs_ranef_group_update(const sgfs_ranef_group *g, double *b, double df)
{
    const int q = g->q;
    double *mode = g->work + 5 * q + 2 * q * q, *U = mode + q, *prop = U + q * q,
        *tmp = prop + q;
    if (group_laplace(g, mode, U) != 0) return -1;
    if (g->start) memcpy(g->start, mode, (size_t) q * sizeof(double));
    for (int c = 0; c < q; c++) prop[c] = norm_rand();
    sgfs_upper_solve(U, q, prop);                   /* U^-1 z ~ N(0, H^-1) */
    if (g->lik->model->quadratic) {
        for (int c = 0; c < q; c++) b[c] = mode[c] + prop[c];
        return 1;
    }
    const double scale = 1.0 / sqrt(Rf_rchisq(df) / df);
    for (int c = 0; c < q; c++) prop[c] = mode[c] + scale * prop[c];
    const double log_ratio = group_logdens(g, prop, NULL, NULL) - group_logdens(g, b, NULL, NULL)
        + t_log_density(U, q, mode, b, df, tmp) - t_log_density(U, q, mode, prop, df, tmp);
    if (log(unif_rand()) < log_ratio) {
        memcpy(b, prop, (size_t) q * sizeof(double));
        return 1;
    }
    return 0;
}

/* ---- a term's covariance ------------------------------------------- */

/* Sigma's pieces from the coordinates x (q log sds, then the partial
   correlations' atanh below the diagonal, row by row) into cv: the sds,
   Omega's Cholesky factor L (lower, q x q), the log Jacobian of x ->
   (sds, Omega) and log det Omega */
static void cov_from_coords(const double *x, int q, double *sds, double *L, double *log_jac,
                            double *log_det)
{
    double lj = 0.0;
    for (int c = 0; c < q; c++) {
        sds[c] = exp(x[c]);
        lj += x[c];
    }
    for (int i = 0; i < q * q; i++) L[i] = 0.0;
    L[0] = 1.0;
    int k = q;
    double ld = 0.0;
    for (int i = 1; i < q; i++) {
        double left = 1.0;
        for (int j = 0; j < i; j++, k++) {
            const double z = tanh(x[k]);
            lj += log1p(-z * z) + 0.5 * log(left);
            L[i + j * q] = z * sqrt(left);
            left -= L[i + j * q] * L[i + j * q];
        }
        L[i + i * q] = sqrt(left);
        /* (the Jacobian of L -> Omega = L L': prod_i L_ii^(q - i)) */
        lj += (q - 1 - i) * log(L[i + i * q]);
        ld += 2.0 * log(L[i + i * q]);
    }
    *log_jac = lj;
    *log_det = ld;
}

double sgfs_ranef_sd_logprior(const sgfs_ranef_prior *p, const double *s, int q,
                              double dispersion)
{
    double f = 0.0;
    switch (p->family) {
    case SGFS_SD_HALF_NORMAL:
        for (int c = 0; c < q; c++) f += -0.5 * (s[c] / p->scale) * (s[c] / p->scale) - HALF_LOG_2PI;
        return f;
    case SGFS_SD_HALF_T:
        for (int c = 0; c < q; c++)
            f += Rf_lgammafn(0.5 * (p->df + 1.0)) - Rf_lgammafn(0.5 * p->df)
                - 0.5 * (log(p->df) + LOG_PI)
                - 0.5 * (p->df + 1.0) * log1p((s[c] / p->scale) * (s[c] / p->scale) / p->df);
        return f;
    case SGFS_SD_EXPONENTIAL:
        for (int c = 0; c < q; c++) f -= s[c] / p->scale;
        return f;
    case SGFS_SD_DECOV: {
        /* s_k = d tau sqrt(q pi_k): the density of (tau, pi) times the
           Jacobians of tau -> T = tau^2, (T, pi) -> u = c T pi (c = q
           d^2) and u_k = s_k^2 */
        const double cq = q * dispersion * dispersion, a = p->concentration;
        double ss = 0.0, slog = 0.0;
        for (int c = 0; c < q; c++) {
            ss += s[c] * s[c];
            slog += log(2.0 * s[c]);
        }
        const double tau = sqrt(ss / cq), rate = 1.0 / p->scale;
        double dir = 0.0;
        if (q > 1) {
            dir = Rf_lgammafn(q * a) - q * Rf_lgammafn(a);
            for (int c = 0; c < q; c++) dir += (a - 1.0) * log(s[c] * s[c] / ss);
        }
        const double gam = p->shape * log(rate) - Rf_lgammafn(p->shape)
            + (p->shape - 1.0) * log(tau) - rate * tau;
        return gam - log(2.0 * tau) + dir - q * log(cq) - (q - 1) * log(tau * tau) + slog;
    }
    }
    return R_NaN;
}

double sgfs_ranef_cov_logdens(const sgfs_ranef_cov *cv, const double *x)
{
    const int q = cv->q;
    double *sds = cv->work, *L = sds + q, *M = L + q * q, log_jac, log_det;
    cov_from_coords(x, q, sds, L, &log_jac, &log_det);
    /* Sigma = S L L' S, det = prod s_c^2 det Omega; tr(Sigma^-1 Q) =
       the trace of L^-1 (S^-1 Q S^-1) L^-T (two triangular solves) */
    for (int j = 0; j < q; j++)
        for (int i = 0; i < q; i++) M[i + j * q] = cv->Q[i + j * q] / (sds[i] * sds[j]);
    const char lo = 'L', left = 'L', right = 'R', no = 'N', tr_ = 'T', nu = 'N';
    const double one = 1.0;
    F77_CALL(dtrsm)(&left, &lo, &no, &nu, &q, &q, &one, L, &q, M, &q FCONE FCONE FCONE FCONE);
    F77_CALL(dtrsm)(&right, &lo, &tr_, &nu, &q, &q, &one, L, &q, M, &q FCONE FCONE FCONE FCONE);
    double tr = 0.0;
    for (int c = 0; c < q; c++) tr += M[c + c * q];
    double log_det_sigma = log_det;
    for (int c = 0; c < q; c++) log_det_sigma += 2.0 * x[c];
    return -0.5 * cv->G * log_det_sigma - 0.5 * tr
        + sgfs_ranef_sd_logprior(cv->prior, sds, q, cv->dispersion)
        + (cv->prior->zeta - 1.0) * log_det + log_jac;
}

double sgfs_slice(double u, double (*f)(const void *ctx, double v), const void *ctx, double w)
{
    const double level = f(ctx, u) - exp_rand();
    if (!R_FINITE(level)) return u;                 /* (no density at u) */
    double left = u - w * unif_rand(), right = left + w;
    for (int k = 0; k < 100 && f(ctx, left) > level; k++) left -= w;
    for (int k = 0; k < 100 && f(ctx, right) > level; k++) right += w;
    /* the interval shrinks towards u, where f > level: a draw is accepted
       long before it collapses, unless f is not continuous at u */
    for (int k = 0; k < 2000; k++) {
        const double v = left + (right - left) * unif_rand();
        if (f(ctx, v) > level) return v;
        if (v < u) left = v; else right = v;
    }
    return u;
}

/* the covariance's log density along coordinate k */
typedef struct {
    const sgfs_ranef_cov *cv;
    double *x;
    int k;
} cov_line;

static double cov_line_logdens(const void *ctx, double v)
{
    const cov_line *l = ctx;
    const double keep = l->x[l->k];
    l->x[l->k] = v;
    const double f = sgfs_ranef_cov_logdens(l->cv, l->x);
    l->x[l->k] = keep;
    return f;
}

void sgfs_ranef_cov_update(const sgfs_ranef_cov *cv, double *x)
{
    const int n = cv->q * (cv->q + 1) / 2;
    for (int k = 0; k < n; k++) {
        cov_line l = {cv, x, k};
        x[k] = sgfs_slice(x[k], cov_line_logdens, &l, 1.0);
    }
}

void sgfs_ranef_precision(const double *x, int q, double *prec, double *work)
{
    double *sds = work, *L = sds + q, log_jac, log_det;
    cov_from_coords(x, q, sds, L, &log_jac, &log_det);
    /* Sigma^-1 = S^-1 L^-T L^-1 S^-1: invert L (dtrtri), then L^-T L^-1 */
    const char lo = 'L', nu = 'N';
    int info;
    F77_CALL(dtrtri)(&lo, &nu, &q, L, &q, &info FCONE FCONE);
    for (int i = 0; i < q; i++)
        for (int j = 0; j < q; j++) {
            double s = 0.0;
            for (int k = (i > j ? i : j); k < q; k++) s += L[k + i * q] * L[k + j * q];
            prec[i + j * q] = s / (sds[i] * sds[j]);
        }
}

void sgfs_ranef_sds_cors(const double *x, int q, double *out, double *work)
{
    double *L = work, log_jac, log_det;
    cov_from_coords(x, q, out, L, &log_jac, &log_det);
    int o = q;
    for (int j = 0; j < q; j++)                 /* Omega = L L' below its diagonal */
        for (int i = j + 1; i < q; i++) {
            double s = 0.0;
            for (int l = 0; l <= j; l++) s += L[i + l * q] * L[j + l * q];
            out[o++] = s;
        }
}

/* ---- the translation ----------------------------------------------- */

double sgfs_ranef_prec_dot(const double *prec, int q, int c, const double *b)
{
    double v = 0.0;
    for (int k = 0; k < q; k++) v += prec[c + k * q] * b[k];
    return v;
}

double sgfs_ranef_translation(const double *b, int q, int G, int c, const double *prec,
                              double fixed_prec, double fixed_lin)
{
    double lin = fixed_lin;
    for (int g = 0; g < G; g++) lin += sgfs_ranef_prec_dot(prec, q, c, b + (size_t) g * q);
    const double p = fixed_prec + G * prec[c + c * q];
    return lin / p + norm_rand() / sqrt(p);
}
