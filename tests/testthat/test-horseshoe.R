## The regularised horseshoe hs() (issue 16, item 3): its log posterior in
## the sampler's coordinates against an independent R version, the prior
## alone sampled exactly, the draws' columns and the methods, rstanarm's
## hs() objects, refusals.  (A sparse logistic regression against long HMC
## runs: test-horseshoe-posterior.R, in the slow tier.)

## a small sparse logistic problem: 2 of p coefficients non-zero
hs_data <- function(N = 200, p = 6, seed = 5) {
    withr::with_seed(seed, {
        x <- matrix(rnorm(N * p), N, dimnames = list(NULL, paste0("v", seq_len(p))))
        y <- rbinom(N, 1, plogis(0.3 + 1.5 * x[, 1] - x[, 2]))
    })
    list(x = x, y = y)
}

hs_run <- function(x, y, prior, family = binomial(), standardize = FALSE, prior_intercept = NULL) {
    sgfs:::prepare_run(x, y, family, prior, prior_intercept, 10L, 10L, 0L, 1L, 1L, 1L, NULL,
                       standardize, FALSE, NULL, TRUE)
}

## the log posterior in xi = (intercept, z_1..p, log lambda_1..p, log tau,
## log c^2), from the definitions (R's densities, the Jacobians of the
## logs); a centred coefficient is beta_j itself, ~ N(0, s_j^2)
hs_logpost_r <- function(xi, x, y, w, par, centred = rep(FALSE, ncol(x)), icpt_sd = 2.5) {
    p <- ncol(x)
    z <- xi[1 + seq_len(p)]
    lambda <- exp(xi[1 + p + seq_len(p)])
    tau <- exp(xi[2 + 2 * p])
    c2 <- exp(xi[3 + 2 * p])
    lt <- sqrt(c2 * lambda^2 / (c2 + tau^2 * lambda^2))
    s <- w * tau * lt
    beta <- c(xi[1], ifelse(centred, z, z * s))
    eta <- drop(cbind(1, x) %*% beta)
    half_t <- function(v, df, s) log(2) + dt(v / s, df, log = TRUE) - log(s)
    a <- par[4] / 2
    b <- par[4] * par[5]^2 / 2
    sum(dbinom(y, 1, plogis(eta), log = TRUE)) + dnorm(xi[1], 0, icpt_sd, log = TRUE) +
        sum(ifelse(centred, dnorm(z, 0, s, log = TRUE), dnorm(z, log = TRUE))) +
        sum(half_t(lambda, par[1], 1) + log(lambda)) +
        half_t(tau, par[2], par[3]) + log(tau) +
        a * log(b) - lgamma(a) - (a + 1) * log(c2) - b / c2 + log(c2)
}

test_that("the horseshoe's log posterior and gradient in its coordinates match R", {
    d <- hs_data()
    prior <- hs(df = 3, global_df = 2, global_scale = 0.05, slab_df = 5, slab_scale = 2)
    run <- hs_run(d$x, d$y, prior)
    expect_equal(run$spec$hs$idx, 1:6)                  # 0-based: the intercept is left out
    ## the coefficients the data pin down are centred: v1 and v2
    expect_equal(run$spec$hs$centred, c(1L, 1L, 0L, 0L, 0L, 0L))
    centred <- run$spec$hs$centred == 1L
    expect_equal(run$design$par_names[8:15],
                 c(paste0("hs_lambda[v", 1:6, "]"), "hs_tau", "hs_c"))
    expect_equal(length(run$theta0), 15L)
    par <- c(3, 2, 0.05, 5, 2)
    for (seed in 1:3) {
        xi <- withr::with_seed(seed, rnorm(15, sd = 1.5))
        ev <- sgfs:::hs_log_posterior(run$spec, xi)
        expect_equal(ev$value, hs_logpost_r(xi, d$x, d$y, 1, par, centred), tolerance = 1e-10)
        fd <- vapply(1:15, function(j) {
            e <- replace(double(15), j, 1e-6)
            (hs_logpost_r(xi + e, d$x, d$y, 1, par, centred) -
                 hs_logpost_r(xi - e, d$x, d$y, 1, par, centred)) / 2e-6
        }, 0)
        expect_equal(ev$grad, fd, tolerance = 1e-6)
        ## and without centring
        nc <- run
        nc$spec$hs$centred <- integer(6)
        expect_equal(sgfs:::hs_log_posterior(nc$spec, xi)$value,
                     hs_logpost_r(xi, d$x, d$y, 1, par), tolerance = 1e-10)
        ## the kept values and their inverse
        rep <- ev$report
        expect_equal(rep[8:15], c(exp(xi[8:13]), exp(xi[14]), exp(xi[15] / 2)))
        expect_equal(sgfs:::hs_report_to_xi(rep, run$design), xi, tolerance = 1e-10)
    }
})

