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
#'   first level's (the reference class) 0; for [cumulative()] the linear
#'   predictor \eqn{x'\beta}{x'beta} (no cutpoints).  `transform = TRUE` returns
#'   `posterior_epred()` instead, as in 'rstantools'.
#' * `posterior_epred()`: the expected response, the inverse link of the
#'   linear predictor: the probability of the second level (or of 1) for
#'   `binomial()`, the mean for `gaussian()`; for `categorical()` an array
#'   draws x observations x K of the class probabilities (each draw's
#'   probabilities for an observation sum to 1), as 'brms' returns, and
#'   so for [cumulative()].
#' * `posterior_predict()`: a draw of the response from the model at each
#'   posterior draw: 0/1 integers for `binomial()` (1 the second level of a
#'   factor response), or for a `cbind(successes, failures)` response the
#'   successes out of the row's trials (for proportions with `weights`, the
#'   proportion out of the row's weight in trials, as [stats::simulate()]
#'   of a glm); normal draws with the draw's mean and noise sd
#'   \eqn{\sigma}{sigma} (sampled or fixed) for `gaussian()`, with `weights`
#'   \eqn{\sigma / \sqrt{w_i}}{sigma / sqrt(w_i)} (`NA` for a row of weight 0); Poisson
#'   counts for `poisson()` (integers); for
#'   `categorical()` and [cumulative()] integer class codes 1 to K, indexing the response's
#'   levels (attribute `levels`), as 'brms' returns.  Random numbers come
#'   from R's generator.
#' * `log_lik()`: the pointwise log-likelihood, \eqn{\log p(y_i \mid
#'   \theta_s)}{log p(y_i | theta_s)} for draw \eqn{s}{s} and observation
#'   \eqn{i}{i}: the log density of the response on its original scale for
#'   `gaussian()`.  With `weights` (or a `cbind(successes, failures)`
#'   response) each row's value is its term of the fit's weighted
#'   log-likelihood: \eqn{w_i \log p(y_i \mid \theta_s)}{w_i log p(y_i |
#'   theta_s)} for `binomial()` and `poisson()`, as 'rstanarm' weighs rows
#'   (a row of \eqn{m_i}{m_i} trials has the binomial density of its successes,
#'   coefficient included); for `gaussian()`, whose weights are precisions,
#'   the log density of \eqn{N(\mu, \sigma^2 / w_i)}{N(mu, sigma^2 / w_i)}
#'   (0 for a row of weight 0; 'rstanarm', whose gaussian weights are
#'   frequencies, would give \eqn{w_i \log N(y_i; \mu, \sigma^2)}{w_i log
#'   N(y_i; mu, sigma^2)}).  This is what [loo::loo()] and [loo::waic()] read (see
#'   [loo.sgfit()]).  For a [custom_model()] fit it is the model's own
#'   `loglik` function at each draw (one R call per draw, at R's speed).
#' * `posterior_interval()`: central posterior intervals of the parameters
#'   (the \eqn{(1 - prob)/2}{(1 - prob)/2} and \eqn{(1 + prob)/2}{(1 + prob)/2} quantiles of the draws,
#'   all chains pooled), a matrix with one row per parameter, as
#'   'rstanarm' returns.
#' * `predictive_interval()`: central intervals of `posterior_predict()`,
#'   one row per observation (not for `categorical()`, whose draws are class
#'   codes).
#' * `predictive_error()`: the responses (the training rows', or
#'   `newdata`'s with its response, `y` for a matrix fit) minus `posterior_predict()`'s
#'   draws of them, \eqn{y_i - y^{rep}_{is}}{y_i - yrep_is} (on its scale: a
#'   binomial response of several trials as successes), as 'rstanarm' gives
#'   them; not for `categorical()`.
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
#' @param draws the number of draws: `NULL` for up to 4,000 (rstanarm's
#'   default sample, however many the fit kept), `Inf` for every kept draw,
#'   or a number; fewer than the fit kept are evenly spaced within each
#'   chain, the chains' shares as equal as they can be, in the order of the
#'   rows of `as.matrix(fit)` (deterministic: the same rows on every call,
#'   no random numbers used).
#' @param transform `TRUE` to return `posterior_epred()` instead.
#' @param seed `NULL`, or a seed for [set.seed()] for the random draws of
#'   `posterior_predict()`; with a seed the user's random-number stream is
#'   left as it was.
#' @param y for `log_lik()` and `predictive_error()` of a fit given a matrix `x`: the responses of
#'   `newdata`'s rows, coded as the fit's `y` was.
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
#' @param offset for a fit with an offset given a matrix `x`: the offsets
#'   of `newdata`'s rows (a formula fit evaluates its offsets in `newdata`),
#'   as for [predict.sgfit()].
#' @param weights for a fit with `weights` given a matrix `x`: the prior
#'   weights of `newdata`'s rows (`NULL`: 1 each); a formula fit evaluates
#'   its `weights` in `newdata`, as its offsets.  Read by `log_lik()` and,
#'   for a `gaussian()` fit (the rows' precisions) or a binomial fit of
#'   proportions (the trials), by `posterior_predict()`.
#' @param trials for `posterior_predict()` of a binomial fit whose response
#'   has several trials per row (`cbind(successes, failures)`, or
#'   proportions with `weights`): the trials of `newdata`'s rows, whole
#'   numbers; by default a formula fit reads them from `newdata` (its
#'   response, or its weights).
#' @param prob the probability mass of the central interval, between 0 and
#'   1.
#' @param type the type of interval: `"central"` (the only one).
#' @param pars the parameters (names, or indices into the columns of
#'   `as.matrix(fit)`); all when `NULL` (and `regex_pars` too).
#' @param regex_pars regular expressions: the parameters whose names match
#'   one, after those of `pars`.
#' @param ... unused.
#' @return `posterior_linpred()`, `posterior_epred()`, `log_lik()`: a
#'   numeric matrix draws x observations (for `categorical()` an array draws
#'   x observations x K, but `log_lik()`'s); `posterior_predict()`: an
#'   integer (`binomial()`, `poisson()`, `categorical()`) or numeric (`gaussian()`)
#'   matrix draws x observations; `posterior_interval()`: a matrix with a
#'   row per parameter and the columns `"5%"` and `"95%"` (for `prob =
#'   0.9`); `predictive_interval()`: the same with a row per observation;
#'   `predictive_error()`: a matrix draws x observations.
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
                                    offset = NULL, re.form = NULL, allow_new_levels = FALSE,
                                    ...) {
    if (check_flag(transform, "transform"))
        return(posterior_epred.sgfit(object, newdata = newdata, draws = draws, offset = offset,
                                     re.form = re.form, allow_new_levels = allow_new_levels))
    without_sigma(draw_level(object, newdata, draws, 0L, NULL, "posterior_linpred()", offset,
                             re.form = re.form, allow_new_levels = allow_new_levels))
}

