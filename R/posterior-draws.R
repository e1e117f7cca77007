## Draw-level outputs for the generics of rstantools: the linear predictor,
## the expected response, posterior predictive draws and the pointwise
## log-likelihood at every kept draw, for all draws at once in C
## (src/draws.c).  The generics' packages are suggested, not imported: the
## methods are registered when those packages load (NAMESPACE
## S3method(rstantools::posterior_predict, sgfit), ...).

#' Posterior draws of predictions and pointwise log-likelihoods
#'
#' Methods for the generics of the 'rstantools' package, as 'rstanarm' and
#' 'brms' provide them: one value per posterior draw (rows) and per
#' observation (columns), rather than the average over the draws that
#' [predict.sgfit()] returns.  They are registered when 'rstantools' is
#' loaded, so call them as `rstantools::posterior_predict(fit)` or after
#' `library(rstantools)` (or 'rstanarm' or 'brms', which re-export these
#' generics).
#'
#' * `posterior_linpred()`: the linear predictor, on the link scale: the
#'   log-odds for `binomial()`, the mean for `gaussian()`, the log mean
#'   for `poisson()`; for a network
#'   ([mlp()]) its output layer before the family's inverse link.  For
#'   `categorical()` an array draws x observations x K of the K logits, the
#'   first level's (the reference class) 0.  `transform = TRUE` returns
#'   `posterior_epred()` instead, as in 'rstantools'.
#' * `posterior_epred()`: the expected response, the inverse link of the
#'   linear predictor: the probability of the second level (or of 1) for
#'   `binomial()`, the mean for `gaussian()`; for `categorical()` an array
#'   draws x observations x K of the class probabilities (each draw's
#'   probabilities for an observation sum to 1), as 'brms' returns.
#' * `posterior_predict()`: a draw of the response from the model at each
#'   posterior draw: 0/1 integers for `binomial()` (1 the second level of a
#'   factor response); normal draws with the draw's mean and noise sd
#'   \eqn{\sigma}{sigma} (sampled or fixed) for `gaussian()`; Poisson
#'   counts for `poisson()` (integers); for
#'   `categorical()` integer class codes 1 to K, indexing the response's
#'   levels (attribute `levels`), as 'brms' returns.  Random numbers come
#'   from R's generator.
#' * `log_lik()`: the pointwise log-likelihood, \eqn{\log p(y_i \mid
#'   \theta_s)}{log p(y_i | theta_s)} for draw \eqn{s} and observation
#'   \eqn{i}: the log density of the response on its original scale for
#'   `gaussian()`.  This is what [loo::loo()] and [loo::waic()] read (see
#'   [loo.sgfit()]).  For a [custom_model()] fit it is the model's own
#'   `loglik` function at each draw (one R call per draw, at R's speed).
#' * `posterior_interval()`: central posterior intervals of the parameters
#'   (the \eqn{(1 - prob)/2} and \eqn{(1 + prob)/2} quantiles of the draws,
#'   all chains pooled), a matrix with one row per parameter, as
#'   'rstanarm' returns.
#' * `predictive_interval()`: central intervals of `posterior_predict()`,
#'   one row per observation (not for `categorical()`, whose draws are class
#'   codes).
#'
#' The values are computed in C for all the draws asked for at once, in
#' blocks of draws and observations (a GLM's block is one matrix product),
#' not in an R loop over draws.  Fits of a [custom_model()], which defines
#' only a likelihood, have `log_lik()`, `posterior_interval()` and
#' [prior_summary.sgfit()]; the other methods stop, saying so.  So do they
#' for a network that kept only some parameters' draws
#' (`keep = predictive()`).
#'
#' @param object a fit of [sgfs()], [sgld()] or another sampler.
#' @param newdata `NULL` for the rows the model was fitted to (those the
#'   fit's `na.action` kept), or new rows: a data frame for a formula fit, a
#'   matrix of predictors for a fit given a matrix `x` (columns matched as
#'   by [predict.sgfit()]); no missing values.  For `log_lik()` the new rows
#'   need their response: in `newdata` for a formula fit, as `y` for a
#'   matrix fit.  For a [custom_model()] fit, data in the model's own form
#'   (as its `x`).
#' @param draws `NULL` for every kept draw (all chains, in the order of
#'   the rows of `as.matrix(fit)`), or a number of draws: that many, evenly
#'   spaced over those rows (deterministic: the same rows on every call, no
#'   random numbers used).
#' @param transform `TRUE` to return `posterior_epred()` instead.
#' @param seed `NULL`, or a seed for [set.seed()] for the random draws of
#'   `posterior_predict()`; with a seed the user's random-number stream is
#'   left as it was.
#' @param y for `log_lik()` of a fit given a matrix `x`: the responses of
#'   `newdata`'s rows, coded as the fit's `y` was.
#' @param offset for a fit with an offset given a matrix `x`: the offsets
#'   of `newdata`'s rows (a formula fit evaluates its offsets in `newdata`),
#'   as for [predict.sgfit()].
#' @param prob the probability mass of the central interval, between 0 and
#'   1.
#' @param type the type of interval: `"central"` (the only one).
#' @param pars the parameters (names, or indices into the columns of
#'   `as.matrix(fit)`); all when `NULL`.
#' @param ... unused.
#' @return `posterior_linpred()`, `posterior_epred()`, `log_lik()`: a
#'   numeric matrix draws x observations (for `categorical()` an array draws
#'   x observations x K, but `log_lik()`'s); `posterior_predict()`: an
#'   integer (`binomial()`, `poisson()`, `categorical()`) or numeric (`gaussian()`)
#'   matrix draws x observations; `posterior_interval()`: a matrix with a
#'   row per parameter and the columns `"5%"` and `"95%"` (for `prob =
#'   0.9`); `predictive_interval()`: the same with a row per observation.
#' @seealso [loo.sgfit()], [pp_check.sgfit()], [prior_summary.sgfit()],
#'   [predict.sgfit()]
#' @name sgfit-posterior
#' @examples
#' data(Pima.tr, Pima.te, package = "MASS")
#' set.seed(1)
#' fit <- sgfs(type ~ glu + bmi, data = Pima.tr, n_iter = 2000, batch_size = 50)
#' if (requireNamespace("rstantools", quietly = TRUE)) {
#'     p <- rstantools::posterior_epred(fit, newdata = Pima.te[1:5, ], draws = 500)
#'     dim(p)
#'     yrep <- rstantools::posterior_predict(fit, draws = 100, seed = 1)
#'     mean(yrep)
#'     ll <- rstantools::log_lik(fit)
#'     dim(ll)
#'     rstantools::posterior_interval(fit, prob = 0.9)
#' }
NULL

