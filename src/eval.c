/*
 * eval.c - the .Call entry points that evaluate a model at given
 * parameters on the spec's data, for R (the mode, Laplace approximations,
 * checks, tests): each sets up an evaluation engine (sgfs_eval_engine in
 * engine.c: data, model, prior and scratch, no chain), or the rows'
 * leverage only the data, and calls the model's evaluations (model.c).
 *
 *   sgfs_model_eval(spec, theta, idx, centre, second): for the examples
 *     idx (1-based), list(loglik = sum l_i, grad = sum g_i, scores = n x D
 *     per-example scores, logprior = log p(theta), change = the model's
 *     score_change, sum_i g_i(theta) - g_i(centre) (+ H_i(centre) (theta -
 *     centre) if second), or NULL when centre is NULL or the model has
 *     none); theta and centre on the internal scale.
 *   sgfs_model_loglik(spec, theta): the full-data log-likelihood and score.
 *   sgfs_model_curvature(spec, theta, with_cov): full-data log-likelihood,
 *     score sum, minus the Hessian H = -sum_i d^2 l_i and (if with_cov) the
 *     per-example score covariance C = (1/N) sum_i (g_i - gbar)(g_i - gbar)',
 *     in chunks (the mode's Newton steps, OSGFS, mass matrices).
 *   sgfs_change_cov(spec, theta, centre, rows): the covariance (1/m) sum_i
 *     (r_i - rbar)(r_i - rbar)' over the m given rows (0-based) of their
 *     second-order control-variate remainders r_i = g_i(theta) - g_i(centre)
 *     + H_i(centre)(theta - centre) (the model's score_change, row by row):
 *     the noise of OSGFS's minibatch gradient with control variates.
 *   sgfs_row_leverage(spec, U, P1): q_i = |U1'^{-1} u_i|^2 for every row u_i
 *     of the design, U1 the leading P1 x P1 block of the upper triangular U
 *     (or, if U is a vector, u_ij / U_j): the rows' Mahalanobis lengths in
 *     the posterior's whitened coordinates, in blocks (dtrsm).
 *   sgfs_row_derivs(spec, theta, shift, cls): every row's linear predictor
 *     eta_i (offsets included) and, at eta_i + shift_ik for each column k of
 *     shift (N x k, or one value for every row), the model's row_derivs:
 *     d1 = w_i dl_i/deta, d2 = -w_i d^2 l_i/deta^2 and, for the coordinate
 *     a after beta (if theta has one), cross = -w_i d^2 l_i/deta da and
 *     aux = -sum_i w_i d^2 l_i/da^2 (NULL without); N x k matrices (aux k
 *     values) for a matrix shift.  For a model of several predictors a row
 *     (categorical), cls >= 1: eta_i is class cls's predictor and d1, d2
 *     the derivatives along the line that moves it alone (line_derivs).
 *   sgfs_hs_eval(spec, xi): the full-data log posterior with a horseshoe.
 *   sgfs_line_logdens(...): the density along a separated level's line.
 */
#include "sgfs.h"

SEXP sgfs_model_eval(SEXP spec, SEXP theta, SEXP idx, SEXP centre, SEXP second_order)
{
    const int second = Rf_asLogical(second_order) == TRUE;
    SEXP prot = PROTECT(sgfs_engine_alloc());
    const int n = Rf_length(idx);
    if (TYPEOF(idx) != INTSXP || n < 1)
        Rf_error("internal error: 'idx' must be integers");
    sgfs_engine *e = sgfs_eval_engine(prot, spec, theta, n, 1);
    const int D = e->D;
    int *id = (int *) R_alloc(n, sizeof(int));
    for (int i = 0; i < n; i++) {
        const int k = INTEGER(idx)[i];             /* (NA is INT_MIN: test before - 1) */
        if (k < 1 || k > e->data.N) Rf_error("internal error: index out of range");
        id[i] = k - 1;
    }
    const char *names[] = {"loglik", "grad", "scores", "logprior", "change", ""};
    SEXP out = PROTECT(Rf_mkNamed(VECSXP, names));
    SEXP grad = Rf_allocVector(REALSXP, D);
    SET_VECTOR_ELT(out, 1, grad);
    e->lik.model->score(&e->lik, e->theta, id, n, REAL(grad), e->lik.G, NULL);
    SET_VECTOR_ELT(out, 0, Rf_ScalarReal(e->lik.model->loglik(&e->lik, e->theta, id, n)));
    SEXP scores = Rf_allocMatrix(REALSXP, n, D);
    SET_VECTOR_ELT(out, 2, scores);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < D; j++)
            REAL(scores)[i + (size_t) n * j] = e->lik.G[j + (size_t) D * i];
    SET_VECTOR_ELT(out, 3, Rf_ScalarReal(sgfs_prior_logdens(&e->prior, e->theta)));
    if (centre != R_NilValue && e->lik.model->score_change) {
        if (TYPEOF(centre) != REALSXP || Rf_xlength(centre) != D)
            Rf_error("internal error: 'centre' must be %d doubles", D);
        SEXP change = Rf_allocVector(REALSXP, D);
        SET_VECTOR_ELT(out, 4, change);
        e->lik.model->score_change(&e->lik, e->theta, REAL(centre), second, id, n, REAL(change));
    }
    UNPROTECT(2);
    return out;
}

