## Ctrl-C returns the draws so far with a warning; the chain continues exactly.

test_that("an interrupted run returns its draws and can be continued exactly", {
    skip_on_cran()
    skip_on_os("windows")
    N <- 20000
    x <- matrix(withr::with_seed(30, rnorm(N * 20)), N)
    y <- withr::with_seed(31, rbinom(N, 1, 0.5))
    set.seed(32)
    system(sprintf("(sleep 2; kill -INT %d) &", Sys.getpid()))
    expect_warning(
        fit <- sgfs(x, y, n_iter = 1e7, burnin = 10, thin = 7, batch_size = 500,
                    progress = FALSE),
        "interrupted: returning the [0-9]+ draws per chain kept so far")
    done <- attr(fit, "sgfit")$n_iter
    expect_gt(done, 10)
    expect_lt(done, 1e7)
    expect_identical(coda::mcpar(fit)[1:2], c(17, 10 + 7 * coda::niter(fit)))
    cont <- update(fit, n_iter = 50, progress = FALSE)
    set.seed(32)
    long <- sgfs(x, y, n_iter = done + 50, burnin = 10, thin = 7, batch_size = 500,
                 progress = FALSE)
    expect_identical(sgfs:::all_draws(cont), sgfs:::all_draws(long))
})
