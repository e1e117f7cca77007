## Judging a run: its error against a reference as it goes (Ahn et al.
## 2012, Fig. 2) and the usual predictive scores.

#' Error at time T: a run's relative errors as it goes
#'
#' The curves of Ahn, Korattikara and Welling (2012, Fig. 2): [rel_error()]'s
#' \eqn{E_1}{E_1} and \eqn{E_2}{E_2} of the first \eqn{t}{t} kept draws (running mean
#' and covariance with divisor \eqn{t}{t}) against a reference, at evenly
#' spaced \eqn{t}{t}, with the sampler's time to reach them.
#'
#' @param fit a fit of any sampler; several chains are pooled draw by draw
#'   (the \eqn{t}{t}-th row of every chain counts as \eqn{t}{t}).
#' @param reference a fit, a matrix of draws, or `list(mean =, cov =)`: a
#'   long full-data run ([hmc()], [mala()]) or an exact posterior.
#' @param points the number of evenly spaced \eqn{t}{t} at which to evaluate.
#' @return A data frame with the number of kept draws per chain `draws`, the
#'   `iteration` they reach, the sampler's `seconds` to get there (the run's
#'   time spread evenly over its iterations), `E1` and `E2`; its last row is
#'   the error of the whole run.  Its `plot()` method draws \eqn{E_1}{E_1} or
#'   \eqn{E_2}{E_2} against the seconds on log scales; `add = TRUE` adds another
#'   sampler's curve.
#' @references Ahn, S., Korattikara, A. and Welling, M. (2012). Bayesian
#'   posterior sampling via stochastic gradient Fisher scoring. ICML.
#' @examples
#' data(Pima.tr, package = "MASS")
#' set.seed(1)
#' ref <- hmc(type ~ glu + bmi, data = Pima.tr, n_iter = 3000)
#' fit <- sgld(type ~ glu + bmi, data = Pima.tr, n_iter = 5000, batch_size = 50)
#' curve <- error_curve(fit, ref)
#' tail(curve, 3)
#' plot(curve)
#' plot(error_curve(sgfs(type ~ glu + bmi, data = Pima.tr, n_iter = 5000, batch_size = 50), ref),
#'      add = TRUE, col = "red")
#' @export
error_curve <- function(fit, reference, points = 20L) {
    info <- if (inherits(fit, "sgfit")) sgfit_info(fit)
    if (is.null(info)) stop_arg("fit", "must be a fit returned by one of the sgfs samplers")
    ref <- reference_moments(reference)
    chains <- chain_draws(fit)
    T <- min(vapply(chains, nrow, 0L))
    if (length(ref$mean) != ncol(chains[[1L]]))
        stop_arg("reference", sprintf("has %d parameters; the fit has %d",
                                      length(ref$mean), ncol(chains[[1L]])))
    points <- check_count(points, "points", 1L)
    at <- unique(round(seq(max(2, T / points), T, length.out = min(points, T))))
    errors <- vapply(at, function(t)
        rel_error(do.call(rbind, lapply(chains, function(x) x[seq_len(t), , drop = FALSE])),
                  ref$mean, ref$cov), c(E1 = 0, E2 = 0))
    iteration <- info$spec$burnin + at * info$spec$thin
    structure(data.frame(draws = at, iteration = iteration,
                         seconds = info$elapsed / info$chains * iteration / info$n_iter,
                         t(errors)),
              class = c("sgfs_error_curve", "data.frame"))
}

reference_moments <- function(reference) {
    if (is.list(reference) && !is.null(reference$mean) && !is.null(reference$cov) &&
        !inherits(reference, "sgfit"))
        return(list(mean = as.double(reference$mean), cov = as.matrix(reference$cov)))
    d <- if (inherits(reference, "sgfit")) all_draws(reference) else reference
    if (!is.matrix(d) || !is.numeric(d) || nrow(d) < 2L)
        stop_arg("reference", "must be a fit, a matrix of draws or list(mean =, cov =)")
    list(mean = colMeans(d), cov = stats::cov(d) * (nrow(d) - 1) / nrow(d))
}

