## Posterior and predictive intervals, and the model checks of loo and
## bayesplot through the draw-level methods (R/posterior-draws.R).

#' @rdname sgfit-posterior
#' @exportS3Method rstantools::posterior_interval
posterior_interval.sgfit <- function(object, prob = 0.9, type = "central", pars = NULL,
                                     regex_pars = NULL, ...) {
    if (!identical(type, "central"))
        stop_arg("type", "must be \"central\" (equal-tailed intervals), not ", format_value(type))
    probs <- interval_probs(prob)
    B <- all_draws(object)
    pars <- chosen_pars(colnames(B), pars, regex_pars)
    if (is.null(pars)) pars <- colnames(B)
    out <- apply(B[, pars, drop = FALSE], 2L, stats::quantile, probs, names = FALSE)
    out <- matrix(out, ncol = 2L, byrow = TRUE, dimnames = list(pars, percent_labels(probs)))
    out
}

#' @rdname sgfit-posterior
#' @exportS3Method rstantools::predictive_interval
predictive_interval.sgfit <- function(object, prob = 0.9, newdata = NULL, draws = NULL,
                                      seed = NULL, ...) {
    probs <- interval_probs(prob)
    info <- sgfit_info(object)
    if (class_response(info$family))
        stop("predictive_interval() is for a numeric response; a ", info$family$family,
             "() fit's predictive draws are class codes: use posterior_predict() or ",
             "posterior_epred()", call. = FALSE)
    yrep <- posterior_predict.sgfit(object, newdata = newdata, draws = draws, seed = seed, ...)
    out <- apply(yrep, 2L, stats::quantile, probs, names = FALSE)
    matrix(out, ncol = 2L, byrow = TRUE, dimnames = list(colnames(yrep), percent_labels(probs)))
}

## the quantiles of a central interval of mass prob
interval_probs <- function(prob) {
    if (!is.numeric(prob) || length(prob) != 1L || is.na(prob) || prob <= 0 || prob >= 1)
        stop_arg("prob", "must be a single number between 0 and 1, not ", format_value(prob))
    c((1 - prob) / 2, (1 + prob) / 2)
}

percent_labels <- function(probs) paste0(format(100 * probs, trim = TRUE, digits = 3), "%")

