#' sgfs: stochastic gradient Fisher scoring and Langevin samplers
#'
#' Bayesian posterior sampling with stochastic gradients for regressions on
#' data too large for full-data MCMC.  [sgfs()] (stochastic gradient Fisher
#' scoring, full or diagonal preconditioner) and [sgld()] (stochastic
#' gradient Langevin dynamics) run in one C engine and return 'coda' objects.
#' With OpenBLAS as R's BLAS (on Debian/Ubuntu: install `libopenblas-dev`)
#' SGFS-f's matrix algebra runs faster.
#'
#' @name sgfs-package
#' @aliases sgfs-package
#' @docType package
#' @keywords internal
#' @useDynLib sgfs, .registration = TRUE, .fixes = "C_"
#' @importFrom stats binomial gaussian coef vcov nobs predict formula update
NULL
