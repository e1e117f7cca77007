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
    x0 <- d$x + 0
    withr::local_options(sgfs.memory = 16 * 8 * length(d$x))   # (read in place)
    set.seed(32)
    interrupt_in(4)          # after the setup (about 1 s; more on a loaded machine)
    expect_warning(
        fit <- sgfs(d$x, d$y, n_iter = 1e7, burnin = 10, thin = 1000, batch_size = 500,
                    progress = FALSE),
        "interrupted: returning the [0-9]+ draws per chain kept so far")
    done <- attr(fit, "sgfit")$n_iter
    ## the matrix, read in place in the engine's layout, is put back
    expect_false(is.null(sgfs:::fit_spec(attr(fit, "sgfit"))$matrix))
    expect_identical(d$x, x0)
    expect_gt(done, 1010)
    expect_lt(done, 1e7)
    expect_identical(coda::mcpar(fit)[1:2], c(1010, 10 + 1000 * coda::niter(fit)))
    cont <- update(fit, n_iter = 2000, progress = FALSE)
    set.seed(32)
    long <- sgfs(d$x, d$y, n_iter = done + 2000, burnin = 10, thin = 1000,
                 batch_size = 500, progress = FALSE)
    expect_identical(sgfs:::all_draws(cont), sgfs:::all_draws(long))
})

test_that("chains interrupted at different iterations stay aligned with their states", {
    ## what an interrupt during chain 2 leaves: chain 1 complete, chain 2 at
    ## iteration 1200 (built from the engine directly, without a signal)
    d <- list(x = matrix(withr::with_seed(36, rnorm(3000)), 1000, 3),
              y = withr::with_seed(37, rbinom(1000, 1, 0.5)))
    set.seed(38)
    long <- sgld(d$x, d$y, n_iter = 2200, burnin = 100, thin = 10, batch_size = 50,
                 stepsize = 1e-3, chains = 2, progress = FALSE, init = NULL)
    set.seed(38)
    full <- sgld(d$x, d$y, n_iter = 2000, burnin = 100, thin = 10, batch_size = 50,
                 stepsize = 1e-3, chains = 2, progress = FALSE, init = NULL)
    info <- attr(full, "sgfit")
    ## rerun each chain from its own stream, chain 2 stopped early (a single
    ## chain leaves R's RNG in its stream: put the user's state back after)
    ## (each chain's start and stream are recorded in the fit: several
    ## chains start from dispersed points)
    user <- get(".Random.seed", envir = globalenv())
    on.exit(sgfs:::set_seed(user), add = TRUE)
    run <- function(k, n_iter)
        sgfs:::run_chains(sgfs:::fit_spec(info), info$starts[k], n_iter, FALSE, 1L)[[1]]
    r1 <- run(1, 2000)
    r2 <- run(2, 1200)
    r2$interrupted <- TRUE
    info$elapsed <- 0
    expect_warning(fit <- sgfs:::new_sgfit(info, list(r1, r2)),
                   "interrupted: returning the 110 draws per chain")
    expect_identical(coda::mcpar(fit[[1]]), c(110, 1200, 10))
    expect_equal(nrow(attr(fit, "sgfit")$surplus[[1]]), 80)
    cont <- update(fit, n_iter = 200, progress = FALSE)
    expect_identical(coda::mcpar(cont[[1]]), c(110, 1400, 10))
    ## chain 1 continued from iteration 2000, chain 2 from 1200
    expect_identical(unclass(sgfs:::chain_draws(cont)[[1]]),
                     unclass(sgfs:::all_draws(long[[1]])))
    expect_identical(unclass(sgfs:::all_draws(cont[[2]])),
                     unclass(sgfs:::all_draws(long[[2]]))[1:130, ])
    expect_error(update(fit, n_iter = 10, append = FALSE), "'append' must be TRUE")
})

test_that("Ctrl-C reaches chains running in parallel", {
    skip_on_cran()
    skip_on_os("windows")
    d <- interrupt_data()
    set.seed(35)
    interrupt_in(8)          # after the setup (init = "map": about 3 s on a loaded machine)
    expect_warning(
        fit <- sgld(d$x, d$y, n_iter = 1e7, burnin = 0, thin = 1000, batch_size = 500,
                    stepsize = 1e-6, chains = 2, cores = 2, progress = FALSE),
        "interrupted")
    expect_s3_class(fit, "mcmc.list")
    expect_gt(coda::niter(fit), 0)
    expect_lt(attr(fit, "sgfit")$n_iter, 1e7)
})

test_that("chains an interrupt kept from starting wait for update(), which runs them first", {
    ## sequential chains: chain 1 complete, chain 2 interrupted at iteration
    ## 1200, chain 3 never started (built from the engine, without a signal)
    d <- list(x = matrix(withr::with_seed(36, rnorm(3000)), 1000, 3),
              y = withr::with_seed(37, rbinom(1000, 1, 0.5)))
    args <- list(d$x, d$y, burnin = 100, thin = 10, batch_size = 50, stepsize = 1e-3,
                 chains = 3, progress = FALSE, init = NULL)
    set.seed(39)
    long <- do.call(sgld, c(args, n_iter = 2200))
    set.seed(39)
    full <- do.call(sgld, c(args, n_iter = 2000))
    info <- attr(full, "sgfit")
    user <- get(".Random.seed", envir = globalenv())
    on.exit(sgfs:::set_seed(user), add = TRUE)
    run <- function(k, n_iter)
        sgfs:::run_chains(sgfs:::fit_spec(info), info$starts[k], n_iter, FALSE, 1L)[[1]]
    r2 <- run(2, 1200)
    r2$interrupted <- TRUE
    info$elapsed <- 0
    info$states <- NULL                        # as in a new fit: the chains' starts
    expect_warning(fit <- sgfs:::new_sgfit(info, list(run(1, 2000), r2, NULL)),
                   "from 2 of 3 chains; update\\(fit, n_iter = \\) first runs the other 1")
    expect_equal(coda::nchain(fit), 2L)
    expect_length(attr(fit, "sgfit")$waiting, 1L)
    cont <- update(fit, n_iter = 200, progress = FALSE)
    expect_equal(coda::nchain(cont), 3L)
    expect_null(attr(cont, "sgfit")$waiting)
    ## chain 3 ran from its start to iteration 1200 and on to 1400: the
    ## draws of an uninterrupted run, as chain 2's
    expect_identical(unclass(sgfs:::all_draws(cont[[3]])),
                     unclass(sgfs:::all_draws(long[[3]]))[1:130, ])
    expect_identical(unclass(sgfs:::all_draws(cont[[2]])),
                     unclass(sgfs:::all_draws(long[[2]]))[1:130, ])
    expect_identical(unclass(sgfs:::chain_draws(cont)[[1]]),
                     unclass(sgfs:::all_draws(long[[1]])))
    ## selecting chains forgets the waiting ones
    expect_null(attr(fit[1], "sgfit")$waiting)
})
