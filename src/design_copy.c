/*
 * design_copy.c - the engine's one copy of the data:
 *
 *   xt = (t(x) - center) / scale      x: N x P (R's layout), xt: P x N,
 *
 * each value by sgfs_standardise() (sgfs.h), as the raw rows read it,
 * with, when `lead` is TRUE, a first row of ones (the intercept) before
 * x's columns: the intercept is never bound to x by a copy (cbind(1, x)
 * took as much memory again as the data),
 *
 * so that one example is one contiguous column (a minibatch gather is n
 * short contiguous reads).  With `order` (N ints, 1-based, a permutation),
 * column q of xt is row order[q] of x: the copy's rows in a random order,
 * whose windows of consecutive columns are random samples (minibatch.c),
 * read as one stream.  Before the copy is written, Linux is asked to
 * back it with transparent huge pages (madvise MADV_HUGEPAGE): random
 * minibatches of a large data set otherwise pay a TLB miss per example
 * (the internals vignette, "The data and a fit's handle").  The transpose
 * is blocked so that both the reads of x and the writes of xt stay in
 * cache.
 */
#if defined(__linux__)
# include <sys/mman.h>
#endif
#include <stdint.h>
#include "sgfs.h"

#define HUGE_PAGE ((uintptr_t) 2 << 20)
#define BLOCK 64

void sgfs_advise_huge_pages(void *p, size_t bytes)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    uintptr_t start = ((uintptr_t) p + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
    uintptr_t end = ((uintptr_t) p + bytes) & ~(HUGE_PAGE - 1);
    if (end > start) (void) madvise((void *) start, end - start, MADV_HUGEPAGE);
#else
    (void) p;
    (void) bytes;
#endif
}

/* The columns of a dense design x: a double matrix, or a list of double
   vectors of one length (a data frame's columns, never bound into a
   matrix): their length into *N, their number into *P and a pointer to
   each (an R_alloc'ed array), or an error */
const double **sgfs_dense_columns(SEXP x, int *N, int *P)
{
    const double **cols;
    if (TYPEOF(x) == REALSXP && Rf_isMatrix(x)) {
        *N = Rf_nrows(x);
        *P = Rf_ncols(x);
        cols = (const double **) R_alloc((size_t) *P + 1, sizeof(double *));
        for (int j = 0; j < *P; j++) cols[j] = REAL_RO(x) + (size_t) j * *N;
        return cols;
    }
    if (TYPEOF(x) != VECSXP || Rf_xlength(x) > INT_MAX)
        Rf_error("internal error: 'x' must be a double matrix or a list of double columns");
    *P = (int) Rf_xlength(x);
    *N = *P > 0 ? (int) Rf_xlength(VECTOR_ELT(x, 0)) : 0;
    cols = (const double **) R_alloc((size_t) *P + 1, sizeof(double *));
    for (int j = 0; j < *P; j++) {
        SEXP v = VECTOR_ELT(x, j);
        if (TYPEOF(v) != REALSXP || Rf_xlength(v) != *N)
            Rf_error("internal error: the columns of 'x' must be doubles of one length");
        cols[j] = REAL_RO(v);
    }
    return cols;
}

/* the design x (sgfs_dense_columns), `lead` (TRUE: an implicit first
   column of ones, the intercept, before x's columns) and the P + lead
   centres and scales, or an error; returns lead as 0 or 1 and x's columns */
int sgfs_check_design(SEXP x, SEXP center, SEXP scale, SEXP lead, int *N, int *P,
                      const double ***cols)
{
    *cols = sgfs_dense_columns(x, N, P);
    if (TYPEOF(lead) != LGLSXP || Rf_length(lead) != 1 || LOGICAL(lead)[0] == NA_LOGICAL)
        Rf_error("internal error: 'lead' must be TRUE or FALSE");
    const int one = LOGICAL(lead)[0];
    if (*N < 1 || *P + one < 1)
        Rf_error("internal error: the design is empty");
    if (TYPEOF(center) != REALSXP || TYPEOF(scale) != REALSXP ||
        Rf_length(center) != *P + one || Rf_length(scale) != *P + one)
        Rf_error("internal error: 'center' and 'scale' must have %d values", *P + one);
    return one;
}

/* order (the user's row, 1-based, at each position of a copy: a
   permutation of 1..N, checked) as 0-based rows, or NULL for the rows in
   their order (R_NilValue) */
