/*
 * linalg.c - the few BLAS/LAPACK operations the engine needs, each wrapped
 * once with its Fortran character arguments terminated by FCONE.
 *
 *   sgfs_x_r                out = xb r                      (dgemv 'N')
 *   sgfs_xt_beta            eta = xb' beta                  (dgemv 'T')
 *   sgfs_row_moments        gbar = G 1 / n, v_j = sum_i (G_ji - gbar_j)^2 / (n - 1)
 *   sgfs_row_means          gbar = G 1 / n
 *   sgfs_crossprod_mean_update  I <- (1 - kappa) I + kappa V for the rows
 *                           o..o+b-1 of G, V their covariance  (dsyrk, dsyr)
 *   sgfs_chol_upper         U'U = M (+ jitter I if M is singular)   (dpotrf)
 *   sgfs_chol_solve         b <- (U'U)^{-1} b                       (dtrsv twice)
 *   sgfs_upper_t_times      y = U' x                                (dtrmv)
 *   sgfs_upper_times        x <- U x                                (dtrmv)
 *   sgfs_upper_solve        x <- U^{-1} x                           (dtrsv)
 *   sgfs_upper_t_solve      x <- U'^{-1} x                          (dtrsv)
 *   sgfs_upper_t_solve_columns  B <- U'^{-1} B, B D x m            (dtrsm)
 *   sgfs_matrix_times       y = A x, A general D x D                (dgemv)
 *   sgfs_symv               y += alpha A x, A symmetric D x D       (dsymv)
 *   sgfs_crossprod_add      V += A A', A D x n                      (dsyrk)
 *   sgfs_gemm               C = op(A) op(B) + beta C                (dgemm)
 *   sgfs_sgemm              the same in single precision            (sgemm)
 *   sgfs_has_sgemm          whether R's BLAS has sgemm (./configure)
 *   sgfs_linear_outputs     Z_k = Theta_k' x, k < K1, at S draws    (dgemm)
 *
 * Matrices are column-major; xb is P x n, G is D x n, U and V are D x D with
 * only the upper triangle referenced.
 */
#include "sgfs.h"

/* y = op(A) x, A m x n column-major, op = transpose if trans is 'T' */
static void gemv(char trans, const double *A, int m, int n, const double *x,
                 double *y)
{
    const double one = 1.0, zero = 0.0;
    const int inc = 1;
    F77_CALL(dgemv)(&trans, &m, &n, &one, A, &m, x, &inc, &zero, y, &inc FCONE);
}

void sgfs_x_r(const double *xb, int P, int n, const double *r, double *out)
{
    gemv('N', xb, P, n, r, out);                  /* out = xb r */
}

/* a GLM's scores from its residuals: sum = xb r and, unless G is NULL, the
   first P entries of G's columns (leading dimension ldg), g_i = r_i u_i */
void sgfs_glm_scores(const double *xb, int P, int n, const double *r, double *sum,
                     double *G, int ldg)
{
    sgfs_x_r(xb, P, n, r, sum);
    if (G == NULL) return;
    for (int i = 0; i < n; i++) {
        const double *restrict u = xb + (size_t) i * P;
        double *restrict g = G + (size_t) i * ldg;
        const double ri = r[i];
        for (int j = 0; j < P; j++) g[j] = ri * u[j];
    }
}

void sgfs_xt_beta(const double *xb, int P, int n, const double *beta, double *eta)
{
    gemv('T', xb, P, n, beta, eta);               /* eta = xb' beta */
}

/* row sums of G (D x n), four rows at a time so that the partial sums stay
   in registers while the columns stream past */
static void row_sums(const double *G, int D, int n, const double *shift,
                     int squares, double *out)
{
    int j = 0;
    for (; j + 4 <= D; j += 4) {
        double a0 = 0.0, a1 = 0.0, a2 = 0.0, a3 = 0.0;
        const double c0 = shift ? shift[j] : 0.0, c1 = shift ? shift[j + 1] : 0.0,
            c2 = shift ? shift[j + 2] : 0.0, c3 = shift ? shift[j + 3] : 0.0;
        for (int i = 0; i < n; i++) {
            const double *g = G + j + (size_t) i * D;
            double d0 = g[0] - c0, d1 = g[1] - c1, d2 = g[2] - c2, d3 = g[3] - c3;
            if (squares) { d0 *= d0; d1 *= d1; d2 *= d2; d3 *= d3; }
            a0 += d0; a1 += d1; a2 += d2; a3 += d3;
        }
        out[j] = a0; out[j + 1] = a1; out[j + 2] = a2; out[j + 3] = a3;
    }
    for (; j < D; j++) {
        double a = 0.0, c = shift ? shift[j] : 0.0;
        for (int i = 0; i < n; i++) {
            double d = G[j + (size_t) i * D] - c;
            a += squares ? d * d : d;
        }
        out[j] = a;
    }
}

