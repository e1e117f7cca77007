/*
 * ranef.h - the random-effect blocks of a mixed model (ranef.c)
 */
#ifndef SGFS_RANEF_H
#define SGFS_RANEF_H

/* the sds' prior of a term (rstanarm's names; sgfs_ranef_prior in sgfs.h) */
enum { SGFS_SD_HALF_NORMAL = 1, SGFS_SD_HALF_T, SGFS_SD_EXPONENTIAL, SGFS_SD_DECOV };

/* one group of one term, as its update sees it */
typedef struct sgfs_ranef_group {
    const sgfs_lik *lik;        /* the model over the data                     */
    const double *theta;        /* the model's other coordinates (log sigma)   */
    int q, m;                   /* the term's coefficients, the group's rows   */
    const int *rows;            /* its m rows (0-based)                        */
    const double *eta0;         /* m: their predictors without its effects     */
    const double *z;            /* m x q: their covariates of the term         */
    const double *prec;         /* q x q: Sigma^-1                             */
    double *start;              /* q: Newton's start, the group's last mode
                                   (written back), or NULL: from 0           */
    double *work;               /* 8 q + 4 q^2 doubles of scratch             */
} sgfs_ranef_group;

/* one term's covariance given its effects */
typedef struct sgfs_ranef_cov {
    int q, G;                   /* coefficients, groups                        */
    const double *Q;            /* q x q: sum_g b_g b_g'                       */
    const sgfs_ranef_prior *prior;
    double dispersion;          /* decov's d: a gaussian model's sigma, else 1 */
    double *work;               /* q + 2 q^2 doubles                           */
} sgfs_ranef_cov;

/* one update of the group's effects b (q): returns 1 if b moved, 0 if the
   proposal was refused, -1 if the conditional's mode could not be found */
int sgfs_ranef_group_update(const sgfs_ranef_group *g, double *b, double df);
/* log density of the covariance's coordinates x (q log sds, then the
   canonical partial correlations' atanh), and one slice-sampling sweep */
double sgfs_ranef_cov_logdens(const sgfs_ranef_cov *cv, const double *x);
void sgfs_ranef_cov_update(const sgfs_ranef_cov *cv, double *x);
/* the sds' log prior (up to a constant) */
double sgfs_ranef_sd_logprior(const sgfs_ranef_prior *p, const double *s, int q,
                              double dispersion);
/* the sds and then the correlations below Omega's diagonal, column by
   column (q (q + 1) / 2 into out) at the coordinates x; work: q^2 doubles */
void sgfs_ranef_sds_cors(const double *x, int q, double *out, double *work);
/* Sigma^-1 (q x q) at the coordinates x; work: q + q^2 doubles */
void sgfs_ranef_precision(const double *x, int q, double *prec, double *work);
/* (P b)_c, row c of the q x q precision P times one group's effects b */
double sgfs_ranef_prec_dot(const double *prec, int q, int c, const double *b);
/* the translation delta of coefficient c (0-based) of the G groups'
   effects b (q x G), the fixed part's prior along the move normal with
   precision fixed_prec and linear term fixed_lin */
double sgfs_ranef_translation(const double *b, int q, int G, int c, const double *prec,
                              double fixed_prec, double fixed_lin);
/* a slice-sampling draw (stepping out by w, shrinking) from the density
   exp(f(ctx, .)), starting at u */
double sgfs_slice(double u, double (*f)(const void *ctx, double v), const void *ctx, double w);

#endif
