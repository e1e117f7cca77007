## The engine's random-effect part (src/ranef_engine.c) on a fit's spec:
## with the fixed effects held still (a step of 1e-14), its chain over the
## group effects and their sd is exact, so the draws of the sd and of each
## group effect must match their exact posteriors given beta, by quadrature
## of the groups' marginal likelihoods; with the fixed effects sampled, known parameters
## are recovered; a run continued from its state equals one run.
## Tolerances: 4.5 Monte Carlo standard errors (coda's effective size).

## groups of 1 to 60 rows; a fit of the fixed effects alone, its spec and
## state with the random intercepts (1 | g) added
mixed_engine_case <- function(family, seed, sigma = NULL) {
    withr::with_seed(seed, {
        G <- 30L
        g <- rep(seq_len(G), rep(c(1L, 2L, 5L, 20L, 60L), each = 6L))
        x <- stats::rnorm(length(g))
        eta <- 0.3 + 0.5 * x + stats::rnorm(G, 0, 0.7)[g]
        y <- if (family$family == "gaussian") eta + stats::rnorm(length(g))
             else stats::rbinom(length(g), 1, stats::plogis(eta))
    })
    d <- data.frame(y, x, g = factor(g))
    fit <- withr::with_seed(1, sgld(y ~ x, d, family = family, sigma = sigma, n_iter = 20,
                                    standardize = FALSE, progress = FALSE))
    info <- attr(fit, "sgfit")
    terms <- sgfs:::random_design(sgfs:::random_bars(y ~ x + (1 | g)), d)
    spec <- sgfs:::fit_spec(info)
    spec$ranef <- sgfs:::ranef_engine_spec(terms, 2L, list(family = "half_normal", scale = 1))
    list(d = d, spec = spec, state = info$states[[1L]], terms = terms)
}

## the chain of the sd with beta held at `beta`
frozen_chain <- function(case, beta, n_iter, seed) {
    spec <- case$spec
    state <- case$state
    state$theta <- beta
    state$z <- NULL
    spec$metric <- NULL
    spec$schedule[2] <- 1e-14
    spec$burnin <- 500L
    spec$thin <- 1L
    withr::with_seed(seed, sgfs:::run_chain(spec, state, n_iter + 500L, FALSE))
}

## the sd's exact posterior given beta on a grid: the half-normal(0, 1)
## prior times each group's marginal likelihood (loglik(b, rows) for one
## group effect b, integrated on a grid); and each group effect's, the
## mixture over that posterior of its conditionals given the sd
exact_sd_moments <- function(case, beta, group_loglik) {
    eta0 <- drop(cbind(1, case$d$x) %*% beta)
    rows <- split(seq_len(nrow(case$d)), case$d$g)
    grid <- seq(0.02, 3, length.out = 300)
    b <- seq(-8, 8, length.out = 801)
    ## each group's log-likelihood on the grid of its effect, once
    ll <- lapply(rows, function(i) vapply(b, function(v) group_loglik(case$d$y[i], eta0[i] + v), 0))
    m1 <- m2 <- matrix(0, length(grid), length(ll))
    lp <- vapply(seq_along(grid), function(k) {
        prior <- stats::dnorm(b, 0, grid[k], log = TRUE)
        sum(vapply(seq_along(ll), function(j) {
            l <- ll[[j]] + prior
            w <- exp(l - max(l))
            m1[k, j] <<- sum(b * w) / sum(w)
            m2[k, j] <<- sum(b^2 * w) / sum(w)
            max(l) + log(sum(w) * (b[2] - b[1]))
        }, 0)) + stats::dnorm(grid[k], log = TRUE)
    }, 0)
    p <- exp(lp - max(lp))
    p <- p / sum(p)
    m <- sum(grid * p)
    em <- colSums(m1 * p)
    list(mean = m, sd = sqrt(sum((grid - m)^2 * p)),
         effects = list(mean = em, sd = sqrt(colSums(m2 * p) - em^2)))
}

expect_sd_matches <- function(draws, exact, info) {
    ess <- coda::effectiveSize(coda::mcmc(draws))
    expect_gt(ess, 500)
    expect_lt(abs(mean(draws) - exact$mean), 4.5 * exact$sd / sqrt(ess), label = info)
    ## (the sd of a sample's sd: about sd / sqrt(2 ess) for a near-normal law)
    expect_lt(abs(stats::sd(draws) - exact$sd), 4.5 * exact$sd / sqrt(2 * ess), label = info)
}

