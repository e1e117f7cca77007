## Small deterministic data sets and pure-R references shared by the tests.

## Conjugate Gaussian linear model with known sigma: data and exact posterior
## (algorithms vignette 3.3) for prior N(0, s0^2 I) on every coefficient.
conjugate_data <- function(N = 10000, D = 10, sigma = 1, s0 = 1, seed = 1) {
    withr::with_seed(seed, {
        x <- matrix(rnorm(N * (D - 1)), N, D - 1)
        colnames(x) <- paste0("x", seq_len(D - 1))
        beta <- c(0.5, rnorm(D - 1, sd = 0.5))
        y <- drop(cbind(1, x) %*% beta + sigma * rnorm(N))
    })
    X <- cbind(1, x)
    prec <- crossprod(X) / sigma^2 + diag(1 / s0^2, D)
    cov <- solve(prec)
    list(x = x, y = y, sigma = sigma, s0 = s0,
         mean = drop(cov %*% crossprod(X, y)) / sigma^2, cov = cov)
}

## Pima Indians diabetes (MASS), all 532 women, predictors standardised
pima_data <- function() {
    pima <- rbind(MASS::Pima.tr, MASS::Pima.te)
    x <- scale(as.matrix(pima[, 1:7]))
    attributes(x) <- attributes(x)[c("dim", "dimnames")]
    list(x = x, y = as.integer(pima$type == "Yes"))
}

## Full-data MALA (algorithms vignette 2.2) for logistic regression with a
## N(0, s0^2) prior on every coefficient, preconditioned by the Laplace
## covariance C: proposal theta + (h/2) C grad + sqrt(h) chol(C)' xi.
logistic_mala <- function(x, y, s0 = 1, n_iter = 40000, burnin = 2000, h = 1.5,
                          seed = 1) {
    X <- cbind(1, x)
    logpost <- function(b) {
        eta <- drop(X %*% b)
        sum(y * eta - log1p(exp(-abs(eta))) - pmax(eta, 0)) - sum(b^2) / (2 * s0^2)
    }
    grad <- function(b) drop(crossprod(X, y - plogis(drop(X %*% b)))) - b / s0^2
    mode <- optim(double(ncol(X)), function(b) -logpost(b), function(b) -grad(b),
                  method = "BFGS", control = list(reltol = 1e-12, maxit = 1000))$par
    p <- plogis(drop(X %*% mode))
    C <- solve(crossprod(X * sqrt(p * (1 - p))) + diag(1 / s0^2, ncol(X)))
    R <- chol(C)
    Ci <- solve(C)
    out <- matrix(NA_real_, n_iter, ncol(X))
    withr::with_seed(seed, {
        b <- mode; lb <- logpost(b); gb <- grad(b)
        acc <- 0
        for (t in seq_len(n_iter + burnin)) {
            m <- b + h / 2 * drop(C %*% gb)
            prop <- m + sqrt(h) * drop(crossprod(R, rnorm(length(b))))
            lp <- logpost(prop); gp <- grad(prop)
            mb <- prop + h / 2 * drop(C %*% gp)
            q_fwd <- -sum((prop - m) * drop(Ci %*% (prop - m))) / (2 * h)
            q_bwd <- -sum((b - mb) * drop(Ci %*% (b - mb))) / (2 * h)
            if (log(runif(1)) < lp - lb + q_bwd - q_fwd) {
                b <- prop; lb <- lp; gb <- gp
                if (t > burnin) acc <- acc + 1
            }
            if (t > burnin) out[t - burnin, ] <- b
        }
    })
    list(draws = out, acceptance = acc / n_iter, mean = colMeans(out),
         cov = cov(out) * (n_iter - 1) / n_iter)
}

## The Pima reference posterior: two independent MALA runs pooled (computed
## once per test session).
pima_reference <- local({
    cache <- NULL
    function() {
        if (is.null(cache)) {
            d <- pima_data()
            r1 <- logistic_mala(d$x, d$y, seed = 11)
            r2 <- logistic_mala(d$x, d$y, seed = 22)
            pooled <- rbind(r1$draws, r2$draws)
            cache <<- list(runs = list(r1, r2), mean = colMeans(pooled),
                           cov = cov(pooled) * (nrow(pooled) - 1) / nrow(pooled))
        }
        cache
    }
})

