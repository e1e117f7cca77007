## Priors (issue 16, item 3): student_t() and cauchy() against exact
## posteriors, rstanarm's prior objects and their conversion, Newton's mode
## with a heavy-tailed prior, prior_summary().

## rstanarm's prior functions return plain lists (rstanarm 2.21 and later);
## these build the same lists without the package
rs_normal <- function(location = 0, scale = NULL, autoscale = FALSE)
    list(dist = "normal", df = NA, location = location, scale = scale, autoscale = autoscale)
rs_student_t <- function(df = 1, location = 0, scale = NULL, autoscale = FALSE)
    list(dist = "t", df = df, location = location, scale = scale, autoscale = autoscale)
rs_cauchy <- function(location = 0, scale = NULL, autoscale = FALSE)
    rs_student_t(df = 1, location = location, scale = scale, autoscale = autoscale)
rs_laplace <- function(location = 0, scale = NULL, autoscale = FALSE)
    list(dist = "laplace", df = NA, location = location, scale = scale, autoscale = autoscale)
rs_lasso <- function(df = 1, location = 0, scale = NULL, autoscale = FALSE)
    list(dist = "lasso", df = df, location = location, scale = scale, autoscale = autoscale)
rs_hs_plus <- function(df1 = 1, df2 = 1, global_df = 1, global_scale = 0.01, slab_df = 4,
                       slab_scale = 2.5)
    list(dist = "hs_plus", df = df1, location = 0, scale = df2, global_df = global_df,
         global_scale = global_scale, slab_df = slab_df, slab_scale = slab_scale)

spec_of <- function(x, y, prior, prior_intercept = NULL, family = binomial(),
                    standardize = TRUE, intercept = TRUE, sigma = NULL, model = NULL) {
    sgfs:::prepare_run(x, y, family, prior, prior_intercept, 10L, 10L, 0L, 1L, 1L, 1L,
                       NULL, standardize, FALSE, sigma, intercept, model)
}

## one slope, known sigma, five rows: the prior matters and the posterior
## is skewed; its moments by numerical integration
one_d_case <- function(prior_density) {
    x <- c(1, -0.5, 0.8, 1.2, -1)
    y <- c(2.1, -0.2, 0.9, 2.2, -1.9)
    post <- function(b) vapply(b, function(v) exp(sum(dnorm(y, x * v, 1, log = TRUE)) +
                                                      prior_density(v)), 0)
    Z <- integrate(post, -Inf, Inf)$value
    m <- integrate(function(b) b * post(b), -Inf, Inf)$value / Z
    v <- integrate(function(b) (b - m)^2 * post(b), -Inf, Inf)$value / Z
    list(x = matrix(x, dimnames = list(NULL, "x")), y = y, mean = m, sd = sqrt(v))
}

test_that("cauchy() and student_t() posteriors of one slope match numerical integration", {
    cases <- list(list(prior = cauchy(0, 0.3), dens = function(b) dcauchy(b, 0, 0.3, log = TRUE)),
                  list(prior = student_t(3, 0.5, 0.2),
                       dens = function(b) dt((b - 0.5) / 0.2, 3, log = TRUE) - log(0.2)))
    for (cs in cases) {
        ex <- one_d_case(cs$dens)
        for (sampler in list(hmc, mala)) {
            fit <- withr::with_seed(11, sampler(ex$x, ex$y, family = gaussian(), sigma = 1,
                                                intercept = FALSE, standardize = FALSE,
                                                prior = cs$prior, n_iter = 40000,
                                                verbose = FALSE))
            d <- as.matrix(fit)[, 1]
            expect_lt(abs(mean(d) - ex$mean), 0.05 * ex$sd)
            expect_lt(abs(sd(d) / ex$sd - 1), 0.05)
        }
        ## SGLD at its default step (the metric of the mode), full batch
        fit <- withr::with_seed(12, sgld(ex$x, ex$y, family = gaussian(), sigma = 1,
                                         intercept = FALSE, standardize = FALSE,
                                         prior = cs$prior, n_iter = 60000, verbose = FALSE))
        d <- as.matrix(fit)[, 1]
        expect_lt(abs(mean(d) - ex$mean), 0.1 * ex$sd)
        expect_lt(abs(sd(d) / ex$sd - 1), 0.1)
    }
})

