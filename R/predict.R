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
#'   response: a probability for `binomial()`, the expected count
#'   \eqn{\exp(\eta)}{exp(eta)} for `poisson()`; for `categorical()` a matrix
#'   of class probabilities, one column per level), or `"class"`
#'   (`binomial()`: the class whose posterior predictive probability exceeds
#'   0.5; `categorical()`: the most probable class).  A `categorical()`
#'   fit has no single linear predictor: its default is `"response"`.
#' @param interval `"none"`, `"credible"`: equal-tailed posterior intervals
#'   of the link or response mean, or `"prediction"` (`gaussian()` fits):
#'   the posterior predictive distribution's mean and standard deviation
#'   (columns `fit` and `sd`), which adds the noise variance to the spread
#'   of the mean.
#' @param level credible level.
#' @param re.form for a mixed model (random-effect terms): the group effects
#'   added to the linear predictor: `NULL`, every term's; `NA` or `~0`, none
#'   (the fixed effects alone); or a formula of some of the fit's terms, such as
#'   `~ (1 | g)`.  They need the draws of the effects (see
#'   [sgfs_control()]'s `group_draws`).
#' @param allow_new_levels for a mixed model with `newdata`: `FALSE` stops at a
#'   level of a grouping factor the fit has not seen; `TRUE` gives such a
#'   level, at each draw, effects drawn from the normal with that draw's
#'   covariance of the term's effects (one draw per new level, shared by its
#'   rows), as 'rstanarm' and 'brms' predict new groups; the random numbers
#'   come from R's generator.
#' @param offset for a fit with an offset given a matrix `x` (the `offset`
#'   argument of the sampler): the offsets of `newdata`'s rows, one number
#'   per row.  A formula fit evaluates its offsets (`offset()` terms and its
#'   `offset` argument) in `newdata`; without `newdata` the training rows'
#'   offsets are used.
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
                          draws = NULL, offset = NULL, re.form = NULL, allow_new_levels = FALSE,
                          ...) {
    no_dots(...)
    info <- sgfit_info(object)
    if (missing(type) && class_response(info$family)) type <- "response"
    type <- choose_arg(type, c("link", "response", "class"), "type")
    interval <- choose_arg(interval, c("none", "credible", "prediction"), "interval")
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
    if (interval == "prediction" && !location_scale(info$family))
        stop_arg("interval", "\"prediction\" needs a gaussian() or student() fit")
    ## (the training rows are read from the fit's data in blocks, never
    ## rebuilt whole: X is NULL)
    X <- if (!is.null(newdata)) new_design(info, newdata)
    predict_rows(object, info, X, newdata, type, interval, level, draws,
                 row_offsets(info, newdata, offset, n_rows(info, X)), re.form, allow_new_levels)
}

## The offsets (original scale) of the rows predicted, or NULL for a fit
## without offset: the training rows' (newdata NULL); for a formula fit,
## its offset() terms and its `offset` argument evaluated in newdata (as
## predict.lm does); for a matrix fit, the `offset` given
row_offsets <- function(info, newdata, offset, n) {
    if (!isTRUE(info$design$has_offset)) {
        if (!is.null(offset))
            stop_arg("offset", "is given, but the fit was made without an offset")
        return(NULL)
    }
    if (is.null(newdata)) {
        if (!is.null(offset))
            stop_arg("offset", "is for newdata's rows: without newdata the training rows' ",
                     "offsets are used")
        spec <- fit_spec(info)
        return(user_order(spec, spec$offset) * info$design$y_scale)
    }
    if (!is.null(info$terms)) {
        if (!is.null(offset))
            stop_arg("offset", "is for fits given a matrix x: a formula fit evaluates its ",
                     "offset in newdata")
        tt <- stats::delete.response(info$terms)
        m <- stats::model.frame(tt, newdata, na.action = stats::na.pass, xlev = info$xlevels)
        off <- stats::model.offset(m)
        if (is.null(off)) off <- 0
        if (!is.null(info$call$offset))
            off <- off + eval(info$call$offset, as.data.frame(newdata), environment(info$terms))
        off <- as.double(off)
        if (length(off) == 1L) off <- rep(off, n)
    } else {
        if (is.null(offset))
            stop_arg("offset", "is needed with newdata: the fit has an offset, so its new rows ",
                     "need theirs (one number per row of newdata)")
        off <- offset
    }
    if (!is.numeric(off) || length(off) != n)
        stop_arg("offset", sprintf("must be %d numbers, one per row of newdata, not %s",
                                   n, format_value(off)))
    as.double(off)
}

