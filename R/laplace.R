## The posterior's Laplace approximation, computed once per call and shared
## by everything that needs a mode or a curvature: init = "map", SGLD-CV's
## centre, OSGFS, MALA/HMC's mass, the metric of the stochastic-gradient
## samplers (metric.c), the rows every minibatch holds, dispersed chain
## starts and the post-fit check of where the draws sit.
##
## The mode is found by Newton's method with the exact Hessian, accumulated
## over row blocks in C (dsyrk): first on up to `warm_rows` evenly spaced rows
## (their likelihood weighted N/m), whose mode is within a few posterior sd
## of the full one, then on all rows, where Newton converges in a few steps.
## Available for the GLMs (not for networks, whose modes are many, nor for
## custom models, whose Hessian is by finite differences).

warm_rows <- 50000L

laplace_available <- function(design) is.null(design$network) && is.null(design$custom)

## list(mode, H, U (H = U'U, or NULL beyond dense_limit parameters), scales
## (sqrt(diag(H))), lik_grad (the full-data score sum at the mode), log_post,
## steps, seconds), cached in run$cache
posterior_laplace <- function(run, start = run$theta0) {
    if (!is.null(run$cache$laplace)) return(run$cache$laplace)
    t0 <- proc.time()[["elapsed"]]
    spec <- run$spec
    N <- ncol(spec$xt)
    if (N > 2L * warm_rows)
        start <- newton_mode(subset_spec(spec, warm_rows), start, N = N, tol = 1e-3)$mode
    fit <- newton_mode(spec, start)
    H <- fit$curvature$H
    D <- length(fit$mode)
    lap <- list(mode = fit$mode, H = H,
                U = if (D <= dense_limit) chol(H),
                scales = sqrt(diag(H)),
                lik_grad = fit$curvature$lik_grad, log_post = fit$curvature$log_post,
                steps = fit$steps, seconds = proc.time()[["elapsed"]] - t0)
    if (!is.null(run$cache)) run$cache$laplace <- lap
    lap
}

## a dense metric (D x D Cholesky factor) up to this many parameters, a
## diagonal one beyond
dense_limit <- 500L

## The metric the engine takes (spec$metric): U, or the scales
metric_factor <- function(lap) if (is.null(lap$U)) lap$scales else lap$U

## The largest curvature in the metric's coordinates: 1 for the dense
## metric (exactly, at the mode), the largest eigenvalue of
## S^-1/2 H S^-1/2 for the diagonal one (by power iteration)
metric_stiffness <- function(lap, n_power = 50L) {
    if (!is.null(lap$U)) return(1)
    s <- lap$scales
    A <- lap$H / outer(s, s)
    v <- rep(1, nrow(A)) / sqrt(nrow(A))
    lambda <- 1
    for (k in seq_len(n_power)) {
        w <- drop(A %*% v)
        lambda <- sqrt(sum(w^2))
        v <- w / lambda
    }
    lambda
}

## Rows every minibatch holds (engine's spec$fixed, 0-based): in whitened
## coordinates a row i moves the gradient by about (N/n) h_i per posterior
## sd, h_i = w_i |U'^-1 x_i|^2 its leverage (w_i its curvature weight at the
## mode); a row with (N/n) h_i > 1 (a rare one-hot level, an outlying
## predictor) makes the minibatch gradient heavy-tailed, and SGLD-CV's
## whitened step of about 0.2 turns its rare appearances into jumps of many
## posterior sd.  Those rows, the most influential first and at most
## `max_rows`, are taken into every minibatch exactly (a stratified sample:
## the gradient stays unbiased).  GLMs with a linear predictor only.
influential_rows <- function(run, lap, max_rows = 2L * run$spec$batch_size) {
    spec <- run$spec
    N <- ncol(spec$xt)
    n <- spec$batch_size
    weight <- row_weights(run, lap$mode)
    if (is.null(weight) || N - n < 1L) return(integer(0))
    P <- nrow(spec$xt)
    q <- .Call(C_sgfs_row_leverage, spec, metric_factor(lap), P)
    h <- weight * q
    cut <- (N / n) * h > 1
    if (!any(cut)) return(integer(0))
    rows <- which(cut)
    keep <- min(length(rows), max_rows, N - n - 1L)
    rows <- rows[order(h[rows], decreasing = TRUE)][seq_len(keep)]
    sort(rows) - 1L
}

## the curvature weights w_i of the rows at theta (binomial: p(1 - p);
## gaussian: 1 / sigma^2), NULL for other models
row_weights <- function(run, theta) {
    spec <- run$spec
    model <- spec$model
    P <- nrow(spec$xt)
    if (!(model %in% c("logistic", "gaussian"))) return(NULL)
    if (model == "gaussian") {
        log_sigma <- if (length(theta) > P) theta[P + 1L] else spec$mpar[1L]
        return(rep(exp(-2 * log_sigma), ncol(spec$xt)))
    }
    p <- stats::plogis(drop(crossprod(spec$xt, theta[seq_len(P)])))
    p * (1 - p)
}

## `chains` starting points: the mode plus draws from the Laplace
## approximation widened `widen` times (a chain then shows within its
## burn-in whether it forgets its start), from the user's RNG stream
dispersed_starts <- function(lap, chains, widen = 2) {
    D <- length(lap$mode)
    lapply(seq_len(chains), function(k) {
        z <- widen * stats::rnorm(D)
        lap$mode + if (is.null(lap$U)) z / lap$scales else backsolve(lap$U, z)
    })
}

## The metric argument of the stochastic-gradient samplers: "mode" (the
## default for GLMs: the curvature at the mode, dense up to dense_limit
## parameters, diagonal beyond) or "identity" (the papers' rules, draw for
## draw).  Returns NULL for the identity, else list(spec = the engine's
## metric, lambda = the largest curvature in its coordinates, laplace).
sampler_metric <- function(metric, run) {
    available <- laplace_available(run$design)
    if (is.null(metric)) metric <- if (available) "mode" else "identity"
    metric <- choose_arg(metric, c("mode", "identity"), "metric")
    if (metric == "identity") return(NULL)
    if (!available)
        stop_arg("metric", "= \"mode\" needs the posterior's curvature at its mode, which ",
                 "is computed for GLMs only: use metric = \"identity\" for ",
                 if (is.null(run$design$network)) "a custom_model()" else "a network")
    lap <- posterior_laplace(run)
    list(spec = list(metric = metric_factor(lap)), lambda = metric_stiffness(lap),
         laplace = lap, type = if (is.null(lap$U)) "diagonal" else "dense")
}

check_metric <- function(metric) {
    if (is.null(metric)) return(NULL)
    choose_arg(metric, c("mode", "identity"), "metric")
}

## the metric's description in a fit's settings
metric_type <- function(m) if (is.null(m)) "identity" else paste(m$type, "(curvature at the mode)")
