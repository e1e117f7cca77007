/*
 * sparse_rows.c - a compressed-row copy of a mostly-zero design for the
 * one-pass minibatch score (sgfs_rows_score in minibatch.c).
 *
 * One-hot factors (and LIBSVM-style binary features) make a design mostly
 * zeros, but centring densifies it: the engine's copy xt = (x - c) / s has
 * no zeros.  The standardisation is applied implicitly instead.  A column j
 * whose entries hold one value b_j at least half the time (0 for a sparse
 * column, 1 for the intercept or a mostly-1 indicator: its base) stores
 * only its other entries, as v_ij = (x_ij - b_j) / s_j, and its centring
 * as m_j = (c_j - b_j) / s_j, so
 *
 *   u_i' beta = sum_{stored k} v_ik beta_k - m' beta,
 *   sum_i r_i u_i = sum_i r_i sum_{stored k} v_ik e_k - (sum_i r_i) m,
 *
 * with m' beta and the final correction computed once per minibatch, not
 * per row: a row costs its stored entries instead of P.  A column without
 * a base is stored for every row as (x_ij - c_j) / s_j, exactly as in xt,
 * with m_j = 0 (no cancellation for it).  On Covertype's pine ~ . (10
 * continuous columns, wilderness and soil one-hot: 53 columns) a row keeps
 * 11-12 entries (80 MB for 571,012 rows, 120 as pairs of doubles); on a9a
 * about 10 of 124 (the intercept and six mostly-1 indicators store little
 * or nothing).
 *
 * A column whose stored entries all hold one value (a 0/1 indicator) is a
 * "pattern" column: its entries store only their column, and that value
 * (x - b_j) / s_j is kept once (level).  Each row is one contiguous stretch
 * of 32-bit words, so that a random row is one stream of cache lines:
 *
 *   [nv][np][nv values, doubles][nv + np columns, 0-based ints][pad],
 *
 * the valued entries first, each kind in increasing column order
 * (sgfs_sparse_row() in sgfs.h reads it).  An a9a row (about 10
 * indicators) takes 50 bytes on average, 80 padded (below), within two
 * cache lines, against 250 as (value, column) pairs of doubles before:
 * 2.7 MB for a9a instead of 8.1 (bench/results/sparse.md).
 *
 *   sgfs_sparse_rows(x, center, scale, max_fill) -> list(ptr = N + 1 row
 *       starts in words (doubles: more than 2^31 words are possible), ent =
 *       the rows' words (an integer vector), width = the common number of
 *       words of every row or 0, shift = m, level = a pattern column's
 *       value, else 0), or NULL when more than max_fill N P entries would
 *       be stored (the dense copy is then as fast).  When padding every
 *       row to the longest at most doubles the words, it is done: a row's
 *       start is then i * width, with no look-up in ptr (a second,
 *       dependent cache miss per random row), at the cost of the padding's
 *       memory (a9a's rows, 8-20 words, padded to 20).
 */
#include "sgfs.h"

/* rows are padded to the widest when that stores at most this many times
   the words */
static const double pad_limit = 2.0;

/* the design's columns: a dense N x P matrix x, or a compressed-column
   sparse one (a dgCMatrix's slots i, p, x), whose zero entries are never
   visited one by one in a sparse column */
typedef struct design_columns {
    int N, P;                           /* P counts the leading column      */
    const double **dense;               /* the P - lead columns, or NULL    */
    const int *ci, *cp;                 /* 0-based rows; column starts      */
    const double *cx;                   /* the stored values                */
    double *buf;                        /* N: a sparse matrix's column made
                                           dense, or the column of ones     */
    int lead;                           /* 1: an implicit first column of
                                           ones (the intercept, never bound
                                           to x by a copy), else 0          */
} design_columns;

/* the stored part of column j >= lead: a dense column, or the range
   [*from, *to) of the compressed column's entries */
