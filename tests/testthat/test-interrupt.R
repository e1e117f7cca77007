## Ctrl-C returns the draws so far with a warning; the chains continue exactly.

interrupt_data <- function() {
    N <- 20000
    list(x = matrix(withr::with_seed(30, rnorm(N * 20)), N),
         y = withr::with_seed(31, rbinom(N, 1, 0.5)))
}

## sends SIGINT to this R process after `after` seconds
interrupt_in <- function(after) {
    system(sprintf("(sleep %g; kill -INT %d) &", after, Sys.getpid()))
}

test_that("an interrupted run returns its draws and can be continued exactly", {
    skip_on_cran()
    skip_on_os("windows")
    d <- interrupt_data()
    set.seed(32)
    interrupt_in(2)
    expect_warning(
        fit <- sgfs(d$x, d$y, n_iter = 1e7, burnin = 10, thin = 1000, batch_size = 500,
                    progress = FALSE),
        "interrupted: returning the [0-9]+ draws per chain kept so far")
    done <- attr(fit, "sgfit")$n_iter
    expect_gt(done, 1010)
    expect_lt(done, 1e7)
    expect_identical(coda::mcpar(fit)[1:2], c(1010, 10 + 1000 * coda::niter(fit)))
    cont <- update(fit, n_iter = 2000, progress = FALSE)
    set.seed(32)
    long <- sgfs(d$x, d$y, n_iter = done + 2000, burnin = 10, thin = 1000,
                 batch_size = 500, progress = FALSE)
    expect_identical(sgfs:::all_draws(cont), sgfs:::all_draws(long))
})

test_that("interrupted sequential chains stay aligned with their states", {
    skip_on_cran()
    skip_on_os("windows")
    d <- interrupt_data()
    set.seed(33)
    probe <- sgld(d$x, d$y, n_iter = 3000, burnin = 0, thin = 100, batch_size = 500,
                  stepsize = 1e-6, progress = FALSE)
    per_iter <- attr(probe, "sgfit")$elapsed / 3000
    n1 <- ceiling(1.5 / per_iter / 100) * 100    # a chain takes about 1.5 s
    set.seed(34)
    interrupt_in(2)
    expect_warning(
        fit <- sgld(d$x, d$y, n_iter = n1, burnin = 0, thin = 100, batch_size = 500,
                    stepsize = 1e-6, chains = 2, progress = FALSE),
        "interrupted")
    info <- attr(fit, "sgfit")
    iters <- vapply(info$states, `[[`, 0, "iter")
    skip_if(length(iters) < 2L, "the interrupt came before chain 2 started")
    expect_gt(iters[1], iters[2])                 # chain 1 finished, chain 2 did not
    expect_equal(coda::niter(fit), iters[2] %/% 100)
    cont <- update(fit, n_iter = 200, progress = FALSE)
    expect_equal(coda::niter(cont), (iters[2] + 200) %/% 100)
    ## chain 1 continued from its true end, chain 2 from its interrupt
    set.seed(34)
    long <- sgld(d$x, d$y, n_iter = n1 + 200, burnin = 0, thin = 100, batch_size = 500,
                 stepsize = 1e-6, chains = 2, progress = FALSE)
    expect_identical(unclass(sgfs:::chain_draws(cont)[[1]]),
                     unclass(sgfs:::all_draws(long[[1]]))[seq_len((iters[1] + 200) / 100), ])
    expect_identical(unclass(sgfs:::all_draws(cont[[2]])),
                     unclass(sgfs:::all_draws(long[[2]]))[seq_len(coda::niter(cont)), ])
})

test_that("Ctrl-C reaches chains running in parallel", {
    skip_on_cran()
    skip_on_os("windows")
    d <- interrupt_data()
    set.seed(35)
    interrupt_in(2)
    expect_warning(
        fit <- sgld(d$x, d$y, n_iter = 1e7, burnin = 0, thin = 1000, batch_size = 500,
                    stepsize = 1e-6, chains = 2, cores = 2, progress = FALSE),
        "interrupted")
    expect_s3_class(fit, "mcmc.list")
    expect_gt(coda::niter(fit), 0)
    expect_lt(attr(fit, "sgfit")$n_iter, 1e7)
})