#' Scores of a posterior predictive
#'
#' The usual scores of predictions against the observed responses, from the
#' output of `predict()`: for classification, the posterior predictive
#' probabilities (`type = "response"`: a vector of event probabilities for
#' `binomial()`, a matrix with one column per level for `categorical()`);
#' for regression, `predict(fit, newdata, interval = "prediction")` (its
#' `fit` and `sd` columns) or a vector of predicted means.
#'
#' Classification: `log_loss`, \eqn{-\frac1n\sum_i \log \hat p_{i,y_i}}{-1/n sum_i log phat_(i,y_i)}
#' (probabilities clipped to \eqn{[10^{-15}, 1 - 10^{-15}]}{[10^(-15), 1 - 10^(-15)]}); `error`, the
#' share of rows whose most probable class is wrong; `brier`, the mean
#' squared distance between the probability vector and the one-hot
#' response; `ece`, the expected calibration error: the confidence (largest
#' probability) and the accuracy compared in 10 equal-width confidence bins,
#' weighted by the bins' sizes.  Regression: `rmse` and, with a predictive
#' sd, `log_lik`, the mean log density of the responses under a normal
#' predictive with that mean and sd (exact for a Gaussian predictive; for a
#' mixture over draws it is an approximation).
#'
#' @param pred the predictions, as above.
#' @param y the observed responses: a factor, 0/1 or logical for
#'   classification, numbers for regression.
#' @return A named numeric vector.
#' @examples
#' data(Pima.tr, Pima.te, package = "MASS")
#' fit <- sgfs(type ~ ., data = Pima.tr, n_iter = 3000, batch_size = 50)
#' predictive_scores(predict(fit, Pima.te, type = "response"), Pima.te$type)
#' @export
predictive_scores <- function(pred, y) {
    regression <- is.numeric(y) && !all(y %in% c(0, 1)) ||
        (is.matrix(pred) && identical(colnames(pred), c("fit", "sd")))
    if (regression) return(regression_scores(pred, y))
    P <- if (is.matrix(pred)) pred else cbind(1 - pred, pred)
    cls <- if (is.factor(y)) as.integer(y) else as.integer(y) + 1L
    if (nrow(P) != length(cls)) stop_arg("y", sprintf("has %d values for %d predictions",
                                                      length(cls), nrow(P)))
    if (anyNA(cls) || any(cls > ncol(P)) || anyNA(P) || any(P < 0 | P > 1))
        stop_arg("pred", "must be probabilities (one column per level of y)")
    onehot <- diag(ncol(P))[cls, , drop = FALSE]
    p_obs <- pmin(pmax(P[cbind(seq_along(cls), cls)], 1e-15), 1 - 1e-15)
    top <- max.col(P, ties.method = "first")
    conf <- P[cbind(seq_along(cls), top)]
    bin <- pmin(floor(conf * 10), 9)
    ece <- sum(vapply(split(seq_along(conf), bin), function(r)
        length(r) * abs(mean(conf[r]) - mean(top[r] == cls[r])), 0)) / length(conf)
    c(log_loss = -mean(log(p_obs)), error = mean(top != cls),
      brier = mean(rowSums((P - onehot)^2)), ece = ece)
}

regression_scores <- function(pred, y) {
    mu <- if (is.matrix(pred)) pred[, "fit"] else pred
    if (length(mu) != length(y)) stop_arg("y", sprintf("has %d values for %d predictions",
                                                       length(y), length(mu)))
    out <- c(rmse = sqrt(mean((mu - y)^2)))
    if (is.matrix(pred) && "sd" %in% colnames(pred))
        out["log_lik"] <- mean(stats::dnorm(y, mu, pred[, "sd"], log = TRUE))
    out
}