static const double *dense_column(const design_columns *d, int j)
{
    return d->dense[j - d->lead];
}
static void csc_range(const design_columns *d, int j, int *from, int *to)
{
    *from = d->cp[j - d->lead];
    *to = d->cp[j - d->lead + 1];
}

static R_xlen_t column_nonzeros(const design_columns *d, int j)
{
    if (j < d->lead) return d->N;
    R_xlen_t nz = 0;
    if (d->dense) {
        const double *col = dense_column(d, j);
        for (int i = 0; i < d->N; i++) nz += col[i] != 0.0;
    } else {
        int from, to;
        csc_range(d, j, &from, &to);
        for (int k = from; k < to; k++) nz += d->cx[k] != 0.0;
    }
    return nz;
}

/* column j with every entry */
static const double *column_values(const design_columns *d, int j)
{
    if (j < d->lead) {
        for (int i = 0; i < d->N; i++) d->buf[i] = 1.0;
        return d->buf;
    }
    if (d->dense) return dense_column(d, j);
    int from, to;
    csc_range(d, j, &from, &to);
    for (int i = 0; i < d->N; i++) d->buf[i] = 0.0;
    for (int k = from; k < to; k++) d->buf[d->ci[k]] = d->cx[k];
    return d->buf;
}

/* Column j's base: the value at least half its entries hold (0 when at
   least half are zeros: a sparse matrix's unstored entries), found by
   Boyer and Moore's majority vote; returns 0 when there is none (then
   *stored = N and *pattern = 0).  *stored is the number of entries that
   differ from the base, and *level their one value when they all hold one
   (else *pattern is 0). */
static int column_base(const design_columns *d, int j, double *base, R_xlen_t *stored,
                       int *pattern, double *level)
{
    const int N = d->N;
    const R_xlen_t nz = column_nonzeros(d, j);
    double b = 0.0, first = 0.0;
    R_xlen_t other = 0;
    int one = 1, seen = 0;
    if (2 * nz <= (R_xlen_t) N && !d->dense) {      /* zeros are the base */
        int from, to;
        csc_range(d, j, &from, &to);
        for (int k = from; k < to; k++) {
            const double x = d->cx[k];
            if (x == 0.0) continue;
            if (!seen) first = x;
            one = one && x == first;
            seen = 1;
            other++;
        }
    } else {
        const double *col = column_values(d, j);
        if (2 * nz > (R_xlen_t) N) {                 /* a majority among the rest? */
            R_xlen_t votes = 0;
            for (int i = 0; i < N; i++) {
                if (votes == 0) b = col[i];
                votes += col[i] == b ? 1 : -1;
            }
        }
        for (int i = 0; i < N; i++) {
            if (col[i] == b) continue;
            if (!seen) first = col[i];
            one = one && col[i] == first;
            seen = 1;
            other++;
        }
        if (2 * (N - other) < (R_xlen_t) N) {     /* the vote's candidate holds less than half */
            *base = 0.0;
            *stored = N;
            *pattern = 0;
            *level = 0.0;
            return 0;
        }
    }
    *base = b;
    *stored = other;
    *pattern = seen && one;
    *level = first;
    return 1;
}

/* row i's next valued (pattern: 0) or pattern (1) entry, in column j */
static void put_entry(int *ent, const R_xlen_t *start, int *cursor, int i, int pattern,
                      int j, double v)
{
    int *w = ent + start[i];
    const int nv = w[0], k = pattern ? nv + cursor[i]++ : cursor[i]++;
    if (!pattern) ((double *) (void *) (w + 2))[k] = v;
    w[2 + 2 * nv + k] = j;
}

/* order: NULL, or the user's row (1-based) at each position of the copy
   (a permutation; R/data-access.R shuffles large copies) */
