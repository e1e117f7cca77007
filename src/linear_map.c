/*
 * linear_map.c - the intercepts' part of the map between internal and
 * original parameters (R/design.R: theta_orig = M theta_int + shift,
 * M = diag(a) + sum_r e_at[r] C[r, ]):
 *
 *   sgfs_map_rows(theta, C)  the S x R matrix theta C' for draws theta
 *                            (S x D, one per row) and C (R x D),
 *
 * each entry summed over j = 1..D in order, skipping C's zeros, so that a
 * draw's value does not depend on how many draws are mapped with it (a
 * BLAS product's kernels differ between a block's rows and its tail: a
 * continued run's draws would differ from one long run's in the last bit).
 */
#include "sgfs.h"

SEXP sgfs_map_rows(SEXP theta, SEXP C)
{
    if (TYPEOF(theta) != REALSXP || !Rf_isMatrix(theta) || TYPEOF(C) != REALSXP ||
        !Rf_isMatrix(C) || Rf_ncols(C) != Rf_ncols(theta))
        Rf_error("internal error: 'theta' (S x D) and 'C' (R x D) must be double matrices");
    const int S = Rf_nrows(theta), D = Rf_ncols(theta), R = Rf_nrows(C);
    SEXP out = PROTECT(Rf_allocMatrix(REALSXP, S, R));
    const double *t = REAL(theta), *c = REAL(C);
    double *o = REAL(out);
    for (int r = 0; r < R; r++) {
        double *acc = o + (size_t) r * S;
        for (int s = 0; s < S; s++) acc[s] = 0.0;
        for (int j = 0; j < D; j++) {
            const double cj = c[r + (size_t) j * R];
            if (cj == 0.0) continue;
            const double *col = t + (size_t) j * S;
            for (int s = 0; s < S; s++) acc[s] += col[s] * cj;
        }
    }
    UNPROTECT(1);
    return out;
}
