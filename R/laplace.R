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
    if (!is.null(run$design$hs)) return(hs_laplace(run, start))   # R/horseshoe.R
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

## Rows every minibatch holds (engine's spec$fixed, 0-based), and the step
## they allow.  In the metric's coordinates a row i with design row x_i has
## length sqrt(q_i), q_i = |U'^-1 x_i|^2, and its score moves the gradient
## by (N/n) sqrt(q_i) |r_i| when it is drawn (r_i its residual; with control
## variates, the change of its residual from the centre).  A chain that
## moves 2 posterior sd along x_i changes the row's linear predictor by
## 2 sqrt(q_i); k_i is the largest such move of the gradient, and
## `reach` * k_i the move of the chain (in posterior sd) one appearance of
## the row causes (reach = eps / 2 for SGLD).  Rows of rare one-hot levels
## (q_i up to 1e5 on Covertype) or outlying predictors appear in few
## minibatches, each time with a jump of many posterior sd: a heavy-tailed
## noise that no small step averages out.  The rows whose jump exceeds half
## a posterior sd, the largest first and at most `max_rows`, are taken into
## every minibatch exactly (a stratified sample: the gradient stays
## unbiased); if some remain, `shrink` < 1 scales the step down until their
## jump is half a sd.  GLMs with a linear predictor (binomial, gaussian,
## poisson; logit or probit link).
minibatch_strata <- function(run, lap, reach, cv, max_rows = 10L * run$spec$batch_size) {
    none <- list(rows = integer(0), shrink = 1)
    spec <- run$spec
    N <- ncol(spec$xt)
    n <- spec$batch_size
    if (!(spec$model %in% c("logistic", "probit", "gaussian", "poisson")) || N - n < 2L ||
        !is.null(run$design$hs))               # (the metric is in the horseshoe's coordinates)
        return(none)
    P <- nrow(spec$xt)
    q <- .Call(C_sgfs_row_leverage, spec, metric_factor(lap), P)
    k <- (N / n) * sqrt(q) * residual_reach(spec, lap$mode, 2 * sqrt(q), cv)
    jump <- reach * k
    if (!any(jump > 0.5)) return(none)
    order_k <- order(k, decreasing = TRUE)
    m <- min(sum(jump > 0.5), max_rows, N - n - 1L)
    rest <- if (m < N) jump[order_k[m + 1L]] else 0
    list(rows = sort(order_k[seq_len(m)]) - 1L, shrink = min(1, 0.5 / rest))
}

## the largest residual |r_i| (cv = FALSE) or change of residual from the
## mode (cv = TRUE) when row i's linear predictor moves by `move` from the
## mode's: binomial r = y - p (logit), s lambda(s eta) (probit); gaussian r = (y - eta) / sigma^2; poisson
## r = y - mu, mu = exp(eta) (eta with the rows' offsets), whose change
## from the mode's, mu (exp(move) - 1), grows without bound (the move is
## capped at 700, where exp() would overflow: such a row's reach is huge
## anyway, and it is held).  A row's prior weight w_i (spec$weights)
## multiplies its residual, hence its jump (a gaussian row's precision).
residual_reach <- function(spec, theta, move, cv) {
    r <- residual_reach_unweighted(spec, theta, move, cv)
    if (is.null(spec$weights)) r else spec$weights * r
}

residual_reach_unweighted <- function(spec, theta, move, cv) {
    P <- nrow(spec$xt)
    eta <- drop(crossprod(spec$xt, theta[seq_len(P)]))
    if (!is.null(spec$offset)) eta <- eta + spec$offset
    if (spec$model == "probit") {
        r <- function(e) probit_residual(spec$y, e)
        r0 <- r(eta)
        up <- r(eta + move)
        down <- r(eta - move)
        return(if (cv) pmax(abs(up - r0), abs(down - r0)) else pmax(abs(up), abs(down)))
    }
    if (spec$model == "poisson") {
        mu <- exp(eta)
        up <- mu * exp(pmin(move, 700))
        down <- mu * exp(-move)
        return(if (cv) pmax(up - mu, mu - down) else pmax(abs(spec$y - up), abs(spec$y - down)))
    }
    if (spec$model == "gaussian") {
        log_sigma <- if (length(theta) > P) theta[P + 1L] else spec$mpar[1L]
        s2 <- exp(2 * log_sigma)
        return(if (cv) move / s2 else (abs(spec$y - eta) + move) / s2)
    }
    p <- stats::plogis(eta)
    up <- stats::plogis(eta + move)
    down <- stats::plogis(eta - move)
    if (cv) pmax(up - p, p - down) else pmax(abs(spec$y - up), abs(spec$y - down))
}

## the probit model's residual dl/deta = y lambda(eta) - (1 - y) lambda(-eta)
## (s lambda(s eta), s = 2y - 1, for y in {0, 1}), lambda the inverse Mills
## ratio (src/model_probit.c)
probit_residual <- function(y, eta) {
    mills <- function(z) exp(stats::dnorm(z, log = TRUE) - stats::pnorm(z, log.p = TRUE))
    ifelse(y == 0 | y == 1, (2 * y - 1) * mills((2 * y - 1) * eta),
           y * mills(eta) - (1 - y) * mills(-eta))
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
