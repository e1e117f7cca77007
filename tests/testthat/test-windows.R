## Minibatches as windows of consecutive rows (src/minibatch.c) and design
## files put in random order for them (shuffle_design_file(),
## src/design_file_shuffle.c).

shuffled_file <- function(x, y, seed = 5, memory = 2^30) {
    path <- tempfile(fileext = ".sgd")
    write_design_file(x[seq_len(nrow(x) %/% 2), , drop = FALSE], path)
    write_design_file(x[-seq_len(nrow(x) %/% 2), , drop = FALSE], path, append = TRUE)
    out <- tempfile(fileext = ".sgd")
    s <- withr::with_seed(seed, shuffle_design_file(path, out, y = y, memory = memory))
    unlink(path)
    s
}

test_that("shuffle_design_file() writes the rows in the order it returns, in bounded memory", {
    p <- sparse_problem()
    w <- seq_len(nrow(p$x)) / 10
    dir <- tempfile("shuffle")
    dir.create(dir)
    on.exit(unlink(dir, recursive = TRUE), add = TRUE)
    path <- file.path(dir, "in.sgd")
    write_design_file(p$x, path)
    expect_false(design_file(path)$shuffled)
    ## buckets of 7 rows (43 of them): the memory bound is honoured
    s <- withr::with_seed(3, shuffle_design_file(path, file.path(dir, "out.sgd"), y = p$y,
                                                 weights = w, memory = 7 * 9 * 8))
    expect_true(s$x$shuffled)
    expect_output(print(s$x), "300 rows x 9 columns")
    expect_identical(sort(s$order), seq_len(300L))
    expect_false(identical(s$order, seq_len(300L)))
    expect_identical(s$x[, ], p$x[s$order, ])
    expect_identical(s$y, p$y[s$order])
    expect_identical(s$weights, w[s$order])
    expect_null(s$offset)
    ## the permutation is R's: the same seed, the same order
    expect_identical(s$order, withr::with_seed(3, sample.int(300L)))
    ## the buckets are gone; the input is untouched
    expect_setequal(list.files(dir), c("in.sgd", "out.sgd"))
    expect_identical(design_file(path)[, ], p$x)
    ## in place: the file replaced by its shuffled copy
    s2 <- withr::with_seed(3, shuffle_design_file(path, path))
    expect_identical(s2$x[, ], p$x[s2$order, ])
    expect_setequal(list.files(dir), c("in.sgd", "out.sgd"))
    ## appended rows are in their own order: the flag is cleared
    write_design_file(p$x[1:2, ], path, append = TRUE)
    expect_false(design_file(path)$shuffled)
    ## single precision; one row less than a bucket
    path32 <- file.path(dir, "single.sgd")
    write_design_file(p$x, path32, precision = "single")
    s3 <- withr::with_seed(4, shuffle_design_file(path32, path32))
    expect_identical(s3$x$bytes, 4L)
    expect_equal(s3$x[, ], p$x[s3$order, ], tolerance = 1e-6)
})

test_that("shuffle_design_file() refuses bad arguments, naming them", {
    p <- sparse_problem()
    path <- tempfile(fileext = ".sgd")
    on.exit(unlink(path), add = TRUE)
    write_design_file(p$x, path)
    out <- tempfile(fileext = ".sgd")
    expect_error(shuffle_design_file(path, out, y = p$y[-1]), "'y'.*299 values.*300 rows")
    expect_error(shuffle_design_file(path, out, offset = 1:3), "'offset'")
    expect_error(shuffle_design_file(path, out, memory = -1), "'memory'")
    expect_error(shuffle_design_file(path, NA_character_), "'out'")
    expect_error(shuffle_design_file(tempfile(), out), "'path'.*does not exist")
    expect_false(file.exists(out))
    expect_error(withr::with_options(list(sgfs.batches = "blocks"),
                                     sgld(p$x, p$y, n_iter = 10, progress = FALSE)),
                 "sgfs.batches")
})

test_that("windows: the C chain equals the R replay (SGLD, SGLD-CV's stratified pool)", {
    p <- ref_problem(N = 50)
    withr::local_options(sgfs.batches = "windows")
    set.seed(42)
    c1 <- c_chain(sgld, p, 10L, 40L, stepsize = 0.01)
    set.seed(42)
    r1 <- r_chain(p, 3, 10L, 40L, function(t) 0.01, sgld_update, minibatch = r_windows())
    expect_equal(unname(c1), r1, tolerance = 1e-12)
    ## windows that wrap around: a batch of 45 of 50 rows
    set.seed(43)
    c2 <- c_chain(sgld, p, 45L, 30L, stepsize = 0.005)
    set.seed(43)
    r2 <- r_chain(p, 3, 45L, 30L, function(t) 0.005, sgld_update, minibatch = r_windows())
    expect_equal(unname(c2), r2, tolerance = 1e-12)
})

