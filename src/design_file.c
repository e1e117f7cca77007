/*
 * design_file.c - a design kept in a file, for data larger than memory.
 *
 * The file holds the raw N x ncol design row by row (a row's values
 * contiguous, doubles or floats), after a header and the column names:
 *
 *   bytes 0-7    "SGFSDSN1"
 *   8-11         0x01020304 (the byte order: a file from a machine of the
 *                other order is refused)
 *   12-15        bytes per value, 8 or 4
 *   16-23        N (rows written so far), 24-31 ncol
 *   32-39        the names' length L, 40-47 the data's offset (a multiple
 *                of the page size, 4096, at least 64 + L)
 *   48-51        1 if the rows are in random order (shuffle_design_file(),
 *                design_file_shuffle.c), else 0 (cleared by an append)
 *   64-(64+L)    the column names, each ended by '\n'
 *
 * Rows are appended in chunks (sgfs_design_file_write), so a file can be
 * larger than memory when written.  The engine maps it read-only (mmap:
 * the operating system's page cache holds what fits in memory and reads
 * the rest when touched) and standardises each value when it reads it,
 *
 *   u_ij = (x_i(j - lead) - c_j) / s_j,     u_i0 = (1 - c_0) / s_0 with lead,
 *
 * the expression of the dense copy (design_copy.c), so that a file and
 * the same data in memory give the same draws.  The map is made on first
 * use from the path (data.c calls sgfs_design_file_base()): a fit's
 * chains on other processes or machines (R/future.R) open the file
 * themselves instead of receiving a copy.  Sampling from a file larger than
 * memory, the driver asks for the rows of windows iterations before they
 * are read (sgfs_design_file_prefetch_rows) and lets their pages go after
 * (sgfs_design_file_release_rows).
 *
 *   sgfs_design_file_write(path, x, names, append, bytes) -> N written
 *   sgfs_design_file_info(path)     list(N, ncol, bytes, offset, names, shuffled)
 *   sgfs_design_file_map()          an empty handle (mapped on first use)
 *   sgfs_design_file_stats(file)   the columns' statistics as column_stats()
 *       in sparse_rows.c gives them, in the same order of summation (the
 *       same numbers), whether each column's non-zero values are all 1
 *       ("indicator": the 0/1 columns, whose rows the separation scan
 *       reads through sgfs_design_file_columns, once per opened file: a fit
 *       then reads the file no more before sampling), and the first
 *       columns (1-based, or 0) with a value that is not finite ("bad")
 *       and infinite ("infinite"): two sequential passes
 *   sgfs_design_file_rows(file, idx)         raw rows idx (1-based), m x ncol
 *   sgfs_design_file_columns(file, cols)     columns' non-zeros, as CSC slots
 */
#include "sgfs.h"
#include "design_file.h"
#include <errno.h>
#if !defined(_WIN32)
# include <fcntl.h>
# include <sys/mman.h>
# include <sys/stat.h>
# include <unistd.h>
#endif

/* the header's layout: design_file.h */
static void put_u32(unsigned char *b, uint32_t v) { memcpy(b, &v, 4); }
static void put_i64(unsigned char *b, int64_t v) { memcpy(b, &v, 8); }
static uint32_t get_u32(const unsigned char *b) { uint32_t v; memcpy(&v, b, 4); return v; }
static int64_t get_i64(const unsigned char *b) { int64_t v; memcpy(&v, b, 8); return v; }

void sgfs_dfh_encode(const sgfs_dfh *h, unsigned char *b)
{
    memset(b, 0, HEADER);
    memcpy(b, MAGIC, 8);
    put_u32(b + 8, ORDER);
    put_u32(b + 12, (uint32_t) h->bytes);
    put_i64(b + 16, h->N);
    put_i64(b + 24, h->ncol);
    put_i64(b + 32, h->names_len);
    put_i64(b + 40, h->offset);
    put_u32(b + 48, (uint32_t) h->shuffled);
}

