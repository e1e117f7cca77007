/*
 * draws.c - draw-level outputs of a fitted model (R/posterior-draws.R):
 * the linear predictor, the expected response or the pointwise
 * log-likelihood at every posterior draw s and every example i, for
 * posterior_linpred(), posterior_epred(), posterior_predict() and log_lik().
 *
 * With z_{s,i} the model's outputs at draw theta_s for example u_i (the
 * model's `outputs` hook, on the engine's internal scale: a GLM's
 * u_i' beta_s, a network's output layer):
 *
 *   binomial:    link z,  mean p = sigmoid(z),
 *                log-lik y z - log(1 + exp(z))                 (y in {0, 1});
 *   gaussian:    link = mean = c + a z,  with (c, a) the response's
 *                centre and scale (the internal response is (y - c) / a),
 *                log-lik -log(a sigma_s) - log(2 pi)/2 - r^2 / (2 sigma_s^2),
 *                r = y - z on the internal scale, sigma_s = exp(log_sigma[s])
 *                the internal noise sd: the density of the original y;
 *   probit:      link z,  mean Phi(z),  log-lik log Phi(s z), s = 2y - 1;
 *   poisson:     link z,  mean exp(z),  log-lik y z - exp(z) - lgamma(y + 1);
 *   negbin:      link z,  mean exp(z),  log-lik the NB2 density of y with
 *                mean exp(z) and phi_s = exp(log_aux[s]) (model_negbin.c);
 *   categorical: K classes, class 0 the reference with logit 0:
 *                link (0, z_1, ..., z_{K-1}),
 *                mean p_k = exp(z_k) / (1 + sum_l exp(z_l)),
 *                log-lik z_y - log(1 + sum_l exp(z_l))          (y in 0..K-1).
 *
 * The GLMs' z include the rows' offsets o_i when given (z = u_i' beta_s + o_i,
 * o_i on the internal scale: divided by a for gaussian).
 *
 * sgfs_draws_eval(spec, theta, x, y, what, log_sigma, affine, offset):
 *   spec       the fit's engine spec (model, mpar; its data are not read)
 *   theta      D x S, column s the draw theta_s on the internal scale
 *   x          P x m, column i the example u_i, standardised as the
 *              engine's copy (design_copy.c)
 *   y          m responses on the internal scale (what = 2), else NULL
 *   what       0 link, 1 mean, 2 log-likelihood
 *   log_aux    S internal log noise sds (gaussian) or log phi (negbin),
 *              the draws' noise parameters, else empty
 *   affine     c(c, a) (gaussian), else c(0, 1)
 *   offset     m doubles, the rows' offsets (internal scale), or NULL
 * returns an S x m matrix (one row per draw, as rstantools' methods), or
 * for categorical() and what < 2 an S x m x K array.
 *
 * The work goes in blocks: examples in chunks of at most CHUNK columns
 * (a network's scratch, its hidden units for a chunk, is kept under
 * SCRATCH_DOUBLES), draws in blocks small enough
 * that the block's outputs, Sb x chunk x n_out doubles, stay under
 * BLOCK_DOUBLES; a GLM's block is one dgemm per class.  Nothing is
 * allocated inside the loops; Ctrl-C is polled between blocks.
 */
#include "sgfs.h"
#include <Rmath.h>

#define HALF_LOG_2PI 0.918938533204672741780329736406
#define CHUNK 1024
#define BLOCK_DOUBLES 1000000
#define SCRATCH_DOUBLES 10000000

enum { WHAT_LINK = 0, WHAT_MEAN = 1, WHAT_LOGLIK = 2 };

typedef struct out_map {
    int kind, what, K1;
    double *out;                /* S x m (x K)                                 */
    size_t S, m;                /* the whole output's draws and examples       */
    const double *y, *log_aux;  /* log_aux: S draws' noise parameters          */
    const double *offset;       /* m offsets added to z (GLMs), or NULL        */
    double centre, scale;       /* gaussian: the response's affine map         */
} out_map;

/* the block's outputs z (Sb x mc x K1, leading dimensions Sb and Sb mc) for
   draws s0.., examples i0.. to their values in the output */
