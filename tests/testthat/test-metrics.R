## error_curve() against a direct computation of Ahn et al.'s E1 and E2, and
## predictive_scores() against hand-computed scores.

test_that("error_curve() computes E1 and E2 of the running moments", {
    d <- pima_data()
    set.seed(4)
    fit <- sgfs(d$x, d$y, n_iter = 3000L, burnin = 1000L, thin = 2L, batch_size = 100L,
                chains = 2L)
    ref <- list(mean = c(-0.9, 0.1, 0.03, 0, 0, 0.1, 1, 0.02),
                cov = diag(0.01, 8L))
    err <- error_curve(fit, ref, points = 5L)
    expect_equal(nrow(err), 5L)
    expect_equal(err$draws, c(200, 400, 600, 800, 1000))
    expect_equal(err$iteration, 1000 + 2 * err$draws)
    draws <- lapply(unclass(fit), as.matrix)
    t <- 400
    x <- rbind(draws[[1]][1:t, ], draws[[2]][1:t, ])
    m <- colMeans(x)
    C <- crossprod(sweep(x, 2, m)) / nrow(x)
    expect_equal(err$E1[2], sum(abs(m - ref$mean)) / sum(abs(ref$mean)))
    expect_equal(err$E2[2], sum(abs(C - ref$cov)) / sum(abs(ref$cov)))
    ## a run against itself: the last row is exact
    self <- error_curve(fit, do.call(rbind, draws))
    expect_equal(self$E1[nrow(self)], 0, tolerance = 1e-12)
    expect_equal(self$E2[nrow(self)], 0, tolerance = 1e-12)
    expect_error(error_curve(fit, list(mean = 1, cov = 1)), "'reference' has 1 parameters")
    expect_error(error_curve(1, ref), "'fit' must be")
})

test_that("error_curve() of exact draws is within Monte Carlo error and falls with t", {
    p <- conjugate_data()
    set.seed(5)
    fit <- sgfs(p$x, p$y, family = gaussian(), sigma = p$sigma, prior = normal(0, p$s0),
                standardize = FALSE, batch_size = 1000L, n_iter = 6000L, progress = FALSE)
    err <- error_curve(fit, p[c("mean", "cov")], points = 10L)
    expect_lt(err$E1[10], err$E1[1] + 1e-12)
    expect_lt(err$E2[10], err$E2[1])
    ## the errors of as many independent exact draws as the run's effective
    ## sample size, as a yardstick (twice theirs allowed)
    n_eff <- round(min(coda::effectiveSize(fit)))
    iid <- withr::with_seed(6, MASS::mvrnorm(n_eff, p$mean, p$cov))
    m <- colMeans(iid)
    C <- crossprod(sweep(iid, 2, m)) / n_eff
    expect_lt(err$E1[10], 2 * sum(abs(m - p$mean)) / sum(abs(p$mean)) + 0.005)
    expect_lt(err$E2[10], 2 * sum(abs(C - p$cov)) / sum(abs(p$cov)))
})

test_that("predictive_scores() match hand computations", {
    p <- c(0.9, 0.2, 0.6, 0.4)
    y <- factor(c("b", "a", "a", "b"), levels = c("a", "b"))
    s <- predictive_scores(p, y)
    expect_equal(s[["log_loss"]], -mean(log(c(0.9, 0.8, 0.4, 0.4))))
    expect_equal(s[["error"]], 0.5)
    expect_equal(s[["brier"]], mean(2 * c(0.1, 0.2, 0.6, 0.6)^2))
    ## confidences 0.9, 0.8, 0.6, 0.6 in bins 9, 8, 6, 6; correct 1, 1, 0, 0
    expect_equal(s[["ece"]], (0.1 + 0.2 + 2 * 0.6) / 4)
    expect_equal(predictive_scores(p, c(1, 0, 0, 1)), s)
    P <- rbind(c(0.7, 0.2, 0.1), c(0.1, 0.1, 0.8))
    s3 <- predictive_scores(P, factor(c("x", "y"), levels = c("x", "y", "z")))
    expect_equal(s3[["error"]], 0.5)
    expect_equal(s3[["log_loss"]], -mean(log(c(0.7, 0.1))))
    r <- predictive_scores(cbind(fit = c(1, 2), sd = c(1, 2)), c(1.5, 1))
    expect_equal(r[["rmse"]], sqrt(mean(c(0.25, 1))))
    expect_equal(r[["log_lik"]], mean(dnorm(c(1.5, 1), c(1, 2), c(1, 2), log = TRUE)))
    expect_equal(names(predictive_scores(c(1, 2), c(1.5, 1))), "rmse")
    expect_error(predictive_scores(c(1.2, 0.3), c(0, 1)), "'pred' must be probabilities")
    expect_error(predictive_scores(p, c(0, 1)), "'y' has 2 values for 4")
})
