## normal_gamma(): a prior's scale learned by Gibbs updates of its precision
## within the chain (src/prior_hyper.c), a network's default prior.

scale_data <- function(N = 40, seed = 12) {
    withr::with_seed(seed, {
        x <- matrix(rnorm(N * 3), N, 3, dimnames = list(NULL, c("a", "b", "c")))
        list(x = x, y = sin(x[, 1]) + x[, 3] + rnorm(N, sd = 0.3))
    })
}

test_that("SGLD with learned layer scales equals its R replay (Gibbs draws of each precision)", {
    d <- scale_data()
    priors <- list(normal_gamma(0.5, shape = 2, rate = 3), normal_gamma(1, shape = 1.5, rate = 1))
    args <- list(d$x, d$y, family = gaussian(), sigma = 0.5, model = mlp(3), prior = priors,
                 batch_size = 10L, standardize = FALSE)
    run <- do.call(engine_spec, args)
    spec <- run$spec
    D <- run$design$D
    theta0 <- withr::with_seed(4, rnorm(D, sd = 0.3))
    eps <- 2e-3
    set.seed(21)
    fit <- quiet(do.call(sgld, c(args, list(stepsize = eps, n_iter = 30L, burnin = 0L,
                                            init = theta0, progress = FALSE))))
    set.seed(21)
    N <- nrow(d$x)
    layer <- run$design$layer
    base <- spec$hyper_base
    expect_equal(spec$hyper_group, layer)
    expect_equal(base, c(rep(1 / 0.5^2, sum(layer == 1)), rep(1, sum(layer == 2))))
    theta <- theta0
    tau <- c(1, 1)
    out <- matrix(NA_real_, 30, D)
    for (t in 1:30) {
        idx <- r_minibatch(N, 10L)
        g <- N / 10 * model_eval(spec, theta, idx)$grad - tau[layer] * base * theta
        theta <- theta + eps / 2 * g + sqrt(eps) * engine_rnorm(D)
        for (k in 1:2) {
            j <- layer == k
            tau[k] <- rgamma(1, shape = spec$hyper_shape[k] + sum(j) / 2,
                             rate = spec$hyper_rate[k] + sum(base[j] * theta[j]^2) / 2)
        }
        out[t, ] <- theta
    }
    expect_equal(unname(as.matrix(fit)), out, tolerance = 1e-10)
    ## the chain's state carries the precisions, and a continued run equals a longer one
    expect_equal(attr(fit, "sgfit")$states[[1]]$hyper, tau, tolerance = 1e-12)
    set.seed(21)
    short <- quiet(do.call(sgld, c(args, list(stepsize = eps, n_iter = 20L, burnin = 0L,
                                              init = theta0, progress = FALSE))))
    longer <- quiet(update(short, n_iter = 10L))
    expect_equal(unname(as.matrix(longer)), out, tolerance = 1e-10)
})

test_that("a network's default prior learns each layer's scale", {
    d <- scale_data(N = 200)
    fit <- withr::with_seed(3, quiet(psgld(d$x, d$y, family = gaussian(), model = mlp(4),
                                           n_iter = 3000L, progress = FALSE)))
    info <- attr(fit, "sgfit")
    expect_equal(info$spec$hyper_shape, c(1, 1))
    expect_equal(info$spec$hyper_base[which(info$design$layer == 1)], rep(3, 3 * 4 + 4))
    tau <- info$states[[1]]$hyper
    expect_length(tau, 2L)
    expect_true(all(is.finite(tau) & tau > 0))
    ps <- rstantools::prior_summary(fit)
    expect_true(all(ps$table$prior[ps$table$group != "log_sigma"] == "normal_gamma"))
    expect_output(print(ps), "normal_gamma\\(0, s\\): N\\(0, s\\^2 / tau\\)")
    expect_output(print(normal_gamma(0.1)), "tau ~ Gamma\\(shape, rate\\)")
})

test_that("learned scales: bad values; an optimiser keeps the base prior", {
    d <- scale_data()
    expect_error(normal_gamma(scale = -1), "'scale'")
    expect_error(normal_gamma(shape = 0), "'shape'")
    expect_error(normal_gamma(rate = NA), "'rate'")
    expect_error(sgld(d$x, d$y, family = gaussian(), prior = normal_gamma()),
                 "'prior' is normal_gamma\\(\\), a learned scale for the layers of a network")
    ## an optimiser keeps the base prior: sga() with normal_gamma() is sga() with its normal
    a <- withr::with_seed(5, sga(d$x, d$y, family = gaussian(), model = mlp(2), n_iter = 200L,
                                 prior = normal_gamma(0.7)))
    b <- withr::with_seed(5, sga(d$x, d$y, family = gaussian(), model = mlp(2), n_iter = 200L,
                                 prior = normal(0, 0.7)))
    expect_equal(coef(a), coef(b))
})

test_that("hmc() and mala() on a network: a warm-up's diagonal mass, Gibbs draws of the scales", {
    d <- scale_data(N = 60)
    fit <- withr::with_seed(7, quiet(hmc(d$x, d$y, family = gaussian(), model = mlp(3),
                                         n_iter = 600L, progress = FALSE)))
    info <- attr(fit, "sgfit")
    expect_equal(info$settings$mass, "diagonal (a warm-up's draws)")
    expect_equal(info$settings$warmup, max(sgfs:::warmup_iter, info$spec$burnin))
    U <- matrix(info$spec$spar[-(1:4)], info$design$D)
    expect_equal(U, diag(diag(U)))
    expect_true(all(diag(U) > 0))
    acc <- sgfs:::acceptance_rate(info)
    expect_gt(acc, 0.4)
    expect_lt(acc, 0.99)
    expect_length(info$states[[1]]$hyper, 2L)
    expect_true(all(is.finite(as.matrix(fit))))
    ## identity mass: no warm-up; MALA the same way
    fit <- withr::with_seed(7, quiet(mala(d$x, d$y, family = gaussian(), model = mlp(3),
                                          mass = "identity", n_iter = 300L, progress = FALSE)))
    expect_equal(attr(fit, "sgfit")$settings$warmup, 0L)
    expect_equal(attr(fit, "sgfit")$settings$mass, "identity")
})
