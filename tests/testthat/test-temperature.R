## Tempered posteriors p(theta | y)^(1/T): on the conjugate Gaussian linear
## model the tempered posterior is Gaussian with the posterior's mean and T
## times its covariance (temper(), helper-data.R); the stochastic gradient
## rules at their defaults are checked at T = 0.25 in test-conjugate.R.

tempered_fit <- function(sampler, seed, T, cd, ...) {
    set.seed(seed)
    sampler(cd$x, cd$y, family = gaussian(), sigma = cd$sigma, prior = normal(0, cd$s0),
            standardize = FALSE, progress = FALSE, temperature = T, ...)
}

test_that("an SGLD chain at temperature T equals its R replay with noise sqrt(eps T)", {
    p <- ref_problem()
    for (T in c(0.3, 2)) {
        set.seed(81)
        c1 <- c_chain(sgld, p, 10L, 40L, stepsize = 0.01, temperature = T)
        set.seed(81)
        r1 <- r_chain(p, 3, 10L, 40L, function(t) 0.01,
                      function(theta, grad, G, eps, t, state, prec)
                          list(theta = theta + eps / 2 * grad +
                                   sqrt(eps * T) * engine_rnorm(length(theta)),
                               state = state))
        expect_equal(unname(c1), r1, tolerance = 1e-12)
    }
    ## temperature 1 is the untempered chain, draw for draw
    set.seed(82)
    a <- c_chain(sgld, p, 10L, 40L, stepsize = 0.01)
    set.seed(82)
    expect_identical(c_chain(sgld, p, 10L, 40L, stepsize = 0.01, temperature = 1), a)
})

test_that("exact rules at temperature T: SGLD's LM noise on full batches, and HMC", {
    cd <- conjugate_data(N = 400, D = 4)
    for (T in c(0.25, 4)) {
        ## full batches: no minibatch noise, and the Leimkuhler-Matthews
        ## noise of the metric of the mode is exact for a Gaussian target
        fit <- tempered_fit(sgld, 91, T, cd, batch_size = 400, metric = "mode",
                            n_iter = 40000, thin = 4)
        expect_close_to_exact(fit, temper(cd, T), mean_tol = 0.1, var_tol = 0.1)
        fit <- tempered_fit(hmc, 92, T, cd, n_iter = 6000)
        expect_close_to_exact(fit, temper(cd, T), mean_tol = 0.1, var_tol = 0.1)
    }
})

test_that("SGFS (f, d, b; robust and the paper's rule) and OSGFS at temperature T sample T times the covariance", {
    ## minibatches of 40 of 400 rows (gamma about 10): the rules' gamma_T and
    ## sqrt(T) noise keep them exact on the Gaussian posterior
    cd <- conjugate_data(N = 400, D = 4)
    for (T in c(0.25, 4)) {
        fit <- tempered_fit(sgfs, 93, T, cd, batch_size = 40, n_iter = 100000, thin = 10)
        expect_close_to_exact(fit, temper(cd, T), mean_tol = 0.1, var_tol = 0.1)
        ## (at T = 0.25, gamma_T = 37: steps of 2 / 37 of Newton's, slow mixing)
        fit <- tempered_fit(osgfs, 94, T, cd, batch_size = 40, n_iter = 120000, thin = 10)
        expect_close_to_exact(fit, temper(cd, T), mean_tol = 0.1, var_tol = 0.1)
    }
    T <- 0.5
    for (v in list(list(preconditioner = "diagonal"), list(robust = FALSE),
                   list(preconditioner = "block", blocks = c(2, 2)))) {
        fit <- do.call(tempered_fit, c(list(sgfs, 95, T, cd, batch_size = 40, n_iter = 80000,
                                            thin = 8), v))
        expect_close_to_exact(fit, temper(cd, T), mean_tol = 0.1,
                              var_tol = if (identical(v$preconditioner, "full") || !is.null(v$robust)) 0.1 else 0.2)
    }
})

test_that("temperature: bad values are refused, sga() has none; printed when not 1", {
    cd <- conjugate_data(N = 200, D = 3)
    for (bad in list(0, -1, NA, Inf, "1", c(1, 2)))
        expect_error(tempered_fit(sgld, 1, bad, cd, n_iter = 10), "temperature")
    expect_error(sga(cd$x, cd$y, family = gaussian(), temperature = 0.5), "temperature")
    fit <- tempered_fit(sgld, 2, 0.5, cd, n_iter = 200)
    expect_output(print(fit), "temperature 0.5 \\(a tempered posterior")
    ## the temperature is the fit's: update() continues at it
    more <- update(fit, n_iter = 100)
    expect_identical(attr(more, "sgfit")$spec$temperature, 0.5)
})
