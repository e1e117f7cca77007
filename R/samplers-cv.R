#' SGLD with control variates
#'
#' Samples the posterior with SGLD-CV (Baker, Fearnhead, Fox and Nemeth,
#' 2019): SGLD whose gradient estimate is centred at a point
#' \eqn{\hat\theta}{theta_hat} near the mode,
#' \deqn{\widetilde{\nabla L}(\theta) = \nabla\log p(\theta) + \sum_{i=1}^N g_i(\hat\theta) +
#'   \frac{N}{n}\sum_{i \in S_t}[g_i(\theta) - g_i(\hat\theta)],}{
#'   grad L(theta) = grad log p(theta) + sum_{i = 1..N} g_i(theta_hat)
#'                   + (N/n) sum_{i in S_t} [g_i(theta) - g_i(theta_hat)],}
#' with the same minibatch \eqn{S_t}{S_t} in both sums, so that its noise
#' vanishes as \eqn{\theta \to \hat\theta}{theta -> theta_hat}.  The centre is, unless given,
#' a GLM's exact mode (Newton's method on all rows, with the score sum there
#' from the same pass) or, for a network or custom model, found by [sga()]
#' (`opt_iter` iterations); the chain starts at the centre (unless
#' `init` is given).  Each iteration reads the minibatch once and evaluates
#' its rows at both points (a network or custom model: two minibatch
#' gradients).
#'
#' With the default `metric = "mode"` (GLMs), the control variates are of
#' second order: the estimate adds \eqn{-H(\theta - \hat\theta)}{-H (theta - theta_hat)} and
#' \eqn{\frac{N}{n}\sum_{i \in S_t} H_i(\theta - \hat\theta)}{(N/n) sum_{i in S_t} H_i (theta - theta_hat)}, \eqn{H_i}{H_i}
#' minus the Hessian of row \eqn{i}{i}'s log-likelihood at \eqn{\hat\theta}{theta_hat} and
#' \eqn{H}{H} their sum (known from the mode's search), so that the minibatch
#' estimates only the remainder of each score's first-order Taylor
#' expansion at the centre, whose noise vanishes as
#' \eqn{|\theta - \hat\theta|^2}{|theta - theta_hat|^2} rather than \eqn{|\theta - \hat\theta|}{|theta - theta_hat|}
#' (the Taylor proxies of Quiroz, Kohn, Villani and Tran, 2019, for the
#' gradient); for a Gaussian model with a fixed `sigma` it is exact.  It
#' costs one \eqn{D \times D}{D x D} product per iteration.  The
#' default step is derived from the data, as for [sgld()] but without the
#' minibatch-noise factor the control variates remove:
#' \eqn{\epsilon = 0.2/\lambda_{max}}{eps = 0.2 / lambda_max}, about 5 % variance inflation in the
#' stiffest direction; with the default `metric = "mode"` the sampler runs
#' in whitened coordinates, where \eqn{\lambda_{max} = 1}{lambda_max = 1} and
#' \eqn{\epsilon = 0.2}{eps = 0.2}.  There, with the LM noise (see `metric`), the
#' step's own bias vanishes on a Gaussian posterior and the minibatch noise's
#' remains, \eqn{\epsilon V/4}{eps V / 4} for a whitened gradient noise of variance
#' \eqn{V}{V}: a pilot of 1,000 iterations per chain (on copies, the
#' caller's random numbers restored) measures each whitened gradient
#' coordinate's mean square \eqn{m_j \approx 1 + V_j}{m_j ~ 1 + V_j}, and a coordinate whose
#' inflation \eqn{\epsilon(m_j - 1)/4}{eps (m_j - 1) / 4} would pass 5 % is slowed in the
#' metric to its own step \eqn{0.2/(m_j - 1)}{0.2 / (m_j - 1)}, the others keeping
#' \eqn{\epsilon}{eps} (`settings$pilot` records how many and the slowest step):
#' a few rare levels no longer set every coordinate's pace.
#'
#' Separated levels (binomial, poisson and categorical GLMs in the metric of the mode):
#' a level of a factor whose rows all have one response (all 0 or all 1;
#' all zero counts), or a factor's reference level whose rows do, moves its
#' coefficient along a line on which the likelihood is monotone: only the
#' prior bounds the posterior on one side, the curvature at the mode
#' describes the likelihood's wall instead of the long side where the mass
#' is (on Covertype the soil level 7, 102 rows all pine, has a posterior sd
#' 2.6 times the Laplace approximation's), and an unadjusted step mixes
#' slowly there and bounces off the wall.  The samplers with a metric
#' (`sgld()`, `sgldcv()`, `psgld()`, `sghmc()`, `sgnht()`) therefore update
#' each such level exactly: every few iterations (`settings$separated_every`,
#' chosen so that these updates cost about 15 % of the gradients) a Gibbs
#' update draws its position on the line from the exact conditional posterior
#' (only its rows and the prior change along it) by slice sampling, and the
#' rule's own steps move only off those lines.  `settings$separated` lists
#' the levels, their rows and how much wider their conditional posterior is
#' than the Laplace approximation.  On Covertype this took the default run
#' from 70,000-144,000 iterations to 10,000 (the separated soil levels had
#' set its length) and put their means within 0.05 posterior sd of the exact
#' marginals.  In a [categorical()] model a level is separated for each
#' class none of its rows holds (along that class's coefficient of the
#' level; along all of them for the reference class), and for the one
#' class all of them hold.  Binomial and poisson levels whose rows hold at most
#' three responses of one kind (nearly separated: a few events, whose
#' conditional posterior along the line is far from Gaussian and its
#' curvature far from the mode's) are updated the same way.
#'
#' Rare one-hot levels and other rows of high leverage: with the metric, a
#' row \eqn{i}{i} moves the control-variate gradient by about \eqn{(N/n)h_i}{(N/n)h_i}
#' posterior standard deviations, \eqn{h_i}{h_i} its leverage in the whitened
#' coordinates (a level held by \eqn{k}{k} rows gives each about \eqn{1/k}{1/k}).
#' A row with \eqn{(N/n)h_i > 1}{(N/n)h_i > 1} appears in few minibatches, each time with
#' a jump of many posterior sd, which makes the chain's noise heavy-tailed
#' and its variance wrong.  Such rows (the most influential first, up to ten
#' batch sizes of them, or more where the step would otherwise shrink for
#' the rest: as many as make the rows an iteration reads over the step it
#' allows least) are put into every minibatch with weight 1, and
#' the minibatch's other \eqn{n}{n} rows are drawn from the rest with weight
#' \eqn{(N - |F|)/n}{(N - |F|)/n}: a stratified sample whose gradient stays unbiased.
#' The report gives their number.
#'
#' @inheritParams sgld
#' @param centre the centring value \eqn{\hat\theta}{theta_hat} on the original scale,
#'   or `NULL` to find it with [sga()].
#' @param opt_iter iterations of [sga()] for the centre (the last half are
#'   averaged).
#' @param opt_stepsize step size of [sga()]; `NULL` derives it from the data.
#' @return As [sgfs()].
#' @references Baker, J., Fearnhead, P., Fox, E. B. and Nemeth, C. (2019).
#'   Control variates for stochastic gradient MCMC. Statistics and
#'   Computing 29, 599-615.
#'
#'   Quiroz, M., Kohn, R., Villani, M. and Tran, M.-N. (2019). Speeding up
#'   MCMC by efficient data subsampling. Journal of the American Statistical
#'   Association 114, 831-843.
#' @examples
#' data(Pima.tr, package = "MASS")
#' fit <- sgldcv(type ~ ., data = Pima.tr, n_iter = 2000, batch_size = 50)
#' coef(fit)
#' @export
sgldcv <- function(x, ...) UseMethod("sgldcv")

