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
#' * `schedule_step()`: \eqn{\epsilon_t = a f^{\lfloor (t-1)/k \rfloor}}{epsilon_t = a f^floor((t-1)/k)},
#'   the step multiplied by `factor` \eqn{f}{f} every \eqn{k}{k} iterations
#'   (`every`) or every `epochs` passes over the data (\eqn{k = }{k = }
#'   `round(epochs * N / batch_size)`), as the pSGLD paper's code halves
#'   it every 20 epochs.  Like any decreasing schedule, its later draws
#'   move less: it suits runs that end near a mode (cold posteriors,
#'   `temperature < 1`) more than posterior sampling.
#'
#' @param b offset, non-negative.
#' @param delta decay exponent; \eqn{0.5 < \delta \le 1}{0.5 < delta <= 1} gives SGLD's
#'   convergence guarantees.
#' @param a optional scale; when given it overrides the sampler's step size.
#' @param cycles number of cycles over the run (`n_iter`).
#' @param cycle_length iterations per cycle; overrides `cycles`.
#' @param epochs,every the step changes every `epochs` passes over the data,
#'   or every `every` iterations (give one of them).
#' @param factor the step's multiplier each time, in (0, 1].
#' @return An object of class `sgfs_schedule`.
#' @references Zhang, R., Li, C., Zhang, J., Chen, C. and Wilson, A. G.
#'   (2020). Cyclical stochastic gradient MCMC for Bayesian deep learning.
#'   ICLR.
#' @examples
#' schedule_polynomial(b = 1000, delta = 0.55)
#' schedule_cyclical(cycles = 4)
#' schedule_step(epochs = 20, factor = 0.5)
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

#' @rdname schedule_polynomial
#' @export
schedule_step <- function(epochs = NULL, every = NULL, factor = 0.5, a = NULL) {
    if (is.null(epochs) == is.null(every))
        stop_arg("epochs", "or 'every' must be given, not both: the epochs or iterations ",
                 "between changes of the step")
    if (!is.null(epochs)) epochs <- check_positive(epochs, "epochs")
    if (!is.null(every)) every <- check_count(every, "every", 1L)
    if (!is.numeric(factor) || length(factor) != 1L || !(factor > 0 && factor <= 1))
        stop_arg("factor", "must be a number in (0, 1], not ", format_value(factor))
    if (!is.null(a)) a <- check_positive(a, "a")
    structure(list(type = "step", a = a, epochs = epochs, every = every, factor = factor),
              class = "sgfs_schedule")
}

#' @export
print.sgfs_schedule <- function(x, ...) {
    a <- if (is.null(x$a)) "a" else format(x$a)
    if (x$type == "polynomial")
        cat(sprintf("polynomial step sizes: eps_t = %s (%g + t)^-%g\n", a, x$b, x$delta))
    else if (x$type == "step")
        cat(sprintf("step sizes %s times %g every %s\n", a, x$factor,
                    if (is.null(x$every)) sprintf("%g epochs", x$epochs)
                    else sprintf("%d iterations", x$every)))
    else
        cat(sprintf("cyclical step sizes: eps_t = %s/2 (cos(pi mod(t - 1, C) / C) + 1), %s\n",
                    a, if (is.null(x$cycle_length)) sprintf("%d cycles", x$cycles)
                       else sprintf("C = %d", x$cycle_length)))
    invisible(x)
}

## c(type, a, b, delta) for the engine, starting at `first` unless a is set;
## a cyclical schedule's cycle length comes from the run's n_iter, a step
## schedule's in epochs from `epoch`, the iterations of one
schedule_vector <- function(schedule, first, n_iter, epoch = NA) {
    if (is.null(schedule) || identical(schedule, "constant"))
        return(c(0, first, 0, 0))
    if (identical(schedule, "polynomial")) schedule <- schedule_polynomial()
    if (identical(schedule, "cyclical")) schedule <- schedule_cyclical()
    if (!inherits(schedule, "sgfs_schedule"))
        stop_arg("schedule", "must be \"constant\", \"polynomial\", \"cyclical\", ",
                 "schedule_polynomial(...), schedule_cyclical(...) or schedule_step(...)")
    if (!is.finite(first) && is.null(schedule$a))
        stop_arg("schedule", "needs a finite first step (for sgfs(): alpha > 0)")
    if (schedule$type == "cyclical") {
        C <- if (is.null(schedule$cycle_length)) ceiling(n_iter / schedule$cycles)
             else schedule$cycle_length
        return(c(2, if (is.null(schedule$a)) first else schedule$a, C, 0))
    }
    if (schedule$type == "step") {
        k <- if (!is.null(schedule$every)) schedule$every else max(1, round(schedule$epochs * epoch))
        if (is.na(k)) stop_arg("schedule", "= schedule_step(epochs = ) is not for this sampler: give 'every'")
        return(c(3, if (is.null(schedule$a)) first else schedule$a, k, schedule$factor))
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
    switch(sched[1L] + 1, sched[2L], sched[2L] * (sched[3L] + 1)^-sched[4L], sched[2L], sched[2L])
}

## the iterations of one pass over the data
epoch_length <- function(run) run$spec$N / run$spec$batch_size
