## Designs kept in a file (design_file(), write_design_file()): mapped, read
## where they are, standardised when read; the same seed gives the draws of
## the same data in memory, for every sampler and family.

file_of <- function(x, precision = "double", chunks = 3L) {
    path <- tempfile(fileext = ".sgd")
    rows <- split(seq_len(nrow(x)), cut(seq_len(nrow(x)), chunks, labels = FALSE))
    for (k in seq_along(rows))
        write_design_file(x[rows[[k]], , drop = FALSE], path, append = k > 1L,
                          precision = precision)
    design_file(path)
}

same_file_draws <- function(fit_memory, fit_file, label) {
    spec <- sgfs:::fit_spec(attr(fit_file, "sgfit"))
    expect_false(is.null(spec$file), label = label)
    expect_null(spec$xt, label = label)
    expect_null(sgfs:::fit_spec(attr(fit_memory, "sgfit"))$file, label = label)
    expect_equal(unclass(as.matrix(fit_file)), unclass(as.matrix(fit_memory)),
                 tolerance = 1e-12, label = label)
}

test_that("a design file holds the rows written, in chunks, and their statistics", {
    p <- sparse_problem()
    xf <- file_of(p$x)
    expect_s3_class(xf, "sgfs_design_file")
    expect_identical(dim(xf), dim(p$x))
    expect_identical(colnames(xf), colnames(p$x))
    expect_identical(xf[, ], p$x)
    expect_identical(xf[c(5, 1, 300), 2:3], p$x[c(5, 1, 300), 2:3])
    expect_identical(as.matrix(xf), p$x)
    expect_output(print(xf), "300 rows x 9 columns")
    ## the columns' statistics: the dense matrix's, to the last bit
    expect_identical(sgfs:::column_stats(xf), sgfs:::column_stats(p$x))
    expect_identical(sgfs:::file_indicator_stats(xf, p$y),
                     .Call(sgfs:::C_sgfs_indicator_stats, p$x, as.double(p$y)))
    expect_identical(sgfs:::design_file_stats(xf)$indicator,
                     apply(p$x, 2, function(v) all(v[v != 0] == 1)), ignore_attr = TRUE)
    ## columns of 0/1, 0/1/2, zeros, ones and one NaN: the same as in memory
    odd <- cbind(p$x[, 1:2], two = p$x[, 1] * 2 + p$x[, 2], zero = 0, one = 1,
                 nan = c(NaN, p$x[-1, 3]))
    xo <- file_of(odd)
    expect_identical(sgfs:::file_indicator_stats(xo, p$count),
                     .Call(sgfs:::C_sgfs_indicator_stats, odd, as.double(p$count)))
    expect_error(sgfs:::file_indicator_stats(xo, p$count[-1]))
    ## the engine reads the standardised rows as it reads the dense copy
    st <- sgfs:::column_stats(p$x)
    center <- c(0, st$mean)
    scale <- c(1, st$sd)
    spec <- sgfs:::data_fields(sgfs:::engine_data(xf, center, scale, lead = TRUE))
    dense <- sgfs:::data_fields(sgfs:::engine_data(p$x, center, scale, rows = FALSE, lead = TRUE))
    expect_identical(sgfs:::data_columns(spec), sgfs:::data_columns(dense))
    b <- withr::with_seed(2, rnorm(10))
    expect_identical(sgfs:::data_xb(spec, b), sgfs:::data_xb(dense, b))
    part <- sgfs:::slice_rows(c(spec, list(y = p$y + 0, batch_size = 2L)), c(7L, 3L, 250L))
    expect_null(part$file)
    expect_identical(part$xt, sgfs:::data_columns(dense, c(7L, 3L, 250L)))
    ## a data frame's numeric columns are written as a matrix's
    df <- as.data.frame(p$x)
    path <- tempfile(fileext = ".sgd")
    on.exit(unlink(path), add = TRUE)
    expect_identical(write_design_file(df, path)[, ], p$x)
})

