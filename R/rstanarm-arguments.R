## rstanarm's arguments in a sampler's call: those with an equivalent here
## are translated into it (iter -> n_iter, warmup -> burnin, refresh ->
## progress and verbose, adapt_delta -> target_accept where a sampler
## adapts to one, seed -> a seed for the run with the caller's random
## stream restored after, prior_aux -> prepare_run()'s); the rest are refused with the package's way of
## doing what they do; anything else is an unknown argument (no_dots()).
## `frame`: the sampler's evaluation frame, whose arguments are set.

#' rstanarm's arguments
#'
#' The samplers take the arguments a user of 'rstanarm' writes, with the
#' package's meaning:
#' * `iter`: the iterations of each chain, burn-in included (`n_iter`);
#'   `warmup`: its burn-in (`burnin`).  Without them (and `n_iter = NULL`)
#'   the run grows until the chains mix, which 'rstanarm' does not do.
#' * `seed`: a seed for [set.seed()], under which the fit runs; the
#'   caller's random-number stream is left as it was.  (Without it the fit
#'   draws from, and advances, that stream, as every R function does.)
#' * `refresh`: `0` runs silently (`progress = FALSE`, `verbose = FALSE`);
#'   a positive number shows the progress bar and the run's messages
#'   (`progress` or `verbose` given say otherwise).
#' * `adapt_delta`: for [mala()] and [hmc()], the acceptance rate their step
#'   adapts to (`target_accept`); the stochastic-gradient samplers have no
#'   acceptance step to adapt to, and refuse it.
#' * `chains` and `cores` are the samplers' own; `cores` defaults to
#'   `getOption("mc.cores", 1L)`, as in 'rstanarm'.
#' * `prior_aux`: the prior of the family's parameter beyond the mean, on
#'   its own scale (`gaussian()`'s sigma, [neg_binomial_2()]'s phi,
#'   `Gamma()`'s shape): [exponential()]`(rate)` (rstanarm's default law),
#'   or [normal()]`(0, s)`, [student_t()]`(df, 0, s)`, [cauchy()]`(0, s)` as
#'   half-laws; rstanarm's objects too (with `autoscale`, a noise sd's scale
#'   times sd(y)).  Left out: `normal(0, 5)` on its log (on the standardised
#'   scale for sigma).  For [cumulative()], the cutpoints' prior:
#'   [dirichlet()] (by default `dirichlet(1)`), which `prior_counts`
#'   (`stan_polr()`'s name) gives too.
#'
#' Refused, each with a message that names the equivalent: `prior = NULL`
#' and `prior_aux = NULL` (rstanarm's flat priors; leaving them out gives
#' the defaults), `QR` (the samplers already run in the metric of the
#' posterior's curvature, which decorrelates the coefficients as the QR
#' reparametrisation does), `algorithm` (each algorithm is its own function), `prior_PD`
#' (sampling from the prior alone is not available), `sparse` (sparse
#' predictors are read as they are given: a `Matrix` `x`).
#'
#' @name rstanarm-arguments
#' @examples
#' data(Pima.tr, package = "MASS")
#' fit <- sgfs(type ~ glu + bmi, data = Pima.tr, iter = 2000, warmup = 500, seed = 1,
#'             refresh = 0)
#' fit2 <- sgfs(type ~ glu + bmi, data = Pima.tr, iter = 2000, warmup = 500, seed = 1,
#'              refresh = 0)
#' identical(as.matrix(fit), as.matrix(fit2))
NULL