static void finish_block(const out_map *o, double *z, int Sb, int mc, size_t s0,
                         size_t i0)
{
    const size_t ldk = (size_t) Sb * mc, plane = o->S * o->m;
    const double log_a = log(o->scale);
    for (int i = 0; i < mc; i++) {
        const double y = o->what == WHAT_LOGLIK ? o->y[i0 + i] : 0.0;
        const double off = o->offset ? o->offset[i0 + i] : 0.0;
        const double lfact = o->kind == SGFS_OUT_POISSON && o->what == WHAT_LOGLIK ?
            lgamma(y + 1.0) : 0.0;
        double *dest = o->out + s0 + (i0 + i) * o->S;
        double *zi = z + (size_t) i * Sb;
        for (int s = 0; s < Sb; s++) {
            const double zs = zi[s] + off;
            switch (o->kind) {
            case SGFS_OUT_BINOMIAL:
                if (o->what == WHAT_LINK) dest[s] = zs;
                else if (o->what == WHAT_MEAN) dest[s] = sgfs_sigmoid(zs);
                else {
                    double ll = 0.0;
                    sgfs_binomial_residual(y, zs, &ll);
                    dest[s] = ll;
                }
                break;
            case SGFS_OUT_GAUSSIAN:
                if (o->what != WHAT_LOGLIK) dest[s] = o->centre + o->scale * zs;
                else {
                    const double ls = o->log_aux[s0 + s], r = (y - zs) * exp(-ls);
                    dest[s] = -ls - log_a - HALF_LOG_2PI - 0.5 * r * r;
                }
                break;
            case SGFS_OUT_PROBIT:
                if (o->what == WHAT_LINK) dest[s] = zs;
                else if (o->what == WHAT_MEAN) dest[s] = pnorm(zs, 0.0, 1.0, 1, 0);
                else dest[s] = pnorm(y > 0.5 ? zs : -zs, 0.0, 1.0, 1, 1);
                break;
            case SGFS_OUT_POISSON:
                if (o->what == WHAT_LINK) dest[s] = zs;
                else if (o->what == WHAT_MEAN) dest[s] = exp(zs);
                else dest[s] = y * zs - exp(zs) - lfact;
                break;
            case SGFS_OUT_NEGBIN:
                if (o->what == WHAT_LINK) dest[s] = zs;
                else if (o->what == WHAT_MEAN) dest[s] = exp(zs);
                else dest[s] = sgfs_negbin_loglik(y, zs, o->log_aux[s0 + s]);
                break;
            default: {              /* categorical: classes k + 1 at zi + s + k ldk */
                double *zk = zi + s;
                if (o->what == WHAT_LINK) {
                    dest[s] = 0.0;
                    for (int k = 0; k < o->K1; k++) dest[s + (k + 1) * plane] = zk[k * ldk];
                    break;
                }
                const int c = (int) y;
                if (o->what == WHAT_LOGLIK) {
                    const double zy = c > 0 ? zk[(c - 1) * ldk] : 0.0;
                    dest[s] = zy - sgfs_softmax_ref(zk, ldk, o->K1);
                    break;
                }
                sgfs_softmax_sum(zk, ldk, o->K1, NULL, dest + s);   /* dest: the reference class */
                for (int k = 0; k < o->K1; k++) dest[s + (k + 1) * plane] = zk[k * ldk];
            }
            }
        }
    }
}

