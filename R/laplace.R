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
    N <- spec$N
    if (length(start) > dense_limit && glm_lp(spec)) {
        lap <- diagonal_laplace(spec, start)
        lap$seconds <- proc.time()[["elapsed"]] - t0
        if (!is.null(run$cache)) run$cache$laplace <- lap
        return(lap)
    }
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

## the dense curvature H of a Laplace approximation, which a rule with a
## D x D mass matrix or preconditioner needs; beyond dense_limit parameters
## there is none, and the message says what to use instead
dense_curvature <- function(lap, what) {
    if (!is.null(lap$H)) return(lap$H)
    stop(sprintf(paste("%s keeps a %s x %s matrix, too large for this model's %s parameters:",
                       "use sgld() or sgldcv(), which sample in the curvature's diagonal beyond",
                       "%d parameters"),
                 what, big_count(length(lap$mode)), big_count(length(lap$mode)),
                 big_count(length(lap$mode)), dense_limit), call. = FALSE)
}

## the GLMs with a linear predictor, whose curvature is a weighted sum over
## the rows (the engine's models)
glm_lp <- function(spec) {
    entry <- engine_entry(spec$model)
    !is.null(entry) && entry$offset
}

## Beyond dense_limit parameters (a wide, often sparse design: D up to
## 10^5 and more) a GLM's Laplace approximation keeps no D x D matrix: the
## mode by L-BFGS (first on up to `warm_rows` evenly spaced rows, then on
## all; each evaluation one O(stored entries) pass in C), the curvature's
## diagonal sum_i w_i h_i u_ij^2 + the prior's (h_i = -d^2 l_i / d eta_i^2
## at the mode, src/data.c's column sums), and products with the full
## curvature, H v = sum_i w_i h_i u_i (u_i' v) + the prior's, for the
## stiffness of the diagonal metric.  H and U are NULL.
diagonal_laplace <- function(spec, start) {
    N <- spec$N
    lbfgs <- function(post, start, maxit) {
        last <- NULL                          # (optim asks for the value and the gradient apart)
        at <- function(th) {
            if (is.null(last) || !identical(last$theta, th)) last <<- c(post(th), list(theta = th))
            last
        }
        fit <- stats::optim(start, function(th) -at(th)$value, function(th) -at(th)$grad,
                            method = "L-BFGS-B", control = list(maxit = maxit, factr = 1e5))
        list(mode = fit$par, evals = fit$counts[[1L]])
    }
    check <- subset_log_posterior(spec, N)(start)
    if (!is.finite(check$value) || !all(is.finite(check$grad)))
        stop("the log posterior is not finite at the start: check the data and init",
             call. = FALSE)
    evals <- 0L
    if (N > 2L * warm_rows) {
        warm <- lbfgs(subset_log_posterior(subset_spec(spec, warm_rows), N), start, 500L)
        start <- warm$mode
        evals <- warm$evals
    }
    full <- lbfgs(subset_log_posterior(spec, N), start, 1000L)
    mode <- full$mode
    at_mode <- .Call(C_sgfs_model_loglik, spec, mode)
    prior <- log_prior(mode, spec)
    h <- row_curvature(spec, mode)
    diag_h <- c(.Call(C_sgfs_data_col_wss, spec, h$beta), h$aux) + prior$curvature
    list(mode = mode, H = NULL, U = NULL, scales = sqrt(diag_h),
         hess_times = function(v) glm_hess_times(spec, mode, h, v),
         lik_grad = at_mode$grad, log_post = at_mode$loglik + prior$value,
         steps = evals + full$evals)
}

## the rows' curvature -d^2 l_i / d eta_i^2 (times their weights) at theta,
## and for a model with a sampled coordinate a after beta (gaussian's log
## sigma, negative binomial's log phi) that coordinate's curvature
## -sum_i w_i d^2 l_i / da^2 (`aux`) and the rows' -w_i d^2 l_i / d eta_i da
## (`cross`: the cross terms with beta, left out of the diagonal and kept in
## glm_hess_times), from the engine's model (row_derivs)
row_curvature <- function(spec, theta) {
    d <- row_derivs(spec, theta)
    list(beta = d$d2, aux = d$aux, cross = d$cross)
}

