## Base-graphics views of the draws: 2-D marginals with 2-sd ellipses (Ahn
## et al. 2012, Fig. 1), running means, and error against time (Fig. 2).

#' Two-dimensional marginals of the draws, with 2-sd ellipses
#'
#' The view of Ahn, Korattikara and Welling (2012, Fig. 1): the draws of two
#' parameters as points, the ellipse two standard deviations from their
#' mean (solid; the contour of a Gaussian with the draws' mean and
#' covariance) and, when given, the same ellipse of a reference (dashed),
#' such as a long [hmc()] run or the exact posterior.  A sampler whose
#' ellipse is too small or too large misstates the posterior's
#' uncertainty; one that is shifted is biased.
#'
#' @param x a fit of any sampler, or a numeric matrix of draws (one column
#'   per parameter).
#' @param pars the two parameters to show: names or column numbers.
#' @param reference optional: a fit, a matrix of draws, or
#'   `list(mean =, cov =)` over the same parameters as `x` (all of them).
#' @param max_points at most this many draws are plotted (evenly thinned);
#'   the ellipse uses them all.
#' @param col,ref_col colours of the draws and of the reference.
#' @param ... further arguments to [graphics::plot()], such as `main`.
#' @return `x`, invisibly.
#' @seealso [rel_error()] for the same comparison in numbers.
#' @examples
#' data(Pima.tr, package = "MASS")
#' set.seed(1)
#' ref <- hmc(type ~ glu + bmi, data = Pima.tr, n_iter = 2000)
#' fit <- sgld(type ~ glu + bmi, data = Pima.tr, n_iter = 5000, batch_size = 20)
#' plot_marginals(fit, c("glu", "bmi"), reference = ref)
#' @export
plot_marginals <- function(x, pars = 1:2, reference = NULL, max_points = 2000L,
                           col = "grey40", ref_col = "red", ...) {
    d <- draws_matrix(x, "x")
    j <- parameter_columns(pars, d)
    max_points <- check_count(max_points, "max_points")
    own <- ellipse_points(colMeans(d[, j]), stats::cov(d[, j]))
    ref <- NULL
    if (!is.null(reference)) {
        m <- reference_moments(reference)
        if (length(m$mean) != ncol(d))
            stop_arg("reference", sprintf("has %d parameters; 'x' has %d", length(m$mean), ncol(d)))
        ref <- ellipse_points(m$mean[j], m$cov[j, j])
    }
    shown <- d[unique(round(seq(1, nrow(d), length.out = min(nrow(d), max_points)))), j, drop = FALSE]
    plot_defaults(list(x = shown, col = grDevices::adjustcolor(col, 0.4), pch = 20, cex = 0.5,
                       xlim = range(shown[, 1L], own[, 1L], ref[, 1L]),
                       ylim = range(shown[, 2L], own[, 2L], ref[, 2L]),
                       xlab = colnames(d)[j[1L]], ylab = colnames(d)[j[2L]]), ...)
    graphics::lines(own, col = col, lwd = 2)
    if (!is.null(ref)) graphics::lines(ref, col = ref_col, lwd = 2, lty = 2)
    graphics::legend("topright", bty = "n", cex = 0.8,
                     legend = c("draws", "2 sd of the draws", if (!is.null(ref)) "2 sd of the reference"),
                     col = c(col, col, if (!is.null(ref)) ref_col), pch = c(20, NA, NA),
                     lty = c(NA, 1, if (!is.null(ref)) 2), lwd = c(NA, 2, 2))
    invisible(x)
}

