/*
 * engine.c - builds an sgfs_engine from the plain lists the R front end
 * passes, and keeps every array it points into alive in one VECSXP.
 *
 * spec  (list, validated and coerced in R):
 *   version     SGFS_SPEC_VERSION (sgfs.h; R reads it with sgfs_spec_version()):
 *               a fit carries its spec, and update() of a fit saved by
 *               another version of the package stops here with a message
 *               instead of reading settings of another layout
 *   N, P        ints: examples and features of the data (data.c), held as
 *   xt          P x N double, one example per column, or as
 *   rows        the compressed rows (sparse_rows.c); the other absent or NULL
 *   y           N doubles
 *   model       an engine model name (registry.c);  mpar: model settings (doubles)
 *   prior_type  D ints (0 normal, 1 laplace, 2 student_t); prior_loc,
 *               prior_scale, prior_prec: D doubles; prior_df (optional, D
 *               doubles): the student_t priors' degrees of freedom (prior.c)
 *   sampler     update-rule name;  spar: its settings (doubles)
 *   schedule    c(type, a, b, delta)
 *   batch_size, burnin, thin: ints (a chain's: its minibatch's rows)
 *   pass_rows   (optional) int >= 1: the rows of one chunk of an
 *               evaluation's full-data pass (absent: pass_rows() below)
 *   centre, centre_score (optional, D doubles each): control variates, the
 *               centre theta_hat and the full-data score sum there
 *   metric      (optional) D doubles (a diagonal metric) or the D x D upper
 *               triangular U of the curvature H = U'U (metric.c)
 *   metric_vectors, metric_values  (optional, with a diagonal metric) its
 *               low-rank part: D x k orthonormal eigenvectors of the
 *               whitened curvature and their k eigenvalues (metric.c)
 *   drift_limit (optional, with a metric) the clip of the whitened gradient
 *   record_grad_sq (optional) TRUE: sum each gradient coordinate's square
 *               over the iterations past burn-in (always with a metric)
 *   fixed       (optional) strictly increasing ints, 0-based: rows in every
 *               minibatch, whose random part is drawn from the other rows
 *   sgfs_robust (optional) TRUE: SGFS's robust rule (fisher.c)
 *   sgfs_curvature (optional) SGFS: the log posterior's curvature at the
 *               mode, D x D (D for SGFS-d), in place of N I + Lambda
 *               (sgfs_blockdiag.c)
 *   fisher_rows (optional) int in 2..batch_size: the minibatch rows (its
 *               first ones) whose scores update SGFS's Fisher estimate
 *               (fisher.c); absent: all
 *   monitor     (optional) ints, 0-based: the parameters whose draws are kept
 *   pred_x      (optional) P x M double: examples whose predictive each kept
 *               draw adds to (keep = predictive())
 *   callback    (optional) R functions the model calls (model_custom.c)
 *   offset      (optional) N doubles added to the linear predictor (the
 *               GLM models); absent or NULL: no offset
 *   weights     (optional) N non-negative doubles, the rows' prior weights
 *               (the GLM models: logistic, probit, poisson, gaussian,
 *               categorical);
 *               absent or NULL: every row weight 1
 *   separated_rows, separated_ptr, separated_dir, separated_width,
 *   separated_every (optional, together): levels updated exactly every
 *               `every` iterations (separated.c): level k's rows (ints,
 *               0-based) rows[ptr[k]..ptr[k+1]-1], its direction in theta
 *               (column k of the D x K dir) and slice width (K doubles);
 *               for a categorical model separated_class too (K ints: the
 *               class whose predictor a level's line moves, 0: all)
 *   windows     (optional) int in 0..64: minibatches as windows of
 *               consecutive rows from random starts, drawn that many
 *               iterations ahead (minibatch.c); absent or 0: random rows
 *   window_rows (optional, with windows) a divisor of batch_size: the rows
 *               of a window (absent: the whole minibatch is one window)
 *   hyper_group, hyper_base, hyper_shape, hyper_rate (optional, together):
 *               learned prior scales (prior_hyper.c): each coordinate's
 *               group (D ints, 0: none), base precision (D), and each
 *               group's Gamma hyperprior (K shapes and rates)
 *   hs          (optional) the regularised horseshoe's settings (prior_hs.c):
 *               the chain samples its parameters too (rules sgld, hmc, sga,
 *               adam)
 * state (list): theta (D; with a horseshoe, spec$hs, the Ds = D + K + 2
 *   unconstrained coordinates xi of prior_hs.c), iter (1), sstate (the
 *   sampler's, or empty for a fresh one), and optionally z (Ds; with a
 *   metric, the sampler's coordinates, else computed from theta) and starts
 *   (with windows: the windows drawn ahead, else fresh), hyper (with
 *   learned prior scales: the groups' precisions, else 1).  They are copied: a fit's state is never modified in place.
 *
 * No memory is allocated after setup: the iteration loop works in the
 * scratch arrays allocated here.
 */
#include "sgfs.h"
#include "ranef.h"

enum { SLOT_ENGINE, SLOT_SPEC, SLOT_THETA, SLOT_ITER, SLOT_SSTATE, SLOT_BATCH, SLOT_SLOTS,
       SLOT_XB, SLOT_ETA, SLOT_GRAD, SLOT_GRAD_CENTRE, SLOT_G, SLOT_WORK,
       SLOT_DRAWS, SLOT_PRED, SLOT_Z, SLOT_POOL, SLOT_GRAD_FIXED, SLOT_CENTRE_FIXED, SLOT_GRAD_SQ, SLOT_ETA_CENTRE,
       SLOT_CENTRE_HESSIAN, SLOT_CENTRE_DELTA, SLOT_HS, SLOT_HS_SCRATCH, SLOT_PAR, SLOT_REPORT,
       SLOT_SEP, SLOT_SEP_ETA, SLOT_SEP_POINT, SLOT_SEP_BASIS, SLOT_SEP_Z_OLD, SLOT_STARTS, SLOT_METRIC_LR, SLOT_NOISE,
       SLOT_HYPER, SLOT_HYPER_TAU, SLOT_HYPER_WORK, SLOT_PRIOR_SCALE, SLOT_PRIOR_PREC,
       SLOT_RANEF, N_SLOTS };

