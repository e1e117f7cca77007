/*
 * driver.c - the one iteration loop shared by every stochastic-gradient
 * sampler (the internals vignette, "One iteration").  For t = iter + 1,
 * iter + 2, ...:
 *
 *   S_t     <- n distinct indices, a uniform random subset, or with
 *              windows n / w distinct blocks of w consecutive ones (minibatch.c)
 *   grad    <- grad log p(theta) + (N/n) sum_{i in S_t} g_i(theta)
 *              (its likelihood part kept in grad_lik)
 *              (and the per-example scores G if the sampler needs them:
 *              of the first fisher_rows rows, SGFS's Fisher estimate's)
 *              or, with control variates (algorithms vignette 1.3), the
 *              likelihood part  sum_i g_i(c) + (N/n) sum_{i in S_t} [g_i(theta) - g_i(c)]
 *              with the same minibatch in both sums
 *              With fixed rows F (always in the batch) the minibatch is F
 *              and n rows drawn from the others, weighted (N - |F|)/n:
 *              sum_{i in F} g_i + ((N - |F|)/n) sum_{i in S_t} g_i, unbiased
 *              (a stratified sample; rows of high leverage go in F)
 *   with a horseshoe (prior_hs.c): grad, a gradient in the model's
 *              parameters, is pulled back to the sampler's coordinates xi
 *              (z_j, log lambda_j, log tau, log c^2) and the horseshoe's
 *              prior added; the control variates stay in the model's
 *              parameters, where the draws vary least
 *   with a metric (metric.c): grad <- U'^{-1} grad, and the sampler's step
 *              moves z = U xi
 *              (full-data samplers skip this step and evaluate the
 *              posterior themselves)
 *   eps_t   <- schedule(t)                                (schedule.c)
 *   theta   <- sampler->step(theta, grad, eps_t)          (sampler_*.c)
 *   every sep->every iterations: exact (Gibbs) updates of theta along
 *           the separated levels' lines (separated.c)
 *   keep theta if t > burnin and (t - burnin) %% thin == 0 (only the
 *           monitored parameters; with keep = predictive(), also add the
 *           model's predictive at theta for the examples of pred_x)
 *
 * The engine lives behind an external pointer, so R runs it in chunks (for
 * a progress bar and Ctrl-C) and a continued run is the same chain:
 *   sgfs_engine_new(spec, state, n_keep)  -> external pointer
 *   sgfs_engine_run(ptr, k)               -> runs k iterations; returns
 *                                            c(iteration at which the chain
 *                                            diverged or 0, interrupted 0/1)
 *   sgfs_engine_result(ptr)               -> draws kept so far and the state
 * Randomness is R's (GetRNGstate/PutRNGstate around each chunk).  Ctrl-C is
 * polled (every e->run.check_every iterations, about every 2e7 flops) with
 * R_ToplevelExec, so an interrupt ends the chunk cleanly at an iteration
 * boundary with .Random.seed written back: the interrupted chain can be
 * continued exactly.  (R treats such an interrupt as one at top level, so
 * an options(error = ) handler runs before the run returns its draws.)
 * Iteration counts are doubles: runs beyond 2^31 iterations are exact.
 */
#include "sgfs.h"
#include "ranef.h"


static void check_interrupt(void *unused)
{
    (void) unused;
    R_CheckUserInterrupt();
}

/* 1 if the user pressed Ctrl-C (without jumping out of this C code) */
int sgfs_interrupt_pending(void)
{
    return !R_ToplevelExec(check_interrupt, NULL);
}

static sgfs_engine *engine_of(SEXP ptr)
{
    if (TYPEOF(ptr) != EXTPTRSXP || R_ExternalPtrTag(ptr) != Rf_install("sgfs_engine")
        || R_ExternalPtrAddr(ptr) == NULL)
        Rf_error("internal error: not an sgfs engine (was the fit saved and reloaded?)");
    return (sgfs_engine *) R_ExternalPtrAddr(ptr);
}

SEXP sgfs_engine_new(SEXP spec, SEXP state, SEXP n_keep)
{
    SEXP prot = PROTECT(sgfs_engine_alloc());
    sgfs_engine *e = sgfs_engine_setup(prot, spec, state, Rf_asInteger(n_keep));
    SEXP ptr = R_MakeExternalPtr(e, Rf_install("sgfs_engine"), prot);
    UNPROTECT(1);
    return ptr;
}

