/*
 * minibatch.c - drawing a minibatch and gathering its columns.
 *
 * sgfs_minibatch: n distinct indices of 0..N-1, a uniformly random subset
 *   (sampling without replacement), by Floyd's algorithm (Bentley and Floyd
 *   1987):  for j = N-n, ..., N-1:  t = U{0..j} (R_unif_index(j + 1));
 *   add t to S unless it is already there, else add j.
 *   Membership is a small open-addressing hash table (a power of two >= 2n
 *   slots, emptied after each draw), so a draw touches O(n) memory that
 *   stays in cache, whatever N is.  The pure-R reference chains in the tests
 *   replay exactly these draws.
 *   U{0..j} is R's R_unif_index(j + 1) (src/main/RNG.c, R >= 3.6.0) written
 *   out here on R's unif_rand(), so that the same uniforms give the same
 *   index: with sample.kind "Rejection" (R's default), with
 *   b = ceil(log2(j + 1)) and 16-bit chunks c_k = floor(65536 U_k),
 *     v = (c_1 c_2 ...)_65536 over ceil((b + 1) / 16) chunks, masked to its
 *     low b bits; redrawn while v >= j + 1;
 *   with "Rounding", floor((j + 1) U).  R recomputes b = ceil(log2(j + 1))
 *   with a libm log2 and calls through libR for every index; here b is
 *   carried along the loop (the least b with 2^b >= j + 1) and the chunks
 *   are formed inline, (int) of u * 65536 for R's floor (u in [0, 1)):
 *   callgrind, N = 1e5, D = 11, n = 1000, bare loop (bench_gradients.c)
 *   553k -> 424k instructions per minibatch gradient (R_unif_index and its
 *   log2 were 186k, unif_rand itself 141k, which stays).
 *   sgfs_minibatch_begin reads the sample kind (RNGkind()) before each run.
 *
 * sgfs_minibatch_window: k = n / width windows of `width` consecutive
 *   indices (mod N): with k = 1 from a start s = U{0..N-1}, the same
 *   R_unif_index as above; with k > 1 k distinct blocks, by Floyd's
 *   algorithm, of the floor(N / width) blocks of the partition that starts
 *   at a uniform offset (so no row twice: sampling without replacement, as
 *   random rows, whose finite-population factor SGFS relies on).  Every row
 *   is in the minibatch with probability n/N, so the gradient stays
 *   unbiased, and when the rows are in random order (a
 *   shuffled design file, shuffle_design_file(); a shuffled copy, R's
 *   engine_data()) a window is a random sample of them read as one
 *   contiguous block -- the only way a disk keeps up with a sampler whose
 *   data do not fit in memory, and faster than scattered rows in memory
 *   too (bench/results/peers-windows.md).  With one fixed order the windows are not all the subsets
 *   random rows draw from: the minibatch noise's covariance is off by a
 *   relative sd(4 width / (3 N))^(1/2), so short windows in memory, whole
 *   ones on disk.  The starts are drawn `ahead` iterations before they
 *   are used (the first call draws ahead k, then each call k), so that the
 *   driver can ask for a window's rows while the iterations before it
 *   compute.
 *
 * sgfs_minibatch_shuffle_front: the batch's first m indices a uniformly
 *   random subset of it (for SGFS's Fisher rows): a partial shuffle of its
 *   windows, or of its rows.
 *
 * sgfs_gather_dot: copies the n columns xt[, idx] (P x N, one example per
 *   column) into the contiguous P x n buffer xb and forms
 *   eta_i = xt[, idx_i]' beta on the way, while the column is in L1.  The
 *   random reads, not the arithmetic, dominate a minibatch gradient on large
 *   data: the columns PREFETCH_AHEAD examples ahead are prefetched, and the
 *   data copy is backed by huge pages (design_copy.c) against TLB misses.
 *
 * sgfs_rows_score: sum_i r_i u_i in one pass, each column read once.  Its
 *   dot products and axpy are unrolled by four and, with GCC 12+ on x86-64
 *   Linux, compiled again for x86-64-v3 (AVX2/FMA) and chosen at load time
 *   (SGFS_VECTOR_CLONES in sgfs.h): it reads SGLD-CV's held rows, thousands
 *   in every minibatch on Covertype.
 */
#include "sgfs.h"
#include <R_ext/Random.h>
#include <stdint.h>

#define PREFETCH_AHEAD 8