static double *fresh_real(SEXP prot, int slot, R_xlen_t len)
{
    if (len < 0) Rf_error("internal error: negative work-array length");
    SEXP x = Rf_allocVector(REALSXP, len > 0 ? len : 1);
    SET_VECTOR_ELT(prot, slot, x);
    memset(REAL(x), 0, (size_t) Rf_xlength(x) * sizeof(double));
    return REAL(x);
}

/* a zeroed struct of `size` bytes, kept alive in the protected slot */
static void *fresh_struct(SEXP prot, int slot, size_t size)
{
    SEXP raw = Rf_allocVector(RAWSXP, (R_xlen_t) size);
    SET_VECTOR_ELT(prot, slot, raw);
    memset(RAW(raw), 0, size);
    return RAW(raw);
}

static double *copy_real(SEXP prot, int slot, SEXP from)
{
    SEXP x = Rf_duplicate(from);
    SET_VECTOR_ELT(prot, slot, x);
    return REAL(x);
}

R_xlen_t sgfs_size_of(sgfs_size s, int D)
{
    return (R_xlen_t) s.per_dd * D * D + (R_xlen_t) s.per_d * D + s.fixed;
}

/* the leading settings in spar carry the names the rule gives them: a
   setting is read by position, and a name out of place is a contract
   broken between R and the rule */
static void check_spar_names(const sgfs_sampler *smp, SEXP spar)
{
    SEXP names = Rf_getAttrib(spar, R_NamesSymbol);
    for (int k = 0; k < SGFS_MAX_SPAR_NAMES && smp->spar_names[k] != NULL; k++) {
        if (TYPEOF(names) != STRSXP || Rf_xlength(names) <= k ||
            strcmp(CHAR(STRING_ELT(names, k)), smp->spar_names[k]) != 0)
            Rf_error("internal error: the '%s' rule's setting %d must be named '%s'",
                     smp->name, k + 1, smp->spar_names[k]);
    }
}

/* The named parts of a rule's state, for R: list(name = doubles, ...) from
   the rule's table (sgfs_sampler.state_parts), so that R reads a chain's
   diagnostics by name.  sampler: the rule's name; D: the number of
   parameters the rule moves; sstate: the saved state (its length must be
   the parts' total). */
SEXP sgfs_state_parts(SEXP sampler, SEXP D, SEXP sstate)
{
    if (TYPEOF(sampler) != STRSXP || Rf_xlength(sampler) != 1 ||
        STRING_ELT(sampler, 0) == NA_STRING)
        Rf_error("internal error: 'sampler' must be a rule's name");
    const sgfs_sampler *smp = sgfs_find_sampler(CHAR(STRING_ELT(sampler, 0)));
    const int d = Rf_asInteger(D);
    if (d == NA_INTEGER || d < 1) Rf_error("internal error: 'D' must be a positive count");
    if (TYPEOF(sstate) != REALSXP) Rf_error("internal error: 'sstate' must be doubles");
    int K = 0;
    R_xlen_t total = 0;
    while (K < SGFS_MAX_STATE_PARTS && smp->state_parts[K].name != NULL)
        total += sgfs_size_of(smp->state_parts[K++].len, d);
    if (K == 0) return Rf_allocVector(VECSXP, 0);
    if (total != Rf_xlength(sstate))
        Rf_error("internal error: the '%s' rule's state has %.0f values, its parts %.0f",
                 smp->name, (double) Rf_xlength(sstate), (double) total);
    SEXP out = PROTECT(Rf_allocVector(VECSXP, K)), names = PROTECT(Rf_allocVector(STRSXP, K));
    R_xlen_t at = 0;
    for (int k = 0; k < K; k++) {
        const R_xlen_t len = sgfs_size_of(smp->state_parts[k].len, d);
        SEXP part = Rf_allocVector(REALSXP, len);
        SET_VECTOR_ELT(out, k, part);
        if (len > 0) memcpy(REAL(part), REAL(sstate) + at, (size_t) len * sizeof(double));
        SET_STRING_ELT(names, k, Rf_mkChar(smp->state_parts[k].name));
        at += len;
    }
    Rf_setAttrib(out, R_NamesSymbol, names);
    UNPROTECT(2);
    return out;
}

/* a sampler array's length: from its settings if the sampler sizes it so
   (by_settings != NULL), else from its shape in D */
static R_xlen_t sampler_array_len(R_xlen_t (*by_settings)(const double *, R_xlen_t, int),
                                  sgfs_size shape, SEXP spar, int D)
{
    if (by_settings == NULL) return sgfs_size_of(shape, D);
    const R_xlen_t len = by_settings(REAL(spar), Rf_xlength(spar), D);
    if (len < 0)
        Rf_error("internal error: sampler settings do not fit %d parameters", D);
    return len;
}

/* spec$windows and state$starts (minibatch.c) */
static void setup_windows(sgfs_engine *e, SEXP prot, SEXP spec, SEXP state)
{
    SEXP w = sgfs_list_opt(spec, "windows");
    if (w == R_NilValue) return;
    const int L = sgfs_list_int(spec, "windows");
    if (L == NA_INTEGER || L < 0 || L > 64)
        Rf_error("internal error: 'windows' must be an integer in 0..64");
    if (L == 0) return;
    SEXP width = sgfs_list_opt(spec, "window_rows");
    const int m = width == R_NilValue ? e->n : sgfs_list_int(spec, "window_rows");
    if (m == NA_INTEGER || m < 1 || m > e->n || e->n % m != 0)
        Rf_error("internal error: 'window_rows' must divide the batch size %d", e->n);
    e->batch.ahead = L;
    e->batch.width = m;
    e->batch.per = e->n / m;
    const int len = L * e->batch.per;
    /* the queue, then room for one minibatch's starts (minibatch.c) */
    e->batch.starts = fresh_real(prot, SLOT_STARTS, len + e->batch.per);
    for (int k = 0; k < len; k++) e->batch.starts[k] = -1.0;
    SEXP starts = sgfs_list_opt(state, "starts");
    if (starts == R_NilValue) return;
    const double Np = (double) e->data.N - e->held.n;
    if (TYPEOF(starts) != REALSXP || Rf_xlength(starts) != len)
        Rf_error("internal error: state 'starts' must be %d doubles", len);
    for (int k = 0; k < len; k++) {
        const double s = REAL(starts)[k];
        if (!(s == -1.0 || (s >= 0 && s < Np && s == floor(s))) || (REAL(starts)[0] < 0) != (s < 0))
            Rf_error("internal error: state 'starts' out of range");
    }
    memcpy(e->batch.starts, REAL(starts), (size_t) len * sizeof(double));
}

