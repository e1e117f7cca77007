/*
 * data.c - the design as every model, pass and check reads it.
 *
 * The engine's data are N examples u_i, the standardised rows of the
 * design, u_ij = (x_ij - c_j) / s_j, held by one of five backends:
 *   dense  xt, P x N, one example per column (design_copy.c);
 *   single xt32, the same in single precision (a raw vector of 4 P N
 *          bytes: half the memory and memory traffic; each value rounded
 *          once, relative error below 6e-8), read as doubles;
 *   rows   the compressed rows (sparse_rows.c): row i's stored entries
 *          v_ik (a column's entries that differ from its base value) and
 *          the shift m, u_i = sum_k v_ik e_k - m; made from a dense matrix
 *          or from a sparse one (a dgCMatrix, never densified) when at most
 *          half the N P entries are stored;
 *   file   a design file (design_file.c): the raw rows, mapped, each value
 *          standardised when read, as design_copy.c writes xt, so that a
 *          file gives the draws of the same data in memory;
 *   matrix the user's N x ncol double matrix itself, read in place and
 *          standardised when read like a file (no copy): while a fit or
 *          run reads it, laid out as the engine's rows (matrix_order.c),
 *          read as a file's rows; otherwise by columns, engine row i
 *          being the user's row order[i] (ncol scattered reads).
 * A spec names N and P (its fields "N" and "P") and carries xt, xt32, rows,
 * file (list(design = the R object design_file() returns, center, scale,
 * lead, prefetch)) or matrix (list(x, center, scale, lead, state)).
 * Everything reads the data through these routines (and sgfs_rows_score
 * in minibatch.c for the one-pass score), so a backend is one branch here:
 *
 *   sgfs_data_setup(e, spec)         N, P and the backend of a spec
 *   sgfs_data_columns(e, idx, n, out) u_idx[k] into column k of out (P x n)
 *   sgfs_data_dots(e, idx, n, b, out) out[k] = u_idx[k]' b
 *   sgfs_data_glm_pass(e, b, sum)     a GLM's full-data log-likelihood (returned)
 *                                     and score sum (into sum, P) on the rows:
 *                                     one pass, O(stored entries + P)
 *
 * and, for R (no engine needed):
 *   sgfs_data_xb(spec, beta)          the N values u_i' beta
 *   sgfs_data_rows_of(spec, idx)      the rows idx (1-based) as a P x m matrix
 *   sgfs_data_slice(spec, idx)        the data of the rows idx (1-based):
 *                                     list(xt, rows), the other NULL
 *   sgfs_data_xtr(spec, r)            sum_i r_i u_i (P values)
 *   sgfs_data_col_wss(spec, h)        sum_i h_i u_ij^2 for each column j
 *   sgfs_data_hess_times(spec, h, v)  sum_i h_i (u_i' v) u_i (P values)
 * The last two (a GLM's full-data score and its curvature's diagonal)
 * cost O(stored entries + P) on the rows: with u_ij = v_ij - m_j,
 *   sum_i r_i u_i    = sum_i r_i v_i - (sum_i r_i) m,
 *   sum_i h_i u_ij^2 = (sum_i h_i) m_j^2 + sum_stored h_i ((v_ij - m_j)^2 - m_j^2).
 */
#include "sgfs.h"

static int count_elt(SEXP spec, const char *name)
{
    const int v = sgfs_list_int(spec, name);
    if (v == NA_INTEGER || v < 1)
        Rf_error("internal error: the spec's '%s' must be a positive integer", name);
    return v;
}

