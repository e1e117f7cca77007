## n_iter = NULL: the run grows, by the factor its effective sample size
## projects, until every parameter has 400 bulk effective draws over all
## chains and split R-hat <= 1.01, within max_time, and stops early when a
## much longer run does not raise the effective sample size

## the post-burn-in lengths and thins that the growth rule gives after each
## stage of `st` (grow_run()'s stages; burn-in 1000, 9,000 draws kept)
rule_stages <- function(st) {
    post <- st$n_iter[1L] - 1000
    thin <- st$thin[1L]
    for (k in seq_len(nrow(st) - 1L)) {
        nxt <- sgfs:::next_stage(post[k], thin[k], 9000,
                                 sgfs:::growth_factor(st$min_ess[k], st$max_rhat[k]))
        post <- c(post, nxt$post)
        thin <- c(thin, nxt$thin)
    }
    data.frame(n_iter = 1000 + post, thin = thin)
}

draws_of <- function(fit) unclass(sgfs:::all_draws(fit))

test_that("a slowly mixing chain grows, thinned, to 400 bulk effective draws", {
    d <- pima_data()
    fit <- withr::with_seed(3, sgld(d$x, d$y, progress = FALSE, metric = "identity",
                                    verbose = FALSE))
    rl <- attr(fit, "sgfit")$run_length
    st <- rl$stages
    ## SGLD at its default step needs several times 10,000 iterations here
    expect_gt(nrow(st), 1L)
    expect_equal(rl$stop, "mixed")
    expect_gte(st$min_ess[nrow(st)], 400)
    expect_lte(st$max_rhat[nrow(st)], 1.01)
    expect_equal(st[c("n_iter", "thin")], rule_stages(st))
    expect_true(all(diff(st$n_iter - 1000) / (st$n_iter[-nrow(st)] - 1000) >= 0.2 - 1e-12))
    expect_true(all(st$min_ess[-nrow(st)] < 400 | st$max_rhat[-nrow(st)] > 1.01))
    conv <- sgfs:::convergence_table(sgfs:::chain_draws(fit))
    expect_equal(min(conv$ess_bulk), st$min_ess[nrow(st)])
    expect_equal(coda::niter(fit), (st$n_iter[nrow(st)] - 1000) / st$thin[nrow(st)])
    expect_lte(coda::niter(fit), 9000)
    thin <- st$thin[nrow(st)]
    expect_equal(coda::mcpar(fit), c(1000 + thin, st$n_iter[nrow(st)], thin))
    ## the same draws as one run with the final length and thin (the same
    ## chain; on the original scale up to the rounding of the conversion, a
    ## matrix product whose blocking in an optimised BLAS such as OpenBLAS
    ## depends on the number of rows)
    one <- withr::with_seed(3, sgld(d$x, d$y, n_iter = st$n_iter[nrow(st)], burnin = 1000,
                                    thin = thin, progress = FALSE, metric = "identity"))
    expect_equal(draws_of(fit), draws_of(one), tolerance = 1e-14)
    expect_identical(attr(fit, "sgfit")$states, attr(one, "sgfit")$states)
    expect_output(print(fit), "Run length set by the chains: 10,000 -> [0-9,]+ -> .* >= 400 bulk effective draws")
})

test_that("several chains grow together until their pooled draws have mixed", {
    d <- pima_data()
    fit <- withr::with_seed(4, psgld(d$x, d$y, chains = 2, progress = FALSE, verbose = FALSE,
                                     metric = "identity"))
    st <- attr(fit, "sgfit")$run_length$stages
    expect_gt(nrow(st), 1L)
    conv <- sgfs:::convergence_table(sgfs:::chain_draws(fit))
    expect_gte(min(conv$ess_bulk), 400)
    expect_lte(max(conv$rhat), 1.01)
    one <- withr::with_seed(4, psgld(d$x, d$y, chains = 2, n_iter = st$n_iter[nrow(st)],
                                     burnin = 1000, thin = st$thin[nrow(st)], progress = FALSE,
                                     metric = "identity"))
    expect_equal(draws_of(fit), draws_of(one), tolerance = 1e-14)      # (as above)
    ## and it continues like any fit
    more <- update(fit, n_iter = 1000 * st$thin[nrow(st)])
    expect_equal(coda::niter(more), coda::niter(fit) + 1000)
})

