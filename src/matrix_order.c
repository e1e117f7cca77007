/*
 * matrix_order.c - a matrix read in place, laid out as the engine's rows
 * for a run and put back after it.
 *
 * The engine reads its rows in a random order o (a permutation of 1..N,
 * R's copy_order()), so that a minibatch is a few windows of consecutive
 * rows: a random sample read as one stream (minibatch.c).  A copy is made
 * that way (design_copy.c: P x N, a row's values contiguous).  A user's
 * N x p double matrix read in place (no copy: R/data-access.R) is put in
 * that layout where it is while a fit or a run of chains reads it (R's
 * with_engine_order()), and back after it, bit for bit: values only move.  In the engine's
 * layout, value j of engine row q is at q p + j and is x[o_q, j]; data.c
 * then reads it as it reads a design file's rows.
 *
 * Forward, on the N p values a (a[i + N j] = x[i, j]):
 *   1. each column's rows in the order o, through an N-value buffer;
 *   2. with N = m T + r (row blocks of T), the last r rows put aside
 *      (r x p, by rows), and the columns' first m T values packed;
 *   3. the m T x p matrix, seen as T-value blocks indexed (b, j), b + m j,
 *      has its m x p grid of blocks transposed by following the cycles of
 *      k -> k p mod (m p - 1) (a bit a block marks those moved; one block
 *      held): block (b, j) to j + p b;
 *   4. each row block b, now T x p by columns, transposed through a
 *      T p-value buffer to p x T: row t's values contiguous;
 *   5. the r rows set aside appended, by rows.
 * Back: the same steps in reverse, each inverted.  Steps 3 and 4 move whole
 * blocks of T values and transpose T x p tiles in cache, so the layout
 * costs a few passes over the matrix, not a scattered access a value: at
 * 2e6 x 50, 0.8 s forward and 0.7 s back (a copy took 2.0-2.5 s to make).
 * All scratch (sgfs_matrix_scratch_bytes()) is allocated by R before the
 * rows move, so that putting them back allocates nothing and cannot fail;
 * there is no R_CheckUserInterrupt inside, so a step is never left half
 * done.  Each step records the layout in the state environment's
 * `engine_layout`, which data.c reads (outside a run, engine row q is
 * read from the user's row o_q).
 */
#include "sgfs.h"

#define BLOCK_ROWS 512

/* the scratch's parts, carved from one raw vector: an N-value column, a
   T p tile, the r x p rows set aside (r < T), a T-value block and the
   blocks' marks */
typedef struct {
    double *column, *tile, *rest, *block;
    unsigned char *moved;
} scratch;

static size_t scratch_bytes(int N, int p)
{
    const size_t m = (size_t) N / BLOCK_ROWS;
    return sizeof(double) * ((size_t) N + 2 * (size_t) BLOCK_ROWS * p + BLOCK_ROWS) +
           m * (size_t) p / 8 + 1;
}

SEXP sgfs_matrix_scratch_bytes(SEXP N, SEXP p)
{
    return Rf_ScalarReal((double) scratch_bytes(Rf_asInteger(N), Rf_asInteger(p)));
}

static scratch carve(SEXP raw, int N, int p)
{
    if (TYPEOF(raw) != RAWSXP || (size_t) Rf_xlength(raw) < scratch_bytes(N, p))
        Rf_error("internal error: the layout's scratch is too small");
    double *d = (double *) RAW(raw);
    scratch s;
    s.column = d;
    s.tile = s.column + N;
    s.rest = s.tile + (size_t) BLOCK_ROWS * p;
    s.block = s.rest + (size_t) BLOCK_ROWS * p;
    s.moved = (unsigned char *) (s.block + BLOCK_ROWS);
    return s;
}

/* step 1: each column's rows in the order o (forward) or back */
static void order_columns(double *a, int N, int p, const int *o, double *column, int forward)
{
    for (int j = 0; j < p; j++) {
        double *col = a + (size_t) j * N;
        if (forward)
            for (int q = 0; q < N; q++) column[q] = col[o[q] - 1];
        else
            for (int q = 0; q < N; q++) column[o[q] - 1] = col[q];
        memcpy(col, column, (size_t) N * sizeof(double));
    }
}

/* step 3: the rows x cols grid of T-value blocks (block k = i + rows c at
   k) transposed to cols x rows (block (i, c) to c + cols i), by cycles:
   the block that lands at k comes from k rows mod (K - 1) */
static void transpose_blocks(double *a, size_t rows, size_t cols, const scratch *s)
{
    const size_t K = rows * cols, T = BLOCK_ROWS, bytes = T * sizeof(double);
    if (K < 3) return;
    memset(s->moved, 0, K / 8 + 1);
    for (size_t start = 1; start < K - 1; start++) {
        if (s->moved[start / 8] & (1u << (start % 8))) continue;
        memcpy(s->block, a + start * T, bytes);
        size_t at = start;
        for (;;) {
            s->moved[at / 8] |= (unsigned char) (1u << (at % 8));
            const size_t from = at * rows % (K - 1);
            if (from == start) break;
            memcpy(a + at * T, a + from * T, bytes);
            at = from;
        }
        memcpy(a + at * T, s->block, bytes);
    }
}

