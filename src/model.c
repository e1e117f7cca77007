/*
 * model.c - full-data evaluation and the model entry point used by tests.
 *
 *   sgfs_full_score: sum_{i=1}^N g_i(theta) and sum_i l_i(theta), computed
 *     in chunks of the engine's batch size (no N x D temporary).
 *   sgfs_log_posterior: log p(theta) + sum_i l_i(theta) and its gradient
 *     (for the full-data samplers).
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
 *   sgfs_model_eval(spec, theta, idx, centre, second): for the examples
 *     idx (1-based), list(loglik = sum l_i, grad = sum g_i, scores = n x D
 *     per-example scores, logprior = log p(theta), change = the model's
 *     score_change, sum_i g_i(theta) - g_i(centre) (+ H_i(centre) (theta -
 *     centre) if second), or NULL when centre is NULL or the model has
 *     none); theta and centre on the internal scale.
 */
#include "sgfs.h"


double sgfs_full_score(sgfs_engine *e, const double *theta, double *sum)
{
    double ll = 0.0, *part = e->grad;
    int *idx = e->batch.idx;        /* a contiguous block of examples */
    /* on the compressed rows a GLM's pass reads each row's stored entries
       once (data.c): O(stored entries + P), where chunks would cost P per
       row gathered (P can be 10^5 on a wide sparse design) */
    if (e->rows_ptr != NULL && e->model->row_residual != NULL)
        return sgfs_data_glm_pass(e, theta, sum);
    for (int j = 0; j < e->D; j++) sum[j] = 0.0;
    for (int start = 0; start < e->N; start += e->n) {
        int m = e->N - start < e->n ? e->N - start : e->n;
        for (int i = 0; i < m; i++) idx[i] = start + i;
        double part_ll;
        e->model->score(e, theta, idx, m, part, NULL, &part_ll);
        for (int j = 0; j < e->D; j++) sum[j] += part[j];
        ll += part_ll;
    }
    return ll;
}

/* Adds minus the Hessian of the examples' log-likelihood to the upper
   triangle of H: the model's own, or central differences of its score,
   column j from theta +- h_j e_j (h_j = 1e-4 max(1, |theta_j|)), each pair
   (i, j) the mean of its two estimates.  Scratch: the first 2D doubles of
   e->G (2D <= D n). */
void sgfs_neg_hessian(sgfs_engine *e, const double *theta, const int *idx,
                      int n, double *H)
{
    if (e->model->neg_hessian) {
        e->model->neg_hessian(e, theta, idx, n, H);
        return;
    }
    const int D = e->D;
    double *th = e->G, *g = e->G + D;
    memcpy(th, theta, (size_t) D * sizeof(double));
    for (int j = 0; j < D; j++) {
        const double h = 1e-4 * fmax(1.0, fabs(theta[j]));
        for (int side = -1; side <= 1; side += 2) {
            th[j] = theta[j] + side * h;
            e->model->score(e, th, idx, n, g, NULL, NULL);
            const double w = -0.25 * side / h;         /* half of -dg/(2h) */
            for (int i = 0; i < D; i++)
                H[i <= j ? i + (size_t) j * D : j + (size_t) i * D] +=
                    (i == j ? 2.0 : 1.0) * w * g[i];
        }
        th[j] = theta[j];
    }
}

double sgfs_log_posterior(sgfs_engine *e, const double *theta, double *grad)
{
    if (e->hs) return sgfs_hs_log_posterior(e, theta, grad);    /* theta: xi */
    double lp = sgfs_full_score(e, theta, grad) + sgfs_prior_logdens(e, theta);
    sgfs_prior_grad_add(e, theta, grad);
    return lp;
}

/* an engine without sampler, at theta, for evaluations (prot protected);
   with the per-example scores' D x n matrix only when `scores` (a network's
   D can be 10^6: its gradient needs O(D)) */
sgfs_engine *sgfs_eval_engine(SEXP prot, SEXP spec, SEXP theta, int scores)
{
    const char *snames[] = {"theta", "iter", "sstate", ""};
    SEXP state = PROTECT(Rf_mkNamed(VECSXP, snames));
    SET_VECTOR_ELT(state, 0, theta);
    SET_VECTOR_ELT(state, 1, Rf_ScalarReal(0.0));
    SET_VECTOR_ELT(state, 2, Rf_allocVector(REALSXP, 0));
    sgfs_engine *e = sgfs_engine_setup(prot, spec, state, 0, 0, scores);
    UNPROTECT(1);
    return e;
}