#' @rdname sgfit-posterior
#' @exportS3Method rstantools::posterior_linpred
posterior_linpred.sgfit <- function(object, transform = FALSE, newdata = NULL, draws = NULL,
                                    offset = NULL, ...) {
    if (check_flag(transform, "transform"))
        return(posterior_epred.sgfit(object, newdata = newdata, draws = draws, offset = offset))
    without_sigma(draw_level(object, newdata, draws, 0L, NULL, "posterior_linpred()", offset))
}

#' @rdname sgfit-posterior
#' @exportS3Method rstantools::posterior_epred
posterior_epred.sgfit <- function(object, newdata = NULL, draws = NULL, offset = NULL, ...) {
    without_sigma(draw_level(object, newdata, draws, 1L, NULL, "posterior_epred()", offset))
}

#' @rdname sgfit-posterior
#' @exportS3Method rstantools::posterior_predict
posterior_predict.sgfit <- function(object, newdata = NULL, draws = NULL, seed = NULL,
                                    offset = NULL, ...) {
    if (!is.null(seed) && (!is.numeric(seed) || length(seed) != 1L || !is.finite(seed) ||
                           seed != round(seed)))
        stop_arg("seed", "must be NULL or a whole number for set.seed(), not ", format_value(seed))
    mu <- draw_level(object, newdata, draws, 1L, NULL, "posterior_predict()", offset)
    info <- sgfit_info(object)
    with_seed_of(seed, simulate_response(info, without_sigma(mu), attr(mu, "sigma")))
}

#' @rdname sgfit-posterior
#' @exportS3Method rstantools::log_lik
log_lik.sgfit <- function(object, newdata = NULL, draws = NULL, y = NULL, offset = NULL, ...) {
    info <- sgfit_info(object)
    if (!is.null(info$design$custom)) return(custom_log_lik(object, info, newdata, draws, y))
    without_sigma(draw_level(object, newdata, draws, 2L, y, "log_lik()", offset))
}

without_sigma <- function(x) {
    attr(x, "sigma") <- NULL
    x
}