rstanarm_arguments <- function(frame, ...) {
    given <- function(a) exists(a, envir = frame, inherits = FALSE) &&
        !eval(call("missing", as.name(a)), frame)
    if (given("prior") && is.null(get("prior", envir = frame)))
        stop_arg("prior", "= NULL is rstanarm's flat prior, which the samplers do not have (the ",
                 "mode they start from, their metric and their divergence checks need a proper ",
                 "prior): leave `prior` out for the default, normal(0, 2.5) on the standardised ",
                 "scale, or give a wide one, such as normal(0, 100)")
    dots <- list(...)
    if (!length(dots) || is.null(names(dots))) return(no_dots(...))
    translate <- function(theirs, ours, value) {
        if (given(ours))
            stop_arg(theirs, sprintf("is rstanarm's name for `%s`: give one of them", ours))
        assign(ours, value, envir = frame)
    }
    take <- function(a) {
        v <- dots[[a]]
        dots[[a]] <<- NULL
        v
    }
    for (a in intersect(names(rstanarm_refused), names(dots)))
        stop_arg(a, rstanarm_refused[[a]])
    if (given("prior") && is.null(get("prior", envir = frame)))
        stop_arg("prior", "= NULL is rstanarm's flat prior, which the samplers do not have (the ",
                 "mode they start from, their metric and their divergence checks need a proper ",
                 "prior): leave `prior` out for the default, normal(0, 2.5) on the standardised ",
                 "scale, or give a wide one, such as normal(0, 100)")
    if (!is.null(dots$iter))
        translate("iter", "n_iter", check_count(take("iter"), "iter", 2L))
    if (!is.null(dots$warmup))
        translate("warmup", "burnin", check_count(take("warmup"), "warmup", 0L))
    if (!is.null(dots$refresh)) {
        r <- take("refresh")
        if (!is.numeric(r) || length(r) != 1L || is.na(r) || r < 0)
            stop_arg("refresh", "must be 0 (silent) or a positive number (progress shown), not ",
                     format_value(r))
        for (a in c("progress", "verbose"))
            if (exists(a, envir = frame, inherits = FALSE) && !given(a)) assign(a, r > 0, envir = frame)
    }
    if (!is.null(dots$adapt_delta)) {
        v <- take("adapt_delta")
        if (!exists("target_accept", envir = frame, inherits = FALSE))
            stop_arg("adapt_delta", "is the acceptance rate NUTS adapts its step to; a ",
                     "stochastic-gradient sampler has no acceptance step (its step comes from ",
                     "`stepsize`, or its rule when NULL); mala() and hmc() take it as `target_accept`")
        if (!is.numeric(v) || length(v) != 1L || !(v > 0 && v < 1))
            stop_arg("adapt_delta", "must be a number between 0 and 1, not ", format_value(v))
        translate("adapt_delta", "target_accept", v)
    }
    aux_given <- "prior_aux" %in% names(dots)
    if (aux_given) {
        v <- take("prior_aux")
        if (is.null(v))
            stop_arg("prior_aux", "= NULL is rstanarm's flat prior on the noise sd (or ",
                     "dispersion), which the samplers do not have: leave it out for the default ",
                     "(normal(0, 5) on its log), or give exponential(rate) or a wide half-law")
        assign("prior_aux", v, envir = frame)
    }
    if ("prior_counts" %in% names(dots)) {           # (stan_polr's: cumulative()'s cutpoints)
        if (aux_given)
            stop_arg("prior_counts", "is stan_polr()'s name for cumulative()'s `prior_aux`: ",
                     "give one of them")
        v <- take("prior_counts")
        if (is.null(v))
            stop_arg("prior_counts", "= NULL is rstanarm's flat prior on the cutpoints, which the ",
                     "samplers do not have: leave it out for the default, dirichlet(1)")
        assign("prior_aux", v, envir = frame)
    }
    if (!is.null(dots$seed)) {
        seed <- take("seed")
        if (!is.numeric(seed) || length(seed) != 1L || !is.finite(seed) || seed != round(seed))
            stop_arg("seed", "must be a whole number for set.seed(), not ", format_value(seed))
        user <- rng_snapshot()
        do.call(on.exit, list(call("rng_restore", user), add = TRUE), envir = frame)
        set.seed(seed)
    }
    do.call(no_dots, dots)
}

rstanarm_refused <- list(
    QR = paste("is rstanarm's QR reparametrisation of the predictors; the samplers already run in",
               "the metric of the posterior's curvature at its mode (see `metric`), which",
               "decorrelates the coefficients as QR does: leave it out"),
    algorithm = paste("is rstanarm's choice of algorithm; here each algorithm is its own function:",
                      "sgfs(), sgld(), sgldcv(), psgld(), sghmc(), sgnht(), isgd(), mala(), hmc()"),
    prior_PD = "(sampling from the prior alone) is not available",
    sparse = "is not needed: give a sparse Matrix as `x` and it is read as it is")