SEXP sgfs_model_eval(SEXP spec, SEXP theta, SEXP idx, SEXP centre, SEXP second_order)
{
    const int second = Rf_asLogical(second_order) == TRUE;
    SEXP prot = PROTECT(sgfs_engine_alloc());
    sgfs_engine *e = sgfs_eval_engine(prot, spec, theta, 1);
    const int n = Rf_length(idx), D = e->D;
    if (TYPEOF(idx) != INTSXP || n != e->n)
        Rf_error("internal error: 'idx' must be %d integers", e->n);
    int *id = (int *) R_alloc(n, sizeof(int));
    for (int i = 0; i < n; i++) {
        const int k = INTEGER(idx)[i];             /* (NA is INT_MIN: test before - 1) */
        if (k < 1 || k > e->N) Rf_error("internal error: index out of range");
        id[i] = k - 1;
    }
    const char *names[] = {"loglik", "grad", "scores", "logprior", "change", ""};
    SEXP out = PROTECT(Rf_mkNamed(VECSXP, names));
    SEXP grad = Rf_allocVector(REALSXP, D);
    SET_VECTOR_ELT(out, 1, grad);
    e->model->score(e, e->theta, id, n, REAL(grad), e->G, NULL);
    SET_VECTOR_ELT(out, 0, Rf_ScalarReal(e->model->loglik(e, e->theta, id, n)));
    SEXP scores = Rf_allocMatrix(REALSXP, n, D);
    SET_VECTOR_ELT(out, 2, scores);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < D; j++)
            REAL(scores)[i + (size_t) n * j] = e->G[j + (size_t) D * i];
    SET_VECTOR_ELT(out, 3, Rf_ScalarReal(sgfs_prior_logdens(e, e->theta)));
    if (centre != R_NilValue && e->model->score_change) {
        if (TYPEOF(centre) != REALSXP || Rf_xlength(centre) != D)
            Rf_error("internal error: 'centre' must be %d doubles", D);
        SEXP change = Rf_allocVector(REALSXP, D);
        SET_VECTOR_ELT(out, 4, change);
        e->model->score_change(e, e->theta, REAL(centre), second, id, n, REAL(change));
    }
    UNPROTECT(2);
    return out;
}

SEXP sgfs_model_loglik(SEXP spec, SEXP theta)
{
    SEXP prot = PROTECT(sgfs_engine_alloc());
    sgfs_engine *e = sgfs_eval_engine(prot, spec, theta, 0);
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
    sgfs_engine *e = sgfs_eval_engine(prot, spec, theta, 1);
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
    for (int start = 0; start < e->N; start += e->n) {
        int m = e->N - start < e->n ? e->N - start : e->n;
        for (int i = 0; i < m; i++) idx[i] = start + i;
        double part_ll;
        e->model->score(e, e->theta, idx, m, e->grad, cov ? e->G : NULL, &part_ll);
        for (int j = 0; j < D; j++) sum[j] += e->grad[j];
        if (cov) sgfs_crossprod_add(e->G, D, m, c, D);          /* sum_i g_i g_i' */
        ll += part_ll;
        sgfs_neg_hessian(e, e->theta, idx, m, h);
    }
    /* C = (sum_i g_i g_i' - N gbar gbar') / N (NA unless with_cov) */
    if (!cov) for (size_t k = 0; k < (size_t) D * D; k++) c[k] = NA_REAL;
    else for (int j = 0; j < D; j++)
        for (int i = 0; i <= j; i++)
            c[i + (size_t) j * D] = (c[i + (size_t) j * D] - sum[i] * sum[j] / e->N) / e->N;
    sgfs_symmetrize_upper(c, D);
    sgfs_symmetrize_upper(h, D);
    SET_VECTOR_ELT(out, 0, Rf_ScalarReal(ll));
    UNPROTECT(2);
    return out;
}

SEXP sgfs_change_cov(SEXP spec, SEXP theta, SEXP centre, SEXP rows)
{
    SEXP prot = PROTECT(sgfs_engine_alloc());
    sgfs_engine *e = sgfs_eval_engine(prot, spec, theta, 1);
    const int D = e->D, m = Rf_length(rows);
    if (e->model->score_change == NULL)
        Rf_error("internal error: the model has no score_change");
    if (TYPEOF(centre) != REALSXP || Rf_xlength(centre) != D)
        Rf_error("internal error: 'centre' must be %d doubles", D);
    if (TYPEOF(rows) != INTSXP || m < 2)
        Rf_error("internal error: 'rows' must be at least two integers");
    const int *r = INTEGER(rows);
    for (int i = 0; i < m; i++)
        if (r[i] < 0 || r[i] >= e->N) Rf_error("internal error: row out of range");
    SEXP out = PROTECT(Rf_allocMatrix(REALSXP, D, D));
    double *c = REAL(out), *sum = (double *) R_alloc(D, sizeof(double));
    memset(c, 0, (size_t) D * D * sizeof(double));
    memset(sum, 0, (size_t) D * sizeof(double));
    for (int start = 0; start < m; start += e->n) {      /* e->n rows' remainders in G */
        const int k = m - start < e->n ? m - start : e->n;
        for (int i = 0; i < k; i++) {
            double *g = e->G + (size_t) i * D;
            e->model->score_change(e, e->theta, REAL(centre), 1, r + start + i, 1, g);
            for (int j = 0; j < D; j++) sum[j] += g[j];
        }
        sgfs_crossprod_add(e->G, D, k, c, D);             /* sum_i r_i r_i' */
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
    sgfs_engine data;
    memset(&data, 0, sizeof(data));
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