static SEXP build_rows(design_columns *d, const double *c, const double *s, double fill,
                       SEXP order)
{
    const int N = d->N, P = d->P;

    /* each column's base (has_base[j]: the entries equal to it are not
       stored), whether its stored entries are a pattern, and the entries
       stored */
    int *has_base = (int *) R_alloc((size_t) P, sizeof(int));
    int *pattern = (int *) R_alloc((size_t) P, sizeof(int));
    double *base = (double *) R_alloc((size_t) P, sizeof(double));
    double *level = (double *) R_alloc((size_t) P, sizeof(double));
    double stored = 0.0;
    for (int j = 0; j < P; j++) {
        R_xlen_t other;
        has_base[j] = column_base(d, j, &base[j], &other, &pattern[j], &level[j]);
        stored += (double) other;
    }
    if (stored > fill * (double) N * (double) P) return R_NilValue;

    /* each row's valued and pattern entries, the counts of its header */
    int *nv = (int *) R_alloc((size_t) N, sizeof(int));
    int *np = (int *) R_alloc((size_t) N, sizeof(int));
    for (int i = 0; i < N; i++) nv[i] = np[i] = 0;
    for (int j = 0; j < P; j++) {
        int *count = pattern[j] ? np : nv;
        if (!has_base[j])
            for (int i = 0; i < N; i++) count[i]++;
        else if (base[j] == 0.0 && !d->dense) {
            int from, to;
            csc_range(d, j, &from, &to);
            for (int k = from; k < to; k++) count[d->ci[k]] += d->cx[k] != 0.0;
        } else {
            const double *col = column_values(d, j);
            for (int i = 0; i < N; i++) count[i] += col[i] != base[j];
        }
    }
    /* a common width (rows padded) when padding at most doubles the words */
    R_xlen_t widest = 0;
    double words = 0.0;
    for (int i = 0; i < N; i++) {
        const R_xlen_t w = sgfs_sparse_words(nv[i], np[i]);
        widest = w > widest ? w : widest;
        words += (double) w;
    }
    const int width = widest <= INT_MAX && (double) N * (double) widest <= pad_limit * words
                      ? (int) widest : 0;
    const R_xlen_t total = width > 0 ? (R_xlen_t) N * width : (R_xlen_t) words;

    const char *names[] = {"ptr", "ent", "width", "shift", "level", ""};
    SEXP out = PROTECT(Rf_mkNamed(VECSXP, names));
    SEXP ptr = Rf_allocVector(REALSXP, (R_xlen_t) N + 1);
    SET_VECTOR_ELT(out, 0, ptr);
    SEXP ents = Rf_allocVector(INTSXP, total);
    SET_VECTOR_ELT(out, 1, ents);
    SET_VECTOR_ELT(out, 2, Rf_ScalarInteger(width));
    SEXP shift = Rf_allocVector(REALSXP, P);
    SET_VECTOR_ELT(out, 3, shift);
    SEXP levels = Rf_allocVector(REALSXP, P);
    SET_VECTOR_ELT(out, 4, levels);
    double *p = REAL(ptr), *m = REAL(shift), *lv = REAL(levels);
    int *ent = INTEGER(ents);
    /* random rows are read from them: huge pages against TLB misses */
    sgfs_advise_huge_pages(p, ((size_t) N + 1) * sizeof(double));
    sgfs_advise_huge_pages(ent, (size_t) total * sizeof(int));
    memset(ent, 0, (size_t) total * sizeof(int));

    /* row starts in the copy's order, each row's header, then the entries
       column by column (a row's valued entries, then its pattern entries,
       each in increasing column order) */
    const int *row_at = sgfs_row_order(order, N);
    R_xlen_t *start = (R_xlen_t *) R_alloc((size_t) N, sizeof(R_xlen_t));
    R_xlen_t at = 0;
    for (int q = 0; q < N; q++) {
        const int i = row_at ? row_at[q] : q;
        start[i] = width > 0 ? (R_xlen_t) q * width : at;
        p[q] = (double) start[i];
        at += sgfs_sparse_words(nv[i], np[i]);
        ent[start[i]] = nv[i];
        ent[start[i] + 1] = np[i];
        nv[i] = np[i] = 0;                  /* now the rows' cursors */
    }
    p[N] = (double) total;
    for (int j = 0; j < P; j++) {
        /* u_ij = (x_ij - c_j) / s_j = (x_ij - base_j) / s_j - m_j */
        m[j] = has_base[j] ? (c[j] - base[j]) / s[j] : 0.0;
        lv[j] = pattern[j] ? (level[j] - base[j]) / s[j] : 0.0;
        int *cursor = pattern[j] ? np : nv;
        if (has_base[j] && base[j] == 0.0 && !d->dense) {
            int from, to;
            csc_range(d, j, &from, &to);
            for (int k = from; k < to; k++)
                if (d->cx[k] != 0.0)
                    put_entry(ent, start, cursor, d->ci[k], pattern[j], j, d->cx[k] / s[j]);
            continue;
        }
        const double *col = column_values(d, j);
        for (int i = 0; i < N; i++) {
            if (has_base[j] && col[i] == base[j]) continue;
            put_entry(ent, start, cursor, i, pattern[j], j,
                      (col[i] - (has_base[j] ? base[j] : c[j])) / s[j]);
        }
    }
    UNPROTECT(1);
    return out;
}