## the engine model's row_derivs at theta, each row's linear predictor
## moved by `shift` (one number, one per row, or an N x k matrix: then d1,
## d2 and cross are N x k, one column a shift, and aux k values); for a
## categorical() model, class c's predictor alone (its line's derivatives)
row_derivs <- function(spec, theta, shift = 0, class = 0L) {
    storage.mode(shift) <- "double"
    .Call(C_sgfs_row_derivs, spec, as.double(theta), shift, as.integer(class))
}

## H v for a GLM's full curvature at the mode (h from row_curvature()):
## sum_i h_i u_i (u_i' v) plus the prior's curvature times v (and the block
## of a sampled coordinate after beta)
glm_hess_times <- function(spec, mode, h, v) {
    P <- spec$P
    out <- .Call(C_sgfs_data_hess_times, spec, h$beta, as.double(v))
    if (!is.null(h$aux)) {
        cross <- .Call(C_sgfs_data_xtr, spec, h$cross)
        out <- c(out + cross * v[P + 1L], sum(cross * v[seq_len(P)]) + h$aux * v[P + 1L])
    }
    out + log_prior(mode, spec)$curvature * v
}

## The metric the engine takes (spec$metric): U, or the scales
metric_factor <- function(lap) if (is.null(lap$U)) lap$scales else lap$U

## ... and its spec elements: with a diagonal metric, its low-rank part
metric_spec <- function(lap, lowrank = NULL)
    c(list(metric = metric_factor(lap)),
      if (!is.null(lowrank)) list(metric_vectors = lowrank$vectors, metric_values = lowrank$values))

## The curvature in the diagonal metric's coordinates, A v = S^-1 H S^-1 v
## (S = diag(scales)), as products
whitened_hess_times <- function(lap) {
    s <- lap$scales
    times <- if (!is.null(lap$H)) function(v) drop(lap$H %*% v) else lap$hess_times
    function(v) times(v / s) / s
}

## The low-rank part of a diagonal metric (src/metric.c): the eigenvectors V
## of A = S^-1 H S^-1 whose eigenvalues lambda are far from 1 (above `far`
## or below 1 / far), at most `max_rank` of them, the farthest (in log
## lambda) first, or NULL if none is.  (Each costs the sampler 4 D
## multiply-adds an iteration, against its D normal deviates' 2 uniforms
## and a quantile each: a few are worth it when they change the step or
## the slowest direction by a factor `far`, below.)  The metric S C^2 S, C = I + V
## (Lambda^(1/2) - I) V', then agrees with H on those directions and with
## the diagonal elsewhere, and its coordinates' curvature C^-1 A C^-1 loses
## those eigenvalues for 1.  Why: a wide design whose rows each hold about
## the same number of features (bag-of-words, one-hot blocks) makes the
## intercept nearly a sum of the other columns: in a simulated sparse
## logistic regression (10^5 rows, 9,447 binary features, 20 a row) A had
## eigenvalues 112 and 0.004-0.32, and every other in 0.34-1.75.  The
## diagonal metric's step, set by the stiffest, was then 60 times smaller
## than the rest allowed, and the softest direction mixed 100 times slower
## still: chains that hardly moved.
## Found from whitened_spectrum(): a pair is kept if its residual
## |A v - lambda v| is below a quarter of min(lambda, 1); `index` says
## which of the spectrum's pairs were.
lowrank_metric <- function(lap, max_rank = 16L, far = 3, spectrum = whitened_spectrum(lap)) {
    if (max_rank < 1L || is.null(spectrum)) return(NULL)
    lambda <- spectrum$values
    resid <- spectrum$resid
    keep <- which((lambda > far | lambda < 1 / far) & lambda > 0 & resid < pmin(lambda, 1) / 4)
    keep <- keep[order(abs(log(lambda[keep])), decreasing = TRUE)][seq_len(min(length(keep), max_rank))]
    ## a side is worth its cost only where its outliers stand `far` beyond
    ## the rest: the stiffest left (the largest Ritz value not kept, a lower
    ## bound) at most 1 / far of the stiffest, the softest left at least far
    ## times the softest (a continuum at the top, 4.5-8.6 on 10^5 rows with
    ## a random response, gains too little for 16 vectors' 60 % an iteration)
    rest <- setdiff(seq_along(lambda), keep)
    top <- keep[lambda[keep] > 1]
    if (length(top) && max(lambda[top]) < far * max(1, lambda[rest]))
        keep <- setdiff(keep, top)
    bottom <- keep[lambda[keep] < 1]
    if (length(bottom) && min(lambda[bottom]) * far > min(1, lambda[rest]))
        keep <- setdiff(keep, bottom)
    if (!length(keep)) return(NULL)
    list(vectors = spectrum$ritz(keep), values = lambda[keep], index = keep)
}

