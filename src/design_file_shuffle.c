/*
 * design_file_shuffle.c - a design file's rows put in random order, with
 * memory and disk reads bounded, for data larger than memory.
 *
 * Output row i is input row order[i] (1-based; R draws the permutation,
 * shuffle_design_file()).  With dest[j] the output position of input row j,
 * the rows go through K buckets of B consecutive output positions each:
 *
 *   pass 1  read the input from start to end; append row j, preceded by
 *           dest[j] (4 bytes), to bucket file floor(dest[j] / B);
 *   pass 2  for k = 0, ..., K - 1: read bucket k into memory (B rows), put
 *           each row at dest[j] - k B, append the block to the output and
 *           delete the bucket.
 *
 * Every read and write is sequential (the disk's fastest way), memory is B
 * rows plus N ints, and the extra disk space the input's size plus 4 bytes
 * a row.  The output's header says its rows are in random order, so that
 * the engine may take contiguous windows of them as minibatches
 * (minibatch.c): a window of a shuffled file is a random sample.
 *
 *   sgfs_design_file_shuffle(from, to, order, bucket_rows, tmp) -> N
 *     tmp: the buckets' path prefix (bucket k is "<tmp>.<k>")
 */
#include "sgfs.h"
#include "design_file.h"
#include <errno.h>

#ifndef PATH_MAX
# define PATH_MAX 4096
#endif

typedef struct shuffle {
    FILE *in, *out, **bucket;
    int K;
    const char *to, *tmp;
    int out_open;               /* the output exists: removed on failure */
} shuffle;

static void bucket_path(const shuffle *s, int k, char *buf, size_t len)
{
    snprintf(buf, len, "%s.%d", s->tmp, k);
}

/* closes and removes everything made so far, then stops with msg */
static void bail(shuffle *s, const char *msg)
{
    char text[1024], path[PATH_MAX];
    snprintf(text, sizeof text, "%s", msg);
    if (s->in) fclose(s->in);
    if (s->out) fclose(s->out);
    if (s->out_open) remove(s->to);
    for (int k = 0; k < s->K; k++) {
        if (s->bucket && s->bucket[k]) fclose(s->bucket[k]);
        bucket_path(s, k, path, sizeof path);
        remove(path);
    }
    Rf_error("%s", text);
}

static void bail_io(shuffle *s, const char *what, const char *path)
{
    char msg[1024];
    snprintf(msg, sizeof msg, "cannot %s '%s': %s", what, path, strerror(errno));
    bail(s, msg);
}

/* Ctrl-C: stops after removing the partial output and the buckets */
static void poll_interrupt(shuffle *s)
{
    if (sgfs_interrupt_pending()) bail(s, "interrupted");
}

/* a path, expanded, in memory of its own (R_ExpandFileName's is static) */
static const char *expanded(SEXP path)
{
    const char *p = R_ExpandFileName(Rf_translateChar(STRING_ELT(path, 0)));
    char *copy = R_alloc(strlen(p) + 1, 1);
    strcpy(copy, p);
    return copy;
}

