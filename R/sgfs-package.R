#' sgfs: stochastic gradient Fisher scoring and Langevin samplers
#'
#' Bayesian posterior sampling with stochastic gradients for regressions on
#' data too large for full-data MCMC.  [sgfs()] (stochastic gradient Fisher
#' scoring, full or diagonal preconditioner) and [sgld()] (stochastic
#' gradient Langevin dynamics) run in one C engine and return 'coda' objects.
#' With OpenBLAS as R's BLAS (on Debian/Ubuntu: install `libopenblas-dev`)
#' SGFS-f's matrix algebra runs several times faster.
#'
#' @keywords internal
#' @useDynLib sgfs, .registration = TRUE, .fixes = "C_"
"_PACKAGE"

#' @importFrom stats binomial gaussian coef vcov nobs predict formula update
NULL
