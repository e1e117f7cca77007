/*
 * sgfs.h - types and prototypes shared by the sgfs engine.
 *
 * The engine is one driver loop (driver.c) with two kinds of plug-ins:
 *   models   (model_*.c):   pure likelihoods; minibatch score sums, per-example
 *                            scores and log-likelihoods;
 *   samplers (sampler_*.c): pure update rules theta <- step(theta, gradient).
 * The driver owns the data copy, the minibatch, the prior, the N/n scaling,
 * the step-size schedule, thinning, storage and divergence checks.
 *
 * Storage conventions (column-major, as R):
 *   xt    : P x N, one example per column (the transposed design matrix)
 *   theta : D parameters; for the GLMs theta = (beta[P], [log_sigma])
 *   G     : D x n per-example scores, one example per column
 */
#ifndef SGFS_SGFS_H
#define SGFS_SGFS_H

#include <math.h>
#include <string.h>
#include <stddef.h>

#ifndef USE_FC_LEN_T
# define USE_FC_LEN_T
#endif
#include <Rconfig.h>
#include <R.h>
#include <Rinternals.h>
#include <R_ext/BLAS.h>
#include <R_ext/Lapack.h>
#include <limits.h>
#include <stdint.h>
#ifndef FCONE
# define FCONE
#endif

/* The minibatch kernels are compiled twice where GCC (12 or later) can
   dispatch at load time on the instruction set (x86-64 Linux): for the
   baseline (SSE2) and for x86-64-v3 (AVX2 with FMA), chosen on CPUs that
   have it (R's -O2 flags target the baseline).  ("arch=haswell" would
   dispatch on the CPU model, not on its instructions.)  Elsewhere, once
   for the baseline. */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12 && \
    defined(__x86_64__) && defined(__linux__)
# define SGFS_VECTOR_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
# define SGFS_VECTOR_CLONES
#endif
/* the kernels' helpers, inlined into each clone to be compiled for it */
#if defined(__GNUC__)
# define SGFS_ALWAYS_INLINE __attribute__((always_inline))
#else
# define SGFS_ALWAYS_INLINE
#endif

typedef struct sgfs_engine sgfs_engine;
typedef struct sgfs_lik sgfs_lik;

/* A standardised value, u = (x - c) / s, as the copies (design_copy.c) and
   the raw rows (data.c) both compute it: (x - c) times the reciprocal of s
   (1.0 / s, rounded once), so that a file, a matrix in place and a copy
   give the same numbers, and a raw row's read is multiplications, not
   divisions (a division costs several multiplications' time and does not
   overlap as well). */
static inline double sgfs_standardise(double x, double c, double inv_s)
{
    return (x - c) * inv_s;
}

/* the layout of the spec lists the engine reads (engine.c): raised when an
   element's meaning or layout changes */
#define SGFS_SPEC_VERSION 2

/* a minibatch: indices idx[0..n-1] and the scratch that draws them */
typedef struct sgfs_batch {
    int *idx;                   /* n                                           */
    int *table;                 /* table_size, all 0 between draws             */
    R_xlen_t *slot;             /* n                                           */
    R_xlen_t table_size;        /* a power of two >= 2n                        */
    int rounding;               /* R's sample.kind is "Rounding" (set by
                                   sgfs_minibatch_begin before each run)       */
    /* windows (spec$windows > 0): each minibatch is k = n / width windows
       of `width` consecutive rows, from random starts, wrapping around, no
       two overlapping (minibatch.c),
       drawn `ahead` iterations before it is used so that a design file's
       reads run ahead of the arithmetic; 0: n rows by Floyd's algorithm */
    int ahead, width, per;      /* per: k, the windows of one minibatch       */
    double *starts;             /* ahead k: the next windows' starts, the
                                   next first; -1 before the first draw
                                   (chain state: a continued run goes on
                                   with them); then k of scratch             */
} sgfs_batch;

