/*
 * spec_list.c - the elements of the named R lists the front end passes
 * (a spec, a chain's state, their parts), read by name.  The lists are
 * built and coerced in R; a missing element or one of the wrong type is
 * a broken contract between R and C, reported as an internal error.
 *
 *   sgfs_list_opt(list, name)             the element, or R_NilValue when
 *                                         absent (an element set to NULL
 *                                         is absent too)
 *   sgfs_list_elt(list, name)             the element (NULL if set so); an
 *                                         error when absent
 *   sgfs_list_typed(list, name, type, n)  the element, of SEXP type `type`
 *                                         and length n (n < 0: any length)
 *   sgfs_list_int(list, name)             the one integer of an element
 */
#include "sgfs.h"

/* the element `name` of list, or (C) NULL when there is none */
static SEXP find(SEXP list, const char *name)
{
    SEXP names = Rf_getAttrib(list, R_NamesSymbol);
    if (TYPEOF(names) != STRSXP) return NULL;
    for (R_xlen_t k = 0; k < Rf_xlength(list); k++)
        if (strcmp(CHAR(STRING_ELT(names, k)), name) == 0)
            return VECTOR_ELT(list, k);
    return NULL;
}

SEXP sgfs_list_opt(SEXP list, const char *name)
{
    SEXP x = find(list, name);
    return x == NULL ? R_NilValue : x;
}

SEXP sgfs_list_elt(SEXP list, const char *name)
{
    SEXP x = find(list, name);
    if (x == NULL) Rf_error("internal error: element '%s' missing", name);
    return x;
}

SEXP sgfs_list_typed(SEXP list, const char *name, SEXPTYPE type, R_xlen_t len)
{
    SEXP x = sgfs_list_elt(list, name);
    if ((SEXPTYPE) TYPEOF(x) != type || (len >= 0 && Rf_xlength(x) != len))
        Rf_error("internal error: element '%s' has the wrong type or length", name);
    return x;
}

int sgfs_list_int(SEXP list, const char *name)
{
    return INTEGER(sgfs_list_typed(list, name, INTSXP, 1))[0];
}
