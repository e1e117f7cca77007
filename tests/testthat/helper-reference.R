## Pure-R replays of the engine's driver, shared by the reference-chain tests:
## the same random numbers (minibatch draws, then the sampler's normals).

## a noise vector as the engine draws it (src/normal.c)
engine_rnorm <- sgfs:::engine_rnorm

## (offset: NULL, or the rows' offsets, p$offset, added to the linear
## predictor; weights: NULL, or the rows' prior weights, p$weights; cbind:
## a binomial response of 0 to 4 trials per row, p$y = cbind(s, f), whose
## replay reads the proportions p$yr and the weights p$w, trials times
## prior weights)
ref_problem <- function(family = binomial(), N = 50, seed = 8, offset = NULL, weights = NULL,
                        cbind = FALSE) {
    withr::with_seed(seed, {
        x <- matrix(rnorm(N * 2), N, 2)
        m <- if (cbind) sample(0:4, N, replace = TRUE) else 1
        y <- switch(family$family,
                    binomial = rbinom(N, m, plogis(x[, 1] - x[, 2])),
                    poisson = rpois(N, exp(0.3 + 0.5 * x[, 1] - 0.5 * x[, 2])),
                    1 + x[, 1] + rnorm(N))
    })
    yr <- NULL
    w <- weights
    if (cbind) {
        yr <- ifelse(m > 0, y / pmax(m, 1), 0)
        w <- if (is.null(weights)) m else weights * m
        y <- cbind(y, m - y)
    }
    list(x = x, y = y, X = cbind(1, x), family = family, offset = offset, weights = weights,
         yr = yr, w = w)
}

## per-example scores in R (n x D), for theta on the internal scale; each
## row's weighted by p$w (a gaussian row's weight a precision)
r_scores <- function(p, theta, idx) {
    X <- p$X[idx, , drop = FALSE]
    off <- if (is.null(p$offset)) 0 else p$offset[idx]
    w <- if (is.null(p$w)) 1 else p$w[idx]
    y <- if (is.null(p$yr)) p$y[idx] else p$yr[idx]
    if (p$family$family == "binomial" && p$family$link == "probit") {
        eta <- drop(X %*% theta) + off
        mills <- function(z) dnorm(z) / pnorm(z)
        return(w * (y * mills(eta) - (1 - y) * mills(-eta)) * X)
    }
    if (p$family$family == "binomial")
        return(w * (y - plogis(drop(X %*% theta) + off)) * X)
    if (p$family$family == "poisson")
        return(w * (y - exp(drop(X %*% theta) + off)) * X)
    beta <- theta[seq_len(ncol(X))]
    s2 <- exp(2 * theta[length(theta)])
    r <- y - drop(X %*% beta)
    cbind(w * r / s2 * X, w * r^2 / s2 - (w > 0))
}

## minus the Hessian of the examples' log-likelihood in R (D x D)
r_neg_hessian <- function(p, theta, idx) {
    X <- p$X[idx, , drop = FALSE]
    if (p$family$family == "binomial") {
        w <- plogis(drop(X %*% theta))
        return(crossprod(X * (w * (1 - w)), X))
    }
    s <- exp(-2 * theta[length(theta)])
    r <- p$y[idx] - drop(X %*% theta[seq_len(ncol(X))])
    rbind(cbind(s * crossprod(X), 2 * s * crossprod(X, r)),
          c(2 * s * crossprod(r, X), 2 * s * sum(r^2)))
}

## The driver in R: minibatch, gradient of the log posterior (prior normal(0, 1)
## on the coefficients, normal(0, 5) on log_sigma), step size, then the
## sampler's update.
prior_prec <- function(D, p) 1 / c(rep(1, ncol(p$X)), 5)[seq_len(D)]^2

## With a `centre`, the gradient has control variates (algorithms vignette 1.3).
r_chain <- function(p, D, n, n_iter, eps_at, update, theta0 = double(D),
                    centre = NULL, minibatch = r_minibatch) {
    prec <- prior_prec(D, p)
    N <- nrow(p$X)
    theta <- theta0
    state <- list()
    out <- matrix(NA_real_, n_iter, D)
    if (!is.null(centre)) full <- colSums(r_scores(p, centre, seq_len(N)))
    ## an SGFS update's Fisher rows (attribute "front", a function of D):
    ## when fewer than the batch, a random subset of it first
    front <- attr(update, "front")
    m <- if (!is.null(front)) front(D) else n
    for (t in seq_len(n_iter)) {
        idx <- minibatch(N, n)
        if (m < n) idx <- r_shuffle_front(idx, m)
        G <- r_scores(p, theta, idx)
        grad <- if (is.null(centre)) -prec * theta + N / n * colSums(G)
                else -prec * theta + full + N / n * colSums(G - r_scores(p, centre, idx))
        step <- update(theta, grad, G, eps_at(t), t, state, prec)
        theta <- step$theta
        state <- step$state
        out[t, ] <- theta
    }
    out
}