/* ---- models --------------------------------------------------------- */
typedef struct sgfs_model {
    const char *name;
    /* 1: the model's log-likelihood takes case weights (the data's weights) */
    int weighted;
    /* number of parameters for P features and the model's n_mpar settings,
       or -1 if the settings are malformed (checked once, at set-up) */
    int (*n_par)(int P, const double *mpar, int n_mpar);
    /* score of the examples idx[0..n-1]: writes their sum into sum[D] and,
       if G != NULL, the per-example scores into the columns of G (D x n);
       if loglik != NULL, also their log-likelihood sum (in the same pass) */
    void (*score)(sgfs_lik *lik, const double *theta, const int *idx,
                  int n, double *sum, double *G, double *loglik);
    /* log-likelihood of the examples idx[0..n-1] */
    double (*loglik)(sgfs_lik *lik, const double *theta, const int *idx,
                     int n);
    /* adds minus the Hessian of the log-likelihood of the examples
       idx[0..n-1] to the upper triangle of H (D x D); uses lik->G as scratch.
       NULL: central differences of the score (sgfs_neg_hessian) */
    void (*neg_hessian)(sgfs_lik *lik, const double *theta, const int *idx,
                        int n, double *H);
    /* doubles of lik->eta the model needs for a batch of n, or NULL for the
       default n ceil(D / P) */
    R_xlen_t (*scratch)(int P, int n, const double *mpar);
    /* the predictive's summaries per example (keep = predictive()): their
       number, and a function adding them at theta for the m <= n examples
       in the columns of x (P x m) to out (n_pred x m): the class
       probabilities, or for gaussian() the mean and mean square of y.
       NULL: not available */
    int (*n_pred)(const double *mpar);
    void (*predict)(sgfs_lik *lik, const double *theta, const double *x,
                    int m, double *out);
    /* control variates: writes the sum over the examples idx[0..n-1] of
       score(theta) - score(centre) into sum[D], from one gather of their
       data (lik->eta_centre is the centre's scratch, twice lik->eta's size);
       with `second`, plus H_i(centre) (theta - centre), H_i minus the
       Hessian of example i's log-likelihood: the remainder of the score's
       first-order Taylor expansion at the centre.  NULL: two calls of
       score (first order only) */
    void (*score_change)(sgfs_lik *lik, const double *theta,
                         const double *centre, int second, const int *idx,
                         int n, double *sum);
    /* a GLM row's log-likelihood w_i l_i at the linear predictor eta
       (offset included) and theta's other coordinates (gaussian's log
       sigma), for the exact updates along separated levels (separated.c)
       and of random effects (ranef.c).  NULL: not a GLM with a linear
       predictor */
    double (*row_loglik)(const sgfs_lik *lik, const double *theta, int row, double eta);
    /* 1: the log-likelihood is quadratic in the linear predictor (the
       random effects' conditional is normal, ranef.c) */
    int quadratic;
    /* a model of several linear predictors a row (categorical: K - 1,
       stride apart in eta): the row's w_i l_i with t added to predictor
       cls - 1 (cls >= 1), or to all of them (cls = 0), for the same
       updates.  NULL: one linear predictor (row_loglik) */
    double (*line_loglik)(const sgfs_lik *lik, int row, const double *eta, size_t stride,
                          int cls, double t);
    /* and its derivatives in t there, d[0] = dl/dt and d[1] = -d^2 l/dt^2
       (weighted), for R's minibatch strata (eval.c's sgfs_row_derivs) */
    void (*line_derivs)(const sgfs_lik *lik, int row, const double *eta, size_t stride,
                        int cls, double t, double *d);
    /* and its derivative w_i dl_i/deta at eta (offset included), for the
       full-data passes over compressed rows (data.c), or NULL */
    double (*row_residual)(const sgfs_lik *lik, int row, double eta);
    /* the row's derivatives at theta and eta (offset included), for R's
       Laplace approximation and minibatch strata (eval.c's
       sgfs_row_derivs): d[0] = w_i dl_i/deta, d[1] = -w_i d^2 l_i/deta^2,
       and for the model's coordinate a after beta (gaussian's log sigma,
       negbin's log phi; 0 without one) d[2] = -w_i d^2 l_i/deta da and
       d[3] = -w_i d^2 l_i/da^2.  NULL: not a GLM with one linear
       predictor */
    void (*row_derivs)(const sgfs_lik *lik, const double *theta, int row, double eta,
                       double *d);
    /* draw-level outputs (draws.c): the number of outputs per example and
       (into *out) the model whose draw_value maps one output to the
       response (the model itself for a GLM, its output layer's GLM for a
       network; NULL for the K - 1 logits of a softmax, which draws.c
       maps); and the outputs on the link scale (a GLM's linear predictor
       or K - 1 non-reference logits, a network's output layer) at the S
       parameter vectors in the columns of theta (D x S), for the m <= n
       examples in the columns of x (P x m): output k of example i at draw
       s into z[s + i ldz + k ldk] (ldz >= S).  NULL: not available */
    int (*n_out)(const double *mpar, const struct sgfs_model **out);
    void (*outputs)(sgfs_lik *lik, const double *theta, int S,
                    const double *x, int m, double *z, size_t ldz, size_t ldk);
    /* a model of one output a row: at the output z (offset included) the
       response's mean (what = SGFS_DRAW_MEAN) or the log density of the
       response y (SGFS_DRAW_LOGLIK, y on the engine's scale), given the
       draw's noise parameter log_aux (gaussian's log sigma, negbin's log
       phi; read only when draw_aux) and the model's settings mpar (a
       GLM's own; NULL for a network's output layer) */
    double (*draw_value)(int what, double y, double z, double log_aux, const double *mpar);
    int draw_aux;
    /* a model whose response is one of K classes, from its n_out outputs a
       row (categorical: the K - 1 logits; cumulative: eta and the K - 1
       values c_k - eta): K, and at the outputs zk (output k at zk[k ldk])
       the link (what = SGFS_DRAW_LINK: K values), the K class
       probabilities, or the log probability of class y (one value), into
       dest (value k at dest[k plane]); mpar the model's settings (NULL for
       a network's output layer) */
    int (*n_class)(int n_out);
    void (*class_value)(int what, const double *zk, size_t ldk, int n_out, int y,
                        const double *mpar, double *dest, size_t plane);
} sgfs_model;

/* what draws.c computes at each draw and example (R passes the number) */
enum { SGFS_DRAW_LINK = 0, SGFS_DRAW_MEAN = 1, SGFS_DRAW_LOGLIK = 2 };

const sgfs_model *sgfs_find_model(const char *name);

/* ---- samplers ------------------------------------------------------- */
/* an array of per_dd D^2 + per_d D + fixed doubles */
typedef struct sgfs_size {
    int per_dd, per_d, fixed;
} sgfs_size;

R_xlen_t sgfs_size_of(sgfs_size s, int D);

/* the most named settings and state parts a rule's table holds */
#define SGFS_MAX_SPAR_NAMES 4
#define SGFS_MAX_STATE_PARTS 9

/* a named part of a rule's state: len = per_dd D^2 + per_d D + fixed doubles */
typedef struct sgfs_part {
    const char *name;
    sgfs_size len;
} sgfs_part;

enum { SGFS_FISHER_NONE = 0, SGFS_FISHER_FULL = 1, SGFS_FISHER_DIAG = 2 };

typedef struct sgfs_sampler {
    const char *name;
    int needs_scores;                      /* per-example G each iteration  */
    sgfs_size state;                       /* doubles kept between runs     */
    sgfs_size work;                        /* scratch doubles               */
    void (*init)(sgfs_engine *e);          /* fills a fresh state           */
    /* one update of e->theta; returns 0, or 1 if the update failed (the
       driver then stops the chain as diverged) */
    int (*step)(sgfs_engine *e, double eps);
    /* 1: a full-data rule; the driver computes no minibatch gradient and
       the rule evaluates the posterior itself (sgfs_log_posterior) */
    int full_data;
    /* 1: the rule samples the tempered posterior p(theta | y)^(1/T) for
       e->temperature = T (else the engine refuses T != 1) */
    int tempered;
    /* 1: in a metric (control variates at the mode, the SGFS rules) the
       rule's preconditioner is fixed after burn-in, and the per-example
       scores are read during burn-in only (sgfs_fisher_frozen) */
    int fixed_after_burnin;
    /* the SGFS Fisher estimate the rule forms from the first fisher_rows
       per-example scores, whose curvature at the mode (sgfs_curvature) it
       may take: SGFS_FISHER_NONE, _FULL (D x D) or _DIAG (D values) */
    int fisher;
    /* 1: the rule samples a horseshoe prior's coordinates (prior_hs.c) */
    int horseshoe;
    /* optional (NULL: use `state` / `work`): the state and scratch lengths
       of a rule whose array sizes depend on its settings spar[0..n_spar-1];
       -1 if the settings do not fit D parameters */
    R_xlen_t (*state_len)(const double *spar, R_xlen_t n_spar, int D);
    R_xlen_t (*work_len)(const double *spar, R_xlen_t n_spar, int D);
    /* the settings the rule reads: at least n_spar + spar_per_dd D^2 of
       them, all finite (checked once, at set-up) */
    int n_spar, spar_per_dd;
    /* optional: NULL if the settings suit the rule for D parameters, else
       what is wrong with them (checked at set-up: a fit's spec may come from
       a saved fit of another version) */
    const char *(*check)(const double *spar, R_xlen_t n_spar, int D);
    /* the names R gives the leading settings in spar (checked at set-up, so
       that a setting read by position is the one R meant); NULL-ended */
    const char *spar_names[SGFS_MAX_SPAR_NAMES + 1];
    /* the state's parts in order, by name, for R (sgfs_state_parts): its
       diagnostics are read by name, not by position; NULL-ended (none for
       a rule whose state length depends on its settings) */
    sgfs_part state_parts[SGFS_MAX_STATE_PARTS + 1];
} sgfs_sampler;