/* spec$metric_vectors (D x k, orthonormal columns) and metric_values (k
   positive eigenvalues of the whitened curvature): a diagonal metric's
   low-rank part (metric.c), or none */
static void setup_metric_lowrank(sgfs_engine *e, SEXP prot, SEXP spec)
{
    SEXP vec = sgfs_list_opt(spec, "metric_vectors"), val = sgfs_list_opt(spec, "metric_values");
    e->metric.rank = 0;
    if (vec == R_NilValue) return;
    const int D = e->Ds;
    if (e->metric.dense || TYPEOF(vec) != REALSXP || !Rf_isMatrix(vec) || Rf_nrows(vec) != D ||
        val == R_NilValue || TYPEOF(val) != REALSXP || Rf_xlength(val) != Rf_ncols(vec) ||
        Rf_ncols(vec) < 1)
        Rf_error("internal error: a low-rank metric needs a diagonal one, %d x k vectors and "
                 "k values", D);
    const int k = Rf_ncols(vec);
    double *lr = fresh_real(prot, SLOT_METRIC_LR, 4 * (R_xlen_t) k);
    for (int j = 0; j < k; j++) {
        const double lambda = REAL(val)[j];
        if (!(lambda > 0.0) || !R_FINITE(lambda))
            Rf_error("internal error: the low-rank metric's values must be positive");
        lr[j] = sqrt(lambda) - 1.0;
        lr[k + j] = 1.0 / sqrt(lambda) - 1.0;
    }
    e->metric.vectors = REAL(vec);
    e->metric.up = lr;
    e->metric.down = lr + k;
    e->metric.work = lr + 2 * k;              /* k x 2 */
    e->metric.rank = k;
}

/* spec$metric: z = U theta becomes the sampler's coordinates; a continued
   chain's state carries its z (state$z), so that it continues exactly */
static void setup_metric(sgfs_engine *e, SEXP prot, SEXP spec, SEXP state)
{
    SEXP metric = sgfs_list_opt(spec, "metric");
    const int D = e->Ds;
    e->metric.D = D;
    if (metric == R_NilValue || Rf_xlength(metric) == 0) return;
    if (TYPEOF(metric) != REALSXP || e->rule.sampler->full_data)
        Rf_error("internal error: a metric must be doubles, for a minibatch rule");
    if (Rf_isMatrix(metric)) {
        if (Rf_nrows(metric) != D || Rf_ncols(metric) != D)
            Rf_error("internal error: the metric must be %d x %d", D, D);
        e->metric.dense = 1;
    } else if (Rf_xlength(metric) != D) {
        Rf_error("internal error: a diagonal metric must have %d scales", D);
    }
    e->metric.U = REAL(metric);
    setup_metric_lowrank(e, prot, spec);
    SEXP limit = sgfs_list_opt(spec, "drift_limit");
    e->metric.drift_limit = limit != R_NilValue ? Rf_asReal(limit) : 0.0;
    SEXP z = sgfs_list_opt(state, "z");
    if (z != R_NilValue && Rf_xlength(z) == D && TYPEOF(z) == REALSXP) {
        e->theta = copy_real(prot, SLOT_Z, z);
    } else {
        e->theta = fresh_real(prot, SLOT_Z, D);
        sgfs_metric_to_z(&e->metric, e->xi, e->theta);
    }
}

/* spec$hyper_*: learned prior scales (prior_hyper.c); state$hyper the
   precisions tau to continue from (absent: 1, the base prior) */
