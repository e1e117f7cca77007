#' Continue a chain, or refit with another formula or other settings
#'
#' `update(fit, n_iter = k)` runs every chain `k` further iterations from
#' where it stopped: the same chain state (parameters, sampler state,
#' iteration count for the step-size schedule) and the same random-number
#' stream, so one run of `n` iterations and a run of `m` continued by
#' `n - m` give identical draws.  The random-number state saved at the end
#' of the fit is restored first, whatever was drawn in between.  A fit cut
#' by [window()][window.sgfit] or `[` continues on its kept iterations
#' (see [sgfit-draws]); one cut before its chains' last draw can only be
#' continued with `append = FALSE`.  Chains that an interrupt kept from
#' starting (chains run one after another, `cores = 1`) are not lost: the
#' fit keeps their starts, and `update()` first runs each, on its own
#' random-number stream, up to where the others' draws end, so that the
#' continued fit has every chain, as an uninterrupted run would.
#'
#' A fit refers to its data rather than carrying a copy (see [sgfs()]): a
#' fit saved with [saveRDS()] keeps its draws and settings, and read back in
#' a new session it has no data.  Give them again, `update(fit, n_iter = k,
#' data = d)` (`x = , y = ` for a fit given a matrix): they are checked
#' against the fit's and the chains go on as if never saved.
#'
#' With a new formula (`update(fit, . ~ . - x)`, as for [stats::glm()] fits) or
#' other arguments, the fit's call is re-evaluated with them: a new fit,
#' whose chains start afresh.  `n_iter` and `progress` then go to the new
#' call.
#'
#' @param object a fit of [sgfs()], [sgld()] or another sampler.
#' @param formula. a new model formula, in which `.` stands for the fit's
#'   (see [stats::update.formula()]); the model is refitted with it.  For a fit
#'   made with a formula.  (A number here is taken as `n_iter`.)
#' @param n_iter number of further iterations.
#' @param append keep the earlier draws in the value (`TRUE`) or return only
#'   the new ones.
#' @param progress the run's progress over all its chains (forked or
#'   futures on this machine included): in an interactive session a bar with
#'   the time spent and left; elsewhere (Rscript, a log) lines, with `TRUE`
#'   one each tenth of the run, with `NA` (the default) one every 10
#'   seconds of a run that takes longer; `FALSE`: nothing.
#' @param ... other arguments of the sampler: if any are given, the model is
#'   refitted with them instead; except the data (`data`, `x`, `y`,
#'   `weights`, `offset`, `subset`) of a fit whose data are gone, which are
#'   attached and the chains continued.
#' @return A fit of the same class.
#' @examples
#' data(Pima.tr, package = "MASS")
#' fit <- sgfs(type ~ glu + bmi, data = Pima.tr, n_iter = 1000, batch_size = 50)
#' longer <- update(fit, n_iter = 1000)
#' coda::niter(longer)
#' smaller <- update(fit, . ~ . - bmi)
#' coda::varnames(smaller)
#' @export
update.sgfit <- function(object, formula., n_iter, append = TRUE, progress = NA,
                         ...) {
    info <- sgfit_info(object)
    ## (the fit's own settings: its data are read and its chains run as
    ## when it was made, whatever the options now, and a refit without a
    ## control of its own takes them; a fit that records none takes the
    ## defaults)
    if (!is.null(info$control)) local_control(info$control)
    new_formula <- if (!missing(formula.)) formula.
    if (is.numeric(new_formula)) {             # update(fit, 1000): the iterations
        if (!missing(n_iter))
            stop_arg("formula.", "must be a formula such as . ~ . - x, not ",
                     format_value(new_formula))
        n_iter <- new_formula
        new_formula <- NULL
    }
    extras <- match.call(expand.dots = FALSE)$...
    ## the data again, for a fit whose data are gone (read back with
    ## readRDS()): attached (checked against the fit's), then the chains go on
    if (is.null(new_formula) && length(extras) && !is.null(names(extras)) &&
        all(names(extras) %in% c("data", "x", "y", "weights", "offset", "subset")) &&
        is.null(handle_data(info))) {
        object <- reattach_data(object, extras, parent.frame())
        info <- sgfit_info(object)
        extras <- NULL
    }
    if (!is.null(new_formula) || length(extras)) {
        if (!missing(append))
            stop_arg("append", "is for continuing the chains; with a new formula or other ",
                     "arguments update() refits the model")
        call <- info$call
        if (!is.null(new_formula)) {
            if (!inherits(new_formula, "formula"))
                stop_arg("formula.", "must be a formula such as . ~ . - x, not ",
                         format_value(new_formula))
            if (is.null(info$formula))
                stop_arg("formula.", "is for a fit made with a formula; this one was given ",
                         "x and y: refit it with other x instead")
            call$formula <- stats::update(info$formula, new_formula)
        }
        if (!missing(n_iter)) call$n_iter <- n_iter
        if (!missing(progress)) call$progress <- progress
        if (length(extras) && (is.null(names(extras)) || any(names(extras) == "")))
            stop("update() takes the sampler's arguments by name (as update(fit, n_iter = 500) ",
                 "or update(fit, stepsize = 1e-4)), after a new formula", call. = FALSE)
        for (a in names(extras)) call[[a]] <- extras[[a]]
        return(eval(call, parent.frame()))
    }
    if (missing(n_iter)) stop_arg("n_iter", "is missing: how many further iterations?")
    n_iter <- check_count(n_iter, "n_iter", 1L)
    check_flag(append, "append")
    if (length(info$waiting)) {
        object <- catch_up(object, info)
        info <- sgfit_info(object)
    }
    iters <- vapply(info$states, `[[`, 0, "iter")
    if (append) check_contiguous(object, info, iters)
    if (!append && length(unique(iters)) > 1L)
        stop_arg("append", "must be TRUE: the chains stopped at different iterations (after an interrupt)")
    if (!append && n_kept_between(iters[1L], iters[1L] + n_iter, info$spec$burnin, info$spec$thin) == 0L)
        stop_arg("n_iter", sprintf("= %d keeps no draw with thin = %d: run longer (or append)",
                                   n_iter, info$spec$thin))
    previous <- if (append) chain_draws(object)
    if (!append) info$pred <- info$pred_stale <- NULL
    first <- if (append) stats::start(object) else
        info$spec$burnin + info$spec$thin * (n_kept_between(0, iters[1L], info$spec$burnin, info$spec$thin) + 1L)
    spec <- fit_spec(info)
    progress <- check_flag(progress, "progress", na_ok = TRUE)
    ## (a matrix read in place in the engine's layout for the run and the
    ## checks: with_engine_order())
    with_engine_order(spec, {
        res <- run_chains(spec, info$states, n_iter, progress, info$cores,
                          own_streams = length(info$states) > 1L || isTRUE(info$own_stream))
        new_sgfit(info, res, previous, first)
    })
}

