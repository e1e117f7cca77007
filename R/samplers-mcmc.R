#' Full-data MALA and HMC: the reference samplers
#'
#' Metropolis-corrected samplers that use every row at every step, the
#' package's gold standard for checking the stochastic gradient samplers:
#' `hmc()` is Hamiltonian Monte Carlo with `n_leapfrog` leapfrog steps and a
#' constant mass matrix, `mala()` the Metropolis-adjusted Langevin
#' algorithm (HMC with one leapfrog step: proposal
#' \eqn{\theta^* = \theta + \frac{h^2}{2}M^{-1}\nabla L(\theta) + h M^{-1/2}\xi}{theta^* = theta + ((h^2)/2) M^(-1) grad L(theta) + h M^(-1/2) xi}).
#' The mass matrix \eqn{M}{M} is minus the Hessian of the log posterior at its
#' mode (`"dense"`), its diagonal (`"diagonal"`), or the identity; the mode
#' is found by Newton's method on the full data, and the chain starts there
#' unless `init` is given.  During burn-in the step size \eqn{h}{h} adapts
#' towards the target acceptance rate (0.574 for MALA, 0.8 for HMC) by
#' \eqn{\log h \leftarrow \log h + t^{-0.6}(a_t - \mathrm{target})}{log h <- log h + t^(-0.6)(a_t - target)}, \eqn{a_t}{a_t}
#' the acceptance probability of iteration \eqn{t}{t}; it is frozen after
#' burn-in at the mean of \eqn{\log h}{log h} over burn-in's second half.  The
#' acceptance rate after burn-in is reported.  The first step is derived
#' from the curvature at the mode: \eqn{h = 1.65 D^{-1/6}/\sqrt{\lambda_{max}}}{h = 1.65 D^(-1/6)/sqrt(lambda_max)}
#' (MALA) or \eqn{D^{-1/4}/\sqrt{\lambda_{max}}}{D^(-1/4)/sqrt(lambda_max)} (HMC) for the largest
#' eigenvalue \eqn{\lambda_{max}}{lambda_max} of \eqn{M^{-1}H}{M^(-1)H}.  By default `hmc()`
#' draws each trajectory's length uniformly between 1/2 and 3/2 of a
#' quarter period of the flattest direction, \eqn{T = (\pi/2)/\sqrt{\lambda_{min}}}{T = (pi/2)/sqrt(lambda_min)},
#' and covers it in \eqn{\lceil T_t/h \rceil}{ceiling( T_t/h )} equal steps: random lengths
#' keep the chain from returning near \eqn{-\theta}{-theta} (a trajectory of half a
#' period), which would leave the draws of the variance highly correlated.
#'
#' @inheritParams sampler-arguments
#' @param batch_size rows per chunk of each full-data pass (it does not
#'   change the draws).
#' @param stepsize the first leapfrog step \eqn{h}{h}; `NULL` derives it from
#'   the data.
#' @param mass `"dense"`, `"diagonal"` or `"identity"`.  For a network, which
#'   has no one mode to take a curvature from, `"dense"` and `"diagonal"`
#'   both give the diagonal mass of the precisions of a warm-up's draws
#'   (400 iterations, at least the burn-in, with the identity mass; the
#'   chain continues from its end); its default prior's learned scales are
#'   drawn by Gibbs updates after every iteration.
#' @param target_accept the acceptance rate the step adapts to.
#' @param adapt adapt the step during burn-in.
#' @param n_leapfrog leapfrog steps per iteration (a fixed number, of the
#'   step \eqn{h}{h}); `NULL` for random trajectory lengths derived from the
#'   data (described above).
#' @return As [sgfs()].
#' @references Roberts, G. O. and Rosenthal, J. S. (1998). Optimal scaling
#'   of discrete approximations to Langevin diffusions. JRSS B 60, 255-268.
#'   Neal, R. M. (2011). MCMC using Hamiltonian dynamics. Handbook of
#'   Markov Chain Monte Carlo.
#' @examples
#' data(Pima.tr, package = "MASS")
#' fit <- mala(type ~ ., data = Pima.tr, n_iter = 2000)
#' fit
#' fit2 <- hmc(type ~ ., data = Pima.tr, n_iter = 1000)
#' coef(fit2)
#' @export
mala <- function(x, ...) UseMethod("mala")

#' @rdname mala
#' @export
mala.formula <- formula_method(function(...) mala.default(...))