static void setup_hyper(sgfs_engine *e, SEXP prot, SEXP spec, SEXP state)
{
    SEXP group_s = sgfs_list_opt(spec, "hyper_group");
    if (group_s == R_NilValue) return;
    const int D = e->D;
    if (e->hs) Rf_error("internal error: learned prior scales are not for a horseshoe");
    const int *group = INTEGER(sgfs_list_typed(spec, "hyper_group", INTSXP, D));
    int K = 0;
    for (int j = 0; j < D; j++) {
        if (group[j] == NA_INTEGER || group[j] < 0)
            Rf_error("internal error: 'hyper_group' must be whole numbers >= 0");
        if (group[j] > K) K = group[j];
        if (group[j] > 0 && (e->prior.type[j] != SGFS_PRIOR_NORMAL || e->prior.loc[j] != 0.0))
            Rf_error("internal error: a learned scale needs a normal prior centred at 0");
    }
    if (K == 0) Rf_error("internal error: 'hyper_group' names no group");
    const double *base = REAL(sgfs_list_typed(spec, "hyper_base", REALSXP, D));
    const double *shape = REAL(sgfs_list_typed(spec, "hyper_shape", REALSXP, K));
    const double *rate = REAL(sgfs_list_typed(spec, "hyper_rate", REALSXP, K));
    for (int j = 0; j < D; j++)
        if (group[j] > 0 && !(base[j] > 0.0 && R_FINITE(base[j])))
            Rf_error("internal error: 'hyper_base' must be positive");
    for (int k = 0; k < K; k++)
        if (!(shape[k] > 0.0 && R_FINITE(shape[k]) && rate[k] > 0.0 && R_FINITE(rate[k])))
            Rf_error("internal error: 'hyper_shape' and 'hyper_rate' must be positive");
    sgfs_hyper *h = fresh_struct(prot, SLOT_HYPER, sizeof(sgfs_hyper));
    double *work = fresh_real(prot, SLOT_HYPER_WORK, 2 * (R_xlen_t) K);
    *h = (sgfs_hyper) {.K = K, .group = group, .base = base, .shape = shape, .rate = rate,
                       .shape_post = work, .ss = work + K};
    for (int k = 0; k < K; k++) h->shape_post[k] = shape[k];
    for (int j = 0; j < D; j++)
        if (group[j] > 0) h->shape_post[group[j] - 1] += 0.5;
    SEXP tau = sgfs_list_opt(state, "hyper");
    if (tau != R_NilValue) {
        if (TYPEOF(tau) != REALSXP || Rf_xlength(tau) != K)
            Rf_error("internal error: the state's 'hyper' must be %d doubles", K);
        h->tau = copy_real(prot, SLOT_HYPER_TAU, tau);
    } else {
        h->tau = fresh_real(prot, SLOT_HYPER_TAU, K);
        for (int k = 0; k < K; k++) h->tau[k] = 1.0;
    }
    for (int k = 0; k < K; k++)
        if (!(h->tau[k] > 0.0 && R_FINITE(h->tau[k])))
            Rf_error("internal error: the state's 'hyper' must be positive");
    e->prior.scale = copy_real(prot, SLOT_PRIOR_SCALE, sgfs_list_elt(spec, "prior_scale"));
    e->prior.prec = copy_real(prot, SLOT_PRIOR_PREC, sgfs_list_elt(spec, "prior_prec"));
    e->hyper = h;
    sgfs_hyper_apply(e);
}

/* spec$separated_*: the levels updated exactly (separated.c) */
static void setup_separated(sgfs_engine *e, SEXP prot, SEXP spec)
{
    SEXP rows = sgfs_list_opt(spec, "separated_rows");
    if (rows == R_NilValue) return;
    const int n_lp = sgfs_separated_predictors(e);
    if (n_lp < 1 || e->rule.sampler->full_data || e->metric.U == NULL)
        Rf_error("internal error: separated levels need a GLM with a linear predictor, "
                 "no horseshoe, a stochastic-gradient rule and a metric");
    const int m = Rf_length(rows);
    const int *r = INTEGER(sgfs_list_typed(spec, "separated_rows", INTSXP, -1));
    SEXP ptr_s = sgfs_list_elt(spec, "separated_ptr");
    const int K = Rf_length(ptr_s) - 1;
    if (K < 1) Rf_error("internal error: 'separated_ptr' needs at least two entries");
    const int *ptr = INTEGER(sgfs_list_typed(spec, "separated_ptr", INTSXP, K + 1));
    if (ptr[0] != 0 || ptr[K] != m)
        Rf_error("internal error: 'separated_ptr' must run from 0 to the number of rows");
    int largest = 0;
    for (int k = 0; k < K; k++) {
        if (ptr[k + 1] <= ptr[k])
            Rf_error("internal error: 'separated_ptr' must be strictly increasing");
        if (ptr[k + 1] - ptr[k] > largest) largest = ptr[k + 1] - ptr[k];
    }
    for (int i = 0; i < m; i++)
        if (r[i] == NA_INTEGER || r[i] < 0 || r[i] >= e->data.N)
            Rf_error("internal error: 'separated_rows' out of range");
    const double *dir = REAL(sgfs_list_typed(spec, "separated_dir", REALSXP, (R_xlen_t) e->D * K));
    const double *width = REAL(sgfs_list_typed(spec, "separated_width", REALSXP, K));
    for (R_xlen_t j = 0; j < (R_xlen_t) e->D * K; j++)
        if (!R_FINITE(dir[j])) Rf_error("internal error: 'separated_dir' is not finite");
    for (int k = 0; k < K; k++)
        if (!R_FINITE(width[k]) || !(width[k] > 0))
            Rf_error("internal error: 'separated_width' must be positive and finite");
    const int *cls = NULL;
    if (n_lp > 1) {             /* the predictor each level's line moves */
        cls = INTEGER(sgfs_list_typed(spec, "separated_class", INTSXP, K));
        for (int k = 0; k < K; k++)
            if (cls[k] == NA_INTEGER || cls[k] < 0 || cls[k] > n_lp)
                Rf_error("internal error: 'separated_class' must be in 0..%d", n_lp);
    }
    const int every = sgfs_list_int(spec, "separated_every");
    if (every == NA_INTEGER || every < 1)
        Rf_error("internal error: 'separated_every' must be a positive integer");
    sgfs_separated *sep = fresh_struct(prot, SLOT_SEP, sizeof(sgfs_separated));
    sep->D = e->D;
    sep->K = K;
    sep->every = every;
    sep->n_lp = n_lp;
    sep->cls = cls;
    sep->rows = r;
    sep->ptr = ptr;
    sep->dir = dir;
    sep->width = width;
    sep->eta = fresh_real(prot, SLOT_SEP_ETA, (R_xlen_t) largest * n_lp);
    sep->point = fresh_real(prot, SLOT_SEP_POINT, e->D);
    sep->z_old = fresh_real(prot, SLOT_SEP_Z_OLD, e->D);
    sep->basis = fresh_real(prot, SLOT_SEP_BASIS, (R_xlen_t) e->D * K);
    e->sep = sep;
    sgfs_separated_basis(e);
}

/* spec$ranef: a mixed model's random effects (ranef_engine.c), their
   state state$ranef; the draws kept gain their sds and correlations */