/* the header of an open file, checked, or NULL and what is wrong in *why */
int sgfs_dfh_read(FILE *f, sgfs_dfh *h, const char **why)
{
    unsigned char b[HEADER];
    if (fseek(f, 0, SEEK_SET) != 0 || fread(b, 1, HEADER, f) != HEADER ||
        memcmp(b, MAGIC, 8) != 0) {
        *why = "is not a design file (write one with write_design_file())";
        return 0;
    }
    if (get_u32(b + 8) != ORDER) {
        *why = "was written on a machine of another byte order";
        return 0;
    }
    h->bytes = (int) get_u32(b + 12);
    h->N = get_i64(b + 16);
    h->ncol = get_i64(b + 24);
    h->names_len = get_i64(b + 32);
    h->offset = get_i64(b + 40);
    const uint32_t shuffled = get_u32(b + 48);
    h->shuffled = (int) shuffled;
    if ((h->bytes != 8 && h->bytes != 4) || h->N < 0 || h->N > INT_MAX || h->ncol < 1 ||
        h->ncol > INT_MAX || h->names_len < 0 || h->offset < HEADER + h->names_len ||
        h->offset % PAGE != 0 || shuffled > 1) {
        *why = "has a damaged header";
        return 0;
    }
    return 1;
}

/* the same, or an error naming path (f closed first) */
static sgfs_dfh read_header(FILE *f, const char *path)
{
    sgfs_dfh h;
    const char *why;
    if (!sgfs_dfh_read(f, &h, &why)) {
        fclose(f);
        Rf_error("'%s' %s", path, why);
    }
    return h;
}

static FILE *open_or_error(const char *path, const char *mode)
{
    FILE *f = fopen(path, mode);
    if (f == NULL) Rf_error("cannot open '%s': %s", path, strerror(errno));
    return f;
}

/* closes f before an error (R's error does not return) */
static void fail(FILE *f, const char *path, const char *what)
{
    const int err = errno;
    fclose(f);
    Rf_error("%s '%s': %s", what, path, strerror(err));
}

