## The user's dense matrix read in place (options(sgfs.in_place); by default
## from 10,000 rows when a copy would take more than 1/64 of the memory,
## laid out as the engine's rows while a fit or run reads them, or when
## even a single-precision copy would take more than a quarter of the
## memory): no copy, each value standardised when read, the draws of the
## engine's copy, and the matrix left as it was given.

in_place_fit <- function(f, x, y, in_place, ...)
    withr::with_options(list(sgfs.in_place = in_place, sgfs.sparse_fill = 0),
                        withr::with_seed(11, suppressWarnings(
                            f(x, y, n_iter = 300, progress = FALSE, ...))))

test_that("every sampler gives the copy's draws from the matrix in place", {
    p <- sparse_problem()
    samplers <- draw_samplers()
    for (name in names(samplers)) {
        a <- in_place_fit(samplers[[name]], p$x, p$y, TRUE)
        b <- in_place_fit(samplers[[name]], p$x, p$y, FALSE)
        spec <- sgfs:::fit_spec(attr(a, "sgfit"))
        expect_identical(spec$matrix$x, p$x, label = name)
        expect_null(spec$xt, label = name)
        expect_false(is.null(sgfs:::fit_spec(attr(b, "sgfit"))$xt), label = name)
        expect_equal(unclass(as.matrix(a)), unclass(as.matrix(b)), tolerance = 1e-12,
                     label = name)
    }
    ## families, weights and offsets, no intercept standardisation
    w <- seq(0.5, 2, length.out = 300)
    for (case in list(list(y = p$count, family = poisson()), list(y = p$z, family = gaussian()),
                      list(y = p$class, family = categorical()),
                      list(y = p$y, family = binomial("probit"), weights = w,
                           offset = rep(0.1, 300)),
                      list(y = p$y, family = binomial(), standardize = FALSE))) {
        args <- c(list(f = sgld, x = p$x), case)
        a <- do.call(in_place_fit, c(args, list(in_place = TRUE)))
        b <- do.call(in_place_fit, c(args, list(in_place = FALSE)))
        expect_equal(unclass(as.matrix(a)), unclass(as.matrix(b)), tolerance = 1e-12,
                     label = case$family$family)
    }
})

test_that("a fit on the matrix in place predicts, continues and keeps the matrix as it was", {
    p <- sparse_problem()
    x <- p$x
    a <- in_place_fit(sgld, x, p$y, TRUE)
    b <- in_place_fit(sgld, x, p$y, FALSE)
    expect_equal(fitted(a), fitted(b), tolerance = 1e-12)
    expect_equal(predict(a, x[1:5, ]), predict(b, x[1:5, ]), tolerance = 1e-12)
    ## the user changes x after the fit: R copies it for the user, the fit's is unchanged
    x[, 1] <- 0
    expect_equal(sgfs:::all_draws(withr::with_seed(3, update(a, n_iter = 100))),
                 sgfs:::all_draws(withr::with_seed(3, update(b, n_iter = 100))), tolerance = 1e-12)
    expect_false(identical(sgfs:::fit_spec(attr(a, "sgfit"))$matrix$x, x))
    expect_error(withr::with_options(list(sgfs.in_place = "yes"),
                                     sgld(p$x, p$y, n_iter = 10, progress = FALSE)),
                 "sgfs.in_place")
})

test_that("the memory decides between the double copy, the single one and the matrix in place", {
    p <- sparse_problem()
    bytes <- 8 * nrow(p$x) * ncol(p$x)
    fit_with <- function(memory, x = p$x)
        withr::with_options(list(sgfs.memory = memory, sgfs.sparse_fill = 0),
                            withr::with_seed(11, sgld(x, p$y, n_iter = 200, progress = FALSE)))
    backend <- function(fit) {
        spec <- sgfs:::fit_spec(attr(fit, "sgfit"))
        c("xt", "xt32", "matrix")[!vapply(spec[c("xt", "xt32", "matrix")], is.null, NA)]
    }
    ## the double copy within a quarter of the memory; else the single one
    ## if it fits (the draws of the values floats hold: within 1e-5 of the
    ## double copy's over this run); else the matrix in place
    double <- fit_with(4 * bytes)
    single <- fit_with(4 * bytes - 1)
    inplace <- fit_with(2 * bytes - 1)
    expect_identical(c(backend(double), backend(single), backend(inplace)),
                     c("xt", "xt32", "matrix"))
    expect_identical(attr(single, "sgfit")$precision, "single")
    expect_identical(attr(double, "sgfit")$precision, "double")
    expect_equal(unclass(as.matrix(inplace)), unclass(as.matrix(double)), tolerance = 1e-12)
    expect_equal(unclass(as.matrix(single)), unclass(as.matrix(double)), tolerance = 1e-5)
    expect_false(isTRUE(all.equal(unclass(as.matrix(single)), unclass(as.matrix(double)),
                                  tolerance = 1e-12)))
    ## a data frame cannot be read in place: the single copy, the smaller
    d <- as.data.frame(p$x)
    d$y <- p$y
    frame <- withr::with_options(list(sgfs.memory = 2 * bytes - 1, sgfs.sparse_fill = 0),
                                 sgld(y ~ ., data = d, n_iter = 50, progress = FALSE))
    expect_false(is.null(sgfs:::fit_spec(attr(frame, "sgfit"))$xt32))
    ## an explicit precision holds: double, read in place when it does not fit
    expect_identical(backend(withr::with_options(list(sgfs.precision = "double"),
                                                 fit_with(4 * bytes - 1))), "matrix")
    ## the continued fit keeps its precision
    more <- withr::with_seed(3, update(single, n_iter = 20))
    expect_false(is.null(sgfs:::fit_spec(attr(more, "sgfit"))$xt32))
    expect_error(withr::with_options(list(sgfs.memory = "lots"),
                                     sgld(p$x, p$y, n_iter = 10, progress = FALSE)),
                 "sgfs.memory")
})

