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
 * file (list(design = the R object design_file() returns, center,
 * inv_scale, lead, prefetch)) or matrix (list(x, center, inv_scale, lead,
 * state)), inv_scale being the scales' reciprocals.  An engine outlives
 * the .Call that set it up: what it reads lives in the spec (kept by the
 * R caller for the run), never in R_alloc'ed memory, which is freed, and
 * reused, when that .Call returns.
 * Everything reads the data through these routines (and sgfs_rows_score
 * in minibatch.c for the one-pass score), so a backend is one branch here:
 *
 *   sgfs_data_setup(d, spec)          N, P, the backend, y, offsets, weights
 *   sgfs_data_columns(d, idx, n, out) u_idx[k] into column k of out (P x n)
 *   sgfs_data_dots(d, idx, n, b, out) out[k] = u_idx[k]' b
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
static void read_rows(sgfs_data *d, SEXP rows)
{
    SEXP ptr = sgfs_list_elt(rows, "ptr"), ent = sgfs_list_elt(rows, "ent"),
        width = sgfs_list_elt(rows, "width"), shift = sgfs_list_elt(rows, "shift"),
        level = sgfs_list_elt(rows, "level");
    if (TYPEOF(ptr) != REALSXP || Rf_xlength(ptr) != (R_xlen_t) d->N + 1 ||
        TYPEOF(ent) != INTSXP || TYPEOF(width) != INTSXP || Rf_xlength(width) != 1 ||
        TYPEOF(shift) != REALSXP || Rf_xlength(shift) != d->P || TYPEOF(level) != REALSXP ||
        Rf_xlength(level) != d->P)
        Rf_error("internal error: 'rows' does not match the %d x %d design", d->P, d->N);
    const R_xlen_t words = Rf_xlength(ent);
    const double *p = REAL(ptr);
    const int *w = INTEGER(ent), wd = INTEGER(width)[0];
    if (p[0] != 0.0 || p[d->N] != (double) words || wd < 0 || wd % 2 != 0 ||
        (wd > 0 && (double) wd * d->N != (double) words))
        Rf_error("internal error: 'rows' does not match the %d x %d design", d->P, d->N);
    for (int i = 0; i < d->N; i++) {
        const double a = p[i];
        if (!(p[i + 1] >= a + 2) || fmod(a, 2.0) != 0.0 || (wd > 0 && p[i + 1] - a != wd))
            Rf_error("internal error: 'rows' has inconsistent row starts");
        const int *row = w + (size_t) a;
        if (row[0] < 0 || row[1] < 0 || row[0] > d->P || row[1] > d->P ||
            (double) sgfs_sparse_words(row[0], row[1]) > p[i + 1] - a)
            Rf_error("internal error: 'rows' has a row longer than its words");
        const int *col = row + 2 + 2 * (size_t) row[0];
        for (int k = 0; k < row[0] + row[1]; k++)
            if (col[k] < 0 || col[k] >= d->P)
                Rf_error("internal error: 'rows' has a column index out of range");
    }
    d->rows_ptr = p;
    d->rows_ent = w;
    d->rows_width = wd;
    d->rows_shift = REAL(shift);
    d->rows_level = REAL(level);
}

/* a raw backend's standardisation, checked against P (ncol raw columns) */
static void read_standardisation(sgfs_data *d, SEXP raw, int ncol, const char *what)
{
    SEXP center = sgfs_list_elt(raw, "center"), inv_scale = sgfs_list_elt(raw, "inv_scale"),
        lead = sgfs_list_elt(raw, "lead");
    if (TYPEOF(lead) != LGLSXP || Rf_length(lead) != 1 || LOGICAL(lead)[0] == NA_LOGICAL ||
        ncol + LOGICAL(lead)[0] != d->P || TYPEOF(center) != REALSXP ||
        TYPEOF(inv_scale) != REALSXP || Rf_length(center) != d->P ||
        Rf_length(inv_scale) != d->P)
        Rf_error("internal error: '%s' does not match the %d x %d design", what, d->P, d->N);
    d->raw_lead = LOGICAL(lead)[0];
    d->raw_center = REAL(center);
    d->raw_inv_scale = REAL(inv_scale);
}