test_that("every sampler gives the same draws from a design file and from memory", {
    withr::local_options(sgfs.sparse_fill = 0)     # memory: the dense copy, as a file
    p <- sparse_problem()
    xf <- file_of(p$x)
    run <- function(f, x, ...) withr::with_seed(11, suppressWarnings(
        f(x, p$y, n_iter = 300, progress = FALSE, ...)))
    samplers <- draw_samplers()
    for (name in names(samplers))
        same_file_draws(run(samplers[[name]], p$x), run(samplers[[name]], xf), name)
    expect_equal(unclass(run(sga, xf))[1:2], unclass(run(sga, p$x))[1:2], tolerance = 1e-12)
    same_file_draws(run(sgfs, p$x, preconditioner = "diagonal"),
                    run(sgfs, xf, preconditioner = "diagonal"), "sgfs-d")
    same_file_draws(run(sgldcv, p$x, chains = 2, thin = 3, burnin = 60),
                    run(sgldcv, xf, chains = 2, thin = 3, burnin = 60), "sgldcv, 2 chains")
})

test_that("every family samples a design file as the data in memory", {
    withr::local_options(sgfs.sparse_fill = 0)     # memory: the dense copy, as a file
    p <- sparse_problem()
    xf <- file_of(p$x, chunks = 2L)
    fit <- function(x, y, family, ...) withr::with_seed(5, suppressWarnings(
        sgld(x, y, family = family, n_iter = 300, progress = FALSE, ...)))
    same_file_draws(fit(p$x, p$count, poisson()), fit(xf, p$count, poisson()), "poisson")
    same_file_draws(fit(p$x, p$z, gaussian()), fit(xf, p$z, gaussian()), "gaussian")
    same_file_draws(fit(p$x, p$y, binomial("probit")), fit(xf, p$y, binomial("probit")),
                    "probit")
    same_file_draws(fit(p$x, p$class, categorical()), fit(xf, p$class, categorical()),
                    "categorical")
    w <- seq(0.5, 2, length.out = 300)
    same_file_draws(fit(p$x, p$y, binomial(), weights = w, offset = rep(0.1, 300)),
                    fit(xf, p$y, binomial(), weights = w, offset = rep(0.1, 300)),
                    "weights and offset")
    same_file_draws(fit(p$x, p$y, binomial(), standardize = FALSE),
                    fit(xf, p$y, binomial(), standardize = FALSE), "standardize = FALSE")
    ## single precision: the draws of the values a float holds
    x32 <- file_of(p$x, precision = "single")
    expect_lt(max(abs(x32[, ] - p$x)), 1e-6 * max(abs(p$x)))
    same_file_draws(fit(x32[, ], p$y, binomial()), fit(x32, p$y, binomial()), "single")
})

