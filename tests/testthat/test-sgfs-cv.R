## sgfs() and osgfs() with control variates at the mode (SGFS-CV,
## src/fisher.c; OSGFS-CV, R/samplers-osgfs.R) and, with every row in every
## batch, Metropolis adjusted (src/sampler_sgfs_mh.c): C chains against
## pure-R replays, and exactness on posteriors with known answers.

## SGFS-CV's rule in the whitened coordinates z, replayed (src/fisher.c,
## src/sgfs_blockdiag.c's robust rule with B = I + s I_t): the running mean
## of the Fisher rows' remainders' covariance until burn-in's end (restarted
## at `restart`), B's factor refreshed when the count has grown by 5 %, the
## trust region during burn-in
sgfs_cv_update <- function(N, n, n_fixed, restart, burnin, fisher_rows, temperature = 1) {
    pool <- N - n_fixed
    s <- (1 + pool / n * (pool - n) / (pool - 1) - 1) * pool / temperature
    function(z, gz, glik, eps, t, state, Gz) {
        D <- length(z)
        if (is.null(state$I)) state <- list(I = matrix(0, D, D), count = 0, last = 0)
        if (t <= burnin) {
            if (t == restart) state$count <- min(state$count, ceiling(2 * D / (fisher_rows - 1)))
            state$count <- state$count + 1
            state$I <- state$I + (cov(Gz) - state$I) / state$count
            if (state$last == 0 || state$count <= state$last ||
                state$count >= 1.05 * state$last) {
                state$last <- state$count
                state$U <- chol(diag(D) + s * state$I)
            }
        }
        a2 <- 4 / eps
        y <- backsolve(state$U, gz, transpose = TRUE) + sqrt(temperature * a2) * engine_rnorm(D)
        q <- 4 * sum(y^2) / (1 + a2)
        early <- t <= burnin || t * (fisher_rows - 1) < 2 * D
        shrink <- if (early && q > 4 * D) sqrt(4 * D / q) else 1
        list(z = z + 2 * shrink * backsolve(state$U, y) / (1 + a2), state = state)
    }
}

cv_fit <- function(p, seed, n_iter = 60L, burnin = 20L, ...) {
    set.seed(seed)
    fit <- quiet(sgfs(p$x, p$y, family = p$family, prior = normal(0, 1), batch_size = 10L,
                      n_iter = n_iter, burnin = burnin, standardize = FALSE, progress = FALSE,
                      init = c(0, 0, 0), ...))
    list(draws = unname(sgfs:::all_draws(fit)), info = attr(fit, "sgfit"))
}

test_that("SGFS-CV: the C chain equals the R replay (logistic; before and after burn-in)", {
    p <- ref_problem(N = 200)
    a <- cv_fit(p, 11)
    s <- a$info$spec
    expect_true(a$info$settings$control_variates)
    expect_identical(s$sampler, "sgfs_full")
    expect_true(is.matrix(s$metric))
    m <- a$info$settings$fisher_rows
    expect_lt(m, 10L)                               # the shuffle of the Fisher rows is replayed
    up <- sgfs_cv_update(200, 10, length(s$fixed), s$spar[["restart"]], 20L, m)
    set.seed(11)
    ref <- r_chain_metric(p, 10L, 60L, 4 / a$info$settings$alpha^2, s, c(0, 0, 0),
                          centre = s$centre, update = up, fisher_rows = m, scores_until = 20L)
    expect_equal(a$draws, ref[-(1:20), ], tolerance = 1e-10)
    ## alpha = 3 and every row a Fisher row
    b <- cv_fit(p, 12, alpha = 3, fisher_rows = 10L)
    s <- b$info$spec
    up <- sgfs_cv_update(200, 10, length(s$fixed), s$spar[["restart"]], 20L, 10L)
    set.seed(12)
    ref <- r_chain_metric(p, 10L, 60L, 4 / 9, s, c(0, 0, 0), centre = s$centre, update = up,
                          fisher_rows = 10L, scores_until = 20L)
    expect_equal(b$draws, ref[-(1:20), ], tolerance = 1e-10)
})

