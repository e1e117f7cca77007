#' Stochastic gradient ascent: the posterior mode
#'
#' Finds the posterior mode (MAP estimate) by stochastic gradient ascent with
#' optional heavy-ball momentum \eqn{\mu}{mu}:
#' \deqn{\theta_{t+1} = \theta_t + \epsilon_t \widehat{\nabla L}(\theta_t) +
#'   \mu(\theta_t - \theta_{t-1}),}{theta_(t+1) = theta_t + epsilon_t hat(grad L)(theta_t) + mu(theta_t - theta_(t-1)),}
#' on the same engine and minibatches as the samplers.  The estimate is the
#' mean of the iterates after `burnin` (Polyak-Ruppert averaging) of a
#' decaying step, which removes most of the minibatch noise.  The default step
#' is derived from the data: \eqn{(1-\mu)/\lambda_{max}}{(1-mu)/lambda_max}, with
#' \eqn{\lambda_{max}}{lambda_max} the largest curvature of the log posterior (as for
#' [sgld()]), an effective step of \eqn{1/\lambda_{max}}{1/lambda_max}.
#' [sgldcv()] and [osgfs()] use it to find their centre, and every sampler
#' accepts `init = "map"` to start from its estimate.
#'
#' @inheritParams sampler-arguments
#' @param n_iter number of iterations.
#' @param burnin iterations before the averaging window; the estimate is the
#'   mean of the remaining `n_iter - burnin` iterates.
#' @param thin keep every `thin`-th iterate of the window (the estimate is
#'   the mean of the kept iterates).
#' @param stepsize the step size \eqn{\epsilon}{epsilon} (the first one, with a
#'   decaying `schedule`); `NULL` derives it from the data.
#' @param schedule `NULL` for the default decay
#'   \eqn{\epsilon_t = \epsilon_1 (b+1)/(b+t)}{epsilon_t = epsilon_1 (b+1)/(b+t)}, \eqn{b = }{b =} `n_iter / 20`
#'   (large early steps, then small ones whose average is close to the mode),
#'   `"constant"`, or a [schedule_polynomial()] or [schedule_cyclical()] (or [schedule_step()]).
#' @param momentum \eqn{\mu}{mu} in \[0, 1) (for `optimizer = "sgd"`).
#' @param optimizer `"sgd"` (the update above) or `"adam"` (Kingma and Ba,
#'   2015: per-coordinate steps scaled by running moments of the gradient,
#'   \eqn{\beta_1 = 0.9}{beta_1 = 0.9}, \eqn{\beta_2 = 0.999}{beta_2 = 0.999}; default step 0.01 with the
#'   same decay), which suits networks, whose curvatures differ by orders of
#'   magnitude between parameters.  `NULL`: `"adam"` for a network, `"sgd"`
#'   otherwise; `init = "map"` uses the same choice.
#' @return An object of class `sgfs_map`: a list with `estimate`, the mode
#'   on the original scale, and `trajectory`, the iterates of the averaging
#'   window as a 'coda' `mcmc` object (for traceplots); the settings are in
#'   `attr(, "sgfit")`.  `coef()` returns the estimate.
#' @examples
#' data(Pima.tr, package = "MASS")
#' map <- sga(type ~ ., data = Pima.tr, n_iter = 4000)
#' coef(map)
#' @export
sga <- function(x, ...) UseMethod("sga")

#' @rdname sga
#' @export
sga.formula <- formula_method(function(...) sga.default(...))

#' @rdname sga
#' @export
sga.default <- sampler_method(
    alist(stepsize = NULL, schedule = NULL, momentum = 0, optimizer = NULL),
    defaults = alist(n_iter = 10000L, burnin = n_iter %/% 2L),
    drop = c("keep", "chains", "cores", "max_time", "verbose", "temperature"), {
    chains <- cores <- 1L
    run <- prepare_run_here(environment())
    check_hs_sampler("sga", run)
    if (!is.numeric(momentum) || length(momentum) != 1L || !(momentum >= 0 && momentum < 1))
        stop_arg("momentum", "must be a number in [0, 1), not ", format_value(momentum))
    optimizer <- if (is.null(optimizer)) default_optimizer(run$design)
                 else choose_arg(optimizer, c("sgd", "adam"), "optimizer")
    if (optimizer == "adam" && momentum != 0)
        stop_arg("momentum", "is for optimizer = \"sgd\" (Adam has its own)")
    if (!is.null(stepsize)) stepsize <- check_positive(stepsize, "stepsize")
    run <- resolve_start(run)
    res <- run_sga(run, run$n_iter, run$spec$burnin, stepsize, schedule, momentum,
                   run$spec$thin, run$progress, optimizer,
                   check = list(what = "the SGA estimate", remedy = "more iterations (n_iter)"))
    names <- run$design$par_names
    trajectory <- to_original(res$trajectory, run$design)
    colnames(trajectory) <- names
    out <- list(estimate = stats::setNames(to_original(res$estimate, run$design), names),
                trajectory = coda::mcmc(trajectory, start = run$spec$burnin + run$spec$thin,
                                        thin = run$spec$thin))
    class(out) <- "sgfs_map"
    attr(out, "sgfit") <- list(
        call = generic_call(match.call()), method = "sga", family = run$family,
        levels = run$levels,
        design = run$design, N = run$spec$N, batch_size = run$spec$batch_size,
        n_iter = run$n_iter, burnin = run$spec$burnin, thin = run$spec$thin,
        spec = run$spec[c("model", "mpar")],     # for predict(): the model, not the data
        elapsed = res$elapsed,
        settings = list(stepsize = res$stepsize, schedule = schedule, momentum = momentum,
                        optimizer = optimizer))
    out
})

#' @rdname sga
#' @param object,digits a fit of `sga()`; significant digits to print.
#' @export
print.sgfs_map <- function(x, digits = 4, ...) {
    info <- sgfit_info(x)
    s <- info$settings
    cat(sprintf("%s posterior mode, %s: %d iterations (step %.3g%s%s), batch %d of %d rows\n",
                if (identical(s$optimizer, "adam")) "Adam" else "SGA",
                likelihood_label(info), info$n_iter, s$stepsize,
                if (identical(s$schedule, "constant")) "" else ", decaying",
                if (s$momentum > 0) sprintf(", momentum %g", s$momentum) else "",
                info$batch_size, info$N))
    cat(sprintf("estimate: mean of iterations %d:%d%s\n", info$burnin + 1L, info$n_iter,
                if (info$thin > 1L) sprintf(", every %d-th", info$thin) else ""))
    print(signif(x$estimate, digits))
    invisible(x)
}

#' @rdname sga
#' @export
coef.sgfs_map <- function(object, ...) object$estimate

#' @rdname sga
#' @param newdata,type as for [predict.sgfit()]: the model's prediction at
#'   the estimate (a plug-in prediction, not a posterior predictive), for new
#'   data only (`sga()` keeps no copy of the training data).
#' @export
predict.sgfs_map <- function(object, newdata, type = c("link", "response", "class"), ...) {
    no_dots(...)
    if (missing(newdata)) stop_arg("newdata", "is needed: sga() keeps no copy of its data")
    ## the estimate as a fit with one draw, predicted like any other
    point <- coda::mcmc(matrix(object$estimate, 1L, dimnames = list(NULL, names(object$estimate))))
    attr(point, "sgfit") <- sgfit_info(object)
    class(point) <- c("sgfit", class(point))
    predict.sgfit(point, newdata, type = type)
}
