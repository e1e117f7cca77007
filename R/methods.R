#' Methods for fits of the sgfs samplers
#'
#' A fit is a 'coda' object (`mcmc` for one chain, `mcmc.list` for several)
#' of class `sgfit`; every 'coda' function works on it as it is.  These
#' methods add a sampler report and the usual model-fit accessors.
#'
#' @param object,x a fit returned by [sgfs()] or [sgld()].
#' @param digits significant digits to print.
#' @param pars,regex_pars for `summary()` and `plot()`: the parameters
#'   shown, as 'rstanarm' chooses them: names or indices, and regular
#'   expressions their names match (both `NULL`: every parameter; for
#'   `plot()` of a mixed model, every one but the group effects).
#' @param probs for `summary()`: the probabilities of the quantiles shown
#'   (coda's `quantiles`).
#' @param plotfun for `plot()`: `NULL` for coda's trace and density plots,
#'   or the name of a 'bayesplot' `mcmc_*()` function, with or without the
#'   prefix (`"areas"`, `"intervals"`, `"trace"`, `"dens_overlay"`,
#'   `"pairs"`, ...), called on `as.array(x)` (iterations x chains x
#'   parameters), as 'rstanarm''s `plot()` does.
#' @param ... further arguments, passed on (for `plot`, to coda's plot
#'   method or the 'bayesplot' function).
#' @return `coef`: posterior means (for a mixed model, its coefficients per
#'   group, see [sgfit-mixed]); `vcov`: posterior covariance (of a mixed
#'   model's fixed effects and noise sd); `nobs`:
#'   the number of observations; `formula`: the model formula (`NULL` for
#'   matrix fits); `summary`: a `summary.sgfit` object, coda's summary with
#'   effective sample sizes, ESS per second, ATUC (autocorrelation time x
#'   seconds per kept draw, Ahn et al. 2012) per parameter, gradient
#'   evaluations and data passes per effective draw, and the sampler's
#'   diagnostics added.
#' @name sgfit-methods
#' @examples
#' data(Pima.tr, package = "MASS")
#' fit <- sgfs(type ~ glu + bmi, data = Pima.tr, n_iter = 2000, batch_size = 50)
#' fit
#' coef(fit)
#' vcov(fit)
#' coda::effectiveSize(fit)
NULL

sgfit_info <- function(x) attr(x, "sgfit")

## the draws of all chains as one matrix (rows: draws, columns: parameters)
all_draws <- function(x) {
    if (inherits(x, "mcmc.list"))
        return(do.call(rbind, lapply(unclass(x), as.matrix)))
    m <- unclass(x)
    attributes(m) <- attributes(m)[c("dim", "dimnames")]
    m
}

## whether the draws hold every model parameter (not so for a network that
## kept only some, keep = predictive()): the first columns, a mixed model's
## sds and effects after them
every_parameter_kept <- function(object, info) {
    p <- info$design$par_names
    identical(coda::varnames(object)[seq_along(p)], p)
}

## the value as a plain coda object, for delegating to coda's methods
as_coda <- function(x) {
    attr(x, "sgfit") <- NULL
    class(x) <- setdiff(class(x), "sgfit")
    x
}

## the sampler's label, hints and facts: its kind (R/sampler-kinds.R), defined
## with the sampler; and its temperature when it is not 1
method_label <- function(info) {
    label <- sampler_kind(info$method)$label(info)
    temperature <- info$spec$temperature
    if (is.null(temperature) || temperature == 1) return(label)
    sprintf("%s at temperature %g (a tempered posterior, not the Bayesian one)", label, temperature)
}

## the likelihood of a fit: its family, or its custom model
likelihood_label <- function(info) {
    if (!is.null(info$design$custom)) return(model_label(info$design$custom))
    sprintf("%s(%s)", info$family$family, info$family$link)
}

## what to try when a chain of this method diverged at step size eps
divergence_hint <- function(info, eps) sampler_kind(info$method)$divergence(info, eps)

