## Chains on any future backend (future::plan()): the same draws as forked
## and sequential chains for the same seed; fits run separately combine.

future_problem <- function() {
    withr::with_seed(1, {
        x <- matrix(rnorm(2000), 500, 4, dimnames = list(NULL, paste0("x", 1:4)))
        list(x = x, y = rbinom(500, 1, plogis(x[, 1] - 0.5 * x[, 2])))
    })
}

test_that("chains on multisession and cluster futures equal forked and sequential chains", {
    skip_if_not_installed("future")
    skip_on_cran()
    p <- future_problem()
    fit <- function(cores = 1L) withr::with_seed(7, sgld(p$x, p$y, chains = 3, cores = cores,
                                                         n_iter = 300, progress = FALSE))
    sequential <- fit()
    forked <- fit(2L)
    expect_identical(sgfs:::all_draws(forked), sgfs:::all_draws(sequential))
    old <- future::plan()
    on.exit(future::plan(old), add = TRUE)
    future::plan(future::multisession, workers = 2)
    multi <- fit()
    expect_identical(sgfs:::all_draws(multi), sgfs:::all_draws(forked))
    ## continued on the futures, as the forked fit continued
    expect_identical(sgfs:::all_draws(withr::with_seed(8, update(multi, n_iter = 100))),
                     sgfs:::all_draws(withr::with_seed(8, update(forked, n_iter = 100))))
    ## the user's random-number stream is left as it was
    withr::with_seed(9, { fit(); a <- runif(1) })
    future::plan(future::sequential)
    withr::with_seed(9, { fit(); b <- runif(1) })
    expect_identical(a, b)
    cl <- parallel::makeCluster(2L)
    on.exit(parallel::stopCluster(cl), add = TRUE)
    future::plan(future::cluster, workers = cl)
    expect_identical(sgfs:::all_draws(fit()), sgfs:::all_draws(forked))
})

test_that("a matrix read in place gives the same draws on futures and is put back", {
    skip_if_not_installed("future")
    skip_on_cran()
    x <- withr::with_seed(2, matrix(rnorm(48000), 12000, 4, dimnames = list(NULL, paste0("x", 1:4))))
    y <- withr::with_seed(3, rbinom(12000, 1, plogis(x[, 1])))
    x0 <- x + 0
    withr::local_options(sgfs.memory = 16 * 8 * length(x))      # (read in place)
    fit <- function(cores = 1L) withr::with_seed(7, sgld(x, y, chains = 2, cores = cores,
                                                         n_iter = 200, progress = FALSE))
    forked <- fit(2L)
    expect_false(is.null(sgfs:::fit_spec(attr(forked, "sgfit"))$matrix))
    old <- future::plan()
    on.exit(future::plan(old), add = TRUE)
    ## (the workers receive the matrix as laid out during the run)
    future::plan(future::multisession, workers = 2)
    expect_identical(sgfs:::all_draws(fit()), sgfs:::all_draws(forked))
    expect_identical(x, x0)
})

test_that("fits of the same model run separately combine into one multi-chain fit", {
    p <- future_problem()
    one <- function(seed) withr::with_seed(seed, sgld(p$x, p$y, n_iter = 300, progress = FALSE))
    a <- one(1)
    b <- one(2)
    both <- c(a, b)
    expect_identical(coda::nchain(both), 2L)
    expect_identical(sgfs:::all_draws(both), rbind(sgfs:::all_draws(a), sgfs:::all_draws(b)))
    expect_s3_class(summary(both), "summary.mcmc")
})

test_that("a custom model that reads global variables and helpers runs on futures", {
    skip_if_not_installed("future")
    skip_if_not_installed("globals")
    skip_on_cran()
    ## the functions and what they read live in the global environment, which
    ## is not serialised to another session
    g <- globalenv()
    assign(".sgfs_test_scale", 2, envir = g)
    assign(".sgfs_test_mean", function(theta, x) theta[1] * x / .sgfs_test_scale, envir = g)
    on.exit(rm(".sgfs_test_scale", ".sgfs_test_mean", envir = g), add = TRUE)
    score <- eval(quote(function(theta, data)
        matrix((data$y - .sgfs_test_mean(theta, data$x)) * data$x / .sgfs_test_scale, ncol = 1)), g)
    loglik <- eval(quote(function(theta, data)
        -0.5 * (data$y - .sgfs_test_mean(theta, data$x))^2), g)
    d <- withr::with_seed(3, {
        x <- rnorm(200)
        list(x = x, y = 0.7 * x + rnorm(200))
    })
    model <- custom_model(score, loglik, init = c(b = 0))
    fit <- function() withr::with_seed(4, sgld(d, model = model, chains = 2, n_iter = 300,
                                               batch_size = 50, progress = FALSE))
    sequential <- fit()
    old <- future::plan()
    on.exit(future::plan(old), add = TRUE)
    future::plan(future::multisession, workers = 2)
    expect_identical(sgfs:::all_draws(fit()), sgfs:::all_draws(sequential))
})

test_that("progress is shown over every chain, forked or on futures, without changing the draws", {
    skip_if_not_installed("future")
    skip_on_cran()
    p <- future_problem()
    fit <- function(progress, cores = 1L) withr::with_seed(7, sgld(p$x, p$y, chains = 2, cores = cores,
                                                                   n_iter = 2000, progress = progress))
    quiet <- fit(FALSE)
    out <- capture.output(shown <- fit(TRUE))
    expect_identical(sgfs:::all_draws(shown), sgfs:::all_draws(quiet))
    expect_true(any(grepl("sgld: 4,000 / 4,000 iterations \\(100%\\)", out)))
    expect_gte(length(out), 9L)
    expect_true(any(grepl("100%", capture.output(fit(TRUE, cores = 2L)))))
    expect_identical(capture.output(invisible(fit(NA))), character(0))      # (short: no line)
    old <- future::plan()
    on.exit(future::plan(old), add = TRUE)
    future::plan(future::multisession, workers = 2)
    out <- capture.output(multi <- fit(TRUE))
    expect_identical(sgfs:::all_draws(multi), sgfs:::all_draws(quiet))
    expect_true(any(grepl("100%", out)))
})