/* hash-table size for batches of n: a power of two >= 2n */
R_xlen_t sgfs_minibatch_table_size(int n)
{
    R_xlen_t m = 4;
    while (m < 2 * (R_xlen_t) n) m *= 2;
    return m;
}

/* table[] holds index + 1 (0 = empty); slot[k] remembers where the k-th
   index went, so the table is emptied in O(n) */
static int insert_if_absent(int *table, size_t mask, int key, R_xlen_t *where)
{
    size_t h = ((size_t) ((unsigned int) key * 2654435761u)) & mask;
    while (table[h] != 0) {
        if (table[h] == key + 1) return 0;
        h = (h + 1) & mask;
    }
    table[h] = key + 1;
    *where = (R_xlen_t) h;
    return 1;
}

/* the sample kind R's R_unif_index uses now (RNGkind()[3]), before a run */
void sgfs_minibatch_begin(sgfs_batch *b)
{
    SEXP call = PROTECT(Rf_lang1(Rf_install("RNGkind")));
    SEXP kind = PROTECT(Rf_eval(call, R_BaseEnv));
    b->rounding = TYPEOF(kind) == STRSXP && Rf_length(kind) >= 3 &&
                  strcmp(CHAR(STRING_ELT(kind, 2)), "Rounding") == 0;
    UNPROTECT(2);
}

/* R_unif_index(dn) under sample.kind "Rejection", bits = ceil(log2(dn)):
   R's rbits(bits) (16-bit chunks of unif_rand(), masked) until below dn */
static inline double unif_index_rejection(double dn, int bits)
{
    const int_least64_t one64 = 1, mask = (one64 << bits) - 1;
    double dv;
    do {
        int_least64_t v = 0;
        for (int k = 0; k <= bits; k += 16) {
            /* R's (int) floor(u * 65536): the same for u in [0, 1), without
               the libm call */
            const int v1 = (int) (unif_rand() * 65536);
            v = 65536 * v + v1;
        }
        dv = (double) (v & mask);
    } while (dn <= dv);
    return dv;
}

/* U{0..N-1}: R's R_unif_index(N) */
static double unif_index(double dn, int rounding)
{
    if (rounding) return floor(dn * unif_rand());
    int bits = 0;
    while ((double) ((int_least64_t) 1 << bits) < dn) bits++;
    return unif_index_rejection(dn, bits);
}

/* one minibatch's k window starts into dest: a uniform start (k = 1), or
   k distinct blocks of `width` rows (Floyd's algorithm, sgfs_minibatch, on
   the floor(N / width) blocks) of the partition that starts at a uniform
   offset o: starts (o + j width) mod N, no two windows overlapping */
static void draw_starts(sgfs_batch *b, int N, double *dest)
{
    const int k = b->per, w = b->width;
    if (k == 1) {
        dest[0] = unif_index((double) N, b->rounding);
        return;
    }
    const double o = unif_index((double) N, b->rounding);
    sgfs_minibatch(b, N / w, k);                 /* the blocks, into b->idx */
    for (int i = 0; i < k; i++) dest[i] = fmod(o + (double) b->idx[i] * w, (double) N);
}

/* the windows of this iteration into b->idx (k width rows); returns how
   many starts were drawn, the last ones of b->starts (all ahead k of them
   on the first call, else k) */
int sgfs_minibatch_window(sgfs_batch *b, int N)
{
    const int k = b->per, w = b->width, len = b->ahead * k;
    int drawn = k;
    if (b->starts[0] < 0) {
        for (int q = 0; q < len; q += k) draw_starts(b, N, b->starts + q);
        drawn = len;
    }
    /* this minibatch's starts aside (after the queue: draw_starts uses idx
       as scratch), the queue moved on, the next ones drawn, then the rows */
    double *now = b->starts + len;
    memcpy(now, b->starts, (size_t) k * sizeof(double));
    memmove(b->starts, b->starts + k, (size_t) (len - k) * sizeof(double));
    draw_starts(b, N, b->starts + len - k);
    for (int i = 0, at = 0; i < k; i++) {
        const int s = (int) now[i];
        for (int r = 0; r < w; r++, at++) b->idx[at] = s + r < N ? s + r : s + r - N;
    }
    return drawn;
}

