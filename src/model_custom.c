/*
 * model_custom.c - a model given by R functions (custom_model(), see
 * R/models-custom.R): every evaluation calls back into R.
 *
 * The data stay in R.  xt is 1 x N and holds each example's row number
 * (1-based) in the user's data, so that the front end's column subsets of
 * xt (subset_spec, mode_gap) keep naming the right rows; y is unused.
 * lik->callback is list(score, loglik), two R closures of (theta, rows) built
 * by custom_callback(), which take the rows from the data, call the user's
 * functions and validate what they return:
 *   score  -> the n x D matrix of per-example scores g_i (double),
 *   loglik -> sum_i l_i, one double.
 * Here the score matrix is copied into G (D x n, one example per column)
 * and its column sums into sum.  theta = the user's parameters (no
 * standardisation); mpar = (D).  Minus the Hessian: central differences of
 * the score (model.c).
 *
 * Unlike the compiled models, every evaluation allocates in R (theta, the
 * row numbers, the call, and whatever the user's functions allocate): this
 * is unavoidable, and the speed is R's.  An error in the user's functions is
 * an R error: it unwinds through the engine, which holds no memory outside
 * R's heap, and ends the run.
 */
#include "sgfs.h"

enum { CALLBACK_SCORE = 0, CALLBACK_LOGLIK = 1 };

static int custom_n_par(int P, const double *mpar, int n_mpar)
{
    if (P != 1) Rf_error("internal error: a custom model's xt must have one row");
    if (n_mpar < 1 || !(mpar[0] >= 1 && mpar[0] <= INT_MAX) || mpar[0] != floor(mpar[0]))
        return -1;
    return (int) mpar[0];
}

/* the scores go straight from R's result into G: no scratch */
static R_xlen_t custom_scratch(int P, int n, const double *mpar)
{
    (void) P;
    (void) n;
    (void) mpar;
    return 0;
}

/* the value of callback `which` at theta for the examples idx[0..n-1],
   unprotected (the caller protects it at once) */
static SEXP call_back(const sgfs_lik *lik, int which, const double *theta,
                      const int *idx, int n)
{
    if (TYPEOF(lik->callback) != VECSXP || Rf_xlength(lik->callback) != 2)
        Rf_error("internal error: a custom model needs its R callbacks");
    SEXP th = PROTECT(Rf_allocVector(REALSXP, lik->D));
    memcpy(REAL(th), theta, (size_t) lik->D * sizeof(double));
    SEXP rows = PROTECT(Rf_allocVector(INTSXP, n));
    int *r = INTEGER(rows);
    for (int i = 0; i < n; i++) r[i] = (int) lik->data->xt[idx[i]];
    SEXP call = PROTECT(Rf_lang3(VECTOR_ELT(lik->callback, which), th, rows));
    SEXP out = Rf_eval(call, R_GlobalEnv);
    UNPROTECT(3);
    return out;
}

static double custom_loglik(sgfs_lik *lik, const double *theta,
                            const int *idx, int n)
{
    SEXP ll = PROTECT(call_back(lik, CALLBACK_LOGLIK, theta, idx, n));
    if (TYPEOF(ll) != REALSXP || Rf_xlength(ll) != 1)
        Rf_error("internal error: the loglik callback must return one double");
    const double value = REAL(ll)[0];
    UNPROTECT(1);
    return value;
}

static void custom_score(sgfs_lik *lik, const double *theta, const int *idx,
                         int n, double *sum, double *G, double *loglik)
{
    const int D = lik->D;
    SEXP S = PROTECT(call_back(lik, CALLBACK_SCORE, theta, idx, n));
    if (TYPEOF(S) != REALSXP || Rf_xlength(S) != (R_xlen_t) n * D)
        Rf_error("internal error: the score callback must return %d x %d doubles", n, D);
    const double *s = REAL(S);                   /* n x D, column-major */
    for (int j = 0; j < D; j++) {
        const double *col = s + (size_t) n * j;
        double acc = 0.0;
        for (int i = 0; i < n; i++) acc += col[i];
        sum[j] = acc;
        if (G)
            for (int i = 0; i < n; i++) G[j + (size_t) D * i] = col[i];
    }
    UNPROTECT(1);
    if (loglik) *loglik = custom_loglik(lik, theta, idx, n);
}

const sgfs_model sgfs_model_custom = {
    .name = "custom", .n_par = custom_n_par, .score = custom_score,
    .loglik = custom_loglik, .scratch = custom_scratch
};