test_that("a shuffled file in windows gives the draws of the same rows in memory", {
    withr::local_options(sgfs.sparse_fill = 0)     # memory: the dense copy, as a file
    p <- sparse_problem()
    s <- shuffled_file(p$x, p$y)
    on.exit(unlink(s$x$path), add = TRUE)
    xs <- p$x[s$order, ]
    run <- function(f, x, ...) withr::with_seed(11, suppressWarnings(
        f(x, s$y, n_iter = 300, progress = FALSE, ...)))
    windows <- function(f, x) withr::with_options(list(sgfs.batches = "windows"), run(f, x))
    samplers <- draw_samplers()
    for (name in names(samplers)) {
        from_file <- windows(samplers[[name]], s$x)
        expect_identical(sgfs:::fit_spec(attr(from_file, "sgfit"))$windows, 32L)
        expect_equal(unclass(as.matrix(from_file)), unclass(as.matrix(windows(samplers[[name]], xs))),
                     tolerance = 1e-12, label = name)
    }
    ## a shuffled file of fewer than 10,000 rows: random rows by default,
    ## the draws of random rows in memory
    rows <- run(sgld, s$x)
    expect_equal(unclass(as.matrix(rows)), unclass(as.matrix(run(sgld, xs))), tolerance = 1e-12)
    expect_identical(sgfs:::fit_spec(attr(rows, "sgfit"))$windows, 0L)
    ## of 10,000 rows or more, windows by default, whole batches once it is
    ## larger than memory (as this machine would see a larger file)
    big <- s$x
    big$N <- as.integer(min(.Machine$integer.max, ceiling(sgfs:::physical_memory() /
                                                            (big$bytes * big$ncol))))
    expect_identical(sgfs:::batch_windows(list(file = list(design = big), N = big$N)), 32L)
    expect_identical(sgfs:::window_rows(list(file = list(design = big), N = big$N), 500L), 500L)
    expect_identical(sgfs:::batch_windows(list(file = list(design = s$x), N = 300L)), 0L)
    unshuffled <- big
    unshuffled$shuffled <- FALSE
    expect_identical(sgfs:::batch_windows(list(file = list(design = unshuffled), N = big$N)), 0L)
    ## windows are not the random rows' draws
    expect_false(isTRUE(all.equal(as.matrix(rows), as.matrix(windows(sgld, s$x)))))
})

test_that("a shuffled file of many rows is read in the blocks of the shuffled copy in memory", {
    N <- 12000L
    x <- withr::with_seed(21, matrix(rnorm(4 * N), N, 4, dimnames = list(NULL, paste0("x", 1:4))))
    y <- withr::with_seed(22, rbinom(N, 1, plogis(0.3 + x %*% c(1, -0.5, 0.25, 0))))
    s <- shuffled_file(x, y)
    on.exit(unlink(s$x$path), add = TRUE)
    ## the rows as the engine's copy would hold them: the file's order
    o <- sgfs:::copy_order(N)
    xm <- x
    xm[o, ] <- x[s$order, ]
    ym <- y
    ym[o] <- s$y
    run <- function(f, x, y) withr::with_seed(12, suppressWarnings(
        f(x, y, n_iter = 200, batch_size = 120L, progress = FALSE)))
    for (f in list(sgld, sgfs)) {
        from_file <- run(f, s$x, s$y)
        spec <- sgfs:::fit_spec(attr(from_file, "sgfit"))
        ## blocks of the largest divisor of 120 up to max(8, 3e-4 N) = 8
        expect_identical(spec$windows, 32L)
        expect_identical(spec$window_rows, 8L)
        in_memory <- run(f, xm, ym)
        expect_identical(sgfs:::fit_spec(attr(in_memory, "sgfit"))$order, o)
        expect_equal(unclass(as.matrix(from_file)), unclass(as.matrix(in_memory)),
                     tolerance = 1e-12)
        ## asking for the windows ahead and letting their pages go after (a
        ## file larger than memory) changes nothing but the reads
        prefetched <- withr::with_options(list(sgfs.file_prefetch = TRUE), run(f, s$x, s$y))
        expect_identical(unclass(as.matrix(prefetched)), unclass(as.matrix(from_file)))
    }
    ## the same through SGLD-CV's pool of the rows not held fixed (the 4
    ## rows of a rare indicator)
    x[, 4] <- 0
    x[c(10, 500, 7000, 9000), 4] <- 1
    y[c(10, 500, 7000, 9000)] <- c(1, 1, 0, 0)
    s <- shuffled_file(x, y)
    on.exit(unlink(s$x$path), add = TRUE)
    ## whole-batch windows of 600 rows of 32 bytes: pages wholly inside
    ## them are let go (src/design_file.c)
    cv <- function() withr::with_seed(13, suppressWarnings(
        sgldcv(s$x, s$y, n_iter = 200, batch_size = 600L, progress = FALSE)))
    withr::local_options(sgfs.batches = "windows")
    plain <- cv()
    expect_gt(attr(plain, "sgfit")$settings$fixed_rows, 0L)
    prefetched <- withr::with_options(list(sgfs.file_prefetch = TRUE), cv())
    expect_identical(unclass(as.matrix(prefetched)), unclass(as.matrix(plain)))
})

