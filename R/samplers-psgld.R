#' Preconditioned stochastic gradient Langevin dynamics
#'
#' Samples the posterior with pSGLD (Li, Chen, Carlson and Carin, 2016): SGLD
#' with the RMSprop diagonal preconditioner
#' \deqn{V \leftarrow \alpha V + (1-\alpha)\bar g^2, \quad G = 1/(\lambda + \sqrt V),
#'   \quad \theta \leftarrow \theta + \frac{\epsilon_t}{2} G \widehat{\nabla L}(\theta)
#'   + N(0, \epsilon_t G),}{V <- alpha V + (1-alpha) gbar^2, G = 1/(lambda + sqrt(V)), theta <- theta + epsilon_t/2 G hat(grad L)(theta) + N(0, epsilon_t G),}
#' where \eqn{\bar g}{gbar} is the minibatch's mean score (likelihood only) and
#' \eqn{V}{V} starts at \eqn{\bar g_1^2}{gbar_1^2}.  The term of the exact algorithm that
#' corrects for the preconditioner's dependence on \eqn{\theta}{theta} (its
#' "\eqn{\Gamma}{Gamma}") is dropped, as in the paper's practical algorithm; the bias
#' this leaves shrinks as `decay` approaches 1.  The default step is derived
#' from the data as for [sgld()], from the preconditioned curvature at the
#' mode: \eqn{\epsilon = 0.2 / (\gamma \lambda_{max}(G^{1/2} H G^{1/2}))}{epsilon = 0.2 / (gamma lambda_max(G^(1/2) H G^(1/2)))},
#' with \eqn{G}{G} the preconditioner the chain settles to there: \eqn{V}{V} the
#' expected \eqn{\bar g^2}{gbar^2} over minibatches drawn without replacement,
#' \eqn{\mu^2 + S^2 (N-n)/(nN)}{mu^2 + S^2 (N-n)/(nN)} for per-example scores of mean \eqn{\mu}{mu} and
#' variance \eqn{S^2}{S^2} (denominator \eqn{N-1}{N-1}).  With `metric = "mode"` the
#' scores are the whitened ones and the eigenvalue is taken as \eqn{\max_j G_j}{max_j G_j} times
#' the whitened curvature's largest eigenvalue \eqn{\lambda}{lambda} (1 for the dense metric, where
#' \eqn{H = I}{H = I}: exact), and \eqn{\gamma}{gamma}, which assumes the scores' covariance is
#' the curvature's, by the noise measured at the mode: \eqn{\epsilon = 0.2 /
#' \max_j G_j(\lambda + V_j)}{epsilon = 0.2 / max_j G_j (lambda + V_j)}, \eqn{V_j = N^2 S_j^2 (N-n)/(nN)}{V_j = N^2 S_j^2 (N - n) / (n N)} the variance of the
#' whitened minibatch gradient's noise (on overdispersed data many times
#' \eqn{\gamma - 1}{gamma - 1}).
#'
#' @inheritParams sampler-arguments
#' @inheritParams sgld
#' @param stepsize the step size \eqn{\epsilon}{epsilon} (the first one, with a
#'   decaying `schedule`); `NULL` derives it from the data; for a network,
#'   from the gradient noise the chain meets (see [mlp()], "Default steps").
#' @param schedule `"constant"`, or a [schedule_polynomial()] or
#'   [schedule_cyclical()] (or [schedule_step()]).
#' @param decay RMSprop decay \eqn{\alpha}{alpha} in (0, 1); `NULL` (the default): the
#'   paper's 0.99, or in the metric of the mode \eqn{1 - h/60}{1 - h/60}, \eqn{h = \epsilon
#'   \min_j G_j}{h = epsilon min_j G_j} the smallest preconditioned step in the whitened coordinates
#'   (within 0.99 and 0.9999): a memory of about 30 of the chain's relaxation
#'   times \eqn{2/h}{2/h}, which keeps the bias of the dropped \eqn{\Gamma}{Gamma} term small
#'   (on R's iris by sepal size the paper's 0.99 put means 0.14 sd off, 0.999
#'   0.03 sd).
#' @param lambda regulariser \eqn{\lambda > 0}{lambda > 0} of the preconditioner.
#' @return As [sgfs()].
#' @references Li, C., Chen, C., Carlson, D. and Carin, L. (2016).
#'   Preconditioned stochastic gradient Langevin dynamics for deep neural
#'   networks. AAAI.
#' @examples
#' data(Pima.tr, package = "MASS")
#' fit <- psgld(type ~ ., data = Pima.tr, n_iter = 2000, batch_size = 50)
#' coef(fit)
#' @export
psgld <- function(x, ...) UseMethod("psgld")

