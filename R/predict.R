#' Posterior predictions
#'
#' Averages the model's prediction over the posterior draws (the posterior
#' predictive mean), optionally with credible intervals.
#'
#' @param object a fit of [sgfs()] or [sgld()].
#' @param newdata a data frame (formula fits) or a matrix of predictors
#'   (matrix fits; its columns matched to the fit's by name when both have
#'   names, else by position); the training data when missing.
#' @param type `"link"` (linear predictor), `"response"` (mean of the
#'   response: a probability for `binomial()`; for `categorical()` a matrix
#'   of class probabilities, one column per level), or `"class"`
#'   (`binomial()`: the class whose posterior predictive probability exceeds
#'   0.5; `categorical()`: the most probable class).
#' @param interval `"none"`, `"credible"`: equal-tailed posterior intervals
#'   of the link or response mean, or `"prediction"` (`gaussian()` fits):
#'   the posterior predictive distribution's mean and standard deviation
#'   (columns `fit` and `sd`), which adds the noise variance to the spread
#'   of the mean.
#' @param level credible level.
#' @param draws `NULL` to average over every kept draw, or a number: that
#'   many draws, evenly spaced over the chain(s), for a faster prediction.
#' @param ... unused.
#' @return A vector (or, with intervals, a matrix with columns `fit`, `lwr`,
#'   `upr`), one row per row of `newdata`; `NA` for rows with missing
#'   predictors (and, without `newdata`, for rows the fit's `na.action =
#'   na.exclude` left out).
#' @seealso [sgfit-posterior] for the values at every draw
#'   (`posterior_predict()`, `posterior_epred()`, `log_lik()`, ...).
#' @examples
#' data(Pima.tr, Pima.te, package = "MASS")
#' fit <- sgfs(type ~ ., data = Pima.tr, n_iter = 2000, batch_size = 50)
#' p <- predict(fit, newdata = Pima.te, type = "response")
#' mean((p > 0.5) == (Pima.te$type == "Yes"))
#' @export
predict.sgfit <- function(object, newdata, type = c("link", "response", "class"),
                          interval = c("none", "credible", "prediction"), level = 0.95,
                          draws = NULL, ...) {
    type <- choose_arg(type, c("link", "response", "class"), "type")
    interval <- choose_arg(interval, c("none", "credible", "prediction"), "interval")
    info <- sgfit_info(object)
    if (!is.null(info$design$custom))
        stop("predict() needs a model with a predictive distribution, and a custom_model() ",
             "defines only its likelihood: compute predictions from the draws, as.matrix(fit)",
             call. = FALSE)
    if (missing(newdata)) newdata <- NULL
    if (!is.null(info$spec$pred_x)) {
        if (is.null(newdata)) return(predict_kept(info, type, interval))
        if (!is.null(info$design$network))
            stop_arg("newdata", "cannot be predicted: this fit kept its predictive on the ",
                     "predictive() rows, and not every parameter's draws")
    }
    if (interval == "prediction" && info$family$family != "gaussian")
        stop_arg("interval", "\"prediction\" needs a gaussian() fit")
    X <- if (is.null(newdata)) training_design(info) else new_design(info, newdata)
    predict_rows(object, info, X, newdata, type, interval, level, draws)
}

## predict() for the rows of the design X (the training rows when newdata
## is NULL, padded for na.exclude), from the fit's draws
predict_rows <- function(object, info, X, newdata, type, interval, level, draws) {
    B <- prediction_draws(object, draws)
    if (!is.null(info$design$network)) X <- X[, colnames(X) != "(Intercept)", drop = FALSE]
    if (info$family$family == "categorical")
        return(predict_categorical(B, info, X, newdata, type, interval))
    if (type == "class" && info$family$family != "binomial")
        stop_arg("type", "\"class\" needs a binomial() or categorical() fit")
    inv <- if (type == "link") identity else info$family$linkinv
    if (interval == "prediction") return(predict_gaussian(info, X, B, newdata))
    probs <- if (interval == "credible") {
        level <- check_positive(level, "level")
        if (level >= 1) stop_arg("level", "must be below 1")
        c((1 - level) / 2, (1 + level) / 2)
    }
    out <- row_summaries(info, X, B, newdata, c("fit", if (length(probs)) c("lwr", "upr")),
                         function(eta) {
                             m <- inv(eta)
                             cbind(rowMeans(m), if (length(probs))
                                 t(apply(m, 1L, stats::quantile, probs, names = FALSE)))
                         })
    if (type == "class") {
        cls <- as.integer(out[, 1L] > 0.5)
        return(if (is.null(info$levels)) cls else factor(info$levels[cls + 1L], info$levels))
    }
    if (is.null(probs)) return(stats::setNames(out[, 1L], rownames(out)))
    out
}