/* the compressed rows, checked against N and P */
static void read_rows(sgfs_engine *e, SEXP rows)
{
    SEXP ptr = sgfs_list_elt(rows, "ptr"), ent = sgfs_list_elt(rows, "ent"),
        width = sgfs_list_elt(rows, "width"), shift = sgfs_list_elt(rows, "shift"),
        level = sgfs_list_elt(rows, "level");
    if (TYPEOF(ptr) != REALSXP || Rf_xlength(ptr) != (R_xlen_t) e->N + 1 ||
        TYPEOF(ent) != INTSXP || TYPEOF(width) != INTSXP || Rf_xlength(width) != 1 ||
        TYPEOF(shift) != REALSXP || Rf_xlength(shift) != e->P || TYPEOF(level) != REALSXP ||
        Rf_xlength(level) != e->P)
        Rf_error("internal error: 'rows' does not match the %d x %d design", e->P, e->N);
    const R_xlen_t words = Rf_xlength(ent);
    const double *p = REAL(ptr);
    const int *w = INTEGER(ent), wd = INTEGER(width)[0];
    if (p[0] != 0.0 || p[e->N] != (double) words || wd < 0 || wd % 2 != 0 ||
        (wd > 0 && (double) wd * e->N != (double) words))
        Rf_error("internal error: 'rows' does not match the %d x %d design", e->P, e->N);
    for (int i = 0; i < e->N; i++) {
        const double a = p[i];
        if (!(p[i + 1] >= a + 2) || fmod(a, 2.0) != 0.0 || (wd > 0 && p[i + 1] - a != wd))
            Rf_error("internal error: 'rows' has inconsistent row starts");
        const int *row = w + (size_t) a;
        if (row[0] < 0 || row[1] < 0 || row[0] > e->P || row[1] > e->P ||
            (double) sgfs_sparse_words(row[0], row[1]) > p[i + 1] - a)
            Rf_error("internal error: 'rows' has a row longer than its words");
        const int *col = row + 2 + 2 * (size_t) row[0];
        for (int k = 0; k < row[0] + row[1]; k++)
            if (col[k] < 0 || col[k] >= e->P)
                Rf_error("internal error: 'rows' has a column index out of range");
    }
    e->rows_ptr = p;
    e->rows_ent = w;
    e->rows_width = wd;
    e->rows_shift = REAL(shift);
    e->rows_level = REAL(level);
}

/* a raw backend's standardisation, checked against P (ncol raw columns) */
static void read_standardisation(sgfs_engine *e, SEXP raw, int ncol, const char *what)
{
    SEXP center = sgfs_list_elt(raw, "center"), scale = sgfs_list_elt(raw, "scale"),
        lead = sgfs_list_elt(raw, "lead");
    if (TYPEOF(lead) != LGLSXP || Rf_length(lead) != 1 || LOGICAL(lead)[0] == NA_LOGICAL ||
        ncol + LOGICAL(lead)[0] != e->P || TYPEOF(center) != REALSXP ||
        TYPEOF(scale) != REALSXP || Rf_length(center) != e->P || Rf_length(scale) != e->P)
        Rf_error("internal error: '%s' does not match the %d x %d design", what, e->P, e->N);
    e->raw_lead = LOGICAL(lead)[0];
    e->raw_center = REAL(center);
    double *inv = (double *) R_alloc((size_t) e->P, sizeof(double));
    for (int j = 0; j < e->P; j++) inv[j] = 1.0 / REAL(scale)[j];
    e->raw_inv_scale = inv;
}

/* a design file, mapped, and its standardisation, checked against N and P */
static void read_file(sgfs_engine *e, SEXP file)
{
    SEXP prefetch = sgfs_list_elt(file, "prefetch");
    int N, ncol, bytes;
    SEXP design = sgfs_list_elt(file, "design");
    const void *x = sgfs_design_file_base(design, &N, &ncol, &bytes);
    e->file_map = sgfs_design_file_map_of(design, &e->file_fd);
    if (N != e->N) Rf_error("internal error: 'file' does not match the %d x %d design", e->P, e->N);
    read_standardisation(e, file, ncol, "file");
    if (TYPEOF(prefetch) != LGLSXP || Rf_length(prefetch) != 1 ||
        LOGICAL(prefetch)[0] == NA_LOGICAL)
        Rf_error("internal error: 'file' must say whether to prefetch");
    e->file_prefetch = LOGICAL(prefetch)[0];
    e->raw_row = (size_t) ncol;
    e->raw_col = 1;
    if (bytes == 8) e->raw_x = (const double *) x;
    else e->raw_x32 = (const float *) x;
}

/* whether a matrix read in place is in the engine's layout now (its state
   environment's `engine_layout`: matrix_order.c) */
