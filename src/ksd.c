/*
 * ksd.c - kernel Stein discrepancy of a sample with the IMQ base kernel
 * (Gorham and Mackey 2017, "Measuring sample quality with kernels", ICML;
 * algorithms vignette 4.4).
 *
 * For draws x_1..x_T in R^D with the exact scores b(x) = grad log p(x | data)
 * (full data, prior included), base kernel k(x, y) = u^beta with
 * u = c^2 + ||r||^2, r = x - y, c > 0, -1 < beta < 0, the Langevin-Stein
 * kernel is
 *
 *   k0(x, y) = b(x)'b(y) u^beta + 2 beta u^(beta-1) (b(y) - b(x))'r
 *              - 2 beta D u^(beta-1) - 4 beta (beta-1) ||r||^2 u^(beta-2),
 *
 * with k0(x, x) = ||b(x)||^2 c^(2 beta) - 2 beta D c^(2 beta - 2), and
 *
 *   KSD = sqrt( (1/T^2) sum_{i,j} k0(x_i, x_j) )     (a V-statistic).
 *
 * The scores of all draws are computed first (T full-data passes, O(T N D)),
 * then the kernel sum over pairs i < j (doubled, by symmetry) plus the
 * diagonal, O(T^2 D).  All memory is allocated before the loops.
 *
 * sgfs_ksd(spec, x, c, beta):
 *   spec : the engine spec of a fit (engine.c); the scores are those of its
 *          log posterior on the engine's internal scale
 *   x    : D x T double matrix, column-major, one draw per column (internal
 *          scale)
 *   c, beta : the kernel's settings (validated in R)
 * Returns the KSD, a double.
 */
#include "sgfs.h"
#include <R_ext/Utils.h>

/* poll for Ctrl-C after about this many flops */
#define KSD_POLL_WORK 2e7

/* b[, t] = grad log posterior at x[, t], t = 0..T-1 (x, b: D x T) */
static void ksd_scores(sgfs_engine *e, const double *x, int T, double *b)
{
    const int D = e->D;
    const double per_draw = 4.0 * e->data.N * (double) D;
    double work = 0.0;
    for (int t = 0; t < T; t++) {
        double *bt = b + (size_t) D * t;
        sgfs_log_posterior(e, x + (size_t) D * t, bt);
        if (!sgfs_all_finite(bt, D))
            Rf_error("the log posterior's gradient is not finite at draw %d", t + 1);
        work += per_draw;
        if (work > KSD_POLL_WORK) {
            R_CheckUserInterrupt();
            work = 0.0;
        }
    }
}

/* sum_{i,j} k0(x_i, x_j) over all T^2 ordered pairs */
static double ksd_stein_sum(const double *x, const double *b, int D, int T,
                            double c, double beta)
{
    const double c2 = c * c;
    const double diag_const = -2.0 * beta * D * pow(c2, beta - 1.0);
    const double c2beta = pow(c2, beta);
    double diag = 0.0, off = 0.0, work = 0.0;
    for (int i = 0; i < T; i++) {
        const double *xi = x + (size_t) D * i, *bi = b + (size_t) D * i;
        double bb = 0.0;
        for (int d = 0; d < D; d++) bb += bi[d] * bi[d];
        diag += bb * c2beta + diag_const;
        for (int j = i + 1; j < T; j++) {
            const double *xj = x + (size_t) D * j, *bj = b + (size_t) D * j;
            double rr = 0.0, bxby = 0.0, dbr = 0.0;
            for (int d = 0; d < D; d++) {
                const double r = xi[d] - xj[d];
                rr += r * r;
                bxby += bi[d] * bj[d];
                dbr += (bj[d] - bi[d]) * r;
            }
            const double u = c2 + rr, ub = pow(u, beta);
            const double ub1 = ub / u, ub2 = ub1 / u;
            off += bxby * ub + 2.0 * beta * ub1 * (dbr - D)
                   - 4.0 * beta * (beta - 1.0) * rr * ub2;
        }
        /* row i costs about 4 D (T - i) flops */
        work += 4.0 * D * (double) (T - i);
        if (work > KSD_POLL_WORK) {
            R_CheckUserInterrupt();
            work = 0.0;
        }
    }
    return diag + 2.0 * off;
}

SEXP sgfs_ksd(SEXP spec, SEXP x, SEXP c, SEXP beta)
{
    if (TYPEOF(x) != REALSXP || !Rf_isMatrix(x))
        Rf_error("internal error: 'x' must be a double matrix");
    const int D = Rf_nrows(x), T = Rf_ncols(x);
    if (T < 1) Rf_error("internal error: no draws");
    SEXP prot = PROTECT(sgfs_engine_alloc());
    SEXP theta = PROTECT(Rf_allocVector(REALSXP, D));
    memcpy(REAL(theta), REAL(x), (size_t) D * sizeof(double));
    sgfs_engine *e = sgfs_eval_engine(prot, spec, theta, 0, 0);
    if (e->D != D)
        Rf_error("internal error: the draws have %d parameters, the model %d", D, e->D);
    double *b = (double *) R_alloc((size_t) D * T, sizeof(double));
    ksd_scores(e, REAL(x), T, b);
    double s = ksd_stein_sum(REAL(x), b, D, T, Rf_asReal(c), Rf_asReal(beta));
    UNPROTECT(2);
    /* s >= 0 in exact arithmetic (k0 is a positive definite kernel); a sum
       that is not a number (scores or distances overflowed: draws far out)
       is the worst discrepancy, never a good one */
    return Rf_ScalarReal(ISNAN(s) ? R_PosInf : sqrt(fmax(s, 0.0)) / T);
}