sgld_update <- function(theta, grad, G, eps, t, state, prec)
    list(theta = theta + eps / 2 * grad + sqrt(eps) * engine_rnorm(length(theta)), state = state)

## (a few dozen iterations from a far start: the fit may warn that its draws
## are not yet where the posterior's mass is, which is not what is tested)
quiet <- function(expr) suppressWarnings(expr)

## the chain from zero (unless `init` is given); samplers with a metric
## run the papers' rule (metric = "identity") unless told otherwise
c_chain <- function(fun, p, n, n_iter, init = NULL, ...) {
    args <- list(...)
    name <- deparse(substitute(fun))
    method <- utils::getS3method(name, "default", optional = TRUE, envir = asNamespace("sgfs"))
    if (!is.null(method) && "metric" %in% names(formals(method)) && is.null(args$metric))
        args$metric <- "identity"
    if (!is.null(method) && "stratify" %in% names(formals(method)) && is.null(args$stratify))
        args$stratify <- FALSE
    if (!is.null(method) && "robust" %in% names(formals(method)) && is.null(args$robust))
        args$robust <- FALSE
    if (!is.null(p$offset)) args$offset <- p$offset
    if (!is.null(p$weights)) args$weights <- p$weights
    fit <- quiet(do.call(fun, c(list(p$x, p$y, family = p$family, prior = normal(0, 1),
                                      batch_size = n, n_iter = n_iter, burnin = 0L,
                                      standardize = FALSE, progress = FALSE, init = init),
                                 args)))
    sgfs:::all_draws(fit)
}

## every minibatch and the clipped whitened gradient, replayed in R
## `update(z, gz, glik_z, eps, t, state)`: the rule in z (SGLD by default),
## glik_z the likelihood part of the whitened gradient; with `fisher_rows`
## m (SGFS-CV), until iteration `scores_until` the batch's first m rows are
## a random subset of it and `update` gets a seventh argument, their
## per-example remainders g_i(theta) - g_i(centre) + H_i (theta - centre),
## whitened and off the separated lines (m x D)
r_chain_metric <- function(p, n, n_iter, eps, spec, theta0, centre = NULL, update = NULL,
                           fisher_rows = NULL, scores_until = Inf) {
    D <- length(theta0)
    prec <- prior_prec(D, p)
    N <- nrow(p$X)
    ## (a diagonal metric with a low-rank part, src/metric.c, made dense:
    ## U = C S, C = I + V diag(lambda^(1/2) - 1) V')
    U <- spec$metric
    if (!is.matrix(U)) {
        V <- spec$metric_vectors
        C <- if (is.null(V)) diag(D)
             else diag(D) + V %*% diag(sqrt(spec$metric_values) - 1, ncol(V)) %*% t(V)
        U <- C %*% diag(U, D)
    }
    triangular <- all(U[lower.tri(U)] == 0)
    ut_solve <- function(g) if (triangular) backsolve(U, g, transpose = TRUE) else drop(solve(t(U), g))
    u_solve <- function(z) if (triangular) backsolve(U, z) else drop(solve(U, z))
    fixed <- if (is.null(spec$fixed)) integer(0) else spec$fixed + 1L
    pool <- setdiff(seq_len(N), fixed)
    w <- (N - length(fixed)) / n
    lik <- function(th, idx) if (length(idx)) colSums(r_scores(p, th, idx)) else 0
    ## second-order control variates: the minibatch's Hessian at the centre
    ## times theta - centre added, the pool's subtracted
    second <- !is.null(centre) && !is.null(spec$centre_hessian)
    if (second) {
        H_full <- r_neg_hessian(p, centre, seq_len(N))
        expect_equal(matrix(spec$centre_hessian, D), H_full, tolerance = 1e-8)
        H_pool <- H_full - if (length(fixed)) r_neg_hessian(p, centre, fixed) else 0
    }
    theta <- theta0
    z <- drop(U %*% theta)
    out <- matrix(NA_real_, n_iter, D)
    state <- list()
    ## separated levels (src/separated.c): the rule moves off their lines,
    ## projected in z onto the complement of span{U v_k}
    off_lines <- function(x) x
    if (!is.null(spec$separated_rows)) {
        B <- qr.Q(qr(U %*% matrix(spec$separated_dir, D)))
        off_lines <- function(x) drop(x - B %*% crossprod(B, x))
    }
    for (t in seq_len(n_iter)) {
        idx <- pool[r_minibatch(length(pool), n)]
        scores <- !is.null(fisher_rows) && t <= scores_until
        if (scores && fisher_rows < n) idx <- r_shuffle_front(idx, fisher_rows)
        Gz <- NULL
        if (scores) {
            Gz <- t(vapply(idx[seq_len(fisher_rows)], function(i)
                off_lines(ut_solve(r_scores(p, theta, i)[1L, ] - r_scores(p, centre, i)[1L, ] +
                                   drop(r_neg_hessian(p, centre, i) %*% (theta - centre)))),
                double(D)))
        }
        g <- if (is.null(centre)) w * lik(theta, idx) + lik(theta, fixed)
             else spec$centre_score + w * (lik(theta, idx) - lik(centre, idx)) +
                  lik(theta, fixed) - lik(centre, fixed)
        if (second)
            g <- g + w * drop(r_neg_hessian(p, centre, idx) %*% (theta - centre)) -
                drop(H_pool %*% (theta - centre))
        glik <- off_lines(ut_solve(g))
        g <- g - prec * theta
        gz <- off_lines(ut_solve(g))
        gz <- pmin(pmax(gz, -spec$drift_limit), spec$drift_limit)
        z_old <- z
        if (is.null(update)) {          # SGLD with the Leimkuhler-Matthews noise
            if (t == 1L) xi <- engine_rnorm(D)
            nxt <- engine_rnorm(D)
            z <- z + eps / 2 * gz + sqrt(eps) / 2 * (xi + nxt)
            xi <- nxt
        } else {
            step <- if (is.null(fisher_rows)) update(z, gz, glik, eps, t, state)
                    else update(z, gz, glik, eps, t, state, Gz)
            z <- step$z
            state <- step$state
        }
        z <- z_old + off_lines(z - z_old)
        theta <- u_solve(z)
        if (!is.null(spec$separated_rows) && t %% spec$separated_every == 0) {
            theta <- r_separated_update(p, theta, spec, prec)
            z <- drop(U %*% theta)
        }
        out[t, ] <- theta
    }
    out
}

