/*
 * bench_gradients.c - the bare minibatch-gradient loop the benchmarks
 * compare the samplers with (bench/): the same minibatch draw and the same
 * model score as the driver, and nothing else (no prior, no update, no
 * storage).  Returns the sum of the gradients so the work is not optimised
 * away.  With spec$bench_floor = 1 it draws the minibatches only, with 2
 * the minibatches and D standard normal deviates an iteration (the noise
 * of any Langevin rule): what an iteration costs before it reads any data,
 * the floor under every backend's time (bench/bench_sparse.R).
 */
#include "sgfs.h"


SEXP sgfs_bench_gradients(SEXP spec, SEXP n_iter)
{
    SEXP prot = PROTECT(sgfs_engine_alloc());
    SEXP theta = PROTECT(Rf_allocVector(REALSXP,
        Rf_length(sgfs_list_elt(spec, "prior_loc"))));
    memset(REAL(theta), 0, (size_t) Rf_length(theta) * sizeof(double));
    /* its batch the minibatch of a chain on this spec */
    sgfs_engine *e = sgfs_eval_engine(prot, spec, theta, sgfs_list_int(spec, "batch_size"), 1);
    const int k = Rf_asInteger(n_iter);
    const int scores = Rf_asLogical(sgfs_list_elt(spec, "bench_scores"));
    SEXP floor_elt = sgfs_list_opt(spec, "bench_floor");
    const int floor_only = floor_elt == R_NilValue ? 0 : Rf_asInteger(floor_elt);
    if (floor_only < 0 || floor_only > 2)
        Rf_error("internal error: 'bench_floor' must be 0, 1 or 2");
    double total = 0.0;
    sgfs_minibatch_begin(&e->batch);
    GetRNGstate();
    for (int s = 0; s < k; s++) {
        if (e->batch.ahead) sgfs_minibatch_window(&e->batch, e->data.N);
        else sgfs_minibatch(&e->batch, e->data.N, e->n);
        if (floor_only) {
            total += e->batch.idx[0];
            if (floor_only == 2) {
                sgfs_rnorm(e->noise, e->D);
                total += e->noise[0];
            }
            continue;
        }
        e->lik.model->score(&e->lik, e->theta, e->batch.idx, e->n, e->grad,
                        scores ? e->lik.G : NULL, NULL);
        total += e->grad[0];
    }
    PutRNGstate();
    UNPROTECT(2);
    return Rf_ScalarReal(total);
}