/* with a horseshoe: the model's parameters and the kept values at xi */
static void hs_point(sgfs_engine *e)
{
    sgfs_hs_beta(e->hs, e->xi, e->par);
    sgfs_hs_report(e->hs, e->xi, e->par, e->report);
}

/* a diverging chain: xi far from the priors (prior.c, prior_hs.c) */
static int far(const sgfs_engine *e)
{
    return sgfs_prior_far(&e->prior, e->xi) || (e->hs && sgfs_hs_far(e->hs, e->xi));
}

/* act(&e->data, from, to) for the rows of the window of w positions from s (of
   Np, wrapping to 0), as runs of consecutive rows from .. to - 1: through
   the pool (increasing) a run ends where the pool passes over a fixed row */
static void window_runs(const sgfs_engine *e, int s, int w, int Np,
                        void (*act)(const sgfs_data *, int, int))
{
    if (!e->held.pool) {
        const int end = s + w < Np ? s + w : Np;
        act(&e->data, s, end);
        if (s + w > Np) act(&e->data, 0, s + w - Np);
        return;
    }
    int from = -1, prev = -2;
    for (int k = 0; k <= w; k++) {
        const int pos = s + k < Np ? s + k : s + k - Np,
            row = k < w ? e->held.pool[pos] : -1;
        if (row != prev + 1) {
            if (from >= 0) act(&e->data, from, prev + 1);
            from = row;
        }
        prev = row;
    }
}

/* this iteration's window (minibatch.c); from a design file larger than
   memory, the rows of the windows drawn for later iterations asked of the
   system (their reads then run while this and the next iterations
   compute), and the rows the last iteration read let go */
static void next_window(sgfs_engine *e)
{
    const int Np = e->data.N - e->held.n, w = e->batch.width, per = e->batch.per,
        len = e->batch.ahead * per;
    if (e->data.file_prefetch && e->batch.starts[0] >= 0)      /* (the last iteration's) */
        for (int k = 0; k < per; k++)
            window_runs(e, (int) e->batch.starts[len + k], w, Np, sgfs_data_release_rows);
    const int drawn = sgfs_minibatch_window(&e->batch, Np);
    if (!e->data.file_prefetch) return;
    for (int k = len - drawn; k < len; k++)
        window_runs(e, (int) e->batch.starts[k], w, Np, sgfs_data_prefetch_rows);
}

/* The stages of a minibatch iteration, in order: the minibatch; the
   likelihood's gradient estimate from it (grad, and grad_lik the same);
   the rows held in every minibatch; the prior's (and a horseshoe's) part;
   the move to the rule's coordinates; then the rule's step and the exact
   updates after it. */

/* the minibatch of the iteration (e->batch.idx, rows of the pool); returns
   whether the rule reads per-example scores this iteration (then its Fisher
   rows come first) */
static int draw_minibatch(sgfs_engine *e)
{
    if (e->batch.ahead) next_window(e);
    else sgfs_minibatch(&e->batch, e->data.N - e->held.n, e->n);
    if (e->held.pool)
        for (int i = 0; i < e->n; i++) e->batch.idx[i] = e->held.pool[e->batch.idx[i]];
    const int scores = e->rule.sampler->needs_scores && !sgfs_fisher_frozen(e);
    if (scores && e->rule.fisher_rows < e->n)     /* (SGFS's Fisher rows) */
        sgfs_minibatch_shuffle_front(&e->batch, e->n, e->rule.fisher_rows);
    return scores;
}

/* grad = grad_lik = the estimate of the likelihood's gradient at par from
   the minibatch, scaled by (N - held.n) / n: with control variates (in
   one pass over the rows for both points where the model has
   score_change, else two), or plain; with the rule's per-example scores
   (scores) of its Fisher rows into G */