static void setup_ranef(sgfs_engine *e, SEXP prot, SEXP spec, SEXP state)
{
    SEXP rs = sgfs_list_opt(spec, "ranef");
    if (rs == R_NilValue) return;
    if (e->hs || e->sep || e->held.rows || e->rule.sampler->full_data ||
        e->lik.model->row_loglik == NULL || e->lik.model->row_derivs == NULL ||
        (e->cv.centre && sgfs_list_opt(spec, "centre_hessian") != R_NilValue))
        Rf_error("internal error: random effects need a GLM with one linear predictor, a "
                 "stochastic-gradient rule (with first-order control variates at most), and no "
                 "horseshoe, separated levels or rows held in every minibatch");
    SEXP keep = Rf_allocVector(VECSXP, sgfs_ranef_slots(rs));
    SET_VECTOR_ELT(prot, SLOT_RANEF, keep);
    SEXP st = sgfs_list_opt(state, "ranef");
    e->ranef = sgfs_ranef_setup(keep, rs, st, &e->data, e->D);
    if (e->cv.centre) {          /* the centre's score follows the offsets (ranef_engine.c) */
        e->cv.centre = sgfs_ranef_centre(e->ranef, &e->lik, e->cv.centre, st, e->n);
        e->cv.score = e->ranef->centre_score;
    }
    e->n_ranef = sgfs_ranef_outputs(e->ranef);
    e->report = fresh_real(prot, SLOT_REPORT, (R_xlen_t) e->Ds + e->n_ranef);
    memcpy(e->report, e->xi, (size_t) e->Ds * sizeof(double));
    sgfs_ranef_report(e->ranef, e->report + e->Ds);
}

/* spec$fixed: the rows in every minibatch and the pool of the others */
static void setup_fixed_rows(sgfs_engine *e, SEXP prot, SEXP spec)
{
    SEXP fixed = sgfs_list_opt(spec, "fixed");
    if (fixed == R_NilValue || Rf_xlength(fixed) == 0) return;
    const int *f = INTEGER(sgfs_list_typed(spec, "fixed", INTSXP, -1));
    const int m = Rf_length(fixed);
    if (m > e->data.N - e->n || e->rule.sampler->full_data ||
        (e->rule.sampler->needs_scores && !e->rule.sampler->fixed_after_burnin))
        Rf_error("internal error: fixed rows need N - n others and a minibatch rule whose "
                 "per-example scores are those of the random rows");
    for (int k = 0; k < m; k++)
        if (f[k] < 0 || f[k] >= e->data.N || (k > 0 && f[k] <= f[k - 1]))
            Rf_error("internal error: 'fixed' must be increasing row indices");
    SEXP pool = Rf_allocVector(INTSXP, (R_xlen_t) e->data.N - m);
    SET_VECTOR_ELT(prot, SLOT_POOL, pool);
    int *p = INTEGER(pool);
    for (int i = 0, k = 0, o = 0; i < e->data.N; i++) {
        if (k < m && f[k] == i) k++;
        else p[o++] = i;
    }
    e->held.rows = f;
    e->held.pool = p;
    e->held.n = m;
    e->held.grad = fresh_real(prot, SLOT_GRAD_FIXED, e->D);
}

/* spec$centre_hessian (second-order control variates, with a model's
   score_change): minus the Hessian of the full-data likelihood at the
   centre, less the fixed rows' part (which the engine computes exactly) */
static void setup_centre_hessian(sgfs_engine *e, SEXP prot, SEXP spec)
{
    SEXP ch = sgfs_list_opt(spec, "centre_hessian");
    if (ch == R_NilValue || Rf_xlength(ch) == 0) return;
    const int D = e->D;
    if (e->lik.model->score_change == NULL)
        Rf_error("internal error: second-order control variates need a model's score_change");
    double *H = fresh_real(prot, SLOT_CENTRE_HESSIAN, (R_xlen_t) D * D);
    memcpy(H, REAL(sgfs_list_typed(spec, "centre_hessian", REALSXP, (R_xlen_t) D * D)),
           (size_t) D * D * sizeof(double));
    e->cv.delta = fresh_real(prot, SLOT_CENTRE_DELTA, D);
    if (e->held.rows) {                 /* scratch for the model: freed with the .Call */
        double *Hf = (double *) R_alloc((size_t) D * D, sizeof(double));
        double *G = e->lik.G;
        if (G == NULL) e->lik.G = (double *) R_alloc((size_t) D * e->n, sizeof(double));
        memset(Hf, 0, (size_t) D * D * sizeof(double));
        for (int start = 0; start < e->held.n; start += e->n) {
            const int m = e->held.n - start < e->n ? e->held.n - start : e->n;
            sgfs_neg_hessian(&e->lik, e->cv.centre, e->held.rows + start, m, Hf);
        }
        e->lik.G = G;
        for (int j = 0; j < D; j++)           /* Hf's upper triangle, both halves */
            for (int i = 0; i <= j; i++) {
                const double h = Hf[i + (size_t) j * D];
                H[i + (size_t) j * D] -= h;
                if (i != j) H[j + (size_t) i * D] -= h;
            }
    }
    e->cv.hessian = H;
}

/* The columns of the gathered-minibatch scratch xb (P x cols): n, except
   on compressed rows of a wide design (P n doubles above 64 MB: 400 MB at
   P = 10^5, n = 500) whose run never gathers -- a GLM with one-pass scores
   and full-data passes (row_residual), a rule without per-example scores
   and without second-order control variates (whose set-up uses the
   model's Hessian): then 1 (sgfs_batch_columns() checks). */
static int xb_columns(const sgfs_engine *e, SEXP spec, int need_G)
{
    const int wide = (double) e->data.P * e->n * sizeof(double) > 64.0 * 1024 * 1024;
    SEXP second = sgfs_list_opt(spec, "centre_hessian");
    const int gathers = e->data.rows_ptr == NULL || e->lik.model->row_residual == NULL || need_G ||
                        (second != R_NilValue);
    return wide && !gathers ? 1 : e->n;
}

/* the layout version of the specs this build reads (R puts it in each) */
SEXP sgfs_spec_version(void)
{
    return Rf_ScalarInteger(SGFS_SPEC_VERSION);
}

SEXP sgfs_engine_alloc(void)
{
    return Rf_allocVector(VECSXP, N_SLOTS);
}