## Appending needs every chain's draws to run to its last kept iteration
## (window(end = ) can cut them: the continued draws would leave a gap),
## and the predictive kept on given rows to cover every draw.
check_contiguous <- function(object, info, iters) {
    if (isTRUE(info$pred_stale))
        stop_arg("append", "must be FALSE: this fit was cut by window() or [, and the ",
                 "predictive its chains kept (keep = predictive()) covers the draws cut too")
    start <- coda::mcpar(first_chain(object))[1L]
    rows <- vapply(chain_draws(object), nrow, 0L)
    last <- start + info$spec$thin * (rows - 1)
    due <- info$spec$burnin + info$spec$thin *
        vapply(iters, function(t) n_kept_between(0, t, info$spec$burnin, info$spec$thin), 0)
    if (any(last != due)) {
        k <- which(last != due)[1L]
        stop_arg("append", sprintf(paste0(
            "must be FALSE: the draws end at iteration %.0f but the chains ran to iteration %.0f ",
            "(the fit was cut by window(end = )), so the continued draws would leave a gap; ",
            "continue the whole fit and cut the result, or take the new draws alone"),
            last[k], iters[k]))
    }
}

## Chains an interrupt kept from starting (or from keeping a draw) wait in
## info$waiting with their states; before a continuation each runs alone,
## on its own random-number stream, to the iteration up to which the fit
## shows every chain's draws, so that all continue together: their draws
## are those of an uninterrupted run.
catch_up <- function(object, info) {
    iters <- vapply(info$states, `[[`, 0, "iter")
    check_contiguous(object, info, iters)
    if (stats::start(object) != info$spec$burnin + info$spec$thin)
        stop("the chains that did not start after the interrupt can be run only while the ",
             "others have all their draws from the first: continue them before cutting ",
             "the fit", call. = FALSE)
    target <- stats::end(object)
    res <- lapply(info$waiting, function(state)
        run_chains(fit_spec(info), list(state), max(target - state$iter, 0), FALSE, 1L,
                   own_streams = TRUE)[[1L]])
    K <- length(info$states)
    info$states <- c(info$states, info$waiting)
    info$waiting <- NULL
    new_sgfit(info, c(vector("list", K), res),
              c(chain_draws(object), vector("list", length(res))),
              stats::start(object), checks = FALSE)
}