SEXP sgfs_design_file_write(SEXP path, SEXP x, SEXP names, SEXP append, SEXP bytes)
{
    const char *p = R_ExpandFileName(Rf_translateChar(STRING_ELT(path, 0)));
    int N, ncol;
    const double **cols = sgfs_dense_columns(x, &N, &ncol);
    const int width = Rf_asInteger(bytes), add = Rf_asLogical(append) == TRUE;
    if (width != 8 && width != 4) Rf_error("internal error: 'bytes' must be 8 or 4");
    if (TYPEOF(names) != STRSXP || Rf_length(names) != ncol)
        Rf_error("internal error: 'names' must have %d strings", ncol);
    sgfs_dfh h;
    FILE *f;
    if (add) {
        f = open_or_error(p, "r+b");
        h = read_header(f, p);
        if (h.ncol != ncol || h.bytes != width) {
            fclose(f);
            Rf_error("'%s' holds %d columns of %s; the rows appended have %d columns of %s", p,
                     (int) h.ncol, h.bytes == 8 ? "doubles" : "floats", ncol,
                     width == 8 ? "doubles" : "floats");
        }
        if ((double) h.N + N > INT_MAX) {
            fclose(f);
            Rf_error("'%s' would have more than %d rows", p, INT_MAX);
        }
        h.shuffled = 0;             /* the rows appended are in their own order */
    } else {
        R_xlen_t len = 0;
        for (int j = 0; j < ncol; j++) len += (R_xlen_t) strlen(Rf_translateCharUTF8(STRING_ELT(names, j))) + 1;
        h.N = 0;
        h.shuffled = 0;
        h.ncol = ncol;
        h.bytes = width;
        h.names_len = len;
        h.offset = (HEADER + len + PAGE - 1) / PAGE * PAGE;
        f = open_or_error(p, "w+b");
        unsigned char b[HEADER];
        sgfs_dfh_encode(&h, b);
        if (fwrite(b, 1, HEADER, f) != HEADER) fail(f, p, "cannot write");
        for (int j = 0; j < ncol; j++) {
            const char *s = Rf_translateCharUTF8(STRING_ELT(names, j));
            if (fwrite(s, 1, strlen(s), f) != strlen(s) || fputc('\n', f) == EOF)
                fail(f, p, "cannot write");
        }
        for (int64_t k = HEADER + len; k < h.offset; k++)
            if (fputc(0, f) == EOF) fail(f, p, "cannot write");
    }
    const double end = (double) h.offset + (double) h.N * ncol * width;
    if (end + (double) N * ncol * width > (double) LONG_MAX) {
        fclose(f);
        Rf_error("'%s' would be too large for this system's file offsets", p);
    }
    if (fseek(f, (long) end, SEEK_SET) != 0) fail(f, p, "cannot seek in");
    /* a block of rows, transposed from the columns */
    void *buf = R_alloc((size_t) CHUNK * ncol, (size_t) width);
    for (int i0 = 0; i0 < N; i0 += CHUNK) {
        const int m = N - i0 < CHUNK ? N - i0 : CHUNK;
        for (int j = 0; j < ncol; j++) {
            const double *c = cols[j] + i0;
            if (width == 8)
                for (int i = 0; i < m; i++) ((double *) buf)[j + (size_t) i * ncol] = c[i];
            else
                for (int i = 0; i < m; i++) ((float *) buf)[j + (size_t) i * ncol] = (float) c[i];
        }
        if (fwrite(buf, (size_t) width, (size_t) m * ncol, f) != (size_t) m * ncol)
            fail(f, p, "cannot write");
    }
    h.N += N;
    unsigned char b[HEADER];
    sgfs_dfh_encode(&h, b);
    if (fseek(f, 0, SEEK_SET) != 0 || fwrite(b, 1, HEADER, f) != HEADER) fail(f, p, "cannot write");
    if (fclose(f) != 0) Rf_error("cannot write '%s': %s", p, strerror(errno));
    return Rf_ScalarInteger((int) h.N);
}

SEXP sgfs_design_file_info(SEXP path)
{
    const char *p = R_ExpandFileName(Rf_translateChar(STRING_ELT(path, 0)));
    FILE *f = open_or_error(p, "rb");
    sgfs_dfh h = read_header(f, p);
    char *txt = R_alloc((size_t) h.names_len + 1, 1);
    if (fread(txt, 1, (size_t) h.names_len, f) != (size_t) h.names_len) {
        fclose(f);
        Rf_error("'%s' has a damaged header", p);
    }
    fclose(f);
    txt[h.names_len] = '\0';
    const char *fields[] = {"N", "ncol", "bytes", "offset", "names", "shuffled", ""};
    SEXP out = PROTECT(Rf_mkNamed(VECSXP, fields));
    SET_VECTOR_ELT(out, 0, Rf_ScalarInteger((int) h.N));
    SET_VECTOR_ELT(out, 1, Rf_ScalarInteger((int) h.ncol));
    SET_VECTOR_ELT(out, 2, Rf_ScalarInteger(h.bytes));
    SET_VECTOR_ELT(out, 3, Rf_ScalarReal((double) h.offset));
    SEXP nm = Rf_allocVector(STRSXP, (R_xlen_t) h.ncol);
    SET_VECTOR_ELT(out, 4, nm);
    SET_VECTOR_ELT(out, 5, Rf_ScalarLogical(h.shuffled));
    char *s = txt;
    for (int j = 0; j < h.ncol; j++) {
        char *nl = strchr(s, '\n');
        if (nl == NULL) {
            UNPROTECT(1);
            Rf_error("'%s' has a damaged header", p);
        }
        *nl = '\0';
        SET_STRING_ELT(nm, j, Rf_mkCharCE(s, CE_UTF8));
        s = nl + 1;
    }
    UNPROTECT(1);
    return out;
}

/* ---- the map -------------------------------------------------------- */