## every group effect's draws (columns) against its exact posterior's mean
## and sd; 4.5 Monte Carlo standard errors each
expect_effects_match <- function(draws, exact, info) {
    ess <- coda::effectiveSize(coda::mcmc(draws))
    expect_gt(min(ess), 500)
    z_mean <- (colMeans(draws) - exact$mean) / (exact$sd / sqrt(ess))
    z_sd <- (apply(draws, 2, stats::sd) - exact$sd) / (exact$sd / sqrt(2 * ess))
    expect_lt(max(abs(z_mean)), 4.5, label = paste(info, "means"))
    expect_lt(max(abs(z_sd)), 4.5, label = paste(info, "sds"))
}

test_that("with beta held, the group sd's draws follow its exact posterior (gaussian)", {
    case <- mixed_engine_case(gaussian(), seed = 2, sigma = 1)
    beta <- c(0.3, 0.5)
    res <- frozen_chain(case, beta, 20000L, seed = 3)
    expect_equal(res$draws[, 1:2], matrix(beta, nrow(res$draws), 2, byrow = TRUE), tolerance = 1e-4)
    exact <- exact_sd_moments(case, beta, function(y, eta) sum(stats::dnorm(y, eta, 1, log = TRUE)))
    expect_sd_matches(res$draws[, 3], exact, "gaussian")
    expect_effects_match(res$draws[, 3 + seq_len(30)], exact$effects, "gaussian effects")
})

test_that("with beta held, the group sd's draws follow its exact posterior (logistic)", {
    case <- mixed_engine_case(binomial(), seed = 4)
    beta <- c(0.3, 0.5)
    res <- frozen_chain(case, beta, 20000L, seed = 5)
    expect_gt(res$ranef$acceptance, 0.7)
    exact <- exact_sd_moments(case, beta, function(y, eta)
        sum(stats::dbinom(y, 1, stats::plogis(eta), log = TRUE)))
    expect_sd_matches(res$draws[, 3], exact, "logistic")
    ## the group effects: groups of 1 to 60 rows
    expect_effects_match(res$draws[, 3 + seq_len(30)], exact$effects, "logistic effects")
})

test_that("a mixed chain continued from its state equals one run", {
    case <- mixed_engine_case(binomial(), seed = 6)
    spec <- case$spec
    spec$burnin <- 0L
    spec$thin <- 1L
    whole <- withr::with_seed(8, sgfs:::run_chain(spec, case$state, 400L, FALSE))
    parts <- withr::with_seed(8, {
        first <- sgfs:::run_chain(spec, case$state, 150L, FALSE)
        state <- first[c("theta", "iter", "sstate", "z")]
        state$ranef <- first$ranef[c("b", "x", "sweep", "mode", "credit", "scale")]
        list(first = first, rest = sgfs:::run_chain(spec, state, 250L, FALSE))
    })
    first <- parts$first
    rest <- parts$rest
    expect_equal(rbind(first$draws, rest$draws), whole$draws, tolerance = 1e-12)
    expect_equal(rest$ranef$b, whole$ranef$b, tolerance = 1e-12)
})

test_that("with beta sampled, a logistic mixed model recovers its parameters", {
    withr::local_seed(11)
    G <- 80L
    g <- rep(seq_len(G), sample(c(2L, 10L, 40L), G, replace = TRUE))
    x <- stats::rnorm(length(g))
    y <- stats::rbinom(length(g), 1, stats::plogis(-0.5 + x + stats::rnorm(G, 0, 0.8)[g]))
    d <- data.frame(y, x, g = factor(g))
    fit <- sgld(y ~ x, d, n_iter = 20, standardize = FALSE, progress = FALSE)
    info <- attr(fit, "sgfit")
    terms <- sgfs:::random_design(sgfs:::random_bars(y ~ x + (1 | g)), d)
    spec <- sgfs:::fit_spec(info)
    dir <- matrix(c(1, 0), 2, 1)            # the intercept's translation
    spec$ranef <- sgfs:::ranef_engine_spec(terms, 2L, list(family = "half_normal", scale = 1),
                                           list(dir))
    spec$burnin <- 2000L
    spec$thin <- 1L
    res <- sgfs:::run_chain(spec, info$states[[1L]], 20000L, FALSE)
    post_mean <- colMeans(res$draws[, 1:3])
    post_sd <- apply(res$draws[, 1:3], 2, stats::sd)
    ## the truth within 3 posterior sds (a posterior covers its truth)
    expect_true(all(abs(post_mean - c(-0.5, 1, 0.8)) < 3 * post_sd),
                label = paste(signif(post_mean, 3), collapse = " "))
})