## the rows predicted: newdata's design X, or (X NULL) the training rows
n_rows <- function(info, X) if (is.null(X)) info$spec$N else nrow(X)

## predict() for the rows of the design X (X NULL: the training rows, read
## from the fit's data, padded for na.exclude), from the fit's draws
predict_rows <- function(object, info, X, newdata, type, interval, level, draws,
                         offset = row_offsets(info, newdata, NULL, n_rows(info, X)),
                         re.form = NULL, allow_new_levels = FALSE) {
    B <- chosen_draws(object, draws)
    theta <- internal_draws(B, info$design)
    random <- random_rows(info, B, newdata, re.form, allow_new_levels, "predict()")
    if (!is.null(X) && !is.null(info$design$network))
        X <- X[, colnames(X) != "(Intercept)", drop = FALSE]
    if (class_response(info$family))
        return(predict_categorical(info, X, theta, newdata, type, interval))
    if (type == "class" && !family_entry(info$family)$classes)
        stop_arg("type", "\"class\" needs a binomial() or categorical() fit")
    what <- if (type == "link") 0L else 1L
    if (interval == "prediction") return(predict_gaussian(info, X, theta, newdata, offset, random))
    probs <- if (interval == "credible") {
        level <- check_positive(level, "level")
        if (level >= 1) stop_arg("level", "must be below 1")
        c((1 - level) / 2, (1 + level) / 2)
    }
    out <- row_summaries(info, X, theta, newdata, c("fit", if (length(probs)) c("lwr", "upr")),
                         what, function(m) {
                             cbind(colMeans(m), if (length(probs))
                                 t(apply(m, 2L, stats::quantile, probs, names = FALSE)))
                         }, offset, random)
    if (type == "class") {
        cls <- as.integer(out[, 1L] > 0.5)
        return(if (is.null(info$levels)) cls else factor(info$levels[cls + 1L], info$levels))
    }
    if (is.null(probs)) return(stats::setNames(out[, 1L], rownames(out)))
    out
}

## categorical(), cumulative(): the posterior predictive class
## probabilities (rows x K, averaged over the draws), or the most probable
## class
predict_categorical <- function(info, X, theta, newdata, type, interval) {
    fam <- paste0(info$family$family, "()")
    if (type == "link")
        stop_arg("type", "must be \"response\" or \"class\" for a ", fam, " fit")
    if (interval != "none")
        stop_arg("interval", "must be \"none\" for a ", fam, " fit")
    out <- row_summaries(info, X, theta, newdata, info$levels, 1L,
                         function(p) colMeans(p, dims = 1L))
    if (type == "response") return(out)
    cls <- max.col(out, ties.method = "first")
    factor(info$levels[cls], info$levels)
}

## gaussian(): the posterior predictive's mean and sd, from each draw's
## mean mu_s and noise variance sigma_s^2: sd^2 = mean(sigma_s^2) + var(mu_s)
predict_gaussian <- function(info, X, theta, newdata, offset = NULL, random = NULL) {
    s2 <- mean(draw_sigmas(info, theta)^2) * noise_variance_factor(info$family)
    if (!is.finite(s2))
        stop_arg("interval", sprintf("\"prediction\" needs a finite noise variance, which student(df = %g) has not (df <= 2): use posterior_predict() or predictive_interval()",
                                     info$family$df))
    ## the noise variance sigma^2 / w_i: the training rows' precision
    ## weights (new rows weigh 1)
    if (is.null(newdata) && isTRUE(info$design$weighted) && precision_weights(info$family)) {
        out <- row_summaries(info, X, theta, newdata, c("fit", "var"), 1L, function(mu) {
            fit <- colMeans(mu)
            cbind(fit, colMeans((mu - rep(fit, each = nrow(mu)))^2))
        }, offset, random)
        w <- stats::naresid(info$na.action, training_weights(info))
        out[, 2L] <- sqrt(s2 / w + out[, 2L])
        colnames(out)[2L] <- "sd"
        return(out)
    }
    row_summaries(info, X, theta, newdata, c("fit", "sd"), 1L, function(mu) {
        fit <- colMeans(mu)
        cbind(fit, sqrt(s2 + colMeans((mu - rep(fit, each = nrow(mu)))^2)))
    }, offset, random)
}