test_that("a student_t prior alone (data of negligible weight) is sampled with its quantiles", {
    x <- matrix(c(1e-6, -1e-6, 2e-6, -2e-6), dimnames = list(NULL, "x"))
    y <- c(0, 1, 1, 0)
    fit <- withr::with_seed(13, mala(x, y, intercept = FALSE, standardize = FALSE,
                                     prior = student_t(4, 1, 2), n_iter = 60000,
                                     verbose = FALSE))
    d <- as.matrix(fit)[, 1]
    p <- c(0.05, 0.25, 0.5, 0.75, 0.95)
    expect_equal(unname(quantile(d, p)), 1 + 2 * qt(p, 4), tolerance = 0.08)
})

test_that("Newton's mode with student_t and cauchy priors is the exact mode", {
    data(Pima.tr, package = "MASS")
    x <- model.matrix(~ glu + bmi + age, Pima.tr)
    y <- as.integer(Pima.tr$type == "Yes")
    run <- spec_of(x, y, student_t(2, 0, 0.5), cauchy(0, 1), standardize = FALSE,
                   intercept = FALSE)
    fit <- sgfs:::newton_mode(run$spec, double(4))
    logpost <- function(b) {
        eta <- drop(x %*% b)
        sum(dbinom(y, 1, plogis(eta), log = TRUE)) + dcauchy(b[1], 0, 1, log = TRUE) +
            sum(dt(b[-1] / 0.5, 2, log = TRUE) - log(0.5))
    }
    grad <- function(b) {
        r <- y - plogis(drop(x %*% b))
        drop(crossprod(x, r)) - c(2 * b[1] / (1 + b[1]^2), 3 * b[-1] / (2 * 0.25 + b[-1]^2))
    }
    ref <- optim(fit$mode + 0.01, logpost, grad, method = "BFGS",
                 control = list(fnscale = -1, reltol = 1e-16, maxit = 1000))
    expect_equal(fit$mode, ref$par, tolerance = 1e-5)
    expect_lt(max(abs(grad(fit$mode))), 1e-4)
    expect_lt(fit$steps, 60)
    expect_true(all(eigen(fit$curvature$H, only.values = TRUE)$values > 0))
})

test_that("rstanarm's prior objects mean what they mean in rstanarm", {
    data(Pima.tr, package = "MASS")
    x <- model.matrix(~ glu + bmi + npreg, Pima.tr)
    y <- Pima.tr$type
    sds <- unname(apply(x[, -1], 2, sd))
    native <- spec_of(x, y, normal(0, 2.5), intercept = FALSE)$spec
    ## autoscale = TRUE: the standardised scale, exactly
    rs <- spec_of(x, y, rs_normal(0, 2.5, autoscale = TRUE), intercept = FALSE)$spec
    expect_equal(rs$prior_scale, native$prior_scale)
    expect_equal(rs$prior_loc, native$prior_loc)
    ## autoscale = FALSE: the original scale, which is sd(x) times the internal one
    rs <- spec_of(x, y, rs_student_t(5, 0.1, 2), rs_laplace(-1, 3), intercept = FALSE)$spec
    expect_equal(rs$prior_type, c(1L, 2L, 2L, 2L))
    expect_equal(rs$prior_scale, c(3, 2 * sds))
    expect_equal(rs$prior_loc, c(-1, 0.1 * sds))
    expect_equal(rs$prior_df[-1], rep(5, 3))
    ## scale = NULL is rstanarm's 2.5; a probit link multiplies it by dnorm(0)/dlogis(0)
    rs <- spec_of(x, y, rs_cauchy(), family = binomial("probit"), intercept = FALSE)$spec
    expect_equal(rs$prior_scale, 2.5 * dnorm(0) / dlogis(0) * c(1, sds))
    expect_equal(rs$prior_df, rep(1, 4))
    ## gaussian: autoscale multiplies by sd(y); the intercept is the one at the
    ## predictors' means, in the response's units
    yg <- Pima.tr$bmi
    xg <- model.matrix(~ glu + npreg + skin, Pima.tr)
    rs <- spec_of(xg, yg, rs_normal(0, 2.5, autoscale = TRUE), rs_normal(30, 10),
                  family = gaussian(), intercept = FALSE)$spec
    expect_equal(rs$prior_scale[1:4], c(10 / sd(yg), rep(2.5, 3)))
    expect_equal(rs$prior_loc[1], (30 - mean(yg)) / sd(yg))
    ## the masking case: rstanarm's normal() and laplace() in scope
    fit <- local({
        normal <- rs_normal
        laplace <- rs_laplace
        sgld(type ~ glu + bmi, data = Pima.tr, prior = normal(0, 0.1),
             prior_intercept = laplace(0, 4), n_iter = 300, verbose = FALSE)
    })
    tab <- rstantools::prior_summary(fit)$table
    expect_equal(tab$prior, c("laplace", "normal", "normal"))
    expect_equal(tab$scale_original, c(4, 0.1, 0.1))
    expect_equal(tab$scale, c(4, 0.1 * sd(Pima.tr$glu), 0.1 * sd(Pima.tr$bmi)))
})

