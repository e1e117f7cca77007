## The posterior's stiffness, for data-derived default step sizes: a rough
## mode and the largest eigenvalue of -Hessian(log posterior) there, from up
## to 5000 evenly spaced examples with their likelihood scaled by N/m.  No
## random numbers are used, so defaults do not disturb the chain's stream.

## gamma of SGFS: 1 + the minibatch-noise factor (N/n)(N - n)/(N - 1), as
## the engine computes it (src/fisher.c)
gamma_fpc <- function(N, n) .Call(C_sgfs_gamma, N, n)

## gamma for the default steps at the run's temperature T: the minibatch
## noise, (gamma - 1) times the posterior's scale, is not tempered, and
## measured against a target T times as wide it is (gamma - 1) / T of it
noise_gamma <- function(run) tempered_gamma(run$spec$N, run$spec$batch_size, run$temperature)
tempered_gamma <- function(N, n, temperature) 1 + (gamma_fpc(N, n) - 1) / temperature

subset_spec <- function(spec, m = 5000L) {
    N <- spec$N
    if (m >= N) return(spec)
    slice_rows(spec, as.integer(round(seq(1, N, length.out = min(N, m)))))
}

## log posterior (likelihood of the subset scaled by N/m) and its gradient;
## each evaluation one pass in C
subset_log_posterior <- function(spec, N) {
    w <- N / spec$N
    function(theta) {
        ll <- .Call(C_sgfs_model_loglik, spec, theta)
        lp <- log_prior(theta, spec)
        list(value = w * ll$loglik + lp$value, grad = w * ll$grad + lp$grad)
    }
}

## (BFGS keeps a D x D matrix: limited memory beyond D = 1000); the log
## posterior and its gradient must be finite at the start
subset_mode <- function(post, start) {
    at <- post(start)
    if (!is.finite(at$value) || !all(is.finite(at$grad)))
        stop(sprintf(paste("the log posterior%s is not finite at the start (on %s):",
                           "check the data and init, or a custom_model()'s loglik and score there"),
                     if (is.finite(at$value)) "'s gradient" else "", "the rows used to measure the curvature"),
             call. = FALSE)
    big <- length(start) > 1000L
    stats::optim(start, function(th) -post(th)$value, function(th) -post(th)$grad,
                 method = if (big) "L-BFGS-B" else "BFGS",
                 control = if (big) list(maxit = 200L, factr = 1e4)
                           else list(maxit = 200L, reltol = 1e-10))$par
}

## posterior_stiffness()'s lambda_max where a sampler's set-up needs it:
## for its default step, or to report a given step's variance inflation on
## a model with one mode; NA for a given step on a network or custom model
## (the measurement costs about 60 gradient passes there)
stiffness_if_needed <- function(run, stepsize, precond = NULL) {
    if (!is.null(stepsize) && !laplace_available(run$design)) return(NA_real_)
    posterior_stiffness(run, precond)$lambda_max
}

## The largest eigenvalue of P^(1/2) H P^(1/2) at the mode, H the negative
## Hessian and P = diag(precond(mode, spec)) a diagonal preconditioner (the
## identity by default); with `groups` (a group number per parameter), also
## that of each group's diagonal block of H, in the order of unique(groups)
## (lambda_groups), from the same mode.
posterior_stiffness <- function(run, precond = NULL, n_power = 30L, groups = NULL) {
    blocks <- if (!is.null(groups)) lapply(unique(groups), function(g) groups == g)
    if (!is.null(run$design$hs)) {            # in the horseshoe's coordinates, at the joint mode
        lap <- posterior_laplace(run)
        top <- function(b) max(eigen(lap$H[b, b, drop = FALSE], symmetric = TRUE,
                                     only.values = TRUE)$values)
        return(list(mode = lap$mode, lambda_max = top(rep(TRUE, length(lap$mode))),
                    lambda_groups = if (!is.null(blocks)) vapply(blocks, top, 0)))
    }
    N <- run$spec$N
    spec <- subset_spec(run$spec)
    post <- subset_log_posterior(spec, N)
    ## a network has many modes: its curvature is taken at the start, which
    ## init = "map" puts at one
    mode <- if (is.null(run$design$network)) subset_mode(post, run$theta0) else run$theta0
    root <- if (is.null(precond)) rep(1, length(mode)) else sqrt(precond(mode, spec))
    h <- 1e-4 * max(1, sqrt(sum(mode^2)))
    floor <- root^2 * spec$prior_prec
    ## power iteration on the block of the coordinates `in_block` (logical)
    power <- function(in_block) {
        hess_times <- function(v) {
            w <- root * v
            -in_block * root * (post(mode + h * w)$grad - post(mode - h * w)$grad) / (2 * h)
        }
        v <- in_block / sqrt(sum(in_block))
        lambda <- 0
        for (k in seq_len(n_power)) {
            w <- hess_times(v)
            lambda <- sqrt(sum(w^2))
            if (!(lambda > 0)) break
            v <- w / lambda
        }
        max(lambda, floor[in_block])
    }
    list(mode = mode, lambda_max = power(rep(TRUE, length(mode))),
         lambda_groups = if (!is.null(blocks)) vapply(blocks, power, 0))
}