static SEXP matrix_state(SEXP matrix)
{
    SEXP state = sgfs_list_elt(matrix, "state");
    if (TYPEOF(state) != ENVSXP) Rf_error("internal error: 'matrix' has no state");
    return state;
}
static int engine_layout(SEXP matrix)
{
    SEXP v = Rf_findVarInFrame(matrix_state(matrix), Rf_install("engine_layout"));
    return TYPEOF(v) == LGLSXP && Rf_length(v) == 1 && LOGICAL(v)[0] == TRUE;
}

/* the engine's order (1-based rows) of a matrix not laid out, checked to be
   a permutation of 1..N once: the state remembers the vector checked (R
   reads a fit's rows in blocks, each call setting up the data) */
static const int *checked_order(SEXP matrix, SEXP order, int N)
{
    if (order == R_NilValue) return NULL;
    SEXP state = matrix_state(matrix), name = Rf_install("checked_order");
    if (Rf_findVarInFrame(state, name) != order) {
        if (TYPEOF(order) != INTSXP || Rf_xlength(order) != N ||
            !sgfs_is_permutation(INTEGER(order), N, R_alloc((size_t) N, 1)))
            Rf_error("internal error: 'order' must be a permutation of 1..%d", N);
        Rf_defineVar(name, order, state);
    }
    return INTEGER(order);
}

/* the user's N x ncol double matrix, read in place, and its standardisation:
   in the engine's layout (matrix_order.c), engine row i is ncol values at
   i ncol, as a design file's; else the user's, by columns, engine row i
   being the user's row order[i] (spec$order, 1-based, or i without one) */
static void read_matrix(sgfs_engine *e, SEXP matrix, SEXP order)
{
    SEXP x = sgfs_list_elt(matrix, "x");
    if (TYPEOF(x) != REALSXP || !Rf_isMatrix(x) || Rf_nrows(x) != e->N)
        Rf_error("internal error: 'matrix' must hold a double matrix of %d rows", e->N);
    read_standardisation(e, matrix, Rf_ncols(x), "matrix");
    e->raw_x = REAL_RO(x);
    if (engine_layout(matrix)) {
        e->raw_row = (size_t) Rf_ncols(x);
        e->raw_col = 1;
        return;
    }
    e->raw_row = 1;
    e->raw_col = (size_t) e->N;
    e->raw_map = checked_order(matrix, order, e->N);
}

/* starts the cache misses of a matrix read in place's row i (its values
   are ncol scattered reads; nothing for the other backends), some rows
   before they are read */
void sgfs_data_touch(const sgfs_engine *e, int i)
{
#if defined(__GNUC__)
    if (e->raw_col > 1 && e->raw_x) {
        const double *x = e->raw_x + sgfs_raw_index(e, i);
        const int ncol = e->P - e->raw_lead;
        for (int j = 0; j < ncol; j++) __builtin_prefetch(x + (size_t) j * e->raw_col, 0, 0);
    }
#else
    (void) e;
    (void) i;
#endif
}

/* u_i' beta for a raw backend's row i, summed as over a copy of u_i */
static double raw_dot(const sgfs_engine *e, int i, const double *beta)
{
    const int P = e->P, lead = e->raw_lead;
    const size_t step = e->raw_col;
    const double *c = e->raw_center, *r = e->raw_inv_scale;
    double d = 0.0;
    if (lead) d += sgfs_standardise(1.0, c[0], r[0]) * beta[0];
    if (e->raw_x) {
        const double *x = e->raw_x + sgfs_raw_index(e, i) * e->raw_row;
        for (int j = lead; j < P; j++)
            d += sgfs_standardise(x[(size_t) (j - lead) * step], c[j], r[j]) * beta[j];
    } else {
        const float *x = e->raw_x32 + (size_t) i * e->raw_row;
        for (int j = lead; j < P; j++)
            d += sgfs_standardise((double) x[(size_t) (j - lead) * step], c[j], r[j]) * beta[j];
    }
    return d;
}

