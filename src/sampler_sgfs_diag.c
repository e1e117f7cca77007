/*
 * sampler_sgfs_diag.c - SGFS with a diagonal preconditioner (SGFS-d; Ahn,
 * Korattikara and Welling 2012, section 4; algorithms vignette 2.8 and 2.8b):
 *
 *   v_j   = sum_i (G_ji - gbar_j)^2 / (m - 1)   (the minibatch's first m =
 *           fisher_rows rows; fisher.c)
 *   I_j   = (1 - kappa_t) I_j + kappa_t v_j,          kappa_t = 1/t'
 *   f_j   = max(I_j, Lambda_j / N)          (floor for near-zero diagonals)
 *   theta_j <- theta_j + 2 (grad_j + eta_j) / (gamma N (1 + alpha^2) f_j + Lambda_j),
 *   eta_j ~ N(0, alpha^2 gamma N f_j),  alpha^2 = 4 / eps,
 *   gamma = 1 + (N/n) (N - n)/(N - 1).
 *
 * At temperature T: gamma_T = 1 + (gamma - 1) / T for gamma, eta scaled by
 * sqrt(T) (fisher.c).
 *
 * The robust rule (fisher.c): B_j = gamma N f_j + Lambda_j in
 * place of gamma N f_j, the step 2 (grad_j + eta_j) / ((1 + alpha^2) B_j),
 * eta_j ~ N(0, alpha^2 B_j).  Given the curvature at the mode (its
 * diagonal H_jj; spec$sgfs_curvature), H_jj takes the place of N f_j +
 * Lambda_j in both rules (the reason: sgfs_blockdiag.c).  Cost O(n D).  At large steps (small alpha) it under-estimates posterior
 * variances (Ahn et al. 2012, section 5.1).  State: I (D) and the count t'.
 * During burn-in, and until I_t has averaged scores of 2D examples, steps
 * are kept within a trust region (fisher.c).  With control variates in the
 * metric of the mode (SGFS-CV, fisher.c): B_j = 1 + s I_j, s the
 * minibatch's noise scale, I fixed after burn-in.
 */
#include "sgfs.h"

static int diag_step(sgfs_engine *e, double eps)
{
    const int D = e->D;
    double *fisher = e->rule.state, *count = e->rule.state + D;
    double *gbar = e->rule.work, *v = e->rule.work + D;
    const double *G = e->lik.G;
    const double gN = sgfs_gamma_tempered(e) * e->data.N, T = e->rule.temperature;
    const double alpha2 = R_FINITE(eps) ? 4.0 / eps : 0.0;

    if (!sgfs_fisher_frozen(e)) {          /* (in a metric, fixed after burn-in) */
        sgfs_row_moments(G, D, e->rule.fisher_rows, gbar, v);   /* (fisher.c) */
        sgfs_running_mean(fisher, v, D, sgfs_fisher_weight(e, count));
    }

    /* r = grad + eta into gbar, x = r / a into v */
    const double *H = e->rule.curvature, *xi = e->noise;
    if (alpha2 > 0.0) sgfs_rnorm(e->noise, D);
    const double s = e->metric.U ? sgfs_noise_scale(e) : 0.0;
    for (int j = 0; j < D; j++) {
        if (e->metric.U) {             /* B = 1 + s f in the metric (fisher.c) */
            const double B = 1.0 + s * fisher[j];
            gbar[j] = e->grad[j] + (alpha2 > 0.0 ? sqrt(alpha2 * B * T) * xi[j] : 0.0);
            v[j] = gbar[j] / ((1.0 + alpha2) * B);
            continue;
        }
        double f = fmax(fisher[j], e->prior.prec[j] / e->data.N);
        /* what the preconditioner adds to gamma N f (times 1 + alpha^2 in
           the paper's rule): Lambda_j, or H_jj - N f, the curvature in place
           of N f + Lambda_j (sgfs_blockdiag.c) */
        const double extra = H == NULL ? e->prior.prec[j] : H[j] - e->data.N * f;
        gbar[j] = e->grad[j];
        if (e->rule.robust) {
            const double B = gN * f + extra;
            if (alpha2 > 0.0) gbar[j] += sqrt(alpha2 * B * T) * xi[j];
            v[j] = gbar[j] / ((1.0 + alpha2) * B);
            continue;
        }
        if (alpha2 > 0.0) gbar[j] += sqrt(alpha2 * gN * f * T) * xi[j];
        v[j] = gbar[j] / (gN * (1.0 + alpha2) * f + extra);
    }
    const double shrink = sgfs_burnin_shrink(e, v, gbar);
    for (int j = 0; j < D; j++) e->theta[j] += 2.0 * shrink * v[j];
    return 0;
}

const sgfs_sampler sgfs_sampler_sgfs_diag = {
    /* state: I, count; scratch: gbar, v */
    .name = "sgfs_diag", .tempered = 1, .needs_scores = 1, .fixed_after_burnin = 1,
    .fisher = SGFS_FISHER_DIAG, .state = {0, 1, 1}, .work = {0, 2, 0},
    .step = diag_step, .n_spar = 1, .spar_names = {"restart"},
    .state_parts = {{"I", {0, 1, 0}}, {"count", {0, 0, 1}}}
};