#' Leave-one-out cross-validation, WAIC and posterior predictive checks
#'
#' `loo()` and `waic()` (generics of the 'loo' package) of a fit: Pareto
#' smoothed importance sampling leave-one-out cross-validation and the widely
#' applicable information criterion, from the pointwise log-likelihood of
#' the training rows ([log_lik.sgfit()]) at up to 4,000 draws (`draws`).
#' `loo()` passes the relative efficiencies of the draws, computed chain by
#' chain (`loo::relative_eff(exp(log_lik), chain_id = )`), so that the
#' Monte Carlo standard errors and the Pareto k diagnostics account for the
#' chains' autocorrelation.  Both compute the log-likelihood in blocks of
#' rows (at most 2^22 values, 32 MB, at a time) and join the blocks'
#' results into the object 'loo' gives for the whole matrix, so that their
#' memory does not grow with the number of rows (their time does: PSIS
#' smooths each row's draws).  Stochastic-gradient draws are approximate
#' (their step size biases them slightly): the estimates are those of the
#' approximate posterior the draws represent.
#'
#' `loo_subsample()` (Magnusson et al. 2019, through
#' [loo::loo_subsample()]) is for large N: PSIS-LOO on `observations` rows
#' drawn at random (R's generator), corrected by a cheap approximation of
#' every row's contribution (`loo_approximation`, by default `"plpd"`:
#' each row's log density at the draws' mean, one pass over the rows), with
#' the subsampling standard error alongside the usual one.  One relative
#' efficiency serves every row: the median of those of 1,000 rows spread
#' over the data (it enters the Monte Carlo errors and Pareto k
#' diagnostics, not the estimates).
#'
#' `pp_check()` (the generic of 'bayesplot') plots the training response
#' against responses drawn from the posterior predictive
#' ([posterior_predict.sgfit()]) at `ndraws` draws: by default densities
#' for `gaussian()` (`bayesplot::ppc_dens_overlay()`) and bars of the counts
#' of each value for `binomial()`, `poisson()` and `categorical()`
#' (`bayesplot::ppc_bars()`, the classes as codes 1 to K).
#'
#' These methods are registered when their packages load: call them as
#' `loo::loo(fit)`, `bayesplot::pp_check(fit)`, or after `library(loo)`,
#' `library(bayesplot)`.  A [custom_model()] fit has `loo()` and `waic()`
#' (through its `loglik` function), not `pp_check()`.
#'
#' @param x,object a fit of [sgfs()], [sgld()] or another sampler.
#' @param draws the number of draws read: `NULL` for up to 4,000, `Inf` for
#'   every kept draw, or a number (rounded down to a multiple of the
#'   chains: as many from each, evenly spaced); see [log_lik.sgfit()].
#' @param observations for `loo_subsample()`: the number of rows whose
#'   PSIS-LOO is computed (or their indices), as [loo::loo_subsample()]
#'   takes it.
#' @param loo_approximation for `loo_subsample()`: the approximation of
#'   each row's contribution ([loo::loo_subsample()]'s: `"plpd"`, `"lpd"`,
#'   `"tis"`, `"sis"`, `"waic"` or `"none"`; the gradient-based ones need
#'   functions the package does not give).
#' @param plotfun the 'bayesplot' function for `pp_check()`: the name of
#'   one of its `ppc_*` functions that take `y` and `yrep`, with or without
#'   the prefix (`"dens_overlay"`, `"hist"`, `"stat"`, `"bars"`, ...);
#'   `NULL` for the default above.
#' @param ndraws the number of posterior draws to simulate responses from
#'   (evenly spaced over the kept draws).
#' @param seed `NULL` or a seed for those simulations (see
#'   [posterior_predict.sgfit()]).
#' @param ... for `loo()` and `waic()`, passed on to 'loo''s matrix method
#'   (e.g. `cores`); for `loo_subsample()`, to [loo::loo_subsample()]
#'   (`estimator`, `cores`, ...); for `pp_check()`, to the 'bayesplot'
#'   function.
#' @return `loo()`: an object of class `psis_loo`; `waic()`: of class
#'   `waic`; `loo_subsample()`: of class `psis_loo_ss` (see 'loo');
#'   `pp_check()`: a ggplot object.
#' @references Magnusson, M., Andersen, M. R., Jonasson, J. and Vehtari, A.
#'   (2019). Bayesian leave-one-out cross-validation for large data.
#'   Proceedings of the 36th International Conference on Machine Learning,
#'   PMLR 97, 4244-4253.
#' @seealso [log_lik.sgfit()]
#' @name sgfit-loo
#' @examples
#' data(Pima.tr, package = "MASS")
#' set.seed(1)
#' fit <- sgfs(type ~ glu + bmi, data = Pima.tr, n_iter = 2000, batch_size = 50)
#' if (requireNamespace("loo", quietly = TRUE)) {
#'     print(loo::loo(fit))
#'     print(loo::loo_subsample(fit, observations = 100))
#' }
#' if (requireNamespace("bayesplot", quietly = TRUE)) bayesplot::pp_check(fit)
NULL

#' @rdname sgfit-loo
#' @exportS3Method loo::loo
loo.sgfit <- function(x, draws = NULL, ...) {
    B <- loo_draws(x, draws)
    chain <- attr(B, "chain")
    by_rows(x, B, function(ll) {
        r_eff <- loo::relative_eff(exp(ll), chain_id = chain)
        loo::loo(ll, r_eff = r_eff, ...)
    })
}