SEXP sgfs_model_loglik(SEXP spec, SEXP theta)
{
    SEXP prot = PROTECT(sgfs_engine_alloc());
    sgfs_engine *e = sgfs_eval_engine(prot, spec, theta, 0, 0);
    const char *names[] = {"loglik", "grad", ""};
    SEXP out = PROTECT(Rf_mkNamed(VECSXP, names));
    SEXP grad = Rf_allocVector(REALSXP, e->D);
    SET_VECTOR_ELT(out, 1, grad);
    SET_VECTOR_ELT(out, 0, Rf_ScalarReal(sgfs_full_score(e, e->theta, REAL(grad))));
    UNPROTECT(2);
    return out;
}

SEXP sgfs_model_curvature(SEXP spec, SEXP theta, SEXP with_cov)
{
    const int cov = Rf_asLogical(with_cov) == TRUE;
    SEXP prot = PROTECT(sgfs_engine_alloc());
    sgfs_engine *e = sgfs_eval_engine(prot, spec, theta, 0, 1);
    const int D = e->D;
    const char *names[] = {"loglik", "grad", "neg_hessian", "score_cov", ""};
    SEXP out = PROTECT(Rf_mkNamed(VECSXP, names));
    SEXP grad = Rf_allocVector(REALSXP, D);
    SET_VECTOR_ELT(out, 1, grad);                /* protected from here on */
    SEXP H = Rf_allocMatrix(REALSXP, D, D);
    SET_VECTOR_ELT(out, 2, H);
    SEXP C = Rf_allocMatrix(REALSXP, D, D);
    SET_VECTOR_ELT(out, 3, C);
    double *sum = REAL(grad), *h = REAL(H), *c = REAL(C), ll = 0.0;
    memset(sum, 0, (size_t) D * sizeof(double));
    memset(h, 0, (size_t) D * D * sizeof(double));
    memset(c, 0, (size_t) D * D * sizeof(double));
    int *idx = e->batch.idx;
    for (int start = 0; start < e->data.N; start += e->n) {
        int m = e->data.N - start < e->n ? e->data.N - start : e->n;
        for (int i = 0; i < m; i++) idx[i] = start + i;
        double part_ll;
        e->lik.model->score(&e->lik, e->theta, idx, m, e->grad, cov ? e->lik.G : NULL, &part_ll);
        for (int j = 0; j < D; j++) sum[j] += e->grad[j];
        if (cov) sgfs_crossprod_add(e->lik.G, D, m, c, D);          /* sum_i g_i g_i' */
        ll += part_ll;
        sgfs_neg_hessian(&e->lik, e->theta, idx, m, h);
    }
    /* C = (sum_i g_i g_i' - N gbar gbar') / N (NA unless with_cov) */
    if (!cov) for (size_t k = 0; k < (size_t) D * D; k++) c[k] = NA_REAL;
    else for (int j = 0; j < D; j++)
        for (int i = 0; i <= j; i++)
            c[i + (size_t) j * D] = (c[i + (size_t) j * D] - sum[i] * sum[j] / e->data.N) / e->data.N;
    sgfs_symmetrize_upper(c, D);
    sgfs_symmetrize_upper(h, D);
    SET_VECTOR_ELT(out, 0, Rf_ScalarReal(ll));
    UNPROTECT(2);
    return out;
}