/* the rows of one chunk of an evaluation's full-data pass: at most 512,
   and few enough that the chunk's P x n gathered columns (with the
   per-example scores, their D x n too) stay near 2^20 doubles whatever P
   and D; spec$pass_rows, if given, instead (tests use it to cross chunk
   boundaries on small data) */
static int pass_rows(SEXP spec, int N, int P, int D_scores)
{
    SEXP given = sgfs_list_opt(spec, "pass_rows");
    double n = given != R_NilValue ? (double) sgfs_list_int(spec, "pass_rows")
                                   : floor(1048576.0 / ((double) P + D_scores));
    if (n > 512) n = 512;
    if (n > N) n = N;
    return n < 1 ? 1 : (int) n;
}

/* The parts a chain and an evaluation share: the spec's version, the
   data, the model and its D parameters, the batch's `rows` rows (-1: the
   spec's batch_size, a chain's minibatch; 0: one chunk of a full-data
   pass, pass_rows()) and the prior.  e->Ds = D (a horseshoe adds its own). */
static void setup_model(sgfs_engine *e, SEXP prot, SEXP spec, int rows, int scores)
{
    SET_VECTOR_ELT(prot, SLOT_SPEC, spec);
    e->rule.temperature = 1.0;
    if (TYPEOF(spec) != VECSXP) Rf_error("internal error: 'spec' must be a list");
    SEXP version = sgfs_list_opt(spec, "version");
    if (version == R_NilValue || TYPEOF(version) != INTSXP || Rf_xlength(version) != 1 ||
        INTEGER(version)[0] != SGFS_SPEC_VERSION)
        Rf_error("this fit's engine settings were made by another version of sgfs "
                 "(settings version %d; this version reads %d): fit the model again",
                 version != R_NilValue && TYPEOF(version) == INTSXP && Rf_xlength(version) == 1
                     ? INTEGER(version)[0] : 0, SGFS_SPEC_VERSION);

    sgfs_data_setup(&e->data, spec);
    if (e->data.y == NULL) Rf_error("internal error: element 'y' missing");
    e->lik.data = &e->data;
    e->lik.model = sgfs_find_model(CHAR(STRING_ELT(
        sgfs_list_typed(spec, "model", STRSXP, 1), 0)));
    if (e->data.weights && !e->lik.model->weighted)
        Rf_error("internal error: the %s model takes no weights", e->lik.model->name);
    SEXP mpar = sgfs_list_typed(spec, "mpar", REALSXP, -1);
    e->lik.mpar = REAL(mpar);
    e->lik.callback = sgfs_list_opt(spec, "callback");
    e->D = e->lik.model->n_par(e->data.P, e->lik.mpar, Rf_length(mpar));
    if (e->D < 1)
        Rf_error("internal error: the %s model's settings 'mpar' are malformed", e->lik.model->name);
    e->lik.D = e->D;
    e->n = rows < 0 ? sgfs_list_int(spec, "batch_size")
         : rows > 0 ? rows : pass_rows(spec, e->data.N, e->data.P, scores ? e->D : 0);
    if (e->n < 1 || e->n > e->data.N)
        Rf_error("internal error: batch size out of range");
    sgfs_prior_setup(&e->prior, spec, e->D);
    e->Ds = e->D;
}

/* the batch's index scratch and the model's, and the gradient and noise
   buffers (Ds long) */
static void setup_scratch(sgfs_engine *e, SEXP prot)
{
    const int D = e->D, Ds = e->Ds;
    const R_xlen_t m = sgfs_minibatch_table_size(e->n);
    SEXP batch = Rf_allocVector(INTSXP, (R_xlen_t) e->n + m);
    SET_VECTOR_ELT(prot, SLOT_BATCH, batch);
    memset(INTEGER(batch), 0, (size_t) Rf_xlength(batch) * sizeof(int));
    e->batch.idx = INTEGER(batch);
    e->batch.table = e->batch.idx + e->n;
    e->batch.table_size = m;
    SEXP slots = Rf_allocVector(RAWSXP, (R_xlen_t) e->n * (R_xlen_t) sizeof(R_xlen_t));
    SET_VECTOR_ELT(prot, SLOT_SLOTS, slots);
    e->batch.slot = (R_xlen_t *) RAW(slots);
    const R_xlen_t eta_len = e->lik.model->scratch ? e->lik.model->scratch(e->data.P, e->n, e->lik.mpar)
                                               : (R_xlen_t) e->n * ((D + e->data.P - 1) / e->data.P);
    e->lik.eta = fresh_real(prot, SLOT_ETA, eta_len);
    if (e->lik.model->score_change) e->lik.eta_centre = fresh_real(prot, SLOT_ETA_CENTRE, 2 * eta_len);
    /* (grad_lik right after grad: a metric whitens the two as one D x 2 block) */
    e->grad = fresh_real(prot, SLOT_GRAD, 2 * (R_xlen_t) Ds);
    e->grad_lik = e->grad + Ds;
    e->noise = fresh_real(prot, SLOT_NOISE, Ds);
}

/* An engine for evaluations at theta (D doubles, the model's parameters),
   stored in prot: the shared parts, the batch `rows` rows (0: a full
   pass's chunk), the gathered columns' scratch, and the D x n per-example
   scores e->lik.G (also sgfs_neg_hessian's scratch) when `scores` (a network's
   D can be 10^6: its gradient needs O(D)).  No rule, state or draws. */
sgfs_engine *sgfs_eval_engine(SEXP prot, SEXP spec, SEXP theta, int rows, int scores)
{
    sgfs_engine *e = fresh_struct(prot, SLOT_ENGINE, sizeof(sgfs_engine));
    setup_model(e, prot, spec, rows, scores);
    if (TYPEOF(theta) != REALSXP || Rf_xlength(theta) != e->D)
        Rf_error("internal error: 'theta' must be %d doubles", e->D);
    e->xi = e->theta = e->par = e->report = copy_real(prot, SLOT_THETA, theta);
    e->iter = fresh_real(prot, SLOT_ITER, 1);
    setup_scratch(e, prot);
    e->lik.xb_cols = e->n;
    e->lik.xb = fresh_real(prot, SLOT_XB, (R_xlen_t) e->data.P * e->n);
    e->lik.G = scores ? fresh_real(prot, SLOT_G, (R_xlen_t) e->D * e->n) : NULL;
    return e;
}

