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
        sub <- sgfs:::slice_rows(spec, idx)
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
    ## (networks take poisson() too: test-mlp.R)
    expect_s3_class(sgld(y ~ a, data = d, family = poisson(), model = mlp(3), n_iter = 10,
                         progress = FALSE), "sgfit")
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
    J <- diag(length(lap$mode))              # (M as a matrix: its columns M e_k)
    M <- t(sgfs:::to_original(J, run$design) - rep(run$design$shift, each = nrow(J)))
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

## ---- offsets -----------------------------------------------------------

test_that("binomial and gaussian scores with an offset match finite differences", {
    d <- count_frame()
    x <- model.matrix(~ a + b + g, d)
    off <- log(d$expo)
    theta <- withr::with_seed(8, rnorm(ncol(x), sd = 0.5))
    yb <- as.double(d$y > 1)
    run <- engine_spec(x, yb, intercept = FALSE, batch_size = 6L)
    run$spec$offset <- off
    expect_scores_match_fd(run$spec, theta, c(3L, 17L, 40L, 41L, 59L))
    eta <- drop(x %*% theta) + off
    expect_equal(.Call(sgfs:::C_sgfs_model_loglik, run$spec, theta)$loglik,
                 sum(dbinom(yb, 1, plogis(eta), log = TRUE)), tolerance = 1e-12)
    idx <- c(2L, 9L, 11L, 30L, 44L, 58L)
    centre <- theta / 2
    ev <- model_eval(run$spec, theta, idx, centre)
    expect_equal(ev$change, ev$grad - model_eval(run$spec, centre, idx)$grad, tolerance = 1e-12)
    ## the one-pass score (no G, no log-likelihood) equals the gathered one
    one <- .Call(sgfs:::C_sgfs_model_loglik, run$spec, theta)$grad
    expect_equal(one, drop(crossprod(x, yb - plogis(eta))), tolerance = 1e-10, ignore_attr = TRUE)

    yg <- d$a + rnorm(60)
    run <- engine_spec(x, yg, family = gaussian(), intercept = FALSE, batch_size = 6L)
    run$spec$offset <- off
    th <- c(theta, log(1.3))
    expect_scores_match_fd(run$spec, th, c(1L, 2L, 30L, 60L))
    expect_equal(.Call(sgfs:::C_sgfs_model_loglik, run$spec, th)$loglik,
                 sum(dnorm(yg, eta, 1.3, log = TRUE)), tolerance = 1e-12)
    ev <- model_eval(run$spec, th, idx, c(centre, 0.1), second = TRUE)
    sub <- sgfs:::slice_rows(run$spec, idx)
    H <- .Call(sgfs:::C_sgfs_model_curvature, sub, c(centre, 0.1), FALSE)$neg_hessian
    first <- model_eval(run$spec, th, idx, c(centre, 0.1))$change
    expect_equal(first, ev$grad - model_eval(run$spec, c(centre, 0.1), idx)$grad, tolerance = 1e-12)
    expect_equal(ev$change, first + drop(H %*% (th - c(centre, 0.1))), tolerance = 1e-10)
})

test_that("the modes with an offset equal glm()'s, for the three GLM families", {
    d <- count_frame(N = 300)
    d$yb <- as.integer(d$y > 1)
    d$yg <- 1 + d$a - d$b + log(d$expo) + withr::with_seed(9, rnorm(300))
    weak <- normal(0, 1000)
    cases <- list(list(f = y ~ a + b + g + offset(log(expo)), fam = poisson()),
                  list(f = yb ~ a + b + g + offset(log(expo)), fam = binomial()),
                  list(f = yg ~ a + b + g + offset(log(expo)), fam = gaussian()))
    for (cs in cases) {
        ref <- glm(cs$f, family = cs$fam, data = d)
        fit <- sga(cs$f, data = d, family = cs$fam, prior = weak, prior_intercept = weak,
                   init = "map", n_iter = 2, burnin = 1, stepsize = 1e-12)
        est <- coef(fit)[names(coef(ref))]
        expect_equal(est, coef(ref), tolerance = 1e-4)
    }
})

