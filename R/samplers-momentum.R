#' Stochastic gradient Hamiltonian Monte Carlo
#'
#' Samples the posterior with SGHMC (Chen, Fox and Guestrin, 2014) in its
#' practical parametrisation: with learning rate \eqn{\eta}{eta} and friction
#' \eqn{\alpha}{alpha},
#' \deqn{v \leftarrow (1-\alpha) v + \eta\widehat{\nabla L}(\theta) +
#'   N(0, 2\eta(\alpha - \hat\beta)), \qquad \theta \leftarrow \theta + v,}{v <- (1-alpha) v + eta hat(grad L)(theta) + N(0, 2 eta(alpha - betahat)), theta <- theta + v,}
#' with \eqn{v \sim N(0, \eta I)}{v ~ N(0, eta I)} at the start (and every `trajectory`
#' steps).  `friction = 1` is SGLD with step \eqn{2\eta}{2 eta}.  The default
#' learning rate is derived from the data: the one at which the stationary
#' variance of the linearised chain in the stiffest direction of the
#' posterior (its curvature at the mode) is inflated by 5 %, computed
#' exactly from that linear recursion (its minibatch noise as
#' \eqn{\gamma}{gamma} assumes, the scores' covariance the curvature's; in the metric of
#' the mode a pilot of 1,000 iterations measures it, as for [sgldcv()], and
#' slows the coordinates whose noise would inflate them by more than 5 %:
#' `settings$pilot`).  Resampling the momentum every
#' `trajectory = L` steps shrinks the variance, by a factor of about
#' \eqn{L/(L+1)}{L/(L+1)} at small steps (the first step of each trajectory takes a
#' full kick from the fresh momentum); the report gives the variance of the
#' linearised chain with the resampling, and warns when it is more than 10 %
#' too small.
#'
#' To reuse settings of the 'sgmcmc' package (`stepsize`, `alpha`, `L`), pass
#' `stepsize = stepsize, friction = alpha, trajectory = L, thin = L`: each of
#' its iterations is a trajectory of `L` steps of this engine.
#'
#' @inheritParams sampler-arguments
#' @inheritParams sgld
#' @param stepsize the learning rate \eqn{\eta}{eta} (the first one, with a
#'   decaying `schedule`); `NULL` derives it from the data; for a network,
#'   from the gradient noise the chain meets (see [mlp()], "Default steps").
#' @param schedule `"constant"`, or a [schedule_polynomial()] or
#'   [schedule_cyclical()] (or [schedule_step()]).
#' @param friction \eqn{\alpha}{alpha} in (0, 1].
#' @param trajectory resample the momentum every this many steps (`NULL`:
#'   never).
#' @param noise_estimate subtract the estimated minibatch-noise term
#'   \eqn{\hat\beta = \frac{\eta}{2}\frac{N^2}{n}\mathrm{diag}(V)}{betahat = eta/2((N^2)/n) diag(V)} (from
#'   per-example scores) from the injected noise, clipped at zero.
#' @return As [sgfs()].
#' @references Chen, T., Fox, E. B. and Guestrin, C. (2014). Stochastic
#'   gradient Hamiltonian Monte Carlo. ICML.
#' @examples
#' data(Pima.tr, package = "MASS")
#' fit <- sghmc(type ~ ., data = Pima.tr, n_iter = 2000, batch_size = 50)
#' coef(fit)
#' @export
sghmc <- function(x, ...) UseMethod("sghmc")

#' @rdname sghmc
#' @export
sghmc.formula <- formula_method(function(...) sghmc.default(...))