test_that("a chain that mixes at once runs 10,000 iterations, as an explicit n_iter", {
    d <- pima_data()
    ## OSGFS: about 2,000 effective draws per 10,000 iterations on Pima
    fit <- withr::with_seed(5, osgfs(d$x, d$y, progress = FALSE, verbose = FALSE))
    rl <- attr(fit, "sgfit")$run_length
    expect_equal(nrow(rl$stages), 1L)
    expect_gte(rl$stages$min_ess[1L], 400)
    one <- withr::with_seed(5, osgfs(d$x, d$y, n_iter = 10000, progress = FALSE))
    expect_identical(draws_of(fit), draws_of(one))
    expect_null(attr(one, "sgfit")$run_length)
    expect_equal(coda::mcpar(fit), c(1001, 10000, 1))
})

test_that("the time budget stops the growth, and the report says so", {
    d <- pima_data()
    ## 400 effective draws cannot be had in 10 microseconds: stopped at once (a
    ## quarter of the budget is under 50 iterations however fast the machine)
    ## and warns: its draws cannot be used as they are
    expect_warning(expect_message(
        grown <- withr::with_seed(6, sgld(d$x, d$y, progress = FALSE, metric = "identity",
                                          max_time = 1e-5, verbose = TRUE)),
        "would take about .* s, far more than max_time = 1e-05 s"),
        paste("the chains have not mixed: after 50 iterations the smallest bulk effective sample",
              "size is [0-9]+ .*at this pace 400 effective draws would take about .* s, far more",
              "than max_time = 1e-05 s\\): means, sds and intervals from these draws are unreliable;",
              "give the run more time \\(max_time =\\), or use sgldcv\\(\\) or osgfs\\(\\)"))
    rl <- attr(grown, "sgfit")$run_length
    expect_equal(rl$stop, "projected")
    ## the probe shortened the first run to fit a quarter of the budget
    expect_equal(rl$stages$n_iter, 50)
    expect_equal(attr(grown, "sgfit")$spec$burnin, 5)
    expect_lt(rl$stages$min_ess[1L], 400)
    expect_gt(rl$stages$needed[1L], 1e-5)
    expect_output(print(grown), "stopped early at [0-9]+ of the 400 bulk effective draws aimed for: at this pace")
    expect_output(print(grown), "Warning: only [0-9]+ bulk effective draws.*or use sgldcv\\(\\) or osgfs\\(\\)")
    ## a run whose next doubling would pass the budget
    info <- attr(grown, "sgfit")
    info$run_length$stop <- "time"
    attr(grown, "sgfit") <- info
    expect_output(print(grown), "stopped by the time budget \\(max_time = 1e-05 s\\)")
    ## at most `stages_max` extensions
    first <- withr::with_seed(6, sgld(d$x, d$y, n_iter = 10000, progress = FALSE,
                                      metric = "identity"))
    run <- list(verbose = FALSE, max_time = Inf, chains = 1L, progress = FALSE)
    expect_warning(
        capped <- sgfs:::grow_run(first, run, started = proc.time()[["elapsed"]], stages_max = 1L),
        "the chains have not mixed: after 19,000 iterations.*the run reached its most extensions")
    st <- attr(capped, "sgfit")$run_length$stages
    expect_equal(nrow(st), 2L)
    expect_equal(st[c("n_iter", "thin")], rule_stages(st))
    expect_equal(attr(capped, "sgfit")$run_length$stop, "stages")
    expect_output(print(capped), "stopped after 1 extension at")
})