/* the columns of a dgCMatrix from its slots i (0-based rows), p (column
   starts), x (values) and Dim, checked */
static void csc_columns(design_columns *d, SEXP i, SEXP p, SEXP x, SEXP dim)
{
    if (TYPEOF(i) != INTSXP || TYPEOF(p) != INTSXP || TYPEOF(x) != REALSXP ||
        TYPEOF(dim) != INTSXP || Rf_length(dim) != 2)
        Rf_error("internal error: a sparse design needs integer 'i', 'p', 'dim' and double 'x'");
    const int N = INTEGER(dim)[0], P = INTEGER(dim)[1];
    const int *cp = INTEGER(p), *ci = INTEGER(i);
    if (N < 1 || P < 1 || Rf_xlength(p) != (R_xlen_t) P + 1 || cp[0] != 0 ||
        cp[P] != Rf_xlength(i) ||
        Rf_xlength(x) != Rf_xlength(i))
        Rf_error("internal error: malformed sparse design");
    for (int j = 0; j < P; j++)
        if (cp[j + 1] < cp[j]) Rf_error("internal error: malformed sparse design");
    for (R_xlen_t k = 0; k < Rf_xlength(i); k++)
        if (ci[k] < 0 || ci[k] >= N) Rf_error("internal error: malformed sparse design");
    d->N = N;
    d->P = P;
    d->dense = NULL;
    d->ci = ci;
    d->cp = cp;
    d->cx = REAL_RO(x);
    d->buf = (double *) R_alloc((size_t) N, sizeof(double));
    d->lead = 0;
}

SEXP sgfs_sparse_rows(SEXP x, SEXP center, SEXP scale, SEXP max_fill, SEXP lead, SEXP order)
{
    int N, P;
    const double **cols;
    const int one = sgfs_check_design(x, center, scale, lead, &N, &P, &cols);
    design_columns d = {N, P + one, cols, NULL, NULL, NULL,
                        one ? (double *) R_alloc((size_t) N, sizeof(double)) : NULL, one};
    return build_rows(&d, REAL(center), REAL(scale), Rf_asReal(max_fill), order);
}

/* the same from a dgCMatrix's slots */
SEXP sgfs_sparse_rows_csc(SEXP i, SEXP p, SEXP x, SEXP dim, SEXP center, SEXP scale,
                          SEXP max_fill, SEXP lead, SEXP order)
{
    design_columns d;
    csc_columns(&d, i, p, x, dim);
    if (TYPEOF(lead) != LGLSXP || Rf_length(lead) != 1 || LOGICAL(lead)[0] == NA_LOGICAL)
        Rf_error("internal error: 'lead' must be TRUE or FALSE");
    d.lead = LOGICAL(lead)[0];
    d.P += d.lead;
    if (TYPEOF(center) != REALSXP || TYPEOF(scale) != REALSXP || Rf_length(center) != d.P ||
        Rf_length(scale) != d.P)
        Rf_error("internal error: malformed sparse design");
    return build_rows(&d, REAL(center), REAL(scale), Rf_asReal(max_fill), order);
}