#' @rdname mala
#' @export
mala.default <- sampler_method(
    alist(stepsize = NULL, mass = c("dense", "diagonal", "identity"), target_accept = 0.574,
          adapt = TRUE), {
    run <- prepare_run_here(environment())
    setup <- metropolis_setup(run, "mala", stepsize, mass, target_accept, adapt,
                              n_leapfrog = 1L, user_init = !is.null(init))
    sg_fit("mala", setup, run, match.call())
})

#' @rdname mala
#' @export
hmc <- function(x, ...) UseMethod("hmc")

#' @rdname mala
#' @export
hmc.formula <- formula_method(function(...) hmc.default(...))

#' @rdname mala
#' @export
hmc.default <- sampler_method(
    alist(stepsize = NULL, n_leapfrog = NULL, mass = c("dense", "diagonal", "identity"),
          target_accept = 0.8, adapt = TRUE), {
    run <- prepare_run_here(environment())
    if (!is.null(n_leapfrog)) n_leapfrog <- check_count(n_leapfrog, "n_leapfrog", 1L, 1e6)
    setup <- metropolis_setup(run, "hmc", stepsize, mass, target_accept, adapt,
                              n_leapfrog, user_init = !is.null(init))
    sg_fit("hmc", setup, run, match.call())
})

## a Metropolis rule's target acceptance rate: a number in (0, 1)
check_target_accept <- function(target_accept) {
    if (!is.numeric(target_accept) || length(target_accept) != 1L ||
        !(target_accept > 0 && target_accept < 1))
        stop_arg("target_accept", "must be a number between 0 and 1, not ",
                 format_value(target_accept))
    invisible(target_accept)
}

## the setup function shared by mala() and hmc()
metropolis_setup <- function(run, method, stepsize, mass, target_accept, adapt,
                             n_leapfrog, user_init) {
    mass <- choose_arg(mass, c("dense", "diagonal", "identity"), "mass")
    check_target_accept(target_accept)
    adapt <- check_flag(adapt, "adapt")
    if (!is.null(stepsize)) stepsize <- check_positive(stepsize, "stepsize")
    function(run) {
        if (!laplace_available(run$design) && !is.null(run$design$network))
            return(network_metropolis(run, method, stepsize, mass, target_accept, adapt,
                                      n_leapfrog))
        D <- length(run$theta0)
        ## the Laplace approximation shared with the chains' dispersed starts
        ## (one mode search per call; with a horseshoe in its coordinates,
        ## R/horseshoe.R); Newton's method here for networks and custom models
        fit <- if (is.null(run$design$hs) && !laplace_available(run$design))
                   newton_mode(run$spec, run$theta0)
               else {
                   lap <- posterior_laplace(run)
                   list(mode = lap$mode,
                        curvature = list(H = dense_curvature(lap, sprintf("%s()", method))))
               }
        H <- fit$curvature$H
        U <- switch(mass, dense = chol(H), diagonal = diag(sqrt(diag(H)), D),
                    identity = diag(D))
        inv <- backsolve(U, diag(D))
        ev <- eigen(t(inv) %*% H %*% inv, symmetric = TRUE, only.values = TRUE)$values
        scale <- if (method == "mala") 1.65 * D^(-1 / 6) else D^(-1 / 4)
        h <- if (is.null(stepsize)) scale / sqrt(ev[1L]) else stepsize
        ## the flattest direction's quarter period, the mean trajectory length
        length <- if (is.null(n_leapfrog)) (pi / 2) / sqrt(max(ev[D], 1e-12)) else 0
        list(engine = "hmc", spar = c(target_accept = target_accept,
                                      n_leapfrog = if (is.null(n_leapfrog)) 0 else n_leapfrog,
                                      adapt = adapt, trajectory_length = length, U),
             schedule = schedule_vector("constant", h, run$n_iter),
             start = if (!user_init) fit$mode,
             evals_counter = list(part = "leapfrogs", per = run$spec$N),
             settings = list(stepsize = h, mass = mass, target_accept = target_accept,
                             adapt = adapt, n_leapfrog = n_leapfrog,
                             trajectory_length = length))
    }
}

