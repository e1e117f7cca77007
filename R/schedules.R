#' Step-size schedules
#'
#' Pass one of these as the `schedule` argument of a sampler (the default,
#' `"constant"`, keeps the step fixed).  By default the schedule starts at the
#' sampler's `stepsize` (for [sgfs()], the step \eqn{4/\alpha^2}{4/alpha^2}).
#'
#' * `schedule_polynomial()`: \eqn{\epsilon_t = a (b + t)^{-\delta}}{epsilon_t = a (b + t)^(-delta)} (Welling
#'   and Teh, 2011; Ahn et al., 2012).
#' * `schedule_cyclical()`: \eqn{\epsilon_t = \frac{a}{2}[\cos(\pi\,
#'   \mathrm{mod}(t-1, C)/C) + 1]}{epsilon_t = a/2[cos(pi mod(t-1, C)/C) + 1]} (Zhang et al., 2020), cycles of \eqn{C}{C}
#'   iterations, each falling from \eqn{a}{a} to nearly 0; with `cycles = M`,
#'   \eqn{C = \lceil K/M \rceil}{C = ceiling( K/M )} for a run of \eqn{K}{K} iterations.
#'
#' @param b offset, non-negative.
#' @param delta decay exponent; \eqn{0.5 < \delta \le 1}{0.5 < delta <= 1} gives SGLD's
#'   convergence guarantees.
#' @param a optional scale; when given it overrides the sampler's step size.
#' @param cycles number of cycles over the run (`n_iter`).
#' @param cycle_length iterations per cycle; overrides `cycles`.
#' @return An object of class `sgfs_schedule`.
#' @references Zhang, R., Li, C., Zhang, J., Chen, C. and Wilson, A. G.
#'   (2020). Cyclical stochastic gradient MCMC for Bayesian deep learning.
#'   ICLR.
#' @examples
#' schedule_polynomial(b = 1000, delta = 0.55)
#' schedule_cyclical(cycles = 4)
#' @export
schedule_polynomial <- function(b = 1000, delta = 0.55, a = NULL) {
    b <- check_nonnegative(b, "b")
    delta <- check_positive(delta, "delta")
    if (!is.null(a)) a <- check_positive(a, "a")
    structure(list(type = "polynomial", a = a, b = b, delta = delta),
              class = "sgfs_schedule")
}

#' @rdname schedule_polynomial
#' @export
schedule_cyclical <- function(cycles = 4L, cycle_length = NULL, a = NULL) {
    cycles <- check_count(cycles, "cycles", 1L)
    if (!is.null(cycle_length)) cycle_length <- check_count(cycle_length, "cycle_length", 1L)
    if (!is.null(a)) a <- check_positive(a, "a")
    structure(list(type = "cyclical", a = a, cycles = cycles, cycle_length = cycle_length),
              class = "sgfs_schedule")
}

#' @export
print.sgfs_schedule <- function(x, ...) {
    a <- if (is.null(x$a)) "a" else format(x$a)
    if (x$type == "polynomial")
        cat(sprintf("polynomial step sizes: eps_t = %s (%g + t)^-%g\n", a, x$b, x$delta))
    else
        cat(sprintf("cyclical step sizes: eps_t = %s/2 (cos(pi mod(t - 1, C) / C) + 1), %s\n",
                    a, if (is.null(x$cycle_length)) sprintf("%d cycles", x$cycles)
                       else sprintf("C = %d", x$cycle_length)))
    invisible(x)
}

## c(type, a, b, delta) for the engine, starting at `first` unless a is set;
## a cyclical schedule's cycle length comes from the run's n_iter
schedule_vector <- function(schedule, first, n_iter) {
    if (is.null(schedule) || identical(schedule, "constant"))
        return(c(0, first, 0, 0))
    if (identical(schedule, "polynomial")) schedule <- schedule_polynomial()
    if (identical(schedule, "cyclical")) schedule <- schedule_cyclical()
    if (!inherits(schedule, "sgfs_schedule"))
        stop_arg("schedule", "must be \"constant\", \"polynomial\", \"cyclical\", ",
                 "schedule_polynomial(...) or schedule_cyclical(...)")
    if (!is.finite(first) && is.null(schedule$a))
        stop_arg("schedule", "needs a finite first step (for sgfs(): alpha > 0)")
    if (schedule$type == "cyclical") {
        C <- if (is.null(schedule$cycle_length)) ceiling(n_iter / schedule$cycles)
             else schedule$cycle_length
        return(c(2, if (is.null(schedule$a)) first else schedule$a, C, 0))
    }
    a <- if (is.null(schedule$a)) first * (schedule$b + 1)^schedule$delta else schedule$a
    if (!is.finite(a))
        stop_arg("schedule", sprintf(paste("= schedule_polynomial(b = %g, delta = %g) starting at %g",
                                           "overflows (a = step x (b + 1)^delta): use a smaller b or delta"),
                                     schedule$b, schedule$delta, first))
    c(1, a, schedule$b, schedule$delta)
}

## the first step of a schedule vector
first_step <- function(sched) {
    switch(sched[1L] + 1, sched[2L], sched[2L] * (sched[3L] + 1)^-sched[4L], sched[2L])
}