SEXP sgfs_change_cov(SEXP spec, SEXP theta, SEXP centre, SEXP rows)
{
    SEXP prot = PROTECT(sgfs_engine_alloc());
    sgfs_engine *e = sgfs_eval_engine(prot, spec, theta, 0, 1);
    const int D = e->D, m = Rf_length(rows);
    if (e->lik.model->score_change == NULL)
        Rf_error("internal error: the model has no score_change");
    if (TYPEOF(centre) != REALSXP || Rf_xlength(centre) != D)
        Rf_error("internal error: 'centre' must be %d doubles", D);
    if (TYPEOF(rows) != INTSXP || m < 2)
        Rf_error("internal error: 'rows' must be at least two integers");
    const int *r = INTEGER(rows);
    for (int i = 0; i < m; i++)
        if (r[i] < 0 || r[i] >= e->data.N) Rf_error("internal error: row out of range");
    SEXP out = PROTECT(Rf_allocMatrix(REALSXP, D, D));
    double *c = REAL(out), *sum = (double *) R_alloc(D, sizeof(double));
    memset(c, 0, (size_t) D * D * sizeof(double));
    memset(sum, 0, (size_t) D * sizeof(double));
    for (int start = 0; start < m; start += e->n) {      /* e->n rows' remainders in G */
        const int k = m - start < e->n ? m - start : e->n;
        for (int i = 0; i < k; i++) {
            double *g = e->lik.G + (size_t) i * D;
            e->lik.model->score_change(&e->lik, e->theta, REAL(centre), 1, r + start + i, 1, g);
            for (int j = 0; j < D; j++) sum[j] += g[j];
        }
        sgfs_crossprod_add(e->lik.G, D, k, c, D);             /* sum_i r_i r_i' */
    }
    for (int j = 0; j < D; j++)
        for (int i = 0; i <= j; i++)
            c[i + (size_t) j * D] = (c[i + (size_t) j * D] - sum[i] * sum[j] / m) / m;
    sgfs_symmetrize_upper(c, D);
    UNPROTECT(2);
    return out;
}

SEXP sgfs_row_leverage(SEXP spec, SEXP U, SEXP P1)
{
    sgfs_data data;
    sgfs_data_setup(&data, spec);
    const int P = data.P, N = data.N, p = Rf_asInteger(P1);
    const int dense = Rf_isMatrix(U);
    if (TYPEOF(U) != REALSXP || p != P || (dense ? Rf_nrows(U) < p : Rf_xlength(U) < p))
        Rf_error("internal error: leverage needs a P x P factor or P scales");
    const int ld = dense ? Rf_nrows(U) : 0, block = 512;
    const double *u = REAL(U);
    SEXP out = PROTECT(Rf_allocVector(REALSXP, N));
    double *q = REAL(out);
    double *buf = (double *) R_alloc((size_t) P * block, sizeof(double));
    int *idx = (int *) R_alloc(block, sizeof(int));
    /* the leading block of U, contiguous (dtrsm's leading dimension P) */
    double *u1 = dense ? (double *) R_alloc((size_t) P * P, sizeof(double)) : NULL;
    if (dense)
        for (int j = 0; j < P; j++)
            memcpy(u1 + (size_t) j * P, u + (size_t) j * ld, (size_t) P * sizeof(double));
    if (!dense && data.rows_ptr != NULL) {
        /* a diagonal metric on the compressed rows: u_ij = v_ij - m_j, so
           q_i = sum_j (m_j / s_j)^2 + sum over the stored entries of
           ((v - m_j)^2 - m_j^2) / s_j^2, without a pass over P per row */
        double base = 0.0;
        for (int j = 0; j < P; j++) base += (data.rows_shift[j] / u[j]) * (data.rows_shift[j] / u[j]);
        for (int i = 0; i < N; i++) {
            const sgfs_sparse e = sgfs_sparse_row(&data, i);
            double s = base;
            for (int k = 0; k < e.n; k++) {
                const int j = e.col[k];
                const double mj = data.rows_shift[j] / u[j],
                    vj = sgfs_sparse_value(e, k, data.rows_level) / u[j];
                s += (vj - mj) * (vj - mj) - mj * mj;
            }
            q[i] = s;
        }
        UNPROTECT(1);
        return out;
    }
    for (int start = 0; start < N; start += block) {
        const int m = N - start < block ? N - start : block;
        for (int i = 0; i < m; i++) idx[i] = start + i;
        sgfs_data_columns(&data, idx, m, buf);
        if (dense) sgfs_upper_t_solve_columns(u1, P, m, buf);
        else for (int i = 0; i < m; i++)
                 for (int j = 0; j < P; j++) buf[j + (size_t) i * P] /= u[j];
        for (int i = 0; i < m; i++) {
            double s = 0.0;
            const double *b = buf + (size_t) i * P;
            for (int j = 0; j < P; j++) s += b[j] * b[j];
            q[start + i] = s;
        }
    }
    UNPROTECT(1);
    return out;
}