void sgfs_row_means(const double *G, int D, int n, double *gbar)
{
    row_sums(G, D, n, NULL, 0, gbar);
    for (int j = 0; j < D; j++) gbar[j] /= n;
}

void sgfs_row_moments(const double *G, int D, int n, double *gbar, double *v)
{
    sgfs_row_means(G, D, n, gbar);
    row_sums(G, D, n, gbar, 1, v);
    for (int j = 0; j < D; j++) v[j] /= n - 1;
}

/* The running mean of the score covariance, in place, for rows o..o+b-1
   of G (D x n; a row slice is the b x n matrix at G + o, leading dimension
   D) with row means gbar (b values):
     I <- (1 - kappa) I + kappa V,  V = (G G' - n gbar gbar') / (n - 1),
   upper triangle: one dsyrk (beta = 1 - kappa) and one dsyr, without
   centring G or forming V.  (The scores' mean is of the order of their
   spread, so the difference loses no more than a digit or two.)  Up to 64
   parameters a dgemm of the whole square is used instead: twice the
   multiplications, but OpenBLAS's dsyrk at these sizes costs more than
   its dgemm (D = 55, n = 56: 8.6 against 6.8 us; D = 30: 2.6 against
   1.1; from D = 100 dsyrk is faster: 32 against 46); the lower triangle
   it also writes is never read. */