test_that("SGFS-CV with held rows and a sampled sigma equals the R replay", {
    p <- ref_problem(gaussian(), N = 200)
    p$x[3, ] <- c(40, -30)            # an outlying row, which every minibatch must hold
    p$X[3, -1] <- p$x[3, ]
    set.seed(13)
    fit <- quiet(sgfs(p$x, p$y, family = gaussian(), prior = normal(0, 1), batch_size = 10L,
                      n_iter = 60L, burnin = 20L, standardize = FALSE, progress = FALSE,
                      init = c(0, 0, 0, 0)))
    info <- attr(fit, "sgfit")
    s <- info$spec
    expect_true(2L %in% s$fixed)
    expect_gt(info$settings$fixed_rows, 0L)
    m <- info$settings$fisher_rows
    up <- sgfs_cv_update(200, 10, length(s$fixed), s$spar[["restart"]], 20L, m)
    set.seed(13)
    ref <- r_chain_metric(p, 10L, 60L, 4 / info$settings$alpha^2, s, c(0, 0, 0, 0),
                          centre = s$centre, update = up, fisher_rows = m, scores_until = 20L)
    expect_equal(unname(sgfs:::all_draws(fit)), ref[-(1:20), ], tolerance = 1e-10)
})

test_that("SGFS with every row in every batch: the Metropolis-adjusted chain equals its R replay", {
    p <- ref_problem(N = 40)
    set.seed(21)
    fit <- quiet(sgfs(p$x, p$y, prior = normal(0, 1), n_iter = 50L, burnin = 20L,
                      standardize = FALSE, progress = FALSE, init = c(0, 0, 0), alpha = 1.5))
    info <- attr(fit, "sgfit")
    expect_identical(info$spec$sampler, "sgfs_mh")
    expect_identical(info$spec$batch_size, 40L)
    U <- matrix(info$spec$spar[-1L], 3L)
    prec <- prior_prec(3, p)
    post <- function(th) list(lp = sum(p$y * (p$X %*% th) - log1p(exp(p$X %*% th))) -
                                   sum(prec * th^2) / 2,
                              grad = colSums(r_scores(p, th, seq_len(40))) - prec * th)
    set.seed(21)
    theta <- c(0, 0, 0)
    cur <- post(theta)
    eps <- 4 / 1.5^2
    x <- log(min(1, 2 * eps / (eps + 4)))
    sum2 <- count <- 0
    out <- matrix(NA_real_, 50L, 3L)
    lq <- function(b, a, ga, h, v) -sum((b - a - h * ga)^2) / (2 * v)
    for (t in 1:50) {
        h <- min(1, exp(x))
        v <- h^2 * (2 / h - 1)
        z <- drop(U %*% theta)
        gz <- backsolve(U, cur$grad, transpose = TRUE)
        zn <- z + h * gz + sqrt(v) * engine_rnorm(3)
        thn <- backsolve(U, zn)
        new <- post(thn)
        gzn <- backsolve(U, new$grad, transpose = TRUE)
        lr <- new$lp - cur$lp + lq(z, zn, gzn, h, v) - lq(zn, z, gz, h, v)
        a <- if (lr >= 0) 1 else exp(lr)
        if (runif(1) < a) {
            theta <- thn
            cur <- new
        }
        if (t <= 20) {
            x <- x + (a - 0.7) / t^0.6
            if (t > 10) {
                sum2 <- sum2 + x
                count <- count + 1
            }
            if (t == 20) x <- sum2 / count
        }
        x <- min(x, 0)
        out[t, ] <- theta
    }
    expect_equal(unname(sgfs:::all_draws(fit)), out[-(1:20), ], tolerance = 1e-10)
})

test_that("Metropolis-adjusted SGFS is exact on a skewed posterior (quadrature)", {
    skip_on_cran()
    ## an intercept-only logistic regression of 12 rows, 2 of them ones,
    ## prior normal(0, 2.5): a skewed posterior whose mean and sd come from
    ## quadrature
    y <- c(1, 1, rep(0, 10))
    logpost <- function(b) sum(dbinom(y, 1, plogis(b), log = TRUE)) + dnorm(b, 0, 2.5, log = TRUE)
    grid <- seq(-12, 6, length.out = 20001)
    w <- exp(vapply(grid, logpost, 0) - max(vapply(grid, logpost, 0)))
    w <- w / sum(w)
    mu <- sum(w * grid)
    sdv <- sqrt(sum(w * (grid - mu)^2))
    set.seed(31)
    fit <- sgfs(y ~ 1, data = data.frame(y = y), prior_intercept = normal(0, 2.5),
                n_iter = 40000L, progress = FALSE)
    d <- sgfs:::all_draws(fit)[, 1L]
    ess <- coda::effectiveSize(d)
    expect_gt(ess, 10000)
    ## |z| <= 4 in Monte Carlo standard errors (the variance's: sd^2 sqrt(2 / ESS))
    expect_lt(abs(mean(d) - mu) / (sdv / sqrt(ess)), 4)
    expect_lt(abs(var(d) - sdv^2) / (sdv^2 * sqrt(2 / ess) * 1.5), 4)
    expect_gt(sgfs:::acceptance_rate(attr(fit, "sgfit")), 0.5)
})

