## Posteriors against exact answers (conjugate Gaussian linear model) and a
## long full-data MALA reference (Pima).  Tolerances: the number of effective
## draws is chosen so that Monte Carlo error is at most about a third of the
## tolerance (mean: sd/sqrt(ESS); variance: sqrt(2/ESS) relative).

test_that("SGFS-f at alpha = 0 samples the exact Gaussian posterior at n/N = 0.01 and 0.3", {
    skip_on_cran()
    cd <- conjugate_data()
    for (setting in list(c(n = 100, iter = 150000), c(n = 3000, iter = 8000))) {
        set.seed(101)
        fit <- sgfs(cd$x, cd$y, family = gaussian(), sigma = cd$sigma,
                    prior = normal(0, cd$s0), standardize = FALSE, alpha = 0,
                    batch_size = setting[["n"]], n_iter = setting[["iter"]],
                    burnin = 1000, progress = FALSE, control_variates = FALSE)
        expect_close_to_exact(fit, cd, trace_tol = 0.05)
    }
})

test_that("SGFS-f with default settings is exact on the conjugate model", {
    skip_on_cran()
    cd <- conjugate_data()
    set.seed(102)
    fit <- sgfs(y ~ ., data = data.frame(cd$x, y = cd$y), family = gaussian(),
                sigma = cd$sigma, prior = normal(0, cd$s0), standardize = FALSE,
                n_iter = 300000, thin = 5, progress = FALSE)
    expect_close_to_exact(fit, cd)
})

test_that("SGLD at a small step is close to the exact Gaussian posterior", {
    skip_on_cran()
    cd <- conjugate_data()
    set.seed(103)
    fit <- sgld(cd$x, cd$y, family = gaussian(), sigma = cd$sigma,
                prior = normal(0, cd$s0), standardize = FALSE, batch_size = 100,
                n_iter = 1200000, burnin = 20000, thin = 20, chains = 2, cores = 2,
                init = cd$mean, progress = FALSE, metric = "identity")
    ## the default step (derived from the curvature) keeps the bias near 5 %
    eps <- attr(fit, "sgfit")$settings$stepsize
    expect_lt(eps, 0.21 / (1 + 100 * 0.99) / max(eigen(solve(cd$cov))$values))
    expect_close_to_exact(fit, cd)
})

test_that("with the prior precision in its preconditioner SGFS-f is exact when the prior matters", {
    skip_on_cran()
    ## prior precision 100 against data precision ~200 per coefficient: without
    ## Lambda in the preconditioner the stationary variances would be ~20 % too
    ## large (algorithms vignette 2.8b)
    cd <- conjugate_data(N = 200, D = 5, s0 = 0.1, seed = 7)
    set.seed(106)
    fit <- sgfs(cd$x, cd$y, family = gaussian(), sigma = 1, prior = normal(0, 0.1),
                standardize = FALSE, alpha = 0, batch_size = 50, n_iter = 60000,
                progress = FALSE, control_variates = FALSE)
    expect_gt(min(coda::effectiveSize(fit)), 5000)   # variance MC sd <= 2 %
    expect_close_to_exact(fit, cd, var_tol = 0.06, trace_tol = 0.03)
})

## a long run at the sampler's default step on Pima, against the reference
## (ESS > 400: E1's Monte Carlo error is well below 0.05)
expect_accurate_on_pima <- function(sampler, seed, ...) {
    ref <- pima_reference()
    d <- pima_data()
    set.seed(seed)
    fit <- sampler(d$x, d$y, prior = normal(0, 1), n_iter = 400000, thin = 20,
                   progress = FALSE, ...)
    expect_gt(min(coda::effectiveSize(fit)), 400)
    e <- rel_error(fit, ref$mean, ref$cov)
    expect_lte(e[["E1"]], 0.05)
    expect_lte(e[["E2"]], 0.20)
    ## the step's variance inflation (~5 %) plus Monte Carlo error
    expect_lt(max(abs(diag(vcov(fit)) / diag(ref$cov) - 1)), 0.25)
}

test_that("pSGLD, SGHMC and SGNHT at their default steps are accurate on Pima", {
    skip_on_cran()
    expect_accurate_on_pima(psgld, 107)
    expect_accurate_on_pima(sghmc, 108)
    expect_accurate_on_pima(sgnht, 109)
})

