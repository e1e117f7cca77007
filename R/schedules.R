#' Polynomially decaying step sizes
#'
#' The schedule \eqn{\epsilon_t = a (b + t)^{-\delta}} of Welling and Teh
#' (2011) and Ahn et al. (2012).  Pass it as the `schedule` argument of a
#' sampler; by default \eqn{a} is chosen so that the first step equals the
#' sampler's `stepsize` (for [sgfs()], the step \eqn{4/\alpha^2}).
#'
#' @param b offset, non-negative.
#' @param delta decay exponent; \eqn{0.5 < \delta \le 1} gives SGLD's
#'   convergence guarantees.
#' @param a optional scale; when given it overrides the sampler's step size.
#' @return An object of class `sgfs_schedule`.
#' @examples
#' schedule_polynomial(b = 1000, delta = 0.55)
#' @export
schedule_polynomial <- function(b = 1000, delta = 0.55, a = NULL) {
    b <- check_nonnegative(b, "b")
    delta <- check_positive(delta, "delta")
    if (!is.null(a)) a <- check_positive(a, "a")
    structure(list(type = "polynomial", a = a, b = b, delta = delta),
              class = "sgfs_schedule")
}

#' @export
print.sgfs_schedule <- function(x, ...) {
    cat(sprintf("polynomial step sizes: eps_t = %s (%g + t)^-%g\n",
                if (is.null(x$a)) "a" else format(x$a), x$b, x$delta))
    invisible(x)
}

## c(type, a, b, delta) for the engine, with eps_1 = first when a is unset.
schedule_vector <- function(schedule, first) {
    if (is.null(schedule) || identical(schedule, "constant"))
        return(c(0, first, 0, 0))
    if (identical(schedule, "polynomial")) schedule <- schedule_polynomial()
    if (!inherits(schedule, "sgfs_schedule"))
        stop_arg("schedule", "must be \"constant\", \"polynomial\" or schedule_polynomial(...)")
    if (!is.finite(first) && is.null(schedule$a))
        stop_arg("schedule", "needs a finite first step (for sgfs(): alpha > 0)")
    a <- if (is.null(schedule$a)) first * (schedule$b + 1)^schedule$delta else schedule$a
    c(1, a, schedule$b, schedule$delta)
}