test_that("SGFS-CV is stationary at the exact Gaussian posterior (conjugate model, minibatches)", {
    skip_on_cran()
    cd <- conjugate_data()
    set.seed(32)
    fit <- sgfs(cd$x, cd$y, family = gaussian(), sigma = cd$sigma, prior = normal(0, cd$s0),
                standardize = FALSE, progress = FALSE, n_iter = 20000L, batch_size = 100L)
    info <- attr(fit, "sgfit")
    expect_true(info$settings$control_variates)
    expect_lt(info$spec$batch_size, info$spec$N)
    ## (a Gaussian with a known sigma: the control variates are exact, every
    ## iterate a fresh draw at alpha = 1)
    expect_gt(min(coda::effectiveSize(fit)), 10000)
    expect_close_to_exact(fit, cd, mean_tol = 0.05, var_tol = 0.06)
})

test_that("sgfs()'s control_variates and target_accept arguments are checked", {
    p <- ref_problem(N = 40)
    expect_error(sgfs(p$x, p$y, control_variates = NA), "control_variates")
    expect_error(sgfs(p$x, p$y, control_variates = TRUE, robust = FALSE), "control_variates")
    expect_error(sgfs(p$x, p$y, target_accept = 1.5, progress = FALSE), "target_accept")
    expect_error(sgfs(p$x, p$y, alpha = 0, progress = FALSE), "alpha")
    set.seed(1)
    x <- matrix(rnorm(80), 40, 2)
    expect_error(sgfs(x, rbinom(40, 1, 0.5), model = mlp(3), control_variates = TRUE),
                 "control_variates")
    ## the rule without control variates stays the default where there are none,
    ## and is chosen by control_variates = FALSE
    fit <- quiet(sgfs(p$x, p$y, control_variates = FALSE, n_iter = 50L, progress = FALSE))
    expect_false(isTRUE(attr(fit, "sgfit")$settings$control_variates))
    expect_identical(attr(fit, "sgfit")$spec$sampler, "sgfs_full")
})

test_that("SGFS-CV without burn-in starts with B = I (no noise measured) and runs", {
    set.seed(5)
    N <- 20000L
    x <- matrix(rnorm(2 * N), N)
    y <- rbinom(N, 1, plogis(drop(x %*% c(1, -0.5))))
    fit <- quiet(sgfs(x, y, n_iter = 50L, burnin = 0L, progress = FALSE))
    info <- attr(fit, "sgfit")
    expect_true(info$settings$control_variates)
    expect_true(all(is.finite(as.matrix(fit))))
})

test_that("OSGFS-CV: the C chain equals the R replay (held rows; logistic, gaussian with sigma)", {
    for (fam in list(binomial(), gaussian())) {
        p <- ref_problem(fam, N = 200)
        p$x[3, ] <- c(40, -30)         # an outlying row, which every minibatch must hold
        p$X[3, -1] <- p$x[3, ]
        D <- if (fam$family == "binomial") 3L else 4L
        set.seed(41)
        fit <- quiet(osgfs(p$x, p$y, family = fam, prior = normal(0, 1), batch_size = 10L,
                           n_iter = 40L, burnin = 0L, standardize = FALSE, progress = FALSE,
                           init = rep(0, D)))
        info <- attr(fit, "sgfit")
        s <- info$spec
        expect_identical(s$sampler, "osgfs")
        expect_true(info$settings$control_variates)
        expect_gt(length(s$fixed), 0L)
        expect_true(is.matrix(s$metric))
        A <- matrix(s$spar[seq_len(D^2)], D)
        R <- matrix(s$spar[-seq_len(D^2)], D)
        h <- info$settings$stepsize
        expect_equal(A, h * diag(D))
        up <- function(z, gz, glik, eps, t, state)
            list(z = z + drop(A %*% gz) + drop(R %*% engine_rnorm(D)), state = state)
        set.seed(41)                   # (the noise estimate leaves the user's stream alone)
        ref <- r_chain_metric(p, 10L, 40L, h, s, rep(0, D), centre = s$centre, update = up)
        expect_equal(unname(sgfs:::all_draws(fit)), ref, tolerance = 1e-10)
    }
})