## SGFS's preconditioner is the empirical Fisher information N C (C the
## per-row score covariance; with the prior's precision P), which equals the
## curvature H of the log posterior only where the model fits and the data
## identify every direction (Bernstein-von Mises).  Rows of rare or
## separated factor levels break that: their residuals y - p are tiny,
## so N C is far smaller than H there, and SGFS's steps along those
## directions are far too long.  When, at the mode, some direction has
## N C + P below a tenth of H (the smallest eigenvalue of H^-1/2 (N C + P)
## H^-1/2), the hint says so and names the coefficient that direction moves
## most (in posterior sd); else `otherwise`.  One full-data pass (and the
## mode's search if the fit has none cached), made only when a fit has
## failed a check.  With the curvature in the preconditioner (sgfs(curvature
## = TRUE)) the steps there are right, but the minibatch noise is not
## Gaussian: a minibatch rarely holds one of those rows, and one that does
## moves the chain by many posterior sds (sgfs() on a9a: 393 log-density
## units below the mode, against 62 expected); the hint says that instead.
fisher_hint <- function(info, otherwise) {
    if (!laplace_available(info$design)) return(otherwise)
    mode <- info$laplace$mode
    if (is.null(mode))              # (not cached: from the first chain's last state)
        mode <- tryCatch(newton_mode(fit_spec(info), info$states[[1L]]$theta)$mode,
                         error = function(e) NULL)
    if (is.null(mode)) return(otherwise)
    cur <- tryCatch(full_curvature(fit_spec(info), mode, cov = TRUE), error = function(e) NULL)
    R <- if (!is.null(cur)) tryCatch(chol(cur$H), error = function(e) NULL)
    if (is.null(R)) return(otherwise)
    A <- info$spec$N * cur$C + diag(info$spec$prior_prec, length(mode))
    Ri <- backsolve(R, diag(nrow(R)))
    ev <- eigen(crossprod(Ri, A %*% Ri), symmetric = TRUE)
    k <- length(ev$values)
    if (!(ev$values[k] < 0.1)) return(otherwise)
    w <- drop(Ri %*% ev$vectors[, k])             # the direction, in theta
    sd <- sqrt(diag(chol2inv(R)))
    par <- info$design$par_names[which.max(abs(w) / sd)]
    if (isTRUE(info$settings$curvature))
        return(sprintf(paste0(
            "the rows' score covariance is %.2g times the posterior's curvature along a direction ",
            "that moves '%s' most (rows of rare or separated factor levels: a minibatch seldom ",
            "holds one, and one that does moves the chain by many posterior sds), so SGFS's ",
            "minibatch noise is far from Gaussian there and it cannot sample this posterior ",
            "well; use sgldcv(), which holds such rows in every minibatch"), ev$values[k], par))
    sprintf(paste0("SGFS preconditions with the empirical Fisher information, which here is %.2g times ",
                   "the posterior's curvature along a direction that moves '%s' most (residuals far ",
                   "smaller than the model expects do this: rare or separated factor levels, or a ",
                   "fixed sigma set too large): SGFS cannot sample this posterior well; use sgldcv(), ",
                   "which takes its metric from the curvature at the mode"),
            ev$values[k], par)
}

## what to try when the draws look wrong
remedy_hint <- function(info) sampler_kind(info$method)$remedy(info)

