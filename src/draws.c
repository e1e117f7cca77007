/*
 * draws.c - draw-level outputs of a fitted model (R/posterior-draws.R):
 * the linear predictor, the expected response or the pointwise
 * log-likelihood at every posterior draw s and every example i, for
 * posterior_linpred(), posterior_epred(), posterior_predict() and log_lik().
 *
 * With z_{s,i} the model's outputs at draw theta_s for example u_i (the
 * model's `outputs` hook, on the engine's internal scale: a GLM's
 * u_i' beta_s, a network's output layer), the link is z; a model of one
 * output a row maps z to the mean and the log-likelihood with its
 * draw_value hook (the GLM of a network's output layer: its n_out), given
 * the draw's noise parameter log_aux[s] (gaussian's internal log sigma,
 * negbin's log phi), and both are then taken to the response's scale
 * through its affine map (c, a), the internal response being (y - c) / a:
 * the link and the mean to c + a times theirs, the log density to it
 * minus log a (for gaussian(); c = 0 and a = 1 for the other families).
 * A model of K classes (categorical's K - 1 logits, cumulative's eta and
 * cutpoints less eta) maps its outputs with its class_value hook: the
 * link, the K class probabilities as the mean, the log probability of the
 * class y (y in 0..K-1).
 *
 * The GLMs' z include the rows' offsets o_i when given (z = u_i' beta_s + o_i,
 * o_i on the internal scale: divided by a for gaussian), or offsets o_si of
 * each draw (a mixed model's group effects, which differ by draw).
 *
 * sgfs_draws_eval(spec, theta, x, y, what, log_aux, affine, offset):
 *   spec       the fit's engine spec (model, mpar; its data are not read)
 *   theta      D x S, column s the draw theta_s on the internal scale
 *   x          P x m, column i the example u_i, standardised as the
 *              engine's copy (design_copy.c)
 *   y          m responses on the internal scale (what = 2), else NULL
 *   what       0 link, 1 mean, 2 log-likelihood
 *   log_aux    S internal log noise sds (gaussian) or log phi (negbin),
 *              the draws' noise parameters, else empty
 *   affine     c(c, a) (gaussian), else c(0, 1)
 *   offset     m doubles, the rows' offsets (internal scale), or S x m, each
 *              draw's, or NULL
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

#define CHUNK 1024
#define BLOCK_DOUBLES 1000000
#define SCRATCH_DOUBLES 10000000


typedef struct out_map {
    int what, K1;               /* K1: the outputs a row                      */
    const sgfs_model *map;      /* draw_value's model, or NULL: classes       */
    const sgfs_model *classes;  /* else the model whose class_value maps      */
    double *out;                /* S x m (x K)                                 */
    size_t S, m;                /* the whole output's draws and examples       */
    const double *y, *log_aux;  /* log_aux: S draws' noise parameters          */
    const double *mpar;         /* the GLM's settings (NULL: a network's)      */
    const double *offset;       /* m offsets added to z (GLMs), or NULL        */
    int offset_by_draw;         /* 1: offset is S x m, o_si                    */
    double centre, scale;       /* the response's affine map                   */
} out_map;

/* the block's outputs z (Sb x mc x K1, leading dimensions Sb and Sb mc) for
   draws s0.., examples i0.. to their values in the output */
