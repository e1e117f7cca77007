## Poisson regression (log link): the C model's scores, curvature and
## control variates against R and finite differences; its mode against
## glm(); a chain's posterior mean against glm's on simulated counts; the
## predictive methods.

count_frame <- function(N = 60) {
    withr::with_seed(31, {
        d <- data.frame(a = rnorm(N), b = runif(N),
                        g = factor(sample(c("lo", "mid", "hi"), N, replace = TRUE)))
        d$y <- rpois(N, exp(0.3 + 0.5 * d$a - 0.8 * d$b + 0.4 * (d$g == "hi")))
        d$expo <- runif(N, 0.5, 3)
        d
    })
}

test_that("poisson scores, log-likelihood and Hessian match R and finite differences", {
    d <- count_frame()
    x <- model.matrix(~ a + b + g, d)
    run <- engine_spec(x, d$y, family = poisson(), intercept = FALSE, batch_size = 7L)
    expect_identical(run$spec$model, "poisson")
    theta <- withr::with_seed(4, rnorm(ncol(x), sd = 0.4))
    for (off in list(NULL, log(d$expo))) {
        spec <- run$spec
        spec$offset <- off
        expect_scores_match_fd(spec, theta, c(3L, 17L, 40L, 41L, 59L))
        eta <- drop(x %*% theta) + if (is.null(off)) 0 else off
        ll <- sum(dpois(d$y, exp(eta), log = TRUE))
        expect_equal(model_eval(spec, theta, 1:60)$loglik, ll, tolerance = 1e-12)
        full <- .Call(sgfs:::C_sgfs_model_loglik, spec, theta)
        expect_equal(full$loglik, ll, tolerance = 1e-12)
        expect_equal(full$grad, drop(crossprod(x, d$y - exp(eta))), tolerance = 1e-10,
                     ignore_attr = TRUE)
        cur <- .Call(sgfs:::C_sgfs_model_curvature, spec, theta, TRUE)
        expect_equal(cur$neg_hessian, crossprod(x * exp(eta), x), tolerance = 1e-10,
                     ignore_attr = TRUE)
        h <- 1e-5
        fd <- vapply(seq_along(theta), function(j) {
            e <- replace(double(length(theta)), j, h)
            -(model_eval(spec, theta + e, 1:60)$grad - model_eval(spec, theta - e, 1:60)$grad) /
                (2 * h)
        }, double(length(theta)))
        expect_equal(cur$neg_hessian, fd, tolerance = 1e-6)
    }
})

test_that("poisson control variates: first- and second-order score changes", {
    d <- count_frame()
    x <- model.matrix(~ a + b + g, d)
    run <- engine_spec(x, d$y, family = poisson(), intercept = FALSE, batch_size = 6L)
    idx <- c(2L, 9L, 11L, 30L, 44L, 58L)
    theta <- withr::with_seed(11, rnorm(ncol(x), sd = 0.4))
    centre <- withr::with_seed(12, rnorm(ncol(x), sd = 0.4))
    for (off in list(NULL, log(d$expo))) {
        spec <- run$spec
        spec$offset <- off
        ev <- model_eval(spec, theta, idx, centre)
        expect_equal(ev$change, ev$grad - model_eval(spec, centre, idx)$grad, tolerance = 1e-12)
        sub <- modifyList(spec, list(xt = spec$xt[, idx, drop = FALSE], y = spec$y[idx],
                                     batch_size = length(idx)))
        sub$offset <- off[idx]
        H <- .Call(sgfs:::C_sgfs_model_curvature, sub, centre, FALSE)$neg_hessian
        ev2 <- model_eval(spec, theta, idx, centre, second = TRUE)
        expect_equal(ev2$change, ev$change + drop(H %*% (theta - centre)), tolerance = 1e-10)
    }
})

test_that("poisson() validates its link and its response", {
    d <- count_frame()
    expect_error(sgld(y ~ a, data = d, family = poisson(link = "identity"), n_iter = 10),
                 "'family'.*link 'identity'.*poisson\\(link = \"log\"\\)")
    bad <- d
    bad$y[3] <- 1.5
    expect_error(sgld(y ~ a, data = bad, family = poisson(), n_iter = 10), "'y'.*counts")
    bad$y[3] <- -1
    expect_error(sgld(y ~ a, data = bad, family = poisson(), n_iter = 10), "'y'.*counts")
    expect_error(sgld(y ~ a, data = d, family = poisson(), model = mlp(3), n_iter = 10),
                 "'family'.*networks")
})

