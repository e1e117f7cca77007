## The posterior mode and the curvature there, for SGLD-CV's centre, OSGFS's
## preconditioner, init = "map" and the mass matrices of MALA and HMC.

## full-data curvature at theta (internal scale): H = minus the Hessian of
## the log posterior (the prior's part positive, from src/prior.c: its
## precision for normal(); for laplace() that of the normal with the same
## variance; for student_t() the exact curvature where it exceeds the
## Fisher information, that information in the tails, see ?normal) and,
## with `cov`, C = the per-example
## score covariance (`weight` scales the likelihood: N/m for a subset of m of
## the N rows); `lik_grad` is the likelihood's score sum alone
full_curvature <- function(spec, theta, weight = 1, cov = FALSE) {
    cur <- .Call(C_sgfs_model_curvature, spec, theta, cov)
    lp <- log_prior(theta, spec)
    list(log_post = weight * cur$loglik + lp$value, grad = weight * cur$grad + lp$grad,
         lik_grad = cur$grad,
         H = weight * cur$neg_hessian + diag(lp$curvature, length(theta)),
         C = if (cov) cur$score_cov)
}

## Newton's method on the log posterior of `spec`'s rows (their likelihood
## weighted N/m when they are m of N), with step halving and, where minus
## the Hessian is not positive definite (e.g. a gaussian model's
## (beta, log sigma) far from the mode), a block step (see newton_step())
## or Levenberg's H + lambda I; at most
## `max_steps` Newton steps, until the Newton decrement g'H^-1 g is below
## `tol`.  Returns the mode and the curvature there, which must be positive
## definite.
newton_mode <- function(spec, start, max_steps = 100L, N = spec$N, tol = 1e-10) {
    theta <- start
    weight <- N / spec$N
    post <- subset_log_posterior(spec, N)
    ## a gaussian model's sampled log sigma: its own block (below)
    split <- if (has_aux(spec) && length(theta) > spec$P) spec$P
    cur <- full_curvature(spec, theta, weight)
    for (k in seq_len(max_steps)) {
        step <- newton_step(cur$H, cur$grad, split)
        decrement <- sum(step * cur$grad)        # squared (H + lambda I)-norm
        if (!is.finite(decrement) || decrement < tol) break
        shrink <- 1
        repeat {                 # trials need the log posterior only: O(N D), not O(N D^2)
            lp <- post(theta + shrink * step)$value
            if (is.finite(lp) && lp >= cur$log_post - 1e-10) break
            shrink <- shrink / 2
            if (shrink < 1e-8) return(list(mode = theta, curvature = cur, steps = k))
        }
        theta <- theta + shrink * step
        cur <- full_curvature(spec, theta, weight)
    }
    if (is.null(tryCatch(chol(cur$H), error = function(e) NULL)))
        stop("the log posterior has no well-defined mode (minus its Hessian is not positive ",
             "definite where Newton's method stopped): ", no_mode_hint(spec, length(theta)),
             call. = FALSE)
    list(mode = theta, curvature = cur, steps = k)
}

## why a model's log posterior may have no mode, and what helps
no_mode_hint <- function(spec, D) {
    if (isTRUE(engine_entry(spec$model)$aux$location_scale) && D > spec$P)
        return(sprintf(paste0("%s; with its residuals 0 the mode of sigma is 0. ",
                              "Fewer columns, a fixed sigma (sigma =) or a stronger prior helps"),
                       if (spec$P >= spec$N) sprintf("%d coefficients for %d rows fit y exactly",
                                                     spec$P, spec$N)
                       else "can the columns fit y exactly?"))
    switch(as.character(spec$model)[1],
           logistic = , probit = , categorical =
               "are the classes separable? A stronger prior helps",
           poisson = , negbin =
               "do some columns pick out rows whose counts are all 0? A stronger prior helps",
           "a stronger prior helps")
}

## (H + lambda I)^{-1} g for the smallest lambda in 0, 1e-6 max|H_jj|,
## 10 times that, ... that makes H + lambda I positive definite.  With
## `split` = P (a gaussian model's coefficients 1..P and log sigma after
## them), where H is not positive definite the step is first the Newton step
## of each block with the other held (H's diagonal blocks, positive
## definite: given sigma the log posterior is a concave quadratic in the
## coefficients, given them concave in log sigma), an ascent direction whose
## coefficients' part solves their quadratic in one step.  Levenberg's
## steps alone crawled there: with unstandardised predictors (state.x77,
## standardize = FALSE, weak priors) lambda had to be so large against the
## intercept's curvature that 100 steps moved it from 0 to 1.7 of 68, and
## the fit stopped with "no well-defined mode".
newton_step <- function(H, g, split = NULL) {
    if (!is.null(split) && is.null(tryCatch(chol(H), error = function(e) NULL))) {
        a <- seq_len(split)
        b <- seq_len(nrow(H))[-a]
        Ra <- tryCatch(chol(H[a, a, drop = FALSE]), error = function(e) NULL)
        Rb <- tryCatch(chol(H[b, b, drop = FALSE]), error = function(e) NULL)
        if (!is.null(Ra) && !is.null(Rb)) {
            step <- double(length(g))
            step[a] <- backsolve(Ra, backsolve(Ra, g[a], transpose = TRUE))
            step[b] <- backsolve(Rb, backsolve(Rb, g[b], transpose = TRUE))
            return(step)
        }
    }
    lambda <- 0
    repeat {
        R <- tryCatch(chol(H + diag(lambda, nrow(H))), error = function(e) NULL)
        if (!is.null(R)) return(backsolve(R, backsolve(R, g, transpose = TRUE)))
        lambda <- if (lambda == 0) 1e-6 * max(abs(diag(H)), 1) else 10 * lambda
    }
}

