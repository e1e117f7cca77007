## ksd(): the kernel Stein discrepancy with the IMQ kernel (algorithms
## vignette 4.4) against a pure-R version written from the formulas, its exact value
## in expectation for exact draws, and its ranking of good and bad samples.

## sum over all T^2 ordered pairs of the Langevin-Stein kernel, term by term
r_ksd <- function(x, b, c = 1, beta = -0.5) {
    T <- nrow(x)
    D <- ncol(x)
    s <- 0
    for (i in seq_len(T)) for (j in seq_len(T)) {
        r <- x[i, ] - x[j, ]
        u <- c^2 + sum(r^2)
        s <- s + sum(b[i, ] * b[j, ]) * u^beta +
            2 * beta * u^(beta - 1) * sum((b[j, ] - b[i, ]) * r) -
            2 * beta * D * u^(beta - 1) -
            4 * beta * (beta - 1) * sum(r^2) * u^(beta - 2)
    }
    sqrt(s) / T
}

## gradient of the log posterior, prior N(0, 1) on every coefficient
r_score_gaussian <- function(X, y, sigma) function(th)
    drop(crossprod(X, y - X %*% th)) / sigma^2 - th
r_score_logistic <- function(X, y) function(th)
    drop(crossprod(X, y - plogis(drop(X %*% th)))) - th

draw_scores <- function(x, score) t(apply(x, 1L, score))

## the rows ksd() keeps: evenly spaced over the chains stacked one after another
thinned <- function(d, m) d[unique(round(seq(1, nrow(d), length.out = min(nrow(d), m)))), ,
                            drop = FALSE]

## a fit whose draws are replaced by d (same number of rows)
with_draws <- function(fit, d) {
    fit[] <- d
    fit
}

test_that("ksd() equals a pure-R IMQ Stein kernel sum (gaussian, original = internal scale)", {
    p <- ref_problem(gaussian(), N = 40)
    set.seed(51)
    fit <- quiet(sgld(p$x, p$y, family = gaussian(), sigma = 1, prior = normal(0, 1),
                      batch_size = 10, n_iter = 60, burnin = 30, standardize = FALSE,
                      progress = FALSE))
    d <- sgfs:::all_draws(fit)
    expect_equal(dim(d), c(30L, 3L))
    b <- draw_scores(d, r_score_gaussian(p$X, p$y, 1))
    expect_equal(ksd(fit), r_ksd(d, b), tolerance = 1e-10)
    expect_equal(ksd(fit, c = 0.5, beta = -0.3), r_ksd(d, b, 0.5, -0.3), tolerance = 1e-10)
    expect_equal(ksd(fit, c = 3, beta = -0.9), r_ksd(d, b, 3, -0.9), tolerance = 1e-10)
})

test_that("ksd() works on the internal (standardised) scale, after thinning and pooling", {
    p <- ref_problem(binomial(), N = 40)
    set.seed(52)
    fit <- quiet(sgld(p$x, p$y, prior = normal(0, 1), batch_size = 10, n_iter = 70,
                      burnin = 20, chains = 2, progress = FALSE))
    d <- sgfs:::all_draws(fit)
    expect_equal(nrow(d), 100L)
    ## the internal scale, from first principles: predictors centred and scaled,
    ## eta = b0 + x'b = (b0 + m'b) + ((x - m) / s)'(s b)
    m <- colMeans(p$x)
    s <- apply(p$x, 2L, sd)
    internal <- cbind(d[, 1] + drop(d[, -1] %*% m), sweep(d[, -1], 2L, s, "*"))
    Xs <- cbind(1, scale(p$x))
    x30 <- thinned(internal, 30)
    b <- draw_scores(x30, r_score_logistic(Xs, p$y))
    expect_equal(ksd(fit, max_draws = 30), r_ksd(x30, b), tolerance = 1e-10)
    ## no thinning when max_draws is at least the number of draws
    b <- draw_scores(internal, r_score_logistic(Xs, p$y))
    expect_equal(ksd(fit, max_draws = 100), r_ksd(internal, b), tolerance = 1e-10)
    expect_equal(ksd(fit, max_draws = 5000), ksd(fit, max_draws = 100))
})