test_that("the poisson mode equals glm()'s estimate (MASS::Insurance)", {
    skip_if_not_installed("MASS")
    data(Insurance, package = "MASS")
    ref <- glm(Claims ~ District + Group + Age, family = poisson(), data = Insurance)
    ## a weak prior (on the standardised scale), so that the mode is glm's
    ## MLE up to the prior's small pull
    run <- engine_spec(model.matrix(ref), Insurance$Claims, family = poisson(),
                       standardize = TRUE, intercept = FALSE, prior = normal(0, 1000),
                       batch_size = 64L)
    lap <- sgfs:::posterior_laplace(run)
    expect_equal(sgfs:::to_original(lap$mode, run$design), coef(ref), tolerance = 1e-5,
                 ignore_attr = TRUE)
    ## the curvature there is glm's information
    H <- lap$H - diag(run$spec$prior_prec)
    M <- run$design$M
    expect_equal(M %*% solve(H) %*% t(M), vcov(ref), tolerance = 1e-5, ignore_attr = TRUE)
})

test_that("SGLD-CV's posterior mean on simulated counts is near glm's (Monte Carlo tolerance)", {
    N <- 2000
    d <- withr::with_seed(41, {
        d <- data.frame(a = rnorm(N), b = rnorm(N), f = factor(sample(letters[1:3], N, TRUE)))
        d$y <- rpois(N, exp(0.5 + 0.4 * d$a - 0.3 * d$b + 0.3 * (d$f == "b")))
        d
    })
    ref <- glm(y ~ a + b + f, family = poisson(), data = d)
    se <- sqrt(diag(vcov(ref)))
    fit <- withr::with_seed(42, sgldcv(y ~ a + b + f, data = d, family = poisson(),
                                       n_iter = 4000, batch_size = 100, progress = FALSE))
    ## the weak default prior moves the posterior mean by far less than a
    ## posterior sd at N = 2000; the chain's mean has Monte Carlo error
    ## sd / sqrt(ESS) with ESS in the hundreds
    z <- (coef(fit) - coef(ref)) / se
    expect_lt(max(abs(z)), 0.35)
    sds <- apply(as.matrix(fit), 2, sd)
    expect_equal(unname(sds / se), rep(1, 5), tolerance = 0.2)
    ## predict, fitted, residuals, family
    mu <- predict(fit, type = "response")
    expect_equal(mu, exp(predict(fit, type = "link")), tolerance = 0.02)
    expect_equal(unname(mu), unname(fitted(ref)), tolerance = 0.02)
    expect_equal(fitted(fit), mu)
    expect_equal(residuals(fit, type = "pearson"), (d$y - mu) / sqrt(mu), ignore_attr = TRUE)
    expect_identical(family(fit)$family, "poisson")
    nd <- d[1:3, ]
    expect_equal(predict(fit, newdata = nd, type = "response"), mu[1:3], ignore_attr = TRUE)
})

test_that("poisson draw-level outputs: linpred, epred, predict and log_lik", {
    skip_if_not_installed("rstantools")
    d <- count_frame(N = 200)
    fit <- withr::with_seed(5, sgld(y ~ a + b, data = d, family = poisson(), n_iter = 600,
                                    batch_size = 50, progress = FALSE))
    B <- as.matrix(fit)
    X <- model.matrix(~ a + b, d)
    eta <- B %*% t(X)
    expect_equal(rstantools::posterior_linpred(fit), eta, ignore_attr = TRUE, tolerance = 1e-10)
    expect_equal(rstantools::posterior_epred(fit), exp(eta), ignore_attr = TRUE,
                 tolerance = 1e-10)
    ll <- rstantools::log_lik(fit)
    expect_equal(ll, matrix(dpois(rep(d$y, each = nrow(B)), exp(eta), log = TRUE), nrow(B)),
                 ignore_attr = TRUE, tolerance = 1e-10)
    yrep <- rstantools::posterior_predict(fit, draws = 50, seed = 1)
    expect_identical(dim(yrep), c(50L, 200L))
    expect_true(all(yrep >= 0 & yrep == round(yrep)))
})

test_that("a diverging poisson chain stops with the divergence message, not a crash", {
    d <- count_frame()
    d$y[1] <- 200
    expect_error(withr::with_seed(3, sgld(y ~ a + b, data = d, family = poisson(),
                                          n_iter = 200, stepsize = 10, metric = "identity",
                                          batch_size = 10, progress = FALSE)),
                 class = "sgfs_divergence")
})
