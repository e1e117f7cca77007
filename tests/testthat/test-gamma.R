## Gamma regression (Gamma(link = "log"), the shape sampled as log_shape):
## the C model's scores, curvature and control variates against R's dgamma()
## and finite differences; its mode against glm() and MASS::gamma.shape();
## a chain against a long full-data hmc() run on MASS::Boston; the
## draw-level methods; bad input.

gamma_frame <- function(N = 80) {
    withr::with_seed(71, {
        d <- data.frame(a = rnorm(N), b = runif(N),
                        g = factor(sample(c("lo", "mid", "hi"), N, replace = TRUE)))
        d$expo <- runif(N, 0.5, 3)
        mu <- d$expo * exp(0.8 + 0.5 * d$a - 0.6 * d$b)
        d$y <- rgamma(N, shape = 4, rate = 4 / mu)
        d
    })
}

test_that("Gamma scores, log-likelihood and Hessian match dgamma() and finite differences", {
    d <- gamma_frame()
    x <- model.matrix(~ a + b + g, d)
    w <- withr::with_seed(72, runif(nrow(d), 0.5, 2))
    run <- engine_spec(x, d$y, family = Gamma(link = "log"), intercept = FALSE, batch_size = 7L)
    expect_identical(run$spec$model, "gamma")
    expect_identical(run$design$par_names, c(colnames(x), "log_shape"))
    theta <- c(withr::with_seed(73, rnorm(ncol(x), sd = 0.4)), log(2.5))
    P <- ncol(x)
    for (off in list(NULL, log(d$expo))) for (wt in list(NULL, w)) {
        spec <- run$spec
        spec$offset <- off
        spec$weights <- wt
        expect_scores_match_fd(spec, theta, c(3L, 17L, 40L, 41L, 79L))
        eta <- drop(x %*% theta[1:P]) + if (is.null(off)) 0 else off
        shape <- exp(theta[P + 1])
        ll <- sum((if (is.null(wt)) 1 else wt) *
                  dgamma(d$y, shape = shape, rate = shape / exp(eta), log = TRUE))
        expect_equal(model_eval(spec, theta, seq_len(nrow(d)))$loglik, ll, tolerance = 1e-12)
        expect_equal(.Call(sgfs:::C_sgfs_model_loglik, spec, theta)$loglik, ll, tolerance = 1e-12)
        cur <- .Call(sgfs:::C_sgfs_model_curvature, spec, theta, TRUE)
        h <- 1e-5
        fd <- vapply(seq_along(theta), function(j) {
            e <- replace(double(length(theta)), j, h)
            -(model_eval(spec, theta + e, seq_len(nrow(d)))$grad -
              model_eval(spec, theta - e, seq_len(nrow(d)))$grad) / (2 * h)
        }, double(length(theta)))
        expect_equal(cur$neg_hessian, fd, tolerance = 1e-6)
    }
})

test_that("Gamma control variates: first- and second-order score changes", {
    d <- gamma_frame()
    x <- model.matrix(~ a + b + g, d)
    run <- engine_spec(x, d$y, family = Gamma(link = "log"), intercept = FALSE, batch_size = 6L)
    idx <- c(2L, 9L, 11L, 30L, 44L, 78L)
    theta <- c(withr::with_seed(74, rnorm(ncol(x), sd = 0.4)), log(2))
    centre <- c(withr::with_seed(75, rnorm(ncol(x), sd = 0.4)), log(3.2))
    for (off in list(NULL, log(d$expo))) {
        spec <- run$spec
        spec$offset <- off
        expect_score_changes(spec, theta, centre, idx)
    }
})

test_that("the Gamma mode is glm()'s coefficients and MASS::gamma.shape()'s shape", {
    skip_if_not_installed("MASS")
    d <- MASS::Boston
    ref <- glm(medv ~ lstat + rm + crim, family = Gamma(link = "log"), data = d)
    run <- engine_spec(model.matrix(ref), d$medv, family = Gamma(link = "log"),
                       standardize = TRUE, intercept = FALSE, prior = normal(0, 1e4),
                       batch_size = 50L)
    run$spec$prior_scale[] <- 1e4                 # log_shape's prior too: the MLE
    run$spec$prior_prec[] <- 1e-8
    est <- sgfs:::to_original(sgfs:::posterior_laplace(run)$mode, run$design)
    shape <- MASS::gamma.shape(ref)$alpha
    expect_equal(est, c(coef(ref), log(shape)), tolerance = 1e-5, ignore_attr = TRUE)
})

test_that("sgldcv() at its defaults matches a long full-data hmc() run (MASS::Boston)", {
    skip_if_not_installed("MASS")
    f <- medv ~ lstat + rm + crim
    ref <- withr::with_seed(81, hmc(f, data = MASS::Boston, family = Gamma(link = "log"),
                                     n_iter = 6000, chains = 2, progress = FALSE))
    R <- as.matrix(ref)
    fit <- withr::with_seed(82, sgldcv(f, data = MASS::Boston, family = Gamma(link = "log"),
                                       progress = FALSE, verbose = FALSE))
    B <- as.matrix(fit)
    expect_identical(colnames(B), colnames(R))
    ## the two runs' means differ by their Monte Carlo errors, sd / sqrt(ESS)
    ## each with ESS of at least 400: within 0.3 posterior sd
    s <- apply(R, 2, sd)
    expect_lt(max(abs(colMeans(B) - colMeans(R)) / s), 0.3)
    expect_equal(unname(apply(B, 2, sd) / s), rep(1, ncol(R)), tolerance = 0.2)
})

test_that("Gamma fits' draw-level methods, and what Gamma() refuses", {
    d <- gamma_frame()
    fit <- withr::with_seed(91, sgld(y ~ a + b, data = d, family = Gamma(link = "log"),
                                     n_iter = 600, batch_size = 20, progress = FALSE))
    B <- as.matrix(fit)
    mu <- exp(cbind(1, d$a, d$b) %*% t(B[, 1:3]))
    expect_equal(rstantools::posterior_epred(fit, draws = Inf), t(mu), ignore_attr = TRUE,
                 tolerance = 1e-10)
    shape <- exp(B[, "log_shape"])
    ll <- t(matrix(dgamma(d$y, shape = rep(shape, each = nrow(d)),
                          rate = rep(shape, each = nrow(d)) / mu, log = TRUE), nrow(d)))
    expect_equal(rstantools::log_lik(fit, draws = Inf), ll, ignore_attr = TRUE, tolerance = 1e-10)
    yrep <- rstantools::posterior_predict(fit, draws = 50, seed = 1)
    expect_true(all(yrep > 0))
    expect_equal(dim(yrep), c(50L, nrow(d)))
    p <- residuals(fit, type = "pearson")
    m <- fitted(fit)
    expect_equal(p, (d$y - m) / sqrt(m^2 / mean(shape)), ignore_attr = TRUE, tolerance = 1e-10)
    bad <- d
    bad$y[3] <- 0
    expect_error(sgld(y ~ a, data = bad, family = Gamma(link = "log"), n_iter = 10),
                 "'y' must be positive finite numbers .* for Gamma\\(\\)")
    expect_error(sgld(y ~ a, data = d, family = Gamma(), n_iter = 10),
                 "'family' link 'inverse' is not supported for Gamma\\(\\): use Gamma\\(link = \"log\"\\)")
    expect_error(sgld(y ~ a, data = d, family = Gamma(link = "log"), sigma = 1, n_iter = 10),
                 "'sigma'")
})
