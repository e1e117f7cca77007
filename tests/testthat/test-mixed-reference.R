## The mixed-model sampler's exact updates, in their plain-R reference
## (helper-mixed-reference.R), against quadrature of the conditionals they
## sample: each is a Markov kernel that leaves its conditional invariant,
## whatever the group's size.  Tolerances: 4.5 Monte Carlo standard errors
## of the chains' means and variances (from their autocorrelation, via
## coda's effective size), fixed seeds.

## the conditional's mean and variance (q = 1) or means (q = 2) by
## quadrature on a grid around its mode
quadrature_moments <- function(g) {
    lap <- group_laplace(g)
    sd <- sqrt(diag(chol2inv(lap$U)))
    grid <- lapply(seq_along(sd), function(k) lap$mode[k] + sd[k] * seq(-9, 9, length.out = 241))
    pts <- as.matrix(expand.grid(grid))
    lp <- apply(pts, 1L, function(b) group_logdens(b, g)$value)
    p <- exp(lp - max(lp))
    p <- p / sum(p)
    m <- colSums(pts * p)
    list(mean = m, var = colSums(t(t(pts) - m)^2 * p))
}

run_group_chain <- function(g, n_iter, seed) {
    b <- numeric(ncol(g$Z))
    out <- matrix(NA_real_, n_iter, length(b))
    acc <- 0
    withr::with_seed(seed, for (k in seq_len(n_iter)) {
        u <- update_group(b, g)
        b <- u$b
        acc <- acc + u$accepted
        out[k, ] <- b
    })
    list(draws = out, acceptance = acc / n_iter)
}

expect_moments <- function(draws, truth, info) {
    ess <- pmax(coda::effectiveSize(coda::mcmc(draws)), 50)
    m <- colMeans(draws)
    v <- apply(draws, 2L, stats::var)
    expect_true(all(abs(m - truth$mean) <= 4.5 * sqrt(truth$var / ess)),
                info = paste(info, "means", paste(signif(m - truth$mean, 3), collapse = " ")))
    ## (the variance's sd about sqrt(2 / ess) of it for a near-normal law)
    expect_true(all(abs(v / truth$var - 1) <= 4.5 * sqrt(2 / ess) + 0.02),
                info = paste(info, "variances", paste(signif(v / truth$var, 3), collapse = " ")))
}

test_that("a group's Laplace approximation is its conditional's mode, and gaussian's is exact", {
    for (model in c("logistic", "probit", "poisson", "gaussian")) {
        g <- one_group(model, 7L, q = 2L)
        lap <- group_laplace(g)
        expect_lt(max(abs(group_logdens(lap$mode, g)$grad)), 1e-8)
        ## the gradient and curvature against finite differences
        b <- c(0.3, -0.2)
        f <- group_logdens(b, g)
        h <- 1e-5
        num <- vapply(1:2, function(k) {
            e <- replace(numeric(2), k, h)
            (group_logdens(b + e, g)$value - group_logdens(b - e, g)$value) / (2 * h)
        }, 0)
        expect_equal(f$grad, num, tolerance = 1e-6, info = model)
        numH <- vapply(1:2, function(k) {
            e <- replace(numeric(2), k, h)
            -(group_logdens(b + e, g)$grad - group_logdens(b - e, g)$grad) / (2 * h)
        }, numeric(2))
        expect_equal(f$H, numH, tolerance = 1e-6, info = model)
    }
    g <- one_group("gaussian", 5L, q = 2L)
    lap <- group_laplace(g)
    V <- solve(crossprod(g$Z, g$w * g$Z) / g$sigma^2 + g$P)
    expect_equal(lap$mode, drop(V %*% crossprod(g$Z, g$w * (g$y - g$eta0))) / g$sigma^2,
                 tolerance = 1e-10)
    expect_equal(chol2inv(lap$U), V, tolerance = 1e-10)
})

test_that("the group update samples its conditional, for groups of one row to many", {
    skip_on_cran()
    for (model in c("logistic", "probit", "poisson", "gaussian"))
        for (n in c(1L, 2L, 40L)) {
            g <- one_group(model, n, seed = n)
            chain <- run_group_chain(g, 4000L, seed = 10 + n)
            expect_moments(chain$draws, quadrature_moments(g), paste(model, n))
            if (model != "gaussian") expect_gt(chain$acceptance, 0.5)
        }
    ## two coefficients a group (an intercept and a slope)
    for (model in c("logistic", "poisson")) {
        g <- one_group(model, 6L, q = 2L, seed = 3)
        chain <- run_group_chain(g, 4000L, seed = 4)
        expect_moments(chain$draws, quadrature_moments(g), paste(model, "q = 2"))
    }
})

