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
        expect_identical(sgfs:::fit_spec(attr(from_file, "sgfit"))$windows, 8L)
        expect_equal(unclass(as.matrix(from_file)), unclass(as.matrix(windows(samplers[[name]], xs))),
                     tolerance = 1e-12, label = name)
    }
    ## a shuffled file that fits in memory: random rows by default, the
    ## draws of random rows in memory
    rows <- run(sgld, s$x)
    expect_equal(unclass(as.matrix(rows)), unclass(as.matrix(run(sgld, xs))), tolerance = 1e-12)
    expect_identical(sgfs:::fit_spec(attr(rows, "sgfit"))$windows, 0L)
    ## larger than half the memory (as this machine would see a larger file):
    ## windows by default
    big <- s$x
    big$N <- as.integer(min(.Machine$integer.max, ceiling(sgfs:::physical_memory() /
                                                            (big$bytes * big$ncol))))
    expect_identical(sgfs:::batch_windows(list(file = list(design = big))), 8L)
    expect_identical(sgfs:::batch_windows(list(file = list(design = s$x))), 0L)
    ## windows are not the random rows' draws
    expect_false(isTRUE(all.equal(as.matrix(rows), as.matrix(windows(sgld, s$x)))))
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
    expect_length(attr(part, "sgfit")$states[[1]]$starts, 8L)
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
    expect_identical(sgfs:::fit_spec(attr(fit, "sgfit"))$windows, 8L)
    ref <- lm(y ~ x)
    est <- summary(fit)$statistics
    se <- sqrt(diag(vcov(ref)))[2:4]
    z <- (est[2:4, "Mean"] - coef(ref)[2:4]) / se
    expect_true(all(abs(z) < 0.15), info = paste(round(z, 3), collapse = " "))
    expect_true(all(abs(est[2:4, "SD"] / se - 1) < 0.08),
                info = paste(round(est[2:4, "SD"] / se, 3), collapse = " "))
})
