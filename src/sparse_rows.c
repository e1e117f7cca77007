/*
 * sparse_rows.c - a compressed-row copy of a mostly-zero design for the
 * one-pass minibatch score (sgfs_rows_score in minibatch.c).
 *
 * One-hot factors (and LIBSVM-style binary features) make a design mostly
 * zeros, but centring densifies it: the engine's copy xt = (x - c) / s has
 * no zeros.  The standardisation is applied implicitly instead.  A column j
 * with at least half its entries zero is "sparse": only its non-zeros are
 * stored, as v_ij = x_ij / s_j, and its centring as m_j = c_j / s_j, so
 *
 *   u_i' beta = sum_{stored k} v_ik beta_k - m' beta,
 *   sum_i r_i u_i = sum_i r_i sum_{stored k} v_ik e_k - (sum_i r_i) m,
 *
 * with m' beta and the final correction computed once per minibatch, not
 * per row: a row costs its stored entries instead of P.  The other columns
 * are stored for every row as (x_ij - c_j) / s_j, exactly as in xt, with
 * m_j = 0 (no cancellation for them).  On Covertype's pine ~ . (10
 * continuous columns, wilderness and soil one-hot: 55 columns) a row keeps
 * 13 entries; on a9a about 15 of 124.
 *
 *   sgfs_sparse_rows(x, center, scale, max_fill) -> list(ptr = N + 1 row
 *       starts (doubles: more than 2^31 entries are possible), ent = the
 *       entries as pairs (value, 0-based column as a double), a row's pairs
 *       contiguous, so that a random row is one stream of cache lines,
 *       width = the common number of entries of every row or 0, shift =
 *       m), or NULL when more than max_fill N P entries would be stored
 *       (the dense copy is then as fast).  When the widest row has at most
 *       a quarter more entries than the average, every row is padded to
 *       it with (0, column 0) pairs, which add nothing: a row's start is
 *       then i * width, with no look-up in ptr (a second cache miss per
 *       random row).  Covertype's rows have 12-13 entries: padded to 13,
 *       SGLD-CV's iteration 230 -> 200 us (interleaved runs, one chain,
 *       loaded machine).  a9a's 14-20 are not padded (padded to 20: no
 *       gain; its 8 MB of rows stay in cache).
 */
#include "sgfs.h"

/* rows are padded to the widest when that stores at most this many times
   the entries */
static const double pad_limit = 1.25;

SEXP sgfs_sparse_rows(SEXP x, SEXP center, SEXP scale, SEXP max_fill)
{
    sgfs_check_design(x, center, scale);
    const int N = Rf_nrows(x), P = Rf_ncols(x);
    const double *in = REAL(x), *c = REAL(center), *s = REAL(scale);
    const double fill = Rf_asReal(max_fill);

    /* which columns are sparse, and the entries stored */
    int *sparse = (int *) R_alloc((size_t) P, sizeof(int));
    double stored = 0.0;
    for (int j = 0; j < P; j++) {
        const double *col = in + (size_t) j * N;
        R_xlen_t nz = 0;
        for (int i = 0; i < N; i++) nz += col[i] != 0.0;
        sparse[j] = 2 * nz <= (R_xlen_t) N;
        stored += sparse[j] ? (double) nz : (double) N;
    }
    if (stored > fill * (double) N * (double) P) return R_NilValue;

    /* the rows' counts; a common width (rows padded) when padding adds at
       most a quarter to the entries */
    R_xlen_t *next = (R_xlen_t *) R_alloc((size_t) N, sizeof(R_xlen_t));
    for (int i = 0; i < N; i++) next[i] = 0;
    for (int j = 0; j < P; j++) {
        const double *col = in + (size_t) j * N;
        for (int i = 0; i < N; i++) next[i] += !sparse[j] || col[i] != 0.0;
    }
    R_xlen_t widest = 0;
    for (int i = 0; i < N; i++) widest = next[i] > widest ? next[i] : widest;
    const int width = widest > 0 && (double) N * (double) widest <= pad_limit * stored
                      ? (int) widest : 0;
    const R_xlen_t total = width > 0 ? (R_xlen_t) N * width : (R_xlen_t) stored;

    const char *names[] = {"ptr", "ent", "width", "shift", ""};
    SEXP out = PROTECT(Rf_mkNamed(VECSXP, names));
    SEXP ptr = Rf_allocVector(REALSXP, (R_xlen_t) N + 1);
    SET_VECTOR_ELT(out, 0, ptr);
    SEXP ents = Rf_allocVector(REALSXP, 2 * total);
    SET_VECTOR_ELT(out, 1, ents);
    SEXP shift = Rf_allocVector(REALSXP, P);
    SET_VECTOR_ELT(out, 3, shift);
    double *p = REAL(ptr), *ent = REAL(ents), *m = REAL(shift);
    /* random rows are read from them: huge pages against TLB misses */
    sgfs_advise_huge_pages(p, ((size_t) N + 1) * sizeof(double));
    sgfs_advise_huge_pages(ent, 2 * (size_t) total * sizeof(double));

    /* row starts, then the entries column by column (each row's in
       increasing column order) */
    R_xlen_t start = 0;
    for (int i = 0; i < N; i++) {
        p[i] = (double) (width > 0 ? (R_xlen_t) i * width : start);
        const R_xlen_t count = next[i];
        next[i] = width > 0 ? (R_xlen_t) i * width : start;
        start += count;
    }
    p[N] = (double) total;
    SET_VECTOR_ELT(out, 2, Rf_ScalarInteger(width));
    /* the padding: value 0 in column 0 (adds nothing to a dot product or a
       score sum) */
    for (R_xlen_t k = 0; k < total; k++) ent[2 * k] = ent[2 * k + 1] = 0.0;
    for (int j = 0; j < P; j++) {
        const double *col = in + (size_t) j * N;
        m[j] = sparse[j] ? c[j] / s[j] : 0.0;
        for (int i = 0; i < N; i++) {
            if (sparse[j] && col[i] == 0.0) continue;
            const R_xlen_t at = next[i]++;
            ent[2 * at] = sparse[j] ? col[i] / s[j] : (col[i] - c[j]) / s[j];
            ent[2 * at + 1] = (double) j;
        }
    }
    UNPROTECT(1);
    return out;
}
