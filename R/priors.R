#' Prior distributions for the coefficients
#'
#' Independent priors on each coefficient, stated on the internal scale of the
#' fit: with `standardize = TRUE` (the default) the predictors are centred
#' and scaled to unit standard deviation (and, for `gaussian()`, the response
#' too; in a model without intercept nothing is centred and the scale is the
#' root mean square), so `normal(0, 2.5)` says that a one-standard-deviation
#' change of a predictor is unlikely to move the linear predictor by more
#' than about 5.
#'
#' @param location prior location(s): a single number or one per coefficient
#'   the prior applies to.
#' @param scale prior scale(s), positive: the standard deviation for
#'   `normal()`, the scale \eqn{b} of the density
#'   \eqn{\exp(-|\theta - m|/b) / (2b)} for `laplace()`.
#' @return An object of class `sgfs_prior`.
#' @examples
#' normal(0, 1)
#' laplace(0, 0.5)
#' @export
normal <- function(location = 0, scale = 1) {
    new_prior("normal", location, scale)
}

#' @rdname normal
#' @export
laplace <- function(location = 0, scale = 1) {
    new_prior("laplace", location, scale)
}

new_prior <- function(dist, location, scale) {
    if (!is.numeric(location) || length(location) < 1L || any(!is.finite(location)))
        stop_arg("location", "must be finite numbers")
    if (!is.numeric(scale) || length(scale) < 1L || any(!is.finite(scale)) ||
        any(scale <= 0) || any(!is.finite(1 / scale^2)))
        stop_arg("scale", "must be finite positive numbers (and not so small that ",
                 "1/scale^2 overflows)")
    structure(list(dist = dist, location = as.double(location),
                   scale = as.double(scale)), class = "sgfs_prior")
}

#' @export
print.sgfs_prior <- function(x, ...) {
    cat(sprintf("%s(location = %s, scale = %s)\n", x$dist,
                paste(format(x$location), collapse = ", "),
                paste(format(x$scale), collapse = ", ")))
    invisible(x)
}

## The per-coordinate arrays the engine reads.  `which` are the coordinates
## the prior covers; a vector prior must have one value per coordinate.
expand_prior <- function(prior, which, arg) {
    if (!inherits(prior, "sgfs_prior"))
        stop_arg(arg, "must be a prior such as normal(0, 1) or laplace(0, 1)")
    k <- length(which)
    fit_len <- function(v, what) {
        if (length(v) == 1L) return(rep(v, k))
        if (length(v) != k)
            stop_arg(arg, sprintf("has %d %s values, but it applies to %d coefficients",
                                  length(v), what, k))
        v
    }
    loc <- fit_len(prior$location, "location")
    sc <- fit_len(prior$scale, "scale")
    list(which = which, type = rep(if (prior$dist == "laplace") 1L else 0L, k),
         loc = loc, scale = sc,
         prec = if (prior$dist == "laplace") 1 / (2 * sc^2) else 1 / sc^2)
}

prior_arrays <- function(D, parts) {
    out <- list(prior_type = integer(D), prior_loc = double(D),
                prior_scale = double(D), prior_prec = double(D))
    for (p in parts) {
        out$prior_type[p$which] <- p$type
        out$prior_loc[p$which] <- p$loc
        out$prior_scale[p$which] <- p$scale
        out$prior_prec[p$which] <- p$prec
    }
    out
}
