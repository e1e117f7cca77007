## The mixed-model sampler's random-effect blocks in C (src/ranef.c), one at
## a time, replayed draw for draw against their plain-R reference
## (helper-mixed-reference.R), which test-mixed-reference.R checks against
## quadrature of the conditionals.

## the C form of a reference sd prior (ranef.h's SGFS_SD_*)
c_sd_prior <- function(prior, zeta = 1) sgfs:::ranef_sd_prior(c(prior, list(zeta = zeta)))

## a group of n rows: the reference's list and an engine spec of its rows
## (one column of ones as the design, whose coefficient theta gives 0: the
## rows' predictors are the group's eta0 alone)
block_group <- function(model, n, q, seed) {
    ref <- one_group(model, n, q, seed)
    family <- switch(model, logistic = binomial(), probit = binomial(link = "probit"),
                     poisson = poisson(), gaussian = gaussian())
    ## (and one row more than the group's: a design has at least two)
    run <- engine_spec(matrix(1, n + 1L, 1, dimnames = list(NULL, "one")), c(ref$y, ref$y[1]),
                       family = family, intercept = FALSE, weights = c(ref$w, 1), batch_size = 2L)
    list(ref = ref, spec = run$spec, theta = c(0, if (model == "gaussian") log(0.7)))
}

c_group_draw <- function(grp, b, df = 4)
    .Call(sgfs:::C_sgfs_ranef_group_draw, grp$spec, as.double(grp$theta),
          seq_along(grp$ref$y) - 1L, as.double(grp$ref$eta0), as.double(grp$ref$Z),
          as.double(b), as.double(grp$ref$P), as.double(df))

test_that("a group's update in C replays the reference draw for draw", {
    for (model in c("logistic", "probit", "poisson", "gaussian"))
        for (n in c(1L, 3L, 40L))
            for (q in 1:2) {
                grp <- block_group(model, n, q, seed = 10L * n + q)
                b_r <- b_c <- rep(0.3, q)
                accepted <- 0L
                for (k in 1:25) {
                    r <- withr::with_seed(100 + k, update_group(b_r, grp$ref))
                    cc <- withr::with_seed(100 + k, c_group_draw(grp, b_c))
                    info <- sprintf("%s, %d rows, q = %d, draw %d", model, n, q, k)
                    expect_equal(cc$b, r$b, tolerance = 1e-8, info = info)
                    expect_equal(cc$status == 1L, r$accepted, info = info)
                    accepted <- accepted + r$accepted
                    b_r <- r$b
                    b_c <- cc$b
                }
                ## the chain moves (an MH step that always refuses would pass)
                expect_gt(accepted, 10)
            }
})

test_that("the covariance's log density in C equals the reference's", {
    priors <- list(list(family = "half_normal", scale = 1.5),
                   list(family = "half_t", df = 3, scale = 2),
                   list(family = "exponential", scale = 0.7),
                   list(family = "decov", shape = 1, scale = 1, concentration = 1),
                   list(family = "decov", shape = 2, scale = 0.5, concentration = 3))
    b <- withr::with_seed(3, matrix(stats::rnorm(3 * 12), 12, 3) %*% diag(c(1, 0.5, 2)))
    for (q in 1:3) {
        Q <- crossprod(b[, seq_len(q), drop = FALSE])
        n_x <- q * (q + 1) / 2
        for (prior in priors)
            for (zeta in c(1, 2.5))
                for (k in 1:3) {
                    x <- withr::with_seed(k, stats::rnorm(n_x, sd = 0.7))
                    for (G in c(0L, 12L)) {
                        r <- cov_log_conditional(x, q, Q, G, prior, zeta, dispersion = 1.3)
                        cc <- .Call(sgfs:::C_sgfs_ranef_cov_draw, x, as.double(Q), G,
                                    c_sd_prior(prior, zeta), 1.3, TRUE)
                        expect_equal(cc, r, tolerance = 1e-12,
                                     info = sprintf("%s, q = %d, zeta %g, G %d", prior$family, q, zeta, G))
                    }
                }
    }
})

test_that("the covariance's update in C replays the reference draw for draw", {
    b <- withr::with_seed(4, matrix(stats::rnorm(2 * 30), 30, 2) %*% diag(c(0.8, 0.3)))
    for (q in 1:2) {
        Q <- crossprod(b[, seq_len(q), drop = FALSE])
        for (prior in list(list(family = "half_normal", scale = 1),
                           list(family = "decov", shape = 1, scale = 1, concentration = 1))) {
            x_r <- x_c <- numeric(q * (q + 1) / 2)
            for (k in 1:20) {
                x_r <- withr::with_seed(k, update_cov(x_r, q, Q, 30L, prior, 2, 1))
                x_c <- withr::with_seed(k, .Call(sgfs:::C_sgfs_ranef_cov_draw, x_c, as.double(Q),
                                                 30L, c_sd_prior(prior, 2), 1, FALSE))
                expect_equal(x_c, x_r, tolerance = 1e-9, info = sprintf("%s, q = %d", prior$family, q))
            }
            expect_false(isTRUE(all.equal(x_c, numeric(length(x_c)))))
        }
    }
})

test_that("the translation in C replays the reference", {
    b <- withr::with_seed(5, matrix(stats::rnorm(2 * 15, 0.4), 15, 2))
    x <- c(log(0.6), log(0.4), atanh(0.3))
    cv <- cov_from_coords(x, 2L)
    P <- solve(cv$Sigma)
    for (c in 1:2) {
        ref <- withr::with_seed(9, translation_delta(b, P, c, 0.7, 0.1, 2.5))
        got <- withr::with_seed(9, .Call(sgfs:::C_sgfs_ranef_translation_draw, as.double(t(b)), c,
                                         x, 0.7, 0.1, 2.5))
        expect_equal(got, ref, tolerance = 1e-12)
    }
})

test_that("decov()'s part of the noise sd's gradient is the density's derivative in log d", {
    ## (src/ranef_engine.c adds tau / scale - shape, tau = |s| / (d sqrt(q)))
    for (q in 1:3) {
        x <- withr::with_seed(q, stats::rnorm(q * (q + 1) / 2, sd = 0.5))
        prior <- list(family = "decov", shape = 1.7, scale = 0.8, concentration = 1.3)
        f <- function(log_d) .Call(sgfs:::C_sgfs_ranef_cov_draw, x, double(q * q), 0L,
                                   c_sd_prior(prior, 1), exp(log_d), TRUE)
        h <- 1e-5
        numeric <- (f(0.3 + h) - f(0.3 - h)) / (2 * h)
        tau <- sqrt(sum(exp(2 * x[seq_len(q)])) / q) / exp(0.3)
        expect_equal(numeric, tau / prior$scale - prior$shape, tolerance = 1e-7)
    }
})