#' @rdname sgfit-methods
#' @export
print.sgfit <- function(x, digits = 3, ...) {
    digits <- check_count(digits, "digits", 1L, 15L)
    info <- sgfit_info(x)
    d <- all_draws(x)
    shown <- chain_draws_shown(x)
    ## (a mixed model's group effects are not shown: ranef() summarises them)
    effects <- 0L
    if (!is.null(info$random)) {
        effects <- ncol(d)
        d <- without_effects(d, info)
        effects <- effects - ncol(d)
        shown <- judged_chains(shown, info)
    }
    conv <- convergence_table(shown)
    ## (a network is judged on its label-free quantities: convergence_draws())
    network <- !is.null(info$design$network)
    judged <- if (network) convergence_table(judged_chains(shown, info)) else conv
    ess <- judged$ess_bulk
    ess[is.na(ess)] <- nrow(d)                   # constant draws: nothing to estimate
    cat(method_label(info), "posterior draws,", likelihood_label(info), "\n")
    if (!is.null(info$call)) cat("Call: ", deparse1(info$call), "\n", sep = "")
    mc <- coda::mcpar(if (inherits(x, "mcmc.list")) x[[1L]] else x)
    cat(sprintf("%d chain%s x %d draws (iterations %d:%d, thin %d); %s\n",
                info$chains, if (info$chains > 1L) "s" else "", nrow(d) / info$chains,
                mc[1L], mc[2L], mc[3L],
                if (sampler_kind(info$method)$metropolis) sprintf("all %d rows each iteration", info$spec$N)
                else sprintf("batch %d of %d rows%s", info$spec$batch_size, info$spec$N,
                             if (isTRUE(info$settings$fixed_rows > 0))
                                 sprintf(" (and %d rows of high leverage in every batch)",
                                         as.integer(info$settings$fixed_rows)) else "")))
    if (!is.null(info$run_length))
        cat(run_length_line(info$run_length, min(ess), max(judged$rhat, na.rm = TRUE),
                            judged_label(info)))
    cat(phase_line(info))
    mix <- mixing_costs(info, ess, nrow(d))
    cat(sprintf("Sampling %.3g s%s: %.3g iterations/s, %.3g data passes\n",
                info$elapsed, if (info$chains > 1L) " (summed over chains)" else "",
                info$n_iter * info$chains / info$elapsed, info$grad_evals / info$spec$N))
    cat(sprintf("Slowest %s: %.3g effective draws/s; %.3g gradient evaluations (%.3g data passes) per effective draw\n",
                if (network) paste("of", judged_label(info)) else "parameter",
                mix$ess_per_second, mix$grads_per_ess, mix$passes_per_ess))
    tab <- cbind(mean = colMeans(d), sd = apply(d, 2L, stats::sd),
                 `2.5%` = apply(d, 2L, stats::quantile, 0.025),
                 `97.5%` = apply(d, 2L, stats::quantile, 0.975),
                 Rhat = round(conv$rhat, 3), ESS_bulk = round(conv$ess_bulk),
                 ESS_tail = round(conv$ess_tail))
    print_columns(tab, digits)
    if (effects > 0L)
        cat(sprintf("and %s group effects b[...]: ranef(fit) summarises them, as.matrix(fit) holds their draws\n",
                    big_count(effects)))
    else if (!is.null(info$random) && !info$random$keep_effects)
        cat("The group effects' draws were not kept (sgfs_control(group_draws = TRUE) keeps them): ranef(fit) gives their posterior means and sds\n")
    if (isTRUE(info$clipped > 0))
        cat(sprintf("Note: the metric's drift limit bound %.3g%% of the gradient coordinates (far from Gaussian somewhere, e.g. a separated level's coefficient); the draws there are approximate.\n",
                    100 * info$clipped / (info$n_iter * info$chains * ncol(d))))
    if (min(ess) < 100 || isTRUE(info$run_length$stop %in% c("time", "projected", "stalled")))
        cat(sprintf(paste0("Warning: only %.0f bulk effective draws for some %s; for about 400, ",
                           "continue the chains with update(fit, n_iter = %.0f)%s.\n"),
                    min(ess), if (network) paste("of", judged_label(info)) else "parameters",
                    further_iterations(info, min(ess), 400),
                    faster_samplers_hint(info, length(info$states[[1L]]$theta), ", or use ")))
    if (isTRUE(info$settings$excess > 0.2))
        cat(sprintf("Warning: the minibatch noise exceeds OSGFS's target by %.0f%% in some direction, inflating the variance there; try stepsize = \"max\" (%.3g) or a larger batch_size.\n",
                    100 * info$settings$excess, info$settings$max_stepsize))
    s <- info$settings
    advice <- function(verb)
        if (is.null(s$step_5pct)) "" else sprintf("; stepsize = %.2g %s by 5%%", s$step_5pct, verb)
    if (isTRUE(is.infinite(s$inflation)))
        cat(sprintf("Warning: the step size %.3g is past the stability limit in the stiffest direction (linearised, the chain grows without bound there)%s.\n",
                    s$stepsize, advice("inflates the variance")))
    else if (isTRUE(s$inflation > 0.2) && is.null(s$pilot$noise_share))   # (a network's rule: by design)
        cat(sprintf("Warning: the step size inflates the posterior variance by about %.0f%% in the stiffest direction%s.\n",
                    100 * s$inflation, advice("would")))
    else if (isTRUE(s$inflation < -0.1))
        cat(sprintf("Warning: resampling the momentum every %d steps shrinks the posterior variance by about %.0f%% in the stiffest direction; try a longer trajectory, or none.\n",
                    as.integer(s$trajectory), -100 * s$inflation))
    invisible(x)
}

