/*
 * ranef_eval.c - the random-effect blocks (ranef.c) one at a time from R,
 * for the replays against the plain-R reference
 * (tests/testthat/helper-mixed-reference.R):
 *
 *   sgfs_ranef_group_draw(spec, theta, rows, eta0, z, b, prec, df)
 *       one update of a group's effects: list(b, status)
 *   sgfs_ranef_cov_draw(x, Q, G, prior, dispersion, density)
 *       one sweep of a term's covariance coordinates x, or with density
 *       TRUE their log density
 *   sgfs_ranef_translation_draw(b, c, x, beta_j, mean, sd)
 *       one translation delta of coefficient c (1-based)
 *
 * prior: list(family (SGFS_SD_*), scale, df, shape, concentration, zeta).
 */
#include "sgfs.h"
#include "ranef.h"

/* the term's q from the covariance coordinates' length q (q + 1) / 2 */
static int coords_q(SEXP x)
{
    const R_xlen_t n = Rf_xlength(x);
    int q = 1;
    while (q * (q + 1) / 2 < n) q++;
    if (TYPEOF(x) != REALSXP || q * (q + 1) / 2 != n)
        Rf_error("internal error: 'x' must be q (q + 1) / 2 doubles");
    return q;
}

SEXP sgfs_ranef_group_draw(SEXP spec, SEXP theta, SEXP rows, SEXP eta0, SEXP z, SEXP b,
                           SEXP prec, SEXP df)
{
    SEXP prot = PROTECT(sgfs_engine_alloc());
    sgfs_engine *e = sgfs_eval_engine(prot, spec, theta, 1, 0);
    if (e->lik.model->row_loglik == NULL || e->lik.model->row_derivs == NULL)
        Rf_error("internal error: the %s model has no row log-likelihood", e->lik.model->name);
    const int m = Rf_length(rows), q = Rf_length(b);
    if (q < 1 || TYPEOF(rows) != INTSXP || TYPEOF(eta0) != REALSXP || Rf_length(eta0) != m ||
        TYPEOF(z) != REALSXP || Rf_xlength(z) != (R_xlen_t) m * q || TYPEOF(b) != REALSXP ||
        TYPEOF(prec) != REALSXP || Rf_length(prec) != q * q)
        Rf_error("internal error: malformed group");
    for (int i = 0; i < m; i++)
        if (INTEGER(rows)[i] < 0 || INTEGER(rows)[i] >= e->data.N)
            Rf_error("internal error: 'rows' out of range");
    double *work = (double *) R_alloc((size_t) (8 * q + 4 * q * q), sizeof(double));
    sgfs_ranef_group g = {&e->lik, e->theta, q, m, INTEGER(rows), REAL(eta0), REAL(z),
                          REAL(prec), NULL, work};
    const char *names[] = {"b", "status", ""};
    SEXP out = PROTECT(Rf_mkNamed(VECSXP, names));
    SEXP bn = SET_VECTOR_ELT(out, 0, Rf_duplicate(b));
    GetRNGstate();
    const int status = sgfs_ranef_group_update(&g, REAL(bn), Rf_asReal(df));
    PutRNGstate();
    SET_VECTOR_ELT(out, 1, Rf_ScalarInteger(status));
    UNPROTECT(2);
    return out;
}

SEXP sgfs_ranef_cov_draw(SEXP x, SEXP Q, SEXP G, SEXP prior, SEXP dispersion, SEXP density)
{
    const int q = coords_q(x);
    if (TYPEOF(Q) != REALSXP || Rf_length(Q) != q * q)
        Rf_error("internal error: 'Q' must be q x q doubles");
    const sgfs_ranef_prior p = sgfs_ranef_prior_read(prior);
    double *work = (double *) R_alloc((size_t) (q + 2 * q * q), sizeof(double));
    sgfs_ranef_cov cv = {q, Rf_asInteger(G), REAL(Q), &p, Rf_asReal(dispersion), work};
    if (Rf_asLogical(density)) return Rf_ScalarReal(sgfs_ranef_cov_logdens(&cv, REAL(x)));
    SEXP out = PROTECT(Rf_duplicate(x));
    GetRNGstate();
    sgfs_ranef_cov_update(&cv, REAL(out));
    PutRNGstate();
    UNPROTECT(1);
    return out;
}

SEXP sgfs_ranef_translation_draw(SEXP b, SEXP c, SEXP x, SEXP beta_j, SEXP mean, SEXP sd)
{
    const int q = coords_q(x);
    if (TYPEOF(b) != REALSXP || Rf_length(b) % q != 0)
        Rf_error("internal error: 'b' must be q x G doubles");
    const int cc = Rf_asInteger(c);
    if (cc < 1 || cc > q) Rf_error("internal error: 'c' out of range");
    double *prec = (double *) R_alloc((size_t) (q + 2 * q * q), sizeof(double));
    sgfs_ranef_precision(REAL(x), q, prec, prec + q * q);
    GetRNGstate();
    const double s2 = Rf_asReal(sd) * Rf_asReal(sd);
    const double delta = sgfs_ranef_translation(REAL(b), q, Rf_length(b) / q, cc - 1, prec, 1.0 / s2,
                                                -(Rf_asReal(beta_j) - Rf_asReal(mean)) / s2);
    PutRNGstate();
    return Rf_ScalarReal(delta);
}