static void finish_block(const out_map *o, double *z, int Sb, int mc, size_t s0,
                         size_t i0)
{
    const size_t ldk = (size_t) Sb * mc, plane = o->S * o->m;
    const double log_a = log(o->scale);
    for (int i = 0; i < mc; i++) {
        const double y = o->what == SGFS_DRAW_LOGLIK ? o->y[i0 + i] : 0.0;
        const double *off = o->offset == NULL ? NULL
                            : o->offset_by_draw ? o->offset + s0 + (i0 + i) * o->S : o->offset + i0 + i;
        double *dest = o->out + s0 + (i0 + i) * o->S;
        double *zi = z + (size_t) i * Sb;
        for (int s = 0; s < Sb; s++) {
            const double zs = zi[s] + (off == NULL ? 0.0 : off[o->offset_by_draw ? s : 0]);
            if (o->map) {
                if (o->what == SGFS_DRAW_LINK) {
                    dest[s] = o->centre + o->scale * zs;
                    continue;
                }
                const double la = o->log_aux ? o->log_aux[s0 + s] : 0.0;
                const double v = o->map->draw_value(o->what, y, zs, la, o->mpar);
                dest[s] = o->what == SGFS_DRAW_MEAN ? o->centre + o->scale * v : v - log_a;
                continue;
            }
            o->classes->class_value(o->what, zi + s, ldk, o->K1, (int) y, o->mpar, dest + s,
                                    plane);
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
    sgfs_data data;
    sgfs_lik lik;
    memset(&data, 0, sizeof data);
    memset(&lik, 0, sizeof lik);
    data.P = Rf_nrows(x);
    lik.data = &data;
    lik.model = model;
    lik.mpar = REAL(mpar);
    lik.D = model->n_par(data.P, lik.mpar, Rf_length(mpar));
    const int S = Rf_ncols(theta), m = Rf_ncols(x), w = Rf_asInteger(what);
    if (lik.D < 1 || Rf_nrows(theta) != lik.D)
        Rf_error("internal error: 'theta' must have %d rows", lik.D);
    if (w < SGFS_DRAW_LINK || w > SGFS_DRAW_LOGLIK)
        Rf_error("internal error: 'what' must be 0, 1 or 2");
    out_map o = { .what = w, .S = (size_t) S, .m = (size_t) m, .centre = 0.0, .scale = 1.0 };
    const sgfs_model *map = NULL;
    o.K1 = model->n_out(lik.mpar, &map);
    if (map == NULL) {
        map = model;
        o.mpar = lik.mpar;
    }
    o.map = map->draw_value ? map : NULL;
    o.classes = o.map ? NULL : map;
    if (o.classes && o.classes->class_value == NULL)
        Rf_error("internal error: the model '%s' maps no outputs", map->name);
    const int n_class = o.classes ? o.classes->n_class(o.K1) : 1;
    if (w == SGFS_DRAW_LOGLIK && (TYPEOF(y) != REALSXP || Rf_xlength(y) != m))
        Rf_error("internal error: 'y' must be %d doubles", m);
    o.y = w == SGFS_DRAW_LOGLIK ? REAL(y) : NULL;
    if (offset != R_NilValue) {
        if (TYPEOF(offset) != REALSXP || o.map == NULL ||
            (Rf_xlength(offset) != m && Rf_xlength(offset) != (R_xlen_t) S * m))
            Rf_error("internal error: 'offset' must be %d or %d x %d doubles, for a GLM", m, S, m);
        o.offset = REAL(offset);
        o.offset_by_draw = Rf_xlength(offset) != m;
    }
    if (TYPEOF(affine) != REALSXP || Rf_xlength(affine) != 2 || !(REAL(affine)[1] > 0.0))
        Rf_error("internal error: 'affine' must be c(centre, scale), the scale positive");
    o.centre = REAL(affine)[0];
    o.scale = REAL(affine)[1];
    if (o.map && o.map->draw_aux) {
        if (TYPEOF(log_aux) != REALSXP || Rf_xlength(log_aux) != S)
            Rf_error("internal error: the %s model needs %d noise parameters", o.map->name, S);
        o.log_aux = REAL(log_aux);
    }
    if (o.classes && w == SGFS_DRAW_LOGLIK)
        for (int i = 0; i < m; i++)
            if (!(o.y[i] >= 0 && o.y[i] < n_class) || o.y[i] != floor(o.y[i]))
                Rf_error("internal error: class codes must be 0 to %d", n_class - 1);

    const int K = o.classes && w != SGFS_DRAW_LOGLIK ? n_class : 1;
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
        const double one = (double) model->scratch(data.P, 1, lik.mpar),
                     per_row = (double) model->scratch(data.P, 2, lik.mpar) - one;
        if (per_row * chunk > SCRATCH_DOUBLES)
            chunk = per_row >= SCRATCH_DOUBLES ? 1 : (int) (SCRATCH_DOUBLES / per_row);
    }
    const R_xlen_t eta_len = model->scratch ? model->scratch(data.P, chunk, lik.mpar)
                                            : (R_xlen_t) chunk * ((lik.D + data.P - 1) / data.P);
    lik.eta = (double *) R_alloc(eta_len > 0 ? (size_t) eta_len : 1, sizeof(double));
    double per_draw = (double) chunk * o.K1;
    int block = per_draw >= BLOCK_DOUBLES ? 1 : (int) (BLOCK_DOUBLES / per_draw);
    if (block > S) block = S;
    double *z = (double *) R_alloc((size_t) block * chunk * o.K1, sizeof(double));
    const double *th = REAL(theta), *xs = REAL(x);

    for (int i0 = 0; i0 < m; i0 += chunk) {
        const int mc = m - i0 < chunk ? m - i0 : chunk;
        for (int s0 = 0; s0 < S; s0 += block) {
            const int Sb = S - s0 < block ? S - s0 : block;
            model->outputs(&lik, th + (size_t) s0 * lik.D, Sb, xs + (size_t) i0 * data.P, mc, z,
                           (size_t) Sb, (size_t) Sb * mc);
            finish_block(&o, z, Sb, mc, (size_t) s0, (size_t) i0);
            R_CheckUserInterrupt();
        }
    }
    UNPROTECT(1);
    return out;
}