const sgfs_sampler *sgfs_find_sampler(const char *name);

/* ---- schedules: eps_t for t = 1, 2, ... ------------------------------ */
typedef struct sgfs_schedule {
    int type;                 /* 0 constant eps = a; 1 polynomial a (b + t)^-delta;
                                 2 cyclical, cycles of b iterations (schedule.c) */
    double a, b, delta;
} sgfs_schedule;

double sgfs_stepsize(const sgfs_schedule *s, double t);

/* ---- priors (per coordinate; on the internal, standardised scale) ---- */
enum { SGFS_PRIOR_NORMAL = 0, SGFS_PRIOR_LAPLACE = 1, SGFS_PRIOR_STUDENT = 2,
       SGFS_PRIOR_HS = 3, SGFS_PRIOR_SCALE_T = 4, SGFS_PRIOR_SCALE_EXP = 5,
       SGFS_PRIOR_LOGIT_BETA = 6 };

/* The prior of each of the D model parameters, on the internal scale */
typedef struct sgfs_prior {
    int D;
    const int *type;            /* SGFS_PRIOR_*                                */
    const double *loc;
    double *scale, *prec;       /* (the engine's own copies with a learned
                                   scale, prior_hyper.c)                      */
    const double *df;           /* student_t degrees of freedom, or NULL       */
} sgfs_prior;

void sgfs_prior_setup(sgfs_prior *p, SEXP spec, int D);
void sgfs_prior_check(const sgfs_prior *p);
double sgfs_prior_logdens(const sgfs_prior *p, const double *theta);
/* 1 if a coordinate is not finite or more than SGFS_FAR prior scales from
   the prior's location (a diverging chain) */
#define SGFS_FAR 1e12
int sgfs_prior_far(const sgfs_prior *p, const double *theta);
void sgfs_prior_grad_add(const sgfs_prior *p, const double *theta,
                         double *grad);
/* the prior's part of minus the Hessian, positive (prior.c) */
void sgfs_prior_curvature(const sgfs_prior *p, const double *theta, double *h);

/* ---- the regularised horseshoe (prior_hs.c): a prior with sampled
   parameters; the sampler's coordinates xi (Ds = D + K + 2) map to the
   model's parameters ---------------------------------------------------- */
typedef struct sgfs_hs {
    int D;                      /* the model's parameters                      */
    int K;                      /* coefficients under the horseshoe            */
    const int *idx;             /* their indices among the model's (0-based)   */
    const double *w;            /* their scale factors                         */
    const int *centred;         /* K flags: 1 for beta_j itself in xi, 0 for z_j */
    double df, global_df, global_scale, slab_df, slab_scale;
    double *s, *r;              /* K: scale and r at the last sgfs_hs_beta     */
    double *beta;               /* D: scratch for evaluations                  */
} sgfs_hs;

void sgfs_hs_setup(sgfs_engine *e, SEXP hs, SEXP raw, double *scratch);
void sgfs_hs_beta(const sgfs_hs *h, const double *xi, double *beta);
void sgfs_hs_report(const sgfs_hs *h, const double *xi, const double *beta, double *out);
void sgfs_hs_pullback(const sgfs_hs *h, const double *beta, double *g);
double sgfs_hs_prior(const sgfs_hs *h, const double *xi, double *g);
int sgfs_hs_far(const sgfs_hs *h, const double *xi);

/* ---- a constant metric (metric.c): the sampler's coordinates z = U xi */
typedef struct sgfs_metric {
    int D;                      /* its coordinates (the sampler's, Ds)         */
    /* NULL (no metric), D scales (diagonal) or the D x D upper triangular
       U with U'U the curvature at the mode (dense = 1) */
    const double *U;
    int dense;
    /* a diagonal metric's low-rank part: U = C S, C = I + V diag(lambda^(1/2)
       - 1) V' (up), C^-1 = I + V diag(lambda^(-1/2) - 1) V' (down), V the
       D x rank orthonormal columns `vectors`; work 2 rank scratch; rank 0:
       none */
    const double *vectors, *up, *down;
    double *work;
    int rank;
    /* each coordinate of the whitened gradient is clipped to +-drift_limit
       (0: none); clipped counts the clipped coordinates */
    double drift_limit, clipped;
} sgfs_metric;

/* ---- the update rule of a chain: its table entry, settings and state -- */
typedef struct sgfs_rule {
    const sgfs_sampler *sampler;
    const double *spar;         /* its settings, in the rule's order           */
    R_xlen_t spar_len;          /* how many                                    */
    double *state;              /* its state, kept between runs (state_len)    */
    R_xlen_t state_len;
    double *work;               /* its scratch                                 */
    double temperature;         /* T of the tempered posterior, 1 for the
                                   posterior itself (spec$temperature)       */
    int robust;                 /* SGFS's robust rule (fisher.c), 0 or 1       */
    int fisher_rows;            /* rows of a minibatch in SGFS's Fisher update */
    const double *curvature;    /* SGFS: the log posterior's curvature H at
                                   the mode (D x D; its diagonal, D, for
                                   SGFS-d), standing for N I + Lambda in the
                                   preconditioner (sgfs_blockdiag.c), or NULL */
} sgfs_rule;

/* ---- a run's length and what it keeps (driver.c) -------------------- */
typedef struct sgfs_run {
    sgfs_schedule sched;        /* the step size eps_t                         */
    int burnin, thin;
    double *draws;              /* n_monitor x n_keep: each kept draw in turn  */
    int n_keep, n_kept;
    const int *monitor;         /* the parameters kept (0-based), or NULL: all */
    int n_monitor;
    /* keep = predictive(): each kept draw adds the model's predictive for
       the pred_cols examples of pred_x (P x pred_cols) to pred
       (n_pred x pred_cols); pred_count counts the draws added, or NULL */
    const double *pred_x;
    int pred_cols, n_pred;
    double *pred, pred_count;
    double eps_last;            /* step size of the last iteration             */
    double diverged;            /* iteration at which theta became non-finite,
                                   far (sgfs_prior_far) or the update failed,
                                   else 0                                     */
    int check_every;            /* iterations between polls for Ctrl-C         */
} sgfs_run;

/* ---- held rows: a stratum sampled with probability 1 (driver.c) ------ */
typedef struct sgfs_held {
    /* rows[0..n-1], 0-based, in every minibatch; the random part of a
       minibatch (the engine's n rows) is drawn from the other N - n rows,
       pool[0..N-n-1], and weighted (N - n) / its size; none: rows NULL,
       n 0.  grad: scratch for their score sum, D */
    const int *rows, *pool;
    int n;
    double *grad;
} sgfs_held;

