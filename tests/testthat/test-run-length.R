## n_iter = NULL: the run grows until every parameter has 100 effective draws

draws_of <- function(fit) unclass(sgfs:::all_draws(fit))

test_that("a slowly mixing chain grows, thinned, to 100 effective draws", {
    d <- pima_data()
    fit <- withr::with_seed(3, sgld(d$x, d$y, progress = FALSE))
    rl <- attr(fit, "sgfit")$run_length
    st <- rl$stages
    ## SGLD at its default step needs several times 10,000 iterations here
    expect_gt(nrow(st), 1L)
    expect_gte(st$min_ess[nrow(st)], 100)
    expect_equal(st$n_iter, 1000 + 9000 * 2^(seq_len(nrow(st)) - 1))
    expect_equal(st$thin, 2^(seq_len(nrow(st)) - 1))
    expect_true(all(st$min_ess[-nrow(st)] < 100))
    expect_gte(min(coda::effectiveSize(fit)), 100)
    expect_equal(coda::niter(fit), 9000)
    mc <- coda::mcpar(fit)
    thin <- st$thin[nrow(st)]
    expect_equal(mc, c(1000 + thin, st$n_iter[nrow(st)], thin))
    ## the same draws as one run with the final length and thin
    one <- withr::with_seed(3, sgld(d$x, d$y, n_iter = st$n_iter[nrow(st)], burnin = 1000,
                                    thin = thin, progress = FALSE))
    expect_identical(draws_of(fit), draws_of(one))
    expect_identical(attr(fit, "sgfit")$states, attr(one, "sgfit")$states)
    expect_output(print(fit), "Run length set by the chains: 10,000 -> 19,000 -> .* >= 100 effective draws")
})

test_that("several chains grow together until the worst chain has mixed", {
    d <- pima_data()
    fit <- withr::with_seed(4, psgld(d$x, d$y, chains = 2, progress = FALSE))
    st <- attr(fit, "sgfit")$run_length$stages
    expect_gt(nrow(st), 1L)
    per_chain <- vapply(unclass(sgfs:::as_coda(fit)), function(ch) min(coda::effectiveSize(ch)), 0)
    expect_gte(min(per_chain), 100)
    expect_equal(st$min_ess[nrow(st)], min(per_chain))
    one <- withr::with_seed(4, psgld(d$x, d$y, chains = 2, n_iter = st$n_iter[nrow(st)],
                                     burnin = 1000, thin = st$thin[nrow(st)], progress = FALSE))
    expect_identical(draws_of(fit), draws_of(one))
    ## and it continues like any fit
    more <- update(fit, n_iter = 1000 * st$thin[nrow(st)])
    expect_equal(coda::niter(more), 10000)
})

test_that("a chain that mixes at once runs 10,000 iterations, as an explicit n_iter", {
    d <- pima_data()
    fit <- withr::with_seed(5, sgfs(d$x, d$y, progress = FALSE))
    rl <- attr(fit, "sgfit")$run_length
    expect_equal(nrow(rl$stages), 1L)
    expect_gte(rl$stages$min_ess, 100)
    one <- withr::with_seed(5, sgfs(d$x, d$y, n_iter = 10000, progress = FALSE))
    expect_identical(draws_of(fit), draws_of(one))
    expect_null(attr(one, "sgfit")$run_length)
    expect_equal(coda::mcpar(fit), c(1001, 10000, 1))
})

test_that("the budget stops the growth, and the report says so", {
    d <- pima_data()
    first <- withr::with_seed(6, sgld(d$x, d$y, n_iter = 10000, progress = FALSE))
    info <- attr(first, "sgfit")
    one_stage <- 10000 * info$evals_per_iter * (ncol(d$x) + 1)
    ## room for one doubling (19,000 iterations) but not two (37,000)
    grown <- sgfs:::grow_run(first, FALSE, 1L, budget = 2 * one_stage)
    rl <- attr(grown, "sgfit")$run_length
    expect_equal(rl$stages$n_iter, c(10000, 19000))
    ## the first stage's ESS decided to grow; the last one's is left to the report
    expect_lt(rl$stages$min_ess[1L], 100)
    expect_true(is.na(rl$stages$min_ess[2L]))
    expect_output(print(grown), "stopped by the budget at [0-9]+ of the 100 effective draws")
    expect_output(print(grown), "Warning: only [0-9]+ effective draws")
    ## at most `doublings` doublings
    capped <- sgfs:::grow_run(first, FALSE, 1L, doublings = 1L)
    expect_equal(attr(capped, "sgfit")$run_length$stages$n_iter, c(10000, 19000))
})

test_that("runs that cannot grow keep 10,000 iterations; explicit lengths never grow", {
    d <- pima_data()
    cyc <- sgld(d$x, d$y, schedule = schedule_cyclical(cycles = 2), progress = FALSE)
    expect_equal(attr(cyc, "sgfit")$n_iter, 10000)
    expect_null(attr(cyc, "sgfit")$run_length)
    pred <- sgld(d$x, d$y, keep = predictive(d$x[1:5, ]), progress = FALSE)
    expect_equal(attr(pred, "sgfit")$n_iter, 10000)
    fixed <- sgld(d$x, d$y, n_iter = 3000, progress = FALSE)
    expect_equal(attr(fixed, "sgfit")$n_iter, 3000)
    expect_equal(attr(fixed, "sgfit")$burnin, 300)
})

test_that("an interrupted stage is not grown further", {
    info <- list(states = list(list(iter = 19000), list(iter = 15000)), chains = 2L)
    expect_false(sgfs:::run_complete(info, 19000, 2L))
    info$states[[2L]]$iter <- 19000
    expect_true(sgfs:::run_complete(info, 19000, 2L))
    expect_false(sgfs:::run_complete(info, 19000, 3L))
    info$surplus <- list(matrix(0, 1, 1))
    expect_false(sgfs:::run_complete(info, 19000, 2L))
})

test_that("ksd_steps() runs every step size for the same length", {
    d <- pima_data()
    seen <- NULL
    probe <- function(..., n_iter = NULL) {
        seen <<- c(seen, if (is.null(n_iter)) NA else n_iter)
        sgld(..., n_iter = n_iter)
    }
    suppressWarnings(ksd_steps(probe, c(1e-3, 1e-4), d$x, d$y, max_draws = 20, progress = FALSE))
    expect_equal(seen, c(10000, 10000))
    suppressWarnings(ksd_steps(probe, 1e-3, d$x, d$y, n_iter = 500, max_draws = 20, progress = FALSE))
    expect_equal(seen, c(10000, 10000, 500))
})
