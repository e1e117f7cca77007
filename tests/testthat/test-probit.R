## binomial(link = "probit"): the C model against R and finite differences,
## its tails, its mode against glm(), the draw-level outputs.

probit_frame <- function(N = 80) {
    withr::with_seed(51, {
        d <- data.frame(a = rnorm(N), b = runif(N),
                        g = factor(sample(c("lo", "mid", "hi"), N, replace = TRUE)))
        d$y <- rbinom(N, 1, pnorm(-0.2 + 0.8 * d$a - 0.6 * d$b + 0.5 * (d$g == "hi")))
        d$o <- runif(N, -0.5, 0.5)
        d
    })
}

test_that("probit scores, log-likelihood, Hessian and score changes match R and finite differences", {
    d <- probit_frame()
    x <- model.matrix(~ a + b + g, d)
    run <- engine_spec(x, d$y, family = binomial("probit"), intercept = FALSE, batch_size = 6L)
    expect_identical(run$spec$model, "probit")
    theta <- withr::with_seed(4, rnorm(ncol(x), sd = 0.6))
    idx <- c(3L, 17L, 40L, 41L, 59L, 80L)
    for (off in list(NULL, d$o)) {
        spec <- run$spec
        spec$offset <- off
        expect_scores_match_fd(spec, theta, idx[1:5])
        eta <- drop(x %*% theta) + if (is.null(off)) 0 else off
        ll <- sum(dbinom(d$y, 1, pnorm(eta), log = TRUE))
        full <- .Call(sgfs:::C_sgfs_model_loglik, spec, theta)
        expect_equal(full$loglik, ll, tolerance = 1e-12)
        s <- 2 * d$y - 1
        expect_equal(full$grad, drop(crossprod(x, s * dnorm(eta) / pnorm(s * eta))),
                     tolerance = 1e-10, ignore_attr = TRUE)
        cur <- .Call(sgfs:::C_sgfs_model_curvature, spec, theta, FALSE)
        h <- 1e-5
        fd <- vapply(seq_along(theta), function(j) {
            e <- replace(double(length(theta)), j, h)
            -(model_eval(spec, theta + e, 1:80)$grad - model_eval(spec, theta - e, 1:80)$grad) /
                (2 * h)
        }, double(length(theta)))
        expect_equal(cur$neg_hessian, fd, tolerance = 1e-6)
        centre <- withr::with_seed(12, rnorm(ncol(x), sd = 0.6))
        ev <- model_eval(spec, theta, idx, centre)
        expect_equal(ev$change, ev$grad - model_eval(spec, centre, idx)$grad, tolerance = 1e-12)
        sub <- sgfs:::slice_rows(spec, idx)
        H <- .Call(sgfs:::C_sgfs_model_curvature, sub, centre, FALSE)$neg_hessian
        ev2 <- model_eval(spec, theta, idx, centre, second = TRUE)
        expect_equal(ev2$change, ev$change + drop(H %*% (theta - centre)), tolerance = 1e-10)
    }
})

test_that("the probit tails stay finite where Phi underflows", {
    x <- cbind(1, c(-1, 1, -1, 1))
    y <- c(1, 0, 0, 1)
    run <- engine_spec(x, y, family = binomial("probit"), intercept = FALSE, batch_size = 4L)
    for (b in c(40, 1e3, 1e6)) {
        theta <- c(0, b)          # rows 1, 2 on the wrong side by b, rows 3, 4 right
        ev <- model_eval(run$spec, theta, 1:4)
        expect_true(all(is.finite(c(ev$loglik, ev$grad, ev$scores))))
        expect_equal(ev$loglik, 2 * pnorm(-b, log.p = TRUE) + 2 * pnorm(b, log.p = TRUE),
                     tolerance = 1e-10)
        ## lambda(-b) ~ b: the wrong rows' residuals grow linearly
        expect_equal(abs(ev$scores[1:2, 2]), rep(b, 2), tolerance = 1 / b^2 + 1e-12)
        H <- .Call(sgfs:::C_sgfs_model_curvature, run$spec, theta, FALSE)$neg_hessian
        expect_true(all(is.finite(H)))
        ## the wrong rows' weights tend to 1, the right rows' to 0
        expect_equal(H[2, 2], 2 * (1 - 1 / b^2), tolerance = 1e-3)
    }
})

test_that("the probit mode equals glm()'s; chains and the draw-level outputs", {
    d <- probit_frame(N = 400)
    ref <- glm(y ~ a + b + g + offset(o), family = binomial("probit"), data = d)
    weak <- normal(0, 1000)
    fit <- sga(y ~ a + b + g + offset(o), data = d, family = binomial("probit"), prior = weak,
               prior_intercept = weak, init = "map", n_iter = 2, burnin = 1, stepsize = 1e-12)
    expect_equal(coef(fit)[names(coef(ref))], coef(ref), tolerance = 1e-4)

    se <- sqrt(diag(vcov(ref)))
    ch <- withr::with_seed(3, sgldcv(y ~ a + b + g + offset(o), data = d,
                                     family = binomial("probit"), n_iter = 6000,
                                     batch_size = 50, progress = FALSE))
    z <- (coef(ch) - coef(ref)) / se
    ## the default prior normal(0, 2.5) pulls a little at N = 400; the
    ## chain's mean has Monte Carlo error of sd / sqrt(ESS), ESS in the hundreds
    expect_lt(max(abs(z)), 0.5)
    expect_equal(unname(apply(as.matrix(ch), 2, sd) / se), rep(1, 5), tolerance = 0.25)
    expect_identical(family(ch)$link, "probit")
    p <- predict(ch, type = "response")
    expect_equal(unname(p), unname(fitted(ref)), tolerance = 0.05)
    expect_equal(residuals(ch, type = "pearson"), (d$y - p) / sqrt(p * (1 - p)),
                 ignore_attr = TRUE)
    expect_identical(predict(ch, type = "class"), as.integer(p > 0.5))
    skip_if_not_installed("rstantools")
    B <- as.matrix(ch)[1:20, ]
    eta <- B %*% t(model.matrix(ref)) + rep(d$o, each = 20)
    lp <- rstantools::posterior_linpred(ch, draws = Inf)[1:20, ]
    expect_equal(lp, eta, ignore_attr = TRUE, tolerance = 1e-10)
    expect_equal(rstantools::posterior_epred(ch, draws = Inf)[1:20, ], pnorm(eta), ignore_attr = TRUE,
                 tolerance = 1e-10)
    expect_equal(rstantools::log_lik(ch, draws = Inf)[1:20, ],
                 matrix(dbinom(rep(d$y, each = 20), 1, pnorm(eta), log = TRUE), 20),
                 ignore_attr = TRUE, tolerance = 1e-10)
    expect_error(sgld(y ~ a, data = d, family = binomial("probit"), model = mlp(2), n_iter = 10),
                 "'family'.*networks")
})