## how n_iter = NULL chose the run length (stages of grow_run()), given the
## final draws' smallest bulk effective sample size and largest R-hat
run_length_line <- function(rl, min_ess, max_rhat, what = "every parameter") {
    st <- rl$stages
    why <- switch(if (is.null(rl$stop)) "stages" else rl$stop,
                  mixed = sprintf(", >= %g bulk effective draws of %s%s", rl$target, what,
                                  if (is.finite(max_rhat)) sprintf(" and R-hat <= %g", rl$target_rhat) else ""),
                  time = sprintf(", stopped by the time budget (max_time = %.3g s) at %.0f of the %g bulk effective draws aimed for (R-hat %.3f)",
                                 rl$max_time, min_ess, rl$target, max_rhat),
                  stalled = sprintf(", stopped early: the effective sample size stopped growing (%s), at %.0f of the %g aimed for; the chains do not mix here",
                                    paste(round(st$min_ess), collapse = " -> "), min_ess, rl$target),
                  projected = sprintf(", stopped early at %.0f of the %g bulk effective draws aimed for: at this pace they would take about %.3g s, far more than max_time = %.3g s",
                                      min_ess, rl$target, st$needed[nrow(st)], rl$max_time),
                  interrupted = ", interrupted",
                  sprintf(", stopped after %d extension%s at %.0f of the %g bulk effective draws aimed for",
                          nrow(st) - 1L, if (nrow(st) == 2L) "" else "s", min_ess, rl$target))
    sprintf("Run length set by the chains: %s iterations (thin %d)%s\n",
            paste(big_count(st$n_iter), collapse = " -> "), st$thin[nrow(st)], why)
}

## the time of each phase: set-up (start, step, rows), mode, sampling, checks
phase_line <- function(info) {
    mode <- if (!is.null(info$laplace)) info$laplace$seconds else 0
    blas <- if (is.null(info$blas)) "" else paste0("; BLAS: ", info$blas)
    if (!is.null(info$design$hs) && !is.null(info$laplace))      # (R/horseshoe.R)
        return(sprintf(paste("Time: set-up %.3g s (of which the horseshoe's metric %.3g s: %s Newton steps",
                             "to a start, %s warm-up iterations), sampling %.3g s, checks %.3g s%s\n"),
                       info$setup_seconds, mode, format(info$laplace$steps),
                       big_count(sum(hs_warmup)), info$elapsed,
                       if (is.null(info$check_seconds)) 0 else info$check_seconds, blas))
    sprintf("Time: set-up %.3g s (of which the mode %.3g s, %s Newton steps), sampling %.3g s, checks %.3g s%s\n",
            info$setup_seconds, mode,
            if (is.null(info$laplace)) "no" else format(info$laplace$steps),
            info$elapsed, if (is.null(info$check_seconds)) 0 else info$check_seconds, blas)
}

## each chain's draws as shown by the value (the common length)
chain_draws_shown <- function(x)
    if (inherits(x, "mcmc.list")) lapply(unclass(x), all_draws) else list(all_draws(x))

