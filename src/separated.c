/*
 * separated.c - exact updates along separated levels (R/separation.R).
 *
 * A level whose rows S all have one response (a factor level seen only with
 * y = 0, or only with y = 1; only zero counts) is separated: along the
 * direction v that moves those rows' linear predictors by 1 and no other
 * row's, the likelihood is monotone, and on one side only the prior bounds
 * the posterior.  There the unadjusted stochastic-gradient steps mix slowly
 * (the curvature at the mode, which sets the metric, describes the
 * likelihood's wall, not the long side where the mass is: 2.7 times too
 * narrow for Covertype's soil level 7) and are pushed off the wall.
 *
 * Every `every` iterations, after the rule's step, each level k gets a Gibbs
 * update along its line: xi <- xi + t v_k with t drawn from the exact
 * conditional density along it,
 *     f(t) = sum_{i in S_k} w_i l_i(eta_i + t) + log p0(xi + t v_k),
 * eta_i = u_i' xi + o_i (only the level's rows and the prior change along
 * the line).  A categorical model's row has K - 1 linear predictors
 * eta_ic = u_i' beta_c: a level's line moves one class's (a level no row
 * of class c holds: along beta_c the likelihood falls monotonically; or
 * the one class all its rows hold) or all of them together (no row of
 * the reference class), and l_i is the softmax's (line_loglik).  The
 * draw is by slice sampling (Neal 2003, Ann. Statist. 31, 705-767:
 * stepping out, figure 3, and shrinkage, figure 5), with R's uniforms:
 *     log y = f(0) - E,  E ~ Exp(1) (exp_rand)
 *     L = -w U_1,  R = L + w,  J = floor(m U_2),  K = m - 1 - J
 *     while J > 0 and f(L) > log y: L -= w, J -= 1
 *     while K > 0 and f(R) > log y: R += w, K -= 1
 *     repeat: t = L + U (R - L); accept if f(t) > log y, else shrink
 *             the side of t (L = t if t < 0, else R = t)
 * with w the level's width (the conditional sd at the mode) and m = 20.
 * The update leaves the posterior invariant.  The rule's steps must not move
 * along the levels' lines themselves: there its unadjusted step, too large
 * for the wall, throws the chain outwards from wherever the exact update put
 * it (a9a's one-row level f123 came out 31 % too wide).  So the rule runs
 * on the rest: in the sampler's coordinates z = U xi, the driver projects
 * the whitened gradient and the step's increment onto the orthogonal
 * complement of the span of the U v_k,
 *     x <- x - B B' x,   B an orthonormal basis of span{U v_k} (Gram-Schmidt),
 * which is Langevin dynamics (or the rule's) on the conditional posterior of
 * the coordinates H-conjugate to the lines, given the lines' positions: a
 * Gibbs sampler of the two blocks.  The cost of the exact updates,
 * sum_k |S_k| (P + the slice's evaluations), is spread over `every`
 * iterations (R/separation.R chooses it).
 */
#include "sgfs.h"
#include <R_ext/Random.h>

#define SLICE_STEPS 20
#define SHRINK_MAX 200

/* eta[i + c m] = u_i' xi_c + o_i for the m rows and each of the n_lp
   linear predictors (xi_c: the c-th block of P coefficients) */
static void rows_eta(const sgfs_data *d, const int *rows, int m, int n_lp, const double *xi,
                     double *eta)
{
    for (int c = 0; c < n_lp; c++) {
        double *eta_c = eta + (size_t) c * m;
        sgfs_data_dots(d, rows, m, xi + (size_t) c * d->P, eta_c);
        for (int i = 0; i < m; i++) eta_c[i] += sgfs_row_offset(d, rows[i]);
    }
}

/* a level's line: its rows, their linear predictors at the line's origin
   (m x n_lp), the predictor it moves (line_loglik's cls) and its direction */
typedef struct line {
    const int *rows;
    int m, n_lp, cls;
    const double *eta, *v;
} line;

/* f(t) along the line from the point xi: the rows' log-likelihood with t
   added to the predictors the line moves, and the prior at xi + t v
   (point: D scratch) */
static double line_logdens(sgfs_engine *e, const line *l, const double *xi, double t,
                           double *point)
{
    double f = 0.0;
    if (l->n_lp == 1)
        for (int i = 0; i < l->m; i++)
            f += e->lik.model->row_loglik(&e->lik, e->par, l->rows[i], l->eta[i] + t);
    else
        for (int i = 0; i < l->m; i++)
            f += e->lik.model->line_loglik(&e->lik, l->rows[i], l->eta + i, (size_t) l->m, l->cls, t);
    for (int j = 0; j < e->D; j++) point[j] = xi[j] + t * l->v[j];
    return f + sgfs_prior_logdens(&e->prior, point);
}