## categorical(): the posterior predictive class probabilities (rows x K,
## averaged over the draws), or the most probable class
predict_categorical <- function(B, info, X, newdata, type, interval) {
    if (type == "link")
        stop_arg("type", "must be \"response\" or \"class\" for a categorical() fit")
    if (interval != "none")
        stop_arg("interval", "must be \"none\" for a categorical() fit")
    K <- length(info$levels)
    out <- matrix(NA_real_, nrow(X), K, dimnames = list(rownames(X), info$levels))
    ok <- which(stats::complete.cases(X))
    acc <- matrix(0, length(ok), K)
    for (s in seq_len(nrow(B)))
        acc <- acc + info$family$linkinv(draw_link(info, X[ok, , drop = FALSE], B[s, ]))
    out[ok, ] <- acc / nrow(B)
    if (is.null(newdata)) out <- stats::napredict(info$na.action, out)
    if (type == "response") return(out)
    cls <- max.col(out, ties.method = "first")
    factor(info$levels[cls], info$levels)
}

## gaussian(): the posterior predictive's mean and sd, from each draw's
## mean mu_s and noise variance sigma_s^2: sd^2 = mean(sigma_s^2) + var(mu_s)
predict_gaussian <- function(info, X, B, newdata) {
    s2 <- sigma_draws(info, B)^2
    row_summaries(info, X, B, newdata, c("fit", "sd"), function(mu) {
        fit <- rowMeans(mu)
        cbind(fit, sqrt(mean(s2) + rowMeans((mu - fit)^2)))
    })
}

## gaussian(): the noise sd at each draw (rows of B): sampled (log_sigma),
## or fixed by the user (the engine's mpar, on the standardised scale)
sigma_draws <- function(info, B) {
    if ("log_sigma" %in% colnames(B)) return(exp(B[, "log_sigma"]))
    rep(exp(info$spec$mpar[length(info$spec$mpar)]) * info$design$y_scale, nrow(B))
}

## Summaries of the draws' link values for the rows of X: rows with missing
## predictors get NA, the others are done in blocks, so that no rows x draws
## matrix larger than ~1e6 is formed; summarise() maps a block's rows x draws
## link values to its rows x length(columns) summaries
row_summaries <- function(info, X, B, newdata, columns, summarise) {
    out <- matrix(NA_real_, nrow(X), length(columns), dimnames = list(rownames(X), columns))
    ok <- which(stats::complete.cases(X))
    block <- max(1L, floor(1e6 / nrow(B)))
    for (r in split(ok, ceiling(seq_along(ok) / block)))
        out[r, ] <- summarise(link_draws(info, X[r, , drop = FALSE], B))
    if (is.null(newdata)) out <- stats::napredict(info$na.action, out)
    out
}

## the kept draws (original scale), or `draws` of them evenly spaced
prediction_draws <- function(object, draws) {
    B <- all_draws(object)
    if (is.null(draws)) return(B)
    draws <- check_count(draws, "draws", 1L)
    B[unique(round(seq(1, nrow(B), length.out = min(draws, nrow(B))))), , drop = FALSE]
}

## the model's link-scale output at one draw theta (original scale) for the
## rows of X: rows x outputs
draw_link <- function(info, X, theta) {
    d <- info$design
    if (is.null(d$network))
        return(X %*% matrix(theta[seq_len(d$n_coef)], d$p))
    U <- (X - rep(d$center, each = nrow(X))) / rep(d$scale, each = nrow(X))
    d$y_center + d$y_scale * mlp_forward(d, to_internal(theta, d), U)
}

## one-output models: the link at every draw, rows x draws
link_draws <- function(info, X, B) {
    if (is.null(info$design$network))
        return(X %*% t(B[, seq_len(info$design$p), drop = FALSE]))
    matrix(vapply(seq_len(nrow(B)), function(s) drop(draw_link(info, X, B[s, ])),
                  double(nrow(X))), nrow(X))
}

training_design <- function(info) {
    d <- info$design
    X <- sweep(sweep(t(info$spec$xt), 2L, d$scale, "*"), 2L, d$center, "+")
    colnames(X) <- d$x_names
    X
}

new_design <- function(info, newdata) {
    if (!is.null(info$terms)) {
        tt <- stats::delete.response(info$terms)
        m <- stats::model.frame(tt, newdata, na.action = stats::na.pass,
                                xlev = info$xlevels)
        if (!is.null(cl <- attr(tt, "dataClasses"))) stats::.checkMFClasses(cl, m)
        return(stats::model.matrix(tt, m, contrasts.arg = info$contrasts))
    }
    X <- design_matrix(newdata, length(info$design$intercept) > 0L, arg = "newdata",
                       allow_na = TRUE)
    has_intercept <- length(info$design$intercept) > 0L
    if (ncol(X) != info$design$p)
        stop_arg("newdata", sprintf("must have %d columns", info$design$p - has_intercept))
    match_columns(X, info$design$x_names, named = !is.null(colnames(newdata)))
}

## newdata's columns in the fit's order, matched by name; by position when
## the fit's predictors had no names (x1, x2, ...) or newdata has none
match_columns <- function(X, want, named) {
    have <- colnames(X)
    if (is.null(want) || !named || identical(have, want)) return(X)
    if (setequal(have, want)) return(X[, want, drop = FALSE])
    given <- setdiff(want, "(Intercept)")
    if (identical(given, paste0("x", seq_along(given)))) return(X)
    stop_arg("newdata", "has the columns ", paste(setdiff(have, "(Intercept)"), collapse = ", "),
             " but the fit's predictors are ", paste(given, collapse = ", "),
             " (matched by name; unname newdata to match by position)")
}