#' @rdname sghmc
#' @export
sghmc.default <- sampler_method(
    alist(stepsize = NULL, schedule = "constant", friction = 0.01, trajectory = NULL,
          noise_estimate = FALSE, metric = NULL),
    defaults = alist(init = if (!is.list(model) || !identical(model$type, "mlp")) "map"), {
    metric <- check_metric(metric)
    run <- prepare_run_here(environment())
    friction <- check_unit_interval(friction, "friction")
    L <- if (is.null(trajectory)) 0 else check_count(trajectory, "trajectory", 1L)
    noise_estimate <- check_flag(noise_estimate, "noise_estimate")
    setup <- function(run) {
        m <- sampler_metric(metric, run)
        step <- momentum_default_step(run, friction, stepsize, schedule, L, m)
        list(engine = if (noise_estimate) "sghmc_noise" else "sghmc",
             spar = c(friction = friction, resample_every = L, noise_estimate = noise_estimate),
             schedule = step$schedule, spec = step$spec,
             evals_per_iter = step$evals_per_iter, noise_rule = step$noise_rule,
             pilot = if (!noise_estimate) step$pilot, pilot_unit = step$pilot_unit,
             settings = c(step$settings, list(friction = friction, trajectory = L,
                                              noise_estimate = noise_estimate)))
    }
    sg_fit("sghmc", setup, run, match.call())
})

#' Stochastic gradient Nose-Hoover thermostat
#'
#' Samples the posterior with SGNHT (Ding et al., 2014) in the 'sgmcmc'
#' package's parametrisation: with step \eqn{\epsilon}{epsilon} and diffusion factor
#' \eqn{a}{a},
#' \deqn{u \leftarrow u + \epsilon\widehat{\nabla L}(\theta) - \xi u +
#'   N(0, 2a\epsilon), \quad \theta \leftarrow \theta + u, \quad
#'   \xi \leftarrow \xi + (u^\top u / D - \epsilon),}{u <- u + epsilon hat(grad L)(theta) - xi u + N(0, 2a epsilon), theta <- theta + u, xi <- xi + (u' u / D - epsilon),}
#' starting from \eqn{u \sim N(0, \epsilon I)}{u ~ N(0, epsilon I)} and \eqn{\xi = a}{xi = a}.  The
#' thermostat \eqn{\xi}{xi} adapts the friction to the unknown minibatch noise.
#' The default step is derived from the data as for [sghmc()] with friction
#' \eqn{a}{a}, and at most \eqn{a\sqrt{D/2}}{a sqrt(D/2)}: the thermostat's
#' steps carry noise \eqn{\epsilon\sqrt{2/D}}{epsilon sqrt(2/D)}, which beyond \eqn{a}{a} drives
#' \eqn{\xi}{xi} far below zero for long stretches and inflates the draws'
#' spread (1.2 to 2.1 times the posterior sds on R's `CO2`, `warpbreaks`,
#' `esoph` and `swiss` data at the uncapped step; within 0.94 to 1.16 at the
#' cap).  Models of thousands of parameters are not affected.
#'
#' @inheritParams sghmc
#' @param stepsize the step \eqn{\epsilon}{epsilon}; `NULL` derives it from the data;
#'   for a network,
#'   from the gradient noise the chain meets (see [mlp()], "Default steps").
#' @param diffusion the diffusion factor \eqn{a > 0}{a > 0}.
#' @return As [sgfs()].
#' @references Ding, N., Fang, Y., Babbush, R., Chen, C., Skeel, R. D. and
#'   Neven, H. (2014). Bayesian sampling using stochastic gradient
#'   thermostats. NIPS.
#' @examples
#' data(Pima.tr, package = "MASS")
#' fit <- sgnht(type ~ ., data = Pima.tr, n_iter = 2000, batch_size = 50)
#' coef(fit)
#' @export
sgnht <- function(x, ...) UseMethod("sgnht")

#' @rdname sgnht
#' @export
sgnht.formula <- formula_method(function(...) sgnht.default(...))

#' @rdname sgnht
#' @export
sgnht.default <- sampler_method(
    alist(stepsize = NULL, schedule = "constant", diffusion = 0.01, metric = NULL),
    defaults = alist(init = if (!is.list(model) || !identical(model$type, "mlp")) "map"), {
    metric <- check_metric(metric)
    run <- prepare_run_here(environment())
    diffusion <- check_unit_interval(diffusion, "diffusion")
    setup <- function(run) {
        m <- sampler_metric(metric, run)
        step <- momentum_default_step(run, diffusion, stepsize, schedule, metric = m,
                                      cap = sgnht_thermostat_step(diffusion, length(run$theta0)))
        list(engine = "sgnht", spar = c(diffusion = diffusion), schedule = step$schedule, spec = step$spec,
             evals_per_iter = step$evals_per_iter, noise_rule = step$noise_rule,
             settings = c(step$settings, list(diffusion = diffusion)))
    }
    sg_fit("sgnht", setup, run, match.call())
})