## a 60-iteration chain of `fun` in the metric of the mode on problem p, from 0
metric_run <- function(p, fun, seed, ...) {
    set.seed(seed)
    fit <- quiet(fun(p$x, p$y, family = p$family, prior = normal(0, 1), batch_size = 10L,
                     n_iter = 60L, burnin = 0L, standardize = FALSE, progress = FALSE,
                     init = c(0, 0, 0), metric = "mode", ...))
    list(draws = unname(sgfs:::all_draws(fit)), info = attr(fit, "sgfit"))
}

## src/separated.c in R: for each separated level, a slice-sampling draw
## (stepping out, at most 20 steps, then shrinkage) of t along its line,
## with the engine's uniforms and exponential in the same order
r_separated_update <- function(p, theta, spec, prec) {
    K <- length(spec$separated_ptr) - 1L
    D <- length(theta)
    dirs <- matrix(spec$separated_dir, D)
    for (k in seq_len(K)) {
        rows <- spec$separated_rows[(spec$separated_ptr[k] + 1L):spec$separated_ptr[k + 1L]] + 1L
        v <- dirs[, k]
        w <- spec$separated_width[k]
        eta <- drop(p$X[rows, , drop = FALSE] %*% theta)
        y <- p$y[rows]
        f <- function(t) {
            e <- eta + t
            sum(y * e - ifelse(e > 0, e + log1p(exp(-e)), log1p(exp(e)))) -
                sum(prec * (theta + t * v)^2) / 2
        }
        logy <- f(0) - rexp(1)
        lo <- -w * runif(1)
        hi <- lo + w
        left <- floor(20 * runif(1))
        right <- 19 - left
        while (left > 0 && f(lo) > logy) {
            lo <- lo - w
            left <- left - 1
        }
        while (right > 0 && f(hi) > logy) {
            hi <- hi + w
            right <- right - 1
        }
        repeat {
            t <- lo + runif(1) * (hi - lo)
            if (f(t) > logy) break
            if (t < 0) lo <- t else hi <- t
        }
        theta <- theta + t * v
    }
    theta
}

## minus the Hessian of the log posterior at its mode (damped Newton in R), with
## the mode as attribute "mode"
r_mode_curvature <- function(p, D) {
    prec <- prior_prec(D, p)
    all <- seq_len(nrow(p$X))
    grad <- function(th) -prec * th + colSums(r_scores(p, th, all))
    theta <- double(D)
    for (k in 1:100) {         # Newton, the step halved until the gradient shrinks
        H <- r_neg_hessian(p, theta, all) + diag(prec, D)
        ev <- min(eigen(H, symmetric = TRUE, only.values = TRUE)$values)
        if (ev <= 0) H <- H + diag(1 - ev, D)
        g <- grad(theta)
        step <- drop(solve(H, g))
        while (sum(grad(theta + step)^2) > sum(g^2) && sum(step^2) > 1e-20) step <- step / 2
        theta <- theta + step
    }
    structure(r_neg_hessian(p, theta, all) + diag(prec, D), mode = theta)
}