/* step 4: each of the m tiles of T p values, T x p by columns, to p x T
   (forward), or back; eight rows at a time, so that each column's eight
   values are one cache line and the eight rows' values stay in L1 */
static void transpose_tiles(double *a, size_t m, int p, double *tile, int forward)
{
    const size_t T = BLOCK_ROWS, n = T * (size_t) p;
    for (size_t b = 0; b < m; b++) {
        double *x = a + b * n;
        memcpy(tile, x, n * sizeof(double));
        for (size_t t0 = 0; t0 < T; t0 += 8)
            for (int j = 0; j < p; j++)
                for (size_t t = t0; t < t0 + 8; t++)
                    if (forward) x[t * p + j] = tile[t + T * j];
                    else x[t + T * j] = tile[t * p + j];
    }
}

static void to_engine_layout(double *a, int N, int p, const int *o, const scratch *s)
{
    const size_t T = BLOCK_ROWS, m = (size_t) N / T, mT = m * T, r = (size_t) N - mT;
    order_columns(a, N, p, o, s->column, 1);
    for (size_t i = 0; i < r; i++)
        for (int j = 0; j < p; j++) s->rest[i * p + j] = a[(size_t) j * N + mT + i];
    for (int j = 1; j < p; j++) memmove(a + j * mT, a + (size_t) j * N, mT * sizeof(double));
    transpose_blocks(a, m, (size_t) p, s);
    transpose_tiles(a, m, p, s->tile, 1);
    memcpy(a + mT * p, s->rest, r * p * sizeof(double));
}

static void to_user_layout(double *a, int N, int p, const int *o, const scratch *s)
{
    const size_t T = BLOCK_ROWS, m = (size_t) N / T, mT = m * T, r = (size_t) N - mT;
    memcpy(s->rest, a + mT * p, r * p * sizeof(double));
    transpose_tiles(a, m, p, s->tile, 0);
    transpose_blocks(a, (size_t) p, m, s);
    for (int j = p - 1; j >= 1; j--) memmove(a + (size_t) j * N, a + j * mT, mT * sizeof(double));
    for (size_t i = 0; i < r; i++)
        for (int j = 0; j < p; j++) a[(size_t) j * N + mT + i] = s->rest[i * p + j];
    order_columns(a, N, p, o, s->column, 0);
}

/* the vector that holds x's values in R's own memory: x, or the one a chain
   of R's wrappers holds (ALTREP class wrap_real: R wraps a shared vector
   whose attributes change, e.g. colnames<-, instead of copying it), else
   R_NilValue (other ALTREP values may be mapped read-only or computed on
   demand) */
static SEXP own_values(SEXP x)
{
    while (ALTREP(x)) {
        SEXP a = ATTRIB(ALTREP_CLASS(x));
        if (TYPEOF(a) != LISTSXP || TYPEOF(CAR(a)) != SYMSXP ||
            strcmp(CHAR(PRINTNAME(CAR(a))), "wrap_real") != 0)
            return R_NilValue;
        x = R_altrep_data1(x);
    }
    return TYPEOF(x) == REALSXP ? x : R_NilValue;
}

/* x (N x p doubles) to the engine's layout (forward) or back, the rows'
   order o (1-based), the scratch a raw vector of sgfs_matrix_scratch_bytes();
   records the layout in state$engine_layout.  The values are moved where
   they are (own_values(): a wrapper's, whose read-only pointer the engine
   reads, REAL_RO; REAL() would have R copy a shared one) */
SEXP sgfs_matrix_reorder(SEXP x, SEXP order, SEXP scratch_raw, SEXP state, SEXP forward)
{
    SEXP values = own_values(x);
    if (!Rf_isMatrix(x) || values == R_NilValue || Rf_xlength(values) != Rf_xlength(x))
        Rf_error("internal error: only a double matrix in R's own memory can be laid out");
    const int N = Rf_nrows(x), p = Rf_ncols(x);
    if (TYPEOF(order) != INTSXP || Rf_xlength(order) != N || TYPEOF(state) != ENVSXP ||
        TYPEOF(forward) != LGLSXP || Rf_length(forward) != 1 || LOGICAL(forward)[0] == NA_LOGICAL)
        Rf_error("internal error: the rows' order or state do not match the matrix");
    const scratch s = carve(scratch_raw, N, p);
    const int *o = INTEGER(order), fwd = LOGICAL(forward)[0];
    double *a = (double *) REAL_RO(values);
    if (!sgfs_is_permutation(o, N, (char *) s.column))     /* (the column as marks) */
        Rf_error("internal error: the rows' order must be a permutation of 1..%d", N);
    if (fwd) to_engine_layout(a, N, p, o, &s);
    else to_user_layout(a, N, p, o, &s);
    /* (the caller's TRUE or FALSE itself: recording the layout allocates
       nothing) */
    Rf_defineVar(Rf_install("engine_layout"), forward, state);
    return R_NilValue;
}

/* whether x's values can be laid out (own_values()) */
SEXP sgfs_reorderable(SEXP x)
{
    return Rf_ScalarLogical(own_values(x) != R_NilValue);
}