/* N values a row and shift: an N x k matrix, or N values for one shift */
static SEXP per_shift(int matrix, int N, int k)
{
    return matrix ? Rf_allocMatrix(REALSXP, N, k) : Rf_allocVector(REALSXP, N);
}

SEXP sgfs_row_derivs(SEXP spec, SEXP theta, SEXP shift, SEXP class_)
{
    SEXP prot = PROTECT(sgfs_engine_alloc());
    sgfs_engine *e = sgfs_eval_engine(prot, spec, theta, 0, 0);
    const sgfs_model *model = e->lik.model;
    const int N = e->data.N, P = e->data.P, cls = Rf_asInteger(class_);
    const int K1 = model->line_derivs ? e->D / P : 1;       /* predictors a row */
    if (cls == NA_INTEGER || (model->line_derivs ? cls < 1 || cls > K1 : cls != 0))
        Rf_error("internal error: 'cls' must be %s", model->line_derivs ? "a class" : "0");
    if (model->row_derivs == NULL && model->line_derivs == NULL)
        Rf_error("internal error: the %s model has no row derivatives", model->name);
    const int matrix = Rf_isMatrix(shift), k_shift = matrix ? Rf_ncols(shift) : 1,
              by_row = matrix || Rf_xlength(shift) != 1;
    if (TYPEOF(shift) != REALSXP || k_shift < 1 ||
        (by_row && Rf_xlength(shift) != (R_xlen_t) N * k_shift))
        Rf_error("internal error: 'shift' must be one double or %d rows", N);
    const char *names[] = {"eta", "d1", "d2", "cross", "aux", ""};
    const int has_aux = model->row_derivs && e->D > P;
    SEXP out = PROTECT(Rf_mkNamed(VECSXP, names));
    double *eta = REAL(SET_VECTOR_ELT(out, 0, Rf_allocVector(REALSXP, N)));
    double *d1 = REAL(SET_VECTOR_ELT(out, 1, per_shift(matrix, N, k_shift)));
    double *d2 = REAL(SET_VECTOR_ELT(out, 2, per_shift(matrix, N, k_shift)));
    double *cross = has_aux ? REAL(SET_VECTOR_ELT(out, 3, per_shift(matrix, N, k_shift))) : NULL;
    double *aux = has_aux ? REAL(SET_VECTOR_ELT(out, 4, Rf_allocVector(REALSXP, k_shift))) : NULL;
    for (int k = 0; aux && k < k_shift; k++) aux[k] = 0.0;
    const double *s = REAL(shift);
    int *idx = e->batch.idx;
    /* a chunk's K1 predictors (the line models' only), row by row K1 apart */
    double *lp = model->line_derivs
        ? (double *) R_alloc((size_t) e->n * K1, sizeof(double)) : NULL;
    double d[4];
    for (int start = 0; start < N; start += e->n) {
        const int m = N - start < e->n ? N - start : e->n;
        for (int i = 0; i < m; i++) idx[i] = start + i;
        if (lp) {
            for (int c = 0; c < K1; c++) {
                sgfs_data_dots(&e->data, idx, m, e->theta + (size_t) c * P, eta + start);
                for (int i = 0; i < m; i++) lp[(size_t) i * K1 + c] = eta[start + i];
            }
            for (int i = 0; i < m; i++) eta[start + i] = lp[(size_t) i * K1 + cls - 1];
        } else
            sgfs_data_dots(&e->data, idx, m, e->theta, eta + start);
        for (int i = 0; i < m; i++) {
            const int row = start + i;
            if (!lp && e->data.offset) eta[row] += e->data.offset[row];
            for (int k = 0; k < k_shift; k++) {
                const size_t at = (size_t) k * N + row;
                const double t = by_row ? s[at] : s[0];
                if (lp) model->line_derivs(&e->lik, row, lp + (size_t) i * K1, 1, cls, t, d);
                else model->row_derivs(&e->lik, e->theta, row, eta[row] + t, d);
                d1[at] = d[0];
                d2[at] = d[1];
                if (has_aux) {
                    cross[at] = d[2];
                    aux[k] += d[3];
                }
            }
        }
    }
    UNPROTECT(2);
    return out;
}