/* ---- control variates (SGLD-CV; driver.c) --------------------------- */
typedef struct sgfs_cv {
    /* the centre theta_hat and the full-data score sum there, or NULL;
       grad: scratch for the centre's minibatch score sum (D) */
    const double *centre, *score;
    double *grad;
    double *fixed;              /* the held rows' score sum at the centre
                                   (constant, D), or NULL                     */
    /* second order: minus the Hessian of the likelihood of the rows outside
       the held ones at the centre (D x D), or NULL; delta: scratch for
       theta - centre (D) */
    double *hessian, *delta;
} sgfs_cv;

/* ---- exact updates along separated levels (separated.c) ------------- */
typedef struct sgfs_separated {
    int D;                      /* the model's parameters (no horseshoe)       */
    int K, every;               /* levels; iterations between updates          */
    int n_lp;                   /* the model's linear predictors a row: 1, or
                                   K - 1 classes (line_loglik)                 */
    const int *cls;             /* with n_lp > 1, K: the predictor each level's
                                   line moves (line_loglik's cls)              */
    const int *rows, *ptr;      /* level k's rows (0-based): rows[ptr[k]..ptr[k+1]-1] */
    const double *dir;          /* D x K: the directions v_k in xi             */
    const double *width;        /* K: the slice's initial widths               */
    double *basis;              /* D x K: an orthonormal basis of the span of
                                   the U v_k in the sampler's coordinates z   */
    double *eta;                /* scratch: the largest level's rows x n_lp    */
    double *point;              /* scratch: D                                  */
    double *z_old;              /* scratch: D, z before the rule's step        */
} sgfs_separated;

void sgfs_separated_basis(sgfs_engine *e);
void sgfs_separated_project(const sgfs_separated *sep, double *x);
void sgfs_separated_restrict(const sgfs_separated *sep, double *z);
void sgfs_separated_update(sgfs_engine *e);
void sgfs_separated_line_logdens(sgfs_engine *e, const int *rows, int m, int cls,
                                 const double *dir, const double *t, R_xlen_t n_t, double *out);
int sgfs_separated_predictors(const sgfs_engine *e);

/* ---- learned prior scales: Gibbs updates of group precisions (prior_hyper.c) */
typedef struct sgfs_hyper {
    int K;                      /* groups                                      */
    const int *group;           /* D: a coordinate's group 1..K, 0 for none    */
    const double *base;         /* D: the base precision c_j                   */
    const double *shape, *rate; /* K: the Gamma hyperprior of each tau_k       */
    double *tau;                /* K: the precisions (the chain's state)       */
    double *shape_post;         /* K: a_k + n_k / 2, the conditional's shape   */
    double *ss;                 /* K scratch                                   */
} sgfs_hyper;

void sgfs_hyper_apply(sgfs_engine *e);
void sgfs_hyper_update(sgfs_engine *e);

/* The data a chain reads (data.c): N examples of P standardised features,
   held as exactly one of the dense copy xt (or xt32), the compressed rows
   or the raw rows of a design file or a matrix in place, with the
   responses and the rows' offsets and weights.  The readers below take
   this part alone (but the GLM pass over the compressed rows, which
   needs the model too). */
typedef struct sgfs_data {
    int N, P;                   /* examples, features                          */
    const double *xt, *y;       /* P x N design (transposed), N responses      */
    const float *xt32;          /* or the design in single precision (half the
                                   memory; sgfs_control(precision = "single")),
                                   else NULL (data.c)                         */
    const double *offset;       /* N offsets added to the linear predictor
                                   (GLMs: binomial, gaussian, poisson), or
                                   NULL for none                              */
    const double *weights;      /* N prior weights w_i >= 0 (the GLMs:
                                   l(theta) = sum_i w_i l_i(theta); gaussian:
                                   precisions, y_i ~ N(eta_i, sigma^2 / w_i)),
                                   or NULL: every row weight 1               */
    /* a compressed-row copy of a mostly-zero design (sparse_rows.c), used
       by the one-pass minibatch score, or NULL: row i is the stretch of
       32-bit words rows_ent + rows_ptr[i] (= i rows_width when every row
       is padded to rows_width words), read by sgfs_sparse_row() below;
       u_i = its entries - rows_shift; rows_level[j] is the one value a
       pattern column j stores                                            */
    const double *rows_ptr, *rows_shift, *rows_level;
    const int *rows_ent;
    int rows_width;
    /* or raw values standardised when read (data.c): a design file's rows,
       mapped (design_file.c), or the user's dense matrix in place; value j
       of row i at raw_x (doubles) or raw_x32 (floats) + i raw_row +
       j raw_col (a file: raw_row = its columns, raw_col = 1; a matrix:
       1 and N), u_ij = (value j - raw_lead - raw_center_j) / s_j
       after raw_lead implicit ones (sgfs_standardise with raw_inv_scale,
       the scales' reciprocals); file_prefetch: a file's rows are asked of
       the system before they are read, and let go after (file_map: the
       map's first byte, file_fd: the file's descriptor); raw_map: a
       matrix not in the engine's layout now (matrix_order.c) whose engine
       row i is its row raw_map[i] - 1 (spec$order, 1-based), else NULL */
    const double *raw_x, *raw_center, *raw_inv_scale;
    const int *raw_map;
    const float *raw_x32;
    size_t raw_row, raw_col;
    int raw_lead, file_prefetch, file_fd;
    const void *file_map;
} sgfs_data;

/* ---- the likelihood: the model over the data, with the scratch of its
   evaluations (model.c; the model hooks and the row kernels that serve
   them, minibatch.c, take this part alone) ------------------------------ */
struct sgfs_lik {
    const sgfs_model *model;
    const sgfs_data *data;      /* the engine's examples                       */
    int D;                      /* the model's parameters (the engine's D)     */
    const double *mpar;         /* model settings (e.g. fixed log sigma)       */
    SEXP callback;              /* R functions the model calls (custom models:
                                   spec$callback), else R_NilValue; kept
                                   alive by the spec                          */
    double *xb;                 /* P x xb_cols gathered minibatch columns      */
    int xb_cols;                /* the batch, or 1 where no rule or model of
                                   the run gathers (xb_columns() in engine.c) */
    double *eta;                /* linear predictors / residuals: a batch's
                                   per output, batch ceil(D / P) in all, or
                                   the model's own scratch size              */
    double *eta_centre;         /* (for a model with score_change) scratch for
                                   the centre's linear predictors            */
    double *G;                  /* D x batch per-example scores (or NULL)      */
};

