## sgfs_control(): the numerical settings a fit records, options as their
## defaults only

logistic_data <- function(N, seed) {
    withr::with_seed(seed, {
        x <- matrix(stats::rnorm(2 * N), N, 2)
        list(x = x, y = stats::rbinom(N, 1, stats::plogis(0.5 + x %*% c(1, -0.5))))
    })
}

test_that("sgfs_control() checks each setting and names it with its option", {
    expect_error(sgfs_control(precision = "half"), "'precision' \\(options\\(sgfs.precision")
    expect_error(sgfs_control(in_place = "yes"), "'in_place'")
    expect_error(sgfs_control(memory = -1), "'memory'")
    expect_error(sgfs_control(batches = "blocks"), "'batches'")
    expect_error(sgfs_control(file_prefetch = 2), "'file_prefetch'")
    expect_error(sgfs_control(sparse_fill = 1.5), "'sparse_fill'")
    expect_error(sgfs_control(metric_rank = 2.5), "'metric_rank'")
    withr::with_options(list(sgfs.batches = "rows", sgfs.metric_rank = 3),
                        expect_identical(sgfs_control()[c("batches", "metric_rank")],
                                         list(batches = "rows", metric_rank = 3L)))
    expect_output(print(sgfs_control(memory = 2^30)), "memory\\s+= 1.074e\\+09 bytes")
})

test_that("a sampler takes control as sgfs_control() or a list, and refuses others", {
    d <- logistic_data(300, 5)
    run <- function(...) withr::with_seed(3, sgld(d$x, d$y, n_iter = 200, progress = FALSE,
                                                  stepsize = 1e-3, ...))
    a <- run(control = sgfs_control(sparse_fill = 0))
    b <- run(control = list(sparse_fill = 0))
    expect_identical(as.matrix(a), as.matrix(b))
    ## (recorded with the memory it planned for, the machine's)
    recorded <- attr(a, "sgfit")$control
    expect_identical(unclass(recorded)[names(recorded) != "memory"],
                     unclass(sgfs_control(sparse_fill = 0))[names(recorded) != "memory"])
    expect_identical(recorded$memory, sgfs:::physical_memory())
    expect_identical(attr(run(control = sgfs_control(memory = 2^33)), "sgfit")$control$memory, 2^33)
    expect_error(run(control = list(fill = 0)), "'control' must be sgfs_control")
    expect_error(run(control = 3), "'control' must be sgfs_control")
})

test_that("the fit records its control, summary() prints it, options change no fit once made", {
    d <- logistic_data(20000, 6)
    fit <- function(n_iter = 300, ...)
        withr::with_seed(4, sgld(d$x, d$y, n_iter = n_iter, burnin = 0, batch_size = 50,
                                 stepsize = 1e-4, progress = FALSE, ...))
    rows <- fit(control = sgfs_control(batches = "rows"))
    expect_identical(as.matrix(rows),
                     as.matrix(withr::with_options(list(sgfs.batches = "rows"), fit())))
    expect_false(identical(as.matrix(rows), as.matrix(fit())))    # (windows by default)
    expect_identical(attr(rows, "sgfit")$control$batches, "rows")
    expect_output(print(summary(rows)), "batches\\s+= rows")
    expect_output(print(summary(rows)), "precision\\s+= NULL \\(by memory: double\\)")
    ## continued under other options, the chain goes on as made
    whole <- fit(n_iter = 600, control = sgfs_control(batches = "rows"))
    half <- fit(control = sgfs_control(batches = "rows"))
    more <- withr::with_options(list(sgfs.batches = "windows"), update(half, n_iter = 300))
    expect_identical(as.matrix(more), as.matrix(whole))
})