#' Running means of the draws
#'
#' The mean of the first \eqn{t}{t} kept draws against \eqn{t}{t}, one panel per
#' parameter, with the reference's mean as a dashed line when given: how
#' fast a chain settles, and where.
#'
#' @inheritParams plot_marginals
#' @param pars the parameters to show (names or column numbers); at most
#'   the first 9 by default.
#' @param ... further arguments to [graphics::plot()].
#' @return `x`, invisibly.
#' @examples
#' data(Pima.tr, package = "MASS")
#' set.seed(1)
#' fit <- sgfs(type ~ glu + bmi, data = Pima.tr, n_iter = 2000, batch_size = 50)
#' plot_running_means(fit, reference = glm(type ~ glu + bmi, binomial, Pima.tr)$coefficients)
#' @export
plot_running_means <- function(x, pars = seq_len(min(9L, ncol(d))), reference = NULL,
                               col = "grey20", ref_col = "red", ...) {
    d <- draws_matrix(x, "x")
    j <- parameter_columns(pars, d, n = NA)
    ref <- if (is.null(reference)) NULL
           else if (is.numeric(reference) && is.null(dim(reference))) as.double(reference)
           else reference_moments(reference)$mean
    if (!is.null(ref) && length(ref) != ncol(d))
        stop_arg("reference", sprintf("has %d parameters; 'x' has %d", length(ref), ncol(d)))
    running <- apply(d[, j, drop = FALSE], 2L, cumsum) / seq_len(nrow(d))
    if (nrow(d) == 1L) running <- matrix(running, 1L)
    old <- graphics::par(mfrow = grDevices::n2mfrow(length(j)), mar = c(4, 4, 2, 1))
    on.exit(graphics::par(old))
    for (k in seq_along(j)) {
        plot_defaults(list(x = running[, k], type = "l", col = col, xlab = "kept draws",
                           ylab = "running mean", main = colnames(d)[j[k]],
                           ylim = range(running[, k], ref[j[k]])), ...)
        if (!is.null(ref)) graphics::abline(h = ref[j[k]], col = ref_col, lty = 2)
    }
    invisible(x)
}

#' @rdname error_curve
#' @param x an error curve.
#' @param which the error to draw: `"E1"` (the mean) or `"E2"` (the
#'   covariance).
#' @param add add to the current plot (to compare samplers) instead of
#'   starting a new one.
#' @param type,log,xlab,ylab,... as for [graphics::plot()].
#' @export
plot.sgfs_error_curve <- function(x, which = c("E1", "E2"), add = FALSE, type = "b",
                                  log = "xy", xlab = "seconds", ylab = NULL, ...) {
    which <- match.arg(which)
    if (is.null(ylab))
        ylab <- c(E1 = "E1 (relative error of the mean)",
                  E2 = "E2 (relative error of the covariance)")[[which]]
    if (add) graphics::lines(x$seconds, x[[which]], type = type, ...)
    else plot_defaults(list(x = x$seconds, y = x[[which]], type = type, log = log, xlab = xlab,
                            ylab = ylab), ...)
    invisible(x)
}

## graphics::plot() with the package's choices, any of which '...' may override
## (xlim = , main = , ...)
plot_defaults <- function(defaults, ...) {
    args <- utils::modifyList(defaults, list(...))
    ## the data by name, so that plot() does not deparse their values
    x <- args$x
    y <- args$y
    args$x <- quote(x)
    if (!is.null(y)) args$y <- quote(y)
    do.call(graphics::plot, args)
}

## the draws of a fit or a matrix, as one numeric matrix with column names
draws_matrix <- function(x, arg) {
    d <- if (inherits(x, "sgfit")) all_draws(x)
         else if (is.matrix(x) && is.numeric(x)) x
         else stop_arg(arg, "must be a fit or a numeric matrix of draws")
    if (nrow(d) < 2L) stop_arg(arg, "must hold at least 2 draws")
    if (is.null(colnames(d))) colnames(d) <- paste0("theta", seq_len(ncol(d)))
    d
}

## column numbers of `pars` in the draws `d`; exactly n of them (NA: any)
parameter_columns <- function(pars, d, n = 2L) {
    j <- if (is.character(pars)) match(pars, colnames(d))
         else if (is.numeric(pars) && all(pars == round(pars))) as.integer(pars)
         else NA_integer_
    if (!length(j) || anyNA(j) || any(j < 1L | j > ncol(d)) || anyDuplicated(j) ||
        (!is.na(n) && length(j) != n))
        stop_arg("pars", sprintf("must name %s of the parameters (%s) or give their column numbers",
                                 if (is.na(n)) "some" else "two different",
                                 paste(utils::head(colnames(d), 6L), collapse = ", ")))
    j
}

## points of the ellipse {m + 2 L u : |u| = 1}, L L' = S
ellipse_points <- function(m, S, n = 100L) {
    e <- eigen(S, symmetric = TRUE)
    root <- e$vectors %*% diag(sqrt(pmax(e$values, 0)), 2L)
    t <- seq(0, 2 * pi, length.out = n)
    sweep(2 * cbind(cos(t), sin(t)) %*% t(root), 2L, m, `+`)
}
