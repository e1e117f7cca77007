## Networks (mlp()): gradients, per-example scores and log-likelihoods of
## every architecture, activation and family against finite differences and
## an R forward pass; the samplers on a network; names, blocks, priors,
## initialisation, predict() and bad input.

net_families <- list(binomial = list(family = binomial(), y = "yb"),
                     gaussian = list(family = gaussian(), y = "yg"),
                     categorical = list(family = categorical(), y = "yc"),
                     poisson = list(family = poisson(), y = "yp"))

## R's log-likelihood of the examples from its own forward pass
r_loglik <- function(design, theta, x, y, family) {
    z <- r_mlp_forward(design, theta, x)
    switch(family$family,
           binomial = sum(dbinom(y, 1, plogis(z), log = TRUE)),
           gaussian = sum(dnorm(y, z, exp(theta[length(theta)]), log = TRUE)),
           poisson = sum(dpois(y, exp(z), log = TRUE)),
           categorical = {
               lz <- cbind(0, z)
               sum(lz[cbind(seq_along(y), as.integer(y))] - log(rowSums(exp(lz))))
           })
}

test_that("network scores match finite differences for every architecture, activation and family", {
    d <- net_data()
    idx <- c(2L, 9L, 23L, 40L)
    for (fam in net_families)
        for (hidden in list(4L, c(3L, 2L)))
            for (act in c("tanh", "logistic", "relu")) {
                run <- engine_spec(d$x, d[[fam$y]], family = fam$family,
                                   model = mlp(hidden, act), batch_size = 5L)
                theta <- withr::with_seed(7, rnorm(run$design$D))
                expect_scores_match_fd(run$spec, theta, idx)
                ## the C log-likelihood is R's: y as the engine codes it
                y <- d[[fam$y]][idx]
                expect_equal(model_eval(run$spec, theta, idx)$loglik,
                             r_loglik(run$design, theta, d$x[idx, ], y, fam$family),
                             tolerance = 1e-12)
            }
})

test_that("a gaussian network with fixed sigma has no log_sigma and matches finite differences", {
    d <- net_data()
    run <- engine_spec(d$x, d$yg, family = gaussian(), sigma = 0.5, model = mlp(3))
    expect_equal(run$design$D, 3 * 4 + 4)
    expect_false("log_sigma" %in% run$design$par_names)
    expect_scores_match_fd(run$spec, withr::with_seed(8, rnorm(16)), c(1L, 4L))
})

test_that("parameter names, counts and blocks follow the layout", {
    d <- net_data()
    run <- engine_spec(d$x, d$yc, family = categorical(), model = mlp(c(5, 4)))
    ## 3 -> 5 -> 4 -> 2 (three classes, the first the reference)
    expect_equal(run$design$D, 3 * 5 + 5 + 5 * 4 + 4 + 4 * 2 + 2)
    nm <- run$design$par_names
    expect_equal(nm[1:4], c("W1[1,1]", "W1[2,1]", "W1[3,1]", "W1[1,2]"))
    expect_equal(nm[16:20], sprintf("b1[%d]", 1:5))
    expect_equal(tail(nm, 2), c("b3[1]", "b3[2]"))
    expect_equal(run$design$groups, rep(1:3, c(20, 24, 10)))
    ## the SGFS paper's MNIST network: 20 inputs, 30 tanh units, 10 classes
    ## (here with the reference class: 9 output units)
    x <- matrix(rnorm(400), 20, 20)
    run <- engine_spec(x, factor(rep(0:9, 2)), family = categorical(), model = mlp(30))
    expect_equal(run$design$D, 30 * 21 + 9 * 31)
    g <- engine_spec(d$x, d$yg, family = gaussian(), model = mlp(3))$design
    expect_equal(tail(g$par_names, 1), "log_sigma")
    expect_equal(g$groups, rep(1:3, c(12, 4, 1)))
})

test_that("the central-difference Hessian of a network equals the Jacobian of its score", {
    d <- net_data()
    run <- engine_spec(d$x, d$yb, model = mlp(3), batch_size = 7L)
    theta <- withr::with_seed(9, rnorm(run$design$D, sd = 0.5))
    H <- .Call(sgfs:::C_sgfs_model_curvature, run$spec, theta, TRUE)$neg_hessian
    N <- nrow(d$x)
    J <- vapply(seq_along(theta), function(j) {
        e <- replace(double(length(theta)), j, 1e-5)
        -(model_eval(run$spec, theta + e, seq_len(N))$grad -
              model_eval(run$spec, theta - e, seq_len(N))$grad) / 2e-5
    }, theta)
    expect_equal(H, (J + t(J)) / 2, tolerance = 1e-6)
    expect_equal(H, t(H))
})