test_that("the horseshoe prior alone is sampled with its quantiles", {
    ## data of negligible weight: the posterior is the prior
    x <- matrix(c(1e-7, -1e-7, 2e-7, -2e-7, 1e-7, 0), 3, dimnames = list(NULL, c("a", "b")))
    y <- c(0, 1, 1)
    prior <- hs(df = 1, global_df = 1, global_scale = 0.5, slab_df = 4, slab_scale = 2)
    fit <- withr::with_seed(3, hmc(x, y, prior = prior, intercept = FALSE, standardize = FALSE,
                                   n_iter = 30000, verbose = FALSE))
    d <- as.matrix(fit)
    p <- c(0.1, 0.25, 0.5, 0.75, 0.9)
    ## log quantiles of tau ~ half-Cauchy(0.5), lambda ~ half-Cauchy(1),
    ## c^2 ~ Inv-Gamma(2, 8)
    expect_equal(unname(log(quantile(d[, "hs_tau"], p))), log(0.5 * qcauchy((1 + p) / 2)),
                 tolerance = 0.15)
    expect_equal(unname(log(quantile(d[, "hs_lambda[a]"], p))), log(qcauchy((1 + p) / 2)),
                 tolerance = 0.15)
    expect_equal(unname(log(quantile(d[, "hs_c"]^2, p))), log(1 / qgamma(1 - p, 2, 8)),
                 tolerance = 0.1)
    ## the coefficient: z tau lambda~, symmetric about 0
    expect_lt(abs(median(d[, "a"])), 0.05)
})

test_that("hs() fits: columns, coef(), predict(), prior_summary(), update()", {
    d <- hs_data()
    df <- data.frame(d$x, y = d$y)
    fit <- withr::with_seed(4, sgldcv(y ~ ., data = df, prior = hs(global_scale = 0.05),
                                      n_iter = 2000, verbose = FALSE))
    nm <- colnames(as.matrix(fit))
    expect_identical(nm[1:7], c("(Intercept)", paste0("v", 1:6)))
    expect_identical(nm[8:15], c(paste0("hs_lambda[v", 1:6, "]"), "hs_tau", "hs_c"))
    expect_identical(names(coef(fit)), nm[1:7])
    expect_identical(dim(vcov(fit)), c(7L, 7L))
    expect_true(all(as.matrix(fit)[, 8:15] > 0))
    p <- predict(fit, newdata = df[1:5, ], type = "response")
    expect_length(p, 5)
    expect_true(all(p > 0 & p < 1))
    expect_identical(dim(rstantools::posterior_linpred(fit, draws = 10)), c(10L, 200L))
    s <- summary(fit)
    expect_true("hs_tau" %in% rownames(s$statistics))
    ps <- rstantools::prior_summary(fit)
    tab <- ps$table
    expect_equal(tab$prior, c("normal", rep("hs", 6), rep("half_student_t", 7), "slab"))
    expect_equal(tab$scale[c(2, 14, 15)], c(0.05, 0.05, 2.5))
    expect_equal(tab$scale_original[2], 0.05 / sd(d$x[, 1]))
    expect_equal(tab$slab_scale_original[2], 2.5 / sd(d$x[, 1]))
    expect_true(tab$default[1])
    out <- capture.output(print(ps))
    expect_true(any(grepl("Horseshoe", out)))
    ## a continued chain starts where it stopped (the state is in xi)
    more <- withr::with_seed(5, update(fit, 500))
    expect_equal(coda::niter(more), coda::niter(fit) + 500)
})

test_that("rstanarm's hs() objects: scales on the scale of the draws", {
    d <- hs_data()
    rs_hs <- list(dist = "hs", df = 1, location = 0, scale = 1, global_df = 1,
                  global_scale = 0.01, slab_df = 4, slab_scale = 2.5)
    run <- hs_run(d$x, d$y, rs_hs, standardize = TRUE)
    expect_equal(run$spec$hs$w, unname(apply(d$x, 2, sd)))
    run <- hs_run(d$x, d$y, hs(), standardize = TRUE)
    expect_equal(run$spec$hs$w, rep(1, 6))
    expect_error(hs_run(d$x, d$x[, 1], rs_hs, family = gaussian(), standardize = TRUE),
                 "'prior' is rstanarm's hs\\(\\), whose global scale for a gaussian\\(\\) response")
})

test_that("hs() is refused where it cannot be sampled, naming the argument", {
    d <- hs_data()
    ## the samplers whose kind declares it, each of which the engine runs
    expect_setequal(sgfs:::horseshoe_samplers(), c("sgld", "sgldcv", "mala", "hmc"))
    for (m in sgfs:::horseshoe_samplers())
        expect_s3_class(suppressWarnings(get(m, asNamespace("sgfs"))(
            d$x, d$y, prior = hs(), n_iter = 20, burnin = 10, progress = FALSE)), "mcmc")
    expect_error(sgfs(d$x, d$y, prior = hs(), n_iter = 10),
                 "'prior' is a horseshoe, .* sgfs\\(\\) does not sample it")
    expect_error(sga(d$x, d$y, prior = hs(), n_iter = 10), "sga\\(\\) does not sample it")
    expect_error(sgld(d$x, d$y, prior = hs(), model = mlp(2), n_iter = 10),
                 "'prior' is a horseshoe, which is available for GLMs")
    expect_error(sgld(d$x, d$y, prior_intercept = hs(), n_iter = 10),
                 "'prior_intercept' is a horseshoe, a prior for the coefficients")
    expect_error(hs(global_scale = -1), "'global_scale' must be a finite positive number")
    expect_error(sgld(y ~ ., data = data.frame(d$x, y = d$y), prior = hs(), n_iter = 10,
                      keep = predictive(data.frame(d$x)[1:2, ])),
                 "'keep' must be \"draws\" with a horseshoe prior")
    expect_error(ksd(suppressWarnings(sgldcv(d$x, d$y, prior = hs(), n_iter = 300,
                                             verbose = FALSE))),
                 "'fit' has a horseshoe prior")
    expect_error(sgldcv(d$x, d$y, prior = hs(), centre = rep(0, 7), n_iter = 10),
                 "'centre' is computed with a horseshoe prior")
})