## SGNHT's default step is at most diffusion sqrt(D / 2): the thermostat
## moves by u'u / D - eps a step, whose noise is eps sqrt(2 / D) with u ~
## N(0, eps I), and beyond `diffusion` (the friction it should settle at)
## that noise swamps it: at the 5 % step of a constant friction (0.19 on
## warpbreaks, D = 4) xi wanders far below zero and the draws' sds were 1.2
## to 2.1 times the posterior's on R's CO2, warpbreaks, esoph and swiss
## data (probit on mtcars diverged); at the cap 0.94 to 1.16.  Networks'
## thousands of parameters leave the cap far above the 5 % step.
sgnht_thermostat_step <- function(diffusion, D) diffusion * sqrt(D / 2)

## the learning rate (given, or with 5 % variance inflation in the stiffest
## direction without momentum resampling) and its schedule; the inflation
## reported is that with the momentum resampled every `trajectory` steps,
## which shrinks the variance (by about 1 / (L + 1) at small steps)
momentum_default_step <- function(run, friction, stepsize, schedule, trajectory = 0,
                                  metric = NULL, cap = Inf) {
    N <- run$spec$N
    gamma <- noise_gamma(run)
    noise <- is.null(metric) && noise_stepped(run, stepsize)
    lambda <- if (!is.null(metric)) metric$lambda else if (noise) NA_real_
              else stiffness_if_needed(run, stepsize)
    step_5pct <- momentum_step(friction, gamma, lambda)
    eta <- if (noise) 1 else if (is.null(stepsize)) min(step_5pct, cap)
           else check_positive(stepsize, "stepsize")
    ## a row's kick eta k_i to the momentum moves the chain eta k_i / friction
    strata <- if (!is.null(metric)) minibatch_strata(run, metric$laplace, eta / friction, cv = FALSE)
    if (is.null(stepsize) && !is.null(strata)) eta <- eta * strata$shrink
    sched <- schedule_vector(schedule, eta, run$n_iter, epoch_length(run))
    first <- first_step(sched)
    list(schedule = sched, rows = strata$rows,
         ## the whitened gradient's clip (src/metric.c): one step's kick to
         ## the momentum, eta g, at most one posterior sd (friction / eta,
         ## a kick's whole travel, bound 99.5 % of the coordinates at the
         ## default friction 0.01 on small data, where eta / friction is
         ## about 20: a random walk with sds 25 times the posterior's)
         spec = c(metric$spec, if (!is.null(metric)) list(drift_limit = 1 / eta),
                  if (length(strata$rows)) list(fixed = strata$rows)),
         evals_per_iter = run$spec$batch_size + length(strata$rows),
         noise_rule = if (noise) list(per_step = function(ms) ms / (2 * friction * run$temperature),
                                      cap = cap, diagonal = TRUE),
         ## in the metric, a pilot slows the coordinates whose gradient noise
         ## exceeds what gamma assumes (pilot_step(): an inflation of
         ## eta V / (2 friction), SGLD's at its step 2 eta / friction)
         pilot = if (is.null(stepsize) && !is.null(metric) && sched[1L] == 0) eta,
         pilot_unit = 2 / friction,
         settings = list(stepsize = first, schedule = schedule, metric = metric_type(metric),
                         fixed_rows = length(strata$rows),
                         inflation = momentum_variance(first, friction, gamma, lambda,
                                                       trajectory) - 1,
                         step_5pct = step_5pct))
}

check_unit_interval <- function(x, arg) {
    if (!is.numeric(x) || length(x) != 1L || !is.finite(x) || x <= 0 || x > 1)
        stop_arg(arg, "must be a number in (0, 1], not ", format_value(x))
    as.double(x)
}

kind_sghmc <- step_kind("SGHMC")
kind_sgnht <- step_kind("SGNHT")