## pSGLD's preconditioner at the mode: G = 1 / (lambda + sqrt(V)), V the
## expected square of a minibatch's mean score there (n rows drawn without
## replacement), mean^2 + S^2 (N - n) / (n N), S^2 the scores' variance
## with denominator N - 1 (var() over the rows used).  Where the m x D
## scores would pass 2^24 values (a network's D may be 10^6), from the
## moments of batch mean scores instead (batch_score_square()), in O(D)
## memory.
psgld_preconditioner <- function(lambda, N, n) {
    function(mode, spec) {
        if (as.double(spec$N) * length(mode) > 2^24)
            return(1 / (lambda + sqrt(batch_score_square(spec, mode, N, n))))
        psgld_moments(lambda, N, n, all_scores(spec, mode))$G
    }
}

## ... and in the coordinates of a metric (sampler_metric()), of the scores
## U'^-1 g there, with the variance of the minibatch gradient's noise in each
## of them, N^2 S^2 (N - n) / (n N)
psgld_whitened <- function(lambda, N, n, metric, mode, spec)
    psgld_moments(lambda, N, n, metric_scores(metric, all_scores(spec, mode)))

psgld_moments <- function(lambda, N, n, scores) {
    S2 <- apply(scores, 2L, stats::var)
    V <- colMeans(scores)^2 + S2 / n * (N - n) / N
    list(G = 1 / (lambda + sqrt(V)), noise = N * S2 * (N - n) / n)
}

## the per-example scores (rows) of every row of `spec` at theta
all_scores <- function(spec, theta) {
    .Call(C_sgfs_model_eval, spec, theta, seq_len(spec$N), NULL, FALSE)$scores
}

## E[gbar^2] over minibatches of n of the N rows (drawn without
## replacement) at theta, gbar a minibatch's mean score: mu^2 + S^2 (N - n)
## / (n N), mu and S^2 from the mean scores of up to 20 disjoint batches of
## b = min(n, m / 2) of the m rows of `spec` (each one gradient pass: the
## memory is that of the k gradients), S^2 = b times their variance
batch_score_square <- function(spec, theta, N, n) {
    m <- spec$N
    b <- max(1L, min(n, m %/% 2L))
    k <- max(2L, min(20L, m %/% b))
    means <- vapply(seq_len(k), function(i) {
        rows <- (i - 1L) * b + seq_len(b)                 # (k b <= m)
        .Call(C_sgfs_model_loglik, slice_rows(spec, rows), theta)$grad / b
    }, double(length(theta)))
    mu <- rowMeans(means)
    S2 <- b * rowSums((means - mu)^2) / (k - 1L)
    mu^2 + S2 * (N - n) / (n * N)
}

