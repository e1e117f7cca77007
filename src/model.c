/*
 * model.c - the model's evaluations on many rows, shared by the driver,
 * the full-data rules and the evaluation entry points (eval.c).
 *
 *   sgfs_full_score: sum_{i=1}^N g_i(theta) and sum_i l_i(theta), computed
 *     in chunks of the engine's batch size (no N x D temporary).
 *   sgfs_neg_hessian: minus the Hessian of some rows' log-likelihood (the
 *     model's own, or central differences of its score).
 *   sgfs_log_posterior: log p(theta) + sum_i l_i(theta) and its gradient
 *     (for the full-data samplers); with a horseshoe in its coordinates xi.
 *   sgfs_fixed_rows_score: the score sum over the rows in every minibatch.
 */
#include "sgfs.h"


double sgfs_full_score(sgfs_engine *e, const double *theta, double *sum)
{
    double ll = 0.0, *part = e->grad;
    int *idx = e->batch.idx;        /* a contiguous block of examples */
    /* on the compressed rows a GLM's pass reads each row's stored entries
       once (data.c): O(stored entries + P), where chunks would cost P per
       row gathered (P can be 10^5 on a wide sparse design) */
    if (e->data.rows_ptr != NULL && e->lik.model->row_residual != NULL)
        return sgfs_data_glm_pass(&e->lik, theta, sum);
    for (int j = 0; j < e->D; j++) sum[j] = 0.0;
    for (int start = 0; start < e->data.N; start += e->n) {
        int m = e->data.N - start < e->n ? e->data.N - start : e->n;
        for (int i = 0; i < m; i++) idx[i] = start + i;
        double part_ll;
        e->lik.model->score(&e->lik, theta, idx, m, part, NULL, &part_ll);
        for (int j = 0; j < e->D; j++) sum[j] += part[j];
        ll += part_ll;
    }
    return ll;
}

/* Adds minus the Hessian of the examples' log-likelihood to the upper
   triangle of H: the model's own, or central differences of its score,
   column j from theta +- h_j e_j (h_j = 1e-4 max(1, |theta_j|)), each pair
   (i, j) the mean of its two estimates.  Scratch: the first 2D doubles of
   lik->G (2D <= D n). */
void sgfs_neg_hessian(sgfs_lik *lik, const double *theta, const int *idx,
                      int n, double *H)
{
    if (lik->model->neg_hessian) {
        lik->model->neg_hessian(lik, theta, idx, n, H);
        return;
    }
    const int D = lik->D;
    double *th = lik->G, *g = lik->G + D;
    memcpy(th, theta, (size_t) D * sizeof(double));
    for (int j = 0; j < D; j++) {
        const double h = 1e-4 * fmax(1.0, fabs(theta[j]));
        for (int side = -1; side <= 1; side += 2) {
            th[j] = theta[j] + side * h;
            lik->model->score(lik, th, idx, n, g, NULL, NULL);
            const double w = -0.25 * side / h;         /* half of -dg/(2h) */
            for (int i = 0; i < D; i++)
                H[i <= j ? i + (size_t) j * D : j + (size_t) i * D] +=
                    (i == j ? 2.0 : 1.0) * w * g[i];
        }
        th[j] = theta[j];
    }
}

/* with a horseshoe theta is xi (prior_hs.c): the model's point goes to the
   scratch e->hs->beta, and grad (Ds) is the gradient in xi */
double sgfs_log_posterior(sgfs_engine *e, const double *theta, double *grad)
{
    if (e->hs == NULL) {
        double lp = sgfs_full_score(e, theta, grad) + sgfs_prior_logdens(&e->prior, theta);
        sgfs_prior_grad_add(&e->prior, theta, grad);
        return lp;
    }
    double *beta = e->hs->beta;
    sgfs_hs_beta(e->hs, theta, beta);
    double lp = sgfs_full_score(e, beta, grad);
    sgfs_hs_pullback(e->hs, beta, grad);
    lp += sgfs_prior_logdens(&e->prior, theta) + sgfs_hs_prior(e->hs, theta, grad);
    sgfs_prior_grad_add(&e->prior, theta, grad);
    return lp;
}

/* sum[D] of the examples' scores over the fixed rows, in chunks of at most
   n (the scratch arrays' size) */
void sgfs_fixed_rows_score(sgfs_engine *e, const double *theta, double *sum)
{
    double *part = e->grad_lik;            /* free until the gradient is assembled */
    for (int j = 0; j < e->D; j++) sum[j] = 0.0;
    for (int start = 0; start < e->held.n; start += e->n) {
        const int m = e->held.n - start < e->n ? e->held.n - start : e->n;
        e->lik.model->score(&e->lik, theta, e->held.rows + start, m, part, NULL, NULL);
        for (int j = 0; j < e->D; j++) sum[j] += part[j];
    }
}