/* one slice-sampling draw of t along the line l from xi, width w */
static double slice_draw(sgfs_engine *e, const line *l, const double *xi, double w)
{
    double *point = e->sep->point;
    const double f0 = line_logdens(e, l, xi, 0.0, point);
    if (!R_FINITE(f0)) return 0.0;
    const double logy = f0 - exp_rand();
    double lo = -w * unif_rand(), hi = lo + w;
    int left = (int) floor(SLICE_STEPS * unif_rand()), right = SLICE_STEPS - 1 - left;
    while (left > 0 && line_logdens(e, l, xi, lo, point) > logy) {
        lo -= w;
        left--;
    }
    while (right > 0 && line_logdens(e, l, xi, hi, point) > logy) {
        hi += w;
        right--;
    }
    for (int k = 0; k < SHRINK_MAX; k++) {
        const double t = lo + unif_rand() * (hi - lo);
        if (line_logdens(e, l, xi, t, point) > logy) return t;
        if (t < 0.0) lo = t;
        else hi = t;
    }
    return 0.0;                     /* (the slice shrank to the current point) */
}

static double dot(const double *a, const double *b, int n)
{
    double s = 0.0;
    for (int j = 0; j < n; j++) s += a[j] * b[j];
    return s;
}

/* basis <- an orthonormal basis of span{U v_k} (modified Gram-Schmidt; a
   direction dependent on the earlier ones gets a zero column) */
void sgfs_separated_basis(sgfs_engine *e)
{
    sgfs_separated *sep = e->sep;
    const int D = e->D;
    for (int k = 0; k < sep->K; k++) {
        double *b = sep->basis + (size_t) k * D;
        sgfs_metric_to_z(&e->metric, sep->dir + (size_t) k * D, b);
        const double norm0 = sqrt(dot(b, b, D));
        for (int l = 0; l < k; l++) {
            const double *c = sep->basis + (size_t) l * D;
            const double a = dot(c, b, D);
            for (int j = 0; j < D; j++) b[j] -= a * c[j];
        }
        const double norm = sqrt(dot(b, b, D));
        const double scale = norm > 1e-10 * norm0 ? 1.0 / norm : 0.0;
        for (int j = 0; j < D; j++) b[j] *= scale;
    }
}

/* target <- target - B B' x (x may be target: B is orthonormal) */
static void remove_span(const sgfs_separated *sep, int D, const double *x, double *target)
{
    for (int k = 0; k < sep->K; k++) {
        const double *b = sep->basis + (size_t) k * D;
        const double a = dot(b, x, D);
        for (int j = 0; j < D; j++) target[j] -= a * b[j];
    }
}

/* x <- x - B B' x: the part of x (D, in z) off the levels' lines */
void sgfs_separated_project(const sgfs_separated *sep, double *x)
{
    remove_span(sep, sep->D, x, x);
}

/* z <- z_old + (I - B B')(z - z_old): the rule's step (from z_old, saved
   by the driver) without its move along the levels' lines */
void sgfs_separated_restrict(const sgfs_separated *sep, double *z)
{
    double *move = sep->z_old;
    for (int j = 0; j < sep->D; j++) move[j] = z[j] - move[j];
    remove_span(sep, sep->D, move, z);
}

/* the Gibbs updates of every level at xi (the model's parameters, D) */
void sgfs_separated_update(sgfs_engine *e)
{
    const sgfs_separated *sep = e->sep;
    double *xi = e->xi;
    for (int k = 0; k < sep->K; k++) {
        const line l = {sep->rows + sep->ptr[k], sep->ptr[k + 1] - sep->ptr[k], sep->n_lp,
                        sep->n_lp > 1 ? sep->cls[k] : 0, sep->eta, sep->dir + (size_t) k * e->D};
        rows_eta(&e->data, l.rows, l.m, l.n_lp, xi, sep->eta);
        const double t = slice_draw(e, &l, xi, sep->width[k]);
        for (int j = 0; j < e->D; j++) xi[j] += t * l.v[j];
    }
}

/* the model's linear predictors a row for the exact updates: 1 (row_loglik),
   its outputs (line_loglik: a categorical model's K - 1), or 0: none */
int sgfs_separated_predictors(const sgfs_engine *e)
{
    const sgfs_model *out = NULL;
    if (e->hs || e->lik.model->n_out == NULL) return 0;
    if (e->lik.model->line_loglik) return e->lik.model->n_out(e->lik.mpar, &out);
    return e->lik.model->row_loglik ? 1 : 0;
}

/* f(t) at each of the n_t values t (out[k] for t[k]) along the line xi +
   t dir through the m rows (0-based), moving linear predictor cls (0: all;
   one of n_lp); the same density the updates sample */
void sgfs_separated_line_logdens(sgfs_engine *e, const int *rows, int m, int cls,
                                 const double *dir, const double *t, R_xlen_t n_t, double *out)
{
    const int n_lp = sgfs_separated_predictors(e);
    double *eta = (double *) R_alloc(m > 0 ? (size_t) m * n_lp : 1, sizeof(double));
    double *point = (double *) R_alloc((size_t) e->D, sizeof(double));
    rows_eta(&e->data, rows, m, n_lp, e->xi, eta);
    const line l = {rows, m, n_lp, cls, eta, dir};
    for (R_xlen_t k = 0; k < n_t; k++)
        out[k] = line_logdens(e, &l, e->xi, t[k], point);
}