/* the update rule, its settings (checked) and the temperature */
static void setup_rule(sgfs_engine *e, SEXP spec)
{
    const int Ds = e->Ds;
    sgfs_rule *rule = &e->rule;
    const sgfs_sampler *r = rule->sampler = sgfs_find_sampler(CHAR(STRING_ELT(
        sgfs_list_typed(spec, "sampler", STRSXP, 1), 0)));
    if (e->hs && !r->horseshoe)
        Rf_error("internal error: the '%s' rule does not sample a horseshoe", r->name);
    SEXP spar = sgfs_list_typed(spec, "spar", REALSXP, -1);
    rule->spar = REAL(spar);
    rule->spar_len = Rf_xlength(spar);
    const double need = r->n_spar + (double) r->spar_per_dd * Ds * Ds;
    if ((double) rule->spar_len < need)
        Rf_error("internal error: the '%s' rule needs %.0f settings, 'spar' has %.0f",
                 r->name, need, (double) rule->spar_len);
    for (R_xlen_t k = 0; k < rule->spar_len; k++)
        if (!R_FINITE(rule->spar[k]))
            Rf_error("internal error: the '%s' rule's settings 'spar' are not all finite",
                     r->name);
    check_spar_names(r, spar);
    const char *bad = r->check ? r->check(rule->spar, rule->spar_len, Ds) : NULL;
    if (bad) Rf_error("internal error: the '%s' rule's settings 'spar': %s", r->name, bad);
    SEXP temperature = sgfs_list_opt(spec, "temperature");
    rule->temperature = temperature == R_NilValue ? 1.0
        : REAL(sgfs_list_typed(spec, "temperature", REALSXP, 1))[0];
    if (!(rule->temperature > 0.0 && R_FINITE(rule->temperature)))
        Rf_error("internal error: 'temperature' must be a positive number");
    if (rule->temperature != 1.0 && !r->tempered)
        Rf_error("internal error: the '%s' rule has no temperature", r->name);
}

/* the rule's state (continued from `state`, or fresh from its init) and
   scratch, and the SGFS rules' options (robust rule, Fisher rows, the
   curvature at the mode) */
static void setup_rule_state(sgfs_engine *e, SEXP prot, SEXP spec, SEXP state)
{
    const int D = e->D, Ds = e->Ds;
    SEXP spar = sgfs_list_typed(spec, "spar", REALSXP, -1);
    const sgfs_sampler *smp = e->rule.sampler;
    const R_xlen_t len = sampler_array_len(smp->state_len, smp->state, spar, Ds);
    e->rule.state_len = len;
    SEXP ss = sgfs_list_typed(state, "sstate", REALSXP, -1);
    if (Rf_xlength(ss) == 0) {
        e->rule.state = fresh_real(prot, SLOT_SSTATE, len);
        if (e->rule.sampler->init) e->rule.sampler->init(e);
    } else if (Rf_xlength(ss) == len) {
        e->rule.state = copy_real(prot, SLOT_SSTATE, ss);
    } else {
        Rf_error("internal error: sampler state has the wrong length");
    }
    SEXP robust = sgfs_list_opt(spec, "sgfs_robust");
    e->rule.robust = robust != R_NilValue && Rf_asLogical(robust) == TRUE;
    if (e->metric.U && e->rule.sampler->fixed_after_burnin &&
        (!e->rule.robust || !e->metric.dense || e->hs))
        Rf_error("internal error: SGFS in a metric needs the robust rule and the dense "
                 "metric of the mode");
    SEXP fisher_rows = sgfs_list_opt(spec, "fisher_rows");
    e->rule.fisher_rows = e->n;
    if (fisher_rows != R_NilValue) {
        e->rule.fisher_rows = sgfs_list_int(spec, "fisher_rows");
        if (e->rule.fisher_rows < 2 || e->rule.fisher_rows > e->n)
            Rf_error("internal error: 'fisher_rows' must be in 2..%d", e->n);
        if (e->rule.sampler->fisher == SGFS_FISHER_NONE)
            Rf_error("internal error: 'fisher_rows' is for the SGFS rules only");
    }
    SEXP curvature = sgfs_list_opt(spec, "sgfs_curvature");
    e->rule.curvature = NULL;
    if (curvature != R_NilValue) {
        if (e->rule.sampler->fisher == SGFS_FISHER_NONE)
            Rf_error("internal error: 'sgfs_curvature' is for the SGFS rules only");
        const int diag = e->rule.sampler->fisher == SGFS_FISHER_DIAG;
        e->rule.curvature = REAL(sgfs_list_typed(spec, "sgfs_curvature", REALSXP,
                                           diag ? D : (R_xlen_t) D * D));
    }
    e->rule.work = fresh_real(prot, SLOT_WORK,
                         sampler_array_len(smp->work_len, smp->work, spar, Ds));
}

/* control variates: the centre and the full-data score there */
static void setup_centre(sgfs_engine *e, SEXP prot, SEXP spec)
{
    const int D = e->D;
    SEXP centre = sgfs_list_opt(spec, "centre");
    if (centre != R_NilValue && Rf_xlength(centre) > 0) {
        e->cv.centre = REAL(sgfs_list_typed(spec, "centre", REALSXP, D));
        e->cv.score = REAL(sgfs_list_typed(spec, "centre_score", REALSXP, D));
        e->cv.grad = fresh_real(prot, SLOT_GRAD_CENTRE, D);
        /* (a rule's per-example scores with control variates are the
           remainders score_change gives: driver.c) */
        if (e->rule.sampler->needs_scores && e->lik.model->score_change == NULL)
            Rf_error("internal error: per-example scores with control variates need "
                     "the model's score_change");
    }
}