test_that("the random start is reproducible, not symmetric, and scaled by fan-in", {
    d <- net_data(N = 200)
    start <- function(act) {
        set.seed(3)
        fit <- suppressWarnings(sgld(d$x, d$yb, model = mlp(50, act), n_iter = 2L,
                                     burnin = 1L, init = NULL, stepsize = 1e-12))
        attr(fit, "sgfit")$states[[1]]$theta
    }
    a <- start("tanh")
    expect_identical(a, start("tanh"))
    W1 <- a[1:150]
    expect_equal(sd(W1), sqrt(1 / 3), tolerance = 0.15)
    expect_equal(sd(start("relu")[1:150]), sqrt(2 / 3), tolerance = 0.15)
    W2 <- a[201:250]
    expect_equal(sd(W2), sqrt(1 / 50), tolerance = 0.25)
    expect_gt(length(unique(round(W2, 12))), 45)
})

test_that("every sampler runs on a network", {
    d <- net_data(N = 300)
    runs <- list(
        sgfs_full = function(...) sgfs(..., preconditioner = "full"),
        sgfs_diag = function(...) sgfs(..., preconditioner = "diagonal"),
        sgfs_block = function(...) sgfs(..., preconditioner = "block"),
        sgld = sgld, sgldcv = sgldcv, psgld = psgld, sghmc = sghmc, sgnht = sgnht,
        isgd = isgd, osgfs = osgfs, mala = mala, hmc = hmc)
    for (fam in net_families) {
        for (name in names(runs)) {
            set.seed(1)
            run <- function() suppressWarnings(runs[[name]](d$x, d[[fam$y]], family = fam$family,
                                                            model = mlp(3), batch_size = 50L,
                                                            n_iter = 400L, prior = normal(0, 1)))
            if (name == "osgfs" && fam$family$family == "poisson") {
                ## OSGFS's Gaussian steps from a fixed curvature overflow the
                ## exp() of a Poisson network's output: it stops, saying why
                expect_error(run(), "diverged|needs a local mode")
                next
            }
            fit <- run()
            info <- attr(fit, "sgfit")
            expect_s3_class(fit, "sgfit")
            expect_true(all(is.finite(as.matrix(fit))), label = paste(name, fam$family))
            expect_equal(colnames(fit), info$design$par_names)
            if (name == "sgfs_block")      # one block per layer (and log sigma)
                expect_equal(info$settings$blocks, as.vector(table(info$design$groups)))
        }
        map <- sga(d$x, d[[fam$y]], family = fam$family, model = mlp(3), n_iter = 500L)
        expect_true(all(is.finite(coef(map))))
    }
})

test_that("predict() averages a network's predictive over the draws", {
    set.seed(2)
    fit <- suppressWarnings(sgld(Species ~ ., data = iris, family = categorical(),
                                 model = mlp(4), prior = normal(0, 1), n_iter = 3000L,
                                 batch_size = 30L))
    p <- predict(fit, type = "response")
    expect_equal(dim(p), c(150L, 3L))
    expect_equal(unname(rowSums(p)), rep(1, 150), tolerance = 1e-12)
    expect_gt(mean(predict(fit, type = "class") == iris$Species), 0.9)
    ## the same from the draws by hand (R forward pass on the standardised
    ## inputs)
    info <- attr(fit, "sgfit")
    U <- scale(as.matrix(iris[1:4]), info$design$center, info$design$scale)
    draws <- as.matrix(fit)
    by_hand <- Reduce(`+`, lapply(seq_len(nrow(draws)), function(s)
        categorical()$linkinv(r_mlp_forward(info$design, draws[s, ], U)))) / nrow(draws)
    expect_equal(unname(p), by_hand, tolerance = 1e-12)
    ## newdata, and a thinned set of draws
    q <- predict(fit, newdata = iris[c(1, 51, 101), ], type = "response", draws = 100)
    expect_equal(dim(q), c(3L, 3L))
})

test_that("a gaussian network's predictions are on the response's scale", {
    d <- net_data(N = 400)
    y <- 100 + 20 * d$yg
    set.seed(4)
    fit <- suppressWarnings(sgld(d$x, y, family = gaussian(), model = mlp(8),
                                 n_iter = 4000L, batch_size = 50L))
    pred <- predict(fit)
    expect_lt(sqrt(mean((pred - y)^2)), 0.6 * sd(y))
    expect_equal(mean(pred), mean(y), tolerance = 0.02)
    expect_lt(abs(mean(exp(as.matrix(fit)[, "log_sigma"])) / 20 - 0.3), 0.15)
})