test_that("a file's fit: methods, separated levels, saved and reattached, futures", {
    withr::local_options(sgfs.sparse_fill = 0)     # memory: the dense copy, as a file
    p <- sparse_problem()
    xf <- file_of(p$x)
    a <- withr::with_seed(3, sgld(xf, p$y, n_iter = 400, progress = FALSE))
    b <- withr::with_seed(3, sgld(p$x, p$y, n_iter = 400, progress = FALSE))
    expect_equal(fitted(a), fitted(b), tolerance = 1e-12)
    expect_equal(predict(a, newdata = p$x[1:5, ]), predict(b, newdata = p$x[1:5, ]),
                 tolerance = 1e-12)
    expect_equal(predict(a, newdata = xf[1:5, ]), predict(b, newdata = p$x[1:5, ]),
                 tolerance = 1e-12)
    expect_equal(summary(a)$statistics, summary(b)$statistics, tolerance = 1e-12)
    expect_equal(unclass(as.matrix(withr::with_seed(4, update(a, n_iter = 100)))),
                 unclass(as.matrix(withr::with_seed(4, update(b, n_iter = 100)))),
                 tolerance = 1e-12)
    ## a separated level of a 0/1 column is found in the file as in memory
    ys <- p$y
    ys[p$x[, "rare"] == 1] <- 1
    sa <- withr::with_seed(5, sgld(xf, ys, n_iter = 200, progress = FALSE))
    sb <- withr::with_seed(5, sgld(p$x, ys, n_iter = 200, progress = FALSE))
    expect_identical(attr(sa, "sgfit")$design$separated, attr(sb, "sgfit")$design$separated)
    expect_false(is.null(attr(sa, "sgfit")$design$separated))
    expect_equal(unclass(as.matrix(sa)), unclass(as.matrix(sb)), tolerance = 1e-12)
    ## saved: the file is opened again from its path
    path <- tempfile(fileext = ".rds")
    on.exit(unlink(path), add = TRUE)
    saveRDS(a, path)
    back <- readRDS(path)
    expect_error(fitted(back), "not in this R session")
    more <- withr::with_seed(6, update(back, n_iter = 100, x = design_file(xf$path), y = p$y))
    same <- withr::with_seed(6, update(a, n_iter = 100))
    expect_identical(unclass(as.matrix(more)), unclass(as.matrix(same)))
    expect_error(update(back, n_iter = 10, x = file_of(p$x[-1, ]), y = p$y[-1]),
                 "'x' must be the data this fit was made with")
    ## chains on other processes open the file from its path
    skip_if_not_installed("future")
    skip_on_cran()
    old <- future::plan()
    on.exit(future::plan(old), add = TRUE)
    future::plan(future::multisession, workers = 2)
    multi <- withr::with_seed(7, sgld(xf, p$y, chains = 2, n_iter = 200, progress = FALSE))
    future::plan(future::sequential)
    one <- withr::with_seed(7, sgld(p$x, p$y, chains = 2, n_iter = 200, progress = FALSE))
    expect_equal(unclass(as.matrix(multi)), unclass(as.matrix(one)), tolerance = 1e-12)
})

test_that("bad design files and misuse are refused with clear errors", {
    p <- sparse_problem(50L)
    path <- tempfile(fileext = ".sgd")
    on.exit(unlink(path), add = TRUE)
    expect_error(design_file(path), "'path'.*does not exist")
    expect_error(design_file(c("a", "b")), "'path' must be the path of one file")
    writeLines("not a design", path)
    expect_error(design_file(path), "is not a design file")
    expect_error(write_design_file(p$x, path, append = TRUE), "is not a design file")
    expect_error(write_design_file(data.frame(a = 1:3, b = letters[1:3]), path),
                 "'x' has column.*not numeric.*'b'")
    expect_error(write_design_file(list(1, 2), path), "'x' must be a numeric matrix")
    xf <- write_design_file(p$x, path)
    expect_error(write_design_file(p$x[, 1:3], path, append = TRUE), "'x' has columns")
    expect_error(write_design_file(p$x, path, append = TRUE, precision = "single"),
                 "9 columns of doubles")
    expect_error(xf[51, ], "'i' selects rows beyond")
    y <- p$y[1:50]
    bad <- p$x
    bad[7, "dense"] <- NA
    expect_error(sgld(write_design_file(bad, path), y, n_iter = 10, progress = FALSE),
                 "'x' \\(the design file .*\\) has missing or non-finite values in column 'dense'")
    xf <- write_design_file(p$x, path)
    expect_error(sgld(y ~ ., data = xf, n_iter = 10, progress = FALSE),
                 "'data' is a design file: give it as x")
    expect_error(sgld(xf, y, model = mlp(2), n_iter = 10, progress = FALSE),
                 "'x' is a design file.*needs its data in memory")
    expect_error(sgld(xf, y[-1], n_iter = 10, progress = FALSE), "'y' has 49 values")
    ## a file changed under an open handle is detected, not misread
    xf2 <- design_file(path)
    write_design_file(p$x[1:10, ], path, append = TRUE)
    expect_error(sgld(xf2, y, n_iter = 10, progress = FALSE), "has changed since it was opened")
})
