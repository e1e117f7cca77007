/*
 * prior.c - independent priors on each coordinate of theta (internal scale),
 * the one definition of the log prior: the engine, the full-data samplers,
 * and R (sgfs_prior_eval: the mode finder, the checks) all call these.
 *
 *   normal(m, s):       log p = -z^2 / 2 - log s - log(2 pi)/2,   z = (theta - m)/s,
 *                       d/dtheta = -(theta - m) / s^2
 *   laplace(m, s):      log p = -|z| - log(2 s),
 *                       d/dtheta = -sign(theta - m) / s
 *   student_t(nu, m, s): log p = lgamma((nu+1)/2) - lgamma(nu/2) - log(nu pi)/2
 *                                - log s - (nu+1)/2 log(1 + z^2/nu),
 *                       d/dtheta = -(nu+1) d / (nu s^2 + d^2),  d = theta - m
 *                       (cauchy(m, s) is nu = 1)
 *   hs:                 a coordinate of the regularised horseshoe, whose
 *                       prior prior_hs.c adds (here: nothing; curvature 1,
 *                       that of a z_j's N(0, 1))
 *
 * and for the log of a scale (a noise sd, a dispersion or shape: theta_j =
 * log v, the prior given on v, Jacobian included; the location unused):
 *
 *   scale_t(nu, s):     v half-t(nu, 0, s) (nu = Inf: half-normal(0, s)),
 *                       log p = log 2 + log t_nu(v; 0, s) + theta,
 *                       d/dtheta = 1 - (nu+1) v^2 / (nu s^2 + v^2)   (1 - v^2/s^2),
 *                       curvature 2 nu (nu+1) s^2 v^2 / (nu s^2 + v^2)^2   (2 v^2/s^2)
 *   scale_exp(s):       v exponential of rate 1/s,
 *                       log p = -log s - v/s + theta,  d/dtheta = 1 - v/s,
 *                       curvature v/s
 *
 * (both curvatures exact and positive), and for the logit of a fraction
 * (a cutpoint's stick-breaking coordinate, model_cumulative.c):
 *
 *   logit_beta(a, b):   theta_j = logit(phi), phi ~ Beta(a, b) (a in the
 *                       df array, b in scale, location 0),
 *                       log p = -a softplus(-theta) - b softplus(theta) - log B(a, b),
 *                       d/dtheta = a - (a + b) phi,  curvature (a + b) phi (1 - phi)
 *
 * (exact and positive).
 *
 * The curvature (sgfs_prior_curvature) is the prior's part of minus the
 * Hessian for Newton's mode finder and the metric at the mode, which must be
 * positive definite: 1/s^2 for normal; for laplace, whose Hessian is 0 off
 * its kink, 1/(2 s^2), the precision of the normal with the same variance;
 * for student_t its exact value (nu+1)(nu s^2 - d^2)/(nu s^2 + d^2)^2
 * where that is at least the Fisher information (nu+1)/((nu+3) s^2), and
 * the Fisher information beyond (the exact value turns negative in the tails,
 * |d| > s sqrt(nu)): a positive substitute, exact near the prior's centre.
 * The constant precision the SGFS samplers' preconditioners use (the
 * algorithms vignette, 2.8b) is computed in R (the same numbers at the
 * location: 1/s^2, 1/(2 s^2), (nu+1)/((nu+3) s^2)) and read from
 * p->prec.
 *
 * A chain is diverging when a coordinate is not finite or more than SGFS_FAR
 * prior scales from the prior's location (log prior below -5e23 for the
 * normal: no data outweighs that), which catches an exploding chain long
 * before it overflows.
 */
#include "sgfs.h"
/* Rmath.h would remap the names df and beta */
double Rf_lgammafn(double);

#define HALF_LOG_2PI 0.918938533204672741780329736406
#define LOG_PI 1.144729885849400174143427351353

double Rf_lbeta(double, double);

