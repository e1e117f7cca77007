#' Relative errors of the posterior mean and covariance
#'
#' The accuracy measures of Ahn, Korattikara and Welling (2012, eq. 14):
#' \deqn{E_1 = \frac{\sum_i |\bar\theta_i - \mu_i|}{\sum_i |\mu_i|}, \qquad
#'       E_2 = \frac{\sum_{ij} |C_{ij} - \Sigma_{ij}|}{\sum_{ij} |\Sigma_{ij}|},}{E_1 = ((sum_i |thetabar_i - mu_i|)/(sum_i |mu_i|)), E_2 = ((sum_ij |C_ij - Sigma_ij|)/(sum_ij |Sigma_ij|)),}
#' where \eqn{\bar\theta}{thetabar} and \eqn{C}{C} are the mean and covariance (with
#' divisor \eqn{T}{T}) of the draws and \eqn{\mu}{mu}, \eqn{\Sigma}{Sigma} a reference.
#'
#' @param draws a matrix of draws (rows) or a fit / coda object (chains are
#'   pooled).
#' @param ref_mean reference posterior mean.
#' @param ref_cov reference posterior covariance.
#' @return A named vector `c(E1 = , E2 = )`.
#' @examples
#' set.seed(1)
#' S <- matrix(c(1, 0.5, 0.5, 2), 2)
#' z <- matrix(rnorm(20000), ncol = 2) %*% chol(S) + rep(c(1, -1), each = 10000)
#' rel_error(z, c(1, -1), S)
#' @export
rel_error <- function(draws, ref_mean, ref_cov) {
    d <- if (inherits(draws, c("mcmc", "mcmc.list"))) all_draws(draws) else as.matrix(draws)
    if (!is.numeric(d)) stop_arg("draws", "must be a numeric matrix or a coda object")
    D <- ncol(d)
    if (length(ref_mean) != D) stop_arg("ref_mean", sprintf("must have %d values", D))
    ref_cov <- as.matrix(ref_cov)
    if (!all(dim(ref_cov) == D)) stop_arg("ref_cov", sprintf("must be %d x %d", D, D))
    m <- colMeans(d)
    C <- stats::cov(d) * (nrow(d) - 1) / nrow(d)
    c(E1 = sum(abs(m - ref_mean)) / sum(abs(ref_mean)),
      E2 = sum(abs(C - ref_cov)) / sum(abs(ref_cov)))
}