## a numeric table printed column by column: whole numbers (ESS) as
## integers, the rest in fixed notation with `digits` significant digits,
## trailing zeros kept, scientific only for magnitudes below 1e-4 or from 1e6,
## so that one small entry does not switch a whole column to e-notation
print_columns <- function(tab, digits) {
    text <- apply(tab, 2L, function(v) {
        if (all(v == round(v), na.rm = TRUE) && all(abs(v) < 1e15, na.rm = TRUE))
            return(formatC(v, format = "d", big.mark = ""))        # counts (ESS)
        out <- sub("\\.$", "", formatC(v, digits = digits, format = "fg", flag = "#"))
        far <- is.finite(v) & v != 0 & (abs(v) < 1e-4 | abs(v) >= 1e6)
        out[far] <- formatC(v[far], digits = digits, format = "g")
        trimws(out)
    })
    dim(text) <- dim(tab)
    dimnames(text) <- dimnames(tab)
    print(noquote(text), right = TRUE)
}

## the costs of mixing: per second and per gradient evaluation for the
## slowest parameter, and each parameter's ATUC (Ahn et al. 2012): its
## autocorrelation time (kept draws per effective draw) x seconds per kept draw
mixing_costs <- function(info, ess, kept) {
    list(ess_per_second = min(ess) / info$elapsed,
         grads_per_ess = info$grad_evals / min(ess),
         passes_per_ess = info$grad_evals / min(ess) / info$spec$N,
         atuc = (kept / ess) * info$elapsed / kept)
}

## further iterations per chain for about `target` effective draws, if the
## chains mix after burn-in as they have so far
further_iterations <- function(info, ess, target) {
    kept_iters <- max(info$n_iter - info$spec$burnin, 1)
    ceiling(kept_iters * (target / max(ess, 1) - 1))
}

#' @rdname sgfit-methods
#' @export
summary.sgfit <- function(object, pars = NULL, regex_pars = NULL, probs = NULL, ...) {
    info <- sgfit_info(object)
    dots <- list(...)                  # coda's summary() takes `quantiles`, ignores the rest
    do.call(no_dots, dots[!names(dots) %in% c("", "quantiles")])
    if (!is.null(probs)) {
        if (!is.null(dots$quantiles)) stop_arg("probs", "and `quantiles` are the same: give one")
        if (!is.numeric(probs) || !length(probs) || anyNA(probs) || any(probs < 0 | probs > 1))
            stop_arg("probs", "must be probabilities between 0 and 1, not ", format_value(probs))
        dots$quantiles <- probs
    }
    ## coda's time-series standard error fits an AR model inside try(), which
    ## prints the error for a chain of one draw (then the SE is NA)
    if (coda::niter(object) < 2L) {
        old <- options(try.outFile = nullfile())
        on.exit(options(old))
    }
    draws <- as_coda(object)
    chains <- chain_draws_shown(object)
    cols <- chosen_pars(coda::varnames(object), pars, regex_pars)
    if (!is.null(cols)) {
        draws <- draws[, cols, drop = FALSE]
        chains <- lapply(chains, function(m) m[, cols, drop = FALSE])
    }
    out <- do.call(summary, c(list(draws), dots))
    ## (coda gives one parameter's tables as vectors: a row each here)
    for (tab in c("statistics", "quantiles"))
        if (!is.matrix(out[[tab]]))
            out[[tab]] <- matrix(out[[tab]], 1L, dimnames = list(coda::varnames(draws), names(out[[tab]])))
    conv <- convergence_table(chains)
    out$ess <- stats::setNames(conv$ess_bulk, rownames(conv))
    out$ess_tail <- stats::setNames(conv$ess_tail, rownames(conv))
    mix <- mixing_costs(info, out$ess, coda::niter(object) * coda::nchain(object))
    out$ess_per_second <- out$ess / info$elapsed
    out$atuc <- mix$atuc
    out$rhat <- stats::setNames(conv$rhat, rownames(conv))
    out$method <- method_label(info)
    out$elapsed <- info$elapsed
    out$grad_per_ess <- mix$grads_per_ess
    out$passes_per_ess <- mix$passes_per_ess
    out$control <- info$control
    out$precision <- info$precision
    class(out) <- c("summary.sgfit", class(out))
    out
}

