## Samplers side by side: one tidy row per fit.

#' Compare fits of several samplers
#'
#' One row per fit with what tells samplers apart: the method and its
#' settings, the time, the mixing (smallest and median effective sample
#' size, ESS per second, and the autocorrelation time per unit of
#' computation, ATUC = autocorrelation time x seconds per kept draw, as in
#' Ahn et al. 2012, averaged over parameters), the gradient evaluations per
#' effective draw, and, when given, the error against a reference
#' ([rel_error()]'s E1 and E2), the kernel Stein discrepancy ([ksd()]) and the
#' scores of the posterior predictive on test data ([predictive_scores()]).
#'
#' @param fits a named list of fits (of the same model and data), or of
#'   samplers to run: a sampler function such as `sgld`, or any
#'   `function(...)` that calls one with settings of its own (say
#'   `function(...) sgld(..., stepsize = 1e-5)`), is called with the shared
#'   arguments `...`, one after another; fits and samplers may be mixed.
#' @param ... the arguments every sampler in `fits` is called with: the
#'   model, the data, `n_iter`, ...
#' @param reference optional reference for E1 and E2: a fit, a matrix of
#'   draws or `list(mean =, cov =)`.
#' @param ksd compute each fit's kernel Stein discrepancy (a full-data
#'   gradient per draw used, at most 500 draws).
#' @param newdata,y optional test data and responses for the predictive
#'   scores (`predict(fit, newdata, type = "response")`, or for gaussian()
#'   fits `interval = "prediction"`).
#' @return A data frame of class `sgfs_comparison`, one row per fit
#'   (`seconds` of sampling, and `setup_seconds` before it); the fits it
#'   ran are its attribute `"fits"`.  Its `plot()` method draws
#'   E1 (or, without a reference, the smallest ESS per second) against the
#'   time of each fit.
#' @examples
#' data(Pima.tr, Pima.te, package = "MASS")
#' set.seed(1)
#' fits <- list(SGFS = sgfs(type ~ ., data = Pima.tr, n_iter = 3000, batch_size = 50),
#'              SGLD = sgld(type ~ ., data = Pima.tr, n_iter = 3000, batch_size = 50))
#' ref <- hmc(type ~ ., data = Pima.tr, n_iter = 2000)
#' compare_samplers(fits, reference = ref, newdata = Pima.te, y = Pima.te$type)
#' ## or let it run the samplers, on the same arguments
#' tab <- compare_samplers(list(`SGFS-d` = function(...) sgfs(..., preconditioner = "diagonal"),
#'                              pSGLD = psgld),
#'                         type ~ ., data = Pima.tr, n_iter = 3000, batch_size = 50,
#'                         reference = ref)
#' plot(tab)
#' @export
compare_samplers <- function(fits, ..., reference = NULL, ksd = FALSE, newdata = NULL,
                             y = NULL) {
    if (!is.list(fits) || !length(fits) || inherits(fits, "sgfit") ||
        !all(vapply(fits, function(f) inherits(f, "sgfit") || is.function(f), NA)))
        stop_arg("fits", "must be a list of fits returned by the sgfs samplers, or of sampler functions")
    labels <- if (is.null(names(fits))) character(length(fits)) else names(fits)
    blank <- is.na(labels) | labels == ""
    labels[blank] <- paste0("fit", which(blank))
    names(fits) <- make.unique(labels)
    if (is.null(newdata) != is.null(y)) stop_arg("y", "and 'newdata' must be given together")
    check_flag(ksd, "ksd")
    runs <- vapply(fits, is.function, NA)
    shared <- match.call(expand.dots = FALSE)$...
    if (length(shared) && !any(runs))
        stop_arg("...", "are arguments for the samplers to run, but 'fits' holds fits only")
    ## each sampler is called as .sampler(<the shared arguments>) where
    ## compare_samplers() was called, so its fit records a readable call
    env <- new.env(parent = parent.frame())
    fits[runs] <- lapply(fits[runs], function(f) {
        env$.sampler <- f
        eval(as.call(c(quote(.sampler), shared)), env)
    })
    rows <- lapply(names(fits), function(name) {
        fit <- fits[[name]]
        info <- sgfit_info(fit)
        ess <- coda::effectiveSize(as_coda(fit))
        mix <- mixing_costs(info, ess, coda::niter(fit) * coda::nchain(fit))
        row <- data.frame(fit = name, method = method_label(info),
                          seconds = info$elapsed, iterations = info$n_iter,
                          min_ess = min(ess), median_ess = stats::median(ess),
                          ess_per_second = mix$ess_per_second, atuc = mean(mix$atuc),
                          grads_per_ess = mix$grads_per_ess)
        if (!is.null(reference)) {
            e <- rel_error(fit, reference_moments(reference)$mean, reference_moments(reference)$cov)
            row$E1 <- e[["E1"]]
            row$E2 <- e[["E2"]]
        }
        if (ksd) row$ksd <- ksd(fit, max_draws = 500L)
        if (!is.null(newdata)) {
            pred <- if (location_scale(info$family))
                predict(fit, newdata, interval = "prediction")
            else predict(fit, newdata, type = "response")
            row <- cbind(row, as.list(predictive_scores(pred, y)))
        }
        row
    })
    out <- do.call(rbind, rows)
    out$setup_seconds <- vapply(fits, function(f) {
        s <- sgfit_info(f)$setup_seconds
        if (is.null(s)) NA_real_ else s
    }, 0, USE.NAMES = FALSE)
    class(out) <- c("sgfs_comparison", "data.frame")
    if (any(runs)) attr(out, "fits") <- fits[runs]      # the fits it made
    out
}

#' @rdname compare_samplers
#' @param x a comparison.
#' @param ... further arguments to [graphics::plot()].
#' @export
plot.sgfs_comparison <- function(x, ...) {
    value <- if (!is.null(x$E1)) x$E1 else x$ess_per_second
    label <- if (!is.null(x$E1)) "E1 (relative error of the mean)" else "smallest ESS per second"
    ## a fit too short for the clock (0 s) has no finite rate: left out
    ok <- is.finite(value) & is.finite(x$seconds) & x$seconds > 0
    if (!any(ok))
        stop("nothing to plot: every fit took 0 s by the clock or has no finite value ",
             "(run the samplers longer)", call. = FALSE)
    plot_defaults(list(x = x$seconds[ok], y = value[ok],
                       log = if (all(value[ok] > 0)) "xy" else "x",
                       pch = 19, xlab = "seconds", ylab = label), ...)
    graphics::text(x$seconds[ok], value[ok], x$fit[ok], pos = 3, cex = 0.8, xpd = NA)
    invisible(x)
}

#' @rdname compare_samplers
#' @param digits significant digits to print.
#' @export
print.sgfs_comparison <- function(x, digits = 3, ...) {
    y <- as.data.frame(x)
    num <- vapply(y, is.numeric, NA)
    y[num] <- lapply(y[num], signif, digits)
    ## the long method descriptions go below the table, one line per fit
    if (!is.null(y$fit)) rownames(y) <- make.unique(y$fit)
    print(y[setdiff(names(y), c("fit", "method"))], ...)
    if (!is.null(y$method))
        cat("\n", paste0(format(rownames(y)), "  ", y$method, "\n"), sep = "")
    invisible(x)
}