test_that("a run stopped short warns only when its draws are unusable", {
    d <- pima_data()
    fit <- withr::with_seed(6, sgld(d$x, d$y, n_iter = 2000, progress = FALSE))
    info <- attr(fit, "sgfit")
    with_stage <- function(stop, ess, rhat) {
        info$run_length <- list(target = 400, target_rhat = 1.01, stop = stop, max_time = 300,
                                stages = data.frame(n_iter = 2000, thin = 1, min_ess = ess,
                                                    max_rhat = rhat, seconds = 1, needed = 900))
        info
    }
    ## short of 400 but usable (rstan's limits: ESS 100, R-hat 1.05): no warning
    expect_false(withVisible(sgfs:::warn_unmixed(with_stage("time", 150, 1.02)))$value)
    expect_silent(sgfs:::warn_unmixed(with_stage("projected", 100, 1.05)))
    ## a run that mixed, or was interrupted, or has no run length: none
    expect_silent(sgfs:::warn_unmixed(with_stage("mixed", 20, 1.5)))
    expect_silent(sgfs:::warn_unmixed(with_stage("interrupted", 20, 1.5)))
    expect_silent(sgfs:::warn_unmixed(info))
    ## unusable: each reason said
    expect_warning(sgfs:::warn_unmixed(with_stage("time", 150, 1.2)),
                   "largest R-hat 1.2 .*the time budget \\(max_time = 300 s\\) ran out")
    expect_warning(sgfs:::warn_unmixed(with_stage("stalled", 60, 1.01)),
                   "smallest bulk effective sample size is 60 .*stopped growing")
    expect_warning(sgfs:::warn_unmixed(with_stage("projected", 60, 1.01)),
                   "at this pace 400 effective draws would take about 900 s")
})

test_that("a first run that would take most of the budget is shortened, reproducibly", {
    d <- pima_data()
    probe <- function(max_time, chains = 1L, seed = 8)
        withr::with_seed(seed, sgldcv(d$x, d$y, progress = FALSE, max_time = max_time,
                                      chains = chains, verbose = FALSE))
    ## ten iterations take far more than 1e-7 s / 4 / 10000: the first run is
    ## the shortest; the caller's RNG stream is as if no probe had run
    expect_warning(short <- probe(1e-6), "the chains have not mixed")
    expect_equal(attr(short, "sgfit")$run_length$stages$n_iter[1L], 50)
    plain <- withr::with_seed(8, sgldcv(d$x, d$y, progress = FALSE, n_iter = 50, burnin = 5))
    expect_identical(draws_of(short), draws_of(plain))
    ## several chains: each continues its own stream, the same with a probe or without
    expect_warning(two <- probe(1e-6, chains = 2L), "the chains have not mixed")
    plain2 <- withr::with_seed(8, sgldcv(d$x, d$y, progress = FALSE, n_iter = 50, burnin = 5,
                                         chains = 2L))
    expect_identical(draws_of(two), draws_of(plain2))
    ## an ample budget leaves the first run at 10,000 iterations
    expect_equal(attr(probe(300), "sgfit")$run_length$stages$n_iter[1L], 10000)
    expect_warning(expect_message(withr::with_seed(8, sgldcv(d$x, d$y, progress = FALSE, max_time = 1e-6)),
                                  "the first run is shortened to 50"), "the chains have not mixed")
})