test_that("SGLD-CV, OSGFS and I-SGD are accurate on Pima", {
    skip_on_cran()
    expect_accurate_on_pima(sgldcv, 110)
    expect_accurate_on_pima(isgd, 111)
    ## OSGFS at the largest step with positive semi-definite noise; at
    ## stepsize = 1 the minibatch noise here exceeds the target (the fit
    ## reports it) and inflates some variances by up to about that much
    expect_accurate_on_pima(osgfs, 112, stepsize = "max")
    d <- pima_data()
    set.seed(113)
    fit <- osgfs(d$x, d$y, prior = normal(0, 1), n_iter = 2000, progress = FALSE,
                 stratify = FALSE, control_variates = FALSE)
    excess <- attr(fit, "sgfit")$settings$excess
    expect_gt(excess, 0.2)
    expect_output(print(fit), "minibatch noise exceeds OSGFS's target")
    ## the rows of high leverage held in every minibatch take that noise away
    set.seed(113)
    held <- osgfs(d$x, d$y, prior = normal(0, 1), n_iter = 2000, progress = FALSE,
                  control_variates = FALSE)
    expect_gt(attr(held, "sgfit")$settings$fixed_rows, 0)
    expect_lt(attr(held, "sgfit")$settings$excess, excess / 2)
})

test_that("full-data HMC and MALA agree with each other and with the reference on Pima", {
    skip_on_cran()
    ref <- pima_reference()
    d <- pima_data()
    set.seed(114)
    h <- hmc(d$x, d$y, prior = normal(0, 1), n_iter = 22000, burnin = 2000, progress = FALSE)
    set.seed(115)
    m <- mala(d$x, d$y, prior = normal(0, 1), n_iter = 44000, burnin = 4000, progress = FALSE)
    e <- rel_error(m, coef(h), vcov(h))
    expect_lte(e[["E1"]], 0.02)
    expect_lte(e[["E2"]], 0.10)
    for (fit in list(h, m)) {
        e <- rel_error(fit, ref$mean, ref$cov)
        expect_lte(e[["E1"]], 0.02)
        expect_lte(e[["E2"]], 0.10)
    }
    expect_equal(sgfs:::acceptance_rate(attr(h, "sgfit")), 0.8, tolerance = 0.1)
    expect_output(print(m), "MALA \\(full data; step .* acceptance rate 0\\.[56]")
})

test_that("the Pima MALA reference is itself converged (two runs agree)", {
    skip_on_cran()
    ref <- pima_reference()
    r <- ref$runs
    expect_gt(r[[1]]$acceptance, 0.4)
    e <- rel_error(r[[1]]$draws, r[[2]]$mean, r[[2]]$cov)
    expect_lt(e[["E1"]], 0.01)
    expect_lt(e[["E2"]], 0.08)
})

test_that("SGFS-f with default settings reaches E1 <= 0.05, E2 <= 0.20 on Pima", {
    skip_on_cran()
    ref <- pima_reference()
    d <- pima_data()
    set.seed(104)
    fit <- sgfs(d$x, d$y, prior = normal(0, 1), progress = FALSE, verbose = FALSE)
    e <- rel_error(fit, ref$mean, ref$cov)
    expect_lte(e[["E1"]], 0.05)
    expect_lte(e[["E2"]], 0.20)
    ## sharper, on a longer run (ESS ~3000: variance ratios have Monte Carlo
    ## sd ~2.6 %): the paper's uncorrected SGFS-f has E2 ~0.16 and variance
    ## ratios 0.86-0.95 here
    set.seed(105)
    long <- sgfs(d$x, d$y, prior = normal(0, 1), n_iter = 50000, progress = FALSE)
    expect_gt(min(coda::effectiveSize(long)), 2500)
    expect_lte(rel_error(long, ref$mean, ref$cov)[["E2"]], 0.10)
    expect_lt(max(abs(diag(vcov(long)) / diag(ref$cov) - 1)), 0.08)
    ## and through the formula interface, with the same seed, the same draws
    pima <- data.frame(d$x, type = d$y)
    set.seed(104)
    fit2 <- sgfs(type ~ ., data = pima, prior = normal(0, 1), progress = FALSE,
                 verbose = FALSE)
    expect_equal(unname(sgfs:::all_draws(fit2)), unname(sgfs:::all_draws(fit)),
                 tolerance = 1e-10)
})

test_that("fits with and without standardisation agree under a weak prior", {
    ## standardisation is internal: the likelihood and the reported draws are
    ## the same; only the prior's scale moves
    cd <- conjugate_data(N = 2000, D = 4)
    x <- cd$x * rep(c(10, 0.1, 1), each = nrow(cd$x)) + 5
    X <- cbind(1, x)
    exact_cov <- solve(crossprod(X))
    exact_mean <- drop(exact_cov %*% crossprod(X, cd$y))
    fits <- lapply(c(TRUE, FALSE), function(s) {
        set.seed(105)
        sgfs(x, cd$y, family = gaussian(), sigma = 1, prior = normal(0, 1000),
             standardize = s, alpha = 0, batch_size = 500, n_iter = 30000,
             progress = FALSE, control_variates = FALSE)
    })
    for (fit in fits) {
        expect_lt(max(abs(coef(fit) - exact_mean) / sqrt(diag(exact_cov))), 0.1)
        expect_lt(max(abs(diag(vcov(fit)) / diag(exact_cov) - 1)), 0.15)
    }
})