/* the file backend's rows (raw_x or raw_x32), row_bytes a row */
static const void *file_rows(const sgfs_engine *e, size_t *row_bytes)
{
    *row_bytes = e->raw_row * (e->raw_x ? sizeof(double) : sizeof(float));
    return e->raw_x ? (const void *) e->raw_x : (const void *) e->raw_x32;
}

void sgfs_data_prefetch(const sgfs_engine *e, const int *idx, int n)
{
    if (!e->file_prefetch) return;
    size_t row_bytes;
    const void *x = file_rows(e, &row_bytes);
    sgfs_design_file_prefetch(x, row_bytes, idx, n);
}

/* ... of the rows from .. to - 1 (one request) */
void sgfs_data_prefetch_rows(const sgfs_engine *e, int from, int to)
{
    if (!e->file_prefetch || to <= from) return;
    size_t row_bytes;
    const void *x = file_rows(e, &row_bytes);
    sgfs_design_file_prefetch_rows(x, row_bytes, from, to);
}

/* the rows from .. to - 1, read: their pages let go */
void sgfs_data_release_rows(const sgfs_engine *e, int from, int to)
{
    if (!e->file_prefetch || to <= from) return;
    size_t row_bytes;
    const void *x = file_rows(e, &row_bytes);
    sgfs_design_file_release_rows(e->file_map, e->file_fd, x, row_bytes, from, to);
}

void sgfs_data_setup(sgfs_engine *e, SEXP spec)
{
    e->N = count_elt(spec, "N");
    e->P = count_elt(spec, "P");
    SEXP xt = sgfs_list_opt(spec, "xt"), rows = sgfs_list_opt(spec, "rows"),
        xt32 = sgfs_list_opt(spec, "xt32"), file = sgfs_list_opt(spec, "file"),
        matrix = sgfs_list_opt(spec, "matrix");
    if ((xt != R_NilValue) + (rows != R_NilValue) + (xt32 != R_NilValue) +
        (file != R_NilValue) + (matrix != R_NilValue) != 1)
        Rf_error("internal error: the spec must hold its data as one of 'xt', 'xt32', 'rows', "
                 "'file' and 'matrix'");
    if (file != R_NilValue) read_file(e, file);
    else if (matrix != R_NilValue) read_matrix(e, matrix, sgfs_list_opt(spec, "order"));
    else if (xt32 != R_NilValue) {
        if (TYPEOF(xt32) != RAWSXP ||
            (double) Rf_xlength(xt32) != 4.0 * (double) e->P * (double) e->N)
            Rf_error("internal error: 'xt32' must hold %d x %d floats", e->P, e->N);
        e->xt32 = (const float *) RAW(xt32);
    } else if (xt != R_NilValue) {
        if (TYPEOF(xt) != REALSXP || !Rf_isMatrix(xt) || Rf_nrows(xt) != e->P ||
            Rf_ncols(xt) != e->N)
            Rf_error("internal error: 'xt' must be a %d x %d double matrix", e->P, e->N);
        e->xt = REAL(xt);
    } else read_rows(e, rows);
}

void sgfs_data_columns(const sgfs_engine *e, const int *idx, int n, double *out)
{
    const int P = e->P;
    if (n > 1) sgfs_data_prefetch(e, idx, n);
    for (int i = 0; i < n; i++) {
        double *u = out + (size_t) i * P;
        if (i + SGFS_TOUCH_AHEAD < n) sgfs_data_touch(e, idx[i + SGFS_TOUCH_AHEAD]);
        if (e->xt) {
            memcpy(u, e->xt + (size_t) idx[i] * P, (size_t) P * sizeof(double));
            continue;
        }
        if (e->xt32) {
            const float *v = e->xt32 + (size_t) idx[i] * P;
            for (int j = 0; j < P; j++) u[j] = v[j];
            continue;
        }
        if (e->raw_x || e->raw_x32) {
            sgfs_raw_row(e, idx[i], u);
            continue;
        }
        for (int j = 0; j < P; j++) u[j] = -e->rows_shift[j];
        sgfs_sparse_axpy(1.0, sgfs_sparse_row(e, idx[i]), e->rows_level, u);
    }
}