static double student_logdens(double d, double s, double nu)
{
    const double z = d / s;
    return Rf_lgammafn(0.5 * (nu + 1.0)) - Rf_lgammafn(0.5 * nu) - 0.5 * (log(nu) + LOG_PI)
        - log(s) - 0.5 * (nu + 1.0) * log1p(z * z / nu);
}

double sgfs_prior_logdens(const sgfs_prior *p, const double *theta)
{
    double lp = 0.0;
    for (int j = 0; j < p->D; j++) {
        const double s = p->scale[j], d = theta[j] - p->loc[j], z = d / s;
        switch (p->type[j]) {
        case SGFS_PRIOR_LAPLACE: lp += -fabs(z) - log(2.0 * s); break;
        case SGFS_PRIOR_STUDENT: lp += student_logdens(d, s, p->df[j]); break;
        case SGFS_PRIOR_HS:      break;                      /* prior_hs.c's */
        case SGFS_PRIOR_SCALE_T: {
            const double v = exp(theta[j]), nu = p->df[j];
            lp += M_LN2 + theta[j] + (R_FINITE(nu) ? student_logdens(v, s, nu)
                                      : -0.5 * (v / s) * (v / s) - log(s) - HALF_LOG_2PI);
            break;
        }
        case SGFS_PRIOR_SCALE_EXP: lp += theta[j] - log(s) - exp(theta[j]) / s; break;
        case SGFS_PRIOR_LOGIT_BETA: {
            const double a = p->df[j];
            lp += -a * sgfs_softplus(-theta[j]) - s * sgfs_softplus(theta[j]) - Rf_lbeta(a, s);
            break;
        }
        default:                 lp += -0.5 * z * z - log(s) - HALF_LOG_2PI;
        }
    }
    return lp;
}

int sgfs_prior_far(const sgfs_prior *p, const double *theta)
{
    for (int j = 0; j < p->D; j++)
        if (!R_FINITE(theta[j]) ||
            fabs(theta[j] - p->loc[j]) > SGFS_FAR * p->scale[j])
            return 1;
    return 0;
}

void sgfs_prior_grad_add(const sgfs_prior *p, const double *theta,
                         double *grad)
{
    for (int j = 0; j < p->D; j++) {
        const double s = p->scale[j], d = theta[j] - p->loc[j];
        switch (p->type[j]) {
        case SGFS_PRIOR_HS:      break;
        case SGFS_PRIOR_LAPLACE: grad[j] -= ((d > 0.0) - (d < 0.0)) / s; break;
        case SGFS_PRIOR_STUDENT: {
            const double nu = p->df[j];
            grad[j] -= (nu + 1.0) * d / (nu * s * s + d * d);
            break;
        }
        case SGFS_PRIOR_SCALE_T: {
            const double v2 = exp(2.0 * theta[j]), nu = p->df[j];
            grad[j] += 1.0 - (R_FINITE(nu) ? (nu + 1.0) * v2 / (nu * s * s + v2) : v2 / (s * s));
            break;
        }
        case SGFS_PRIOR_SCALE_EXP: grad[j] += 1.0 - exp(theta[j]) / s; break;
        case SGFS_PRIOR_LOGIT_BETA:
            grad[j] += p->df[j] - (p->df[j] + s) * sgfs_sigmoid(theta[j]);
            break;
        default: grad[j] -= d / (s * s);
        }
    }
}