static void minibatch_gradient(sgfs_engine *e, int scores)
{
    const int D = e->D;
    const double scale = (double) (e->data.N - e->held.n) / e->n;
    if (e->cv.centre && e->lik.model->score_change) {
        /* second order: minus the pool's Hessian at the centre times (par -
           centre).  With SGFS's Fisher rows, each of them first on its own:
           their per-example changes, the noise the rule's Fisher estimate
           measures */
        const int second = e->cv.hessian != NULL, m = scores ? e->rule.fisher_rows : 0;
        for (int i = 0; i < m; i++)
            e->lik.model->score_change(&e->lik, e->par, e->cv.centre, second, e->batch.idx + i, 1,
                                   e->lik.G + (size_t) i * D);
        e->lik.model->score_change(&e->lik, e->par, e->cv.centre, second, e->batch.idx + m,
                                   e->n - m, e->grad);
        for (int i = 0; i < m; i++)
            for (int j = 0; j < D; j++) e->grad[j] += e->lik.G[j + (size_t) i * D];
        for (int j = 0; j < D; j++) e->grad[j] = e->cv.score[j] + scale * e->grad[j];
        if (second) {
            for (int j = 0; j < D; j++) e->cv.delta[j] = e->par[j] - e->cv.centre[j];
            sgfs_symv(e->cv.hessian, D, e->cv.delta, -1.0, e->grad);
        }
        memcpy(e->grad_lik, e->grad, (size_t) D * sizeof(double));
    } else if (e->cv.centre) {
        /* (no per-example scores here: engine.c refuses them without score_change) */
        e->lik.model->score(&e->lik, e->par, e->batch.idx, e->n, e->grad, NULL, NULL);
        e->lik.model->score(&e->lik, e->cv.centre, e->batch.idx, e->n, e->cv.grad, NULL, NULL);
        for (int j = 0; j < D; j++)
            e->grad_lik[j] = e->grad[j] =
                e->cv.score[j] + scale * (e->grad[j] - e->cv.grad[j]);
    } else if (scores && e->rule.fisher_rows < e->n) {
        /* the per-example scores of the first fisher_rows rows only (SGFS's
           Fisher estimate reads no others) and their sum, then the sum over
           the other rows in one pass: each row evaluated once */
        const int m = e->rule.fisher_rows;
        e->lik.model->score(&e->lik, e->par, e->batch.idx, m, e->grad_lik, e->lik.G, NULL);
        e->lik.model->score(&e->lik, e->par, e->batch.idx + m, e->n - m, e->grad, NULL, NULL);
        for (int j = 0; j < D; j++) e->grad_lik[j] = e->grad[j] = scale * (e->grad[j] + e->grad_lik[j]);
    } else {
        e->lik.model->score(&e->lik, e->par, e->batch.idx, e->n, e->grad,
                            scores ? e->lik.G : NULL, NULL);
        for (int j = 0; j < D; j++) e->grad_lik[j] = e->grad[j] *= scale;
    }
}

/* the rows held in every minibatch: their exact part (less the centre's,
   computed once at setup, with control variates) */
static void add_fixed_rows(sgfs_engine *e)
{
    const int D = e->D;
    sgfs_fixed_rows_score(e, e->par, e->held.grad);
    for (int j = 0; j < D; j++) e->grad[j] += e->held.grad[j];
    if (e->cv.centre)
        for (int j = 0; j < D; j++) e->grad[j] -= e->cv.fixed[j];
    memcpy(e->grad_lik, e->grad, (size_t) D * sizeof(double));
}

/* the prior's part, in the coordinates xi (with a horseshoe the gradients
   pulled back from the model's parameters first, and its prior added) */
static void add_prior(sgfs_engine *e)
{
    if (e->hs) {
        sgfs_hs_pullback(e->hs, e->par, e->grad);
        sgfs_hs_pullback(e->hs, e->par, e->grad_lik);
        sgfs_hs_prior(e->hs, e->xi, e->grad);
    }
    sgfs_prior_grad_add(&e->prior, e->xi, e->grad);
    if (e->ranef) sgfs_ranef_prior_grad(e->ranef, e->xi, e->grad);
}

/* grad, grad_lik (and with scores the Fisher rows' scores) to the rule's
   coordinates z = U xi, off the separated levels' lines, grad clipped */
