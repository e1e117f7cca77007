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
 *
 * sgfs_gather_dot: copies the n columns xt[, idx] (P x N, one example per
 *   column) into the contiguous P x n buffer xb and forms
 *   eta_i = xt[, idx_i]' beta on the way, while the column is in L1.  The
 *   random reads, not the arithmetic, dominate a minibatch gradient on large
 *   data (DESIGN.md 2): the columns PREFETCH_AHEAD examples ahead are
 *   prefetched, and the data copy is backed by huge pages (design_copy.c)
 *   against TLB misses.  Measured on this machine (D = 50, n = 500, reference
 *   BLAS): memcpy gather + dgemv 143 / 153 us per gradient at N = 1e4 / 1e6;
 *   fused without prefetch 100 / 229-249 us; fused with prefetch 84 / 144 us.
 *
 * sgfs_rows_score: sum_i r_i u_i in one pass, each column read once.  Its
 *   dot products and axpy are unrolled by four and, with GCC 12+ on x86-64
 *   Linux, compiled again for x86-64-v3 (AVX2/FMA) and chosen at load time
 *   (SGFS_VECTOR_CLONES in sgfs.h): SGLD-CV on Covertype (2,691 rows in
 *   every minibatch) 267 -> 180 us per iteration, 107 -> 93 us without them
 *   (of which the unrolling alone 260 -> 207 and 104 -> 99).
 */
#include "sgfs.h"
#include <R_ext/Random.h>

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