## pSGLD's default batch: the shared default, but a quarter of the rows where
## that would take them all (at most 100 rows).  RMSprop's V follows the
## minibatch noise; with every row in every batch there is none, V follows
## the chain's own recent positions, and the dropped Gamma term (the
## preconditioner's dependence on theta) biases the draws: sds 1.3 to 1.7
## times the posterior's on R's CO2, warpbreaks, esoph and swiss data, with
## a step 500 times smaller (a 4.6-million-iteration run on 84 rows);
## at a quarter of the rows (gamma about 4) 1.01 to 1.08, in 60,000.
psgld_batch <- function(run) {
    N <- run$spec$N
    if (run$spec$batch_size < N || N < 8L) return(run)
    run$spec$batch_size <- as.integer(ceiling(N / 4))
    run$spec$window_rows <- window_rows(run$design$data, run$spec$batch_size)
    run
}

#' @rdname psgld
#' @export
psgld.formula <- formula_method(function(...) psgld.default(...))

#' @rdname psgld
#' @export
psgld.default <- sampler_method(
    alist(stepsize = NULL, schedule = "constant", decay = NULL, lambda = 1e-5, metric = NULL),
    defaults = alist(init = if (!is.list(model) || !identical(model$type, "mlp")) "map"), {
    metric <- check_metric(metric)
    run <- prepare_run_here(environment())
    if (is.null(batch_size)) run <- psgld_batch(run)
    if (!is.null(decay) && (!is.numeric(decay) || length(decay) != 1L || !(decay > 0 && decay < 1)))
        stop_arg("decay", "must be NULL or a number between 0 and 1, not ", format_value(decay))
    lambda <- check_positive(lambda, "lambda")
    setup <- function(run) {
        N <- run$spec$N
        n <- run$spec$batch_size
        gamma <- noise_gamma(run)
        m <- sampler_metric(metric, run)
        ## in the metric, the minibatch noise as measured at the mode: the
        ## factor gamma = 1 + V / T (V the whitened gradient's noise variance,
        ## gamma - 1 where the scores' covariance is the curvature's; against
        ## the injected noise T times as large at temperature T) taken where
        ## G (lambda + V / T) is largest (on overdispersed data V is many
        ## times gamma - 1, and so would the step's variance inflation be)
        if (!is.null(m)) {
            pre <- psgld_whitened(lambda, N, n, m, m$laplace$mode, subset_spec(run$spec))
            G_max <- max(pre$G)
            gamma <- max(pre$G * (m$lambda + pre$noise / run$temperature)) / (G_max * m$lambda)
        }
        noise <- is.null(m) && noise_stepped(run, stepsize)
        stiff <- if (!is.null(m)) m$lambda * G_max else if (noise) NA_real_
                 else stiffness_if_needed(run, stepsize, psgld_preconditioner(lambda, N, n))
        eps <- if (noise) 1 else if (is.null(stepsize)) 0.2 / (gamma * stiff)
               else check_positive(stepsize, "stepsize")
        strata <- if (!is.null(m)) minibatch_strata(run, m$laplace, eps * G_max / 2, cv = FALSE)
        if (is.null(stepsize) && !is.null(strata)) eps <- eps * strata$shrink
        sched <- schedule_vector(schedule, eps, run$n_iter, epoch_length(run))
        first <- first_step(sched)
        decay <- if (!is.null(decay)) decay
                 else if (!is.null(m)) psgld_decay(first * min(pre$G))
                 else psgld_paper_decay
        list(engine = "psgld", spar = c(decay = decay, lambda = lambda), schedule = sched,
             spec = c(m$spec, if (!is.null(m)) list(drift_limit = 2 / (eps * G_max)),
                      if (length(strata$rows)) list(fixed = strata$rows)),
             evals_per_iter = n + length(strata$rows),
             ## (the preconditioner G_j = 1 / (lambda + sqrt(V_j)), V_j = m_j / N^2)
             noise_rule = if (noise) list(per_step = function(ms)
                 ms / (4 * run$temperature * (lambda + sqrt(ms) / N))),
             settings = list(stepsize = first, schedule = schedule, decay = decay,
                             metric = metric_type(m), fixed_rows = length(strata$rows),
                             lambda = lambda, inflation = sgld_inflation(first, stiff, gamma),
                             step_5pct = sgld_step(stiff, gamma)))
    }
    sg_fit("psgld", setup, run, match.call())
})

## RMSprop's decay: the paper's, or in the metric of the mode the one whose
## memory 1 / (1 - decay) is 30 times the chain's relaxation time 2 / h, h
## = eps min_j G_j its smallest preconditioned step in the whitened
## coordinates (within [0.99, 0.9999]).  The preconditioner follows the
## gradients of the chain's recent positions, and the dropped Gamma term
## leaves a bias that grows as that memory shrinks against the time the
## chain takes to cross the posterior: on iris by sepal size (categorical,
## 150 rows) the paper's 0.99, 3 relaxation times, put means 0.14 sd off,
## a quarter of the step 0.37 sd; 0.999 (30 of them) 0.03 sd.
psgld_paper_decay <- 0.99
psgld_decay <- function(h) min(0.9999, max(psgld_paper_decay, 1 - h / 60))

kind_psgld <- step_kind("pSGLD")
