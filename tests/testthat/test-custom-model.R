## custom_model(): a model given by R functions, run by the C engine through
## callbacks.

logistic_problem <- function() {
    d <- pima_data()
    X <- cbind(`(Intercept)` = 1, d$x)
    list(x = d$x, y = d$y, data = list(X = X, y = d$y), model = logistic_custom_model(X))
}

test_that("logistic regression written in R gives the GLM's draws (SGLD, SGFS)", {
    p <- logistic_problem()
    glm_sgld <- withr::with_seed(1, sgld(p$x, p$y, standardize = FALSE, n_iter = 600,
                                         batch_size = 50, stepsize = 2e-4, init = double(8),
                                         metric = "identity"))
    own_sgld <- withr::with_seed(1, sgld(p$data, model = p$model, n_iter = 600,
                                         batch_size = 50, stepsize = 2e-4, init = double(8)))
    expect_equal(unclass(as.matrix(own_sgld)), unclass(as.matrix(glm_sgld)), tolerance = 1e-10)
    expect_identical(colnames(as.matrix(own_sgld)), colnames(as.matrix(glm_sgld)))
    ## (a custom model has no curvature at the mode: the paper's rule for both)
    glm_sgfs <- withr::with_seed(2, sgfs(p$x, p$y, standardize = FALSE, n_iter = 600,
                                         batch_size = 50, curvature = FALSE))
    own_sgfs <- withr::with_seed(2, sgfs(p$data, model = p$model, n_iter = 600, batch_size = 50))
    expect_equal(unclass(as.matrix(own_sgfs)), unclass(as.matrix(glm_sgfs)), tolerance = 1e-10)
})

test_that("the methods work on a custom fit; predict() says why it cannot", {
    p <- logistic_problem()
    fit <- withr::with_seed(3, sgfs(p$data, model = p$model, n_iter = 400, batch_size = 50))
    expect_output(print(fit), "custom_model\\(parameters \\(Intercept\\), npreg")
    expect_output(print(summary(fit)), "SGFS-f")
    expect_length(coef(fit), 8L)
    expect_equal(dim(vcov(fit)), c(8L, 8L))
    expect_equal(nobs(fit), 532L)
    expect_equal(coda::niter(update(fit, n_iter = 100)), 460L)
    expect_error(predict(fit), "custom_model\\(\\) defines only its likelihood")
    expect_output(print(p$model), "custom_model")
})

test_that("the data may be a vector, a matrix, a data frame or a list of them", {
    seen <- NULL
    probe <- function(expect_class) custom_model(
        score = function(theta, data) {
            seen <<- class(data)[1L]
            matrix(0, NROW(if (is.list(data) && !is.data.frame(data)) data[[1L]] else data), 1L)
        },
        loglik = function(theta, data)
            double(NROW(if (is.list(data) && !is.data.frame(data)) data[[1L]] else data)),
        init = 0)
    for (x in list(1:10, matrix(1, 10, 2), data.frame(a = 1:10, b = letters[1:10]),
                   list(a = 1:10, b = matrix(0, 10, 3)))) {
        fit <- withr::with_seed(1, sgld(x, model = probe(), n_iter = 20, batch_size = 4,
                                        stepsize = 1e-3, init = 0))
        expect_identical(seen, class(x)[1L])
        expect_identical(colnames(as.matrix(fit)), "theta")
    }
    expect_error(sgld(list(1:10, 1:9), model = probe()), "different numbers of rows")
    expect_error(sgld(sum, model = probe()), "must be a vector, a matrix")
})

test_that("bad arguments and bad model output give errors naming their source", {
    x <- rnorm(50)
    score <- function(theta, data) data - theta
    loglik <- function(theta, data) dnorm(data, theta, log = TRUE)
    expect_error(custom_model("a", loglik, 0), "'score' must be a function")
    expect_error(custom_model(score, loglik, c(0, NA)), "'init' must be finite")
    expect_error(custom_model(score, loglik, c(0, 0), names = c("a", "a")), "'names' must be 2")
    m <- custom_model(score, loglik, init = c(mu = 0))
    expect_error(sgld(x, 1:50, model = m), "'y' must be left out")
    expect_error(sgld(x, model = m, family = gaussian()), "'family' does not apply")
    expect_error(sgld(x, model = m, sigma = 1), "'sigma' does not apply")
    expect_error(sgld(y ~ x, data = data.frame(x = x, y = x), model = m), "not through a formula")

    wrong_shape <- custom_model(function(theta, data) cbind(data, data), loglik, 0)
    expect_error(sgld(x, model = wrong_shape),
                 "score\\(theta, data\\) at theta = \\(theta = 0\\) returned a 20 x 2 matrix for 20 rows.*20 x 1")
    wrong_length <- custom_model(score, function(theta, data) sum(loglik(theta, data)), 0)
    expect_error(sgld(x, model = wrong_length), "loglik\\(theta, data\\).*returned a numeric of length 1 for 20 rows")
    not_numeric <- custom_model(function(theta, data) list(1), loglik, 0)
    expect_error(sgld(x, model = not_numeric), "score.*returned a list of length 1")
    infinite <- custom_model(score, function(theta, data) rep(-Inf, length(data)), 0)
    expect_error(sgld(x, model = infinite), "loglik.*non-finite values at init")
    ## finite on the first rows only (those the shape check reads): the
    ## curvature's search says so, not an optimiser's internal message
    late <- custom_model(function(theta, data) ifelse(seq_along(data) > 20, NaN, data - theta),
                         function(theta, data) ifelse(seq_along(data) > 20, NaN,
                                                      dnorm(data, theta, log = TRUE)), 0)
    expect_error(sgld(x, model = late),
                 "log posterior is not finite at the start .*custom_model\\(\\)'s loglik and score")
    expect_warning(sgld(x, model = custom_model(function(theta, data) theta - data, loglik, 0),
                        prior = normal(0, 10), n_iter = 50, init = 0, stepsize = 1e-4),
                   "the score does not look like the gradient of loglik")
    random <- custom_model(function(theta, data) data - theta + 0 * runif(1), loglik, 0)
    expect_error(sgld(x, model = random), "drew random numbers")
})