## The extreme eigenpairs of the whitened curvature A = S^-1 H S^-1:
## `steps` Lanczos steps with full reorthogonalisation (each one product
## H v: one pass over the data, C_sgfs_data_hess_times) from a fixed start
## (the user's random numbers are left alone); the extreme eigenvalues,
## well separated from the rest, converge first.  list(values (the Ritz
## values, decreasing), resid (|A v - lambda v| of each), ritz(k) (the
## Ritz vectors k, D x length(k))), or NULL for D < 2.
whitened_spectrum <- function(lap, steps = 60L) {
    times <- whitened_hess_times(lap)
    D <- length(lap$scales)
    m <- min(D - 1L, steps)
    if (m < 1L) return(NULL)
    Q <- matrix(0, D, m)
    a <- b <- numeric(m)
    q <- (seq_len(D) * 0.6180339887498949) %% 1 - 0.5       # (golden-ratio sequence)
    q <- q / sqrt(sum(q^2))
    for (k in seq_len(m)) {
        Q[, k] <- q
        w <- times(q)
        a[k] <- sum(w * q)
        Qk <- Q[, seq_len(k), drop = FALSE]
        for (pass in 1:2) w <- w - drop(Qk %*% crossprod(Qk, w))
        b[k] <- sqrt(sum(w^2))
        if (!(b[k] > 1e-10 * abs(a[k]))) {                   # an invariant subspace
            m <- k
            break
        }
        q <- w / b[k]
    }
    tri <- diag(a[seq_len(m)], m)                           # (the Lanczos tridiagonal)
    if (m > 1L) tri[cbind(1:(m - 1L), 2:m)] <- tri[cbind(2:m, 1:(m - 1L))] <- b[seq_len(m - 1L)]
    e <- eigen(tri, symmetric = TRUE)
    Q <- Q[, seq_len(m), drop = FALSE]
    list(values = e$values, resid = abs(b[m] * e$vectors[m, ]),
         ritz = function(k) Q %*% e$vectors[, k, drop = FALSE])
}

## the low-rank part's largest rank: sgfs_control(metric_rank), 16 by
## default (0: the diagonal alone, for comparisons; bench/bench_lowrank_metric.R)
metric_rank <- function() current_control()$metric_rank

## v <- C^p v for the rows of the matrix v (or a vector), C the low-rank
## part's factor I + V (Lambda^(p/2) - I) V' (p = 1, or -1 for its inverse)
lowrank_times <- function(lowrank, v, p = 1) {
    if (is.null(lowrank)) return(v)
    c <- lowrank$values^(p / 2) - 1
    if (!is.matrix(v)) return(v + drop(lowrank$vectors %*% (c * crossprod(lowrank$vectors, v))))
    v + ((v %*% lowrank$vectors) * rep(c, each = nrow(v))) %*% t(lowrank$vectors)
}

