/*
 * linalg.c - the few BLAS/LAPACK operations the engine needs, each wrapped
 * once with its Fortran character arguments terminated by FCONE.
 *
 *   sgfs_x_r                out = xb r                      (dgemv 'N')
 *   sgfs_centered_crossprod V = Gc Gc' / (n - 1), Gc = G - gbar 1'  (dsyrk)
 *   sgfs_chol_upper         U'U = M (+ jitter I if M is singular)   (dpotrf)
 *   sgfs_chol_solve         b <- (U'U)^{-1} b                       (dpotrs)
 *   sgfs_upper_t_times      y = U' x                                (dtrmv)
 *
 * Matrices are column-major; xb is P x n, G is D x n, U and V are D x D with
 * only the upper triangle referenced.
 */
#include "sgfs.h"

void sgfs_x_r(const double *xb, int P, int n, const double *r, double *out)
{
    const char nt = 'N';
    const double one = 1.0, zero = 0.0;
    const int inc = 1;
    /* out = xb r */
    F77_CALL(dgemv)(&nt, &P, &n, &one, xb, &P, r, &inc, &zero, out, &inc
                    FCONE);
}

void sgfs_centered_crossprod(double *G, int D, int n, double *gbar, double *V)
{
    const char up = 'U', nt = 'N';
    const double scale = 1.0 / (n - 1), zero = 0.0;
    for (int j = 0; j < D; j++) gbar[j] = 0.0;
    for (int i = 0; i < n; i++) {
        const double *g = G + (size_t) i * D;
        for (int j = 0; j < D; j++) gbar[j] += g[j];
    }
    for (int j = 0; j < D; j++) gbar[j] /= n;
    for (int i = 0; i < n; i++) {
        double *g = G + (size_t) i * D;
        for (int j = 0; j < D; j++) g[j] -= gbar[j];
    }
    /* V = Gc Gc' / (n - 1), upper triangle */
    F77_CALL(dsyrk)(&up, &nt, &D, &n, &scale, G, &D, &zero, V, &D
                    FCONE FCONE);
}

/* Upper Cholesky factor of the symmetric matrix M (upper triangle read).
   Returns the jitter that had to be added to the diagonal (0 when M is
   positive definite), or -1 if no jitter up to 1e-2 * max diag sufficed. */
double sgfs_chol_upper(const double *M, int D, double *U)
{
    const char up = 'U';
    double dmax = 0.0, jitter = 0.0;
    int info;
    for (int j = 0; j < D; j++)
        if (M[j + (size_t) j * D] > dmax) dmax = M[j + (size_t) j * D];
    if (!(dmax > 0.0)) dmax = 1.0;
    for (int attempt = 0; attempt < 10; attempt++) {
        for (int j = 0; j < D; j++) {
            memcpy(U + (size_t) j * D, M + (size_t) j * D,
                   (size_t) (j + 1) * sizeof(double));
            U[j + (size_t) j * D] += jitter;
        }
        F77_CALL(dpotrf)(&up, &D, U, &D, &info FCONE);
        if (info == 0) {
            for (int j = 0; j < D; j++)         /* clear the lower triangle */
                for (int i = j + 1; i < D; i++) U[i + (size_t) j * D] = 0.0;
            return jitter;
        }
        jitter = (jitter == 0.0) ? 1e-10 * dmax : 10.0 * jitter;
    }
    return -1.0;
}

void sgfs_chol_solve(const double *U, int D, double *b)
{
    const char up = 'U';
    const int one = 1;
    int info;
    /* b <- (U'U)^{-1} b */
    F77_CALL(dpotrs)(&up, &D, &one, U, &D, b, &D, &info FCONE);
}

void sgfs_upper_t_times(const double *U, int D, const double *x, double *y)
{
    const char up = 'U', tr = 'T', nd = 'N';
    const int inc = 1;
    memcpy(y, x, (size_t) D * sizeof(double));
    /* y = U' x */
    F77_CALL(dtrmv)(&up, &tr, &nd, &D, U, &D, y, &inc FCONE FCONE FCONE);
}
