## The Laplace approximation computed once per call (R/laplace.R): the mode
## by Newton's method with the exact Hessian, against glm() and an exact
## Gaussian posterior; its reuse; dispersed chain starts.

test_that("the mode under a flat prior is glm()'s estimate, its curvature glm()'s information", {
    data(Pima.tr, package = "MASS", envir = environment())
    g <- glm(type ~ ., binomial, Pima.tr)
    run <- sgfs:::prepare_run(model.matrix(g)[, -1], Pima.tr$type, binomial(),
                              normal(0, 1e6), NULL, NULL, 1000L, NULL, 1L, 1L, 1L, NULL,
                              TRUE, FALSE, NULL, TRUE)
    lap <- sgfs:::posterior_laplace(run)
    expect_equal(unname(sgfs:::to_original(lap$mode, run$design)), unname(coef(g)),
                 tolerance = 1e-6)
    ## the covariance H^-1 on the original scale is glm()'s vcov
    s <- run$design$scale
    A <- diag(1 / s)                         # beta_j = beta_std_j / s_j (slopes)
    A[1, -1] <- -run$design$center[-1] / s[-1]
    V <- A %*% solve(lap$H) %*% t(A)
    expect_equal(V, unname(vcov(g)), tolerance = 1e-5)
    ## computed once: a second request returns the cached fit
    expect_identical(sgfs:::posterior_laplace(run), lap)
})

test_that("on a gaussian model with known sigma the mode and curvature are exact", {
    cd <- conjugate_data()
    run <- sgfs:::prepare_run(cd$x, cd$y, gaussian(), normal(0, cd$s0), NULL, NULL, 1000L,
                              NULL, 1L, 1L, 1L, NULL, FALSE, FALSE, cd$sigma, TRUE)
    lap <- sgfs:::posterior_laplace(run)
    expect_equal(lap$mode, cd$mean, tolerance = 1e-8, ignore_attr = TRUE)
    expect_equal(solve(lap$H), cd$cov, tolerance = 1e-8, ignore_attr = TRUE)
    expect_equal(crossprod(lap$U), lap$H, tolerance = 1e-12)
    expect_lte(lap$steps, 3L)                 # a quadratic: one Newton step
})

test_that("the warm start on a subset gives the same mode on many rows", {
    set.seed(3)
    N <- 120000
    x <- matrix(rnorm(N * 3), N, 3)
    y <- rbinom(N, 1, plogis(0.5 + x %*% c(1, -0.5, 0.25)))
    run <- sgfs:::prepare_run(x, y, binomial(), NULL, NULL, NULL, 1000L, NULL, 1L, 1L, 1L,
                              NULL, TRUE, FALSE, NULL, TRUE)
    lap <- sgfs:::posterior_laplace(run)
    g <- glm(y ~ x, binomial)
    ## prior normal(0, 2.5) on the standardised scale: negligible at N = 120,000
    expect_equal(unname(sgfs:::to_original(lap$mode, run$design)), unname(coef(g)),
                 tolerance = 1e-3)
    ## converged: a Newton step would raise the log posterior by < 1e-8
    cur <- sgfs:::full_curvature(run$spec, lap$mode)
    expect_lt(sum(cur$grad * solve(cur$H, cur$grad)), 1e-8)
})

test_that("several chains start from dispersed points, reproducibly under set.seed", {
    data(Pima.tr, package = "MASS", envir = environment())
    set.seed(12)
    a <- sgld(type ~ ., data = Pima.tr, n_iter = 200, chains = 3, progress = FALSE)
    set.seed(12)
    b <- sgld(type ~ ., data = Pima.tr, n_iter = 200, chains = 3, progress = FALSE)
    expect_identical(sgfs:::chain_draws(a), sgfs:::chain_draws(b))
    starts <- do.call(rbind, lapply(attr(a, "sgfit")$starts, `[[`, "theta"))
    mode <- attr(a, "sgfit")$laplace$mode
    ## distinct, about 2 Laplace sd from the mode in every direction
    expect_equal(nrow(unique(starts)), 3L)
    H <- sgfs:::full_curvature(sgfs:::fit_spec(attr(a, "sgfit")), mode)$H
    z2 <- apply(starts, 1L, function(th) drop(t(th - mode) %*% H %*% (th - mode)))
    D <- length(mode)
    expect_true(all(z2 > 4 * D / 4 & z2 < 4 * D * 4))
    ## one chain, or numbers given as init: no dispersion
    one <- sgld(type ~ ., data = Pima.tr, n_iter = 200, progress = FALSE)
    expect_equal(attr(one, "sgfit")$starts[[1]]$theta, attr(one, "sgfit")$laplace$mode)
})

test_that("the post-fit check uses the run's mode and costs little", {
    data(Pima.tr, package = "MASS", envir = environment())
    fit <- sgld(type ~ ., data = Pima.tr, n_iter = 5000, progress = FALSE)
    info <- attr(fit, "sgfit")
    expect_false(is.null(info$laplace))
    gap <- sgfs:::mode_gap(fit)
    expect_lt(gap$gap, gap$limit)
    expect_equal(gap$expected, 8 / 2)
    expect_output(print(fit), "Time: set-up .* s \\(of which the mode .* Newton steps\\), sampling .* checks")
})

test_that("one mode search per call, for every sampler of a GLM with several chains", {
    data(Pima.tr, package = "MASS", envir = environment())
    ns <- asNamespace("sgfs")
    searches <- 0L
    counted <- function(...) {
        searches <<- searches + 1L
        original(...)
    }
    original <- get("newton_mode", envir = ns)
    unlockBinding("newton_mode", ns)
    assign("newton_mode", counted, envir = ns)
    on.exit({
        assign("newton_mode", original, envir = ns)
        lockBinding("newton_mode", ns)
    })
    for (fun in list(hmc, mala, sgldcv, sgld, osgfs)) {
        searches <- 0L
        suppressWarnings(fun(type ~ ., data = Pima.tr, n_iter = 50, chains = 2,
                             progress = FALSE))
        expect_equal(searches, 1L)
    }
})
