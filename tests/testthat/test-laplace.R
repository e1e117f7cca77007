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

## the low-rank part of a wide model's metric (R/laplace.R, lowrank_metric())
test_that("the low-rank metric finds the whitened curvature's outlying eigenpairs", {
    D <- 300L
    V <- qr.Q(qr(withr::with_seed(3, matrix(rnorm(D * 3), D))))
    bulk <- withr::with_seed(4, runif(D, 0.5, 1.5))
    B <- qr.Q(qr(withr::with_seed(5, matrix(rnorm(D * D), D))))
    A <- B %*% diag(bulk) %*% t(B)
    P <- diag(D) - V %*% t(V)
    A <- P %*% A %*% P + V %*% diag(c(80, 0.01, 0.2)) %*% t(V)    # outliers 80, 0.01, 0.2
    s <- withr::with_seed(6, exp(rnorm(D)))
    lap <- list(scales = s, H = diag(s) %*% A %*% diag(s))
    lr <- sgfs:::lowrank_metric(lap)
    expect_equal(sort(lr$values), c(0.01, 0.2, 80), tolerance = 1e-6)
    expect_equal(crossprod(lr$vectors), diag(3), tolerance = 1e-10)
    ## the vectors span V's columns
    expect_equal(sum((crossprod(V, lr$vectors))^2), 3, tolerance = 1e-6)
    ## in the corrected coordinates the curvature's largest eigenvalue is the
    ## bulk's (the Lanczos estimate), not 80
    before <- sgfs:::metric_stiffness(lap)
    after <- sgfs:::metric_stiffness(lap, lr)
    expect_equal(before, 80, tolerance = 1e-6)
    expect_equal(after, max(bulk), tolerance = 0.02)
    ## none when nothing is far from 1, or with the option's rank 0
    calm <- list(scales = s, H = diag(s) %*% (P %*% A %*% P + V %*% t(V)) %*% diag(s))
    expect_null(sgfs:::lowrank_metric(calm))
    expect_null(sgfs:::lowrank_metric(lap, max_rank = 0L))
    withr::with_options(list(sgfs.metric_rank = -1), expect_error(sgfs:::metric_rank(), "sgfs.metric_rank"))
})

test_that("a wide sparse model samples in the diagonal metric corrected by its outliers", {
    skip_on_cran()
    ## rows of 6 features each: the intercept nearly their sum
    N <- 3000L
    P <- 600L
    x <- withr::with_seed(7, Matrix::sparseMatrix(
        i = rep(seq_len(N), each = 6L), j = sample(P, 6L * N, replace = TRUE), x = 1,
        dims = c(N, P), dimnames = list(NULL, paste0("w", seq_len(P)))))
    x@x[] <- 1
    y <- withr::with_seed(8, rbinom(N, 1, 0.4))
    fit <- suppressWarnings(withr::with_seed(9, sgld(x, y, n_iter = 100, progress = FALSE)))
    info <- attr(fit, "sgfit")
    expect_match(info$settings$metric, "^diagonal and [0-9]+ eigenvectors? \\(curvature at the mode\\)$")
    k <- ncol(info$spec$metric_vectors)
    expect_equal(length(info$spec$metric_values), k)
    expect_true(all(info$spec$metric_values > 3 | info$spec$metric_values < 1 / 3))
    plain <- suppressWarnings(withr::with_options(list(sgfs.metric_rank = 0),
        withr::with_seed(9, sgld(x, y, n_iter = 100, progress = FALSE))))
    expect_equal(attr(plain, "sgfit")$settings$metric, "diagonal (curvature at the mode)")
    ## the outliers here are soft directions (rows of 6 features: their sum
    ## nearly constant): the stiffest direction, which sets the step, is the
    ## plain metric's (stiff ones lower the stiffness: the test above)
    expect_true(all(info$spec$metric_values < 1 / 3))
    expect_equal(info$settings$stepsize, attr(plain, "sgfit")$settings$stepsize)
})

test_that("the low-rank metric leaves a side out when its outliers do not stand apart", {
    ## a continuum at the top (eigenvalues 4 to 9 over 40 directions): 16
    ## vectors would lower the stiffness by less than `far`
    D <- 300L
    B <- qr.Q(qr(withr::with_seed(5, matrix(rnorm(D * D), D))))
    values <- c(seq(9, 4, length.out = 40), withr::with_seed(4, runif(D - 40, 0.5, 1.5)))
    lap <- list(scales = rep(1, D), H = B %*% diag(values) %*% t(B))
    expect_null(sgfs:::lowrank_metric(lap))
    ## ... while a soft outlier on the other side is still taken
    values[D] <- 0.01
    lr <- sgfs:::lowrank_metric(list(scales = rep(1, D), H = B %*% diag(values) %*% t(B)))
    expect_equal(lr$values, 0.01, tolerance = 1e-6)
})

test_that("the curvature's products with v are one pass on every backend", {
    ## sum_i h_i (u_i' v) u_i (C_sgfs_data_hess_times) against the design
    ## the engine holds, on the compressed rows, the dense copy and the
    ## single-precision one
    p <- sparse_problem()
    h <- withr::with_seed(2, runif(nrow(p$x)))
    v <- withr::with_seed(3, rnorm(ncol(p$x) + 1L))
    specs <- list(rows = engine_spec(p$sparse, p$y, standardize = TRUE)$spec,
                  dense = withr::with_options(list(sgfs.sparse_fill = 0),
                                              engine_spec(p$x, p$y, standardize = TRUE))$spec,
                  single = withr::with_options(list(sgfs.sparse_fill = 0, sgfs.precision = "single"),
                                               engine_spec(p$x, p$y, standardize = TRUE))$spec)
    expect_false(is.null(specs$rows$rows))
    expect_false(is.null(specs$dense$xt))
    expect_false(is.null(specs$single$xt32))
    for (name in names(specs)) {
        spec <- specs[[name]]
        U <- t(.Call(sgfs:::C_sgfs_data_rows_of, spec, seq_len(spec$N)))     # N x P
        expect_equal(.Call(sgfs:::C_sgfs_data_hess_times, spec, h, v),
                     drop(crossprod(U, h * (U %*% v))), tolerance = 1e-12, label = name)
    }
})