test_that("an R error inside the engine's callback is reported and R carries on", {
    x <- rnorm(200)
    calls <- 0
    m <- custom_model(
        score = function(theta, data) {
            calls <<- calls + 1
            if (calls > 30) stop("boom in the score")
            data - theta
        },
        loglik = function(theta, data) dnorm(data, theta, log = TRUE), init = 0)
    expect_error(withr::with_seed(1, sgfs(x, model = m, n_iter = 200, batch_size = 10)),
                 "score\\(theta, data\\) at theta = \\(theta = .*\\) failed: boom in the score")
    calls <- -Inf
    fit <- withr::with_seed(1, sgfs(x, model = m, n_iter = 200, batch_size = 10))
    expect_true(all(is.finite(as.matrix(fit))))
})

test_that("non-finite values elsewhere are the engine's: HMC rejects, SG chains diverge", {
    toy <- toy_problem("gamma", N = 2000L)
    ## a MALA start next to lambda = 0 proposes negative rates: rejected
    fit <- withr::with_seed(1, mala(toy$x, model = toy$model, prior = toy$prior,
                                    n_iter = 300, batch_size = 2000))
    expect_true(all(as.matrix(fit) > 0))
    ## a score that is not finite beyond |mu| = 0.5, where too large steps go
    x <- withr::with_seed(1, rnorm(100))
    blow_up <- custom_model(
        function(theta, data) if (abs(theta) < 0.5) data - theta else rep(NaN, length(data)),
        function(theta, data) dnorm(data, theta, log = TRUE), init = 0)
    expect_error(withr::with_seed(1, sgld(x, model = blow_up, n_iter = 100, init = 0,
                                          stepsize = 0.5, batch_size = 10)),
                 "diverged.*custom model's score is not finite")
})

## The OSGFS report's one-dimensional toys at a batch of 10 % (see
## bench/bench_custom.R for the full table): mean and sd against the exact
## posterior, within 5 Monte Carlo standard errors (plus 10 % of the sd for
## the sampler's own bias).
expect_posterior <- function(draws, mean, sd) {
    ess <- max(coda::effectiveSize(draws), 10)
    expect_lt(abs(base::mean(draws) - mean), 5 * sd / sqrt(ess) + 0.1 * sd)
    expect_lt(abs(stats::sd(draws) / sd - 1), 5 / sqrt(2 * ess) + 0.1)
}

test_that("SGFS and OSGFS reproduce the Gaussian-mean and Gamma toy posteriors", {
    for (kind in c("gaussian", "gamma")) {
        toy <- toy_problem(kind)
        exact <- toy_exact(toy, m = 1001L)
        for (sampler in c(sgfs, osgfs)) {
            fit <- withr::with_seed(4, sampler(toy$x, model = toy$model, prior = toy$prior,
                                               batch_size = 1000, n_iter = 2000))
            expect_posterior(as.matrix(fit)[, 1L], exact$mean, exact$sd)
        }
    }
})

test_that("SGFS samples a mode of the mixture toy as the posterior of |theta| has it", {
    ## (the two modes are symmetric; a chain of 10,000 iterations crosses
    ## between them in 2 or 3 runs of 8: |theta| is what every run samples)
    toy <- toy_problem("mixture")
    exact <- toy_exact(toy, m = 1001L)
    expect_equal(exact$mean, 0, tolerance = 1e-10)      # symmetric
    fit <- withr::with_seed(5, sgfs(toy$x, model = toy$model, prior = toy$prior,
                                    batch_size = 100, n_iter = 10000))
    d <- as.matrix(fit)[, 1L]
    expect_posterior(abs(d), exact$abs_mean, exact$abs_sd)
})