## An engine spec built by the package's own front end (internal scale).
engine_spec <- function(x, y, family = binomial(), standardize = FALSE,
                        sigma = NULL, intercept = TRUE, prior = normal(0, 1),
                        batch_size = 10L, model = NULL, weights = NULL) {
    sgfs:::prepare_run(x, y, family, prior, NULL, batch_size, 10L, 0L, 1L, 1L, 1L,
                       NULL, standardize, FALSE, sigma, intercept, model, weights = weights)
}

model_eval <- function(spec, theta, idx, centre = NULL, second = FALSE) {
    .Call(sgfs:::C_sgfs_model_eval, spec, as.double(theta), as.integer(idx),
          if (!is.null(centre)) as.double(centre), second)
}

## R's replay of the engine's minibatch (Floyd's algorithm): for j = N-n,
## ..., N-1 draw t uniform on 0..j (sample.int(j + 1, 1) - 1); take t unless
## already taken, else j.  Returns 1-based indices in the engine's order.
r_minibatch <- function(N, n) {
    taken <- integer(0)
    for (j in (N - n):(N - 1)) {
        t <- sample.int(j + 1L, 1L) - 1L
        taken <- c(taken, if (t %in% taken) j else t)
    }
    taken + 1L
}

## the first m of a batch put in a uniformly random order over the batch,
## as the engine does for SGFS's Fisher rows when m < n (its partial
## Fisher-Yates shuffle, sgfs_minibatch_shuffle_front)
r_shuffle_front <- function(idx, m) {
    n <- length(idx)
    for (k in seq_len(min(m, n - 1L))) {
        r <- k - 1L + sample.int(n - k + 1L, 1L)
        idx[c(k, r)] <- idx[c(r, k)]
    }
    idx
}

## minibatches as windows (src/minibatch.c), replayed: a function(N, n)
## giving each iteration's k = n / width windows of `width` consecutive
## rows (1-based, wrapping around), their starts drawn `ahead` iterations
## before (the first call draws ahead iterations' starts, each call then
## one iteration's more)
r_windows <- function(ahead = 32L, width = NULL) {
    starts <- integer(0)
    ## one minibatch's starts: one uniform start, or k distinct blocks of
    ## the partition into blocks of m from a uniform offset (Floyd's draw)
    draw <- function(N, m, k) {
        if (k == 1L) return(sample.int(N, 1L) - 1L)
        o <- sample.int(N, 1L) - 1L
        (o + (r_minibatch(N %/% m, k) - 1L) * m) %% N
    }
    function(N, n) {
        m <- if (is.null(width)) n else width
        k <- n %/% m
        if (!length(starts)) starts <<- unlist(lapply(seq_len(ahead), function(i) draw(N, m, k)))
        s <- starts[seq_len(k)]
        starts <<- c(starts[-seq_len(k)], draw(N, m, k))
        unlist(lapply(seq_len(k), function(w) (s[w] + seq_len(m) - 1L) %% N + 1L))
    }
}

## the draws' means within mean_tol posterior sd of the exact ones and their
## variances within var_tol (relative), with enough effective draws for the
## Monte Carlo error to be at most a third of mean_tol
## the exact answer at temperature T: the posterior's mean, T times its covariance
temper <- function(exact, T) {
    exact$cov <- T * exact$cov
    exact
}

expect_close_to_exact <- function(fit, exact, mean_tol = 0.1, var_tol = 0.15,
                                  trace_tol = NULL) {
    d <- sgfs:::all_draws(fit)
    ess <- coda::effectiveSize(fit)
    expect_gt(min(ess), 9 / mean_tol^2)             # 3 MC sd <= mean tolerance
    sd_exact <- sqrt(diag(exact$cov))
    expect_lt(max(abs(colMeans(d) - exact$mean) / sd_exact), mean_tol)
    ratio <- diag(cov(d)) / diag(exact$cov)
    expect_lt(max(abs(ratio - 1)), var_tol)
    if (!is.null(trace_tol)) {
        ## overall scale of the covariance: mean eigenvalue of Sigma^-1 C
        whitened <- sum(diag(solve(exact$cov, cov(d)))) / ncol(d)
        expect_lt(abs(whitened - 1), trace_tol)
    }
}