#' @rdname sgfit-methods
#' @export
print.summary.sgfit <- function(x, digits = 3, ...) {
    digits <- check_count(digits, "digits", 1L, 15L)
    cat(x$method, "\n")
    NextMethod()
    tab <- cbind(Rhat = round(x$rhat, 3), ESS_bulk = round(x$ess),
                 ESS_tail = round(x$ess_tail), `ESS/s` = signif(x$ess_per_second, digits),
                 `ATUC (s)` = signif(x$atuc, digits))
    cat("3. Mixing:\n\n")
    print(tab)
    cat(sprintf("\nTime %.3g s; %.3g gradient evaluations (%.3g data passes) per effective draw of the slowest parameter\n",
                x$elapsed, x$grad_per_ess, x$passes_per_ess))
    cat("Rhat: rank-normalised split R-hat; ESS_bulk, ESS_tail: bulk and tail effective sample sizes (Vehtari et al. 2021)\n")
    cat("ATUC: autocorrelation time x seconds per kept draw (Ahn et al. 2012); smaller is better\n")
    if (!is.null(x$control)) {
        cat("\nNumerical settings (control):\n")
        cat(control_lines(x$control, x$precision), sep = "\n")
    }
    invisible(x)
}

#' @rdname sgfit-methods
#' @export
coef.sgfit <- function(object, ...)
    if (is.null(sgfit_info(object)$random)) colMeans(model_draws(object)) else coef_by_group(object)

#' @rdname sgfit-methods
#' @export
vcov.sgfit <- function(object, ...) stats::cov(model_draws(object))

## the draws of the model's parameters: all but a horseshoe's scales and a
## mixed model's sds, correlations and group effects
model_draws <- function(object) {
    d <- all_draws(object)
    info <- sgfit_info(object)
    if (!is.null(info$random)) return(d[, info$design$par_names, drop = FALSE])
    hs <- info$design$hs
    if (is.null(hs)) d else d[, setdiff(colnames(d), hs$names), drop = FALSE]
}

#' @rdname sgfit-methods
#' @export
nobs.sgfit <- function(object, ...) sgfit_info(object)$spec$N

#' @rdname sgfit-methods
#' @export
formula.sgfit <- function(x, ...) sgfit_info(x)$formula

#' @rdname sgfit-methods
#' @export
plot.sgfit <- function(x, plotfun = NULL, pars = NULL, regex_pars = NULL, ...) {
    info <- sgfit_info(x)
    cols <- chosen_pars(coda::varnames(x), pars, regex_pars)
    ## (a mixed model's group effects, thousands of traces, are left out
    ## unless chosen: ranef() summarises them)
    if (is.null(cols) && !is.null(info$random) && info$random$keep_effects)
        cols <- coda::varnames(x)[random_columns(info)$model]
    if (is.null(plotfun)) {
        y <- as_coda(x)
        if (!is.null(cols)) y <- y[, cols, drop = FALSE]
        return(plot(y, ...))
    }
    if (!is.character(plotfun) || length(plotfun) != 1L || is.na(plotfun))
        stop_arg("plotfun", "must be the name of a bayesplot mcmc_ function, e.g. \"areas\", not ",
                 format_value(plotfun))
    if (!requireNamespace("bayesplot", quietly = TRUE))
        stop_arg("plotfun", "needs the package 'bayesplot': install.packages(\"bayesplot\"), ",
                 "or plotfun = NULL for coda's trace and density plots")
    name <- paste0("mcmc_", sub("^mcmc_", "", plotfun))
    fun <- get0(name, envir = asNamespace("bayesplot"), mode = "function")
    if (is.null(fun)) stop_arg("plotfun", sprintf("names no function of bayesplot (%s)", name))
    fun(as.array.sgfit(x, pars = cols), ...)
}