#' @rdname sgfit-posterior
#' @exportS3Method rstantools::posterior_epred
posterior_epred.sgfit <- function(object, newdata = NULL, draws = NULL, offset = NULL,
                                  re.form = NULL, allow_new_levels = FALSE, ...) {
    without_sigma(draw_level(object, newdata, draws, 1L, NULL, "posterior_epred()", offset,
                             re.form = re.form, allow_new_levels = allow_new_levels))
}

#' @rdname sgfit-posterior
#' @exportS3Method rstantools::posterior_predict
posterior_predict.sgfit <- function(object, newdata = NULL, draws = NULL, seed = NULL,
                                    offset = NULL, weights = NULL, trials = NULL,
                                    re.form = NULL, allow_new_levels = FALSE, ...) {
    if (!is.null(seed) && (!is.numeric(seed) || length(seed) != 1L || !is.finite(seed) ||
                           seed != round(seed)))
        stop_arg("seed", "must be NULL or a whole number for set.seed(), not ", format_value(seed))
    info <- sgfit_info(object)
    with_seed_of(seed, {
        mu <- draw_level(object, newdata, draws, 1L, NULL, "posterior_predict()", offset,
                         re.form = re.form, allow_new_levels = allow_new_levels)
        rows <- predictive_rows(info, newdata, weights, trials, ncol(mu))
        simulate_response(info, without_sigma(mu), attr(mu, "sigma"), rows)
    })
}