test_that("the random effects follow the rows of a shuffled copy (10,000 rows and more)", {
    withr::local_seed(12)
    G <- 200L
    g <- sample.int(G, 10000L, replace = TRUE)
    x <- stats::rnorm(length(g))
    y <- 0.3 + 0.5 * x + stats::rnorm(G, 0, 0.7)[g] + stats::rnorm(length(g))
    d <- data.frame(y, x, g = factor(g))
    fit <- sgld(y ~ x, d, family = gaussian(), sigma = 1, n_iter = 20, standardize = FALSE,
                progress = FALSE)
    info <- attr(fit, "sgfit")
    spec <- sgfs:::fit_spec(info)
    expect_false(is.null(spec$order))          # (the engine's copy is shuffled)
    terms <- sgfs:::random_design(sgfs:::random_bars(y ~ x + (1 | g)), d)
    spec$ranef <- sgfs:::ranef_engine_spec(terms, 2L, list(family = "half_normal", scale = 1),
                                           order = spec$order)
    case <- list(d = d, spec = spec, state = info$states[[1L]])
    beta <- c(0.3, 0.5)
    res <- frozen_chain(case, beta, 3000L, seed = 13)
    exact <- exact_sd_moments(case, beta, function(y, eta) sum(stats::dnorm(y, eta, 1, log = TRUE)))
    expect_sd_matches(res$draws[, 3], exact, "shuffled rows")
})

test_that("with beta held, nested terms' sds follow their exact posterior (the nested move on)", {
    withr::local_seed(14)
    outer <- rep(1:6, each = 4)                         # 6 groups, each of 4 inner groups
    size <- sample(1:5, 24, replace = TRUE)
    g2 <- rep(seq_len(24), size)
    g1 <- outer[g2]
    x <- stats::rnorm(length(g2))
    y <- 0.3 + 0.5 * x + stats::rnorm(6, 0, 0.8)[g1] + stats::rnorm(24, 0, 0.5)[g2] +
        stats::rnorm(length(g2))
    d <- data.frame(y, x, g1 = factor(g1), g2 = factor(g2))
    fit <- withr::with_seed(1, sgld(y ~ x, d, family = gaussian(), sigma = 1, n_iter = 20,
                                    standardize = FALSE, progress = FALSE))
    terms <- sgfs:::random_design(sgfs:::random_bars(y ~ x + (1 | g1/g2)), d)
    case <- list(d = d, spec = sgfs:::fit_spec(attr(fit, "sgfit")),
                 state = attr(fit, "sgfit")$states[[1L]])
    case$spec$ranef <- sgfs:::ranef_engine_spec(terms, 2L, list(family = "half_normal", scale = 1))
    expect_length(case$spec$ranef$nests, 1L)
    beta <- c(0.3, 0.5)
    res <- frozen_chain(case, beta, 30000L, seed = 15)
    ## the exact posterior of (s1, s2): y - X beta ~ N(0, I + s1^2 Z1 Z1' + s2^2 Z2 Z2')
    r <- d$y - drop(cbind(1, d$x) %*% beta)
    Z1 <- outer(d$g1, levels(d$g1), `==`) * 1
    Z2 <- outer(d$g2, levels(d$g2), `==`) * 1
    A1 <- tcrossprod(Z1)
    A2 <- tcrossprod(Z2)
    grid <- seq(0.01, 3, length.out = 90)
    lp <- outer(grid, grid, Vectorize(function(s1, s2) {
        U <- chol(diag(length(r)) + s1^2 * A1 + s2^2 * A2)
        -sum(log(diag(U))) - 0.5 * sum(backsolve(U, r, transpose = TRUE)^2) +
            stats::dnorm(s1, log = TRUE) + stats::dnorm(s2, log = TRUE)
    }))
    p <- exp(lp - max(lp))
    p <- p / sum(p)
    for (k in 1:2) {
        marginal <- if (k == 1) rowSums(p) else colSums(p)
        m <- sum(grid * marginal)
        expect_sd_matches(res$draws[, 2 + k], list(mean = m, sd = sqrt(sum((grid - m)^2 * marginal))),
                          sprintf("nested sd %d", k))
    }
})