/* ---- a mixed model's random effects (ranef.c, ranef_engine.c) -------- */
typedef struct sgfs_ranef_prior {
    int family;                 /* SGFS_SD_* (ranef.h)                         */
    double scale, df;           /* half-normal / half-t / exponential (rate
                                   1 / scale); decov: tau's scale            */
    double shape, concentration; /* decov's Gamma shape and Dirichlet's        */
    double zeta;                /* LKJ's regularisation on the correlations    */
} sgfs_ranef_prior;

typedef struct sgfs_ranef_term {
    int q, G;                   /* coefficients, groups                        */
    const int *group;           /* N: each row's group, 0-based                */
    const int *start, *rows;    /* the rows of group g: rows[start[g] ..
                                   start[g + 1] - 1]                          */
    const double *Z;            /* N x q: the rows' covariates of the term     */
    const double *dir;          /* D x q: each coefficient's translation in
                                   the parameters (zero: none)               */
    sgfs_ranef_prior prior;
    double *b;                  /* q x G: the effects                          */
    double *mode;               /* q x G: each group's last conditional mode   */
    double *x;                  /* the covariance's coordinates                */
    double *prec, *Q;           /* q x q: Sigma^-1, sum_g b_g b_g'             */
    double *sum, *sum_sq;       /* q x G: the kept draws' sums of b and b^2
                                   (effects whose draws are not kept)        */
    double *scale;              /* the scale move's slice: moves made, their
                                   sum of v^2, its width                     */
} sgfs_ranef_term;

/* two terms whose coefficients c_outer and c_inner are one covariate, the
   inner term's groups nested in the outer's (each inner group's rows in one
   outer group, parent[j]) */
typedef struct sgfs_ranef_nest {
    int outer, inner, c_outer, c_inner;
    const int *parent;          /* G_inner: each inner group's outer group     */
    double *count, *sum;        /* G_outer: its inner groups; scratch          */
} sgfs_ranef_nest;

typedef struct sgfs_ranef {
    int K, N, D;                /* terms, rows, the model's parameters         */
    sgfs_ranef_term *term;
    int n_nest;                 /* nested pairs of terms, their moves          */
    sgfs_ranef_nest *nest;
    int n_order, pos;           /* the sweep: its (term, group) pairs in
                                   order_term / order, the next one           */
    int *order, *order_term;
    int fresh;                  /* 1 until the first sweep begins              */
    double sweeps;              /* sweeps completed                            */
    int dispersion;             /* the coordinate whose exp is decov()'s d,
                                   or -1                                      */
    const double *offset0;      /* N base offsets, or NULL                     */
    double *offset;             /* N: o_i + r_i (the data's offset)            */
    int *every_row;             /* 0, ..., N - 1                               */
    double *eta, *z, *work;     /* scratch: a group's rows, a block's          */
    double *base, *own;         /* N: the scale move's predictors              */
    double *zero;               /* q x q zeros                                 */
    double credit;              /* rows the sweep may still spend (negative:
                                   owed by the next iterations)              */
    double df, accepted, proposed;
    int keep_effects;           /* 1: the draws hold every group's effects;
                                   0: their sums over the kept draws only     */
    double n_summed;            /* the kept draws summed in sum, sum_sq        */
    /* control variates (sgfs_ranef_centre): the centre and the full-data
       score sum there at the current offsets, kept so as each group's rows
       change and recomputed at the chain's point at each sweep's end; or
       NULL */
    double *centre, *centre_score, *score_rows;
    double *cv_store;           /* 3 D: their storage                          */
    int chunk;                  /* rows a model's score call may take          */
} sgfs_ranef;

/* a term's sds' prior from its R list (family, scale, df, shape,
   concentration, zeta) */
sgfs_ranef_prior sgfs_ranef_prior_read(SEXP prior);
/* the slots of the list `keep` sgfs_ranef_setup() holds its arrays in */
R_xlen_t sgfs_ranef_slots(SEXP spec);
/* from spec$ranef and state$ranef (or NULL), its arrays kept in `keep` (a
   list of sgfs_ranef_slots(spec) elements); the data's offset becomes its o + r */
sgfs_ranef *sgfs_ranef_setup(SEXP keep, SEXP spec, SEXP state, sgfs_data *data, int D);
/* after a step: groups until `budget` rows are spent, then the covariances */
void sgfs_ranef_update(sgfs_ranef *re, sgfs_lik *lik, const sgfs_prior *prior,
                       double *par, int budget);
/* adds the sds' prior's part of the gradient in par (decov()'s d) */
void sgfs_ranef_prior_grad(const sgfs_ranef *re, const double *par, double *grad);
/* the draws it adds (per term q sds and q (q - 1) / 2 correlations; then,
   with keep_effects, every term's q x G effects) */
int sgfs_ranef_outputs(const sgfs_ranef *re);
void sgfs_ranef_report(const sgfs_ranef *re, double *out);
/* control variates with random effects: copies the centre and takes its
   full-data score sum at the current offsets (or the state's centre and
   score, continuing); returns the centre, whose score is at
   re->centre_score (chunk: the rows a score call may take) */
double *sgfs_ranef_centre(sgfs_ranef *re, sgfs_lik *lik, const double *centre, SEXP state,
                          int chunk);
/* a kept draw: the report, and the effects' sums when their draws are not
   kept */
void sgfs_ranef_keep(sgfs_ranef *re, double *out);
/* list(b, x, sweep, acceptance, mode, credit, sums, centre, scale, sweeps): the
   state to continue from (sums: list(n, sum, sum_sq), the kept draws' sums
   of the effects; centre: with control variates, the centre and its score
   sum; scale: per term its scale moves' count, sum of squares and width;
   sweeps: the sweeps completed) */
SEXP sgfs_ranef_state(const sgfs_ranef *re);

