## Sparse designs (Matrix's dgCMatrix) are kept as compressed rows, never
## densified: the same seed gives the same draws as the dense matrix, for
## every sampler and family.

same_draws <- function(fit_dense, fit_sparse, label) {
    spec <- sgfs:::fit_spec(attr(fit_sparse, "sgfit"))
    expect_null(spec$xt, label = label)
    expect_false(is.null(spec$rows), label = label)
    expect_equal(unclass(as.matrix(fit_sparse)), unclass(as.matrix(fit_dense)),
                 tolerance = 1e-12, label = label)
}

test_that("a sparse design's statistics and rows equal the dense matrix's to the last bit", {
    p <- sparse_problem()
    x <- cbind(1, p$x)
    xs <- cbind(1, p$sparse)
    expect_identical(sgfs:::column_stats(xs), sgfs:::column_stats(x))
    st <- sgfs:::column_stats(x)
    expect_equal(st$mean, colMeans(x), tolerance = 1e-14, ignore_attr = TRUE)
    expect_equal(st$sd, apply(x, 2, sd), tolerance = 1e-13, ignore_attr = TRUE)
    expect_equal(st$meansq, colMeans(x^2), tolerance = 1e-14, ignore_attr = TRUE)
    expect_equal(st$ones, c(TRUE, rep(FALSE, ncol(p$x))))
    center <- c(0, st$mean[-1])
    scale <- c(1, st$sd[-1])
    d1 <- sgfs:::engine_data(x, center, scale)
    d2 <- sgfs:::engine_data(xs, center, scale)
    expect_null(d2$xt)
    expect_identical(d2, d1)
    ## the rows hold the standardised design: every access agrees with it
    spec <- sgfs:::data_fields(d2)
    u <- t(sweep(sweep(x, 2, center), 2, scale, "/"))
    expect_equal(sgfs:::data_columns(spec), u, tolerance = 1e-14, ignore_attr = TRUE)
    b <- withr::with_seed(2, rnorm(nrow(u)))
    expect_equal(sgfs:::data_xb(spec, b), drop(crossprod(u, b)), tolerance = 1e-13)
    idx <- c(7L, 3L, 250L, 3L)
    part <- sgfs:::slice_rows(c(spec, list(y = p$y + 0, batch_size = 2L)), idx)
    expect_identical(part$N, 4L)
    expect_equal(sgfs:::data_columns(part), u[, idx], tolerance = 1e-14, ignore_attr = TRUE)
    ## a dense copy where the rows would store more than half the entries
    dense <- sgfs:::engine_data(cbind(1, Matrix::Matrix(matrix(rnorm(600), 200), sparse = TRUE)),
                                rep(0, 4), rep(1, 4))
    expect_null(dense$rows)
    expect_equal(dim(dense$xt), c(4L, 200L))
})

test_that("every sampler gives the same draws from the sparse and the dense design", {
    p <- sparse_problem()
    run <- function(f, x, ...) withr::with_seed(11, suppressWarnings(
        f(x, p$y, n_iter = 300, progress = FALSE, ...)))
    samplers <- draw_samplers()
    for (name in names(samplers))
        same_draws(run(samplers[[name]], p$x), run(samplers[[name]], p$sparse), name)
    ## sga(): the estimate and its trajectory
    expect_equal(unclass(run(sga, p$sparse))[1:2], unclass(run(sga, p$x))[1:2], tolerance = 1e-12)
    ## the other sparse layouts (by rows, triplets) are taken as they are too
    for (form in c("RsparseMatrix", "TsparseMatrix"))
        same_draws(run(sgld, p$x), run(sgld, methods::as(p$sparse, form)), form)
    ## and several chains, a thinned run with burn-in
    same_draws(run(sgldcv, p$x, chains = 2, thin = 3, burnin = 60),
               run(sgldcv, p$sparse, chains = 2, thin = 3, burnin = 60), "sgldcv, 2 chains")
})