test_that("the matrix's layout as the engine's rows is exact and exactly undone", {
    for (dims in list(c(10, 3), c(512, 1), c(513, 2), c(1024, 7), c(1500, 1), c(12345, 13))) {
        N <- dims[1]
        p <- dims[2]
        x <- withr::with_seed(N, matrix(stats::rnorm(N * p), N, p))
        x0 <- x + 0
        o <- withr::with_seed(p, sample.int(N))
        state <- sgfs:::matrix_state()
        scratch <- raw(.Call(sgfs:::C_sgfs_matrix_scratch_bytes, N, p))
        .Call(sgfs:::C_sgfs_matrix_reorder, x, o, scratch, state, TRUE)
        ## engine row q, contiguous, is the user's row o[q]
        expect_identical(as.vector(x), as.vector(t(x0[o, , drop = FALSE])), label = toString(dims))
        expect_true(state$engine_layout)
        .Call(sgfs:::C_sgfs_matrix_reorder, x, o, scratch, state, FALSE)
        expect_identical(x, x0, label = toString(dims))
        expect_false(state$engine_layout)
    }
    ## not a permutation: refused before anything moves
    x <- matrix(as.double(1:20), 10, 2)
    expect_error(.Call(sgfs:::C_sgfs_matrix_reorder, x, c(1:9, 9L),
                       raw(.Call(sgfs:::C_sgfs_matrix_scratch_bytes, 10L, 2L)),
                       sgfs:::matrix_state(), TRUE), "permutation")
    expect_identical(x, matrix(as.double(1:20), 10, 2))
})

test_that("from 10,000 rows the matrix is read in place by default, with the copy's draws", {
    p <- sparse_problem(12000L)
    x <- p$x
    x0 <- x + 0
    ## a copy would take 1/16 of the memory (at most 1/64: copied, below)
    withr::local_options(sgfs.memory = 16 * 8 * length(x))
    fit <- function(f, in_place, ...) in_place_fit(f, x, p$y, in_place, chains = 2, ...)
    for (name in c("sgld", "sgldcv", "sgfs", "sghmc")) {
        f <- get(name, envir = asNamespace("sgfs"))
        a <- fit(f, NA)
        b <- fit(f, FALSE)
        spec <- sgfs:::fit_spec(attr(a, "sgfit"))
        expect_null(spec$xt, label = name)
        expect_false(is.null(spec$order), label = name)
        expect_false(spec$matrix$state$engine_layout, label = name)
        expect_false(is.null(sgfs:::fit_spec(attr(b, "sgfit"))$xt), label = name)
        expect_equal(unclass(as.matrix(a)), unclass(as.matrix(b)), tolerance = 1e-12,
                     label = name)
        expect_identical(x, x0, label = name)
    }
    ## weights, offsets and a categorical response; the in-sample passes,
    ## outside a run, read the user's layout through the order
    w <- seq(0.5, 2, length.out = nrow(x))
    a <- fit(sgld, NA, weights = w, offset = rep(0.1, nrow(x)))
    b <- fit(sgld, FALSE, weights = w, offset = rep(0.1, nrow(x)))
    expect_equal(unclass(as.matrix(a)), unclass(as.matrix(b)), tolerance = 1e-12)
    expect_equal(fitted(a), fitted(b), tolerance = 1e-12)
    expect_equal(withr::with_options(list(sgfs.sparse_fill = 0), summary(a)$statistics),
                 withr::with_options(list(sgfs.sparse_fill = 0), summary(b)$statistics),
                 tolerance = 1e-12)
    a <- withr::with_seed(11, sgld(x, p$class, family = categorical(), n_iter = 200,
                                   progress = FALSE))
    b <- withr::with_options(list(sgfs.in_place = FALSE),
                             withr::with_seed(11, sgld(x, p$class, family = categorical(),
                                                       n_iter = 200, progress = FALSE)))
    expect_equal(unclass(as.matrix(a)), unclass(as.matrix(b)), tolerance = 1e-12)
    ## continued: laid out again for the run
    expect_equal(sgfs:::all_draws(withr::with_seed(3, update(a, n_iter = 100))),
                 sgfs:::all_draws(withr::with_seed(3, update(b, n_iter = 100))), tolerance = 1e-12)
    expect_identical(x, x0)
    ## a copy of at most 1/64 of the memory is made (faster iterations)
    small <- withr::with_options(list(sgfs.memory = 64 * 8 * length(x), sgfs.sparse_fill = 0),
                                 withr::with_seed(11, sgld(x, p$y, n_iter = 50, progress = FALSE)))
    expect_false(is.null(sgfs:::fit_spec(attr(small, "sgfit"))$xt))
})