/* ---- the engine: everything one chain needs ------------------------- */
struct sgfs_engine {
    sgfs_data data;             /* the examples (data.c)                       */
    int D, n;                   /* parameters, batch size                      */
    int Ds;                     /* the sampler's coordinates: D, or D + K + 2
                                   with a horseshoe (prior_hs.c)              */
    sgfs_lik lik;               /* the model over the data, its scratch        */
    sgfs_prior prior;           /* the prior per coordinate (prior.c)          */
    sgfs_hs *hs;                /* the horseshoe, or NULL                      */
    sgfs_rule rule;             /* the update rule, its settings and state     */
    /* chain state (persistent R vectors, copied into and out of a fit) */
    double *theta;              /* Ds: the sampler's coordinates (z = U xi
                                   with a metric, else xi)                    */
    double *xi;                 /* Ds: the unconstrained coordinates (== par
                                   without a horseshoe)                       */
    double *par;                /* D: the model's parameters                   */
    double *report;             /* Ds: what the chain keeps (== par without a
                                   horseshoe; with one, par and the
                                   horseshoe's lambda, tau, c)                 */
    sgfs_metric metric;         /* the sampler's coordinates z = U xi, or none */
    /* with a metric or spec$record_grad_sq: the sum over the iterations past
       burn-in of each gradient coordinate's square (whitened and clipped
       with a metric), else NULL */
    double *grad_sq;
    double *iter;               /* iterations done so far (t), a double        */
    sgfs_run run;               /* the run's length and what it keeps          */
    /* scratch, allocated once */
    sgfs_batch batch;           /* the current minibatch                       */
    double *grad;               /* D posterior-gradient estimate               */
    double *grad_lik;           /* D its likelihood part, (N/n) sum_i g_i      */
    double *noise;              /* Ds: a step's standard normals (sgfs_rnorm)  */
    sgfs_held held;             /* rows in every minibatch, or none            */
    sgfs_cv cv;                 /* control variates, or none (cv.centre NULL)  */
    /* learned prior scales (prior_hyper.c), or NULL */
    sgfs_hyper *hyper;
    /* exact updates along separated levels (separated.c), or NULL */
    sgfs_separated *sep;
    /* a mixed model's random effects (ranef_engine.c), or NULL; then
       report holds Ds + n_ranef draws a keep: theta's, then theirs */
    sgfs_ranef *ranef;
    int n_ranef;
};

/* ---- the data (data.c): the dense copy xt or the compressed rows ---- */
void sgfs_data_setup(sgfs_data *d, SEXP spec);
void sgfs_data_columns(const sgfs_data *d, const int *idx, int n, double *out);
/* a matrix in place's row i asked of the caches (ncol scattered misses),
   SGFS_TOUCH_AHEAD rows before it is read (more saturate the misses in
   flight) */
void sgfs_data_touch(const sgfs_data *d, int i);
/* u_i of a raw backend's row i into u (P values): a file's row (raw_col
   1) is contiguous, standardised four values a statement group, which the
   compiler turns into vector instructions at -O2 (inlined into the
   minibatch kernels' clones, minibatch.c; written as a plain loop it stays
   scalar); a matrix's values are raw_col apart.  Each value is the same
   expression either way. */
#define SGFS_STANDARDISE4(u, x, c, r, m)                                       \
    do {                                                                       \
        int j_ = 0;                                                            \
        for (; j_ + 4 <= (m); j_ += 4) {                                       \
            (u)[j_] = sgfs_standardise((double) (x)[j_], (c)[j_], (r)[j_]);             \
            (u)[j_ + 1] = sgfs_standardise((double) (x)[j_ + 1], (c)[j_ + 1], (r)[j_ + 1]); \
            (u)[j_ + 2] = sgfs_standardise((double) (x)[j_ + 2], (c)[j_ + 2], (r)[j_ + 2]); \
            (u)[j_ + 3] = sgfs_standardise((double) (x)[j_ + 3], (c)[j_ + 3], (r)[j_ + 3]); \
        }                                                                      \
        for (; j_ < (m); j_++) (u)[j_] = sgfs_standardise((double) (x)[j_], (c)[j_], (r)[j_]); \
    } while (0)
/* the stored row of a raw backend's engine row i (raw_map) */
static inline size_t sgfs_raw_index(const sgfs_data *d, int i)
{
    return d->raw_map ? (size_t) d->raw_map[i] - 1 : (size_t) i;
}
static inline SGFS_ALWAYS_INLINE void sgfs_raw_row(const sgfs_data *d, int i,
                                                   double *restrict u)
{
    const int P = d->P, lead = d->raw_lead;
    const size_t step = d->raw_col;
    const double *restrict c = d->raw_center, *restrict r = d->raw_inv_scale;
    if (lead) u[0] = sgfs_standardise(1.0, c[0], r[0]);
    if (d->raw_x) {
        const double *restrict x = d->raw_x + sgfs_raw_index(d, i) * d->raw_row;
        if (step == 1) SGFS_STANDARDISE4(u + lead, x, c + lead, r + lead, P - lead);
        else
            for (int j = lead; j < P; j++)
                u[j] = sgfs_standardise(x[(size_t) (j - lead) * step], c[j], r[j]);
    } else {                    /* floats: a file's (raw_col 1) */
        const float *restrict x = d->raw_x32 + (size_t) i * d->raw_row;
        SGFS_STANDARDISE4(u + lead, x, c + lead, r + lead, P - lead);
    }
}
/* a copy's row order (design_copy.c): 0-based rows, or NULL */
const int *sgfs_row_order(SEXP order, int N);
int sgfs_is_permutation(const int *o, int N, char *seen);
#define SGFS_TOUCH_AHEAD 2
void sgfs_data_dots(const sgfs_data *d, const int *idx, int n, const double *beta,
                    double *out);
double sgfs_data_glm_pass(const sgfs_lik *lik, const double *beta, double *sum);

/* A compressed row (sparse_rows.c): n stored entries in columns col[k];
   the first nv with their values val[k], the other n - nv in pattern
   columns, whose every stored value is the column's level[col[k]] (0/1
   indicators: a9a's features, one-hot levels), so that they cost four
   bytes instead of twelve.  In the words of rows_ent, a row is
   [nv][n - nv][nv doubles][n columns], from an even word (the doubles
   aligned), and padded to an even number of words. */
typedef struct sgfs_sparse {
    const double *val;
    const int *col;
    int nv, n;
} sgfs_sparse;

/* the words a row of nv valued and np pattern entries takes */
static inline R_xlen_t sgfs_sparse_words(R_xlen_t nv, R_xlen_t np)
{
    const R_xlen_t w = 2 + 3 * nv + np;
    return w + (w & 1);
}

/* the first word of row i of the compressed rows, and its number of words
   (with its padding) */
static inline SGFS_ALWAYS_INLINE const int *sgfs_sparse_start(const sgfs_data *d, int i)
{
    return d->rows_ent + (d->rows_width > 0 ? (size_t) i * (size_t) d->rows_width
                                            : (size_t) d->rows_ptr[i]);
}
static inline SGFS_ALWAYS_INLINE R_xlen_t sgfs_sparse_row_words(const sgfs_data *d, int i)
{
    return d->rows_width > 0 ? d->rows_width
                             : (R_xlen_t) (d->rows_ptr[i + 1] - d->rows_ptr[i]);
}

/* row i of the compressed rows */
static inline SGFS_ALWAYS_INLINE sgfs_sparse sgfs_sparse_row(const sgfs_data *d, int i)
{
    const int *w = sgfs_sparse_start(d, i);
    sgfs_sparse r;
    r.nv = w[0];
    r.n = w[0] + w[1];
    r.val = (const double *) (const void *) (w + 2);
    r.col = w + 2 + 2 * (size_t) w[0];
    return r;
}