test_that("every family samples the sparse design as the dense one", {
    p <- sparse_problem()
    fit <- function(x, y, family, ...) withr::with_seed(5, suppressWarnings(
        sgld(x, y, family = family, n_iter = 300, progress = FALSE, ...)))
    same_draws(fit(p$x, p$count, poisson()), fit(p$sparse, p$count, poisson()), "poisson")
    same_draws(fit(p$x, p$z, gaussian()), fit(p$sparse, p$z, gaussian()), "gaussian")
    same_draws(fit(p$x, p$y, binomial("probit")), fit(p$sparse, p$y, binomial("probit")),
               "probit")
    same_draws(fit(p$x, p$class, categorical()), fit(p$sparse, p$class, categorical()),
               "categorical")
    same_draws(fit(p$x, p$y, binomial(), weights = seq(0.5, 2, length.out = 300),
                   offset = rep(0.1, 300)),
               fit(p$sparse, p$y, binomial(), weights = seq(0.5, 2, length.out = 300),
                   offset = rep(0.1, 300)), "weights and offset")
    same_draws(fit(p$x, p$y, binomial(), standardize = FALSE),
               fit(p$sparse, p$y, binomial(), standardize = FALSE), "standardize = FALSE")
    ## a network densifies (its first layer is dense)
    a <- withr::with_seed(6, sgld(p$sparse, p$y, model = mlp(3), n_iter = 100, progress = FALSE))
    b <- withr::with_seed(6, sgld(p$x, p$y, model = mlp(3), n_iter = 100, progress = FALSE))
    expect_equal(unclass(as.matrix(a)), unclass(as.matrix(b)), tolerance = 1e-12)
})

test_that("a sparse fit's methods work from its compressed rows", {
    p <- sparse_problem()
    a <- withr::with_seed(3, sgld(p$sparse, p$y, n_iter = 400, progress = FALSE))
    b <- withr::with_seed(3, sgld(p$x, p$y, n_iter = 400, progress = FALSE))
    expect_equal(predict(a, type = "response"), predict(b, type = "response"), tolerance = 1e-12)
    expect_equal(predict(a, newdata = p$x[1:5, ]), predict(b, newdata = p$x[1:5, ]),
                 tolerance = 1e-12)
    ## new rows as a sparse matrix too (a LIBSVM test set), missing values NA
    s <- p$sparse[1:6, ]
    s[2, 3] <- NA
    want <- predict(b, newdata = as.matrix(s), type = "response")
    expect_true(is.na(want[2]))
    expect_equal(predict(a, newdata = s, type = "response"), want, tolerance = 1e-12)
    if (requireNamespace("rstantools", quietly = TRUE))
        expect_equal(rstantools::posterior_linpred(a, newdata = p$sparse[1:4, ]),
                     rstantools::posterior_linpred(b, newdata = p$x[1:4, ]), tolerance = 1e-12)
    expect_equal(fitted(a), fitted(b), tolerance = 1e-12)
    ## the predictive kept for sparse new rows
    ka <- withr::with_seed(3, sgld(p$sparse, p$y, n_iter = 400, progress = FALSE,
                                   keep = predictive(p$sparse[1:7, ])))
    kb <- withr::with_seed(3, sgld(p$x, p$y, n_iter = 400, progress = FALSE,
                                   keep = predictive(p$x[1:7, ])))
    expect_equal(predict(ka, type = "response"), predict(kb, type = "response"),
                 tolerance = 1e-12)
    if (requireNamespace("rstantools", quietly = TRUE))
        expect_equal(rstantools::log_lik(a), rstantools::log_lik(b), tolerance = 1e-12)
    expect_equal(summary(a)$statistics, summary(b)$statistics, tolerance = 1e-12)
    c2 <- withr::with_seed(4, update(a, n_iter = 100))
    d2 <- withr::with_seed(4, update(b, n_iter = 100))
    expect_equal(unclass(as.matrix(c2)), unclass(as.matrix(d2)), tolerance = 1e-12)
})

test_that("bad sparse designs are refused naming the argument", {
    p <- sparse_problem(50L)
    s <- p$sparse
    s@x[1] <- NA
    expect_error(sgld(s, p$y[1:50], n_iter = 10, progress = FALSE), "'x' has missing or non-finite")
    s@x[1] <- Inf
    expect_error(sgld(s, p$y[1:50], n_iter = 10, progress = FALSE), "'x' has missing or non-finite")
    expect_error(sgld(p$sparse[, 0], p$y[1:50], n_iter = 10, intercept = FALSE, progress = FALSE),
                 "'x' has no columns")
    z <- Matrix::Matrix(0, 50, 2, sparse = TRUE)
    z[1, 1] <- 1
    expect_error(sgld(z, p$y[1:50], n_iter = 10, progress = FALSE), "'x' has constant column")
})

