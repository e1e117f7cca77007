#' Layer-wise isotropic stochastic gradient descent (I-SGD)
#'
#' Samples the posterior with I-SGD (Franzese, Milios, Filippone and
#' Michiardi, 2021): after a warm-up that measures the minibatch-gradient
#' noise, each group \eqn{p}{p} of parameters (a block of the model) gets a
#' fixed step \eqn{\epsilon_p = 4/\tau_p}{epsilon_p = 4/tau_p}, where \eqn{\tau_p}{tau_p} is the
#' group's total gradient-noise variance, and the injected noise tops the
#' gradient noise up to \eqn{\tau_p}{tau_p} in every coordinate:
#' \deqn{\theta_j \leftarrow \theta_j + \frac{\epsilon_p}{2}\left(\widehat{\nabla L}_j +
#'   \sqrt{\max(\tau_p - \widehat{\nabla L}_j^2, 0)}\,\xi_j\right),}{theta_j <- theta_j + epsilon_p/2(hat(grad L)_j + sqrt(max(tau_p - hat(grad L)_j^2, 0)) xi_j),}
#' so that every coordinate's step has variance \eqn{\epsilon_p}{epsilon_p}: Langevin
#' dynamics with a constant preconditioner, whose step needs no tuning.
#' \eqn{\tau_p}{tau_p} is the mean of \eqn{\sum_{j \in p}\widehat{\nabla L}_j^2}{sum_(j in p) hat(grad L)_j^2} over
#' the second half of the warm-up (the paper's low signal-to-noise
#' assumption), during which the chain runs SGLD at `stepsize`.  This
#' follows the convention-free form of the method (the paper's equations
#' are reconstructed from its description).  The automatic step is
#' conservative, about \eqn{(n/N)\,4/\mathrm{tr}(H)}{(n/N) 4/tr(H)}, so the chain mixes
#' slowly in flat directions when there are many parameters.  Where the
#' measured \eqn{\tau_p}{tau_p} is not well above the group's largest curvature
#' \eqn{\lambda_p}{lambda_p} at the mode (a group of one parameter, such as a gaussian
#' model's `log_sigma`, when the minibatches hold most rows), the step
#' \eqn{4/\tau_p}{4/tau_p} would inflate the group's variance by
#' \eqn{(\epsilon_p\lambda_p/4)/(1 - \epsilon_p\lambda_p/4)}{(eps_p lambda_p/4)/(1 - eps_p lambda_p/4)}, without bound:
#' \eqn{\tau_p}{tau_p} is taken at least \eqn{21\lambda_p}{21 lambda_p}, which keeps that
#' below 5 \% (`log_sigma`'s sds were 1.3 to 5.6 times the posterior's on R's
#' `CO2` and `swiss` data and UCI concrete).
#'
#' @inheritParams sgld
#' @param stepsize SGLD step of the warm-up; `NULL` derives it from the
#'   data as for [sgld()] (for a network, from the gradient noise, one step
#'   for all, and without the groups' floors: see [mlp()]).
#' @param warmup warm-up iterations, between 2 and `burnin`; `NULL` (the
#'   default): `burnin`.
#' @param groups an integer per parameter naming its group, or `NULL`: the
#'   model's parameter blocks, i.e. for a GLM the coefficients form one group
#'   (and `log_sigma` another), for a network each layer's weights and biases
#'   (see [mlp()]).
#' @return As [sgfs()].
#' @references Franzese, G., Milios, D., Filippone, M. and Michiardi, P.
#'   (2021). A scalable Bayesian sampling method based on stochastic
#'   gradient descent isotropization. Entropy 23, 1426.
#' @examples
#' data(Pima.tr, package = "MASS")
#' fit <- isgd(type ~ ., data = Pima.tr, n_iter = 2000, batch_size = 50)
#' coef(fit)
#' @export
isgd <- function(x, ...) UseMethod("isgd")

#' @rdname isgd
#' @export
isgd.formula <- formula_method(function(...) isgd.default(...))

#' @rdname isgd
#' @export
isgd.default <- sampler_method(
    alist(stepsize = NULL, warmup = NULL, groups = NULL),
    defaults = alist(init = if (!is.list(model) || !identical(model$type, "mlp")) "map"), {
    run <- prepare_run_here(environment())
    if (!is.null(stepsize)) stepsize <- check_positive(stepsize, "stepsize")
    if (run$spec$burnin < 2L)
        stop_arg("burnin", "must be at least 2 for isgd(): the warm-up is part of the burn-in")
    if (is.null(warmup)) warmup <- run$spec$burnin
    warmup <- check_count(warmup, "warmup", 2L, run$spec$burnin)
    D <- length(run$theta0)
    if (is.null(groups)) {
        groups <- model_groups(run$design)
    } else if (!is.numeric(groups) || length(groups) != D || any(!is.finite(groups)) ||
               any(groups != round(groups))) {
        stop_arg("groups", sprintf("must be %d whole numbers, one group per parameter (%s)",
                                   D, paste(run$design$par_names, collapse = ", ")))
    }
    group_index <- match(groups, unique(groups)) - 1
    setup <- function(run) {
        ## a network: the warm-up's SGLD step from the gradient noise (its
        ## pilots run the warm-up, R/noise-steps.R), and no floors (the
        ## curvature at one of its modes says little)
        noise <- noise_stepped(run, stepsize)
        stiffness <- if (!noise) posterior_stiffness(run, groups = group_index)
        eps <- if (noise) 1 else if (is.null(stepsize)) 0.2 / (noise_gamma(run) * stiffness$lambda_max)
               else stepsize
        ## each group's tau at least 21 times its stiffest curvature: the
        ## automatic step's variance inflation at most 5 % (src/sampler_isgd.c)
        floors <- if (noise) double(length(unique(group_index))) else 21 * stiffness$lambda_groups
        list(engine = "isgd", spar = c(warmup_from = warmup %/% 2L, warmup_to = warmup, group_index,
                                       floors[group_index + 1L]),
             schedule = schedule_vector("constant", eps, run$n_iter),
             noise_rule = if (noise) list(per_step = function(ms) ms / (4 * run$temperature),
                                          fresh_state = TRUE, setting = "warmup_stepsize"),
             settings = list(warmup_stepsize = eps, warmup = warmup,
                             groups = groups))
    }
    sg_fit("isgd", setup, run, match.call())
})

## I-SGD's automatic step per group (from the saved state), NA before the
## warm-up ended
isgd_steps <- function(info) {
    K <- length(unique(info$settings$groups))
    vapply(info$states, function(s) {
        tau <- state_parts(info, s)$tau[seq_len(K)]
        ifelse(tau > 0, 4 / tau, NA_real_)
    }, numeric(K))
}

kind_isgd <- kind(
    label = function(info)
        sprintf("I-SGD (automatic step %s after %d warm-up iterations)",
                paste(sprintf("%.3g", unique(signif(isgd_steps(info), 3))), collapse = "/"),
                info$settings$warmup),
    divergence = function(info, eps)
        "the warm-up measured too little gradient noise: try a longer warmup or a larger stepsize for it",
    remedy = function(info) "try a longer run or a longer warmup",
    slow_mixing = TRUE)