test_that("the matrix is put back when a fit stops with an error, and ALTREP values are read where they are", {
    p <- sparse_problem(12000L)
    x <- p$x
    x0 <- x + 0
    withr::local_options(sgfs.memory = 16 * 8 * length(x))
    a <- withr::with_options(list(sgfs.sparse_fill = 0),
                             withr::with_seed(11, sgld(x, p$y, n_iter = 50, progress = FALSE)))
    ## (the fit's matrix: x, or an equal one a live fit of the tests above
    ## shares)
    spec <- sgfs:::fit_spec(attr(a, "sgfit"))
    laid_out <- NULL
    expect_error(sgfs:::with_engine_order(spec, {
        laid_out <- spec$matrix$state$engine_layout && !identical(spec$matrix$x, x0)
        stop("stopped inside")
    }), "stopped inside")
    expect_true(laid_out)
    expect_identical(spec$matrix$x, x0)
    expect_identical(x, x0)
    expect_false(spec$matrix$state$engine_layout)
    ## nested: the inner call leaves the layout to the outer one
    sgfs:::with_engine_order(spec, {
        sgfs:::with_engine_order(spec, NULL)
        expect_true(spec$matrix$state$engine_layout)
    })
    expect_identical(x, x0)
    ## values R does not own (a wrapper around a compact sequence): a copy
    ## by default, or read in place through the order, never moved
    alt <- as.double(seq_len(2 * nrow(x)))
    dim(alt) <- c(nrow(x), 2L)
    expect_false(.Call(sgfs:::C_sgfs_reorderable, alt))
    fit_alt <- function(in_place)
        withr::with_options(list(sgfs.in_place = in_place, sgfs.memory = 16 * 8 * length(alt)),
                            withr::with_seed(5, suppressWarnings(
                                sgld(alt, p$y, n_iter = 100, progress = FALSE))))
    expect_false(is.null(sgfs:::fit_spec(attr(fit_alt(NA), "sgfit"))$xt))
    forced <- fit_alt(TRUE)
    expect_false(is.null(sgfs:::fit_spec(attr(forced, "sgfit"))$matrix))
    expect_equal(unclass(as.matrix(forced)), unclass(as.matrix(fit_alt(FALSE))), tolerance = 1e-12)
})

test_that("a run's engine reads nothing its set-up freed: R's collections and allocations between chunks change no draw", {
    ## an engine lives across .Calls (one per chunk of the progress display),
    ## so what it reads must live in the spec, not in memory freed when the
    ## set-up's .Call returned: between chunks, collect, then fill R's small
    ## vectors (the size of the design's scales) with other numbers
    p <- sparse_problem()
    path <- tempfile(fileext = ".sgd")
    on.exit(unlink(path))
    write_design_file(p$x, path)
    P <- ncol(p$x) + 1L
    churn <- function(done) {
        gc(verbose = FALSE)
        junk <- lapply(seq_len(5000L), function(i) i + seq_len(P) / 7)    # (no random numbers)
        invisible(NULL)
    }
    for (x in list(matrix = p$x, file = design_file(path))) {
        fit <- in_place_fit(sgld, x, p$y, TRUE)
        info <- attr(fit, "sgfit")
        spec <- sgfs:::fit_spec(info)
        expect_true(!is.null(spec$matrix) || !is.null(spec$file))
        state <- info$states[[1L]]
        run <- function(report) withr::with_seed(3, sgfs:::with_engine_order(
            spec, sgfs:::run_chain(spec, state, 300L, report)))
        once <- run(NULL)
        chunked <- run(churn)
        expect_identical(chunked$draws, once$draws)
    }
    ## the same through a sampler's progress display, several chains
    shown <- function(progress)
        withr::with_options(list(sgfs.in_place = TRUE, sgfs.sparse_fill = 0),
                            withr::with_seed(7, suppressWarnings(
                                sgld(p$x, p$y, n_iter = 400, chains = 2, cores = 1,
                                     progress = progress))))
    quiet <- shown(FALSE)
    capture.output(talking <- shown(TRUE))
    expect_identical(unclass(as.matrix(talking)), unclass(as.matrix(quiet)))
})