void sgfs_minibatch(sgfs_batch *b, int N, int n)
{
    const size_t mask = (size_t) b->table_size - 1;
    const int rounding = b->rounding;
    int bits = 0;                   /* ceil(log2(j + 1)): least with 2^bits >= j + 1 */
    while (((int_least64_t) 1 << bits) < (int_least64_t) (N - n) + 1) bits++;
    for (int k = 0, j = N - n; j < N; j++, k++) {
        const double dn = (double) j + 1.0;
        int t;
        if (rounding)
            t = (int) floor(dn * unif_rand());
        else {
            if (((int_least64_t) 1 << bits) < (int_least64_t) j + 1) bits++;
            t = (int) unif_index_rejection(dn, bits);
        }
        if (insert_if_absent(b->table, mask, t, b->slot + k)) {
            b->idx[k] = t;
        } else {
            insert_if_absent(b->table, mask, j, b->slot + k);   /* j is new */
            b->idx[k] = j;
        }
    }
    for (int k = 0; k < n; k++) b->table[b->slot[k]] = 0;
}

/* SGFS's Fisher estimate reads the batch's first m = fisher_rows rows,
   which must be a uniformly random subset of it, and in the order the
   batch is drawn they are not: Floyd's k-th index is at most N - n + k
   (with n = N the first m are always rows 0..m-1), and Floyd's draw of
   windows puts low blocks first (with all blocks in the batch, always the
   same).  So the first m indices are put in a uniformly random order over
   the whole batch, by a partial Fisher-Yates shuffle after the batch's
   draws: of the k windows of a batch of windows (their rows, consecutive
   rows of data in random order, are a random sample already: up to
   ceil(m / width) draws, and the Fisher rows stay whole windows, read as
   streams), else of the rows (m draws). */
static void swap_runs(int *a, int *b, int len)
{
    for (int i = 0; i < len; i++) {
        const int t = a[i];
        a[i] = b[i];
        b[i] = t;
    }
}

void sgfs_minibatch_shuffle_front(sgfs_batch *b, int n, int m)
{
    if (b->ahead) {
        const int k = b->per, w = b->width;
        for (int j = 0; j < k - 1 && (double) j * w < m; j++) {
            const int r = j + (int) unif_index((double) (k - j), b->rounding);
            if (r != j) swap_runs(b->idx + (size_t) j * w, b->idx + (size_t) r * w, w);
        }
        return;
    }
    for (int k = 0; k < m && k < n - 1; k++) {
        const int r = k + (int) unif_index((double) (n - k), b->rounding);
        const int t = b->idx[k];
        b->idx[k] = b->idx[r];
        b->idx[r] = t;
    }
}

/* u' beta, four partial sums breaking the floating-point dependency chain */
static inline SGFS_ALWAYS_INLINE double dot4(const double *restrict u, const double *restrict beta, int P)
{
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    int j = 0;
    for (; j + 4 <= P; j += 4) {
        s0 += u[j] * beta[j];
        s1 += u[j + 1] * beta[j + 1];
        s2 += u[j + 2] * beta[j + 2];
        s3 += u[j + 3] * beta[j + 3];
    }
    for (; j < P; j++) s0 += u[j] * beta[j];
    return (s0 + s1) + (s2 + s3);
}

/* s += r u, unrolled by four like dot4 (at -O2 the compiler vectorises
   neither loop as written plainly) */
static inline SGFS_ALWAYS_INLINE void axpy4(double r, const double *restrict u, double *restrict s, int P)
{
    int j = 0;
    for (; j + 4 <= P; j += 4) {
        s[j] += r * u[j];
        s[j + 1] += r * u[j + 1];
        s[j + 2] += r * u[j + 2];
        s[j + 3] += r * u[j + 3];
    }
    for (; j < P; j++) s[j] += r * u[j];
}

/* starts the cache misses of `bytes` bytes from u (used PREFETCH_AHEAD
   examples before they are read) */
static inline void prefetch_bytes(const void *u, size_t bytes)
{
#if defined(__GNUC__)
    const char *c = (const char *) u;
    for (size_t off = 0; off < bytes; off += 64)
        __builtin_prefetch(c + off, 0, 3);
#else
    (void) u; (void) bytes;
#endif
}

/* ... of a column of P doubles */
static inline void prefetch_column(const double *u, int P)
{
    prefetch_bytes(u, (size_t) P * sizeof(double));
}

/* dot4 and axpy4 on a single-precision column (each value widened) */
static inline SGFS_ALWAYS_INLINE double dot4f(const float *restrict u, const double *restrict beta, int P)
{
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    int j = 0;
    for (; j + 4 <= P; j += 4) {
        s0 += (double) u[j] * beta[j];
        s1 += (double) u[j + 1] * beta[j + 1];
        s2 += (double) u[j + 2] * beta[j + 2];
        s3 += (double) u[j + 3] * beta[j + 3];
    }
    for (; j < P; j++) s0 += (double) u[j] * beta[j];
    return (s0 + s1) + (s2 + s3);
}