/* Per column: the mean, the sd (denominator N - 1), the mean square, the
   range (largest minus smallest entry), whether every entry is 1 and a checksum that the rows' order enters
   (sum_i x_ij w_i, w_i = sgfs_checksum_weight(i): data shared between fits must be
   the same, R/data-access.R) -- the same numbers, to the last bit, from a
   dense matrix and from a sparse one: sums run over the non-zero entries
   in row order (a zero adds nothing), and the squared deviations of a
   column with more than half its entries non-zero (stored whole in the
   rows) over every entry in row order, two-pass.  A column with at most
   half its entries non-zero sums (x - m)^2 - m^2 over its non-zeros and
   adds N m^2: there the variance is at least m^2 times (1 - f) / f >= 1
   (f the non-zero fraction), so the cancellation costs at most a bit or
   two, and no pass over its zeros is made.  Double sums, as R's sd(): a
   spread near 1e154 overflows and is refused in R. */
static SEXP column_stats(design_columns *d)
{
    const int N = d->N, P = d->P;
    const char *names[] = {"mean", "sd", "meansq", "ones", "checksum", "range", ""};
    SEXP out = PROTECT(Rf_mkNamed(VECSXP, names));
    for (int k = 0; k < 3; k++) SET_VECTOR_ELT(out, k, Rf_allocVector(REALSXP, P));
    SET_VECTOR_ELT(out, 3, Rf_allocVector(LGLSXP, P));
    SET_VECTOR_ELT(out, 4, Rf_allocVector(REALSXP, P));
    SET_VECTOR_ELT(out, 5, Rf_allocVector(REALSXP, P));
    double *mean = REAL(VECTOR_ELT(out, 0)), *sd = REAL(VECTOR_ELT(out, 1)),
        *meansq = REAL(VECTOR_ELT(out, 2)), *check = REAL(VECTOR_ELT(out, 4)),
        *range = REAL(VECTOR_ELT(out, 5));
    int *ones = LOGICAL(VECTOR_ELT(out, 3));
    for (int j = 0; j < P; j++) {
        const R_xlen_t nz = column_nonzeros(d, j);
        double s = 0.0, s2 = 0.0, sw = 0.0;
        /* (the range: of the non-zeros, and 0 where some entry is) */
        double lo = nz < N ? 0.0 : R_PosInf, hi = nz < N ? 0.0 : R_NegInf;
        int all_one = nz == N;
        const double *col = NULL;
        if (d->dense || 2 * nz > (R_xlen_t) N) {
            col = column_values(d, j);
            for (int i = 0; i < N; i++)
                if (col[i] != 0.0) {
                    s += col[i];
                    s2 += col[i] * col[i];
                    sw += col[i] * sgfs_checksum_weight(i);
                    all_one = all_one && col[i] == 1.0;
                    lo = fmin(lo, col[i]);
                    hi = fmax(hi, col[i]);
                }
        } else
            for (int k = d->cp[j]; k < d->cp[j + 1]; k++)
                if (d->cx[k] != 0.0) {
                    s += d->cx[k];
                    s2 += d->cx[k] * d->cx[k];
                    sw += d->cx[k] * sgfs_checksum_weight(d->ci[k]);
                    all_one = all_one && d->cx[k] == 1.0;
                    lo = fmin(lo, d->cx[k]);
                    hi = fmax(hi, d->cx[k]);
                }
        check[j] = sw;
        range[j] = hi >= lo ? hi - lo : 0.0;
        const double m = s / N;
        double ss = 0.0;
        if (2 * nz > (R_xlen_t) N)
            for (int i = 0; i < N; i++) ss += (col[i] - m) * (col[i] - m);
        else {
            if (d->dense) {
                for (int i = 0; i < N; i++)
                    if (col[i] != 0.0) ss += (col[i] - m) * (col[i] - m) - m * m;
            } else
                for (int k = d->cp[j]; k < d->cp[j + 1]; k++)
                    if (d->cx[k] != 0.0) ss += (d->cx[k] - m) * (d->cx[k] - m) - m * m;
            ss += (double) N * m * m;
        }
        mean[j] = m;
        sd[j] = N > 1 ? sqrt(fmax(ss, 0.0) / (N - 1)) : NA_REAL;
        meansq[j] = s2 / N;
        ones[j] = all_one;
    }
    UNPROTECT(1);
    return out;
}