## The draw-level outputs `what` (0 link, 1 mean, 2 log-likelihood) of the
## chosen draws for the rows of newdata (NULL: the training rows); for
## gaussian() the draws' noise sds in attr "sigma" (original scale)
draw_level <- function(object, newdata, draws, what, y, caller, offset = NULL) {
    info <- sgfit_info(object)
    check_draw_model(object, info, caller)
    B <- chosen_draws(object, draws)
    d <- info$design
    rows <- draw_rows(info, newdata, y, what == 2L, offset)
    theta <- internal_draws(B, d)
    out <- draws_eval(info, theta, rows$x, what, if (what == 2L) rows$y, rows$offset)
    names <- list(NULL, rows$names)
    if (length(dim(out)) == 3L) names <- c(names, list(info$levels))
    if (!all(vapply(names, is.null, NA))) dimnames(out) <- names
    if (info$family$family == "gaussian") attr(out, "sigma") <- draw_sigmas(info, theta)
    out
}

## The outputs `what` (0 link, 1 mean, 2 log-likelihood of the responses y,
## engine scale) of the draws theta (D x S, internal scale) for the
## standardised rows x (P x m, as sgfs_design_copy makes them), the rows'
## offsets on the original scale (or NULL): S x m, or S x m x K for
## categorical() and what < 2 (src/draws.c)
draws_eval <- function(info, theta, x, what, y = NULL, offset = NULL) {
    d <- info$design
    if (!is.null(d$hs)) theta <- theta[model_columns(d), , drop = FALSE]
    .Call(C_sgfs_draws_eval, info$spec, theta, x, if (what == 2L) as.double(y),
          as.integer(what), as.double(draw_log_sigmas(info, theta)),
          as.double(c(d$y_center, d$y_scale)),
          if (!is.null(offset)) as.double(offset / d$y_scale))
}

## gaussian(): each draw's internal log noise sd, sampled or fixed (mpar);
## empty for the other families
draw_log_sigmas <- function(info, theta) {
    d <- info$design
    if (info$family$family != "gaussian") return(double(0))
    if ("log_sigma" %in% d$par_names) theta[match("log_sigma", d$par_names), ]
    else rep(info$spec$mpar[length(info$spec$mpar)], ncol(theta))
}

## gaussian(): each draw's noise sd on the response's scale
draw_sigmas <- function(info, theta) exp(draw_log_sigmas(info, theta)) * info$design$y_scale

## stops unless the fit has a model with outputs and every parameter's draws
check_draw_model <- function(object, info, caller) {
    if (!is.null(info$design$custom))
        stop(caller, " needs the model's predictive distribution, and a custom_model() ",
             "defines only its likelihood: log_lik() works, and predictions can be computed ",
             "from the draws, as.matrix(fit)", call. = FALSE)
    if (!identical(coda::varnames(object), info$design$par_names))
        stop(caller, " needs every parameter's draws, and this fit kept only those of ",
             "the monitored ones (keep = predictive()): predict() gives its predictive",
             call. = FALSE)
}

## the kept draws (original scale, rows of as.matrix()), or `draws` of them
## evenly spaced
chosen_draws <- function(object, draws) {
    B <- all_draws(object)
    if (is.null(draws)) return(B)
    k <- min(check_count(draws, "draws", 1L), nrow(B))
    B[unique(round(seq(1, nrow(B), length.out = k))), , drop = FALSE]
}

## the chain of each row of as.matrix(fit) (chains of equal length)
draw_chains <- function(object) rep(seq_len(coda::nchain(object)), each = coda::niter(object))

## draws (S x D, original scale) to the engine's internal scale, D x S
internal_draws <- function(B, design) {
    centred <- t(B) - design$shift
    if (is.matrix(design$M)) solve(design$M, centred) else centred / design$M
}