## the rows of `scores` (gradients) in the metric's coordinates, U'^-1 g
metric_scores <- function(m, scores) {
    lap <- m$laplace
    if (!is.null(lap$U)) return(t(backsolve(lap$U, t(scores), transpose = TRUE)))
    lowrank_times(m$lowrank, scores / rep(lap$scales, each = nrow(scores)), -1)
}

## The largest curvature in the metric's coordinates: 1 for the dense
## metric (exactly, at the mode), the largest eigenvalue of C^-1 A C^-1
## for the diagonal one (C = I without a low-rank part), which maps the
## low-rank part's eigenvalues to 1 and leaves the others: the largest of
## 1 (with a low-rank part) and the Ritz values not kept.  (60 Lanczos steps
## find the top of the spectrum better than the 50 steps of power iteration
## that took as long before; both approach it from below.)
metric_stiffness <- function(lap, lowrank = NULL, spectrum = whitened_spectrum(lap)) {
    if (!is.null(lap$U)) return(1)
    rest <- setdiff(seq_along(spectrum$values), lowrank$index)
    max(c(if (!is.null(lowrank)) 1, spectrum$values[rest]))
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
## jump is half a sd.  GLMs (binomial, gaussian, poisson; logit or probit
## link) and categorical() models (categorical_reach()).
minibatch_strata <- function(run, lap, reach, cv, max_rows = 10L * run$spec$batch_size) {
    none <- list(rows = integer(0), shrink = 1)
    spec <- run$spec
    N <- spec$N
    n <- spec$batch_size
    entry <- engine_entry(spec$model)
    if (is.null(entry) ||
        N - n < 2L || !is.null(run$design$hs))  # (the metric is in the horseshoe's coordinates)
        return(none)
    k <- (N / n) * if (entry$several) categorical_reach(spec, lap, cv) else {
        ## (with a low-rank part, the diagonal's leverage: the rows' share of
        ## its few directions is left out of this heuristic)
        q <- .Call(C_sgfs_row_leverage, spec, metric_factor(lap), spec$P)
        sqrt(q) * residual_reach(spec, lap$mode, 2 * sqrt(q), cv)
    }
    jump <- reach * k
    if (!any(jump > 0.5)) return(none)
    order_k <- order(k, decreasing = TRUE)
    count <- sum(jump > 0.5)
    m <- min(count, max_rows, N - n - 1L)
    ## where max_rows would leave the step shrunk, more rows are held when
    ## that costs less per unit of step: the count m minimising the rows an
    ## iteration reads over the step it allows, (n + m) / shrink(m) (rare
    ## levels beyond max_rows: on 2,000 rows of a 1,500-level factor the
    ## step was 25 times smaller for want of 36 rows more; on Covertype's
    ## raw one-hot columns about 2,100 times for 1,381 more)
    more <- seq.int(m, min(count, N - n - 1L))
    if (length(more) > 1L) {
        allowed <- pmin(1, 0.5 / jump[order_k[more + 1L]])
        m <- more[which.min((n + more) / allowed)]
    }
    rest <- jump[order_k[m + 1L]]
    list(rows = sort(order_k[seq_len(m)]) - 1L, shrink = min(1, 0.5 / rest))
}

## A categorical() row's reach, as sqrt(q_i) |r_i| for a GLM's: its score is
## (y_i - p_i) (x) x_i over the K - 1 classes' blocks of P coefficients, of
## whitened length about sqrt(sum_c q_ic r_ic^2), q_ic the row's leverage in
## class c's block of the metric (its diagonal block of U: the conditional
## precision's, which over-states the leverage a little) and r_ic the
## largest residual of class c (or its change from the mode's) when that
## class's predictor alone moves by 2 sqrt(q_ic) (the model's derivatives
## along that line, src/eval.c).
categorical_reach <- function(spec, lap, cv) {
    P <- spec$P
    U <- metric_factor(lap)
    total <- 0
    for (c in seq_len(spec$mpar[1L] - 1L)) {
        b <- (c - 1L) * P + seq_len(P)
        q <- .Call(C_sgfs_row_leverage, spec,
                   if (is.matrix(U)) U[b, b, drop = FALSE] else U[b], P)
        r <- residual_reach(spec, lap$mode, 2 * sqrt(q), cv, class = c)
        total <- total + q * r^2
    }
    sqrt(total)
}

## the largest residual |r_i| (cv = FALSE) or change of residual from the
## mode (cv = TRUE) when row i's linear predictor (or class `class`'s)
## moves by `move` either way from the mode's, r_i = w_i dl_i / d eta_i the
## engine model's (binomial w (y - p), gaussian w (y - eta) / sigma^2,
## poisson w (y - mu), whose change from the mode's, mu (exp(move) - 1),
## grows without bound: the move is capped at 700, where exp() would
## overflow; such a row's reach is huge anyway, and it is held): one pass
## over the rows for the two or three shifts.  A row's prior weight w_i
## multiplies its residual, hence its jump (a gaussian row's precision).
residual_reach <- function(spec, theta, move, cv, class = 0L) {
    move <- pmin(move, 700)
    shifts <- if (cv) cbind(move, -move, 0) else cbind(move, -move)
    r <- row_derivs(spec, theta, shifts, class)$d1
    if (cv) r <- r[, 1:2] - r[, 3]
    pmax(abs(r[, 1]), abs(r[, 2]))
}

## `chains` starting points: the mode plus draws from the Laplace
## approximation widened `widen` times (a chain then shows within its
## burn-in whether it forgets its start), from the user's RNG stream
## (in the metric's coordinates, with its low-rank part if it has one)
dispersed_starts <- function(lap, chains, widen = 2, lowrank = NULL) {
    D <- length(lap$mode)
    lapply(seq_len(chains), function(k) {
        z <- widen * stats::rnorm(D)
        lap$mode + if (is.null(lap$U)) lowrank_times(lowrank, z, -1) / lap$scales
                   else backsolve(lap$U, z)
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
    lowrank <- NULL
    lambda <- 1
    if (is.null(lap$U)) {              # (one Lanczos run for both, when neither is cached)
        spectrum <- NULL
        whitened <- function() {
            if (is.null(spectrum)) spectrum <<- whitened_spectrum(lap)
            spectrum
        }
        lowrank <- cached(run, "lowrank", function()
            lowrank_metric(lap, max_rank = metric_rank(), spectrum = whitened()))
        lambda <- cached(run, "stiffness", function() metric_stiffness(lap, lowrank, whitened()))
    }
    list(spec = metric_spec(lap, lowrank), lambda = lambda,
         laplace = lap, lowrank = lowrank,
         type = if (!is.null(lap$U)) "dense"
                else if (is.null(lowrank)) "diagonal"
                else sprintf("diagonal and %d eigenvector%s", length(lowrank$values),
                             if (length(lowrank$values) > 1L) "s" else ""))
}

## run$cache's element `name`, made by make() the first time (no cache: made
## each time); cached_value() only what is there (NULL if nothing)
cached <- function(run, name, make) {
    if (is.null(run$cache)) return(make())
    if (!exists(name, envir = run$cache, inherits = FALSE)) assign(name, list(make()), envir = run$cache)
    cached_value(run, name)
}
cached_value <- function(run, name) {
    if (is.null(run$cache) || !exists(name, envir = run$cache, inherits = FALSE)) return(NULL)
    get(name, envir = run$cache, inherits = FALSE)[[1L]]
}

check_metric <- function(metric) {
    if (is.null(metric)) return(NULL)
    choose_arg(metric, c("mode", "identity"), "metric")
}

## the metric's description in a fit's settings
metric_type <- function(m) if (is.null(m)) "identity" else paste(m$type, "(curvature at the mode)")
