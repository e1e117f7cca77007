## prior_aux: laws of the family's parameter beyond the mean (a noise sd, a
## dispersion, a shape) on its own scale, sampled on its log with the
## Jacobian: src/prior.c's densities against R's, their derivatives against
## finite differences, a posterior against quadrature, rstanarm's objects,
## prior_summary() and bad input.

aux_spec <- function(type, scale, df = NA) {
    list(prior_type = as.integer(type), prior_loc = 0, prior_scale = scale, prior_prec = 1,
         prior_df = as.double(df))
}

test_that("the scale laws' log densities, gradients and curvatures match R's and differences", {
    u <- c(-2, -0.3, 0.4, 1.7)
    h <- 1e-5
    cases <- list(
        exp = list(spec = aux_spec(5L, 1 / 3), f = function(v) dexp(v, 3, log = TRUE)),
        half_normal = list(spec = aux_spec(4L, 0.7, Inf),
                           f = function(v) log(2) + dnorm(v, 0, 0.7, log = TRUE)),
        half_t = list(spec = aux_spec(4L, 1.5, 3),
                      f = function(v) log(2) + dt(v / 1.5, 3, log = TRUE) - log(1.5)),
        half_cauchy = list(spec = aux_spec(4L, 2, 1),
                           f = function(v) log(2) + dcauchy(v, 0, 2, log = TRUE)))
    for (name in names(cases)) {
        k <- cases[[name]]
        for (x in u) {
            lp <- function(t) sgfs:::log_prior(t, k$spec)$value
            got <- sgfs:::log_prior(x, k$spec)
            expect_equal(got$value, k$f(exp(x)) + x, tolerance = 1e-12, info = name)
            expect_equal(got$grad, (lp(x + h) - lp(x - h)) / (2 * h), tolerance = 1e-7, info = name)
            expect_equal(got$curvature, -(lp(x + h) - 2 * lp(x) + lp(x - h)) / h^2,
                         tolerance = 1e-4, info = name)
            expect_gt(got$curvature, 0)
        }
    }
})

test_that("hmc() with prior_aux follows the posterior by quadrature", {
    y <- withr::with_seed(12, rnorm(12, 1, 1.5))
    laws <- list(list(prior = exponential(2), f = function(v) dexp(v, 2, log = TRUE)),
                 list(prior = student_t(3, 0, 0.5),
                      f = function(v) dt(v / 0.5, 3, log = TRUE) - log(0.5)))
    mu <- seq(-3, 5, length.out = 401)
    s <- seq(0.2, 6, length.out = 401)
    for (law in laws) {
        fit <- hmc(y ~ 1, data = data.frame(y = y), family = gaussian(), standardize = FALSE,
                   prior_intercept = normal(0, 10), prior_aux = law$prior, n_iter = 6000,
                   chains = 2, seed = 3, progress = FALSE)
        B <- as.matrix(fit)
        sigma <- exp(B[, "log_sigma"])
        ## the posterior of (mu, sigma) on a grid
        lp <- outer(mu, s, Vectorize(function(m, v)
            sum(dnorm(y, m, v, log = TRUE)) + dnorm(m, 0, 10, log = TRUE) + law$f(v)))
        w <- exp(lp - max(lp))
        w <- w / sum(w)
        m_s <- sum(colSums(w) * s)
        sd_s <- sqrt(sum(colSums(w) * (s - m_s)^2))
        m_mu <- sum(rowSums(w) * mu)
        ess <- min(coda::effectiveSize(fit))
        expect_gt(ess, 400)
        expect_lt(abs(mean(sigma) - m_s), 4 * sd_s / sqrt(ess))
        expect_lt(abs(mean(B[, "(Intercept)"]) - m_mu), 4 * sd(B[, "(Intercept)"]) / sqrt(ess))
        expect_equal(sd(sigma), sd_s, tolerance = 4 * sqrt(1 / (2 * ess)))
    }
})

## rstanarm's exponential(rate, autoscale) as it returns it
rstanarm_exponential <- function(rate = 1, autoscale = FALSE)
    list(dist = "exponential", df = NA, location = NA, scale = 1 / rate, autoscale = autoscale)

test_that("rstanarm's prior_aux objects, autoscale, other families and prior_summary()", {
    f <- sgld(mpg ~ wt + hp, mtcars, family = gaussian(), iter = 300, seed = 1, progress = FALSE,
              prior_aux = rstanarm_exponential(1, autoscale = TRUE))
    spec <- attr(f, "sgfit")$spec
    D <- length(spec$prior_type)
    expect_identical(spec$prior_type[D], 5L)
    ## autoscaled: rate 1 / sd(y) on sigma, rate 1 on the standardised sigma
    expect_equal(spec$prior_scale[D], 1, tolerance = 1e-12)
    g <- sgld(mpg ~ wt + hp, mtcars, family = gaussian(), iter = 300, seed = 1, progress = FALSE,
              prior_aux = exponential(1))
    expect_equal(attr(g, "sgfit")$spec$prior_scale[D], 1 / sd(mtcars$mpg), tolerance = 1e-12)
    ps <- rstantools::prior_summary(g)$table
    expect_identical(ps$prior[D], "exponential")
    expect_equal(ps$scale_original[D], 1, tolerance = 1e-12)
    expect_false(ps$default[D])
    expect_true(rstantools::prior_summary(sgld(mpg ~ wt, mtcars, family = gaussian(), iter = 100,
                                               progress = FALSE))$table$default[3])
    ## the same law for a dispersion and a shape, on their own scale
    nb <- sgld(carb ~ wt, mtcars, family = neg_binomial_2(), iter = 300, seed = 1,
               progress = FALSE, prior_aux = rstanarm_exponential(1))
    s <- attr(nb, "sgfit")$spec
    expect_identical(s$prior_type[3], 5L)
    expect_equal(s$prior_scale[3], 1)
    ga <- sgld(mpg ~ wt, mtcars, family = Gamma(link = "log"), iter = 300, seed = 1,
               progress = FALSE, prior_aux = student_t(4, 0, 10))
    s <- attr(ga, "sgfit")$spec
    expect_identical(c(s$prior_type[3], s$prior_df[3], s$prior_scale[3]), c(4, 4, 10))
})

test_that("prior_aux refuses what is not a law of a positive parameter, naming the argument", {
    expect_error(sgld(mpg ~ wt, mtcars, family = gaussian(), prior_aux = NULL),
                 "'prior_aux' = NULL is rstanarm's flat prior")
    expect_error(sgld(am ~ wt, mtcars, prior_aux = exponential(1)),
                 "'prior_aux' is the prior of a family's parameter beyond the mean")
    expect_error(sgld(mpg ~ wt, mtcars, family = gaussian(), sigma = 2, prior_aux = exponential(1)),
                 "'prior_aux' is the prior of a sampled parameter, and `sigma` fixes it")
    expect_error(sgld(mpg ~ wt, mtcars, family = gaussian(), prior_aux = normal(1, 2)),
                 "'prior_aux' must have location 0")
    expect_error(sgld(mpg ~ wt, mtcars, family = gaussian(), prior_aux = laplace(0, 1)),
                 "'prior_aux' must be exponential\\(rate\\)")
    expect_error(sgld(mpg ~ wt, mtcars, family = gaussian(), prior = exponential(1)),
                 "'prior' is exponential\\(\\), a law of a positive scale")
    expect_error(exponential(-1), "'rate'")
})