static void to_rule_coordinates(sgfs_engine *e, int scores)
{
    sgfs_metric_gradients(&e->metric, e->grad, 2);       /* grad and grad_lik (metric.c) */
    if (e->sep) sgfs_separated_project(e->sep, e->grad);
    sgfs_metric_clip(&e->metric, e->grad);
    if (e->sep) sgfs_separated_project(e->sep, e->grad_lik);
    if (scores) {
        sgfs_metric_gradients(&e->metric, e->lik.G, e->rule.fisher_rows);
        if (e->sep)
            for (int i = 0; i < e->rule.fisher_rows; i++)
                sgfs_separated_project(e->sep, e->lik.G + (size_t) i * e->D);
    }
}

/* one iteration; returns 0, or 1 if the update failed */
static int iterate(sgfs_engine *e)
{
    const int Ds = e->Ds;
    const double t = ++(*e->iter);
    e->run.eps_last = sgfs_stepsize(&e->run.sched, t);
    if (e->rule.sampler->full_data) {
        const int failed = e->rule.sampler->step(e, e->run.eps_last);
        if (e->hs) hs_point(e);
        return failed;
    }
    const int scores = draw_minibatch(e);
    minibatch_gradient(e, scores);
    if (e->held.rows) add_fixed_rows(e);
    add_prior(e);
    if (e->metric.U) to_rule_coordinates(e, scores);
    if (e->grad_sq && t > e->run.burnin)     /* the rule's gradient, as it will read it */
        for (int j = 0; j < Ds; j++) e->grad_sq[j] += e->grad[j] * e->grad[j];
    if (e->sep) memcpy(e->sep->z_old, e->theta, (size_t) Ds * sizeof(double));
    const int failed = e->rule.sampler->step(e, e->run.eps_last);
    if (e->sep) sgfs_separated_restrict(e->sep, e->theta);   /* the step's move off the lines */
    if (e->metric.U) sgfs_metric_to_theta(&e->metric, e->theta, e->xi);
    if (e->sep && !failed && fmod(t, (double) e->sep->every) == 0.0) {
        sgfs_separated_update(e);            /* Gibbs updates along separated levels */
        sgfs_metric_to_z(&e->metric, e->xi, e->theta);
    }
    if (e->hyper && !failed) sgfs_hyper_update(e);   /* Gibbs updates of the prior's scales */
    if (e->ranef && !failed) {               /* the random effects' blocks */
        sgfs_ranef_update(e->ranef, &e->lik, &e->prior, e->par, e->n);
        if (e->metric.U) sgfs_metric_to_z(&e->metric, e->xi, e->theta);
    }
    if (e->hs) hs_point(e);
    return failed;
}

static void keep_if_due(sgfs_engine *e)
{
    const double t = *e->iter;
    if (t <= e->run.burnin || fmod(t - e->run.burnin, (double) e->run.thin) != 0.0 ||
        e->run.n_kept >= e->run.n_keep)
        return;
    if (e->ranef) {
        memcpy(e->report, e->xi, (size_t) e->Ds * sizeof(double));
        sgfs_ranef_keep(e->ranef, e->report + e->Ds);
    }
    double *draw = e->run.draws + (size_t) e->run.n_kept * e->run.n_monitor;
    for (int j = 0; j < e->run.n_monitor; j++)
        draw[j] = e->report[e->run.monitor ? e->run.monitor[j] : j];
    e->run.n_kept++;
    if (e->run.pred_x == NULL) return;
    for (int start = 0; start < e->run.pred_cols; start += e->n) {
        const int m = e->run.pred_cols - start < e->n ? e->run.pred_cols - start : e->n;
        e->lik.model->predict(&e->lik, e->par, e->run.pred_x + (size_t) start * e->data.P, m,
                          e->run.pred + (size_t) start * e->run.n_pred);
    }
    e->run.pred_count += 1.0;
}

SEXP sgfs_engine_run(SEXP ptr, SEXP n_iter)
{
    sgfs_engine *e = engine_of(ptr);
    const int k = Rf_asInteger(n_iter);
    int interrupted = 0;
    SEXP status = PROTECT(Rf_allocVector(REALSXP, 2));
    sgfs_minibatch_begin(&e->batch);                     /* R's sample kind, now */
    const int blas_threads = sgfs_blas_single_begin();  /* small matrices: one thread */
    GetRNGstate();
    for (int s = 0; s < k && !e->run.diverged; s++) {
        if (s % e->run.check_every == 0 && sgfs_interrupt_pending()) {
            interrupted = 1;
            break;
        }
        if (iterate(e) || far(e)) {
            e->run.diverged = *e->iter;
            break;
        }
        keep_if_due(e);
    }
    PutRNGstate();
    sgfs_blas_single_end(blas_threads);
    REAL(status)[0] = e->run.diverged;
    REAL(status)[1] = interrupted;
    UNPROTECT(1);
    return status;
}