/* the value of a row's k-th entry */
static inline double sgfs_sparse_value(sgfs_sparse r, int k, const double *level)
{
    return k < r.nv ? r.val[k] : level[r.col[k]];
}

/* sum_k v_k beta[col_k] over a row's entries, four partial sums */
static inline SGFS_ALWAYS_INLINE double sgfs_sparse_dot(sgfs_sparse r, const double *restrict level,
                                                   const double *restrict beta)
{
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    const double *restrict v = r.val;
    const int *restrict c = r.col;
    int k = 0;
    for (; k + 4 <= r.nv; k += 4) {
        s0 += v[k] * beta[c[k]];
        s1 += v[k + 1] * beta[c[k + 1]];
        s2 += v[k + 2] * beta[c[k + 2]];
        s3 += v[k + 3] * beta[c[k + 3]];
    }
    for (; k < r.nv; k++) s0 += v[k] * beta[c[k]];
    for (; k + 4 <= r.n; k += 4) {
        s0 += level[c[k]] * beta[c[k]];
        s1 += level[c[k + 1]] * beta[c[k + 1]];
        s2 += level[c[k + 2]] * beta[c[k + 2]];
        s3 += level[c[k + 3]] * beta[c[k + 3]];
    }
    for (; k < r.n; k++) s0 += level[c[k]] * beta[c[k]];
    return (s0 + s1) + (s2 + s3);
}

/* sum[col_k] += a v_k over a row's entries */
static inline SGFS_ALWAYS_INLINE void sgfs_sparse_axpy(double a, sgfs_sparse r,
                                                  const double *restrict level,
                                                  double *restrict sum)
{
    int k = 0;
    for (; k < r.nv; k++) sum[r.col[k]] += a * r.val[k];
    for (; k < r.n; k++) sum[r.col[k]] += a * level[r.col[k]];
}

/* a weight in [0, 1) for row i, fixed and scattered (Knuth's
   multiplicative hash): the rows' order enters a column's checksum
   (sparse_rows.c, design_file.c) */
static inline double sgfs_checksum_weight(int i)
{
    return (double) ((uint32_t) i * 2654435761u) / 4294967296.0;
}

/* a design file's rows, mapped on first use (design_file.c) */
const void *sgfs_design_file_base(SEXP file, int *N, int *ncol, int *bytes);
void sgfs_design_file_prefetch(const void *base, size_t row_bytes, const int *idx, int n);
void sgfs_design_file_prefetch_rows(const void *base, size_t row_bytes, int from, int to);
const void *sgfs_design_file_map_of(SEXP file, int *fd);
void sgfs_design_file_release_rows(const void *map, int fd, const void *base, size_t row_bytes,
                                   int from, int to);
/* the same for the engine's file backend when it prefetches (data.c;
   nothing for the others): the rows idx[0..n-1], the rows from .. to - 1
   (one request), and the pages of the rows from .. to - 1, read, let go */
void sgfs_data_prefetch(const sgfs_data *d, const int *idx, int n);
void sgfs_data_prefetch_rows(const sgfs_data *d, int from, int to);
void sgfs_data_release_rows(const sgfs_data *d, int from, int to);

/* ---- engine construction (engine.c, eval.c) ------------------------- */
SEXP sgfs_engine_alloc(void);
/* a chain's engine, its batch the spec's batch_size rows, continuing
   `state`, keeping n_keep draws */
sgfs_engine *sgfs_engine_setup(SEXP prot, SEXP spec, SEXP state, int n_keep);
/* an engine for evaluations at theta: no rule, state or draws; its batch
   `rows` rows (0: one chunk of a full-data pass), with the D x n
   per-example scores e->lik.G (also the scratch of sgfs_neg_hessian) when
   `scores` */
sgfs_engine *sgfs_eval_engine(SEXP prot, SEXP spec, SEXP theta, int rows, int scores);

/* ---- helpers -------------------------------------------------------- */
R_xlen_t sgfs_minibatch_table_size(int n);
void sgfs_minibatch_begin(sgfs_batch *b);
void sgfs_minibatch(sgfs_batch *b, int N, int n);
int sgfs_minibatch_window(sgfs_batch *b, int N);
void sgfs_minibatch_shuffle_front(sgfs_batch *b, int n, int m);
/* 1 if the user pressed Ctrl-C, without jumping out of the C code (driver.c) */
int sgfs_interrupt_pending(void);
void sgfs_gather_dot(const double *xt, int P, const int *idx, int n,
                     const double *beta, double *xb, double *eta);
void sgfs_add_offset(const sgfs_data *d, const int *idx, int n, double *eta);
/* row's prior weight (1 without weights) and offset (0 without) */
static inline double sgfs_row_weight(const sgfs_data *d, int row)
{
    return d->weights ? d->weights[row] : 1.0;
}
static inline double sgfs_row_offset(const sgfs_data *d, int row)
{
    return d->offset ? d->offset[row] : 0.0;
}
const double *sgfs_batch_columns(sgfs_lik *lik, const double *beta,
                                 const int *idx, int n, double *eta);
double sgfs_full_score(sgfs_engine *e, const double *theta, double *sum);
void sgfs_neg_hessian(sgfs_lik *lik, const double *theta, const int *idx,
                      int n, double *H);
double sgfs_log_posterior(sgfs_engine *e, const double *theta, double *grad);
void sgfs_fixed_rows_score(sgfs_engine *e, const double *theta, double *sum);
int sgfs_all_finite(const double *x, int n);

/* outputs.c: the output layers of the GLMs and the networks */
double sgfs_sigmoid(double z);
double sgfs_softplus(double z);
double sgfs_binomial_residual(double y, double z, double *ll);
double sgfs_softmax_ref(double *z, size_t stride, int K1);
double sgfs_softmax_sum(double *z, size_t stride, int K1, double *shift, double *p_ref);
void sgfs_add_binomial_pred(const double *z, size_t stride, int m, double *out);
void sgfs_add_gaussian_pred(const double *z, size_t stride, int m,
                            double log_sigma, double *out);
void sgfs_add_class_pred(double *z, size_t by_class, size_t by_example, int m,
                         int K1, double *out);

/* normal.c: n standard normals into out, one block seeded from two of R's
   uniforms (call between GetRNGstate and PutRNGstate) */
void sgfs_rnorm(double *out, R_xlen_t n);

/* fisher.c: what the SGFS samplers share */
double sgfs_gamma_fpc(int N, int n);
double sgfs_gamma_tempered(const sgfs_engine *e);

double sgfs_noise_scale(const sgfs_engine *e);
int sgfs_fisher_frozen(const sgfs_engine *e);
double sgfs_fisher_weight(const sgfs_engine *e, double *count);
void sgfs_running_mean(double *restrict mean, const double *restrict x, int len,
                       double kappa);