/* the run: its step schedule and what it keeps, the monitored parameters'
   draws (n_keep of them) and the predictive of spec$pred_x */
static void setup_run(sgfs_engine *e, SEXP prot, SEXP spec, int n_keep)
{
    const int Ds = e->Ds;
    const double *sch = REAL(sgfs_list_typed(spec, "schedule", REALSXP, 4));
    e->run.sched.type = (int) sch[0];
    e->run.sched.a = sch[1];
    e->run.sched.b = sch[2];
    e->run.sched.delta = sch[3];
    e->run.n_monitor = Ds + e->n_ranef;
    SEXP monitor = sgfs_list_opt(spec, "monitor");
    if (monitor != R_NilValue) {
        e->run.n_monitor = Rf_length(monitor);
        e->run.monitor = INTEGER(sgfs_list_typed(spec, "monitor", INTSXP, -1));
        for (int j = 0; j < e->run.n_monitor; j++)
            if (e->run.monitor[j] < 0 || e->run.monitor[j] >= Ds + e->n_ranef)
                Rf_error("internal error: 'monitor' out of range");
    }
    SEXP pred_x = sgfs_list_opt(spec, "pred_x");
    if (pred_x != R_NilValue) {
        if (TYPEOF(pred_x) != REALSXP || !Rf_isMatrix(pred_x) || Rf_nrows(pred_x) != e->data.P)
            Rf_error("internal error: 'pred_x' must be a double matrix with P rows");
        if (e->lik.model->predict == NULL)
            Rf_error("the model '%s' has no predictive to keep", e->lik.model->name);
        e->run.pred_x = REAL(pred_x);
        e->run.pred_cols = Rf_ncols(pred_x);
        e->run.n_pred = e->lik.model->n_pred(e->lik.mpar);
        e->run.pred = fresh_real(prot, SLOT_PRED, (R_xlen_t) e->run.n_pred * e->run.pred_cols);
    }
    /* (each kept draw contiguous: a draw of many monitored values is one
       sequential write) */
    SEXP draws = Rf_allocMatrix(REALSXP, e->run.n_monitor, n_keep);
    SET_VECTOR_ELT(prot, SLOT_DRAWS, draws);
    e->run.draws = REAL(draws);
    e->run.n_keep = n_keep;
    e->run.n_kept = 0;
    e->run.eps_last = NA_REAL;
}

/* Sets up a chain's engine stored in prot (a protected VECSXP from
   sgfs_engine_alloc): the shared parts, the state it continues (theta,
   iter, the rule's state), the rule and its settings, and what the spec
   adds (metric, held rows, windows, separated levels, learned scales,
   control variates), and the run (schedule, monitored parameters, the
   kept predictive). */
sgfs_engine *sgfs_engine_setup(SEXP prot, SEXP spec, SEXP state, int n_keep)
{
    sgfs_engine *e = fresh_struct(prot, SLOT_ENGINE, sizeof(sgfs_engine));
    setup_model(e, prot, spec, -1, 0);
    const int D = e->D;
    e->run.burnin = sgfs_list_int(spec, "burnin");
    e->run.thin = sgfs_list_int(spec, "thin");

    /* a horseshoe adds K + 2 sampler coordinates */
    SEXP hs = sgfs_list_opt(spec, "hs");
    if (hs != R_NilValue) {
        SEXP raw = Rf_allocVector(RAWSXP, sizeof(sgfs_hs));
        SET_VECTOR_ELT(prot, SLOT_HS, raw);
        sgfs_hs_setup(e, hs, raw, fresh_real(prot, SLOT_HS_SCRATCH, 3 * (R_xlen_t) D));
    }
    const int Ds = e->Ds;
    e->xi = e->theta = copy_real(prot, SLOT_THETA, sgfs_list_typed(state, "theta", REALSXP, Ds));
    e->par = e->report = e->xi;
    if (e->hs) {
        e->par = fresh_real(prot, SLOT_PAR, D);
        e->report = fresh_real(prot, SLOT_REPORT, Ds);
        sgfs_hs_beta(e->hs, e->xi, e->par);
        sgfs_hs_report(e->hs, e->xi, e->par, e->report);
    }
    e->iter = copy_real(prot, SLOT_ITER, sgfs_list_typed(state, "iter", REALSXP, 1));
    setup_scratch(e, prot);

    setup_rule(e, spec);
    const int need_G = e->rule.sampler->needs_scores;
    e->lik.xb_cols = xb_columns(e, spec, need_G);
    e->lik.xb = fresh_real(prot, SLOT_XB, (R_xlen_t) e->data.P * e->lik.xb_cols);
    e->lik.G = need_G ? fresh_real(prot, SLOT_G, (R_xlen_t) D * e->n) : NULL;
    setup_metric(e, prot, spec, state);
    SEXP record = sgfs_list_opt(spec, "record_grad_sq");
    if (e->metric.U || (record != R_NilValue && Rf_asLogical(record) == TRUE))
        e->grad_sq = fresh_real(prot, SLOT_GRAD_SQ, Ds);
    setup_fixed_rows(e, prot, spec);
    setup_windows(e, prot, spec, state);
    setup_separated(e, prot, spec);
    setup_hyper(e, prot, spec, state);
    setup_rule_state(e, prot, spec, state);
    setup_centre(e, prot, spec);
    setup_ranef(e, prot, spec, state);
    setup_run(e, prot, spec, n_keep);
    /* poll for Ctrl-C about every 2e7 flops of gradient and algebra */
    const double work = e->rule.sampler->full_data ? 10.0 * e->data.N * D
                                              : (double) e->n * D * (D + 1.0);
    e->run.check_every = work > 2e7 / 64 ? (int) fmax(1.0, 2e7 / work) : 64;
    if (e->cv.centre && e->held.rows) {
        e->cv.fixed = fresh_real(prot, SLOT_CENTRE_FIXED, D);
        sgfs_fixed_rows_score(e, e->cv.centre, e->cv.fixed);
    }
    if (e->cv.centre) setup_centre_hessian(e, prot, spec);
    return e;
}