## The rows to evaluate: the engine's copy x (P x m, standardised), the
## responses y on the engine's scale (need_y), the rows' offsets (original
## scale, or NULL) and the rows' names
draw_rows <- function(info, newdata, y, need_y, offset = NULL) {
    d <- info$design
    if (is.null(newdata)) {
        if (!is.null(y))
            stop_arg("y", "is the response of new rows: give it with newdata (without newdata ",
                     "the fit's own response is used)")
        return(list(x = info$spec$xt, y = info$spec$y, names = NULL,
                    offset = row_offsets(info, NULL, offset, ncol(info$spec$xt))))
    }
    if (!is.data.frame(newdata) && !is.matrix(newdata))
        stop_arg("newdata", "must be a data frame (or, for a fit given a matrix x, a matrix), not ",
                 format_value(newdata))
    X <- tryCatch(new_design(info, newdata), error = function(e) {
        msg <- conditionMessage(e)
        if (startsWith(msg, "'newdata'")) stop(e)
        stop_arg("newdata", "does not have the fit's predictors: ", msg)
    })
    if (!is.null(d$network)) X <- X[, colnames(X) != "(Intercept)", drop = FALSE]
    missing_rows <- which(!stats::complete.cases(X))
    if (length(missing_rows))
        stop_arg("newdata", "has missing values in row(s) ",
                 paste(utils::head(missing_rows, 5L), collapse = ", "),
                 if (length(missing_rows) > 5L) ", ...", ": remove or impute them")
    storage.mode(X) <- "double"
    off <- row_offsets(info, newdata, offset, nrow(X))
    if (!is.null(off) && !all(is.finite(off)))
        stop_arg("newdata", "has missing or non-finite offsets in row(s) ",
                 paste(utils::head(which(!is.finite(off)), 5L), collapse = ", "))
    list(x = .Call(C_sgfs_design_copy, X, as.double(d$center), as.double(d$scale)),
         y = if (need_y) new_response(info, newdata, y, nrow(X)), names = rownames(X),
         offset = off)
}

## the response of newdata's rows on the engine's scale: from newdata for a
## formula fit, from y for a matrix fit
new_response <- function(info, newdata, y, n) {
    if (is.null(info$terms)) {
        if (is.null(y))
            stop_arg("y", "is needed with newdata for a fit given a matrix x: log_lik() needs ",
                     "the responses of newdata's rows")
    } else {
        if (!is.null(y))
            stop_arg("y", "is for fits given a matrix x: a formula fit reads the response ",
                     "from newdata")
        frame <- tryCatch(stats::model.frame(info$terms, newdata, na.action = stats::na.pass,
                                             xlev = info$xlevels),
                          error = function(e)
                              stop_arg("newdata", "must hold the response for log_lik(): ",
                                       conditionMessage(e)))
        y <- stats::model.response(frame, "any")
    }
    if (NROW(y) != n) stop_arg("y", sprintf("has %d values but newdata has %d rows", NROW(y), n))
    if (anyNA(y)) stop_arg("y", "has missing values: log_lik() needs every row's response")
    if (!is.null(info$levels) && (is.factor(y) || is.character(y))) {
        unknown <- setdiff(unique(as.character(y)), info$levels)
        if (length(unknown))
            stop_arg("y", "has level(s) the fit did not see: ", paste(unknown, collapse = ", "))
        y <- factor(as.character(y), levels = info$levels)
    }
    coded <- code_response(y, info$family)$y
    (coded - info$design$y_center) / info$design$y_scale
}

## One draw of the response per element of the expected values mu (draws x
## rows, or draws x rows x K class probabilities), sigma the draws' noise sds
simulate_response <- function(info, mu, sigma) {
    dims <- dim(mu)[1:2]
    names <- dimnames(mu)[1:2]
    out <- switch(info$family$family,
                  binomial = stats::rbinom(length(mu), 1L, mu),
                  poisson = stats::rpois(length(mu), mu),
                  gaussian = stats::rnorm(length(mu), mu, sigma),    # sigma recycled by draw
                  categorical = {
                      ## the class whose cumulative probability first exceeds u
                      K <- dim(mu)[3L]
                      u <- stats::runif(prod(dims))
                      cum <- 0
                      cls <- rep(1L, prod(dims))
                      for (k in seq_len(K - 1L)) {
                          cum <- cum + mu[, , k]
                          cls <- cls + (u > cum)
                      }
                      cls
                  })
    dim(out) <- dims
    if (!all(vapply(names, is.null, NA))) dimnames(out) <- names
    if (info$family$family == "categorical") attr(out, "levels") <- info$levels
    out
}

## evaluates code with set.seed(seed), then restores the user's RNG state
## (seed NULL: the user's stream)
with_seed_of <- function(seed, code) {
    if (is.null(seed)) return(code)
    had <- exists(".Random.seed", envir = globalenv(), inherits = FALSE)
    user <- if (had) get_seed()
    on.exit(if (had) set_seed(user) else rm(".Random.seed", envir = globalenv()))
    set.seed(seed)
    code
}