typedef struct mapping {
    void *base;                 /* the whole file                            */
    size_t len;
    int fd;                     /* open while mapped: its pages let go by
                                   sgfs_design_file_release_rows()          */
    int N, ncol, bytes;         /* its header's, when mapped                 */
    double offset;
} mapping;

static void unmap(SEXP ptr)
{
    mapping *m = (mapping *) R_ExternalPtrAddr(ptr);
    if (m == NULL) return;
#if !defined(_WIN32)
    munmap(m->base, m->len);
    close(m->fd);
#endif
    free(m);
    R_ClearExternalPtr(ptr);
}

SEXP sgfs_design_file_map(void)
{
    return R_MakeExternalPtr(NULL, R_NilValue, R_NilValue);
}

/* The rows of the design file `file` (the R object: list(path, N, ncol,
   bytes, offset, map)), mapped on first use: the first byte of the data,
   with N, ncol and the value width checked against the file's header */
const void *sgfs_design_file_base(SEXP file, int *N, int *ncol, int *bytes)
{
    SEXP map = sgfs_list_typed(file, "map", EXTPTRSXP, -1);
    *N = INTEGER(sgfs_list_typed(file, "N", INTSXP, 1))[0];
    *ncol = INTEGER(sgfs_list_typed(file, "ncol", INTSXP, 1))[0];
    *bytes = INTEGER(sgfs_list_typed(file, "bytes", INTSXP, 1))[0];
    const double offset = REAL(sgfs_list_typed(file, "offset", REALSXP, 1))[0];
    mapping *m = (mapping *) R_ExternalPtrAddr(map);
    if (m != NULL) {
        if (m->N != *N || m->ncol != *ncol || m->bytes != *bytes || m->offset != offset)
            Rf_error("internal error: a design file's fields differ from its map");
        return (const char *) m->base + (size_t) offset;
    }
#if defined(_WIN32)
    Rf_error("design files need a system with mmap(); read the data into memory instead");
#else
    const char *p = R_ExpandFileName(Rf_translateChar(STRING_ELT(sgfs_list_typed(file, "path", STRSXP, 1), 0)));
    FILE *f = open_or_error(p, "rb");
    sgfs_dfh h = read_header(f, p);
    fclose(f);
    if (h.N != *N || h.ncol != *ncol || h.bytes != *bytes || (double) h.offset != offset)
        Rf_error("'%s' has changed since it was opened (%d x %d then, %d x %d now): open it again "
                 "with design_file()", p, *N, *ncol, (int) h.N, (int) h.ncol);
    const size_t len = (size_t) h.offset + (size_t) h.N * (size_t) h.ncol * (size_t) h.bytes;
    const int fd = open(p, O_RDONLY);
    if (fd < 0) Rf_error("cannot open '%s': %s", p, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || (size_t) st.st_size < len) {
        close(fd);
        Rf_error("'%s' is shorter than its header says", p);
    }
    void *base = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
    const int err = errno;
    if (base == MAP_FAILED) {
        close(fd);
        Rf_error("cannot map '%s': %s", p, strerror(err));
    }
    m = (mapping *) malloc(sizeof(mapping));
    if (m == NULL) {
        munmap(base, len);
        close(fd);
        Rf_error("out of memory");
    }
    m->base = base;
    m->len = len;
    m->fd = fd;
    m->N = *N;
    m->ncol = *ncol;
    m->bytes = *bytes;
    m->offset = offset;
    R_SetExternalPtrAddr(map, m);
    R_RegisterCFinalizerEx(map, unmap, TRUE);
    return (const char *) base + (size_t) offset;
#endif
}

/* the map of a design file sgfs_design_file_base() has mapped: its first
   byte (the file's byte 0), and the file's descriptor in *fd */
const void *sgfs_design_file_map_of(SEXP file, int *fd)
{
    const mapping *m = (const mapping *) R_ExternalPtrAddr(sgfs_list_typed(file, "map", EXTPTRSXP, -1));
    if (m == NULL) Rf_error("internal error: a design file not mapped yet");
    *fd = m->fd;
    return m->base;
}