test_that("OSGFS-CV's noise: the remainders' covariance, and a rule exact on a Gaussian", {
    ## sgfs_change_cov() is the covariance (divisor m) of the rows' own
    ## second-order score changes
    p <- ref_problem(poisson(), N = 60)
    run <- engine_spec(p$x, p$y, family = poisson(), batch_size = 7L)
    theta <- c(0.4, 0.3, -0.6)
    centre <- c(0.3, 0.5, -0.5)
    rows <- c(0:20, 33:59)
    r <- t(vapply(rows + 1L, function(i)
        model_eval(run$spec, theta, i, centre, second = TRUE)$change, double(3)))
    expect_equal(.Call(sgfs:::C_sgfs_change_cov, run$spec, theta, centre, as.integer(rows)),
                 cov(r) * (nrow(r) - 1) / nrow(r), tolerance = 1e-10)
    ## the rule: (1 - h)^2 T + h^2 S + R R' = T I for every step up to the
    ## largest with R R' >= 0, which is 2 / (1 + lambda_max(S / T)), at most 1
    set.seed(42)
    B <- matrix(rnorm(16), 4)
    for (S in list(crossprod(B) / 40, crossprod(B) * 2, matrix(0, 4, 4)))
        for (temperature in c(1, 0.3)) {
            big <- sgfs:::osgfs_cv_rule(S, NULL, temperature)
            lam <- max(eigen(S / temperature, only.values = TRUE)$values)
            expect_equal(big$eps, min(1, 2 / (1 + lam)))
            for (h in c(big$eps, big$eps / 3)) {
                rule <- sgfs:::osgfs_cv_rule(S, h, temperature)
                expect_equal((1 - h)^2 * temperature * diag(4) + h^2 * S + tcrossprod(rule$R),
                             temperature * diag(4), tolerance = 1e-8)
                expect_equal(rule$excess, 0)
            }
        }
    over <- sgfs:::osgfs_cv_rule(crossprod(B) * 2, 1, 1)
    expect_gt(over$excess, 0)
    expect_equal(sgfs:::osgfs_cv_rule(crossprod(B) * 2, 0.1, 1, limit = 0.05)$eps_max, 0.05)
})

test_that("OSGFS-CV samples a logistic posterior in minibatches, and its defaults are exact on small data", {
    skip_on_cran()
    ref <- pima_reference()
    d <- pima_data()
    set.seed(43)
    fit <- osgfs(d$x, d$y, prior = normal(0, 1), batch_size = 20L, n_iter = 40000L,
                 progress = FALSE)
    info <- attr(fit, "sgfit")
    expect_true(info$settings$control_variates)
    ess <- min(coda::effectiveSize(fit))
    expect_gt(ess, 5000)
    z <- (coef(fit) - ref$mean) / sqrt(diag(ref$cov))
    expect_lt(max(abs(z)), 4 / sqrt(ess) + 0.05)
    expect_lt(max(abs(sqrt(diag(vcov(fit)) / diag(ref$cov)) - 1)), 0.06)
    ## every row in every batch (the default on 200 rows): the Metropolis-
    ## adjusted step
    set.seed(44)
    full <- osgfs(d$x, d$y, prior = normal(0, 1), n_iter = 20000L, progress = FALSE)
    expect_identical(attr(full, "sgfit")$spec$sampler, "sgfs_mh")
    expect_output(print(full), "OSGFS, every row in every batch, Metropolis adjusted")
    ess <- min(coda::effectiveSize(full))
    z <- (coef(full) - ref$mean) / sqrt(diag(ref$cov))
    expect_lt(max(abs(z)), 4 / sqrt(ess) + 0.02)
    expect_lt(max(abs(sqrt(diag(vcov(full)) / diag(ref$cov)) - 1)), 4 / sqrt(2 * ess) + 0.02)
})

test_that("OSGFS-CV leaves a separated level's line out of its noise estimate", {
    set.seed(45)
    N <- 2000
    x <- cbind(x = rnorm(N), s = rep(c(1, 0), c(30, N - 30)))
    y <- rbinom(N, 1, plogis(0.5 * x[, "x"]))
    y[1:30] <- 0
    ## (its rows not held: held, they would leave no remainder along the line)
    fit <- quiet(osgfs(x, y, batch_size = 20L, n_iter = 20L, progress = FALSE,
                       stratify = FALSE))
    info <- attr(fit, "sgfit")
    s <- info$spec
    expect_equal(info$settings$separated$level, "s")
    expect_equal(info$settings$fixed_rows, 0L)
    D <- 3L
    R <- matrix(s$spar[-seq_len(D^2)], D)
    h <- info$settings$stepsize
    ## along the line (in z = U theta) the injected noise is the full
    ## Langevin noise 2h - h^2: no minibatch noise is subtracted there (the
    ## level's rows' remainders, unprojected, set h to 0.03 here)
    v <- drop(s$metric %*% s$separated_dir)
    v <- v / sqrt(sum(v^2))
    expect_equal(drop(crossprod(v, tcrossprod(R) %*% v)), 2 * h - h^2, tolerance = 1e-8)
    ## off it, less
    w <- qr.Q(qr(cbind(v, diag(D))))[, 2:3]
    expect_true(all(diag(crossprod(w, tcrossprod(R) %*% w)) < 2 * h - h^2))
})