## Summaries of the draws' outputs `what` (0 link, 1 mean: draws_eval()) for
## the rows of X: rows with missing predictors get NA, the others are done
## in blocks, so that no draws x rows block larger than ~1e6 values is
## formed; summarise() maps a block's draws x rows (x K) values to its rows x
## length(columns) summaries; `offset`: the rows' offsets (rows with a
## missing one get NA), or NULL; `random`: the rows' group effects at the
## draws (random_rows()), or NULL
row_summaries <- function(info, X, theta, newdata, columns, what, summarise, offset = NULL,
                          random = NULL) {
    spec <- if (is.null(X)) fit_spec(info)
    out <- matrix(NA_real_, n_rows(info, X), length(columns),
                  dimnames = list(rownames(X), columns))
    ok <- if (is.null(X)) rep(TRUE, nrow(out)) else complete_rows(X)
    if (!is.null(offset)) ok <- ok & is.finite(offset)
    ok <- which(ok)
    d <- info$design
    rows <- if (is.null(X)) engine_rows(spec)        # (inverted once, not per block)
    block <- max(1L, floor(1e6 / (ncol(theta) * max(1L, length(info$levels)))))
    for (r in split(ok, ceiling(seq_along(ok) / block))) {
        x <- if (is.null(X)) data_columns(spec, rows[r]) else {
            Xr <- X[r, , drop = FALSE]
            if (inherits(Xr, "Matrix")) Xr <- as.matrix(Xr)
            storage.mode(Xr) <- "double"
            .Call(C_sgfs_design_copy, Xr, as.double(d$center), as.double(d$scale), FALSE, NULL)
        }
        out[r, ] <- summarise(draws_eval(info, theta, x, what,
                                         offset = rows_offset(random, r, offset, ncol(theta))))
    }
    if (is.null(newdata)) out <- stats::napredict(info$na.action, out)
    out
}

## complete.cases() of a design, a dense matrix or a sparse Matrix
complete_rows <- function(X) {
    if (!inherits(X, "sparseMatrix")) return(stats::complete.cases(X))
    X <- methods::as(X, "TsparseMatrix")
    ok <- rep(TRUE, nrow(X))
    ok[X@i[is.na(X@x)] + 1L] <- FALSE
    ok
}

training_design <- function(info) {
    d <- info$design
    spec <- fit_spec(info)
    X <- sweep(sweep(t(data_columns(spec, engine_rows(spec))), 2L, d$scale, "*"), 2L, d$center, "+")
    colnames(X) <- d$x_names
    X
}

new_design <- function(info, newdata) {
    if (!is.null(info$terms)) {
        tt <- stats::delete.response(info$terms)
        return(tryCatch({
            m <- stats::model.frame(tt, newdata, na.action = stats::na.pass,
                                    xlev = info$xlevels)
            if (!is.null(cl <- attr(tt, "dataClasses"))) stats::.checkMFClasses(cl, m)
            without_absent_intercept(stats::model.matrix(tt, m, contrasts.arg = info$contrasts),
                                     info$design$x_names)
        }, error = function(e)
            stop_arg("newdata", "does not hold the fit's predictors: ", conditionMessage(e))))
    }
    X <- design_matrix(newdata, length(info$design$intercept) > 0L, arg = "newdata",
                       allow_na = TRUE)
    has_intercept <- length(info$design$intercept) > 0L
    if (ncol(X) != info$design$p)
        stop_arg("newdata", sprintf("must have %d columns", info$design$p - has_intercept))
    match_columns(X, info$design$x_names, named = !is.null(colnames(newdata)))
}

## X without the intercept column model.matrix() writes, when the model has
## none among its predictors `names` (cumulative(): its cutpoints' place)
without_absent_intercept <- function(X, names) {
    if ("(Intercept)" %in% colnames(X) && !("(Intercept)" %in% names))
        X <- X[, colnames(X) != "(Intercept)", drop = FALSE]
    X
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