const int *sgfs_row_order(SEXP order, int N)
{
    if (order == R_NilValue) return NULL;
    if (TYPEOF(order) != INTSXP || Rf_xlength(order) != N)
        Rf_error("internal error: 'order' must be %d integers", N);
    if (!sgfs_is_permutation(INTEGER(order), N, R_alloc((size_t) N, 1)))
        Rf_error("internal error: 'order' must be a permutation of 1..%d", N);
    int *row = (int *) R_alloc((size_t) N, sizeof(int));
    for (int q = 0; q < N; q++) row[q] = INTEGER(order)[q] - 1;
    return row;
}

/* whether o[0..N-1] is a permutation of 1..N (seen: N bytes of scratch) */
int sgfs_is_permutation(const int *o, int N, char *seen)
{
    memset(seen, 0, (size_t) N);
    for (int q = 0; q < N; q++) {
        if (o[q] == NA_INTEGER || o[q] < 1 || o[q] > N || seen[o[q] - 1]) return 0;
        seen[o[q] - 1] = 1;
    }
    return 1;
}

/* the position of each row in the copy (0-based), or NULL */
static const int *columns_of_rows(SEXP order, int N)
{
    const int *row = sgfs_row_order(order, N);
    if (row == NULL) return NULL;
    int *col = (int *) R_alloc((size_t) N, sizeof(int));
    for (int q = 0; q < N; q++) col[row[q]] = q;
    return col;
}

/* the standardised copy into out (P x N, doubles or floats), the rows of x
   in blocks so that the reads of x stay in cache */
#define WRITE_COPY(TYPE)                                                           \
    for (int i0 = 0; i0 < N; i0 += BLOCK) {                                        \
        int i1 = i0 + BLOCK < N ? i0 + BLOCK : N;                                  \
        if (one)                                                                   \
            for (int i = i0; i < i1; i++)                                          \
                out[(size_t) P * (col ? col[i] : i)] =                             \
                    (TYPE) sgfs_standardise(1.0, c[0], 1.0 / s[0]);                \
        for (int j = one; j < P; j++) {                                            \
            const double *v = in[j - one], inv = 1.0 / s[j];                       \
            for (int i = i0; i < i1; i++)                                          \
                out[j + (size_t) P * (col ? col[i] : i)] =                         \
                    (TYPE) sgfs_standardise(v[i], c[j], inv);                      \
        }                                                                          \
    }

SEXP sgfs_design_copy(SEXP x, SEXP center, SEXP scale, SEXP lead, SEXP order)
{
    int N, P;
    const double **in;
    const int one = sgfs_check_design(x, center, scale, lead, &N, &P, &in);
    P += one;
    const int *col = columns_of_rows(order, N);
    SEXP xt = PROTECT(Rf_allocMatrix(REALSXP, P, N));
    double *out = REAL(xt);
    const double *c = REAL(center), *s = REAL(scale);
    sgfs_advise_huge_pages(out, (size_t) P * N * sizeof(double));
    WRITE_COPY(double)
    UNPROTECT(1);
    return xt;
}

/* the same copy in single precision (options(sgfs.precision = "single"),
   data.c): a raw vector of P x N floats, each value rounded once */
SEXP sgfs_design_copy32(SEXP x, SEXP center, SEXP scale, SEXP lead, SEXP order)
{
    int N, P;
    const double **in;
    const int one = sgfs_check_design(x, center, scale, lead, &N, &P, &in);
    P += one;
    const int *col = columns_of_rows(order, N);
    SEXP xt = PROTECT(Rf_allocVector(RAWSXP, 4 * (R_xlen_t) P * N));
    float *out = (float *) RAW(xt);
    const double *c = REAL(center), *s = REAL(scale);
    sgfs_advise_huge_pages(out, (size_t) P * N * sizeof(float));
    WRITE_COPY(float)
    UNPROTECT(1);
    return xt;
}

/* the first column (1-based) of the dense design x (sgfs_dense_columns)
   holding a value that is not finite (with allow_na, only an infinite
   one), or 0: the check of a design without an N-vector temporary per
   column */
SEXP sgfs_first_bad_column(SEXP x, SEXP allow_na)
{
    const int na_ok = Rf_asLogical(allow_na) == TRUE;
    int N, P;
    const double **cols = sgfs_dense_columns(x, &N, &P);
    for (int j = 0; j < P; j++) {
        const double *col = cols[j];
        for (R_xlen_t i = 0; i < N; i++)
            if (!R_FINITE(col[i]) && !(na_ok && ISNAN(col[i]))) return Rf_ScalarInteger(j + 1);
    }
    return Rf_ScalarInteger(0);
}