test_that("rstanarm priors that mean something else are refused, naming the argument", {
    data(Pima.tr, package = "MASS")
    expect_error(sgld(type ~ glu, data = Pima.tr, prior = rs_lasso(), n_iter = 10),
                 "'prior' is rstanarm's .lasso. prior")
    expect_error(sgld(type ~ glu, data = Pima.tr, prior = rs_hs_plus(), n_iter = 10),
                 "'prior' is rstanarm's .hs_plus. prior")
    expect_error(sgld(type ~ glu, data = Pima.tr, prior_intercept = rs_normal(0, 5),
                      standardize = FALSE, n_iter = 10),
                 "'prior_intercept' is an rstanarm prior, whose intercept is the one at the predictors' means")
    expect_error(sgld(type ~ glu, data = Pima.tr, prior = rs_normal(0, 5, autoscale = TRUE),
                      model = mlp(2), n_iter = 10),
                 "'prior' is an rstanarm prior with autoscale = TRUE")
    expect_error(sgld(type ~ glu, data = Pima.tr, prior = rs_normal(0, -1), n_iter = 10),
                 "'prior' must be finite positive numbers")
    expect_error(sgld(type ~ glu, data = Pima.tr, prior = list(dist = 3), n_iter = 10),
                 "'prior' must be a prior such as")
    expect_error(student_t(0, 0, 1), "'df' must be finite positive numbers")
    expect_error(student_t(Inf, 0, 1), "'df' must be finite positive numbers")
    ## an rstanarm prior without autoscale on a network: the scale of its parameters
    run <- spec_of(model.matrix(~ glu, Pima.tr), Pima.tr$type, rs_normal(0, 0.5),
                   model = mlp(2), intercept = FALSE)
    expect_equal(unique(run$spec$prior_scale), 0.5)
})

test_that("prior_summary() reports student_t and cauchy priors on both scales", {
    data(Pima.tr, package = "MASS")
    fit <- sgld(type ~ glu + bmi, data = Pima.tr, prior = student_t(3, 0.5, 2),
                prior_intercept = cauchy(0, 5), n_iter = 300, verbose = FALSE)
    ps <- rstantools::prior_summary(fit)
    tab <- ps$table
    expect_equal(tab$prior, c("cauchy", "student_t", "student_t"))
    expect_equal(tab$df, c(1, 3, 3))
    expect_equal(tab$scale_original[-1], 2 / c(sd(Pima.tr$glu), sd(Pima.tr$bmi)))
    expect_equal(tab$location_original[-1], 0.5 / c(sd(Pima.tr$glu), sd(Pima.tr$bmi)))
    out <- capture.output(print(ps))
    expect_true(any(grepl("student_t(3, 0.5, 2)", out, fixed = TRUE)))
    expect_true(any(grepl("cauchy(0, 5)", out, fixed = TRUE)))
})