SEXP sgfs_design_file_shuffle(SEXP from, SEXP to, SEXP order, SEXP bucket_rows, SEXP tmp)
{
    shuffle s = {NULL, NULL, NULL, 0, NULL, NULL, 0};
    const char *in_path = expanded(from);
    s.to = expanded(to);
    s.tmp = expanded(tmp);
    s.in = fopen(in_path, "rb");
    if (s.in == NULL) bail_io(&s, "open", in_path);
    sgfs_dfh h;
    const char *why;
    if (!sgfs_dfh_read(s.in, &h, &why)) {
        char msg[1024];
        snprintf(msg, sizeof msg, "'%s' %s", in_path, why);
        bail(&s, msg);
    }
    const int N = (int) h.N, B = Rf_asInteger(bucket_rows);
    const size_t row = (size_t) h.ncol * (size_t) h.bytes;
    char *names = R_alloc((size_t) h.offset - HEADER, 1);
    if (fread(names, 1, (size_t) h.offset - HEADER, s.in) != (size_t) h.offset - HEADER)
        bail_io(&s, "read", in_path);
    /* dest[j]: the output position of input row j (order checked to be a
       permutation while no file is open: its error leaves nothing behind) */
    fclose(s.in);
    s.in = NULL;
    if (B == NA_INTEGER || B < 1) Rf_error("internal error: 'bucket_rows' must be positive");
    const int *row_at = sgfs_row_order(order, N);
    int *dest = (int *) R_alloc((size_t) N > 0 ? (size_t) N : 1, sizeof(int));
    for (int i = 0; i < N; i++) dest[row_at ? row_at[i] : i] = i;
    s.in = fopen(in_path, "rb");
    if (s.in == NULL || fseek(s.in, (long) h.offset, SEEK_SET) != 0) bail_io(&s, "open", in_path);

    /* pass 1: the rows into their buckets */
    const int K = N == 0 ? 0 : (int) (((double) N + B - 1) / B);
    s.bucket = (FILE **) R_alloc((size_t) K > 0 ? (size_t) K : 1, sizeof(FILE *));
    for (int k = 0; k < K; k++) s.bucket[k] = NULL;
    s.K = K;
    char path[PATH_MAX];
    for (int k = 0; k < K; k++) {
        bucket_path(&s, k, path, sizeof path);
        s.bucket[k] = fopen(path, "wb");
        if (s.bucket[k] == NULL) bail_io(&s, "create", path);
        setvbuf(s.bucket[k], NULL, _IOFBF, (size_t) 1 << 18);
    }
    char *chunk = R_alloc((size_t) CHUNK, row);
    for (int i0 = 0; i0 < N; i0 += CHUNK) {
        if ((i0 / CHUNK) % 256 == 0) poll_interrupt(&s);
        const int m = N - i0 < CHUNK ? N - i0 : CHUNK;
        if (fread(chunk, row, (size_t) m, s.in) != (size_t) m) bail_io(&s, "read", in_path);
        for (int i = 0; i < m; i++) {
            const int32_t d = dest[i0 + i];
            FILE *b = s.bucket[d / B];
            if (fwrite(&d, sizeof d, 1, b) != 1 || fwrite(chunk + (size_t) i * row, row, 1, b) != 1) {
                bucket_path(&s, d / B, path, sizeof path);
                bail_io(&s, "write", path);
            }
        }
    }
    fclose(s.in);
    s.in = NULL;
    for (int k = 0; k < K; k++) {
        const int bad = fclose(s.bucket[k]) != 0;
        s.bucket[k] = NULL;
        if (bad) {
            bucket_path(&s, k, path, sizeof path);
            bail_io(&s, "write", path);
        }
    }

    /* pass 2: each bucket in order, its rows put in place in memory */
    s.out = fopen(s.to, "wb");
    if (s.out == NULL) bail_io(&s, "create", s.to);
    s.out_open = 1;
    sgfs_dfh oh = h;
    oh.N = 0;                   /* (until the rows are all written) */
    oh.shuffled = 0;
    unsigned char hb[HEADER];
    sgfs_dfh_encode(&oh, hb);
    if (fwrite(hb, 1, HEADER, s.out) != HEADER ||
        fwrite(names, 1, (size_t) h.offset - HEADER, s.out) != (size_t) h.offset - HEADER)
        bail_io(&s, "write", s.to);
    char *block = R_alloc((size_t) (N < B ? N : B) > 0 ? (size_t) (N < B ? N : B) : 1, row);
    for (int k = 0; k < K; k++) {
        poll_interrupt(&s);
        const int first = k * B, m = N - first < B ? N - first : B;
        bucket_path(&s, k, path, sizeof path);
        s.bucket[k] = fopen(path, "rb");
        if (s.bucket[k] == NULL) bail_io(&s, "open", path);
        for (int i = 0; i < m; i++) {
            int32_t d;
            if (fread(&d, sizeof d, 1, s.bucket[k]) != 1 || d < first || d >= first + m ||
                fread(block + (size_t) (d - first) * row, row, 1, s.bucket[k]) != 1)
                bail_io(&s, "read", path);
        }
        fclose(s.bucket[k]);
        s.bucket[k] = NULL;
        remove(path);
        if (fwrite(block, row, (size_t) m, s.out) != (size_t) m) bail_io(&s, "write", s.to);
    }
    oh.N = N;
    oh.shuffled = 1;
    sgfs_dfh_encode(&oh, hb);
    if (fseek(s.out, 0, SEEK_SET) != 0 || fwrite(hb, 1, HEADER, s.out) != HEADER)
        bail_io(&s, "write", s.to);
    const int bad = fclose(s.out) != 0;
    s.out = NULL;
    if (bad) bail_io(&s, "write", s.to);
    return Rf_ScalarInteger(N);
}