test_that("a run in windows continues exactly, and its chains run anywhere with the same draws", {
    withr::local_options(sgfs.batches = "windows")
    p <- sparse_problem()
    s <- shuffled_file(p$x, p$y)
    on.exit(unlink(s$x$path), add = TRUE)
    one <- withr::with_seed(7, sgld(s$x, s$y, n_iter = 400, burnin = 0, chains = 2,
                                    progress = FALSE))
    part <- withr::with_seed(7, sgld(s$x, s$y, n_iter = 150, burnin = 0, chains = 2,
                                     progress = FALSE))
    expect_length(attr(part, "sgfit")$states[[1]]$starts, 32L)
    more <- update(part, n_iter = 250)
    expect_equal(sgfs:::all_draws(more), sgfs:::all_draws(one),
                 tolerance = 1e-12)
    forked <- withr::with_seed(7, sgld(s$x, s$y, n_iter = 400, burnin = 0, chains = 2,
                                       cores = 2, progress = FALSE))
    expect_equal(sgfs:::all_draws(forked), sgfs:::all_draws(one),
                 tolerance = 1e-12)
})

test_that("windows of shuffled rows sample the posterior of random rows", {
    ## a gaussian linear model: the exact posterior; SGLD-CV in windows of a
    ## shuffled file against it, as in random rows
    set.seed(21)
    N <- 4000L
    x <- matrix(rnorm(N * 3), N, 3, dimnames = list(NULL, c("a", "b", "c")))
    y <- drop(1 + x %*% c(0.5, -0.3, 0.2) + rnorm(N))
    x <- x[order(y), ]                 # a file sorted by the response
    y <- sort(y)
    s <- shuffled_file(x, y, memory = 400 * 24)
    on.exit(unlink(s$x$path), add = TRUE)
    fit <- withr::with_seed(22, withr::with_options(list(sgfs.batches = "windows"),
        sgldcv(s$x, s$y, family = gaussian(), n_iter = 20000, batch_size = 100, chains = 2,
               progress = FALSE)))
    expect_identical(sgfs:::fit_spec(attr(fit, "sgfit"))$windows, 32L)
    ref <- lm(y ~ x)
    est <- summary(fit)$statistics
    se <- sqrt(diag(vcov(ref)))[2:4]
    z <- (est[2:4, "Mean"] - coef(ref)[2:4]) / se
    expect_true(all(abs(z) < 0.15), info = paste(round(z, 3), collapse = " "))
    expect_true(all(abs(est[2:4, "SD"] / se - 1) < 0.08),
                info = paste(round(est[2:4, "SD"] / se, 3), collapse = " "))
})

