## Networks' default steps from the chain's own gradient noise
## (R/noise-steps.R): the engine's record of the gradients' mean squares,
## the pilots that continue the chain, and the rule they apply.

test_that("the engine sums each gradient coordinate's square past burn-in on request", {
    d <- pima_data()
    d <- list(x = d$x[1:60, 1:3], y = d$y[1:60])
    run <- engine_spec(d$x, d$y, batch_size = 60L)
    spec <- c(run$spec, list(sampler = "sgld", spar = c(lm_noise = 0),
                             schedule = c(0, 1e-300, 0, 0), record_grad_sq = TRUE))
    spec$burnin <- 4L
    theta <- c(0.2, -0.1, 0.3, 0.05)
    res <- sgfs:::run_chain(spec, list(theta = theta, iter = 0, sstate = double(0)), 10L, FALSE)
    ## every batch is every row and the chain does not move: each of the 6
    ## iterations past burn-in adds the full gradient's square
    g <- .Call(sgfs:::C_sgfs_model_loglik, run$spec, theta)$grad - theta   # prior normal(0, 1)
    expect_equal(res$grad_sq, 6 * g^2, tolerance = 1e-10)
    spec$record_grad_sq <- NULL
    expect_null(sgfs:::run_chain(spec, list(theta = theta, iter = 0, sstate = double(0)),
                                 10L, FALSE)$grad_sq)
})

test_that("a network's default step keeps the minibatch noise's share at its target", {
    d <- conjugate_data(N = 400, D = 4, seed = 5)
    fits <- lapply(c("sgld", "psgld", "sghmc", "sgnht", "isgd"), function(f) withr::with_seed(1,
        quiet(get(f)(d$x, d$y, family = gaussian(), model = mlp(4), n_iter = 2000L,
                     batch_size = 20L, progress = FALSE))))
    for (fit in fits) {
        info <- attr(fit, "sgfit")
        s <- info$settings
        p <- s$pilot
        expect_true(is.list(p), info = info$method)
        expect_equal(p$iterations, sgfs:::pilot_iter * (length(p$steps) - 1L))
        expect_lte(length(p$steps) - 1L, sgfs:::max_pilots)
        expect_equal(s$inflation, sgfs:::noise_share)
        expect_true(all(is.finite(as.matrix(fit))))
        if (info$method %in% c("psgld", "isgd")) {
            ## one step for all: the last pilot's measured step (I-SGD's warm-up)
            expect_equal(if (info$method == "isgd") s$warmup_stepsize else s$stepsize,
                         p$steps[length(p$steps)])
            expect_null(info$spec$metric)
        } else {
            ## each coordinate its own step, within max_spread of each other,
            ## through a diagonal metric; the step in its coordinates is 1
            ## (SGNHT's: within its thermostat's cap)
            expect_equal(s$metric, "diagonal (from the chain's gradient noise)")
            M <- info$spec$metric
            expect_length(M, info$design$D)
            expect_lte(max(M^2) / min(M^2), sgfs:::max_spread * (1 + 1e-12))
            expect_equal(s$stepsize, if (info$method == "sgnht")
                min(1, sgfs:::sgnht_thermostat_step(0.01, info$design$D)) else 1)
            expect_equal(p$steps[length(p$steps)], stats::median(s$stepsize / M^2))
        }
    }
    ## a continued run keeps the metric and adds its draws
    more <- quiet(update(fits[[1]], n_iter = 300L))
    expect_identical(attr(more, "sgfit")$spec$metric, attr(fits[[1]], "sgfit")$spec$metric)
    expect_equal(nrow(as.matrix(more)), nrow(as.matrix(fits[[1]])) + 300L)
    ## reproducible under set.seed(), pilots included
    again <- withr::with_seed(1, quiet(sgld(d$x, d$y, family = gaussian(), model = mlp(4),
                                            n_iter = 2000L, batch_size = 20L, progress = FALSE)))
    expect_identical(as.matrix(again), as.matrix(fits[[1]]))
})

test_that("the pilots' rule: the step at which the worst coordinate's noise share is the target", {
    ## the rule applied to mean squares m: SGLD's share per step is m / (4 T)
    m <- c(4, 400, 40)
    rule <- function(T) sgfs:::noise_share / max(m / (4 * T))
    expect_equal(rule(1), sgfs:::noise_share / 100)
    expect_equal(rule(0.5), rule(1) / 2)
    ## a given step runs no pilot; a GLM keeps its curvature rule (and its
    ## pilot measures the noise at that step)
    d <- conjugate_data(N = 200, D = 3, seed = 6)
    fit <- withr::with_seed(2, quiet(sgld(d$x, d$y, family = gaussian(), model = mlp(3),
                                          stepsize = 1e-4, n_iter = 500L, progress = FALSE)))
    expect_null(attr(fit, "sgfit")$settings$pilot)
    glm_fit <- withr::with_seed(2, quiet(sgld(d$x, d$y, family = gaussian(), n_iter = 500L,
                                              progress = FALSE)))
    s <- attr(glm_fit, "sgfit")$settings
    expect_null(s$pilot$noise_share)
    expect_equal(s$pilot$first_step, s$stepsize)
})