SEXP sgfs_engine_result(SEXP ptr)
{
    sgfs_engine *e = engine_of(ptr);
    const int Ds = e->Ds;
    const R_xlen_t len = e->rule.state_len;
    const char *names[] = {"draws", "theta", "iter", "sstate", "eps",
                           "diverged", "pred", "pred_count", "clipped", "z", "grad_sq",
                           "starts", "hyper", "ranef", ""};
    SEXP out = PROTECT(Rf_mkNamed(VECSXP, names));
    SEXP draws = Rf_allocMatrix(REALSXP, e->run.n_kept, e->run.n_monitor);
    SET_VECTOR_ELT(out, 0, draws);
    /* the kept draws, each contiguous in the buffer, as rows of the matrix:
       a transpose in tiles that fit the cache */
    const size_t S = (size_t) e->run.n_kept, J = (size_t) e->run.n_monitor, T = 32;
    for (size_t s0 = 0; s0 < S; s0 += T)
        for (size_t j0 = 0; j0 < J; j0 += T)
            for (size_t s = s0; s < s0 + T && s < S; s++)
                for (size_t j = j0; j < j0 + T && j < J; j++)
                    REAL(draws)[s + S * j] = e->run.draws[j + J * s];
    SEXP theta = Rf_allocVector(REALSXP, Ds);      /* the state: xi (== par without hs) */
    SET_VECTOR_ELT(out, 1, theta);
    memcpy(REAL(theta), e->xi, (size_t) Ds * sizeof(double));
    SET_VECTOR_ELT(out, 2, Rf_ScalarReal(*e->iter));
    SEXP ss = Rf_allocVector(REALSXP, len);
    SET_VECTOR_ELT(out, 3, ss);
    if (len > 0) memcpy(REAL(ss), e->rule.state, (size_t) len * sizeof(double));
    SET_VECTOR_ELT(out, 4, Rf_ScalarReal(e->run.eps_last));
    SET_VECTOR_ELT(out, 5, Rf_ScalarReal(e->run.diverged));
    SET_VECTOR_ELT(out, 8, Rf_ScalarReal(e->metric.clipped));
    if (e->metric.U) {                     /* the sampler's coordinates, to continue */
        SEXP z = Rf_allocVector(REALSXP, Ds);
        SET_VECTOR_ELT(out, 9, z);
        memcpy(REAL(z), e->theta, (size_t) Ds * sizeof(double));
    }
    if (e->grad_sq) {
        SEXP sq = Rf_allocVector(REALSXP, Ds);
        SET_VECTOR_ELT(out, 10, sq);
        memcpy(REAL(sq), e->grad_sq, (size_t) Ds * sizeof(double));
    }
    if (e->hyper) {                      /* the prior's precisions, to continue */
        SEXP tau = Rf_allocVector(REALSXP, e->hyper->K);
        SET_VECTOR_ELT(out, 12, tau);
        memcpy(REAL(tau), e->hyper->tau, (size_t) e->hyper->K * sizeof(double));
    }
    if (e->ranef) SET_VECTOR_ELT(out, 13, sgfs_ranef_state(e->ranef));
    if (e->batch.ahead) {                /* the windows drawn ahead, to continue */
        const int len = e->batch.ahead * e->batch.per;
        SEXP starts = Rf_allocVector(REALSXP, len);
        SET_VECTOR_ELT(out, 11, starts);
        memcpy(REAL(starts), e->batch.starts, (size_t) len * sizeof(double));
    }
    if (e->run.pred_x) {
        SEXP pred = Rf_allocMatrix(REALSXP, e->run.n_pred, e->run.pred_cols);
        SET_VECTOR_ELT(out, 6, pred);
        memcpy(REAL(pred), e->run.pred, (size_t) e->run.n_pred * e->run.pred_cols * sizeof(double));
        SET_VECTOR_ELT(out, 7, Rf_ScalarReal(e->run.pred_count));
    }
    UNPROTECT(1);
    return out;
}