void sgfs_data_dots(const sgfs_engine *e, const int *idx, int n, const double *beta,
                    double *out)
{
    const int P = e->P;
    double mb = 0.0;
    if (n > 1) sgfs_data_prefetch(e, idx, n);
    if (e->rows_ptr)
        for (int j = 0; j < P; j++) mb += e->rows_shift[j] * beta[j];
    for (int i = 0; i < n; i++) {
        if (e->xt) {
            const double *u = e->xt + (size_t) idx[i] * P;
            double s = 0.0;
            for (int j = 0; j < P; j++) s += u[j] * beta[j];
            out[i] = s;
        } else if (e->xt32) {
            const float *u = e->xt32 + (size_t) idx[i] * P;
            double s = 0.0;
            for (int j = 0; j < P; j++) s += (double) u[j] * beta[j];
            out[i] = s;
        } else if (e->raw_x || e->raw_x32) {
            out[i] = raw_dot(e, idx[i], beta);
        } else {
            out[i] = sgfs_sparse_dot(sgfs_sparse_row(e, idx[i]), e->rows_level, beta) - mb;
        }
    }
}

double sgfs_data_glm_pass(const sgfs_engine *e, const double *beta, double *sum)
{
    const int P = e->P;
    double mb = 0.0, ll = 0.0, r_sum = 0.0;
    for (int j = 0; j < P; j++) {
        mb += e->rows_shift[j] * beta[j];
        sum[j] = 0.0;
    }
    for (int i = 0; i < e->N; i++) {
        const sgfs_sparse q = sgfs_sparse_row(e, i);
        const double eta = sgfs_sparse_dot(q, e->rows_level, beta) - mb + sgfs_row_offset(e, i);
        const double r = e->model->row_residual(e, i, eta);
        ll += e->model->row_loglik(e, i, eta);
        sgfs_sparse_axpy(r, q, e->rows_level, sum);
        r_sum += r;
    }
    for (int j = 0; j < P; j++) sum[j] -= r_sum * e->rows_shift[j];
    return ll;
}

/* an engine holding only a spec's data (for the R entry points) */
static void data_only(sgfs_engine *e, SEXP spec)
{
    memset(e, 0, sizeof(*e));
    sgfs_data_setup(e, spec);
}

/* 0-based row numbers from R's 1-based idx, checked */
static int *zero_based(SEXP idx, int N)
{
    if (TYPEOF(idx) != INTSXP) Rf_error("internal error: 'idx' must be integers");
    const int m = Rf_length(idx);
    int *r = (int *) R_alloc(m > 0 ? (size_t) m : 1, sizeof(int));
    for (int i = 0; i < m; i++) {
        const int v = INTEGER(idx)[i];
        if (v == NA_INTEGER || v < 1 || v > N) Rf_error("internal error: 'idx' out of range");
        r[i] = v - 1;
    }
    return r;
}

SEXP sgfs_data_xb(SEXP spec, SEXP beta)
{
    sgfs_engine e;
    data_only(&e, spec);
    if (TYPEOF(beta) != REALSXP || Rf_xlength(beta) < e.P)
        Rf_error("internal error: 'beta' must be at least %d doubles", e.P);
    SEXP out = PROTECT(Rf_allocVector(REALSXP, e.N));
    const int block = 4096;
    int *idx = (int *) R_alloc(block, sizeof(int));
    for (int start = 0; start < e.N; start += block) {
        const int m = e.N - start < block ? e.N - start : block;
        for (int i = 0; i < m; i++) idx[i] = start + i;
        sgfs_data_dots(&e, idx, m, REAL(beta), REAL(out) + start);
    }
    UNPROTECT(1);
    return out;
}

SEXP sgfs_data_rows_of(SEXP spec, SEXP idx)
{
    sgfs_engine e;
    data_only(&e, spec);
    const int m = Rf_length(idx);
    const int *r = zero_based(idx, e.N);
    SEXP out = PROTECT(Rf_allocMatrix(REALSXP, e.P, m));
    sgfs_data_columns(&e, r, m, REAL(out));
    UNPROTECT(1);
    return out;
}