#' @rdname sgfit-loo
#' @exportS3Method loo::waic
waic.sgfit <- function(x, draws = NULL, ...) by_rows(x, loo_draws(x, draws), function(ll) loo::waic(ll, ...))

#' @rdname sgfit-loo
#' @exportS3Method loo::loo_subsample
loo_subsample.sgfit <- function(x, observations = 400, draws = NULL,
                                loo_approximation = "plpd", ...) {
    info <- sgfit_info(x)
    if (!is.null(info$design$custom))
        stop("loo_subsample() evaluates the log-likelihood of single rows, which a custom_model() ",
             "fit's loglik function does not: use loo()", call. = FALSE)
    B <- loo_draws(x, draws)
    N <- info$spec$N
    ## (one relative efficiency for every row, the median of those of an
    ## evenly spaced sample of rows: it enters the Monte Carlo errors and
    ## Pareto k diagnostics, not the estimates)
    probe <- unique(round(seq(1, N, length.out = min(N, 1000L))))
    r_eff <- stats::median(loo::relative_eff(exp(training_log_lik(x, B, probe)),
                                             chain_id = attr(B, "chain")))
    loo::loo_subsample(row_llfun(x), data = matrix(seq_len(N), ncol = 1L), draws = B,
                       observations = observations, r_eff = r_eff,
                       loo_approximation = loo_approximation, ...)
}

## The draws loo() and its kin read: `draws` of them (NULL: up to
## default_draws), as many from each chain (loo::relative_eff() needs it)
loo_draws <- function(x, draws) {
    k <- length(chosen_index(x, draws, default_draws))
    C <- coda::nchain(x)
    chosen_draws(x, if (k >= C) C * (k %/% C) else k)
}

## f(log_lik) of the training rows at the draws B (S x parameters), in
## blocks of rows of at most `block` log-likelihoods (so that memory stays
## bounded at any N), the blocks' results (loo's objects) joined (a
## custom_model() fit: one block)
by_rows <- function(x, B, f, block = block_values) {
    info <- sgfit_info(x)
    if (!is.null(info$design$custom))
        return(f(log_lik.sgfit(x, draws = nrow(B))))
    parts <- lapply(row_blocks(x, nrow(B), block), function(r) f(training_log_lik(x, B, r)))
    join_pointwise(parts, nrow(B))
}

## the training rows in blocks of at most `block` log-likelihoods at S
## draws
row_blocks <- function(x, S, block = block_values) {
    N <- sgfit_info(x)$spec$N
    size <- max(1L, floor(block / S))
    split(seq_len(N), ceiling(seq_len(N) / size))
}
block_values <- 2^22

## the log-likelihoods (S x length(r)) of the training rows r at the draws B
training_log_lik <- function(x, B, r)
    without_sigma(draw_level(x, NULL, NULL, 2L, NULL, "loo()", rows = r, B = B))

## loo's object for all rows from those of blocks of rows (as loo::loo() or
## loo::waic() on the whole matrix would give it): the pointwise values and
## diagnostics bound, each estimate the sum of its pointwise column with
## standard error sqrt(n var), as loo computes them
join_pointwise <- function(parts, S) {
    out <- parts[[1L]]
    if (length(parts) == 1L) return(out)
    pw <- do.call(rbind, lapply(parts, `[[`, "pointwise"))
    out$pointwise <- pw
    if (!is.null(out$diagnostics))
        out$diagnostics <- lapply(stats::setNames(nm = names(out$diagnostics)), function(f)
            unlist(lapply(parts, function(p) p$diagnostics[[f]]), use.names = FALSE))
    for (e in rownames(out$estimates)) {
        v <- pw[, e]
        out$estimates[e, ] <- c(sum(v), sqrt(length(v) * stats::var(v)))
        out[[e]] <- out$estimates[e, 1L]
        out[[paste0("se_", e)]] <- out$estimates[e, 2L]
    }
    attr(out, "dims") <- c(S, nrow(pw))
    out
}