test_that("Poisson with an offset (MASS::Insurance): posterior near glm's MLE, predict scales with it", {
    skip_if_not_installed("MASS")
    data(Insurance, package = "MASS")
    f <- Claims ~ District + Group + Age + offset(log(Holders))
    ref <- glm(f, family = poisson(), data = Insurance)
    se <- sqrt(diag(vcov(ref)))
    fit <- withr::with_seed(1, sgld(f, data = Insurance, family = poisson(), n_iter = 20000,
                                    progress = FALSE))
    ## the weak default prior: the posterior mean within a few posterior sd
    ## of the MLE (Monte Carlo error sd / sqrt(ESS), ESS in the hundreds)
    z <- (coef(fit) - coef(ref)) / se
    expect_lt(max(abs(z)), 0.5)
    expect_equal(unname(apply(as.matrix(fit), 2, sd) / se), rep(1, 10), tolerance = 0.25)
    ## the offset argument gives the same chain as the offset() term
    fit2 <- withr::with_seed(1, sgld(Claims ~ District + Group + Age, offset = log(Holders),
                                     data = Insurance, family = poisson(), n_iter = 20000,
                                     progress = FALSE))
    expect_equal(as.matrix(fit2), as.matrix(fit))
    ## predict: the training rows' offsets; newdata's own, evaluated there
    mu <- predict(fit, type = "response")
    expect_equal(unname(mu), unname(fitted(ref)), tolerance = 0.03)
    expect_equal(fitted(fit), mu)
    nd <- Insurance[1:5, ]
    nd2 <- transform(nd, Holders = 3 * Holders)
    expect_equal(predict(fit, nd, type = "response"), mu[1:5], ignore_attr = TRUE)
    expect_equal(predict(fit, nd2, type = "response"), 3 * mu[1:5], ignore_attr = TRUE,
                 tolerance = 1e-10)
    expect_equal(predict(fit2, nd2, type = "link"), predict(fit, nd, type = "link") + log(3),
                 ignore_attr = TRUE, tolerance = 1e-10)
    expect_error(predict(fit, nd, offset = 1:5), "'offset' is for fits given a matrix x")
    if (requireNamespace("rstantools", quietly = TRUE)) {
        ep <- rstantools::posterior_epred(fit, newdata = nd2, draws = 10)
        ep1 <- rstantools::posterior_epred(fit, newdata = nd, draws = 10)
        expect_equal(ep, 3 * ep1, tolerance = 1e-10)
        ll <- rstantools::log_lik(fit, draws = 10)
        lp <- rstantools::posterior_linpred(fit, draws = 10)
        expect_equal(ll, matrix(dpois(rep(Insurance$Claims, each = 10), exp(lp), log = TRUE), 10),
                     ignore_attr = TRUE, tolerance = 1e-10)
    }

    ## the matrix method: offset = ; new rows need theirs
    X <- model.matrix(ref)[, -1]
    fm <- withr::with_seed(1, sgld(X, Insurance$Claims, family = poisson(),
                                   offset = log(Insurance$Holders), n_iter = 2000,
                                   progress = FALSE))
    expect_error(predict(fm, X[1:3, ]), "'offset' is needed with newdata")
    expect_equal(predict(fm, X[1:3, ], offset = log(Insurance$Holders[1:3])),
                 predict(fm)[1:3], ignore_attr = TRUE)
    expect_error(predict(fm, X[1:3, ], offset = 1), "'offset' must be 3 numbers")
})

test_that("offsets are refused where they do not apply", {
    d <- count_frame()
    expect_error(sgld(y ~ a, data = d, family = poisson(), offset = 1:3, n_iter = 10),
                 "'offset' must have one number per row")
    expect_error(sgld(d[c("a", "b")], d$y, family = poisson(), offset = 1:3, n_iter = 10),
                 "'offset' must be 60 finite numbers")
    expect_error(sgld(g ~ a, data = d, family = categorical(), offset = d$a, n_iter = 10),
                 "'offset' is for GLMs")
    expect_error(sgld(y ~ a, data = d, family = poisson(), model = mlp(2), offset = d$a,
                      n_iter = 10), "'family'|'offset'")
    expect_error(sgld(y ~ a + offset(expo), data = d, family = poisson(),
                      keep = predictive(d[1:3, ]), n_iter = 10), "'offset' cannot be combined")
    fit <- sgld(y ~ a, data = d, family = poisson(), n_iter = 200, progress = FALSE)
    expect_error(predict(fit, d[1:2, ], offset = 1:2), "'offset' is given, but the fit")
})

test_that("SGLD and SGLD-CV chains of poisson and probit models, with offsets, equal the R replays", {
    off <- withr::with_seed(9, runif(50, -0.5, 0.5))
    for (fam in list(poisson(), binomial("probit"))) {
        for (o in list(NULL, off)) {
            p <- ref_problem(fam, offset = o)
            ## (a stable step: the Poisson posterior is the stiffer)
            eps <- if (fam$family == "poisson") 0.003 else 0.01
            set.seed(42)
            c1 <- c_chain(sgld, p, 10L, 40L, stepsize = eps)
            set.seed(42)
            r1 <- r_chain(p, 3, 10L, 40L, function(t) eps, sgld_update)
            expect_equal(unname(c1), r1, tolerance = 1e-12)
            centre <- c(0.3, -0.2, 0.1)
            set.seed(63)
            cc <- c_chain(sgldcv, p, 10L, 40L, stepsize = eps, centre = centre)
            set.seed(63)
            rc <- r_chain(p, 3, 10L, 40L, function(t) eps, sgld_update, theta0 = centre,
                          centre = centre)
            expect_equal(unname(cc), rc, tolerance = 1e-12)
        }
    }
})