void sgfs_crossprod_mean_update(const double *G, int D, int n, int o, int b,
                                const double *gbar, double kappa, double *I)
{
    const char up = 'U', nt = 'N', tr = 'T';
    const double alpha = kappa / (n - 1), beta = 1.0 - kappa,
        minus = -kappa * n / (n - 1);
    const int one = 1;
    if (b <= 64)
        F77_CALL(dgemm)(&nt, &tr, &b, &b, &n, &alpha, G + o, &D, G + o, &D, &beta, I, &b
                        FCONE FCONE);
    else
        F77_CALL(dsyrk)(&up, &nt, &b, &n, &alpha, G + o, &D, &beta, I, &b FCONE FCONE);
    F77_CALL(dsyr)(&up, &b, &minus, gbar, &one, I, &b FCONE);
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

/* b <- (U'U)^{-1} b: U' y = b, then U x = y (two dtrsv: dpotrs's dtrsm
   costs several times as much for one right-hand side of a small matrix) */
void sgfs_chol_solve(const double *U, int D, double *b)
{
    sgfs_upper_t_solve(U, D, b);
    sgfs_upper_solve(U, D, b);
}

void sgfs_upper_t_times(const double *U, int D, const double *x, double *y)
{
    const char up = 'U', tr = 'T', nd = 'N';
    const int inc = 1;
    memcpy(y, x, (size_t) D * sizeof(double));
    /* y = U' x */
    F77_CALL(dtrmv)(&up, &tr, &nd, &D, U, &D, y, &inc FCONE FCONE FCONE);
}

/* x <- U x */
void sgfs_upper_times(const double *U, int D, double *x)
{
    const char up = 'U', nt = 'N', nd = 'N';
    const int inc = 1;
    F77_CALL(dtrmv)(&up, &nt, &nd, &D, U, &D, x, &inc FCONE FCONE FCONE);
}

/* x <- U^{-1} x */
void sgfs_upper_solve(const double *U, int D, double *x)
{
    const char up = 'U', nt = 'N', nd = 'N';
    const int inc = 1;
    F77_CALL(dtrsv)(&up, &nt, &nd, &D, U, &D, x, &inc FCONE FCONE FCONE);
}

/* x <- U'^{-1} x */
void sgfs_upper_t_solve(const double *U, int D, double *x)
{
    const char up = 'U', tr = 'T', nd = 'N';
    const int inc = 1;
    F77_CALL(dtrsv)(&up, &tr, &nd, &D, U, &D, x, &inc FCONE FCONE FCONE);
}

/* B <- U'^{-1} B, B is D x m */
void sgfs_upper_t_solve_columns(const double *U, int D, int m, double *B)
{
    const char left = 'L', up = 'U', tr = 'T', nd = 'N';
    const double one = 1.0;
    F77_CALL(dtrsm)(&left, &up, &tr, &nd, &D, &m, &one, U, &D, B, &D
                    FCONE FCONE FCONE FCONE);
}

/* y = A x for a general D x D matrix A */
void sgfs_matrix_times(const double *A, int D, const double *x, double *y)
{
    gemv('N', A, D, D, x, y);
}

/* V += A A' (upper triangle), A is D x n, V has leading dimension ldv */
void sgfs_crossprod_add(const double *A, int D, int n, double *V, int ldv)
{
    const char up = 'U', nt = 'N';
    const double one = 1.0;
    F77_CALL(dsyrk)(&up, &nt, &D, &n, &one, A, &D, &one, V, &ldv FCONE FCONE);
}

/* copies the upper triangle of V into its lower one */
void sgfs_symmetrize_upper(double *V, int D)
{
    for (int j = 0; j < D; j++)
        for (int i = j + 1; i < D; i++) V[i + (size_t) j * D] = V[j + (size_t) i * D];
}

/* y += alpha A x, A symmetric D x D (its upper triangle referenced) */
void sgfs_symv(const double *A, int D, const double *x, double alpha, double *y)
{
    const double one = 1.0;
    const int inc = 1;
    F77_CALL(dsymv)("U", &D, &alpha, A, &D, x, &inc, &one, y, &inc FCONE);
}

/* C = op(A) op(B) + beta C, op = transpose if ta / tb is 'T' (dgemm) */
void sgfs_gemm(char ta, char tb, int m, int n, int k, const double *A, int lda,
               const double *B, int ldb, double beta, double *C, int ldc)
{
    const double one = 1.0;
    F77_CALL(dgemm)(&ta, &tb, &m, &n, &k, &one, A, &lda, B, &ldb, &beta, C, &ldc
                    FCONE FCONE);
}

/* sgemm is not among R's BLAS declarations (R's own BLAS has only the
   double routines): ./configure defines SGFS_HAVE_SGEMM when it links */
#ifdef SGFS_HAVE_SGEMM
extern void F77_NAME(sgemm)(const char *ta, const char *tb, const int *m, const int *n,
                            const int *k, const float *alpha, const float *A,
                            const int *lda, const float *B, const int *ldb,
                            const float *beta, float *C, const int *ldc FCLEN FCLEN);

void sgfs_sgemm(char ta, char tb, int m, int n, int k, const float *A, int lda,
                const float *B, int ldb, float beta, float *C, int ldc)
{
    const float one = 1.0f;
    F77_CALL(sgemm)(&ta, &tb, &m, &n, &k, &one, A, &lda, B, &ldb, &beta, C, &ldc
                    FCONE FCONE);
}
#endif

int sgfs_has_sgemm(void)
{
#ifdef SGFS_HAVE_SGEMM
    return 1;
#else
    return 0;
#endif
}

SEXP sgfs_single_precision(void)
{
    return Rf_ScalarLogical(sgfs_has_sgemm());
}

/* The linear predictors of the GLMs at S draws: for class k < K1 (K1 = 1
   but for categorical()), Z_k = Theta_k' x (S x m), Theta_k the P x S
   coefficients of class k, rows kP..kP+P-1 of theta (D x S); Z_k into
   z + k ldk with leading dimension ldz (>= S). */
void sgfs_linear_outputs(const double *theta, int D, int P, int K1, int S,
                         const double *x, int m, double *z, size_t ldz, size_t ldk)
{
    for (int k = 0; k < K1; k++)          /* Z_k = Theta_k' x */
        sgfs_gemm('T', 'N', S, m, P, theta + (size_t) k * P, D, x, P, 0.0,
                  z + k * ldk, (int) ldz);
}

/* the model hooks n_out and `outputs` of a GLM with one linear predictor
   (logistic, probit, poisson, gaussian, negbin: its first P parameters),
   whose own draw_value maps its output */
int sgfs_glm_n_out(const double *mpar, const sgfs_model **out)
{
    (void) mpar;
    (void) out;
    return 1;
}

void sgfs_glm_outputs(sgfs_lik *lik, const double *theta, int S, const double *x,
                      int m, double *z, size_t ldz, size_t ldk)
{
    sgfs_linear_outputs(theta, lik->D, lik->data->P, 1, S, x, m, z, ldz, ldk);
}
