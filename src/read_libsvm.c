/*
 * read_libsvm.c - the lines of a LIBSVM / SVMlight file as triplets.
 *
 * Each line is   label index:value index:value ... [# comment]
 * with 1-based, increasing feature indices (Chang and Lin, LIBSVM's data
 * format; SVMlight's "qid:" tokens are skipped).  Blank lines and lines
 * that hold only a comment are skipped.
 *
 *   sgfs_parse_libsvm(lines) -> list(label = one double per data line,
 *       i = 1-based row (data line), j = 1-based feature, x = value), or an
 *       R error naming the line and the token that is not of that form.
 */
#include "sgfs.h"
#include <stdlib.h>
#include <errno.h>
#include <ctype.h>

static const char *skip_space(const char *s)
{
    while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n') s++;
    return s;
}

static int at_end(const char *s)
{
    return *s == '\0' || *s == '#';
}

/* the number of feature tokens of a line (those after the label, but
   "qid:" ones), or -1 for a line without data */
static R_xlen_t count_pairs(const char *s)
{
    s = skip_space(s);
    if (at_end(s)) return -1;
    R_xlen_t n = -1;                          /* the label is not one */
    while (!at_end(s)) {
        if (strncmp(s, "qid:", 4) != 0) n++;
        while (*s && !isspace((unsigned char) *s)) s++;
        s = skip_space(s);
    }
    return n;
}

SEXP sgfs_parse_libsvm(SEXP lines)
{
    if (TYPEOF(lines) != STRSXP) Rf_error("internal error: 'lines' must be a character vector");
    const R_xlen_t L = Rf_xlength(lines);
    R_xlen_t rows = 0, nnz = 0;
    for (R_xlen_t l = 0; l < L; l++) {
        const R_xlen_t n = count_pairs(CHAR(STRING_ELT(lines, l)));
        if (n >= 0) {
            rows++;
            nnz += n;
        }
    }
    if (rows > INT_MAX) Rf_error("the file has more than %d data lines", INT_MAX);
    const char *names[] = {"label", "i", "j", "x", ""};
    SEXP out = PROTECT(Rf_mkNamed(VECSXP, names));
    SEXP label = Rf_allocVector(REALSXP, rows);
    SET_VECTOR_ELT(out, 0, label);
    SEXP ri = Rf_allocVector(INTSXP, nnz);
    SET_VECTOR_ELT(out, 1, ri);
    SEXP rj = Rf_allocVector(INTSXP, nnz);
    SET_VECTOR_ELT(out, 2, rj);
    SEXP rx = Rf_allocVector(REALSXP, nnz);
    SET_VECTOR_ELT(out, 3, rx);
    double *lab = REAL(label), *x = REAL(rx);
    int *ii = INTEGER(ri), *jj = INTEGER(rj);
    R_xlen_t k = 0;
    int row = 0;
    for (R_xlen_t l = 0; l < L; l++) {
        if (l % 100000 == 0) R_CheckUserInterrupt();
        const char *s = skip_space(CHAR(STRING_ELT(lines, l)));
        if (at_end(s)) continue;
        char *end;
        errno = 0;
        lab[row] = strtod(s, &end);
        if (end == s || (*end && !isspace((unsigned char) *end) && *end != '#'))
            Rf_error("line %lld of the file: the label is not a number", (long long) l + 1);
        s = skip_space(end);
        int last = 0;
        while (!at_end(s)) {
            if (strncmp(s, "qid:", 4) == 0) {              /* SVMlight's query id */
                while (*s && !isspace((unsigned char) *s)) s++;
                s = skip_space(s);
                continue;
            }
            errno = 0;
            const long j = strtol(s, &end, 10);
            if (end == s || *end != ':' || errno != 0 || j < 1 || j > INT_MAX)
                Rf_error("line %lld of the file: a feature is not of the form index:value "
                         "with a positive integer index", (long long) l + 1);
            if (j <= last)
                Rf_error("line %lld of the file: feature indices must increase (%ld after %d)",
                         (long long) l + 1, j, last);
            const char *v = end + 1;
            const double value = strtod(v, &end);
            if (end == v || (*end && !isspace((unsigned char) *end) && *end != '#'))
                Rf_error("line %lld of the file: the value of feature %ld is not a number",
                         (long long) l + 1, j);
            ii[k] = row + 1;
            jj[k] = (int) j;
            x[k] = value;
            k++;
            last = (int) j;
            s = skip_space(end);
        }
        row++;
    }
    UNPROTECT(1);
    return out;
}