## A check that the draws sit where the posterior's mass is: for a
## near-Gaussian posterior, log p(mode) - log p(draw) is about chi^2_D / 2, so
## its mean over draws is about D/2.  Returns that mean gap over up to 20
## draws spread over the chain, the gap expected, and the limits beyond
## which it is not chance (10 of chi^2_D / 2's sds, sqrt(D / 2), on the
## mean of draws that may all be alike, and the noise below): above, the
## draws are off the posterior's mass; below, they are bunched near the
## mode -- a chain that has hardly left its start (on large problems the
## default start is the mode), which only a large D can show.  The log
## posterior uses up to 10^5 evenly spaced rows (likelihood scaled by N/m).
## The mode is the run's own (posterior_laplace(), cached in the fit) where
## there is one: the subset's log density then differs from the full one by
## a noise whose difference between the mode and a draw has variance about
## (N/m - 1) D.  Without it the subset's own mode is found (by Newton's
## method for a GLM, BFGS for a custom model),
## which is off the full-data one by about N/m - 1 posterior variances and
## raises the expected gap to D N / (2m).
mode_gap <- function(value, m = 100000L) {
    info <- sgfit_info(value)
    d <- all_draws(value)
    rows <- unique(round(seq(1, nrow(d), length.out = min(nrow(d), 20L))))
    internal <- lapply(rows, function(r) to_internal(d[r, ], info$design))
    spec <- subset_spec(fit_spec(info), m)
    post <- subset_log_posterior(spec, info$spec$N)
    values <- vapply(internal, function(th) post(th)$value, 0)
    D <- length(internal[[1L]])
    r <- info$spec$N / spec$N
    if (!is.null(info$laplace)) {
        noise <- sqrt(max(r - 1, 0) * D)
        slack <- 10 * sqrt(D) + 5 * noise + 5
        return(list(gap = post(info$laplace$mode)$value - mean(values), expected = D / 2,
                    limit = D / 2 + slack, lower = D / 2 - slack, D = D))
    }
    start <- internal[[which.max(values)]]
    ## a GLM's subset mode by Newton (a few O(m D^2) passes in C), else BFGS
    mode <- if (laplace_available(info$design)) newton_mode(spec, start, N = info$spec$N)$mode
            else subset_mode(post, start)
    slack <- 10 * sqrt(r * D) + 5
    list(gap = post(mode)$value - mean(values), expected = r * D / 2,
         limit = r * D / 2 + slack, lower = r * D / 2 - slack, D = D)
}

## The learning rate at which SGHMC's stationary variance in the stiffest
## direction (curvature lambda, minibatch-noise factor gamma) is inflated by
## `inflation`: the exact stationary law of the linearised recursion
## (algorithms vignette 5.1): z' = (1 - eta lambda) z + (1 - alpha) v + w,
## v' = -eta lambda z + (1 - alpha) v + w, Var w = 2 eta alpha + eta^2 (gamma - 1) lambda.
## With the momentum resampled, v ~ N(0, eta), before every L-th step
## (trajectory = L), Var z is periodic: from Var z = s at a trajectory's
## start it is a_k s + b_k after its k-th step, so s = b_L / (1 - a_L) and
## the value is the mean over the L steps.  Returned relative to 1/lambda.
momentum_variance <- function(eta, alpha, gamma, lambda, L = 0) {
    if (is.na(lambda)) return(NA_real_)
    M <- matrix(c(1 - eta * lambda, -eta * lambda, 1 - alpha, 1 - alpha), 2L)
    R <- 2 * eta * alpha + eta^2 * (gamma - 1) * lambda
    if (max(Mod(eigen(M, only.values = TRUE)$values)) >= 1) return(Inf)   # unstable
    if (L == 0 || L > 1e4) {               # (trajectories of 10^4 steps: the limit)
        S <- solve(diag(4L) - kronecker(M, M), rep(R, 4L))
        return(S[1L] * lambda)
    }
    trajectory <- function(s) {
        S <- diag(c(s, eta))
        vapply(seq_len(L), function(k) (S <<- M %*% S %*% t(M) + R)[1L], 0)
    }
    b <- trajectory(0)
    a <- trajectory(1) - b
    if (!is.finite(a[L]) || a[L] >= 1) return(Inf)
    mean(a * b[L] / (1 - a[L]) + b) * lambda
}

momentum_step <- function(alpha, gamma, lambda, inflation = 0.05) {
    if (is.na(lambda)) return(NA_real_)             # (no curvature measured)
    excess <- function(eta) {
        v <- momentum_variance(eta, alpha, gamma, lambda)
        if (!is.finite(v) || v <= 0) Inf else v - 1 - inflation   # unstable: too large
    }
    lo <- 1e-12 / lambda
    hi <- lo
    while (excess(hi) < 0) {
        lo <- hi
        hi <- 2 * hi
    }
    stats::uniroot(excess, c(lo, hi), tol = 1e-6 * lo)$root
}