/* a design file, mapped, and its standardisation, checked against N and P */
static void read_file(sgfs_data *d, SEXP file)
{
    SEXP prefetch = sgfs_list_elt(file, "prefetch");
    int N, ncol, bytes;
    SEXP design = sgfs_list_elt(file, "design");
    const void *x = sgfs_design_file_base(design, &N, &ncol, &bytes);
    d->file_map = sgfs_design_file_map_of(design, &d->file_fd);
    if (N != d->N) Rf_error("internal error: 'file' does not match the %d x %d design", d->P, d->N);
    read_standardisation(d, file, ncol, "file");
    if (TYPEOF(prefetch) != LGLSXP || Rf_length(prefetch) != 1 ||
        LOGICAL(prefetch)[0] == NA_LOGICAL)
        Rf_error("internal error: 'file' must say whether to prefetch");
    d->file_prefetch = LOGICAL(prefetch)[0];
    d->raw_row = (size_t) ncol;
    d->raw_col = 1;
    if (bytes == 8) d->raw_x = (const double *) x;
    else d->raw_x32 = (const float *) x;
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
static void read_matrix(sgfs_data *d, SEXP matrix, SEXP order)
{
    SEXP x = sgfs_list_elt(matrix, "x");
    if (TYPEOF(x) != REALSXP || !Rf_isMatrix(x) || Rf_nrows(x) != d->N)
        Rf_error("internal error: 'matrix' must hold a double matrix of %d rows", d->N);
    read_standardisation(d, matrix, Rf_ncols(x), "matrix");
    d->raw_x = REAL_RO(x);
    if (engine_layout(matrix)) {
        d->raw_row = (size_t) Rf_ncols(x);
        d->raw_col = 1;
        return;
    }
    d->raw_row = 1;
    d->raw_col = (size_t) d->N;
    d->raw_map = checked_order(matrix, order, d->N);
}

/* starts the cache misses of a matrix read in place's row i (its values
   are ncol scattered reads; nothing for the other backends), some rows
   before they are read */
void sgfs_data_touch(const sgfs_data *d, int i)
{
#if defined(__GNUC__)
    if (d->raw_col > 1 && d->raw_x) {
        const double *x = d->raw_x + sgfs_raw_index(d, i);
        const int ncol = d->P - d->raw_lead;
        for (int j = 0; j < ncol; j++) __builtin_prefetch(x + (size_t) j * d->raw_col, 0, 0);
    }
#else
    (void) d;
    (void) i;
#endif
}

/* u_i' beta for a raw backend's row i, summed as over a copy of u_i */
static double raw_dot(const sgfs_data *d, int i, const double *beta)
{
    const int P = d->P, lead = d->raw_lead;
    const size_t step = d->raw_col;
    const double *c = d->raw_center, *r = d->raw_inv_scale;
    double dot = 0.0;
    if (lead) dot += sgfs_standardise(1.0, c[0], r[0]) * beta[0];
    if (d->raw_x) {
        const double *x = d->raw_x + sgfs_raw_index(d, i) * d->raw_row;
        for (int j = lead; j < P; j++)
            dot += sgfs_standardise(x[(size_t) (j - lead) * step], c[j], r[j]) * beta[j];
    } else {
        const float *x = d->raw_x32 + (size_t) i * d->raw_row;
        for (int j = lead; j < P; j++)
            dot += sgfs_standardise((double) x[(size_t) (j - lead) * step], c[j], r[j]) * beta[j];
    }
    return dot;
}

/* the file backend's rows (raw_x or raw_x32), row_bytes a row */
static const void *file_rows(const sgfs_data *d, size_t *row_bytes)
{
    *row_bytes = d->raw_row * (d->raw_x ? sizeof(double) : sizeof(float));
    return d->raw_x ? (const void *) d->raw_x : (const void *) d->raw_x32;
}

void sgfs_data_prefetch(const sgfs_data *d, const int *idx, int n)
{
    if (!d->file_prefetch) return;
    size_t row_bytes;
    const void *x = file_rows(d, &row_bytes);
    sgfs_design_file_prefetch(x, row_bytes, idx, n);
}

/* ... of the rows from .. to - 1 (one request) */
void sgfs_data_prefetch_rows(const sgfs_data *d, int from, int to)
{
    if (!d->file_prefetch || to <= from) return;
    size_t row_bytes;
    const void *x = file_rows(d, &row_bytes);
    sgfs_design_file_prefetch_rows(x, row_bytes, from, to);
}

/* the rows from .. to - 1, read: their pages let go */
void sgfs_data_release_rows(const sgfs_data *d, int from, int to)
{
    if (!d->file_prefetch || to <= from) return;
    size_t row_bytes;
    const void *x = file_rows(d, &row_bytes);
    sgfs_design_file_release_rows(d->file_map, d->file_fd, x, row_bytes, from, to);
}

/* N doubles of the spec's element `name` (y, offset, weights), or NULL when
   it has none */
static const double *row_values(const sgfs_data *d, SEXP spec, const char *name)
{
    SEXP v = sgfs_list_opt(spec, name);
    if (v == R_NilValue) return NULL;
    if (TYPEOF(v) != REALSXP || Rf_xlength(v) != d->N)
        Rf_error("internal error: '%s' must be %d doubles", name, d->N);
    return REAL(v);
}

void sgfs_data_setup(sgfs_data *d, SEXP spec)
{
    memset(d, 0, sizeof(*d));
    d->N = count_elt(spec, "N");
    d->P = count_elt(spec, "P");
    d->y = row_values(d, spec, "y");
    d->offset = row_values(d, spec, "offset");
    d->weights = row_values(d, spec, "weights");
    SEXP xt = sgfs_list_opt(spec, "xt"), rows = sgfs_list_opt(spec, "rows"),
        xt32 = sgfs_list_opt(spec, "xt32"), file = sgfs_list_opt(spec, "file"),
        matrix = sgfs_list_opt(spec, "matrix");
    if ((xt != R_NilValue) + (rows != R_NilValue) + (xt32 != R_NilValue) +
        (file != R_NilValue) + (matrix != R_NilValue) != 1)
        Rf_error("internal error: the spec must hold its data as one of 'xt', 'xt32', 'rows', "
                 "'file' and 'matrix'");
    if (file != R_NilValue) read_file(d, file);
    else if (matrix != R_NilValue) read_matrix(d, matrix, sgfs_list_opt(spec, "order"));
    else if (xt32 != R_NilValue) {
        if (TYPEOF(xt32) != RAWSXP ||
            (double) Rf_xlength(xt32) != 4.0 * (double) d->P * (double) d->N)
            Rf_error("internal error: 'xt32' must hold %d x %d floats", d->P, d->N);
        d->xt32 = (const float *) RAW(xt32);
    } else if (xt != R_NilValue) {
        if (TYPEOF(xt) != REALSXP || !Rf_isMatrix(xt) || Rf_nrows(xt) != d->P ||
            Rf_ncols(xt) != d->N)
            Rf_error("internal error: 'xt' must be a %d x %d double matrix", d->P, d->N);
        d->xt = REAL(xt);
    } else read_rows(d, rows);
}

void sgfs_data_columns(const sgfs_data *d, const int *idx, int n, double *out)
{
    const int P = d->P;
    if (n > 1) sgfs_data_prefetch(d, idx, n);
    for (int i = 0; i < n; i++) {
        double *u = out + (size_t) i * P;
        if (i + SGFS_TOUCH_AHEAD < n) sgfs_data_touch(d, idx[i + SGFS_TOUCH_AHEAD]);
        if (d->xt) {
            memcpy(u, d->xt + (size_t) idx[i] * P, (size_t) P * sizeof(double));
            continue;
        }
        if (d->xt32) {
            const float *v = d->xt32 + (size_t) idx[i] * P;
            for (int j = 0; j < P; j++) u[j] = v[j];
            continue;
        }
        if (d->raw_x || d->raw_x32) {
            sgfs_raw_row(d, idx[i], u);
            continue;
        }
        for (int j = 0; j < P; j++) u[j] = -d->rows_shift[j];
        sgfs_sparse_axpy(1.0, sgfs_sparse_row(d, idx[i]), d->rows_level, u);
    }
}

void sgfs_data_dots(const sgfs_data *d, const int *idx, int n, const double *beta,
                    double *out)
{
    const int P = d->P;
    double mb = 0.0;
    if (n > 1) sgfs_data_prefetch(d, idx, n);
    if (d->rows_ptr)
        for (int j = 0; j < P; j++) mb += d->rows_shift[j] * beta[j];
    for (int i = 0; i < n; i++) {
        if (d->xt) {
            const double *u = d->xt + (size_t) idx[i] * P;
            double s = 0.0;
            for (int j = 0; j < P; j++) s += u[j] * beta[j];
            out[i] = s;
        } else if (d->xt32) {
            const float *u = d->xt32 + (size_t) idx[i] * P;
            double s = 0.0;
            for (int j = 0; j < P; j++) s += (double) u[j] * beta[j];
            out[i] = s;
        } else if (d->raw_x || d->raw_x32) {
            out[i] = raw_dot(d, idx[i], beta);
        } else {
            out[i] = sgfs_sparse_dot(sgfs_sparse_row(d, idx[i]), d->rows_level, beta) - mb;
        }
    }
}

double sgfs_data_glm_pass(const sgfs_lik *lik, const double *beta, double *sum)
{
    const sgfs_data *d = lik->data;
    const int P = d->P;
    double mb = 0.0, ll = 0.0, r_sum = 0.0;
    for (int j = 0; j < P; j++) {
        mb += d->rows_shift[j] * beta[j];
        sum[j] = 0.0;
    }
    for (int i = 0; i < d->N; i++) {
        const sgfs_sparse q = sgfs_sparse_row(d, i);
        const double eta = sgfs_sparse_dot(q, d->rows_level, beta) - mb + sgfs_row_offset(d, i);
        const double r = lik->model->row_residual(lik, i, eta);
        ll += lik->model->row_loglik(lik, beta, i, eta);
        sgfs_sparse_axpy(r, q, d->rows_level, sum);
        r_sum += r;
    }
    for (int j = 0; j < P; j++) sum[j] -= r_sum * d->rows_shift[j];
    return ll;
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
    sgfs_data d;
    sgfs_data_setup(&d, spec);
    if (TYPEOF(beta) != REALSXP || Rf_xlength(beta) < d.P)
        Rf_error("internal error: 'beta' must be at least %d doubles", d.P);
    SEXP out = PROTECT(Rf_allocVector(REALSXP, d.N));
    const int block = 4096;
    int *idx = (int *) R_alloc(block, sizeof(int));
    for (int start = 0; start < d.N; start += block) {
        const int m = d.N - start < block ? d.N - start : block;
        for (int i = 0; i < m; i++) idx[i] = start + i;
        sgfs_data_dots(&d, idx, m, REAL(beta), REAL(out) + start);
    }
    UNPROTECT(1);
    return out;
}

SEXP sgfs_data_rows_of(SEXP spec, SEXP idx)
{
    sgfs_data d;
    sgfs_data_setup(&d, spec);
    const int m = Rf_length(idx);
    const int *r = zero_based(idx, d.N);
    SEXP out = PROTECT(Rf_allocMatrix(REALSXP, d.P, m));
    sgfs_data_columns(&d, r, m, REAL(out));
    UNPROTECT(1);
    return out;
}

SEXP sgfs_data_slice(SEXP spec, SEXP idx)
{
    sgfs_data d;
    sgfs_data_setup(&d, spec);
    const int m = Rf_length(idx);
    if (m < 1) Rf_error("internal error: 'idx' is empty");
    const int *r = zero_based(idx, d.N);
    const char *names[] = {"xt", "rows", "xt32", ""};
    SEXP out = PROTECT(Rf_mkNamed(VECSXP, names));
    if (d.xt || d.raw_x || d.raw_x32) {       /* (raw rows: a copy in memory) */
        SEXP xt = Rf_allocMatrix(REALSXP, d.P, m);
        SET_VECTOR_ELT(out, 0, xt);
        sgfs_data_columns(&d, r, m, REAL(xt));
        UNPROTECT(1);
        return out;
    }
    if (d.xt32) {
        SEXP xt32 = Rf_allocVector(RAWSXP, 4 * (R_xlen_t) d.P * m);
        SET_VECTOR_ELT(out, 2, xt32);
        float *to = (float *) RAW(xt32);
        for (int i = 0; i < m; i++)
            memcpy(to + (size_t) i * d.P, d.xt32 + (size_t) r[i] * d.P,
                   (size_t) d.P * sizeof(float));
        UNPROTECT(1);
        return out;
    }
    /* the rows keep their words (and padding) as stored */
    R_xlen_t total = 0;
    for (int i = 0; i < m; i++) total += sgfs_sparse_row_words(&d, r[i]);
    const char *row_names[] = {"ptr", "ent", "width", "shift", "level", ""};
    SEXP rows = Rf_mkNamed(VECSXP, row_names);
    SET_VECTOR_ELT(out, 1, rows);
    SEXP ptr = Rf_allocVector(REALSXP, (R_xlen_t) m + 1);
    SET_VECTOR_ELT(rows, 0, ptr);
    SEXP ent = Rf_allocVector(INTSXP, total);
    SET_VECTOR_ELT(rows, 1, ent);
    SET_VECTOR_ELT(rows, 2, Rf_ScalarInteger(d.rows_width));
    SET_VECTOR_ELT(rows, 3, Rf_allocVector(REALSXP, d.P));
    memcpy(REAL(VECTOR_ELT(rows, 3)), d.rows_shift, (size_t) d.P * sizeof(double));
    SET_VECTOR_ELT(rows, 4, Rf_allocVector(REALSXP, d.P));
    memcpy(REAL(VECTOR_ELT(rows, 4)), d.rows_level, (size_t) d.P * sizeof(double));
    double *p = REAL(ptr);
    int *to = INTEGER(ent);
    R_xlen_t at = 0;
    for (int i = 0; i < m; i++) {
        const R_xlen_t len = sgfs_sparse_row_words(&d, r[i]);
        p[i] = (double) at;
        memcpy(to + at, sgfs_sparse_start(&d, r[i]), (size_t) len * sizeof(int));
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
    sgfs_data d;
    sgfs_data_setup(&d, spec);
    if (TYPEOF(weights) != REALSXP || Rf_xlength(weights) != d.N)
        Rf_error("internal error: the row weights must be %d doubles", d.N);
    const double *w = REAL(weights);
    SEXP out = PROTECT(Rf_allocVector(REALSXP, d.P));
    double *s = REAL(out);
    memset(s, 0, (size_t) d.P * sizeof(double));
    double total = 0.0, *row = (double *) R_alloc((size_t) d.P, sizeof(double));
    for (int i = 0; i < d.N; i++) {
        if (!d.rows_ptr) {
            sgfs_data_columns(&d, &i, 1, row);
            for (int j = 0; j < d.P; j++) s[j] += w[i] * (squares ? row[j] * row[j] : row[j]);
            continue;
        }
        const sgfs_sparse q = sgfs_sparse_row(&d, i);
        for (int k = 0; k < q.n; k++) {
            const int j = q.col[k];
            const double v = sgfs_sparse_value(q, k, d.rows_level), m = d.rows_shift[j],
                dev = v - m;
            /* the stored entry's part less the part the correction adds */
            s[j] += w[i] * (squares ? dev * dev - m * m : v);
        }
        total += w[i];
    }
    if (d.rows_ptr)
        for (int j = 0; j < d.P; j++)
            s[j] += total * (squares ? d.rows_shift[j] * d.rows_shift[j] : -d.rows_shift[j]);
    UNPROTECT(1);
    return out;
}

/* sum_i h_i (u_i' v) u_i, a GLM's curvature (less the prior's) times v:
   one pass over the rows (on the compressed rows, with c_i = h_i u_i' v,
   sum_i c_i v_i - (sum_i c_i) m), or over blocks of them gathered (their
   products by BLAS) */
SEXP sgfs_data_hess_times(SEXP spec, SEXP h, SEXP v)
{
    sgfs_data d;
    sgfs_data_setup(&d, spec);
    if (TYPEOF(h) != REALSXP || Rf_xlength(h) != d.N || TYPEOF(v) != REALSXP ||
        Rf_xlength(v) < d.P)
        Rf_error("internal error: the row curvatures must be %d doubles and v %d", d.N, d.P);
    const double *w = REAL(h), *b = REAL(v);
    const int P = d.P;
    SEXP out = PROTECT(Rf_allocVector(REALSXP, P));
    double *s = REAL(out);
    memset(s, 0, (size_t) P * sizeof(double));
    if (d.rows_ptr) {
        double mb = 0.0, c_sum = 0.0;
        for (int j = 0; j < P; j++) mb += d.rows_shift[j] * b[j];
        for (int i = 0; i < d.N; i++) {
            const sgfs_sparse q = sgfs_sparse_row(&d, i);
            const double c = w[i] * (sgfs_sparse_dot(q, d.rows_level, b) - mb);
            sgfs_sparse_axpy(c, q, d.rows_level, s);
            c_sum += c;
        }
        for (int j = 0; j < P; j++) s[j] -= c_sum * d.rows_shift[j];
        UNPROTECT(1);
        return out;
    }
    const int block = 1024;
    int *idx = (int *) R_alloc(block, sizeof(int));
    double *buf = (double *) R_alloc((size_t) P * block, sizeof(double)),
        *c = (double *) R_alloc(block, sizeof(double)), *part = (double *) R_alloc((size_t) P, sizeof(double));
    for (int start = 0; start < d.N; start += block) {
        const int m = d.N - start < block ? d.N - start : block;
        for (int i = 0; i < m; i++) idx[i] = start + i;
        const double *xb = buf;
        if (d.xt) xb = d.xt + (size_t) start * P;        /* (contiguous: read where it is) */
        else sgfs_data_columns(&d, idx, m, buf);
        sgfs_xt_beta(xb, P, m, b, c);
        for (int i = 0; i < m; i++) c[i] *= w[start + i];
        sgfs_x_r(xb, P, m, c, part);
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
