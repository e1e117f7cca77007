## rstanarm's arguments: translated where the package has the equivalent,
## refused with a message naming it where it does not.

pima <- function() {
    data(Pima.tr, package = "MASS", envir = environment())
    Pima.tr
}

test_that("iter and warmup are n_iter and burnin; seed runs the fit under set.seed()", {
    d <- pima()
    a <- sgld(type ~ glu + bmi, d, iter = 600, warmup = 100, seed = 3, progress = FALSE)
    set.seed(3)
    b <- sgld(type ~ glu + bmi, d, n_iter = 600, burnin = 100, progress = FALSE)
    expect_identical(as.matrix(a), as.matrix(b))
    expect_equal(coda::niter(a), 500L)
    ## the caller's stream is left as it was
    set.seed(9)
    before <- .Random.seed
    sgld(type ~ glu + bmi, d, iter = 300, seed = 3, progress = FALSE)
    expect_identical(.Random.seed, before)
    expect_error(sgld(type ~ glu, d, iter = 300, n_iter = 300), "'iter' is rstanarm's name for `n_iter`")
    expect_error(sgld(type ~ glu, d, warmup = 10, burnin = 10, iter = 300), "'warmup'")
    expect_error(sgld(type ~ glu, d, iter = 1.5), "'iter' must be a whole number")
    expect_error(sgld(type ~ glu, d, iter = 300, seed = "a"), "'seed' must be a whole number")
    ## the matrix method too
    x <- model.matrix(~ glu + bmi, d)[, -1]
    y <- as.integer(d$type == "Yes")
    expect_identical(as.matrix(sgld(x, y, iter = 400, warmup = 50, seed = 2, progress = FALSE)),
                     as.matrix(sgld(x, y, iter = 400, warmup = 50, seed = 2, progress = FALSE)))
})

test_that("refresh = 0 is silent; cores defaults to the mc.cores option", {
    d <- pima()
    expect_silent(f <- sgldcv(type ~ glu + bmi, d, refresh = 0, seed = 1))
    said <- capture_messages(sgldcv(type ~ glu + bmi, d, refresh = 100, seed = 1,
                                    progress = FALSE))
    expect_true(any(grepl("bulk ESS", said)))
    expect_error(sgldcv(type ~ glu, d, refresh = -1), "'refresh' must be 0")
    withr::local_options(mc.cores = 2L)
    f <- sgld(type ~ glu + bmi, d, iter = 300, chains = 2, seed = 1, progress = FALSE)
    expect_equal(attr(f, "sgfit")$cores, 2L)
})

test_that("adapt_delta is target_accept for mala() and hmc(), refused by the others", {
    d <- pima()
    f <- mala(type ~ glu + bmi, d, iter = 400, adapt_delta = 0.7, seed = 1, progress = FALSE)
    set.seed(1)
    g <- mala(type ~ glu + bmi, d, n_iter = 400, target_accept = 0.7, progress = FALSE)
    expect_identical(as.matrix(f), as.matrix(g))
    expect_error(sgld(type ~ glu, d, adapt_delta = 0.9), "'adapt_delta' is the acceptance rate NUTS")
    expect_error(mala(type ~ glu, d, adapt_delta = 1.2), "'adapt_delta' must be a number between 0 and 1")
})

test_that("rstanarm's arguments without an equivalent are refused, naming what to do", {
    d <- pima()
    expect_error(sgfs(type ~ glu, d, QR = TRUE), "'QR' is rstanarm's QR reparametrisation")
    expect_error(sgfs(type ~ glu, d, algorithm = "meanfield"), "'algorithm'.*sgld\\(\\)")
    expect_error(sgfs(type ~ glu, d, prior_PD = TRUE), "'prior_PD'")
    expect_error(sgfs(type ~ glu, d, sparse = TRUE), "'sparse'")
    expect_error(sgfs(type ~ glu, d, prior = NULL), "'prior' = NULL is rstanarm's flat prior")
    expect_error(sgfs(type ~ glu, d, iter = 300, bogus = 1), "unknown argument\\(s\\): bogus")
})

test_that("as.matrix(), as.data.frame(), summary() and posterior_interval() honour pars and regex_pars", {
    d <- pima()
    f <- sgld(type ~ glu + bmi + age, d, iter = 600, chains = 2, seed = 1, progress = FALSE)
    all <- as.matrix(f)
    expect_identical(as.matrix(f, pars = c("bmi", "glu")), all[, c("bmi", "glu")])
    expect_identical(as.matrix(f, regex_pars = "^(g|a)"), all[, c("glu", "age")])
    expect_identical(colnames(as.matrix(f, pars = "bmi", regex_pars = "^g")), c("bmi", "glu"))
    expect_identical(as.matrix(f, pars = 2), all[, 2, drop = FALSE])
    expect_error(as.matrix(f, pars = "nope"), "'pars' names no parameter of the fit: nope")
    expect_error(as.matrix(f, regex_pars = "^zz"), "'regex_pars' matches no parameter")
    df <- as.data.frame(f, pars = "glu")
    expect_identical(names(df), c("glu", ".chain", ".iteration", ".draw"))
    s <- summary(f, pars = "glu", probs = c(0.1, 0.9))
    expect_identical(rownames(s$quantiles), "glu")
    expect_identical(colnames(s$quantiles), c("10%", "90%"))
    expect_equal(unname(s$quantiles[1, ]), unname(quantile(all[, "glu"], c(0.1, 0.9))),
                 tolerance = 1e-12)
    expect_length(s$ess, 1L)
    expect_error(summary(f, probs = 2), "'probs' must be probabilities")
    expect_error(summary(f, probs = 0.5, quantiles = 0.5), "'probs'")
    pi <- rstantools::posterior_interval(f, regex_pars = "^b")
    expect_identical(rownames(pi), "bmi")
})

test_that("as.array() has rstanarm's layout, which bayesplot reads; plot(fit, type)", {
    d <- pima()
    f <- sgld(type ~ glu + bmi, d, iter = 600, warmup = 100, chains = 2, seed = 1,
              progress = FALSE)
    a <- as.array(f)
    expect_identical(dim(a), c(500L, 2L, 3L))
    expect_identical(dimnames(a)$parameters, coda::varnames(f))
    expect_identical(dimnames(a)$chains, c("chain:1", "chain:2"))
    expect_identical(a[, 2, "bmi"], unname(as.matrix(f[[2]])[, "bmi"]))
    expect_identical(dim(as.array(f, pars = "bmi")), c(500L, 2L, 1L))
    skip_if_not_installed("bayesplot")
    expect_s3_class(plot(f, "areas"), "ggplot")
    expect_s3_class(plot(f, "mcmc_intervals", regex_pars = "^(glu|bmi)$"), "ggplot")
    expect_s3_class(bayesplot::mcmc_trace(as.array(f)), "ggplot")
    expect_error(plot(f, "nosuch"), "'plotfun' names no function of bayesplot \\(mcmc_nosuch\\)")
})