void sgfs_prior_curvature(const sgfs_prior *p, const double *theta, double *h)
{
    for (int j = 0; j < p->D; j++) {
        const double s = p->scale[j], d = theta[j] - p->loc[j];
        switch (p->type[j]) {
        case SGFS_PRIOR_HS:      h[j] = 1.0; break;          /* (a z_j's N(0, 1)) */
        case SGFS_PRIOR_LAPLACE: h[j] = 0.5 / (s * s); break;
        case SGFS_PRIOR_STUDENT: {
            const double nu = p->df[j], q = nu * s * s + d * d;
            const double exact = (nu + 1.0) * (nu * s * s - d * d) / (q * q);
            const double fisher = (nu + 1.0) / ((nu + 3.0) * s * s);
            h[j] = exact > fisher ? exact : fisher;
            break;
        }
        case SGFS_PRIOR_SCALE_T: {
            const double v2 = exp(2.0 * theta[j]), nu = p->df[j], q = nu * s * s + v2;
            h[j] = R_FINITE(nu) ? 2.0 * nu * (nu + 1.0) * s * s * v2 / (q * q) : 2.0 * v2 / (s * s);
            break;
        }
        case SGFS_PRIOR_SCALE_EXP: h[j] = exp(theta[j]) / s; break;
        case SGFS_PRIOR_LOGIT_BETA: {
            const double phi = sgfs_sigmoid(theta[j]);
            h[j] = (p->df[j] + s) * phi * (1.0 - phi);
            break;
        }
        default: h[j] = 1.0 / (s * s);
        }
    }
}

/* the prior's arrays (spec$prior_*, D each; prior_df only where a
   student_t prior needs it: absent in specs of fits made before it), checked */
void sgfs_prior_setup(sgfs_prior *p, SEXP spec, int D)
{
    p->D = D;
    p->type = INTEGER(sgfs_list_typed(spec, "prior_type", INTSXP, D));
    p->loc = REAL(sgfs_list_typed(spec, "prior_loc", REALSXP, D));
    p->scale = REAL(sgfs_list_typed(spec, "prior_scale", REALSXP, D));
    p->prec = REAL(sgfs_list_typed(spec, "prior_prec", REALSXP, D));
    SEXP df = sgfs_list_opt(spec, "prior_df");
    p->df = df != R_NilValue ? REAL(sgfs_list_typed(spec, "prior_df", REALSXP, D)) : NULL;
    sgfs_prior_check(p);
}

/* checks the prior arrays once, at set-up */
void sgfs_prior_check(const sgfs_prior *p)
{
    for (int j = 0; j < p->D; j++) {
        const int type = p->type[j];
        if (type < SGFS_PRIOR_NORMAL || type > SGFS_PRIOR_LOGIT_BETA)
            Rf_error("internal error: prior type %d of parameter %d is unknown", type, j + 1);
        if (!(p->scale[j] > 0.0))
            Rf_error("internal error: the prior scale of parameter %d is not positive", j + 1);
        if ((type == SGFS_PRIOR_STUDENT || type == SGFS_PRIOR_SCALE_T ||
             type == SGFS_PRIOR_LOGIT_BETA) &&
            (p->df == NULL || !(p->df[j] > 0.0)))
            Rf_error("internal error: the %s prior of parameter %d has no positive df",
                     type == SGFS_PRIOR_LOGIT_BETA ? "logit_beta" : "student_t", j + 1);
    }
}

/* sgfs_prior_eval(spec, theta): list(value = log p(theta), grad, curvature)
   from the spec's prior arrays alone (no data are touched) */
SEXP sgfs_prior_eval(SEXP spec, SEXP theta)
{
    sgfs_prior p;
    sgfs_prior_setup(&p, spec, Rf_length(theta));
    if (TYPEOF(theta) != REALSXP)
        Rf_error("internal error: 'theta' must be doubles");
    const char *names[] = {"value", "grad", "curvature", ""};
    SEXP out = PROTECT(Rf_mkNamed(VECSXP, names));
    SEXP grad = Rf_allocVector(REALSXP, p.D);
    SET_VECTOR_ELT(out, 1, grad);
    SEXP curv = Rf_allocVector(REALSXP, p.D);
    SET_VECTOR_ELT(out, 2, curv);
    memset(REAL(grad), 0, (size_t) p.D * sizeof(double));
    SET_VECTOR_ELT(out, 0, Rf_ScalarReal(sgfs_prior_logdens(&p, REAL(theta))));
    sgfs_prior_grad_add(&p, REAL(theta), REAL(grad));
    sgfs_prior_curvature(&p, REAL(theta), REAL(curv));
    UNPROTECT(1);
    return out;
}