test_that("SGLD-CV's pilot slows the coordinates its gradient noise would inflate, in the metric", {
    d <- pima_data()
    pilot_fit <- function(...) {
        set.seed(21)
        sgldcv(d$x, d$y, n_iter = 3000, progress = FALSE, ...)
    }
    ## little noise (Pima, batch 100 of 200): the step stays 0.2, and the
    ## metric is the mode's
    fit <- pilot_fit()
    p <- attr(fit, "sgfit")$settings$pilot
    expect_lt(p$energy, 2)
    expect_equal(p$slowed, 0L)
    expect_equal(attr(fit, "sgfit")$settings$stepsize, 0.2)
    expect_identical(draws_of(fit), draws_of(pilot_fit(stepsize = 0.2)))
    ## a factor of L levels of 3000 / L rows each (more rows of high
    ## leverage than a minibatch holds, so the gradient is noisy): the
    ## coordinates with m_j - 1 > 0.2 / eps, m_j the whitened gradient's
    ## mean square over the pilot, move with the step 0.2 / (m_j - 1): their
    ## rows of the metric's factor (z = U theta) are scaled by
    ## sqrt(eps (m_j - 1) / 0.2), the rest left as they were
    levels_data <- function(L) {
        set.seed(5)
        f <- factor(sample(seq_len(L), 3000, TRUE))
        x <- cbind(rnorm(3000), model.matrix(~ f)[, -1])
        list(x = x, y = rbinom(3000, 1, plogis(x[, 1] + 0.5 * rnorm(L)[f])))
    }
    d <- levels_data(150)
    x <- d$x
    y <- d$y
    ## (a seed whose pilot slows some coordinates: its energy varies from
    ## run to run, 14 to 46 on these data, and a coordinate is slowed when
    ## 0.2 / (energy - 1) is below the first step; the levels with at most
    ## three responses of one kind are updated exactly, off the rule's lines)
    noisy <- function(...) {
        set.seed(1)
        sgldcv(x, y, batch_size = 5L, n_iter = 2000, progress = FALSE, ...)
    }
    fit <- noisy()
    info <- attr(fit, "sgfit")
    p <- info$settings$pilot
    expect_gt(p$energy, 2)
    expect_gt(p$slowed, 0L)
    expect_equal(p$step, p$first_step)
    expect_equal(p$slowest, min(p$first_step, 0.2 / (p$energy - 1)))
    expect_equal(info$settings$stepsize, p$step)
    expect_equal(info$spec$drift_limit, 2 / p$step)
    ## against the same run without the pilot (the step given): the metric's
    ## factor differs by its rows' scales, `slowed` of them above 1, the
    ## largest (energy - 1) eps / 0.2 squared
    given <- noisy(stepsize = p$step)
    expect_null(attr(given, "sgfit")$settings$pilot)
    U <- sgfs:::fit_spec(info)$metric
    U0 <- sgfs:::fit_spec(attr(given, "sgfit"))$metric
    expect_true(is.matrix(U))
    scale <- diag(U) / diag(U0)
    expect_equal(U, U0 * scale, tolerance = 1e-12)
    expect_equal(sum(scale > 1), p$slowed)
    expect_equal(max(scale)^2, (p$energy - 1) * p$first_step / 0.2, tolerance = 1e-12)
    expect_true(all(scale >= 1))
    ## the pilot runs on copies, the caller's random numbers restored: the
    ## run draws the same minibatches and noise as the one without it (the
    ## same state of R's generator after both), only in another metric
    set.seed(24)
    invisible(sgldcv(x, y, batch_size = 5L, n_iter = 300, progress = FALSE))
    after_pilot <- .Random.seed
    set.seed(24)
    invisible(sgldcv(x, y, batch_size = 5L, n_iter = 300, progress = FALSE, stepsize = p$step))
    expect_identical(after_pilot, .Random.seed)
    ## continued, the run keeps its metric
    more <- withr::with_seed(3, update(fit, n_iter = 10))
    expect_identical(sgfs:::fit_spec(attr(more, "sgfit"))$metric, U)
    ## no pilot with the papers' rule or a decaying schedule
    expect_null(attr(suppressWarnings(noisy(metric = "identity")), "sgfit")$settings$pilot)
    expect_null(attr(noisy(schedule = schedule_polynomial()), "sgfit")$settings$pilot)
})