SEXP sgfs_column_stats(SEXP x)
{
    int N, P;
    const double **cols = sgfs_dense_columns(x, &N, &P);
    if (N < 1) Rf_error("internal error: the design is empty");
    design_columns d = {N, P, cols, NULL, NULL, NULL, NULL, 0};
    return column_stats(&d);
}

SEXP sgfs_column_stats_csc(SEXP i, SEXP p, SEXP x, SEXP dim)
{
    design_columns d;
    csc_columns(&d, i, p, x, dim);
    return column_stats(&d);
}

/* Per column of a design (dense or a dgCMatrix's slots) and the responses
   y: whether every entry is 0 or 1 (a level's indicator), its number of
   ones and the sum of y over them -- the separated levels' scan
   (R/separation.R) without an N-vector per column. */
static SEXP indicator_stats(design_columns *d, SEXP y)
{
    const int N = d->N, P = d->P;
    if (TYPEOF(y) != REALSXP || Rf_xlength(y) != N)
        Rf_error("internal error: 'y' must be %d doubles", N);
    const double *yy = REAL(y);
    const char *names[] = {"indicator", "ones", "ysum", ""};
    SEXP out = PROTECT(Rf_mkNamed(VECSXP, names));
    SET_VECTOR_ELT(out, 0, Rf_allocVector(LGLSXP, P));
    SET_VECTOR_ELT(out, 1, Rf_allocVector(REALSXP, P));
    SET_VECTOR_ELT(out, 2, Rf_allocVector(REALSXP, P));
    int *ind = LOGICAL(VECTOR_ELT(out, 0));
    double *ones = REAL(VECTOR_ELT(out, 1)), *ysum = REAL(VECTOR_ELT(out, 2));
    for (int j = 0; j < P; j++) {
        int ok = 1;
        double n1 = 0.0, s = 0.0;
        if (d->dense) {
            const double *col = d->dense[j];
            for (int i = 0; i < N && ok; i++) {
                if (col[i] == 0.0) continue;
                ok = col[i] == 1.0;
                n1 += 1.0;
                s += yy[i];
            }
        } else
            for (int k = d->cp[j]; k < d->cp[j + 1] && ok; k++) {
                if (d->cx[k] == 0.0) continue;
                ok = d->cx[k] == 1.0;
                n1 += 1.0;
                s += yy[d->ci[k]];
            }
        ind[j] = ok;
        ones[j] = ok ? n1 : NA_REAL;
        ysum[j] = ok ? s : NA_REAL;
    }
    UNPROTECT(1);
    return out;
}

SEXP sgfs_indicator_stats(SEXP x, SEXP y)
{
    int N, P;
    const double **cols = sgfs_dense_columns(x, &N, &P);
    if (N < 1) Rf_error("internal error: the design is empty");
    design_columns d = {N, P, cols, NULL, NULL, NULL, NULL, 0};
    return indicator_stats(&d, y);
}

SEXP sgfs_indicator_stats_csc(SEXP i, SEXP p, SEXP x, SEXP dim, SEXP y)
{
    design_columns d;
    csc_columns(&d, i, p, x, dim);
    return indicator_stats(&d, y);
}
