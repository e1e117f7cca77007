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
 *       width = the common number of entries of every row or 0 (then a
 *       row's start needs no look-up in ptr), shift = m), or NULL when more
 *       than max_fill N P entries would be stored (the dense copy is then
 *       as fast).
 */
#include "sgfs.h"

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

    const char *names[] = {"ptr", "ent", "width", "shift", ""};
    SEXP out = PROTECT(Rf_mkNamed(VECSXP, names));
    SEXP ptr = Rf_allocVector(REALSXP, (R_xlen_t) N + 1);
    SET_VECTOR_ELT(out, 0, ptr);
    SEXP ents = Rf_allocVector(REALSXP, 2 * (R_xlen_t) stored);
    SET_VECTOR_ELT(out, 1, ents);
    SEXP shift = Rf_allocVector(REALSXP, P);
    SET_VECTOR_ELT(out, 3, shift);
    double *p = REAL(ptr), *ent = REAL(ents), *m = REAL(shift);
    /* random rows are read from them: huge pages against TLB misses */
    sgfs_advise_huge_pages(p, ((size_t) N + 1) * sizeof(double));
    sgfs_advise_huge_pages(ent, 2 * (size_t) stored * sizeof(double));

    /* row starts from the rows' counts, then the entries column by column
       (each row's in increasing column order) */
    R_xlen_t *next = (R_xlen_t *) R_alloc((size_t) N, sizeof(R_xlen_t));
    for (int i = 0; i < N; i++) next[i] = 0;
    for (int j = 0; j < P; j++) {
        const double *col = in + (size_t) j * N;
        for (int i = 0; i < N; i++) next[i] += !sparse[j] || col[i] != 0.0;
    }
    R_xlen_t start = 0;
    int width = N > 0 ? (int) next[0] : 0;
    for (int i = 0; i < N; i++) {
        if (next[i] != width) width = 0;
        p[i] = (double) start;
        const R_xlen_t count = next[i];
        next[i] = start;
        start += count;
    }
    p[N] = (double) start;
    SET_VECTOR_ELT(out, 2, Rf_ScalarInteger(width));
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