test_that("the growth factor projects the effective sample size, within bounds", {
    ## 400 effective draws with a 15 % margin, at least 1.2 and at most 4 times
    expect_equal(sgfs:::growth_factor(200, 1.005), 1.15 * 2)
    expect_equal(sgfs:::growth_factor(390, 1.005), 1.2)
    expect_equal(sgfs:::growth_factor(50, 1.005), 4)
    expect_equal(sgfs:::growth_factor(10, 1.005), 2)       # too few to project from
    expect_equal(sgfs:::growth_factor(NaN, NA), 2)
    ## R-hat - 1 falls in inverse proportion to the length
    expect_equal(sgfs:::growth_factor(500, 1.03), 1.15 * 3)
    expect_equal(sgfs:::growth_factor(500, NA), 1.2)
    ## thin doubles until at most `kept` draws are kept; the length is a
    ## multiple of it
    expect_equal(sgfs:::next_stage(9000, 1L, 9000, 2.3), list(post = 20700, thin = 4L))
    expect_equal(sgfs:::next_stage(9000, 1L, 9000, 1.2), list(post = 10800, thin = 2L))
    expect_equal(sgfs:::next_stage(36000, 4L, 9000, 1.2), list(post = 43200, thin = 8L))
    expect_equal(sgfs:::next_stage(9001, 1L, 9000, 1.2), list(post = 10802, thin = 2L))
})

test_that("a chain whose effective sample size stops growing is stopped early", {
    ## eight times the run for less than twice the effective draws
    post <- 9000 * 2^(0:3)
    expect_true(sgfs:::stalled(c(30, 50, 40, 59), post))
    expect_false(sgfs:::stalled(c(30, 50, 40, 61), post))
    expect_false(sgfs:::stalled(c(3, 5, 4, 5), post))   # too few to tell: the projection decides
    expect_false(sgfs:::stalled(c(12, 3, 6), post[1:3]))  # one noisy stage is no evidence
    expect_false(sgfs:::stalled(c(300, 320, 350, 390, 420), 9000 * 2^(0:4)))
    ## stages of other lengths: the latest stage at most an eighth as long
    expect_true(sgfs:::stalled(c(30, 35, 50), c(9000, 36000, 80000)))
    expect_false(sgfs:::stalled(c(30, 35, 50), c(9000, 36000, 70000)))
    expect_false(sgfs:::stalled(c(30, 35, 75), c(9000, 36000, 80000)))
    d <- pima_data()
    first <- withr::with_seed(6, sgld(d$x, d$y, n_iter = 10000, progress = FALSE,
                                      metric = "identity"))
    info <- attr(first, "sgfit")
    info$run_length <- list(target = 400, target_rhat = 1.01, stop = "stalled", max_time = 300,
                            stages = data.frame(n_iter = c(1e4, 19e3, 37e3, 73e3),
                                                thin = c(1, 2, 4, 8), min_ess = c(30, 50, 40, 50)))
    attr(first, "sgfit") <- info
    expect_output(print(first), "stopped early: the effective sample size stopped growing \\(30 -> 50 -> 40 -> 50\\)")
})