## central finite differences of the C log-likelihood: the gradient, and the
## C scores against them
fd_grad <- function(spec, theta, idx, h = 1e-5) {
    vapply(seq_along(theta), function(j) {
        e <- replace(double(length(theta)), j, h)
        (model_eval(spec, theta + e, idx)$loglik -
             model_eval(spec, theta - e, idx)$loglik) / (2 * h)
    }, 0)
}

expect_scores_match_fd <- function(spec, theta, idx) {
    ev <- model_eval(spec, theta, idx)
    expect_equal(ev$grad, fd_grad(spec, theta, idx), tolerance = 1e-7)
    expect_equal(colSums(ev$scores), ev$grad, tolerance = 1e-12)
    per_example <- t(vapply(idx, function(i) fd_grad(spec, theta, i),
                            double(length(theta))))
    expect_equal(ev$scores, per_example, tolerance = 1e-7)
}

## a model's control variates (score_change) against its scores: first
## order the change of the score sum from the centre, second order plus the
## curvature at the centre (C_sgfs_model_curvature) times the move
expect_score_changes <- function(spec, theta, centre, idx) {
    ev <- model_eval(spec, theta, idx, centre)
    expect_equal(ev$change, ev$grad - model_eval(spec, centre, idx)$grad, tolerance = 1e-12)
    H <- .Call(sgfs:::C_sgfs_model_curvature, sgfs:::slice_rows(spec, idx), centre,
               FALSE)$neg_hessian
    ev2 <- model_eval(spec, theta, idx, centre, second = TRUE)
    expect_equal(ev2$change, ev$change + drop(H %*% (theta - centre)), tolerance = 1e-10)
}

## Gaussian linear model whose four predictors have pairwise correlation 0.8
## (N = 10,000, sigma = 1, prior N(0, 1)): the slopes' posterior is
## correlated (-0.3), not the intercept's; exact mean and covariance
correlated_data <- function() {
    withr::with_seed(5, {
        x <- matrix(rnorm(40000), 10000) %*% chol(0.2 * diag(4) + 0.8)
        y <- drop(cbind(1, x) %*% c(0.5, 1, -1, 0.5, 0)) + rnorm(10000)
    })
    X <- cbind(1, x)
    exact <- list(cov = solve(crossprod(X) + diag(5)))
    exact$mean <- drop(exact$cov %*% crossprod(X, y))
    list(x = x, y = y, exact = exact)
}

## a binary problem whose design is mostly zeros (one-hot columns of two
## factors, rare binary features, a mostly-zero amount) and one dense
## column, with counts, a gaussian response and classes on the same rows
## (test-sparse-data.R, test-design-file.R)
sparse_problem <- function(N = 300L, seed = 1L) {
    withr::with_seed(seed, {
        ## one-hot columns of two factors, rare binary features and a
        ## mostly-zero continuous one
        f <- sample(5L, N, replace = TRUE, prob = c(40, 25, 20, 10, 5))
        g <- sample(3L, N, replace = TRUE)
        x <- cbind(outer(f, 2:5, "==") + 0, outer(g, 2:3, "==") + 0,
                   rare = stats::rbinom(N, 1L, 0.05),
                   amount = stats::rexp(N) * stats::rbinom(N, 1L, 0.3),
                   dense = stats::rnorm(N))
        colnames(x) <- c(paste0("f", 2:5), paste0("g", 2:3), "rare", "amount", "dense")
        eta <- -0.5 + x %*% c(0.5, -0.5, 1, 0.3, 0.4, -0.4, 1, 0.6, 0.5)
        list(x = x, sparse = Matrix::Matrix(x, sparse = TRUE),
             y = stats::rbinom(N, 1L, stats::plogis(drop(eta))),
             count = stats::rpois(N, exp(0.3 * drop(eta))),
             z = drop(eta) + stats::rnorm(N),
             class = factor(sample(c("a", "b", "c"), N, replace = TRUE)))
    })
}

## the samplers that return draws (every one but sga()), by name
draw_samplers <- function()
    list(sgld = sgld, sgldcv = sgldcv, psgld = psgld, sghmc = sghmc, sgnht = sgnht,
         sgfs = sgfs, osgfs = osgfs, isgd = isgd, hmc = hmc, mala = mala)