test_that("a dense copy of many rows is shuffled and read in windows; methods see the user's order", {
    set.seed(31)
    N <- 12000L
    x <- matrix(rnorm(N * 3), N, 3, dimnames = list(NULL, c("a", "b", "c")))
    x <- x[order(x[, 1]), ]                        # rows in an order that matters
    off <- runif(N, -0.2, 0.2)
    w <- runif(N, 0.5, 1.5)
    y <- rbinom(N, 1, plogis(0.2 + x %*% c(1, -0.5, 0.25) + off))
    fit <- suppressWarnings(sgld(x, y, offset = off, weights = w, n_iter = 400,
                                 progress = FALSE))
    spec <- sgfs:::fit_spec(attr(fit, "sgfit"))
    expect_identical(spec$windows, 32L)
    expect_identical(sort(spec$order), seq_len(N))
    expect_false(identical(spec$order, seq_len(N)))
    ## the copy's column k is the user's row order[k], and y, offsets and
    ## weights follow it
    st <- sgfs:::column_stats(x)
    u <- sgfs:::data_columns(spec, 1:5)
    expect_equal(u[-1, ], t(scale(x, st$mean, st$sd))[, spec$order[1:5]], tolerance = 1e-12,
                 ignore_attr = TRUE)
    expect_identical(spec$y, as.double(y[spec$order]))
    expect_equal(spec$offset, off[spec$order])
    expect_equal(spec$weights, w[spec$order])
    expect_equal(sgfs:::data_columns(spec, sgfs:::engine_rows(spec, c(7L, 3L)))[-1, ],
                 t(scale(x, st$mean, st$sd))[, c(7L, 3L)], tolerance = 1e-12, ignore_attr = TRUE)
    ## per-row outputs in the user's order: log_lik against the draws by hand
    d <- as.matrix(fit)
    eta <- d %*% t(cbind(1, x)) + rep(off, each = nrow(d))
    by_hand <- rep(w, each = nrow(d)) * (y[rep(seq_len(N), each = nrow(d))] * eta - log1p(exp(eta)))
    expect_equal(unname(rstantools::log_lik(fit)), unname(by_hand), tolerance = 1e-10)
    expect_equal(unname(fitted(fit)), colMeans(plogis(eta)), tolerance = 1e-10)
    expect_equal(unname(residuals(fit, type = "response")), unname(y - fitted(fit)),
                 tolerance = 1e-12)
    ## with options(sgfs.batches = "rows"), or below 10,000 rows: the user's order
    rows <- withr::with_options(list(sgfs.batches = "rows"),
                                suppressWarnings(sgld(x, y, n_iter = 50, progress = FALSE)))
    expect_null(sgfs:::fit_spec(attr(rows, "sgfit"))$order)
    expect_identical(sgfs:::fit_spec(attr(rows, "sgfit"))$windows, 0L)
    small <- suppressWarnings(sgld(x[1:9999, ], y[1:9999], n_iter = 50, progress = FALSE))
    expect_null(sgfs:::fit_spec(attr(small, "sgfit"))$order)
    expect_identical(spec$window_rows, 8L)       # (3e-4 N, at least 8, dividing 120)
})

test_that("short windows of a shuffled copy: the C chain equals the R replay", {
    p <- ref_problem(N = 12000)
    o <- sgfs:::copy_order(12000L)
    ## batches of 30: windows of 6 rows (the largest divisor of 30 up to 8),
    ## 5 distinct blocks a batch
    set.seed(46)
    c1 <- c_chain(sgld, p, 30L, 25L, stepsize = 1e-4)
    q <- p
    q$X <- p$X[o, , drop = FALSE]
    q$y <- p$y[o]
    set.seed(46)
    r1 <- r_chain(q, 3, 30L, 25L, function(t) 1e-4, sgld_update, minibatch = r_windows(32L, 6L))
    expect_equal(unname(c1), r1, tolerance = 1e-12)
})

test_that("a separated level of a shuffled copy is updated along its own rows", {
    set.seed(32)
    N <- 12000L
    d <- data.frame(x1 = rnorm(N), f = factor(sample(letters[1:4], N, replace = TRUE)))
    d$y <- rbinom(N, 1, plogis(d$x1))
    d$y[d$f == "d"] <- 1L                            # level "d": every row a one
    fit <- suppressWarnings(sgld(y ~ x1 + f, d, n_iter = 200, progress = FALSE))
    spec <- sgfs:::fit_spec(attr(fit, "sgfit"))
    expect_false(is.null(spec$order))
    expect_false(is.null(spec$separated_rows))
    ## the engine's rows of the level are the user's rows of level "d"
    expect_setequal(spec$order[spec$separated_rows + 1L], which(d$f == "d"))
})

test_that("compressed rows of many rows are shuffled too, dense or sparse alike", {
    set.seed(33)
    N <- 12000L
    x <- matrix(rbinom(N * 6, 1, 0.1) * rnorm(N * 6), N, 6,
                dimnames = list(NULL, paste0("v", 1:6)))
    y <- rbinom(N, 1, plogis(-0.5 + x %*% c(1, -1, 0.5, 0, 0, 0.25)))
    fit <- function(x) withr::with_seed(4, suppressWarnings(
        sgld(x, y, n_iter = 300, progress = FALSE)))
    a <- fit(x)
    b <- fit(Matrix::Matrix(x, sparse = TRUE))
    spec <- sgfs:::fit_spec(attr(a, "sgfit"))
    expect_false(is.null(spec$rows))
    expect_false(is.null(spec$order))
    expect_identical(spec$windows, 32L)
    expect_identical(spec$y, as.double(y[spec$order]))
    ## the same copy from the dense and the sparse matrix: the same draws
    expect_identical(sgfs:::fit_spec(attr(b, "sgfit"))$rows, spec$rows)
    expect_equal(sgfs:::all_draws(b), sgfs:::all_draws(a), tolerance = 1e-12)
    d <- as.matrix(a)
    expect_equal(unname(fitted(a)), colMeans(plogis(d %*% t(cbind(1, x)))), tolerance = 1e-10)
})
