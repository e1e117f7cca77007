## set.seed reproduces a run; continued runs equal one long run; parallel
## chains equal sequential chains.

small_logit <- function(N = 300) {
    withr::with_seed(9, {
        x <- matrix(rnorm(N * 3), N, 3)
        y <- rbinom(N, 1, plogis(0.5 + x %*% c(1, -1, 0.5)))
    })
    list(x = x, y = y)
}

test_that("set.seed gives identical draws", {
    d <- small_logit()
    for (f in list(function(...) sgfs(..., alpha = 1), sgld,
                   function(...) sgfs(..., preconditioner = "diagonal"))) {
        set.seed(1); a <- f(d$x, d$y, n_iter = 300, batch_size = 30, progress = FALSE)
        set.seed(1); b <- f(d$x, d$y, n_iter = 300, batch_size = 30, progress = FALSE)
        expect_identical(sgfs:::all_draws(a), sgfs:::all_draws(b))
        set.seed(2); c <- f(d$x, d$y, n_iter = 300, batch_size = 30, progress = FALSE)
        expect_false(identical(sgfs:::all_draws(a), sgfs:::all_draws(c)))
    }
})

test_that("two continued runs equal one long run, whatever RNG use in between", {
    d <- small_logit()
    block <- function(...) sgfs(..., preconditioner = "block", blocks = c(1, 3))
    for (f in list(sgfs, sgld, block)) {
        set.seed(3)
        long <- f(d$x, d$y, n_iter = 400, burnin = 100, thin = 3, batch_size = 30,
                  schedule = schedule_polynomial(b = 10, delta = 0.6), progress = FALSE)
        set.seed(3)
        short <- f(d$x, d$y, n_iter = 250, burnin = 100, thin = 3, batch_size = 30,
                   schedule = schedule_polynomial(b = 10, delta = 0.6), progress = FALSE)
        runif(5)                          # unrelated random numbers in between
        cont <- update(short, n_iter = 150, progress = FALSE)
        expect_identical(sgfs:::all_draws(cont), sgfs:::all_draws(long))
        expect_identical(coda::mcpar(cont), coda::mcpar(long))
        ## only the new draws, with their true iteration numbers
        tail_only <- update(short, n_iter = 150, append = FALSE, progress = FALSE)
        expect_identical(coda::mcpar(tail_only), c(253, 400, 3))
        expect_identical(unclass(sgfs:::all_draws(tail_only)),
                         unclass(sgfs:::all_draws(long))[-(1:50), ])
        ## and the RNG is left where the long run left it
        set.seed(3)
        invisible(f(d$x, d$y, n_iter = 400, burnin = 100, thin = 3, batch_size = 30,
                    schedule = schedule_polynomial(b = 10, delta = 0.6), progress = FALSE))
        after_long <- runif(1)
        set.seed(3)
        s2 <- f(d$x, d$y, n_iter = 250, burnin = 100, thin = 3, batch_size = 30,
                schedule = schedule_polynomial(b = 10, delta = 0.6), progress = FALSE)
        invisible(update(s2, n_iter = 150, progress = FALSE))
        expect_identical(runif(1), after_long)
    }
})

test_that("several chains: reproducible, parallel equals sequential, continued exactly", {
    skip_on_os("windows")
    d <- small_logit()
    set.seed(4)
    seq_fit <- sgfs(d$x, d$y, n_iter = 300, batch_size = 30, chains = 3, progress = FALSE)
    set.seed(4)
    par_fit <- sgfs(d$x, d$y, n_iter = 300, batch_size = 30, chains = 3, cores = 2,
                    progress = FALSE)
    expect_s3_class(seq_fit, c("sgfit", "mcmc.list"), exact = TRUE)
    expect_length(seq_fit, 3)
    for (k in 1:3) expect_identical(unclass(seq_fit[[k]]), unclass(par_fit[[k]]))
    expect_false(identical(unclass(seq_fit[[1]]), unclass(seq_fit[[2]])))
    ## the user's RNG kind is untouched, also for a set.seed() straight after
    set.seed(9)
    expect_identical(RNGkind()[1], "Mersenne-Twister")
    set.seed(4)
    invisible(sgfs(d$x, d$y, n_iter = 300, batch_size = 30, chains = 2, progress = FALSE))
    set.seed(9)
    a <- runif(1)
    RNGkind("Mersenne-Twister")
    set.seed(9)
    expect_identical(a, runif(1))
    set.seed(5)
    long <- sgfs(d$x, d$y, n_iter = 300, burnin = 30, batch_size = 30, chains = 2,
                 progress = FALSE)
    set.seed(5)
    short <- sgfs(d$x, d$y, n_iter = 200, burnin = 30, batch_size = 30, chains = 2,
                  progress = FALSE)
    cont <- update(short, n_iter = 100, progress = FALSE)
    for (k in 1:2) expect_identical(unclass(cont[[k]]), unclass(long[[k]]))
    ## in a session that has drawn no random number yet (no .Random.seed),
    ## the chains' L'Ecuyer streams leave the kinds as they were
    rm(".Random.seed", envir = globalenv())
    invisible(update(short, n_iter = 100, progress = FALSE))
    expect_identical(RNGkind()[1], "Mersenne-Twister")
    expect_false(exists(".Random.seed", envir = globalenv(), inherits = FALSE))
})

test_that("continuing a continuation keeps the true iteration numbers", {
    d <- small_logit()
    set.seed(6)
    fit <- sgld(d$x, d$y, n_iter = 200, burnin = 100, thin = 3, batch_size = 30,
                progress = FALSE)
    tail1 <- update(fit, n_iter = 90, append = FALSE, progress = FALSE)
    expect_identical(coda::mcpar(tail1), c(202, 289, 3))
    both <- update(tail1, n_iter = 90, progress = FALSE)
    expect_identical(coda::mcpar(both), c(202, 379, 3))
    set.seed(6)
    long <- sgld(d$x, d$y, n_iter = 380, burnin = 100, thin = 3, batch_size = 30,
                 progress = FALSE)
    expect_identical(unclass(sgfs:::all_draws(both)),
                     unclass(sgfs:::all_draws(long))[-(1:33), ])
})