test_that("bad network arguments give clear errors", {
    d <- net_data()
    expect_error(mlp(0), "'hidden' must be one or two whole numbers between 1 and 1e6")
    expect_error(mlp(c(2, 2, 2)), "'hidden'")
    expect_error(mlp(2.5), "'hidden'")
    expect_error(mlp(3, "softsign"), "'activation' must be one of")
    expect_error(sgld(d$x, d$yb, model = "mlp"), "'model' must be NULL")
    expect_error(sgld(d$x, d$yb, model = mlp(3), prior = list(normal(0, 1))),
                 "'prior' must be a prior or a list of 2 priors")
    expect_error(sgld(d$x, d$yb, model = mlp(3), prior_intercept = normal(0, 1)),
                 "'prior_intercept' is for GLMs")
})

test_that("constant inputs (MNIST's border pixels) are allowed: their weights follow the prior", {
    d <- net_data()
    x <- cbind(d$x, k = 1)
    set.seed(5)
    fit <- sgld(x, d$yb, model = mlp(3), n_iter = 300, batch_size = 20, stepsize = 1e-3,
                progress = FALSE)
    draws <- sgfs:::all_draws(fit)
    expect_true(all(is.finite(draws)))
    ## (standardised, the input is 0: its weights get no likelihood gradient)
    run <- engine_spec(x, d$yb, standardize = TRUE, batch_size = 20L, model = mlp(3))
    k <- grep("^W1\\[4,", run$design$par_names)
    theta <- withr::with_seed(3, rnorm(run$design$D))
    g <- .Call(sgfs:::C_sgfs_model_loglik, run$spec, theta)$grad
    expect_length(k, 3L)
    expect_equal(g[k], double(3))
    expect_true(all(g[-k] != 0))
})

test_that("per-layer priors reach the engine", {
    d <- net_data()
    run <- engine_spec(d$x, d$yb, model = mlp(3),
                       prior = list(normal(0, 2), laplace(0, 0.5)))
    lay <- run$design$layer
    expect_equal(run$spec$prior_scale, ifelse(lay == 1, 2, 0.5))
    expect_equal(run$spec$prior_type, ifelse(lay == 1, 0L, 1L))
})

test_that("a poisson() network fits counts, predicts means and draws counts", {
    skip_if_not_installed("rstantools")
    d <- withr::with_seed(21, {
        N <- 2000
        x <- matrix(rnorm(N * 2), N, 2, dimnames = list(NULL, c("a", "b")))
        list(x = x, mu = exp(0.5 + sin(x[, 1]) - 0.3 * x[, 2]^2))
    })
    y <- withr::with_seed(22, stats::rpois(length(d$mu), d$mu))
    fit <- withr::with_seed(23, sgld(d$x, y, family = poisson(), model = mlp(8),
                                     n_iter = 4000, batch_size = 100, progress = FALSE))
    mu <- predict(fit, type = "response")
    expect_true(all(mu > 0))
    ## the network's mean follows the true one far better than a constant
    expect_lt(mean((mu - d$mu)^2), 0.25 * stats::var(d$mu))
    pp <- rstantools::posterior_predict(fit, draws = 50)
    expect_equal(dim(pp), c(50L, length(y)))
    expect_true(all(pp >= 0 & pp == round(pp)))
    expect_equal(dim(rstantools::log_lik(fit, draws = 50)), c(50L, length(y)))
    expect_error(sgld(d$x, as.integer(y > 1), family = binomial("probit"), model = mlp(2)),
                 "available for GLMs")
})

test_that("a network's inputs are divided by the larger of their sd and a tenth of their range", {
    set.seed(3)
    x <- cbind(a = rnorm(500), rare = c(2, rep(0, 499)), const = 1)
    y <- rbinom(500, 1, 0.5)
    fit <- quiet(sgld(x, y, model = mlp(3), n_iter = 10L, stepsize = 1e-4, progress = FALSE))
    ## a continuous input spans fewer than 10 sds; the rare one's sd (0.09)
    ## would put its one non-zero at 22 sds, its range's tenth at 10
    expect_equal(unname(attr(fit, "sgfit")$design$scale), c(sd(x[, 1]), 0.2, 1))
    ## the ranges, from a dense and a sparse matrix alike (0 counted where present)
    dense <- sgfs:::column_stats(x)
    expect_equal(dense$range, c(diff(range(x[, 1])), 2, 0))
    neg <- cbind(u = c(-3, rep(0, 9)), v = c(rep(2, 9), 5))
    expect_identical(sgfs:::column_stats(Matrix::Matrix(neg, sparse = TRUE))$range,
                     sgfs:::column_stats(neg)$range)
    expect_equal(sgfs:::column_stats(neg)$range, c(3, 3))
})