## SGA on the engine: `n_iter` steps of theta <- theta + eps_t grad +
## momentum (theta - theta_prev); the estimate is the mean of the iterates
## after `burnin` (Polyak-Ruppert averaging).  The default schedule,
## eps_t = eps_1 (b + 1) / (b + t) with b = n_iter / 20, keeps the first
## steps large and shrinks the iterates' minibatch noise (whose spread, with
## a constant step, would bias the average on a curved log posterior) by
## about 10 and 20 times at the averaging window's ends.  Returns
## internal-scale values.
## With optimizer = "adam" the rule is Adam (sampler_adam.c), default step
## 0.01: a move of about 0.01 per coordinate and iteration at first.
run_sga <- function(run, n_iter, burnin, stepsize = NULL, schedule = NULL,
                    momentum = 0, thin = 1L, progress = FALSE,
                    optimizer = default_optimizer(run$design), check = NULL) {
    adam <- optimizer == "adam"
    if (is.null(stepsize)) stepsize <- if (adam) 0.01 else sga_default_step(run, momentum)
    if (is.null(schedule)) schedule <- schedule_polynomial(b = max(1, n_iter %/% 20L), delta = 1)
    sched <- schedule_vector(schedule, stepsize, n_iter, epoch_length(run))
    ## (learned scales held at tau = 1: the joint mode of the weights and their
    ## log precisions is the collapsed one, every weight 0, and setting each
    ## precision to its conditional mode after every step reaches it: Adam
    ## on MNIST 400-400 ended at the uniform prediction)
    spec <- without_hyper(run$spec)
    spec$burnin <- burnin
    spec$thin <- thin
    spec$pred_x <- spec$monitor <- NULL            # every iterate, no predictive
    spec <- c(spec, list(sampler = if (adam) "adam" else "sga",
                         spar = if (adam) c(beta1 = 0.9, beta2 = 0.999, delta = 1e-8)
                                else c(momentum = as.double(momentum)),
                         schedule = sched))
    res <- run_chain(spec, list(theta = run$theta0, iter = 0, sstate = double(0)),
                     n_iter, progress)
    if (res$diverged > 0)
        stop(sprintf(paste("sga() diverged at iteration %.0f: the step size %.3g is too large;",
                           "try stepsize = %.3g"), res$diverged, stepsize, stepsize / 10),
             call. = FALSE)
    if (res$interrupted) stop("sga() was interrupted", call. = FALSE)
    estimate <- colMeans(res$draws)
    if (!is.null(check)) check_estimate(run, estimate, check$what, check$remedy)
    list(estimate = estimate, trajectory = res$draws,
         stepsize = first_step(sched), elapsed = res$elapsed)
}

## A GLM's SGA estimate should sit well inside the posterior's bulk, where a
## posterior draw is about D/2 below the mode in log density.  Its distance
## from the mode is measured by the Newton decrement g' H^-1 g / 2 (the log
## density it would gain from one Newton step) on up to 10^5 evenly spaced
## rows, their likelihood scaled by r = N/m (whose own mode is about r - 1
## posterior variances off, hence the r).  A warning when it is 3 sd of a
## draw's gap (chi^2_D / 2: mean and variance D/2) beyond the bulk,
## typically an ill-conditioned problem (unstandardised predictors) that SGA
## has not solved in its iterations.  `what` names the estimate and `remedy`
## the caller's own argument for a better one.  Skipped beyond D = 200,
## where the dense Hessian would cost more than the check is worth.
check_estimate <- function(run, theta, what, remedy, m = 100000L) {
    if (!is.null(run$design$network) || !is.null(run$design$custom) || length(theta) > 200L)
        return(invisible())
    sub <- subset_spec(run$spec, m)
    r <- run$spec$N / sub$N
    cur <- full_curvature(sub, theta, weight = r)
    gap <- sum(newton_step(cur$H, cur$grad) * cur$grad) / 2
    D <- length(theta)
    unscaled <- all(run$design$scale == 1)
    limit <- r * (D / 2 + 3 * sqrt(D / 2)) + 1
    if (is.finite(gap) && gap > limit)
        warning(sprintf(paste0(
            "%s is not yet the posterior mode: a Newton step would raise the log posterior ",
            "by %.3g (more than %.3g, a posterior draw's typical gap); %s%s"),
            what, gap, limit,
            if (unscaled) "unstandardised predictors make SGA slow: try standardize = TRUE or " else "try ",
            remedy),
            call. = FALSE)
    invisible()
}

## A stable SGA step: (1 - momentum) / lambda_max, an effective step of
## 1 / lambda_max in the stiffest direction (gradient ascent is stable below
## 2 / lambda_max).
sga_default_step <- function(run, momentum) {
    (1 - momentum) / posterior_stiffness(run)$lambda_max
}

## Adam for networks, whose curvatures span orders of magnitude; plain SGA
## (with a step from the largest curvature) for the GLMs
default_optimizer <- function(design) if (is.null(design$network)) "sgd" else "adam"

## The posterior mode, one route for every caller that needs a point: a
## GLM's exact mode (posterior_laplace(), Newton's method, cached in the
## run), else the average of the second half of n_iter SGA (Adam for a
## network) iterations from the run's start (check: list(what, remedy) for
## check_estimate()).
posterior_mode <- function(run, n_iter = 10000L, stepsize = NULL, check = NULL) {
    if (laplace_available(run$design)) return(posterior_laplace(run)$mode)
    run_sga(run, n_iter, n_iter %/% 2L, stepsize, check = check)$estimate
}