double sgfs_burnin_shrink(const sgfs_engine *e, const double *x, const double *r);
double sgfs_burnin_shrink_q(const sgfs_engine *e, double q);

/* metropolis.c: what the full-data Metropolis rules share */
double sgfs_tempered_log_posterior(sgfs_engine *e, const double *theta, double *grad);
void sgfs_gradient_in_z(const double *U, int D, const double *g, double *out);
void sgfs_adapt_log_step(const sgfs_engine *e, double target, double accept_prob,
                         double *x, double *sum, double *count);
double sgfs_metropolis_test(sgfs_engine *e, double log_ratio, const double *theta_new,
                            const double *g_new, double lp_new, double *grad, double *logpost,
                            double *accepted, double *proposed);

/* sgfs_blockdiag.c: the SGFS update with a block-diagonal Fisher estimate
   (SGFS-f is one block, SGFS-b several) */
R_xlen_t sgfs_blocks_square_sum(int K, const double *size);
int sgfs_blockdiag_step(sgfs_engine *e, double eps, int K, const double *size);

/* linalg.c: thin BLAS/LAPACK wrappers (FCONE, documented) */
void sgfs_x_r(const double *xb, int P, int n, const double *r, double *out);
void sgfs_glm_scores(const double *xb, int P, int n, const double *r, double *sum,
                     double *G, int ldg);
void sgfs_rows_score(const sgfs_lik *lik, const int *idx, int n,
                     const double *beta, const double *centre,
                     double (*resid)(int, double, double, const void *), const void *ctx,
                     double *restrict sum);
void sgfs_xt_beta(const double *xb, int P, int n, const double *beta, double *eta);
void sgfs_row_moments(const double *G, int D, int n, double *gbar, double *v);
void sgfs_row_means(const double *G, int D, int n, double *gbar);
void sgfs_crossprod_mean_update(const double *G, int D, int n, int o, int b,
                                const double *gbar, double kappa, double *I);
double sgfs_chol_upper(const double *M, int D, double *U);
void sgfs_chol_solve(const double *U, int D, double *b);
void sgfs_upper_t_times(const double *U, int D, const double *x, double *y);
void sgfs_upper_times(const double *U, int D, double *x);
void sgfs_upper_solve(const double *U, int D, double *x);
void sgfs_upper_t_solve(const double *U, int D, double *x);
void sgfs_upper_t_solve_columns(const double *U, int D, int m, double *B);
void sgfs_matrix_times(const double *A, int D, const double *x, double *y);
void sgfs_crossprod_add(const double *A, int D, int n, double *V, int ldv);
void sgfs_symmetrize_upper(double *V, int D);
void sgfs_symv(const double *A, int D, const double *x, double alpha, double *y);
void sgfs_gemm(char ta, char tb, int m, int n, int k, const double *A, int lda,
               const double *B, int ldb, double beta, double *C, int ldc);
#ifdef SGFS_HAVE_SGEMM               /* (./configure: R's BLAS has sgemm) */
void sgfs_sgemm(char ta, char tb, int m, int n, int k, const float *A, int lda,
                const float *B, int ldb, float beta, float *C, int ldc);
#endif
int sgfs_has_sgemm(void);
void sgfs_linear_outputs(const double *theta, int D, int P, int K1, int S,
                         const double *x, int m, double *z, size_t ldz, size_t ldk);
int sgfs_glm_n_out(const double *mpar, const sgfs_model **out);
void sgfs_glm_outputs(sgfs_lik *lik, const double *theta, int S, const double *x,
                      int m, double *z, size_t ldz, size_t ldk);

/* model_aux.c: the passes of a GLM with one more parameter a on the log
   scale (negative binomial, Gamma, Student t), from its two row functions:
   terms(y, eta, a, mpar, d) -> d = (l, dl/deta, dl/da); curvature(y, eta,
   a, mpar, d, h) -> h = (-d2l/deta2, -d2l/deta da, -d2l/da2), given the
   row's terms d (h[0] > 0); mpar the model's settings (mpar[0]: a fixed a
   or NA, then the model's own) */
typedef struct sgfs_aux_rows {
    void (*terms)(double y, double eta, double a, const double *mpar, double *d);
    void (*curvature)(double y, double eta, double a, const double *mpar, const double *d,
                      double *h);
} sgfs_aux_rows;
int sgfs_aux_sampled(const double *mpar);
int sgfs_aux_n_par(int P, const double *mpar, int n_mpar);
double sgfs_aux_value(const sgfs_lik *lik, const double *theta);
void sgfs_aux_score(const sgfs_aux_rows *rows, sgfs_lik *lik, const double *theta,
                    const int *idx, int n, double *sum, double *G, double *loglik);
void sgfs_aux_score_change(const sgfs_aux_rows *rows, sgfs_lik *lik, const double *theta,
                           const double *centre, int second, const int *idx, int n,
                           double *sum);
double sgfs_aux_loglik(const sgfs_aux_rows *rows, sgfs_lik *lik, const double *theta,
                       const int *idx, int n);
void sgfs_aux_neg_hessian(const sgfs_aux_rows *rows, sgfs_lik *lik, const double *theta,
                          const int *idx, int n, double *H);
void sgfs_aux_row_derivs(const sgfs_aux_rows *rows, const sgfs_lik *lik, const double *theta,
                         int row, double eta, double *d);
int sgfs_aux_n_pred(const double *mpar);
void sgfs_aux_predict_exp(sgfs_lik *lik, const double *theta, const double *x, int m,
                          double *out);

/* metric.c: the sampler's whitened coordinates z = U theta */
void sgfs_metric_to_z(const sgfs_metric *m, const double *theta, double *z);
void sgfs_metric_to_theta(const sgfs_metric *m, const double *z, double *theta);
void sgfs_metric_gradients(const sgfs_metric *m, double *g, int ncol);
void sgfs_metric_clip(sgfs_metric *m, double *g);

/* design_copy.c: back a large array about to be written with huge pages;
   check a design and its centres and scales */
void sgfs_advise_huge_pages(void *p, size_t bytes);
const double **sgfs_dense_columns(SEXP x, int *N, int *P);
int sgfs_check_design(SEXP x, SEXP center, SEXP scale, SEXP lead, int *N, int *P,
                      const double ***cols);

/* blas_threads.c: a threaded BLAS on one thread around the engine's loop */
int sgfs_blas_single_begin(void);
void sgfs_blas_single_end(int previous);

/* spec_list.c: the elements of the R lists the front end passes, by name */
SEXP sgfs_list_opt(SEXP list, const char *name);    /* R_NilValue when absent */
SEXP sgfs_list_elt(SEXP list, const char *name);
SEXP sgfs_list_typed(SEXP list, const char *name, SEXPTYPE type, R_xlen_t len);
int sgfs_list_int(SEXP list, const char *name);

#endif /* SGFS_SGFS_H */