SEXP sgfs_data_slice(SEXP spec, SEXP idx)
{
    sgfs_engine e;
    data_only(&e, spec);
    const int m = Rf_length(idx);
    if (m < 1) Rf_error("internal error: 'idx' is empty");
    const int *r = zero_based(idx, e.N);
    const char *names[] = {"xt", "rows", "xt32", ""};
    SEXP out = PROTECT(Rf_mkNamed(VECSXP, names));
    if (e.xt || e.raw_x || e.raw_x32) {       /* (raw rows: a copy in memory) */
        SEXP xt = Rf_allocMatrix(REALSXP, e.P, m);
        SET_VECTOR_ELT(out, 0, xt);
        sgfs_data_columns(&e, r, m, REAL(xt));
        UNPROTECT(1);
        return out;
    }
    if (e.xt32) {
        SEXP xt32 = Rf_allocVector(RAWSXP, 4 * (R_xlen_t) e.P * m);
        SET_VECTOR_ELT(out, 2, xt32);
        float *to = (float *) RAW(xt32);
        for (int i = 0; i < m; i++)
            memcpy(to + (size_t) i * e.P, e.xt32 + (size_t) r[i] * e.P,
                   (size_t) e.P * sizeof(float));
        UNPROTECT(1);
        return out;
    }
    /* the rows keep their words (and padding) as stored */
    R_xlen_t total = 0;
    for (int i = 0; i < m; i++) total += sgfs_sparse_row_words(&e, r[i]);
    const char *row_names[] = {"ptr", "ent", "width", "shift", "level", ""};
    SEXP rows = Rf_mkNamed(VECSXP, row_names);
    SET_VECTOR_ELT(out, 1, rows);
    SEXP ptr = Rf_allocVector(REALSXP, (R_xlen_t) m + 1);
    SET_VECTOR_ELT(rows, 0, ptr);
    SEXP ent = Rf_allocVector(INTSXP, total);
    SET_VECTOR_ELT(rows, 1, ent);
    SET_VECTOR_ELT(rows, 2, Rf_ScalarInteger(e.rows_width));
    SET_VECTOR_ELT(rows, 3, Rf_allocVector(REALSXP, e.P));
    memcpy(REAL(VECTOR_ELT(rows, 3)), e.rows_shift, (size_t) e.P * sizeof(double));
    SET_VECTOR_ELT(rows, 4, Rf_allocVector(REALSXP, e.P));
    memcpy(REAL(VECTOR_ELT(rows, 4)), e.rows_level, (size_t) e.P * sizeof(double));
    double *p = REAL(ptr);
    int *to = INTEGER(ent);
    R_xlen_t at = 0;
    for (int i = 0; i < m; i++) {
        const R_xlen_t len = sgfs_sparse_row_words(&e, r[i]);
        p[i] = (double) at;
        memcpy(to + at, sgfs_sparse_start(&e, r[i]), (size_t) len * sizeof(int));
        at += len;
    }
    p[m] = (double) at;
    UNPROTECT(1);
    return out;
}

/* sum_i w_i u_i (squares = 0) or sum_i w_i u_ij^2 for each column j
   (squares = 1): on the rows, u_ij = v_ij - m_j over the stored entries
   and -m_j elsewhere, so the unstored part is (sum_i w_i) (-m_j)^p */
static SEXP weighted_column_sums(SEXP spec, SEXP weights, int squares)
{
    sgfs_engine e;
    data_only(&e, spec);
    if (TYPEOF(weights) != REALSXP || Rf_xlength(weights) != e.N)
        Rf_error("internal error: the row weights must be %d doubles", e.N);
    const double *w = REAL(weights);
    SEXP out = PROTECT(Rf_allocVector(REALSXP, e.P));
    double *s = REAL(out);
    memset(s, 0, (size_t) e.P * sizeof(double));
    double total = 0.0, *row = (double *) R_alloc((size_t) e.P, sizeof(double));
    for (int i = 0; i < e.N; i++) {
        if (!e.rows_ptr) {
            sgfs_data_columns(&e, &i, 1, row);
            for (int j = 0; j < e.P; j++) s[j] += w[i] * (squares ? row[j] * row[j] : row[j]);
            continue;
        }
        const sgfs_sparse q = sgfs_sparse_row(&e, i);
        for (int k = 0; k < q.n; k++) {
            const int j = q.col[k];
            const double v = sgfs_sparse_value(q, k, e.rows_level), m = e.rows_shift[j],
                d = v - m;
            /* the stored entry's part less the part the correction adds */
            s[j] += w[i] * (squares ? d * d - m * m : v);
        }
        total += w[i];
    }
    if (e.rows_ptr)
        for (int j = 0; j < e.P; j++)
            s[j] += total * (squares ? e.rows_shift[j] * e.rows_shift[j] : -e.rows_shift[j]);
    UNPROTECT(1);
    return out;
}