## loo_subsample()'s log-likelihood function of one training row (data_i:
## its number) at the draws `draws`; loo calls it for every row at the
## draws' mean (one row of draws) for its approximation, which one pass
## over the rows gives (in blocks), kept for the calls that follow
row_llfun <- function(x) {
    cache <- new.env(parent = emptyenv())
    function(data_i, draws) {
        i <- as.integer(data_i[, 1L])
        if (nrow(draws) > 1L) return(training_log_lik(x, draws, i))
        if (!identical(draws, cache$point)) {
            cache$point <- draws
            cache$ll <- unlist(lapply(row_blocks(x, 1L), function(r)
                as.vector(training_log_lik(x, draws, r))), use.names = FALSE)
        }
        cache$ll[i]
    }
}

#' @rdname sgfit-loo
#' @exportS3Method bayesplot::pp_check
pp_check.sgfit <- function(object, plotfun = NULL, ndraws = 50, seed = NULL, ...) {
    info <- sgfit_info(object)
    check_draw_model(object, info, "pp_check()")
    if (is.null(plotfun)) plotfun <- family_entry(info$family)$ppc
    if (!is.character(plotfun) || length(plotfun) != 1L || is.na(plotfun))
        stop_arg("plotfun", "must be the name of a bayesplot ppc_ function, e.g. \"dens_overlay\"")
    name <- paste0("ppc_", sub("^ppc_", "", plotfun))
    fun <- get0(name, envir = asNamespace("bayesplot"), mode = "function")
    if (is.null(fun))
        stop_arg("plotfun", sprintf("names no function of bayesplot (%s)", name))
    S <- nrow(all_draws(object))
    ndraws <- check_count(ndraws, "ndraws", 1L)
    yrep <- posterior_predict.sgfit(object, draws = min(ndraws, S), seed = seed)
    yrep <- matrix(as.vector(yrep), nrow(yrep))
    fun(predicted_response(info), yrep, ...)
}

## the training response on posterior_predict()'s scale: a binomial
## response of several trials its successes (or proportions, given as
## such), a categorical one its class codes 1 to K
predicted_response <- function(info) {
    d <- info$design
    spec <- fit_spec(info)
    y_int <- user_order(spec, spec$y)
    entry <- family_entry(info$family)
    if (location_scale(info$family)) d$y_center + d$y_scale * y_int
    else if (class_response(info$family)) as.integer(y_int) + 1L
    else if (identical(d$response_kind, "cbind")) as.integer(round(y_int * training_trials(info)))
    else if (identical(d$response_kind, "proportion")) y_int
    else as.integer(y_int)
}

#' @rdname sgfit-posterior
#' @exportS3Method rstantools::predictive_error
predictive_error.sgfit <- function(object, newdata = NULL, draws = NULL, seed = NULL,
                                   re.form = NULL, y = NULL, allow_new_levels = FALSE, ...) {
    no_dots(...)
    info <- sgfit_info(object)
    if (class_response(info$family))
        stop("predictive_error() is for a numeric response; a ", info$family$family,
             "() fit's predictive draws are class codes", call. = FALSE)
    yrep <- posterior_predict.sgfit(object, newdata = newdata, draws = draws, seed = seed,
                                    re.form = re.form, allow_new_levels = allow_new_levels)
    observed <- if (is.null(newdata)) {
        if (!is.null(y))
            stop_arg("y", "is the response of new rows: give it with newdata (without newdata ",
                     "the fit's own response is used)")
        predicted_response(info)
    } else {
        ## (new rows' response as posterior_predict() draws it)
        coded <- new_response(info, newdata, y, ncol(yrep))
        d <- info$design
        if (location_scale(info$family)) d$y_center + d$y_scale * coded$y
        else if (identical(coded$kind, "cbind")) round(coded$y * coded$trials)
        else coded$y
    }
    -sweep(yrep, 2L, observed)
}