test_that("exact posterior draws: KSD^2 near its expectation; shifted draws: far larger", {
    ## conjugate Gaussian posterior N(mu, Sigma), A = Sigma^-1.  For exact
    ## independent draws, E KSD^2 = (E ||b||^2 + D) / T = (tr A + D) / T at
    ## c = 1, beta = -1/2 (the off-diagonal pairs have mean zero), with sd about
    ## sqrt(2 tr(A^2)) / T
    cd <- conjugate_data(N = 200, D = 3)
    set.seed(53)
    fit <- sgld(cd$x, cd$y, family = gaussian(), sigma = cd$sigma, prior = normal(0, cd$s0),
                batch_size = 20, n_iter = 2200, burnin = 200, standardize = FALSE,
                progress = FALSE)
    T <- 2000
    exact <- matrix(rnorm(T * 3), T) %*% chol(cd$cov) + rep(cd$mean, each = T)
    A <- solve(cd$cov)
    expected <- (sum(diag(A)) + 3) / T
    k_exact <- ksd(with_draws(fit, exact))
    expect_lt(abs(k_exact^2 - expected), 5 * sqrt(2 * sum(A^2)) / T)
    shifted <- exact + rep(0.3 * sqrt(diag(cd$cov)), each = T)
    expect_gt(ksd(with_draws(fit, shifted)), 5 * k_exact)
})

test_that("KSD ranks SGLD at its default step above SGLD at 20 times that step", {
    ## 20 x the default is still stable here but inflates the posterior
    ## variances about 2.2-fold (means stay right); the default chain runs
    ## longer for a similar effective sample size
    cd <- conjugate_data(N = 200, D = 3)
    run <- function(...) {
        set.seed(54)
        sgld(cd$x, cd$y, family = gaussian(), sigma = cd$sigma, prior = normal(0, cd$s0),
             batch_size = 20, standardize = FALSE, progress = FALSE, ...)
    }
    good <- run(n_iter = 200000, thin = 100)
    bad <- run(n_iter = 40000, thin = 20,
               stepsize = 20 * attr(good, "sgfit")$settings$stepsize)
    expect_gt(ksd(bad), 1.5 * ksd(good))
    ## a kernel scale nearer the posterior sd (0.07) separates them more
    expect_gt(ksd(bad, c = 0.2), 3 * ksd(good, c = 0.2))
})

test_that("ksd() rejects bad input, naming the argument", {
    p <- ref_problem(binomial(), N = 40)
    fit <- quiet(sgld(p$x, p$y, batch_size = 10, n_iter = 30, burnin = 10, progress = FALSE))
    expect_error(ksd(sgfs:::all_draws(fit)), "'fit' must be a fit returned by")
    expect_error(ksd(coda::mcmc(sgfs:::all_draws(fit))), "'fit'.*class 'sgfit'")
    expect_error(ksd(fit, c = 0), "'c' must be a single positive number")
    expect_error(ksd(fit, c = -1), "'c'")
    expect_error(ksd(fit, c = c(1, 2)), "'c'")
    expect_error(ksd(fit, beta = 0), "'beta' must be a number between -1 and 0")
    expect_error(ksd(fit, beta = -1), "'beta'")
    expect_error(ksd(fit, beta = NA), "'beta'")
    expect_error(ksd(fit, beta = "a"), "'beta'")
    expect_error(ksd(fit, max_draws = 1), "'max_draws' must be a whole number between 2")
    expect_error(ksd(fit, max_draws = 2.5), "'max_draws'")
    expect_error(ksd(fit, max_draws = NA), "'max_draws'")
})

test_that("draws so far out that the Stein sum overflows score Inf, never 0", {
    p <- ref_problem(binomial(), N = 40)
    fit <- quiet(sgld(p$x, p$y, batch_size = 10, n_iter = 30, burnin = 10, progress = FALSE))
    expect_true(is.finite(ksd(fit)))
    far <- fit
    far[] <- 1e200 * sign(rnorm(length(far)))
    expect_identical(attr(far, "sgfit"), attr(fit, "sgfit"))
    expect_equal(ksd(far), Inf)
})