/* sum_i h_i (u_i' v) u_i, a GLM's curvature (less the prior's) times v:
   one pass over the rows (on the compressed rows, with c_i = h_i u_i' v,
   sum_i c_i v_i - (sum_i c_i) m), or over blocks of them gathered (their
   products by BLAS) */
SEXP sgfs_data_hess_times(SEXP spec, SEXP h, SEXP v)
{
    sgfs_engine e;
    data_only(&e, spec);
    if (TYPEOF(h) != REALSXP || Rf_xlength(h) != e.N || TYPEOF(v) != REALSXP ||
        Rf_xlength(v) < e.P)
        Rf_error("internal error: the row curvatures must be %d doubles and v %d", e.N, e.P);
    const double *w = REAL(h), *b = REAL(v);
    const int P = e.P;
    SEXP out = PROTECT(Rf_allocVector(REALSXP, P));
    double *s = REAL(out);
    memset(s, 0, (size_t) P * sizeof(double));
    if (e.rows_ptr) {
        double mb = 0.0, c_sum = 0.0;
        for (int j = 0; j < P; j++) mb += e.rows_shift[j] * b[j];
        for (int i = 0; i < e.N; i++) {
            const sgfs_sparse q = sgfs_sparse_row(&e, i);
            const double c = w[i] * (sgfs_sparse_dot(q, e.rows_level, b) - mb);
            sgfs_sparse_axpy(c, q, e.rows_level, s);
            c_sum += c;
        }
        for (int j = 0; j < P; j++) s[j] -= c_sum * e.rows_shift[j];
        UNPROTECT(1);
        return out;
    }
    const int block = 1024;
    int *idx = (int *) R_alloc(block, sizeof(int));
    double *buf = (double *) R_alloc((size_t) P * block, sizeof(double)),
        *d = (double *) R_alloc(block, sizeof(double)), *part = (double *) R_alloc((size_t) P, sizeof(double));
    for (int start = 0; start < e.N; start += block) {
        const int m = e.N - start < block ? e.N - start : block;
        for (int i = 0; i < m; i++) idx[i] = start + i;
        const double *xb = buf;
        if (e.xt) xb = e.xt + (size_t) start * P;        /* (contiguous: read where it is) */
        else sgfs_data_columns(&e, idx, m, buf);
        sgfs_xt_beta(xb, P, m, b, d);
        for (int i = 0; i < m; i++) d[i] *= w[start + i];
        sgfs_x_r(xb, P, m, d, part);
        for (int j = 0; j < P; j++) s[j] += part[j];
    }
    UNPROTECT(1);
    return out;
}

SEXP sgfs_data_xtr(SEXP spec, SEXP r)
{
    return weighted_column_sums(spec, r, 0);
}

SEXP sgfs_data_col_wss(SEXP spec, SEXP h)
{
    return weighted_column_sums(spec, h, 1);
}

/* A fit's handle on its data (R/data-access.R): a weak reference whose key
   is an environment the fit keeps, so the data live as long as a fit
   refers to them; serialize() writes a weak reference empty, so a saved
   fit holds its draws, not its data. */
SEXP sgfs_weakref(SEXP key, SEXP value)
{
    if (TYPEOF(key) != ENVSXP) Rf_error("internal error: a handle's key must be an environment");
    return R_MakeWeakRef(key, value, R_NilValue, FALSE);
}

SEXP sgfs_weakref_value(SEXP ref)
{
    if (TYPEOF(ref) != WEAKREFSXP) return R_NilValue;
    return R_WeakRefValue(ref);
}