/* ---- passes over the rows ------------------------------------------ */

/* value j of row i */
static inline double raw_value(const void *x, int bytes, int ncol, int i, int j)
{
    const size_t k = (size_t) i * ncol + j;
    return bytes == 8 ? ((const double *) x)[k] : (double) ((const float *) x)[k];
}

/* see column_stats() in sparse_rows.c: per column, the sums of the
   non-zero values, of their squares and of their row weights, then the
   squared deviations from the mean, over all rows when more than half
   are non-zero, else over the non-zeros with N m^2 added */
SEXP sgfs_design_file_stats(SEXP file)
{
    int N, P, bytes;
    const void *x = sgfs_design_file_base(file, &N, &P, &bytes);
    if (N < 1) Rf_error("internal error: the design is empty");
    const char *names[] = {"mean", "sd", "meansq", "ones", "checksum", "bad", "infinite",
                           "indicator", "range", ""};
    SEXP out = PROTECT(Rf_mkNamed(VECSXP, names));
    for (int k = 0; k < 3; k++) SET_VECTOR_ELT(out, k, Rf_allocVector(REALSXP, P));
    SET_VECTOR_ELT(out, 3, Rf_allocVector(LGLSXP, P));
    SET_VECTOR_ELT(out, 4, Rf_allocVector(REALSXP, P));
    SET_VECTOR_ELT(out, 7, Rf_allocVector(LGLSXP, P));
    SET_VECTOR_ELT(out, 8, Rf_allocVector(REALSXP, P));
    double *mean = REAL(VECTOR_ELT(out, 0)), *sd = REAL(VECTOR_ELT(out, 1)),
        *meansq = REAL(VECTOR_ELT(out, 2)), *check = REAL(VECTOR_ELT(out, 4)),
        *range = REAL(VECTOR_ELT(out, 8));
    int *ones = LOGICAL(VECTOR_ELT(out, 3)), *indicator = LOGICAL(VECTOR_ELT(out, 7));
    double *s = (double *) R_alloc((size_t) P, sizeof(double)),
        *ss = (double *) R_alloc((size_t) P, sizeof(double)),
        *lo = (double *) R_alloc((size_t) P, sizeof(double)),
        *hi = (double *) R_alloc((size_t) P, sizeof(double));
    R_xlen_t *nz = (R_xlen_t *) R_alloc((size_t) P, sizeof(R_xlen_t));
    for (int j = 0; j < P; j++) {
        s[j] = meansq[j] = check[j] = ss[j] = 0.0;
        lo[j] = hi[j] = raw_value(x, bytes, P, 0, j);
        nz[j] = 0;
        ones[j] = 1;
    }
    int bad = 0, inf = 0;
    for (int i = 0; i < N; i++) {
        if (i % 65536 == 0) R_CheckUserInterrupt();
        const double w = sgfs_checksum_weight(i);
        for (int j = 0; j < P; j++) {
            const double v = raw_value(x, bytes, P, i, j);
            if (!R_FINITE(v)) {
                if (bad == 0 || j + 1 < bad) bad = j + 1;
                if (!ISNAN(v) && (inf == 0 || j + 1 < inf)) inf = j + 1;
            }
            if (v != 0.0) {
                s[j] += v;
                meansq[j] += v * v;
                check[j] += v * w;
                nz[j]++;
                ones[j] = ones[j] && v == 1.0;
            }
            lo[j] = fmin(lo[j], v);
            hi[j] = fmax(hi[j], v);
        }
    }
    for (int j = 0; j < P; j++) {
        mean[j] = s[j] / N;
        range[j] = hi[j] - lo[j];
        indicator[j] = ones[j];                 /* (every non-zero is 1) */
        ones[j] = ones[j] && nz[j] == N;
    }
    for (int i = 0; i < N; i++) {
        if (i % 65536 == 0) R_CheckUserInterrupt();
        for (int j = 0; j < P; j++) {
            const double v = raw_value(x, bytes, P, i, j), m = mean[j];
            if (2 * nz[j] > (R_xlen_t) N) ss[j] += (v - m) * (v - m);
            else if (v != 0.0) ss[j] += (v - m) * (v - m) - m * m;
        }
    }
    for (int j = 0; j < P; j++) {
        if (!(2 * nz[j] > (R_xlen_t) N)) ss[j] += (double) N * mean[j] * mean[j];
        sd[j] = N > 1 ? sqrt(fmax(ss[j], 0.0) / (N - 1)) : NA_REAL;
        meansq[j] /= N;
    }
    SET_VECTOR_ELT(out, 5, Rf_ScalarInteger(bad));
    SET_VECTOR_ELT(out, 6, Rf_ScalarInteger(inf));
    UNPROTECT(1);
    return out;
}