test_that("the group sd's slice update samples its conditional", {
    skip_on_cran()
    for (case in list(list(Q = 3.1, G = 12, prior = list(family = "half_normal", scale = 1)),
                      list(Q = 0.02, G = 2,                          # two groups: the prior
                           prior = list(family = "half_t", scale = 2.5, df = 3)),
                      list(Q = 40, G = 500, prior = list(family = "exponential", scale = 1)))) {
        f <- function(u) vapply(u, cov_log_conditional, 0, q = 1L, Q = matrix(case$Q),
                                G = case$G, prior = case$prior)
        grid <- seq(-12, 6, length.out = 20001)
        p <- exp(f(grid) - max(f(grid)))
        p <- p / sum(p)
        truth <- list(mean = sum(grid * p), var = sum((grid - sum(grid * p))^2 * p))
        u <- 0
        draws <- withr::with_seed(5, vapply(seq_len(4000), function(k)
            u <<- update_cov(u, 1L, matrix(case$Q), case$G, case$prior), 0))
        expect_moments(matrix(draws), truth, paste("G =", case$G))
    }
})

test_that("a covariance's coordinates give its prior: LKJ correlations, half-normal sds", {
    ## no groups (G = 0, Q = 0): the chain samples the prior itself
    skip_on_cran()
    q <- 3L
    x <- numeric(q + 3L)
    draws <- withr::with_seed(6, t(vapply(seq_len(3000), function(k)
        x <<- update_cov(x, q, matrix(0, q, q), 0, list(family = "half_normal", scale = 2)),
        numeric(q + 3L))))
    rho <- t(apply(draws, 1L, function(x) {
        O <- cov_from_coords(x, q)$Omega
        O[lower.tri(O)]
    }))
    sds <- exp(draws[, 1:q])
    ## LKJ(1) in 3 dimensions: each correlation ~ 2 Beta(1.5, 1.5) - 1, mean 0,
    ## variance 1 / 4; a half-normal(0, 2) sd: mean 2 sqrt(2 / pi), variance 4 (1 - 2 / pi)
    expect_moments(rho, list(mean = rep(0, 3), var = rep(1 / 4, 3)), "LKJ(1)")
    expect_moments(sds, list(mean = rep(2 * sqrt(2 / pi), 3), var = rep(4 * (1 - 2 / pi), 3)),
                   "half-normal sds")
})

test_that("a covariance's slice update samples its conditional given the effects", {
    skip_on_cran()
    q <- 2L
    b <- withr::with_seed(7, matrix(stats::rnorm(2 * 15), 15) %*% chol(matrix(c(1, 0.5, 0.5, 0.8), 2)))
    Q <- crossprod(b)
    x <- numeric(3)
    t3 <- list(family = "half_t", scale = 1, df = 3)
    draws <- withr::with_seed(8, t(vapply(seq_len(4000), function(k)
        x <<- update_cov(x, q, Q, 15, t3), numeric(3))))
    ## quadrature on a grid of the coordinates
    grid <- as.matrix(expand.grid(seq(-2, 1.5, length.out = 45), seq(-2, 1.5, length.out = 45),
                                  seq(-2.5, 2.5, length.out = 45)))
    lp <- apply(grid, 1L, cov_log_conditional, q = q, Q = Q, G = 15, prior = t3)
    p <- exp(lp - max(lp))
    p <- p / sum(p)
    m <- colSums(grid * p)
    expect_moments(draws, list(mean = m, var = colSums(t(t(grid) - m)^2 * p)), "q = 2")
})

test_that("rstanarm's decov() prior on a term's sds is the law of its construction", {
    skip_on_cran()
    ## no groups: the chain samples decov(regularization 1, concentration 1,
    ## shape 2, scale 1.5) at dispersion 0.8, against s_k = d tau sqrt(q pi_k)
    ## drawn directly
    prior <- list(family = "decov", shape = 2, scale = 1.5, concentration = 1)
    q <- 2L
    x <- numeric(3)
    draws <- withr::with_seed(9, t(vapply(seq_len(4000), function(k)
        x <<- update_cov(x, q, matrix(0, q, q), 0, prior, zeta = 1, dispersion = 0.8),
        numeric(3))))
    direct <- withr::with_seed(10, {
        tau <- stats::rgamma(2e5, 2, rate = 1 / 1.5)
        g <- matrix(stats::rgamma(4e5, 1), ncol = 2)
        0.8 * tau * sqrt(2 * g / rowSums(g))
    })
    truth <- list(mean = colMeans(log(direct)), var = apply(log(direct), 2, stats::var))
    expect_moments(draws[, 1:2], truth, "decov's log sds")
    ## one coefficient: a gamma law on the sd over the dispersion
    expect_equal(decov_logdens(0.7, prior, 2) - decov_logdens(0.3, prior, 2),
                 stats::dgamma(0.35, 2, rate = 1 / 1.5, log = TRUE) -
                     stats::dgamma(0.15, 2, rate = 1 / 1.5, log = TRUE))
})
