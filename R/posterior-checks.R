## Posterior and predictive intervals, and the model checks of loo and
## bayesplot through the draw-level methods (R/posterior-draws.R).

#' @rdname sgfit-posterior
#' @exportS3Method rstantools::posterior_interval
posterior_interval.sgfit <- function(object, prob = 0.9, type = "central", pars = NULL, ...) {
    if (!identical(type, "central"))
        stop_arg("type", "must be \"central\" (equal-tailed intervals), not ", format_value(type))
    probs <- interval_probs(prob)
    B <- all_draws(object)
    pars <- if (is.null(pars)) colnames(B) else chosen_parameters(pars, colnames(B), "pars")
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
    if (family_entry(info$family)$several)
        stop("predictive_interval() is for a numeric response; a categorical() fit's predictive ",
             "draws are class codes: use posterior_predict() or posterior_epred()", call. = FALSE)
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
#' the training rows at every kept draw ([log_lik.sgfit()]).  `loo()`
#' passes the relative efficiencies of the draws, computed chain by chain
#' (`loo::relative_eff(exp(log_lik), chain_id = )`), so that the Monte
#' Carlo standard errors and the Pareto k diagnostics account for the
#' chains' autocorrelation.  Stochastic-gradient draws are approximate
#' (their step size biases them slightly): the estimates are those of the
#' approximate posterior the draws represent.
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
#' @param plotfun the 'bayesplot' function for `pp_check()`: the name of
#'   one of its `ppc_*` functions that take `y` and `yrep`, with or without
#'   the prefix (`"dens_overlay"`, `"hist"`, `"stat"`, `"bars"`, ...);
#'   `NULL` for the default above.
#' @param ndraws the number of posterior draws to simulate responses from
#'   (evenly spaced over the kept draws).
#' @param seed `NULL` or a seed for those simulations (see
#'   [posterior_predict.sgfit()]).
#' @param ... for `loo()` and `waic()`, passed on to 'loo''s matrix method
#'   (e.g. `cores`); for `pp_check()`, to the 'bayesplot' function.
#' @return `loo()`: an object of class `psis_loo`; `waic()`: of class
#'   `waic` (see 'loo'); `pp_check()`: a ggplot object.
#' @seealso [log_lik.sgfit()]
#' @name sgfit-loo
#' @examples
#' data(Pima.tr, package = "MASS")
#' set.seed(1)
#' fit <- sgfs(type ~ glu + bmi, data = Pima.tr, n_iter = 2000, batch_size = 50)
#' if (requireNamespace("loo", quietly = TRUE)) print(loo::loo(fit))
#' if (requireNamespace("bayesplot", quietly = TRUE)) bayesplot::pp_check(fit)
NULL

#' @rdname sgfit-loo
#' @exportS3Method loo::loo
loo.sgfit <- function(x, ...) {
    ll <- log_lik.sgfit(x)
    r_eff <- loo::relative_eff(exp(ll), chain_id = draw_chains(x))
    loo::loo(ll, r_eff = r_eff, ...)
}

#' @rdname sgfit-loo
#' @exportS3Method loo::waic
waic.sgfit <- function(x, ...) loo::waic(log_lik.sgfit(x), ...)

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
    d <- info$design
    spec <- fit_spec(info)
    y_int <- user_order(spec, spec$y)
    ## (a binomial response of several trials: its successes, or proportions)
    entry <- family_entry(info$family)
    y <- if (location_scale(info$family)) d$y_center + d$y_scale * y_int
         else if (entry$several) as.integer(y_int) + 1L
         else if (identical(d$response_kind, "cbind")) as.integer(round(y_int * training_trials(info)))
         else if (identical(d$response_kind, "proportion")) y_int
         else as.integer(y_int)
    fun(y, yrep, ...)
}