test_that("OSGFS's mean at a batch of 0.1 % of N: no shift beyond Monte Carlo error", {
    skip_on_cran()
    ## El Hanchi (2018) saw OSGFS's mean shift (covariance right) with batches
    ## below ~1 % of N.  With the without-replacement gamma, the exact Hessian
    ## and the score covariance at the Newton-polished mode, and a start at
    ## the mode, we do not reproduce it: on this skewed (rare-event) logistic
    ## posterior the mean at n = 0.1 % N and at 10 % N is within Monte Carlo
    ## error of full-data HMC (measured shifts <= 0.05 sd, down to 0.1 % N, on
    ## N = 20,000 and 50,000).  Small batches do mix slowly: the integrated
    ## autocorrelation time is about gamma ~ N/n iterations, so a run of fixed
    ## length at a small batch has a Monte Carlo error of the mean of about
    ## sqrt(N / (n T)) sd, which a plot of means against a reference shows
    ## as a "shift".
    withr::with_seed(7, {
        N <- 10000
        x <- matrix(rnorm(N * 2), N)
        y <- rbinom(N, 1, plogis(drop(cbind(1, x) %*% c(-4, 1.5, -1))))
    })
    set.seed(121)
    ref <- hmc(x, y, n_iter = 6000, progress = FALSE)
    for (n in c(10L, 1000L)) {
        set.seed(122)
        fit <- osgfs(x, y, batch_size = n, n_iter = if (n == 10L) 800000 else 40000,
                     thin = if (n == 10L) 20 else 1, progress = FALSE, control_variates = FALSE)
        ess <- min(coda::effectiveSize(fit))
        expect_gt(ess, 500)
        z <- (coef(fit) - coef(ref)) / sqrt(diag(vcov(ref)))
        expect_lt(max(abs(z)), 0.05 + 3 / sqrt(ess))
        expect_lt(max(abs(diag(vcov(fit)) / diag(vcov(ref)) - 1)), 0.15)
    }
})

test_that("categorical(): MALA and SGFS-f agree with an R softmax posterior", {
    skip_on_cran()
    ## simulated, well specified (N = 3000, K = 3): the posterior is close to
    ## Gaussian and the empirical Fisher close to the Hessian.  (On nearly
    ## separable data, e.g. iris by sepal size alone, the empirical Fisher
    ## is far below the Hessian across the separating direction and SGFS
    ## over-disperses there: its known failure on non-Gaussian posteriors.)
    withr::with_seed(9, {
        x <- matrix(rnorm(6000), 3000, 2)
        eta <- cbind(0, cbind(1, x) %*% matrix(c(0.5, 1, -1, -0.5, 0.5, 1), 3))
        y <- factor(apply(exp(eta), 1L, function(p) sample(c("a", "b", "c"), 1L, prob = p)))
    })
    X <- cbind(1, x)
    logpost <- function(b) {
        eta <- cbind(0, X %*% matrix(b, 3))
        sum(eta[cbind(seq_along(y), as.integer(y))] - log(rowSums(exp(eta)))) - sum(b^2) / 2
    }
    mode <- optim(double(6), function(b) -logpost(b), method = "BFGS",
                  control = list(reltol = 1e-14, maxit = 1000))$par
    sd <- sqrt(diag(solve(optimHess(mode, function(b) -logpost(b)))))
    set.seed(131)
    m <- mala(x, y, family = categorical(), prior = normal(0, 1), standardize = FALSE,
              n_iter = 22000, burnin = 2000, progress = FALSE)
    expect_lt(max(abs(coef(m) - mode) / sd), 0.1)
    expect_true(all(abs(sqrt(diag(vcov(m))) / sd - 1) < 0.1))
    set.seed(132)
    s <- sgfs(x, y, family = categorical(), prior = normal(0, 1), standardize = FALSE,
              n_iter = 40000, progress = FALSE)
    e <- rel_error(s, coef(m), vcov(m))
    expect_lte(e[["E1"]], 0.05)
    expect_lte(e[["E2"]], 0.15)
    p <- predict(s, type = "response")
    expect_equal(dim(p), c(3000L, 3L))
    expect_equal(unname(rowSums(p)), rep(1, 3000), tolerance = 1e-12)
    expect_identical(levels(predict(s, type = "class")), levels(y))
    expect_error(predict(s, type = "link"), "'type' must be \"response\" or \"class\"")
})
