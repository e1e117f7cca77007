## Negative binomial regression (neg_binomial_2(), log link, phi sampled as
## log_phi): the C model's scores, curvature and control variates against R
## and finite differences; its mode against MASS::glm.nb(); a chain against
## a long full-data hmc() run; the draw-level methods; bad input.

nb_frame <- function(N = 80) {
    withr::with_seed(51, {
        d <- data.frame(a = rnorm(N), b = runif(N),
                        g = factor(sample(c("lo", "mid", "hi"), N, replace = TRUE)))
        d$expo <- runif(N, 0.5, 3)
        d$y <- rnbinom(N, size = 1.5, mu = d$expo * exp(0.8 + 0.5 * d$a - 0.6 * d$b))
        d
    })
}

test_that("negative binomial scores, log-likelihood and Hessian match R and finite differences", {
    d <- nb_frame()
    x <- model.matrix(~ a + b + g, d)
    w <- withr::with_seed(52, runif(nrow(d), 0.5, 2))
    run <- engine_spec(x, d$y, family = neg_binomial_2(), intercept = FALSE, batch_size = 7L)
    expect_identical(run$spec$model, "negbin")
    expect_identical(run$design$par_names, c(colnames(x), "log_phi"))
    theta <- c(withr::with_seed(53, rnorm(ncol(x), sd = 0.4)), log(2.5))
    P <- ncol(x)
    for (off in list(NULL, log(d$expo))) for (wt in list(NULL, w)) {
        spec <- run$spec
        spec$offset <- off
        spec$weights <- wt
        expect_scores_match_fd(spec, theta, c(3L, 17L, 40L, 41L, 79L))
        eta <- drop(x %*% theta[1:P]) + if (is.null(off)) 0 else off
        ll <- sum((if (is.null(wt)) 1 else wt) *
                  dnbinom(d$y, size = exp(theta[P + 1]), mu = exp(eta), log = TRUE))
        expect_equal(model_eval(spec, theta, seq_len(nrow(d)))$loglik, ll, tolerance = 1e-12)
        full <- .Call(sgfs:::C_sgfs_model_loglik, spec, theta)
        expect_equal(full$loglik, ll, tolerance = 1e-12)
        cur <- .Call(sgfs:::C_sgfs_model_curvature, spec, theta, TRUE)
        h <- 1e-5
        fd <- vapply(seq_along(theta), function(j) {
            e <- replace(double(length(theta)), j, h)
            -(model_eval(spec, theta + e, seq_len(nrow(d)))$grad -
              model_eval(spec, theta - e, seq_len(nrow(d)))$grad) / (2 * h)
        }, double(length(theta)))
        expect_equal(cur$neg_hessian, fd, tolerance = 1e-6)
    }
    ## large counts and a large phi stay finite and exact (log-sum-exp)
    spec <- run$spec
    spec$y <- spec$y * 1000
    big <- c(theta[1:P], log(1e6))
    eta <- drop(x %*% big[1:P])
    expect_equal(model_eval(spec, big, 1:10)$loglik,
                 sum(dnbinom(spec$y[1:10], size = 1e6, mu = exp(eta[1:10]), log = TRUE)),
                 tolerance = 1e-9)
})

test_that("negative binomial control variates: first- and second-order score changes", {
    d <- nb_frame()
    x <- model.matrix(~ a + b + g, d)
    run <- engine_spec(x, d$y, family = neg_binomial_2(), intercept = FALSE, batch_size = 6L)
    idx <- c(2L, 9L, 11L, 30L, 44L, 78L)
    theta <- c(withr::with_seed(54, rnorm(ncol(x), sd = 0.4)), log(2))
    centre <- c(withr::with_seed(55, rnorm(ncol(x), sd = 0.4)), log(1.2))
    for (off in list(NULL, log(d$expo))) {
        spec <- run$spec
        spec$offset <- off
        expect_score_changes(spec, theta, centre, idx)
    }
})

test_that("the negative binomial mode equals MASS::glm.nb()'s estimate (MASS::quine)", {
    skip_if_not_installed("MASS")
    quine <- MASS::quine
    ref <- MASS::glm.nb(Days ~ Sex + Age + Eth + Lrn, data = quine)
    run <- engine_spec(model.matrix(ref), quine$Days, family = neg_binomial_2(),
                       standardize = TRUE, intercept = FALSE, prior = normal(0, 1e4),
                       batch_size = 50L)
    run$spec$prior_scale[] <- 1e4                 # log_phi's prior too: the MLE
    run$spec$prior_prec[] <- 1e-8
    lap <- sgfs:::posterior_laplace(run)
    est <- sgfs:::to_original(lap$mode, run$design)
    expect_equal(est, c(coef(ref), log(ref$theta)), tolerance = 1e-5, ignore_attr = TRUE)
})

