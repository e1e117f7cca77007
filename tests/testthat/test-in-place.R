## The user's dense matrix read in place (options(sgfs.in_place), by default
## when even a single-precision copy would take more than a quarter of the
## memory): no copy, each value standardised when read, the draws of the
## engine's copy.

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
