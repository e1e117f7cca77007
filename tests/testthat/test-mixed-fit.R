## Mixed models through the formula: sgld(y ~ x + (1 | g), data) and the
## other minibatch rules at their defaults; the draws' names, the recovery
## of known parameters and continuation (the methods on the fit:
## test-mixed-methods.R).

mixed_data <- function(seed, G = 80L, family = "binomial") {
    withr::with_seed(seed, {
        g <- rep(seq_len(G), sample(c(2L, 10L, 40L), G, replace = TRUE))
        x <- stats::rnorm(length(g))
        z <- stats::rnorm(length(g))
        u <- stats::rnorm(G, 0, 0.8)
        v <- stats::rnorm(G, 0, 0.4)
        eta <- -0.5 + x + u[g] + v[g] * z
        y <- if (family == "binomial") stats::rbinom(length(g), 1, stats::plogis(eta))
             else eta + stats::rnorm(length(g), 0, 0.5)
        data.frame(y, x, z, g = factor(g), h = factor(sample(letters[1:6], length(g), TRUE)))
    })
}

test_that("a logistic random-intercept model at sgld()'s defaults recovers its parameters", {
    d <- mixed_data(1)
    fit <- withr::with_seed(2, sgld(y ~ x + (1 | g), d, progress = FALSE, verbose = FALSE))
    expect_equal(coda::varnames(fit), c("(Intercept)", "x", "sd[(Intercept) | g]",
                                        sprintf("b[(Intercept) g:%d]", 1:80)))
    m <- as.matrix(fit)[, 1:3]
    ## the truth within 3 posterior sds (a posterior covers its truth)
    z <- (colMeans(m) - c(-0.5, 1, 0.8)) / apply(m, 2, stats::sd)
    expect_true(all(abs(z) < 3), label = paste(signif(z, 3), collapse = " "))
    ## (the run grows until the fixed effects and the sd mix)
    expect_gte(min(coda::effectiveSize(m)), 400)
})

test_that("a gaussian model with a correlated slope names its sds and correlation", {
    d <- mixed_data(3, G = 60L, family = "gaussian")
    fit <- withr::with_seed(4, sghmc(y ~ x + (1 + z | g), d, family = gaussian(),
                                     progress = FALSE, verbose = FALSE))
    expect_equal(coda::varnames(fit)[1:8], c("(Intercept)", "x", "log_sigma", "sd[(Intercept) | g]",
                                             "sd[z | g]", "cor[(Intercept),z | g]",
                                             "b[(Intercept) g:1]", "b[z g:1]"))
    m <- as.matrix(fit)
    truth <- c(-0.5, 1, log(0.5), 0.8, 0.4)
    z <- (colMeans(m)[1:5] - truth) / apply(m[, 1:5], 2, stats::sd)
    expect_true(all(abs(z) < 3), label = paste(signif(z, 3), collapse = " "))
    expect_true(all(abs(m[, 6]) <= 1))
})

test_that("crossed terms fit, and a continued mixed fit equals one run", {
    d <- mixed_data(5, G = 30L)
    one <- withr::with_seed(6, sgld(y ~ x + (1 | g) + (1 | h), d, n_iter = 3000, burnin = 300,
                                    progress = FALSE, verbose = FALSE))
    expect_equal(coda::varnames(one), c("(Intercept)", "x", "sd[(Intercept) | g]",
                                        "sd[(Intercept) | h]", sprintf("b[(Intercept) g:%d]", 1:30),
                                        sprintf("b[(Intercept) h:%s]", letters[1:6])))
    part <- withr::with_seed(6, sgld(y ~ x + (1 | g) + (1 | h), d, n_iter = 2000, burnin = 300,
                                     progress = FALSE, verbose = FALSE))
    more <- suppressWarnings(update(part, n_iter = 1000))
    expect_equal(unclass(as.matrix(more)), unclass(as.matrix(one)), tolerance = 1e-12)
})

test_that("a mixed fit's hints point to sgldcv(), not to samplers that refuse it", {
    d <- mixed_data(9, G = 20L)
    fit <- withr::with_seed(10, sgld(y ~ x + (1 | g), d, n_iter = 2000, progress = FALSE,
                                     verbose = FALSE))
    plain <- withr::with_seed(10, sgld(y ~ x, d, n_iter = 2000, progress = FALSE, verbose = FALSE))
    ## (the hint a chain that mixes slowly gets: sgldcv() for a GLM, nothing here)
    expect_match(sgfs:::faster_samplers_hint(attr(plain, "sgfit"), 2L, "; or use "), "sgldcv")
    hint <- sgfs:::faster_samplers_hint(attr(fit, "sgfit"), 2L, "; or use ")
    expect_match(hint, "sgldcv\\(\\)")
    expect_no_match(hint, "osgfs")
})

test_that("sgldcv() fits random effects at its defaults, and continues exactly", {
    d <- mixed_data(11)
    fit <- withr::with_seed(12, sgldcv(y ~ x + (1 | g), d, progress = FALSE, verbose = FALSE))
    spec <- attr(fit, "sgfit")$spec
    ## (first-order control variates, no rows held in every minibatch)
    expect_false(is.null(spec$centre))
    expect_null(spec$centre_hessian)
    expect_null(spec$fixed)
    m <- as.matrix(fit)[, 1:3]
    z <- (colMeans(m) - c(-0.5, 1, 0.8)) / apply(m, 2, stats::sd)
    expect_true(all(abs(z) < 3), label = paste(signif(z, 3), collapse = " "))
    ## (the run grew until the fixed effects and the sd had 400 bulk
    ## effective draws, rank-normalised)
    expect_identical(attr(fit, "sgfit")$run_length$stop, "mixed")
    expect_gte(sgfs:::convergence_summary(fit)$min_ess, 400)
    ## the centre, its score sum and the scale moves' widths carry over
    one <- withr::with_seed(13, sgldcv(y ~ x + (1 | g), d, n_iter = 3000, burnin = 300,
                                       progress = FALSE, verbose = FALSE))
    part <- withr::with_seed(13, sgldcv(y ~ x + (1 | g), d, n_iter = 2000, burnin = 300,
                                        progress = FALSE, verbose = FALSE))
    more <- suppressWarnings(update(part, n_iter = 1000))
    expect_equal(unclass(as.matrix(more)), unclass(as.matrix(one)), tolerance = 1e-12)
})
