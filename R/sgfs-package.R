#' sgfs: stochastic gradient Fisher scoring and Langevin samplers
#'
#' Bayesian posterior sampling with stochastic gradients for regressions on
#' data too large for full-data MCMC.  [sgfs()] (stochastic gradient Fisher
#' scoring, full, block-diagonal or diagonal preconditioner), [sgld()]
#' (stochastic gradient Langevin dynamics), [sgldcv()] (with control variates), [psgld()] (its
#' RMSprop-preconditioned variant), [sghmc()] and [sgnht()] (momentum
#' samplers), [osgfs()] ("optimal" SGFS), [isgd()] (isotropic SGD), and the
#' full-data baselines [mala()] and [hmc()] run in one C engine and return
#' 'coda' objects; [sga()] finds the posterior mode.  Step sizes can follow
#' [schedule_polynomial()] or
#' [schedule_cyclical()], and [rel_error()] measures accuracy against a
#' reference.
#' With OpenBLAS as R's BLAS (on Debian/Ubuntu: install `libopenblas-dev`)
#' SGFS-f's matrix algebra runs faster.
#'
#' @name sgfs-package
#' @aliases sgfs-package
#' @docType package
#' @keywords internal
#' @useDynLib sgfs, .registration = TRUE, .fixes = "C_"
#' @importFrom stats binomial gaussian coef vcov nobs predict formula update
#' @importFrom stats fitted residuals terms model.frame model.matrix family sigma
#' @importFrom stats confint window weights
#' @importFrom coda mcmc
NULL
## (importing from coda loads its namespace with ours, so that coda's methods,
## as.matrix() of an mcmc.list say, work on a fit restored with readRDS())