SEXP sgfs_design_file_rows(SEXP file, SEXP idx)
{
    int N, P, bytes;
    const void *x = sgfs_design_file_base(file, &N, &P, &bytes);
    if (TYPEOF(idx) != INTSXP) Rf_error("internal error: 'idx' must be integers");
    const int m = Rf_length(idx);
    SEXP out = PROTECT(Rf_allocMatrix(REALSXP, m, P));
    double *o = REAL(out);
    for (int i = 0; i < m; i++) {
        const int r = INTEGER(idx)[i];
        if (r == NA_INTEGER || r < 1 || r > N) {
            UNPROTECT(1);
            Rf_error("internal error: 'idx' out of range");
        }
        for (int j = 0; j < P; j++) o[i + (size_t) j * m] = raw_value(x, bytes, P, r - 1, j);
    }
    UNPROTECT(1);
    return out;
}

/* the non-zero entries of the columns cols (1-based) of a design file, as
   a compressed-column matrix's slots over all ncol columns (the others
   empty): list(i = 0-based rows, p = ncol + 1 column starts, x = values),
   two passes -- for the separated levels' scan of 0/1 columns
   (R/separation.R) */
SEXP sgfs_design_file_columns(SEXP file, SEXP cols)
{
    int N, P, bytes;
    const void *x = sgfs_design_file_base(file, &N, &P, &bytes);
    if (TYPEOF(cols) != INTSXP) Rf_error("internal error: 'cols' must be integers");
    const int m = Rf_length(cols);
    int *want = (int *) R_alloc((size_t) P, sizeof(int));
    for (int j = 0; j < P; j++) want[j] = 0;
    for (int k = 0; k < m; k++) {
        const int j = INTEGER(cols)[k];
        if (j == NA_INTEGER || j < 1 || j > P) Rf_error("internal error: 'cols' out of range");
        want[j - 1] = 1;
    }
    const char *names[] = {"i", "p", "x", ""};
    SEXP out = PROTECT(Rf_mkNamed(VECSXP, names));
    SEXP p = Rf_allocVector(INTSXP, (R_xlen_t) P + 1);
    SET_VECTOR_ELT(out, 1, p);
    int *ptr = INTEGER(p);
    double *count = (double *) R_alloc((size_t) P + 1, sizeof(double));
    for (int j = 0; j <= P; j++) count[j] = 0.0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < P; j++)
            if (want[j] && raw_value(x, bytes, P, i, j) != 0.0) count[j + 1] += 1.0;
    for (int j = 0; j < P; j++) count[j + 1] += count[j];
    if (count[P] > INT_MAX) {
        UNPROTECT(1);
        Rf_error("the 0/1 columns of this design file have more than %d non-zero entries", INT_MAX);
    }
    for (int j = 0; j <= P; j++) ptr[j] = (int) count[j];
    SEXP ii = Rf_allocVector(INTSXP, ptr[P]);
    SET_VECTOR_ELT(out, 0, ii);
    SEXP xx = Rf_allocVector(REALSXP, ptr[P]);
    SET_VECTOR_ELT(out, 2, xx);
    int *at = (int *) R_alloc((size_t) P, sizeof(int));
    for (int j = 0; j < P; j++) at[j] = ptr[j];
    for (int i = 0; i < N; i++) {
        if (i % 65536 == 0) R_CheckUserInterrupt();
        for (int j = 0; j < P; j++) {
            if (!want[j]) continue;
            const double v = raw_value(x, bytes, P, i, j);
            if (v == 0.0) continue;
            INTEGER(ii)[at[j]] = i;
            REAL(xx)[at[j]++] = v;
        }
    }
    UNPROTECT(1);
    return out;
}