#' @rdname sgfit-posterior
#' @exportS3Method rstantools::log_lik
log_lik.sgfit <- function(object, newdata = NULL, draws = NULL, y = NULL, offset = NULL,
                          weights = NULL, re.form = NULL, allow_new_levels = FALSE, ...) {
    info <- sgfit_info(object)
    if (!is.null(info$design$custom)) {
        if (!is.null(weights)) stop_arg("weights", "are not taken by a custom_model() fit")
        return(custom_log_lik(object, info, newdata, draws, y))
    }
    without_sigma(draw_level(object, newdata, draws, 2L, y, "log_lik()", offset, weights,
                             re.form, allow_new_levels))
}

without_sigma <- function(x) {
    attr(x, "sigma") <- NULL
    x
}

## The draw-level outputs `what` (0 link, 1 mean, 2 log-likelihood) of the
## chosen draws for the rows of newdata (NULL: the training rows); for a
## family with a parameter beyond the mean the draws' values of it in attr
## "sigma" (gaussian()'s noise sd on the response's scale, the negative
## binomial's phi)
draw_level <- function(object, newdata, draws, what, y, caller, offset = NULL,
                       weights = NULL, re.form = NULL, allow_new_levels = FALSE, rows = NULL,
                       B = chosen_draws(object, draws, default_draws)) {
    info <- sgfit_info(object)
    check_draw_model(object, info, caller)
    d <- info$design
    r <- rows
    rows <- draw_rows(info, newdata, y, what == 2L, offset, weights, r)
    theta <- internal_draws(B, d)
    random <- random_rows(info, B, newdata, re.form, allow_new_levels, caller)
    off <- rows_offset(random, if (is.null(r)) seq_len(ncol(rows$x)) else r, rows$offset, nrow(B))
    out <- draws_eval(info, theta, rows$x, what, if (what == 2L) rows$y, off)
    if (what == 2L) out <- weigh_log_lik(info, out, rows$weighing, theta)
    ## cumulative(): the link is eta of the original predictors, the first
    ## cutpoint less its output c_1 - eta (the same on either scale)
    if (what == 0L && !is.null(d$cutpoints))
        out <- B[, d$cutpoints$which[1L]] - out[, , 2L]
    names <- list(NULL, rows$names)
    if (length(dim(out)) == 3L) names <- c(names, list(info$levels))
    if (!all(vapply(names, is.null, NA))) dimnames(out) <- names
    if (!is.null(family_entry(info$family)$aux)) attr(out, "sigma") <- draw_sigmas(info, theta)
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

## each draw's internal log noise sd (gaussian()) or log phi (negative
## binomial), sampled or fixed (mpar); empty for the other families
draw_log_sigmas <- function(info, theta) {
    d <- info$design
    aux <- family_entry(info$family)$aux
    if (is.null(aux)) return(double(0))
    if (aux$par %in% d$par_names) theta[match(aux$par, d$par_names), ]
    else rep(info$spec$mpar[length(info$spec$mpar)], ncol(theta))
}

## each draw's noise sd on the response's scale (phi for the negative
## binomial, whose response is never rescaled)
draw_sigmas <- function(info, theta) exp(draw_log_sigmas(info, theta)) * info$design$y_scale

## stops unless the fit has a model with outputs and every parameter's draws
check_draw_model <- function(object, info, caller) {
    if (!is.null(info$design$custom))
        stop(caller, " needs the model's predictive distribution, and a custom_model() ",
             "defines only its likelihood: log_lik() works, and predictions can be computed ",
             "from the draws, as.matrix(fit)", call. = FALSE)
    if (!every_parameter_kept(object, info))
        stop(caller, " needs every parameter's draws, and this fit kept only those of ",
             "the monitored ones (keep = predictive()): predict() gives its predictive",
             call. = FALSE)
}

## the kept draws (original scale, rows of as.matrix()), or `draws` of them
## (NULL: every draw; chosen_index()); their chains in attr "chain"
chosen_draws <- function(object, draws, default = Inf) {
    B <- all_draws(object)
    idx <- chosen_index(object, draws, default)
    chain <- draw_chains(object)[idx]
    if (length(idx) < nrow(B)) B <- B[idx, , drop = FALSE]
    attr(B, "chain") <- chain
    B
}

## The rows of as.matrix(fit) that `draws` draws are (NULL: `default`,
## Inf: every one): evenly spaced within each chain, the chains' shares as
## equal as they can be, in as.matrix()'s order; deterministic, no random
## numbers used
chosen_index <- function(object, draws, default = Inf) {
    S <- coda::niter(object) * coda::nchain(object)
    k <- if (is.null(draws)) default
         else if (identical(draws, Inf)) Inf
         else check_count(draws, "draws", 1L)
    if (k >= S) return(seq_len(S))
    C <- coda::nchain(object)
    n <- coda::niter(object)
    if (k < C) return(unique(round(seq(1, S, length.out = k))))
    share <- k %/% C + (seq_len(C) <= k %% C)
    unlist(lapply(seq_len(C), function(c) (c - 1L) * n + unique(round(seq(1, n, length.out = share[c])))))
}

## what `draws = NULL` gives the draw-level methods: rstanarm's default
## sample (4 chains of 1,000), however many draws the fit kept
default_draws <- 4000L

## the chain of each row of as.matrix(fit) (chains of equal length)
draw_chains <- function(object) rep(seq_len(coda::nchain(object)), each = coda::niter(object))

## draws (S x D, original scale; a mixed model's sds and effects after its
## D columns are left out) to the engine's internal scale, D x S
internal_draws <- function(B, design) {
    D <- length(design$par_names)
    if (ncol(B) > D) B <- B[, seq_len(D), drop = FALSE]
    solve_draws(t(B) - design$shift, design)
}

## The rows to evaluate: the engine's copy x (P x m, standardised), the
## responses y on the engine's scale (need_y), the rows' offsets (original
## scale, or NULL) and the rows' names; without newdata the training rows,
## or those numbered `r` of them (their offsets then every row's: the
## caller picks them with the group effects', rows_offset())
draw_rows <- function(info, newdata, y, need_y, offset = NULL, weights = NULL, r = NULL) {
    d <- info$design
    if (is.null(newdata)) {
        if (!is.null(y))
            stop_arg("y", "is the response of new rows: give it with newdata (without newdata ",
                     "the fit's own response is used)")
        if (!is.null(weights))
            stop_arg("weights", "are for newdata's rows: without newdata the training rows' ",
                     "weights are used")
        spec <- fit_spec(info)
        y <- user_order(spec, spec$y)          # (the training rows in the user's order)
        prior <- spec$prior_weights
        trials <- spec$trials
        if (!is.null(r)) {
            y <- y[r]
            prior <- prior[r]
            trials <- trials[r]
        }
        return(list(x = data_columns(spec, engine_rows(spec, r)), y = y, names = NULL,
                    offset = row_offsets(info, NULL, offset, spec$N),
                    weighing = if (need_y)
                        log_lik_weighing(info$family, y,
                                         binomial_rows(d$response_kind, prior, trials),
                                         prior)))
    }
    if (!is.data.frame(newdata) && !is.matrix(newdata) && !inherits(newdata, "Matrix"))
        stop_arg("newdata", "must be a data frame (or, for a fit given a matrix x, a matrix), not ",
                 format_value(newdata))
    X <- tryCatch(new_design(info, newdata), error = function(e) {
        msg <- conditionMessage(e)
        if (startsWith(msg, "'newdata'")) stop(e)
        stop_arg("newdata", "does not have the fit's predictors: ", msg)
    })
    if (!is.null(d$network)) X <- X[, colnames(X) != "(Intercept)", drop = FALSE]
    missing_rows <- which(!complete_rows(X))
    if (length(missing_rows))
        stop_arg("newdata", "has missing values in row(s) ",
                 paste(utils::head(missing_rows, 5L), collapse = ", "),
                 if (length(missing_rows) > 5L) ", ...", ": remove or impute them")
    if (inherits(X, "Matrix")) X <- as.matrix(X)
    storage.mode(X) <- "double"
    off <- row_offsets(info, newdata, offset, nrow(X))
    if (!is.null(off) && !all(is.finite(off)))
        stop_arg("newdata", "has missing or non-finite offsets in row(s) ",
                 paste(utils::head(which(!is.finite(off)), 5L), collapse = ", "))
    response <- if (need_y) new_response(info, newdata, y, nrow(X))
    list(x = .Call(C_sgfs_design_copy, X, as.double(d$center), as.double(d$scale), FALSE, NULL),
         y = response$y, names = rownames(X), offset = off,
         weighing = if (need_y) {
             prior <- row_weights(info, newdata, weights, nrow(X))
             bin <- binomial_rows(response$kind, prior, response$trials)
             if (identical(response$kind, "proportion") && is.null(bin$trials))
                 stop_arg("weights", "are needed: newdata's response is proportions, whose ",
                          "trials are the rows' weights")
             log_lik_weighing(info$family, response$y, bin, prior)
         })
}

## The prior weights (the fit's `weights`) of the rows evaluated, or NULL
## for weight 1 each: the training rows' (newdata NULL); for newdata, a
## formula fit's weights expression evaluated in newdata (as its offsets),
## a matrix fit's `weights` (NULL: 1 each)
row_weights <- function(info, newdata, weights, n) {
    if (is.null(newdata)) return(training_weights(info))
    if (!is.null(info$terms)) {
        if (!is.null(weights))
            stop_arg("weights", "are for fits given a matrix x: a formula fit evaluates its ",
                     "weights in newdata")
        expr <- info$call$weights
        if (is.null(expr)) return(NULL)
        w <- tryCatch(eval(expr, as.data.frame(newdata), environment(info$terms)),
                      error = function(e)
                          stop_arg("newdata", sprintf("must hold the fit's weights (%s): %s",
                                                      paste(deparse(expr), collapse = " "),
                                                      conditionMessage(e))))
    } else {
        if (is.null(weights)) return(NULL)
        w <- weights
    }
    if (!is.numeric(w) || length(w) != n || anyNA(w) || any(!is.finite(w)) || any(w < 0))
        stop_arg("weights", sprintf(paste("must be %d non-negative finite numbers, one per row",
                                          "of newdata, not %s"), n, format_value(w)))
    as.double(w)
}

## A binomial response's rows as trials: list(trials, prior) for a
## response of kind "cbind" (trials s + f, prior weights as given) or
## "proportion" (the weights are the trials, prior weights 1); NULL for
## a 0/1 response (one trial each; `weights` stay prior weights)
binomial_rows <- function(kind, weights, trials) {
    if (is.null(kind)) return(NULL)
    if (kind == "cbind") list(trials = trials, prior = weights)
    else list(trials = weights, prior = NULL)
}

## How log_lik() weighs each row's log density (the engine's is of one
## trial, unweighted): list(w, const, gaussian) with `w` the rows' factors
## (NULL: 1 each) and `const` the binomial coefficient's term of a response
## of several trials, the prior weight times log choose(m_i, s_i) (NULL:
## 0).  So each row's value is its term of the fit's weighted
## log-likelihood: w_i log p(y_i) for binomial() and poisson(), as
## rstanarm's log_lik() weighs rows; a gaussian() row's log density with
## its precision, log N(y_i; mu, sigma^2 / w_i) (0 for weight 0).
log_lik_weighing <- function(family, y, bin, weights) {
    if (precision_weights(family))
        return(if (!is.null(weights)) list(w = weights, gaussian = TRUE))
    if (!is.null(bin)) {                                 # (binomial, several trials)
        m <- bin$trials
        s <- y * m
        lchoose <- lgamma(m + 1) - lgamma(s + 1) - lgamma(m - s + 1)
        prior <- if (is.null(bin$prior)) 1 else bin$prior
        return(list(w = prior * m, const = prior * lchoose))
    }
    if (!is.null(weights)) list(w = weights)
}

## the draws' pointwise log-likelihoods ll (S x m, unweighted) weighed as
## log_lik_weighing() says; theta the draws (internal scale), for gaussian()
weigh_log_lik <- function(info, ll, weighing, theta) {
    if (is.null(weighing)) return(ll)
    S <- nrow(ll)
    w <- rep(weighing$w, each = S)
    if (isTRUE(weighing$gaussian)) {
        ## ll = -log(sigma) - log(2 pi)/2 - r^2/2, sigma on the response's
        ## scale: with precision w, -log(sigma) + log(w)/2 - log(2 pi)/2 - w r^2/2
        log_sigma <- rep(log(draw_sigmas(info, theta)), times = ncol(ll))
        half_r2 <- -(ll + log_sigma + 0.5 * log(2 * pi))
        out <- ll + 0.5 * log(w) - (w - 1) * half_r2
        out[w == 0] <- 0
        return(array(out, dim(ll)))
    }
    out <- ll * w
    if (!is.null(weighing$const)) out <- out + rep(weighing$const, each = S)
    array(out, dim(ll))
}

## What posterior_predict() needs of the rows beyond their means:
## list(trials, kind) for a binomial fit of several trials per row (the
## training rows': theirs; newdata's: `trials`, else for kind "cbind" from
## newdata's response, for "proportion" from the rows' weights), and the
## gaussian rows' precision weights (`precision`, NULL: 1 each)
predictive_rows <- function(info, newdata, weights, trials, n) {
    d <- info$design
    if (is.null(newdata)) {
        if (!is.null(trials) || !is.null(weights))
            stop_arg(if (!is.null(trials)) "trials" else "weights",
                     "are for newdata's rows: without newdata the training rows' are used")
        w <- training_weights(info)
        bin <- binomial_rows(d$response_kind, w, training_trials(info))
        if (!is.null(bin$trials) && any(bin$trials != round(bin$trials)))
            stop_arg("weights", "must be whole numbers for posterior_predict(): they are the ",
                     "trials of the fit's proportions")
        return(list(trials = bin$trials, kind = d$response_kind,
                    precision = if (precision_weights(info$family)) w))
    }
    kind <- d$response_kind
    if (!is.null(kind)) {                          # (binomial, several trials)
        if (is.null(trials)) {
            trials <- if (kind == "proportion") row_weights(info, newdata, weights, n)
                      else if (!is.null(info$terms)) tryCatch({
                          frame <- stats::model.frame(info$terms, newdata, na.action = stats::na.pass,
                                                      xlev = info$xlevels)
                          code_two_column(stats::model.response(frame, "any"))$trials
                      }, error = function(e) NULL)
            if (is.null(trials))
                stop_arg("trials", "are needed for newdata's rows: the fit's response has ",
                         "several trials per row (",
                         if (kind == "cbind") "cbind(successes, failures): give newdata the response, or trials ="
                         else "proportions with weights: give newdata the weights, or trials =", ")")
        }
        if (!is.numeric(trials) || length(trials) != n || anyNA(trials) || any(trials < 0) ||
            any(!is.finite(trials)) || any(trials != round(trials)))
            stop_arg("trials", sprintf("must be %d non-negative whole numbers, one per row of newdata, not %s",
                                       n, format_value(trials)))
        return(list(trials = as.double(trials), kind = kind))
    }
    if (!is.null(trials)) stop_arg("trials", "are for binomial fits of a two-column or proportion response")
    list(precision = if (precision_weights(info$family)) row_weights(info, newdata, weights, n))
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
    coded <- code_response(y, info$family, weighted = TRUE)
    coded$y <- (coded$y - info$design$y_center) / info$design$y_scale
    coded
}

## One draw of the response per element of the expected values mu (draws x
## rows, or draws x rows x K class probabilities), sigma the draws' noise
## sds; `rows` (predictive_rows()): a binomial row's trials (successes out
## of them for kind "cbind", their proportion for "proportion"), a gaussian
## row's precision weight (sd sigma / sqrt(w); NA for weight 0)
simulate_response <- function(info, mu, sigma, rows = NULL) {
    dims <- dim(mu)[1:2]
    names <- dimnames(mu)[1:2]
    entry <- family_entry(info$family)
    out <- entry$simulate(mu, sigma, rows, dims[1L], info$family)
    dim(out) <- dims
    if (!all(vapply(names, is.null, NA))) dimnames(out) <- names
    if (class_response(info$family)) attr(out, "levels") <- info$levels
    out
}

## each family's responses drawn at the means mu (S draws x rows, for
## categorical() x K classes), with gaussian()'s noise sds `sigma` (one a
## draw, recycled) and the rows' trials or precision weights (`rows`)
simulate_binomial <- function(mu, sigma, rows, S, family = NULL) {
    if (is.null(rows$trials)) return(stats::rbinom(length(mu), 1L, mu))
    m <- rep(rows$trials, each = S)
    k <- stats::rbinom(length(mu), m, mu)
    if (rows$kind == "proportion") ifelse(m > 0, k / pmax(m, 1), 0) else k
}

simulate_poisson <- function(mu, sigma, rows, S, family = NULL) stats::rpois(length(mu), mu)

simulate_negbin <- function(mu, sigma, rows, S, family = NULL)
    stats::rnbinom(length(mu), size = rep(sigma, length.out = length(mu)), mu = mu)

## (sigma: each draw's shape; the rate shape / mu)
simulate_gamma <- function(mu, sigma, rows, S, family = NULL) {
    shape <- rep(sigma, length.out = length(mu))
    stats::rgamma(length(mu), shape = shape, rate = shape / mu)
}

## (sigma: each draw's scale; the family's df)
simulate_student <- function(mu, sigma, rows, S, family)
    mu + rep(sigma, length.out = length(mu)) * stats::rt(length(mu), family$df)

simulate_gaussian <- function(mu, sigma, rows, S, family = NULL) {
    if (is.null(rows$precision)) return(stats::rnorm(length(mu), mu, sigma))
    w <- rep(rows$precision, each = S)
    v <- stats::rnorm(length(mu), mu, sigma / sqrt(pmax(w, 1e-300)))
    v[w == 0] <- NA
    v
}

## the class whose cumulative probability first exceeds u
simulate_categorical <- function(mu, sigma, rows, S, family = NULL) {
    n <- prod(dim(mu)[1:2])
    u <- stats::runif(n)
    cum <- 0
    cls <- rep(1L, n)
    for (k in seq_len(dim(mu)[3L] - 1L)) {
        cum <- cum + mu[, , k]
        cls <- cls + (u > cum)
    }
    cls
}

## evaluates code with set.seed(seed), then restores the user's RNG state
## (seed NULL: the user's stream)
with_seed_of <- function(seed, code) {
    if (is.null(seed)) return(code)
    user <- rng_snapshot()
    on.exit(rng_restore(user))
    set.seed(seed)
    code
}
