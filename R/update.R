#' Continue a chain, or refit with other settings
#'
#' `update(fit, n_iter = k)` runs every chain `k` further iterations from
#' where it stopped: the same chain state (parameters, sampler state,
#' iteration count for the step-size schedule) and the same random-number
#' stream, so one run of `n` iterations and a run of `m` continued by
#' `n - m` give identical draws.  The random-number state saved at the end
#' of the fit is restored first, whatever was drawn in between.  With other
#' arguments, the fit's call is re-evaluated with them (a new fit).
#'
#' @param object a fit of [sgfs()] or [sgld()].
#' @param n_iter number of further iterations.
#' @param append keep the earlier draws in the value (`TRUE`) or return only
#'   the new ones.
#' @param progress show a progress bar.
#' @param ... other arguments: if any are given, the model is refitted with
#'   them instead.
#' @return A fit of the same class.
#' @examples
#' data(Pima.tr, package = "MASS")
#' fit <- sgfs(type ~ glu + bmi, data = Pima.tr, n_iter = 1000, batch_size = 50)
#' longer <- update(fit, n_iter = 1000)
#' coda::niter(longer)
#' @export
update.sgfit <- function(object, n_iter, append = TRUE, progress = interactive(), ...) {
    info <- sgfit_info(object)
    extras <- match.call(expand.dots = FALSE)$...
    if (length(extras)) {
        call <- info$call
        if (!missing(n_iter)) call$n_iter <- n_iter
        for (a in names(extras)) call[[a]] <- extras[[a]]
        return(eval(call, parent.frame()))
    }
    if (missing(n_iter)) stop_arg("n_iter", "is missing: how many further iterations?")
    n_iter <- check_count(n_iter, "n_iter", 1L)
    check_flag(append, "append")
    iters <- vapply(info$states, `[[`, 0, "iter")
    if (!append && length(unique(iters)) > 1L)
        stop_arg("append", "must be TRUE: the chains stopped at different iterations (after an interrupt)")
    if (!append && n_kept_between(iters[1L], iters[1L] + n_iter, info$burnin, info$thin) == 0L)
        stop_arg("n_iter", sprintf("= %d keeps no draw with thin = %d: run longer (or append)",
                                   n_iter, info$thin))
    previous <- if (append) chain_draws(object)
    if (!append) info$pred <- NULL
    first <- if (append) stats::start(object) else
        info$burnin + info$thin * (n_kept_between(0, iters[1L], info$burnin, info$thin) + 1L)
    res <- run_chains(info$spec, info$states, n_iter, check_flag(progress, "progress"),
                      info$cores)
    new_sgfit(info, res, previous, first)
}