/* the machine's physical memory in bytes (NA where unknown): a design
   file larger than half of it is prefetched (R/design-file.R) */
SEXP sgfs_physical_memory(void)
{
#if defined(_SC_PHYS_PAGES) && defined(_SC_PAGESIZE) && !defined(_WIN32)
    const double memory = (double) sysconf(_SC_PHYS_PAGES) * (double) sysconf(_SC_PAGESIZE);
    return Rf_ScalarReal(memory > 0 ? memory : NA_REAL);
#else
    return Rf_ScalarReal(NA_REAL);
#endif
}

/* Asks the system to read the rows from .. to - 1 of a mapped design file
   (rows of row_bytes from base) before they are touched, in one request:
   the reads of the pages not in memory then run together (and, asked for
   iterations ahead, while the engine computes) instead of one page fault
   after another. */
void sgfs_design_file_prefetch_rows(const void *base, size_t row_bytes, int from, int to)
{
#if defined(MADV_WILLNEED) && !defined(_WIN32)
    if (to <= from) return;
    const uintptr_t page = (uintptr_t) PAGE;
    const uintptr_t a = (uintptr_t) base + (uintptr_t) from * row_bytes;
    const uintptr_t start = a & ~(page - 1), end = a + (uintptr_t) (to - from) * row_bytes;
    (void) madvise((void *) start, end - start, MADV_WILLNEED);
#else
    (void) base;
    (void) row_bytes;
    (void) from;
    (void) to;
#endif
}

/* Lets the system drop the pages of the rows from .. to - 1 (rows of
   row_bytes from base, in the map of the file fd that starts at map) once
   they are read: only the pages wholly inside them, so no other row's page
   goes.  Sampling from a file larger than memory, the page cache is then
   never full of rows read before, which the system would have to find and
   evict for every new read (bench/results/file-single.md compares the
   reads with and without). */
void sgfs_design_file_release_rows(const void *map, int fd, const void *base, size_t row_bytes,
                                   int from, int to)
{
#if defined(MADV_DONTNEED) && !defined(_WIN32)
    if (to <= from) return;
    const uintptr_t page = (uintptr_t) PAGE;
    const uintptr_t a = (uintptr_t) base + (uintptr_t) from * row_bytes,
        b = a + (uintptr_t) (to - from) * row_bytes;
    const uintptr_t start = (a + page - 1) & ~(page - 1), end = b & ~(page - 1);
    if (end <= start) return;
    /* (this process's view first: a page still mapped is not dropped) */
    (void) madvise((void *) start, end - start, MADV_DONTNEED);
# if defined(POSIX_FADV_DONTNEED)
    (void) posix_fadvise(fd, (off_t) (start - (uintptr_t) map), (off_t) (end - start),
                         POSIX_FADV_DONTNEED);
# else
    (void) map;
    (void) fd;
# endif
#else
    (void) map;
    (void) fd;
    (void) base;
    (void) row_bytes;
    (void) from;
    (void) to;
#endif
}

/* ... of the rows idx[0..n-1]: one request per run of consecutive rows (a
   full-data pass's chunk or a window is one or two, random rows one each) */
void sgfs_design_file_prefetch(const void *base, size_t row_bytes, const int *idx, int n)
{
    for (int i = 0; i < n;) {
        int k = i + 1;
        while (k < n && idx[k] == idx[k - 1] + 1) k++;
        sgfs_design_file_prefetch_rows(base, row_bytes, idx[i], idx[k - 1] + 1);
        i = k;
    }
}