static inline SGFS_ALWAYS_INLINE void axpy4f(double r, const float *restrict u, double *restrict s, int P)
{
    int j = 0;
    for (; j + 4 <= P; j += 4) {
        s[j] += r * (double) u[j];
        s[j + 1] += r * (double) u[j + 1];
        s[j + 2] += r * (double) u[j + 2];
        s[j + 3] += r * (double) u[j + 3];
    }
    for (; j < P; j++) s[j] += r * (double) u[j];
}

/* sgfs_rows_score on the compressed rows: each row costs its stored
   entries; the centring enters once, as m' beta and - (sum_i r_i) m */
/* asks for compressed row j's words (rows of every width: its start in
   rows_ptr must be in cache by then) */
static inline SGFS_ALWAYS_INLINE void prefetch_sparse_row(const sgfs_data *d, int j)
{
#if defined(__GNUC__)
    const char *w = (const char *) sgfs_sparse_start(d, j);
    const size_t bytes = (size_t) sgfs_sparse_row_words(d, j) * sizeof(int);
    for (size_t off = 0; off < bytes; off += 64) __builtin_prefetch(w + off, 0, 3);
#else
    (void) d;
    (void) j;
#endif
}

static inline SGFS_ALWAYS_INLINE void prefetch_sparse_start(const sgfs_data *d, int j)
{
#if defined(__GNUC__)
    if (d->rows_width == 0) __builtin_prefetch(d->rows_ptr + j, 0, 3);
#else
    (void) d;
    (void) j;
#endif
}

static inline SGFS_ALWAYS_INLINE void rows_score_sparse(
    const sgfs_data *d, const int *idx, int n, const double *beta, const double *centre,
    double (*resid)(int, double, double, const void *), const void *ctx, double *restrict sum)
{
    const int P = d->P;
    const double *restrict m = d->rows_shift;
    const double mb = dot4(m, beta, P), mc = centre ? dot4(m, centre, P) : 0.0;
    double r_sum = 0.0;
    const double *restrict level = d->rows_level;
    for (int i = 0; i < n; i++) {
        if (i + 2 * PREFETCH_AHEAD < n) prefetch_sparse_start(d, idx[i + 2 * PREFETCH_AHEAD]);
        if (i + PREFETCH_AHEAD < n) prefetch_sparse_row(d, idx[i + PREFETCH_AHEAD]);
        const sgfs_sparse q = sgfs_sparse_row(d, idx[i]);
        const double r = resid(idx[i], sgfs_sparse_dot(q, level, beta) - mb,
                               centre ? sgfs_sparse_dot(q, level, centre) - mc : 0.0, ctx);
        sgfs_sparse_axpy(r, q, level, sum);
        r_sum += r;
    }
    for (int j = 0; j < P; j++) sum[j] -= r_sum * m[j];
}

/* sum = sum_i r_i u_i over the examples idx, r_i = resid(idx[i], u_i' beta,
   u_i' centre, ctx) (centre may be NULL: 0 is passed), reading each column
   once, without a copy: the dot products, the residual and the axpy while
   the column is in L1; from the compressed rows where the engine has them */