/* sgfs_hs_eval(spec, xi): list(value, grad, beta) of the full-data log
   posterior (R: the mode, the curvature, checks) */
SEXP sgfs_hs_eval(SEXP spec, SEXP xi)
{
    SEXP prot = PROTECT(sgfs_engine_alloc());
    SEXP hs = sgfs_list_elt(spec, "hs");
    const int D_model = Rf_length(xi) - Rf_length(sgfs_list_elt(hs, "idx")) - 2;
    if (TYPEOF(xi) != REALSXP || D_model < 1)
        Rf_error("internal error: 'xi' must be doubles, the sampler's coordinates");
    SEXP beta0 = PROTECT(Rf_allocVector(REALSXP, D_model));
    memcpy(REAL(beta0), REAL(xi), (size_t) D_model * sizeof(double));
    sgfs_engine *e = sgfs_eval_engine(prot, spec, beta0, 0, 1);
    SEXP raw = PROTECT(Rf_allocVector(RAWSXP, sizeof(sgfs_hs)));
    sgfs_hs_setup(e, hs, raw, (double *) R_alloc(3 * (size_t) e->D, sizeof(double)));
    if (Rf_length(xi) != e->Ds) Rf_error("internal error: 'xi' has the wrong length");
    const char *names[] = {"value", "grad", "beta", "report", ""};
    SEXP out = PROTECT(Rf_mkNamed(VECSXP, names));
    SEXP grad = Rf_allocVector(REALSXP, e->Ds);
    SET_VECTOR_ELT(out, 1, grad);
    /* e->grad (D) is sgfs_full_score's scratch; the sum goes to grad (Ds) */
    SET_VECTOR_ELT(out, 0, Rf_ScalarReal(sgfs_log_posterior(e, REAL(xi), REAL(grad))));
    SEXP beta = Rf_allocVector(REALSXP, e->D);
    SET_VECTOR_ELT(out, 2, beta);
    memcpy(REAL(beta), e->hs->beta, (size_t) e->D * sizeof(double));
    SEXP report = Rf_allocVector(REALSXP, e->Ds);
    SET_VECTOR_ELT(out, 3, report);
    sgfs_hs_report(e->hs, REAL(xi), REAL(beta), REAL(report));
    UNPROTECT(4);
    return out;
}

/* .Call: f(t) at each t along the line theta + t dir through the rows
   (1-based in R, 0-based here) of spec's data, moving linear predictor cls
   (a categorical model's, see line_loglik; ignored with one), for R's
   choice of the slice widths (R/separation.R): the same density the
   updates sample */
SEXP sgfs_line_logdens(SEXP spec, SEXP theta, SEXP dir, SEXP rows, SEXP cls, SEXP t)
{
    SEXP prot = PROTECT(sgfs_engine_alloc());
    sgfs_engine *e = sgfs_eval_engine(prot, spec, theta, 0, 0);
    const int n_lp = sgfs_separated_predictors(e);
    if (n_lp < 1)
        Rf_error("internal error: the line's density needs a GLM with a linear predictor");
    if (TYPEOF(dir) != REALSXP || Rf_xlength(dir) != e->D || TYPEOF(rows) != INTSXP ||
        TYPEOF(t) != REALSXP)
        Rf_error("internal error: 'dir' must be D doubles, 'rows' ints and 't' doubles");
    const int c = Rf_asInteger(cls);
    if (c == NA_INTEGER || c < 0 || c > n_lp)
        Rf_error("internal error: 'cls' must be in 0..%d", n_lp);
    const int m = Rf_length(rows);
    const int *r = INTEGER(rows);
    for (int i = 0; i < m; i++)
        if (r[i] == NA_INTEGER || r[i] < 0 || r[i] >= e->data.N)
            Rf_error("internal error: 'rows' out of range");
    const double *v = REAL(dir);
    for (int j = 0; j < e->D; j++)
        if (!R_FINITE(v[j])) Rf_error("internal error: 'dir' is not finite");
    const R_xlen_t n_t = Rf_xlength(t);
    SEXP out = PROTECT(Rf_allocVector(REALSXP, n_t));
    sgfs_separated_line_logdens(e, r, m, c, v, REAL(t), n_t, REAL(out));
    UNPROTECT(2);
    return out;
}
