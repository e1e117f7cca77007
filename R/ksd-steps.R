## Choosing a step size by the kernel Stein discrepancy over a grid.

#' Choose a step size by kernel Stein discrepancy
#'
#' Runs a sampler once per step size of a grid and measures each run's
#' [ksd()]: too small a step mixes slowly, too large a one is biased, and
#' the KSD penalises both, so the step with the smallest KSD is a good
#' choice for runs of that length (Gorham and Mackey, 2017, recommend
#' exactly this use; Baker et al., 2019, use it to tune SG-MCMC).  A run
#' whose chain diverges gets `ksd = Inf`.
#'
#' The runs are the call `sampler(..., stepsize = s)` for each `s`, evaluated
#' where `ksd_steps()` is called, so their fits record a readable call.  Keep
#' the other arguments (data, batch size, iterations, seed) the same for all.
#' Every run has the same length: `n_iter` if given, otherwise 10,000
#' iterations (not the sampler's default `n_iter = NULL`, under which runs
#' at small steps would grow longer than the others).
#'
#' @param sampler a sampler of this package, such as `sgld` or `sghmc`.
#' @param stepsizes the grid: positive numbers, best spread on a log scale.
#' @param ... the sampler's other arguments: model, data, `n_iter`, ...
#' @param argument the name of the step-size argument (`"alpha"` for
#'   [sgfs()]).
#' @param max_draws the draws per run at which the KSD is computed (evenly
#'   thinned; its cost grows with their square).
#' @param seed if not `NULL`, `set.seed(seed)` before every run, so that all
#'   runs share their random numbers and differ only by the step size.
#' @return A data frame of class `sgfs_ksd_steps`, one row per step size:
#'   `stepsize`, `ksd`, `seconds` and the smallest effective sample size
#'   `min_ess`; its attribute `best` is the step size of smallest KSD.
#'   Its `plot()` method draws the KSD against the step size (log scales),
#'   the best one marked.
#' @references Gorham, J. and Mackey, L. (2017). Measuring sample quality
#'   with kernels. ICML.
#' @examples
#' data(Pima.tr, package = "MASS")
#' grid <- ksd_steps(sgld, c(3e-5, 1e-4, 3e-4, 1e-3), type ~ glu + bmi,
#'                   data = Pima.tr, n_iter = 2000, batch_size = 20, seed = 1)
#' grid
#' plot(grid)
#' @export
ksd_steps <- function(sampler, stepsizes, ..., argument = "stepsize", max_draws = 500L,
                      seed = NULL) {
    if (!is.function(sampler)) stop_arg("sampler", "must be a sampler function such as sgld")
    if (!is.numeric(stepsizes) || !length(stepsizes) || anyNA(stepsizes) ||
        any(!is.finite(stepsizes) | stepsizes <= 0))
        stop_arg("stepsizes", "must be a vector of positive step sizes")
    if (!is.character(argument) || length(argument) != 1L || is.na(argument) || !nzchar(argument))
        stop_arg("argument", "must name the sampler's step-size argument, such as \"stepsize\"")
    max_draws <- check_count(max_draws, "max_draws", 2L)
    if (!is.null(seed)) seed <- check_count(seed, "seed", 0L)
    ## the sampler's call with the grid's step: sampler(..., <argument> = s)
    run <- match.call(expand.dots = TRUE)
    run[[1L]] <- run$sampler
    run[c("sampler", "stepsizes", "argument", "max_draws", "seed")] <- NULL
    if (is.null(run$n_iter)) run$n_iter <- first_run
    env <- parent.frame()
    rows <- lapply(stepsizes, function(s) {
        run[[argument]] <- s
        if (!is.null(seed)) set.seed(seed)
        fit <- tryCatch(eval(run, env), sgfs_divergence = function(e) NULL)
        if (is.null(fit))
            return(data.frame(stepsize = s, ksd = Inf, seconds = NA_real_, min_ess = 0))
        data.frame(stepsize = s, ksd = ksd(fit, max_draws = max_draws),
                   seconds = sgfit_info(fit)$elapsed,
                   min_ess = min(coda::effectiveSize(as_coda(fit))))
    })
    out <- do.call(rbind, rows)
    structure(out, class = c("sgfs_ksd_steps", "data.frame"),
              best = out$stepsize[which.min(out$ksd)])
}

#' @rdname ksd_steps
#' @param x a value of `ksd_steps()`.
#' @export
print.sgfs_ksd_steps <- function(x, ...) {
    print(as.data.frame(x), ...)
    cat(sprintf("Smallest KSD at stepsize = %.3g\n", attr(x, "best")))
    invisible(x)
}

#' @rdname ksd_steps
#' @export
plot.sgfs_ksd_steps <- function(x, ...) {
    ok <- is.finite(x$ksd)
    if (!any(ok)) stop_arg("x", "has no run that did not diverge")
    graphics::plot(x$stepsize[ok], x$ksd[ok], log = "xy", type = "b", pch = 19,
                   xlab = "step size", ylab = "kernel Stein discrepancy",
                   xlim = range(x$stepsize), ...)
    best <- which.min(x$ksd)
    graphics::points(x$stepsize[best], x$ksd[best], pch = 1, cex = 2, col = "red")
    if (any(!ok))
        graphics::rug(x$stepsize[!ok], col = "red", lwd = 2)
    invisible(x)
}