SGFS_VECTOR_CLONES
void sgfs_rows_score(const sgfs_lik *lik, const int *idx, int n,
                     const double *beta, const double *centre,
                     double (*resid)(int, double, double, const void *), const void *ctx,
                     double *restrict sum)
{
    const sgfs_data *d = lik->data;
    const int P = d->P;
    const double *xt = d->xt;
    for (int j = 0; j < P; j++) sum[j] = 0.0;
    if (d->rows_ptr != NULL) {
        rows_score_sparse(d, idx, n, beta, centre, resid, ctx, sum);
        return;
    }
    if (d->xt32 != NULL) {
        for (int i = 0; i < n; i++) {
            const float *restrict u = d->xt32 + (size_t) idx[i] * P;
            if (i + PREFETCH_AHEAD < n)
                prefetch_bytes(d->xt32 + (size_t) idx[i + PREFETCH_AHEAD] * P, P * sizeof(float));
            const double r = resid(idx[i], dot4f(u, beta, P), centre ? dot4f(u, centre, P) : 0.0,
                                   ctx);
            axpy4f(r, u, sum, P);
        }
        return;
    }
    if (xt == NULL) {               /* raw rows (a file, a matrix in place): each read into xb */
        sgfs_data_prefetch(d, idx, n);
        for (int i = 0; i < SGFS_TOUCH_AHEAD && i < n; i++) sgfs_data_touch(d, idx[i]);
        for (int i = 0; i < n; i++) {
            if (i + SGFS_TOUCH_AHEAD < n) sgfs_data_touch(d, idx[i + SGFS_TOUCH_AHEAD]);
            double *u = lik->xb;
            sgfs_raw_row(d, idx[i], u);
            const double r = resid(idx[i], dot4(u, beta, P), centre ? dot4(u, centre, P) : 0.0,
                                   ctx);
            axpy4(r, u, sum, P);
        }
        return;
    }
    for (int i = 0; i < n; i++) {
        const double *restrict u = xt + (size_t) idx[i] * P;
        if (i + PREFETCH_AHEAD < n) prefetch_column(xt + (size_t) idx[i + PREFETCH_AHEAD] * P, P);
        const double r = resid(idx[i], dot4(u, beta, P), centre ? dot4(u, centre, P) : 0.0, ctx);
        axpy4(r, u, sum, P);
    }
}

/* the gather fused with eta_i = u_i' beta: each column is used while it is
   in L1 */
SGFS_VECTOR_CLONES
void sgfs_gather_dot(const double *xt, int P, const int *idx, int n,
                     const double *beta, double *xb, double *eta)
{
    for (int i = 0; i < n; i++) {
        const double *u = xt + (size_t) idx[i] * P;
        if (i + PREFETCH_AHEAD < n) prefetch_column(xt + (size_t) idx[i + PREFETCH_AHEAD] * P, P);
        memcpy(xb + (size_t) i * P, u, (size_t) P * sizeof(double));
        eta[i] = dot4(u, beta, P);
    }
}

/* eta_i += o_i, the rows' offsets, for the examples idx[0..n-1] (nothing
   without offsets) */
void sgfs_add_offset(const sgfs_data *d, const int *idx, int n, double *eta)
{
    if (d->offset)
        for (int i = 0; i < n; i++) eta[i] += d->offset[idx[i]];
}

/* The columns of the examples idx[0..n-1] and, unless beta is NULL, the
   GLM's linear predictor eta_i = u_i' beta + o_i (o_i the row's offset, 0
   without): a pointer into xt itself when idx is one contiguous block (the
   chunks of a full-data pass: no copy), else the columns gathered into
   lik->xb. */
const double *sgfs_batch_columns(sgfs_lik *lik, const double *beta,
                                 const int *idx, int n, double *eta)
{
    const sgfs_data *d = lik->data;
    const int P = d->P;
    if (n > lik->xb_cols)                 /* (cannot happen: engine.c's xb_columns()) */
        Rf_error("internal error: a gather of %d columns into a scratch of %d", n, lik->xb_cols);
    int block = 1;
    for (int i = 1; i < n && block; i++) block = idx[i] == idx[0] + i;
    if (d->xt == NULL) {            /* the compressed rows, floats or a file: gathered */
        sgfs_data_columns(d, idx, n, lik->xb);
        if (beta) {
            /* (the floats' and a file's eta as the dense copy's would be:
               dot4 per gathered column, dgemv on a block, so that they
               give its draws) */
            if ((d->xt32 || d->raw_x || d->raw_x32) && !block)
                for (int i = 0; i < n; i++) eta[i] = dot4(lik->xb + (size_t) i * P, beta, P);
            else sgfs_xt_beta(lik->xb, P, n, beta, eta);
            sgfs_add_offset(d, idx, n, eta);
        }
        return lik->xb;
    }
    if (!block) {
        if (beta) {
            sgfs_gather_dot(d->xt, P, idx, n, beta, lik->xb, eta);
            sgfs_add_offset(d, idx, n, eta);
        } else
            for (int i = 0; i < n; i++)
                memcpy(lik->xb + (size_t) i * P, d->xt + (size_t) idx[i] * P,
                       (size_t) P * sizeof(double));
        return lik->xb;
    }
    const double *x = d->xt + (size_t) idx[0] * P;
    if (beta) {
        sgfs_xt_beta(x, P, n, beta, eta);
        sgfs_add_offset(d, idx, n, eta);
    }
    return x;
}

int sgfs_all_finite(const double *x, int n)
{
    for (int i = 0; i < n; i++)
        if (!R_FINITE(x[i])) return 0;
    return 1;
}
