/*
 * sampler_isgd.c - layer-wise isotropic SGD (I-SGD; Franzese, Milios,
 * Filippone and Michiardi, Entropy 2021), in the convention-free form of
 * algorithms vignette 2.10.  The parameters are split into groups p (blocks of
 * the model).  Warm-up, iterations t <= T_w: SGLD steps at eps_t, and over
 * t in (T_a, T_w] the per-group sums acc_p += sum_{j in p} grad_j^2; at T_w
 *
 *   tau_p = acc_p / (T_w - T_a)        (A2-A3: the trace of the group's
 *                                       gradient-noise covariance)
 *   eps_p = 4 / tau_p                  (fixed from then on).
 *
 * Sampling, t > T_w: for j in group p,
 *
 *   w_j     = sqrt(max(tau_p - grad_j^2, 0)) xi_j     (tops the gradient
 *                                                      noise up to tau_p)
 *   theta_j <- theta_j + (eps_p / 2)(grad_j + w_j),
 *
 * so that Var[theta step] = (eps_p/2)^2 tau_p = eps_p, Langevin with a
 * constant diagonal preconditioner.  Optionally tau_p is at least a floor
 * f_p: the linearised chain z' = (1 - eps_p lambda / 2) z + N(0, eps_p) has
 * variance 1 / (lambda (1 - eps_p lambda / 4)), which eps_p = 4 / tau_p
 * inflates without bound where tau_p, the measured gradient variance, is
 * not well above the group's curvature lambda: a group of one parameter
 * (a gaussian model's log_sigma) whose minibatches hold most rows (sds
 * 1.3 to 5.6 times the posterior's on R's CO2 and swiss data and UCI
 * concrete); f_p = 21 lambda_p caps it at 5 %.
 * At temperature T the warm-up's SGLD noise is sqrt(eps_t T) (sampler_sgld.c)
 * and the sampling phase is the rule above on the tempered log posterior:
 * grad / T in place of grad (tau_p then measures its noise, and a floor
 * f_p, set for curvature lambda, becomes f_p / T for lambda / T).
 * spar = (T_a, T_w, group[D] (0-based)[, f[D], each parameter's group's
 * floor]).  State: acc (D, one per group) and tau (D).
 */
#include "sgfs.h"

static int isgd_step(sgfs_engine *e, double eps)
{
    const int D = e->D;
    const double t = *e->iter, from = e->rule.spar[0], to = e->rule.spar[1];
    const double *group = e->rule.spar + 2;
    const double T = e->rule.temperature;
    double *acc = e->rule.state, *tau = e->rule.state + D, *xi = e->noise;
    sgfs_rnorm(xi, D);
    if (t <= to) {
        const double half = 0.5 * eps, sd = sqrt(eps * T);
        for (int j = 0; j < D; j++) {
            const double g = e->grad[j] / T;
            if (t > from) acc[(int) group[j]] += g * g;
            e->theta[j] += half * e->grad[j] + sd * xi[j];
        }
        if (t == to) {
            for (int k = 0; k < D; k++) tau[k] = acc[k] / (to - from);
            if (e->rule.spar_len == 2 + 2 * (R_xlen_t) D)      /* the groups' floors */
                for (int j = 0; j < D; j++)
                    tau[(int) group[j]] = fmax(tau[(int) group[j]], group[D + j] / T);
        }
        return 0;
    }
    for (int j = 0; j < D; j++) {
        const double tp = tau[(int) group[j]], g = e->grad[j] / T;
        if (!(tp > 0.0)) return 1;
        const double w = sqrt(fmax(tp - g * g, 0.0)) * xi[j];
        e->theta[j] += (2.0 / tp) * (g + w);
    }
    e->run.eps_last = 4.0 / tau[(int) group[0]];
    return 0;
}

/* 0 <= T_a < T_w, and D group numbers, whole, in 0..D-1 (indices into acc
   and tau) */
static const char *isgd_check(const double *spar, R_xlen_t n_spar, int D)
{
    if (!(spar[0] >= 0.0 && spar[1] > spar[0])) return "the windows must be 0 <= T_a < T_w";
    if (n_spar != 2 + (R_xlen_t) D && n_spar != 2 + 2 * (R_xlen_t) D)
        return "one group number per parameter (and optionally one floor each) is needed";
    for (int j = 0; j < D; j++) {
        const double g = spar[2 + j];
        if (!(g >= 0.0 && g < D && g == floor(g)))
            return "the group numbers must be whole numbers in 0..D-1";
        if (n_spar > 2 + (R_xlen_t) D && !(spar[2 + D + j] >= 0.0 && R_FINITE(spar[2 + D + j])))
            return "the floors must be finite and non-negative";
    }
    return NULL;
}

const sgfs_sampler sgfs_sampler_isgd = {
    .name = "isgd", .tempered = 1, .state = {0, 2, 0}, .step = isgd_step, .n_spar = 2,
    .check = isgd_check,
    .spar_names = {"warmup_from", "warmup_to"},  /* then each parameter's group
                                                    and, optionally, floor */
    .state_parts = {{"acc", {0, 1, 0}}, {"tau", {0, 1, 0}}}
};