#' @rdname sgldcv
#' @export
sgldcv.formula <- formula_method(function(...) sgldcv.default(...))

#' @rdname sgldcv
#' @export
sgldcv.default <- sampler_method(
    alist(stepsize = NULL, schedule = "constant", centre = NULL, opt_iter = 10000L,
          opt_stepsize = NULL, metric = NULL), {
    metric <- check_metric(metric)
    run <- prepare_run_here(environment())
    if (!is.null(stepsize)) stepsize <- check_positive(stepsize, "stepsize")
    opt_iter <- check_count(opt_iter, "opt_iter", 2L)
    if (!is.null(opt_stepsize)) opt_stepsize <- check_positive(opt_stepsize, "opt_stepsize")
    hs <- !is.null(run$design$hs)
    if (hs && !is.null(centre))
        stop_arg("centre", "is computed with a horseshoe prior (the model's parameters at the ",
                 "joint mode of parameters and scales): leave it NULL")
    centre <- check_point(centre, run$design, "centre")
    setup <- function(run) {
        m <- sampler_metric(metric, run)
        lap <- if (laplace_available(run$design) && is.null(centre)) posterior_laplace(run)
        if (hs) {
            ## the control variates are in the model's parameters: the centre is
            ## theirs at the joint mode (R/horseshoe.R)
            centre <- lap$beta
            centre_score <- lap$beta_lik_grad
        } else if (!is.null(lap)) {
            centre <- lap$mode
            centre_score <- lap$lik_grad
        } else {
            if (is.null(centre))
                centre <- posterior_mode(run, opt_iter, opt_stepsize,
                                         check = list(what = "the centre (found by SGA)",
                                                      remedy = "a larger opt_iter, or give centre ="))
            centre_score <- .Call(C_sgfs_model_loglik, run$spec, centre)$grad
        }
        lambda <- if (is.null(m)) posterior_stiffness(run)$lambda_max else m$lambda
        eps <- if (is.null(stepsize)) 0.2 / lambda else stepsize
        ## with the metric, rows whose draws would jump the chain go into
        ## every minibatch
        strata <- if (!is.null(m)) minibatch_strata(run, m$laplace, eps / 2, cv = TRUE)
        fixed <- strata$rows
        if (is.null(stepsize) && !is.null(strata)) eps <- eps * strata$shrink
        sched <- schedule_vector(schedule, eps, run$n_iter, epoch_length(run))
        first <- first_step(sched)
        ## in the metric of the mode, second-order control variates: the
        ## minibatch estimates only the remainder of the score's first-order
        ## Taylor expansion at the centre (minus the likelihood's Hessian
        ## there, H less the prior's curvature there)
        second <- if (hs) list(centre_hessian = lap$beta_lik_H)
                  else if (!is.null(m) && !is.null(lap$H))
            mode_control_variates(run, lap)["centre_hessian"]
        list(engine = "sgld", spar = c(lm_noise = !is.null(m)), schedule = sched,
             spec = c(list(centre = centre, centre_score = centre_score), second,
                      m$spec, if (!is.null(m)) list(drift_limit = 2 / eps),
                      if (length(fixed)) list(fixed = fixed)),
             pilot = if (is.null(stepsize) && !is.null(m) && sched[1L] == 0) eps,
             start = if (is.null(init)) (if (hs) lap$mode else centre),
             evals_per_iter = cv_evals(run$spec$batch_size, fixed),
             settings = list(stepsize = first, schedule = schedule, metric = metric_type(m),
                             fixed_rows = length(fixed),
                             inflation = sgld_inflation(first, lambda, lm = !is.null(m)),
                             step_5pct = sgld_step(lambda, lm = !is.null(m)),
                             centre = if (hs) stats::setNames(
                                 to_original(hs_report(run, lap$mode), run$design),
                                 run$design$par_names)
                                 else stats::setNames(to_original(centre, run$design),
                                                      run$design$par_names)))
    }
    sg_fit("sgldcv", setup, run, match.call())
})

## A GLM's second-order control variates at its mode (the engine's spec
## fields; src/driver.c): the centre, the full-data score sum there and
## minus the likelihood's Hessian there (the log posterior's curvature less
## the prior's)
mode_control_variates <- function(run, lap) {
    list(centre = lap$mode, centre_score = lap$lik_grad,
         centre_hessian = lap$H - diag(log_prior(lap$mode, run$spec)$curvature,
                                       length(lap$mode)))
}

## SGLD-CV's gradient evaluations per iteration: each minibatch row at the
## chain's point and at the centre; each row held in every minibatch at the
## chain's point only (its centre part is computed once)
cv_evals <- function(n, fixed) 2 * n + length(fixed)

## a point given on the original scale (NULL stays NULL), on the internal scale
check_point <- function(x, design, arg) {
    if (is.null(x)) return(NULL)
    D <- length(design$par_names)
    if (!is.numeric(x) || length(x) != D || any(!is.finite(x)))
        stop_arg(arg, sprintf("must be NULL or %d finite numbers (%s), on the original scale",
                              D, paste(design$par_names, collapse = ", ")))
    to_internal(as.double(x), design)
}

kind_sgldcv <- step_kind("SGLD-CV", slow_mixing = FALSE, horseshoe = TRUE)