test_that("the dense copy in single precision gives the double copy's draws up to its rounding", {
    p <- sparse_problem()
    single <- function(expr) withr::with_options(list(sgfs.precision = "single",
                                                      sgfs.sparse_fill = 0), expr)
    double <- function(expr) withr::with_options(list(sgfs.sparse_fill = 0), expr)
    x <- cbind(1, p$x)
    center <- c(0, colMeans(p$x))
    scale <- c(1, apply(p$x, 2, sd))
    d32 <- single(sgfs:::engine_data(p$x, center, scale, lead = TRUE))
    d64 <- double(sgfs:::engine_data(p$x, center, scale, lead = TRUE))
    expect_null(d32$xt)
    expect_equal(length(d32$xt32), 4 * length(d64$xt))
    s32 <- sgfs:::data_fields(d32)
    s64 <- sgfs:::data_fields(d64)
    ## each value rounded once to single precision
    u64 <- sgfs:::data_columns(s64)
    u32 <- sgfs:::data_columns(s32)
    expect_lt(max(abs(u32 - u64) / pmax(abs(u64), 1e-30)), 2^-23)
    b <- withr::with_seed(3, rnorm(nrow(u64)))
    expect_equal(sgfs:::data_xb(s32, b), drop(crossprod(u32, b)), tolerance = 1e-13)
    expect_equal(.Call(sgfs:::C_sgfs_data_xtr, s32, p$z), drop(u32 %*% p$z), tolerance = 1e-13)
    part <- sgfs:::slice_rows(c(s32, list(y = p$z, batch_size = 2L)), c(5L, 1L))
    expect_identical(sgfs:::data_columns(part), u32[, c(5, 1)])
    ## values a float holds exactly (0/1 and small whole numbers, not
    ## standardised): the same draws, for every kind of step (to the last
    ## bit but where BLAS sums a block in place or gathered: SGFS's scores)
    xi <- cbind(p$x[, 1:7], round(4 * p$x[, 8:9]))
    for (f in list(sgld, sgldcv, sgfs, sghmc)) {
        a <- withr::with_seed(4, single(f(xi, p$y, standardize = FALSE, n_iter = 300,
                                          progress = FALSE)))
        b <- withr::with_seed(4, double(f(xi, p$y, standardize = FALSE, n_iter = 300,
                                          progress = FALSE)))
        expect_false(is.null(sgfs:::fit_spec(attr(a, "sgfit"))$xt32))
        expect_equal(unclass(as.matrix(a)), unclass(as.matrix(b)), tolerance = 1e-12)
    }
    ## standardised predictors: rounded, the draws move by far less than
    ## their Monte Carlo error
    a <- withr::with_seed(5, single(sgldcv(p$x, p$y, n_iter = 2000, progress = FALSE)))
    b <- withr::with_seed(5, double(sgldcv(p$x, p$y, n_iter = 2000, progress = FALSE)))
    sd_b <- apply(as.matrix(b), 2, sd)
    expect_lt(max(abs(as.matrix(a) - as.matrix(b)) / rep(sd_b, each = nrow(as.matrix(b)))), 1e-3)
    expect_error(withr::with_options(list(sgfs.precision = "half"), sgld(p$x, p$y, n_iter = 10)),
                 "sgfs.precision")
    ## saved and read back, it takes its data again in its own precision
    f <- tempfile(fileext = ".rds")
    saveRDS(a, f)
    back <- readRDS(f)
    more <- withr::with_seed(6, double(update(back, n_iter = 100, x = p$x, y = p$y)))
    same <- withr::with_seed(6, single(update(a, n_iter = 100)))
    expect_identical(unclass(as.matrix(more)), unclass(as.matrix(same)))
    expect_false(is.null(sgfs:::fit_spec(attr(more, "sgfit"))$xt32))
})

test_that("a wide sparse design samples at the defaults without dense D x D or P x batch arrays", {
    skip_on_cran()
    N <- 4000L
    P <- 20000L                          # (every column in one row or more)
    x <- withr::with_seed(6, Matrix::sparseMatrix(
        i = rep(seq_len(N), each = 6L), j = c(sample(P), sample(P, N)), x = 1,
        dims = c(N, P), dimnames = list(NULL, paste0("w", seq_len(P)))))
    x@x[] <- 1
    y <- withr::with_seed(7, rbinom(N, 1, plogis(-0.5 + 2 * x[, 1])))
    for (f in list(sgld, sgldcv)) {
        ## (batch 500: P x batch doubles would be 80 MB, so the run keeps one
        ## column of gather scratch, and must never gather)
        ## (200 iterations leave the chain near its start, the mode, and the
        ## check of the draws' log density says so: with 20,001 parameters
        ## they would be about 10^4 below the mode)
        expect_warning(fit <- withr::with_seed(8, f(x, y, n_iter = 200, thin = 10,
                                                    batch_size = 500, progress = FALSE)),
                       "bunched near the posterior's mode.*20001 parameters")
        expect_identical(dim(as.matrix(fit)), c(18L, ncol(x) + 1L))
        expect_true(all(is.finite(as.matrix(fit))))
        expect_match(attr(fit, "sgfit")$settings$metric, "diagonal")
    }
    ## rules with D x D matrices say so
    expect_error(hmc(x, y, n_iter = 10, progress = FALSE), "sgld\\(\\) or sgldcv\\(\\)")
})