## A network has no one mode to take a mass matrix from (nor a curvature:
## ReLU units make the Hessian's finite differences meaningless), so its
## chain starts where the run does (random weights, or `init`) and its mass
## is diagonal, the precision of a warm-up's draws: `warmup_iter`
## iterations (at least the burn-in) with the identity mass, trajectories of
## `warmup_leapfrog` steps and a step adapting in the first half, the
## variances from the second half's draws (as Stan's windowed adaptation
## does).  mass = "identity" skips the warm-up; "dense" means the diagonal
## here.  The chain continues from the warm-up's end with trajectories of
## random length about pi (a half period of unit-variance coordinates) and
## a step adapting during burn-in.
warmup_iter <- 400L
warmup_leapfrog <- 20L
network_metropolis <- function(run, method, stepsize, mass, target_accept, adapt, n_leapfrog) {
    D <- length(run$theta0)
    h <- if (is.null(stepsize)) 1e-3 else stepsize
    U <- diag(D)
    start <- run$theta0
    W <- 0L
    if (mass != "identity") {
        W <- max(warmup_iter, run$spec$burnin)
        warm <- c(run$spec, list(sampler = "hmc", schedule = c(0, h, 0, 0),
                                 spar = c(target_accept = target_accept,
                                          n_leapfrog = if (is.null(n_leapfrog)) warmup_leapfrog
                                                       else n_leapfrog,
                                          adapt = 1, trajectory_length = 0, U)),
                  if (run$temperature != 1) list(temperature = run$temperature))
        warm <- pilot_spec(warm, W %/% 2L, 1L)
        res <- run_chains(warm, list(list(theta = start, iter = 0, sstate = double(0))), W,
                          FALSE, 1L)[[1L]]
        if (res$diverged != 0)
            stop(sprintf("%s()'s warm-up diverged: give a smaller 'stepsize' (it began at %.3g)",
                         method, h), call. = FALSE)
        sds <- apply(res$draws, 2L, stats::sd)
        sds[!(sds > 0)] <- min(sds[sds > 0], 1)
        U <- diag(1 / sds, D)
        start <- res$theta
        if (is.null(stepsize)) h <- (if (method == "mala") 1.65 * D^(-1 / 6) else D^(-1 / 4)) / 2
    }
    list(engine = "hmc", spar = c(target_accept = target_accept,
                                  n_leapfrog = if (is.null(n_leapfrog)) 0 else n_leapfrog,
                                  adapt = adapt, trajectory_length = pi, U),
         schedule = schedule_vector("constant", h, run$n_iter),
         start = start,
         evals_counter = list(part = "leapfrogs", per = run$spec$N),
         settings = list(stepsize = h, mass = if (mass == "identity") "identity"
                                               else "diagonal (a warm-up's draws)",
                         target_accept = target_accept, adapt = adapt, n_leapfrog = n_leapfrog,
                         trajectory_length = pi, warmup = W))
}

## each chain's acceptance rate after burn-in (NA for a chain before any)
chain_acceptance_rates <- function(info) {
    vapply(info$states, function(s) {
        p <- state_parts(info, s)
        if (p$proposed > 0) p$accepted / p$proposed else NA_real_
    }, 0)
}

## acceptance rate after burn-in, over all chains (NA before any)
acceptance_rate <- function(info) {
    counts <- vapply(info$states, function(s) {
        p <- state_parts(info, s)
        c(p$accepted, p$proposed)
    }, c(0, 0))
    if (sum(counts[2L, ]) > 0) sum(counts[1L, ]) / sum(counts[2L, ]) else NA_real_
}

## MALA and HMC: full-data Metropolis rules
metropolis_kind <- function(method)
    kind(label = function(info) {
             s <- info$settings
             sprintf("%s (%s; step %s, %s; %s mass; acceptance rate %.3f)", toupper(method),
                     if (method == "mala") "full data"
                     else if (!is.null(s$n_leapfrog)) sprintf("%d leapfrog steps", s$n_leapfrog)
                     else sprintf("trajectory length %.3g, random", s$trajectory_length),
                     paste(sprintf("%.3g", unique(signif(info$eps, 3))), collapse = "/"),
                     if (isFALSE(s$adapt)) "not adapted"
                     else sprintf("adapted to acceptance %g", s$target_accept),
                     s$mass, acceptance_rate(info))
         },
         divergence = function(info, eps)
             "the log posterior could not be evaluated: check the data and the prior",
         remedy = function(info) "try a longer burnin", metropolis = TRUE, horseshoe = TRUE)
kind_mala <- metropolis_kind("mala")
kind_hmc <- metropolis_kind("hmc")