void sgfs_minibatch(sgfs_batch *b, int N, int n)
{
    const size_t mask = (size_t) b->table_size - 1;
    for (int k = 0, j = N - n; j < N; j++, k++) {
        int t = (int) R_unif_index((double) j + 1.0);
        if (insert_if_absent(b->table, mask, t, b->slot + k)) {
            b->idx[k] = t;
        } else {
            insert_if_absent(b->table, mask, j, b->slot + k);   /* j is new */
            b->idx[k] = j;
        }
    }
    for (int k = 0; k < n; k++) b->table[b->slot[k]] = 0;
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

/* starts the cache misses of a column of P doubles (used PREFETCH_AHEAD
   examples before it is read) */
static inline void prefetch_column(const double *u, int P)
{
#if defined(__GNUC__)
    const char *c = (const char *) u;
    for (size_t off = 0; off < (size_t) P * sizeof(double); off += 64)
        __builtin_prefetch(c + off, 0, 3);
#else
    (void) u; (void) P;
#endif
}

/* sum_k v_k beta[col_k] over a stored row of (value, column) pairs, four
   partial sums */
static inline SGFS_ALWAYS_INLINE double sparse_dot(const double *restrict ent, R_xlen_t len,
                                                   const double *restrict beta)
{
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    R_xlen_t k = 0;
    for (; k + 4 <= len; k += 4) {
        const double *q = ent + 2 * k;
        s0 += q[0] * beta[(int) q[1]];
        s1 += q[2] * beta[(int) q[3]];
        s2 += q[4] * beta[(int) q[5]];
        s3 += q[6] * beta[(int) q[7]];
    }
    for (; k < len; k++) s0 += ent[2 * k] * beta[(int) ent[2 * k + 1]];
    return (s0 + s1) + (s2 + s3);
}

/* the first entry of row i and the number of its entries */
static inline SGFS_ALWAYS_INLINE const double *sparse_row(const sgfs_engine *e, int i, R_xlen_t *len)
{
    if (e->rows_width > 0) {
        *len = e->rows_width;
        return e->rows_ent + 2 * (size_t) i * (size_t) e->rows_width;
    }
    const size_t a = (size_t) e->rows_ptr[i];
    *len = (R_xlen_t) ((size_t) e->rows_ptr[i + 1] - a);
    return e->rows_ent + 2 * a;
}

/* sgfs_rows_score on the compressed rows: each row costs its stored
   entries; the centring enters once, as m' beta and - (sum_i r_i) m */
static inline SGFS_ALWAYS_INLINE void rows_score_sparse(
    const sgfs_engine *e, const int *idx, int n, const double *beta, const double *centre,
    double (*resid)(int, double, double, void *), void *ctx, double *restrict sum)
{
    const int P = e->P;
    const double *restrict m = e->rows_shift;
    const double mb = dot4(m, beta, P), mc = centre ? dot4(m, centre, P) : 0.0;
    double r_sum = 0.0;
    for (int i = 0; i < n; i++) {
#if defined(__GNUC__)
        if (e->rows_width == 0 && i + 2 * PREFETCH_AHEAD < n)
            __builtin_prefetch(e->rows_ptr + idx[i + 2 * PREFETCH_AHEAD], 0, 3);
        if (i + PREFETCH_AHEAD < n) {
            R_xlen_t ahead;
            const char *c = (const char *) sparse_row(e, idx[i + PREFETCH_AHEAD], &ahead);
            for (size_t off = 0; off < 2 * (size_t) ahead * sizeof(double); off += 64)
                __builtin_prefetch(c + off, 0, 3);
        }
#endif
        R_xlen_t len;
        const double *restrict q = sparse_row(e, idx[i], &len);
        const double r = resid(idx[i], sparse_dot(q, len, beta) - mb,
                               centre ? sparse_dot(q, len, centre) - mc : 0.0, ctx);
        for (R_xlen_t k = 0; k < len; k++) sum[(int) q[2 * k + 1]] += r * q[2 * k];
        r_sum += r;
    }
    for (int j = 0; j < P; j++) sum[j] -= r_sum * m[j];
}

/* sum = sum_i r_i u_i over the examples idx, r_i = resid(idx[i], u_i' beta,
   u_i' centre, ctx) (centre may be NULL: 0 is passed), reading each column
   once, without a copy: the dot products, the residual and the axpy while
   the column is in L1; from the compressed rows where the engine has them */
SGFS_VECTOR_CLONES
void sgfs_rows_score(const sgfs_engine *e, const int *idx, int n,
                     const double *beta, const double *centre,
                     double (*resid)(int, double, double, void *), void *ctx,
                     double *restrict sum)
{
    const int P = e->P;
    const double *xt = e->xt;
    for (int j = 0; j < P; j++) sum[j] = 0.0;
    if (e->rows_ptr != NULL) {
        rows_score_sparse(e, idx, n, beta, centre, resid, ctx, sum);
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
void sgfs_add_offset(const sgfs_engine *e, const int *idx, int n, double *eta)
{
    if (e->offset)
        for (int i = 0; i < n; i++) eta[i] += e->offset[idx[i]];
}

/* The columns of the examples idx[0..n-1] and, unless beta is NULL, the
   GLM's linear predictor eta_i = u_i' beta + o_i (o_i the row's offset, 0
   without): a pointer into xt itself when idx is one contiguous block (the
   chunks of a full-data pass: no copy), else the columns gathered into
   e->xb. */
const double *sgfs_batch_columns(sgfs_engine *e, const double *beta,
                                 const int *idx, int n, double *eta)
{
    int block = 1;
    for (int i = 1; i < n && block; i++) block = idx[i] == idx[0] + i;
    if (!block) {
        if (beta) {
            sgfs_gather_dot(e->xt, e->P, idx, n, beta, e->xb, eta);
            sgfs_add_offset(e, idx, n, eta);
        } else
            for (int i = 0; i < n; i++)
                memcpy(e->xb + (size_t) i * e->P, e->xt + (size_t) idx[i] * e->P,
                       (size_t) e->P * sizeof(double));
        return e->xb;
    }
    const double *x = e->xt + (size_t) idx[0] * e->P;
    if (beta) {
        sgfs_xt_beta(x, e->P, n, beta, eta);
        sgfs_add_offset(e, idx, n, eta);
    }
    return x;
}

int sgfs_all_finite(const double *x, int n)
{
    for (int i = 0; i < n; i++)
        if (!R_FINITE(x[i])) return 0;
    return 1;
}