SEXP sgfs_draws_eval(SEXP spec, SEXP theta, SEXP x, SEXP y, SEXP what,
                     SEXP log_aux, SEXP affine, SEXP offset)
{
    const sgfs_model *model = sgfs_find_model(CHAR(STRING_ELT(sgfs_list_elt(spec, "model"), 0)));
    SEXP mpar = sgfs_list_elt(spec, "mpar");
    if (model->outputs == NULL || model->n_out == NULL)
        Rf_error("the model '%s' has no draw-level outputs", model->name);
    if (TYPEOF(theta) != REALSXP || !Rf_isMatrix(theta) || TYPEOF(x) != REALSXP ||
        !Rf_isMatrix(x) || TYPEOF(mpar) != REALSXP)
        Rf_error("internal error: 'theta' and 'x' must be double matrices");
    sgfs_engine e;
    memset(&e, 0, sizeof e);
    e.model = model;
    e.mpar = REAL(mpar);
    e.data.P = Rf_nrows(x);
    e.D = model->n_par(e.data.P, e.mpar, Rf_length(mpar));
    const int S = Rf_ncols(theta), m = Rf_ncols(x), w = Rf_asInteger(what);
    if (e.D < 1 || Rf_nrows(theta) != e.D)
        Rf_error("internal error: 'theta' must have %d rows", e.D);
    if (w < WHAT_LINK || w > WHAT_LOGLIK)
        Rf_error("internal error: 'what' must be 0, 1 or 2");
    out_map o = { .what = w, .S = (size_t) S, .m = (size_t) m, .centre = 0.0, .scale = 1.0 };
    o.K1 = model->n_out(e.mpar, &o.kind);
    if (w == WHAT_LOGLIK && (TYPEOF(y) != REALSXP || Rf_xlength(y) != m))
        Rf_error("internal error: 'y' must be %d doubles", m);
    o.y = w == WHAT_LOGLIK ? REAL(y) : NULL;
    if (offset != R_NilValue) {
        if (TYPEOF(offset) != REALSXP || Rf_xlength(offset) != m ||
            o.kind == SGFS_OUT_CATEGORICAL)
            Rf_error("internal error: 'offset' must be %d doubles, for a GLM", m);
        o.offset = REAL(offset);
    }
    if ((o.kind == SGFS_OUT_POISSON || o.kind == SGFS_OUT_NEGBIN) && w == WHAT_LOGLIK)
        for (int i = 0; i < m; i++)
            if (!(o.y[i] >= 0) || o.y[i] != floor(o.y[i]))
                Rf_error("internal error: counts must be non-negative whole numbers");
    if (o.kind == SGFS_OUT_GAUSSIAN) {
        if (TYPEOF(log_aux) != REALSXP || Rf_xlength(log_aux) != S ||
            TYPEOF(affine) != REALSXP || Rf_xlength(affine) != 2 || !(REAL(affine)[1] > 0.0))
            Rf_error("internal error: a gaussian model needs %d log sigmas and c(centre, scale)", S);
        o.log_aux = REAL(log_aux);
        o.centre = REAL(affine)[0];
        o.scale = REAL(affine)[1];
    }
    if (o.kind == SGFS_OUT_NEGBIN) {
        if (TYPEOF(log_aux) != REALSXP || Rf_xlength(log_aux) != S)
            Rf_error("internal error: a negbin model needs %d log phis", S);
        o.log_aux = REAL(log_aux);
    }
    if (o.kind == SGFS_OUT_CATEGORICAL && w == WHAT_LOGLIK)
        for (int i = 0; i < m; i++)
            if (!(o.y[i] >= 0 && o.y[i] <= o.K1) || o.y[i] != floor(o.y[i]))
                Rf_error("internal error: class codes must be 0 to %d", o.K1);

    const int K = o.kind == SGFS_OUT_CATEGORICAL && w != WHAT_LOGLIK ? o.K1 + 1 : 1;
    SEXP out;
    if (K == 1) out = PROTECT(Rf_allocMatrix(REALSXP, S, m));
    else out = PROTECT(Rf_alloc3DArray(REALSXP, S, m, K));
    o.out = REAL(out);
    if (S == 0 || m == 0) {
        UNPROTECT(1);
        return out;
    }
    /* scratch, allocated once: the model's for a chunk (a network's hidden
       units, chunks shortened to keep it under SCRATCH_DOUBLES), and a
       block's outputs */
    int chunk = m < CHUNK ? m : CHUNK;
    if (model->scratch) {            /* (a part that does not grow with the rows aside) */
        const double one = (double) model->scratch(e.data.P, 1, e.mpar),
                     per_row = (double) model->scratch(e.data.P, 2, e.mpar) - one;
        if (per_row * chunk > SCRATCH_DOUBLES)
            chunk = per_row >= SCRATCH_DOUBLES ? 1 : (int) (SCRATCH_DOUBLES / per_row);
    }
    e.n = chunk;
    const R_xlen_t eta_len = model->scratch ? model->scratch(e.data.P, chunk, e.mpar)
                                            : (R_xlen_t) chunk * ((e.D + e.data.P - 1) / e.data.P);
    e.eta = (double *) R_alloc(eta_len > 0 ? (size_t) eta_len : 1, sizeof(double));
    double per_draw = (double) chunk * o.K1;
    int block = per_draw >= BLOCK_DOUBLES ? 1 : (int) (BLOCK_DOUBLES / per_draw);
    if (block > S) block = S;
    double *z = (double *) R_alloc((size_t) block * chunk * o.K1, sizeof(double));
    const double *th = REAL(theta), *xs = REAL(x);

    for (int i0 = 0; i0 < m; i0 += chunk) {
        const int mc = m - i0 < chunk ? m - i0 : chunk;
        for (int s0 = 0; s0 < S; s0 += block) {
            const int Sb = S - s0 < block ? S - s0 : block;
            model->outputs(&e, th + (size_t) s0 * e.D, Sb, xs + (size_t) i0 * e.data.P, mc, z,
                           (size_t) Sb, (size_t) Sb * mc);
            finish_block(&o, z, Sb, mc, (size_t) s0, (size_t) i0);
            R_CheckUserInterrupt();
        }
    }
    UNPROTECT(1);
    return out;
}