test_that("the default metric mixes Pima's SGLD in fewer iterations than the paper's rule", {
    d <- pima_data()
    fit <- withr::with_seed(8, sgld(d$x, d$y, progress = FALSE, verbose = FALSE))
    plain <- withr::with_seed(8, sgld(d$x, d$y, progress = FALSE, verbose = FALSE,
                                      metric = "identity"))
    rl <- attr(fit, "sgfit")$run_length
    expect_equal(rl$stop, "mixed")
    expect_lt(max(rl$stages$n_iter), max(attr(plain, "sgfit")$run_length$stages$n_iter))
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
    expect_equal(attr(fixed, "sgfit")$spec$burnin, 300)
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

test_that("a network's run is judged on what does not depend on its units' labels", {
    d <- withr::with_seed(5, {
        x <- matrix(rnorm(600), 200, 3)
        list(x = x, y = sin(x[, 1]) + x[, 2] + rnorm(200, sd = 0.3))
    })
    run <- engine_spec(d$x, d$y, family = gaussian(), model = mlp(4, "tanh"))
    D <- run$design$D
    draws <- withr::with_seed(6, matrix(rnorm(50 * D), 50, D,
                                        dimnames = list(NULL, run$design$par_names)))
    layer <- run$design$layer[seq_len(D)]          # (NA: log_sigma)
    inv <- sgfs:::network_invariants(draws, layer)
    expect_identical(colnames(inv), c("layer 1 log mean square", "layer 2 log mean square",
                                      "log_sigma"))
    w1 <- which(run$design$layer == 1)
    expect_equal(inv[, 1], log(rowMeans(draws[, w1]^2)))
    ## the hidden units relabelled (and, tanh being odd, one sign-flipped):
    ## the same function, the same invariants
    perm <- c(3, 1, 4, 2)
    W1 <- draws[, 1:12]; b1 <- draws[, 13:16]; W2 <- draws[, 17:20]
    moved <- draws
    moved[, 1:12] <- W1[, as.vector(matrix(1:12, 3)[, perm])]
    moved[, 13:16] <- b1[, perm]
    moved[, 17:20] <- W2[, perm]
    moved[, c(4:6, 14, 18)] <- -moved[, c(4:6, 14, 18)]
    expect_equal(sgfs:::network_invariants(moved, layer), inv)
    ## a GLM's run is judged on its parameters
    expect_identical(sgfs:::grown_burnin(list(spec = list(burnin = 1000L), design = list()),
                                         40000, 8L), 1000L)
    ## a network's burn-in grows to half the run, on the thinning's grid
    b <- sgfs:::grown_burnin(list(spec = list(burnin = 1000L), design = run$design), 40001, 8L)
    expect_equal((b - 1000) %% 8, 0)
    expect_true(b <= 20000 && b > 20000 - 8)
})

test_that("a network's grown run equals one run with its final length, burn-in and thin", {
    d <- withr::with_seed(7, {
        x <- matrix(rnorm(600), 200, 3)
        list(x = x, y = sin(x[, 1]) + x[, 2] + rnorm(200, sd = 0.3))
    })
    fit <- withr::with_seed(8, suppressWarnings(sgld(d$x, d$y, family = gaussian(),
                                                     model = mlp(4, "tanh"), batch_size = 20L,
                                                     max_time = 1.5, progress = FALSE,
                                                     verbose = FALSE)))
    info <- attr(fit, "sgfit")
    st <- info$run_length$stages
    expect_gt(nrow(st), 1L)
    last <- st$n_iter[nrow(st)]
    ## the whole run doubles, but a stage that fits the rest of the budget
    ## when a doubling would not (the first doubling fits)
    k <- nrow(st)
    expect_equal(st$n_iter[2], 2 * st$n_iter[1])
    expect_true(all(st$n_iter[-1] <= 2 * st$n_iter[-k] & st$n_iter[-1] > st$n_iter[-k]))
    expect_true(info$spec$burnin <= last / 2 && info$spec$burnin > last / 2 - st$thin[nrow(st)])
    expect_equal(nrow(as.matrix(fit)), (last - info$spec$burnin) / st$thin[nrow(st)])
    one <- withr::with_seed(8, suppressWarnings(sgld(d$x, d$y, family = gaussian(),
                                                     model = mlp(4, "tanh"), batch_size = 20L,
                                                     n_iter = last, burnin = info$spec$burnin,
                                                     thin = st$thin[nrow(st)], progress = FALSE)))
    expect_equal(draws_of(fit), draws_of(one), tolerance = 1e-12)
    expect_identical(info$states, attr(one, "sgfit")$states)
    ## neither a stalled ESS nor a projection stopped it: the budget did
    expect_identical(info$run_length$stop, "time")
    ## print() reports the quantities the run was judged on, and no warning
    ## about the noise rule's own 30 % share
    out <- capture.output(print(fit))
    expect_true(any(grepl("^Slowest of the layers' mean squares and log_sigma", out)))
    expect_false(any(grepl("inflates the posterior variance", out)))
})