test_that("sgldcv() at its defaults matches a long full-data hmc() run (MASS::quine)", {
    skip_if_not_installed("MASS")
    quine <- MASS::quine
    f <- Days ~ Sex + Age + Eth + Lrn
    ref <- withr::with_seed(61, hmc(f, data = quine, family = neg_binomial_2(), n_iter = 6000,
                                     chains = 2, progress = FALSE))
    R <- as.matrix(ref)
    fit <- withr::with_seed(62, sgldcv(f, data = quine, family = neg_binomial_2(),
                                       n_iter = 8000, progress = FALSE))
    B <- as.matrix(fit)
    expect_identical(colnames(B), colnames(R))
    expect_identical(colnames(B)[ncol(B)], "log_phi")
    ## the two chains' means differ by their Monte Carlo errors, sd / sqrt(ESS)
    ## each with ESS in the hundreds: well within 0.35 posterior sd
    s <- apply(R, 2, sd)
    expect_lt(max(abs(colMeans(B) - colMeans(R)) / s), 0.35)
    expect_equal(unname(apply(B, 2, sd) / s), rep(1, ncol(R)), tolerance = 0.2)
    ## the posterior sits near the MLE (146 rows, a weak prior)
    mle <- MASS::glm.nb(f, data = quine)
    expect_lt(max(abs(colMeans(R)[seq_along(coef(mle))] - coef(mle)) /
                  s[seq_along(coef(mle))]), 0.4)
})

test_that("negative binomial draw-level outputs: linpred, epred, predict, log_lik, residuals", {
    skip_if_not_installed("rstantools")
    d <- nb_frame(N = 200)
    fit <- withr::with_seed(5, sgld(y ~ a + b + offset(log(expo)), data = d,
                                    family = neg_binomial_2(), n_iter = 600, batch_size = 50,
                                    progress = FALSE))
    B <- as.matrix(fit)
    X <- model.matrix(~ a + b, d)
    eta <- B[, 1:3] %*% t(X) + rep(log(d$expo), each = nrow(B))
    phi <- exp(B[, "log_phi"])
    expect_equal(rstantools::posterior_linpred(fit), eta, ignore_attr = TRUE, tolerance = 1e-10)
    expect_equal(rstantools::posterior_epred(fit), exp(eta), ignore_attr = TRUE,
                 tolerance = 1e-10)
    ll <- rstantools::log_lik(fit)
    expect_equal(ll, matrix(dnbinom(rep(d$y, each = nrow(B)), size = rep(phi, ncol(eta)),
                                    mu = exp(eta), log = TRUE), nrow(B)),
                 ignore_attr = TRUE, tolerance = 1e-10)
    ## the weights multiply each row's log density (frequency weights)
    w <- rep(c(1, 2), 100)
    fw <- withr::with_seed(5, sgld(y ~ a + b, data = d, weights = w, family = neg_binomial_2(),
                                   n_iter = 50, batch_size = 50, progress = FALSE))
    Bw <- as.matrix(fw)
    expect_equal(rstantools::log_lik(fw),
                 matrix(rep(w, each = nrow(Bw)) *
                        dnbinom(rep(d$y, each = nrow(Bw)), size = rep(exp(Bw[, 4]), 200),
                                mu = exp(Bw[, 1:3] %*% t(X)), log = TRUE), nrow(Bw)),
                 ignore_attr = TRUE, tolerance = 1e-10)
    ## posterior_predict: counts, reproducible, with the draws' spread
    yrep <- rstantools::posterior_predict(fit, draws = 400, seed = 1)
    expect_identical(dim(yrep), c(400L, 200L))
    expect_true(all(yrep >= 0 & yrep == round(yrep)))
    expect_identical(yrep, rstantools::posterior_predict(fit, draws = 400, seed = 1))
    ## over-dispersed as the data are: the draws' variance about the mean
    ## exceeds a Poisson's (mu + mu^2 / phi, phi near 1.5)
    mu <- colMeans(rstantools::posterior_epred(fit))
    expect_gt(mean((yrep - rep(mu, each = 400))^2) / mean(mu), 2)
    ## fitted and Pearson residuals with the posterior mean of phi
    m <- fitted(fit)
    expect_equal(residuals(fit, type = "pearson"),
                 (d$y - m) / sqrt(m + m^2 / mean(phi)), ignore_attr = TRUE)
    expect_identical(family(fit)$family, "neg_binomial_2")
    ## a fit that keeps its predictive gives the means
    kp <- withr::with_seed(6, sgld(y ~ a + b, data = d, family = neg_binomial_2(),
                                   n_iter = 300, batch_size = 50, progress = FALSE,
                                   keep = predictive(d[1:5, ])))
    expect_equal(length(predict(kp, type = "response")), 5L)
    expect_true(all(predict(kp, type = "response") > 0))
})

test_that("neg_binomial_2() validates its link, its response and what it cannot do", {
    d <- nb_frame()
    expect_error(neg_binomial_2("identity"), "'link'.*\"log\"")
    bad <- d
    bad$y[3] <- 1.5
    expect_error(sgld(y ~ a, data = bad, family = neg_binomial_2(), n_iter = 10),
                 "'y'.*counts.*neg_binomial_2\\(\\)")
    expect_error(sgld(y ~ a, data = d, family = neg_binomial_2(), sigma = 1, n_iter = 10),
                 "'sigma'.*gaussian")
    expect_error(sgld(y ~ a, data = d, family = neg_binomial_2(), model = mlp(3), n_iter = 10),
                 "'family'.*neg_binomial_2.*GLMs")
    d$log_phi <- d$a
    expect_error(sgld(y ~ log_phi, data = d, family = neg_binomial_2(), n_iter = 10),
                 "'x'.*log_phi")
    ## the family by name
    fit <- sgld(y ~ a, data = nb_frame(), family = "neg_binomial_2", n_iter = 20,
                progress = FALSE)
    expect_identical(family(fit)$family, "neg_binomial_2")
})
