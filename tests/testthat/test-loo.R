## loo(), waic() and loo_subsample() at any N: the draws they read, the
## log-likelihood in blocks of rows, the joined result equal to loo's on the
## whole matrix, and the subsampled estimate against the full one.

skip_if_not_installed("loo")
skip_if_not_installed("rstantools")

loo_fit <- local({
    fit <- NULL
    function() {
        if (is.null(fit)) {
            set.seed(11)
            N <- 600
            x <- matrix(rnorm(N * 3), N)
            y <- rbinom(N, 1, plogis(x %*% c(1, -0.5, 0.25)))
            fit <<- sgld(x, y, family = binomial(), n_iter = 3200, burnin = 200, chains = 2,
                         progress = FALSE)
        }
        fit
    }
})

test_that("draws = NULL gives up to 4,000 draws, evenly spaced within each chain", {
    fit <- loo_fit()
    S <- nrow(as.matrix(fit))                       # 2 x 3,000
    idx <- sgfs:::chosen_index(fit, NULL, 4000L)
    expect_length(idx, 4000L)
    expect_equal(tabulate((idx - 1L) %/% 3000L + 1L), c(2000L, 2000L))
    expect_equal(sgfs:::chosen_index(fit, Inf), seq_len(S))
    expect_equal(sgfs:::chosen_index(fit, 1e6), seq_len(S))
    expect_length(sgfs:::chosen_index(fit, 7), 7L)
    expect_equal(sgfs:::chosen_index(fit, 7)[1:4], round(seq(1, 3000, length.out = 4)))
    expect_equal(dim(rstantools::log_lik(fit)), c(4000L, 600L))
    expect_equal(dim(rstantools::posterior_epred(fit, draws = Inf)), c(S, 600L))
    ll <- rstantools::log_lik(fit, draws = 10)
    expect_equal(ll, rstantools::log_lik(fit, draws = Inf)[sgfs:::chosen_index(fit, 10), ])
    expect_error(rstantools::log_lik(fit, draws = 0), "'draws'")
})

test_that("loo() and waic() in blocks of rows equal loo's on the whole matrix", {
    fit <- loo_fit()
    ll <- rstantools::log_lik(fit)
    chain <- rep(1:2, each = 2000)
    whole <- loo::loo(ll, r_eff = loo::relative_eff(exp(ll), chain_id = chain))
    expect_equal(loo::loo(fit), whole)
    B <- sgfs:::loo_draws(fit, NULL)
    expect_equal(attr(B, "chain"), chain)
    f <- function(l) loo::loo(l, r_eff = loo::relative_eff(exp(l), chain_id = chain))
    blocks <- sgfs:::by_rows(fit, B, f, block = 4000 * 47)     # 13 blocks, the last of 36 rows
    expect_equal(blocks, whole)
    expect_equal(sgfs:::by_rows(fit, B, loo::waic, block = 4000 * 100), loo::waic(ll))
    expect_equal(loo::waic(fit), loo::waic(ll))
    ## draws = honoured, as many from each chain
    small <- loo::loo(fit, draws = 501)
    expect_equal(attr(small, "dims"), c(500L, 600L))
    expect_equal(loo::loo_compare(whole, blocks)[2, "elpd_diff"], 0)
})

test_that("loo_subsample() agrees with loo() within its subsampling error", {
    fit <- loo_fit()
    full <- loo::loo(fit)
    sub <- loo::loo_subsample(fit, observations = 150)
    expect_s3_class(sub, "psis_loo_ss")
    expect_equal(attr(sub, "dims")[1L], 4000L)
    e <- sub$estimates["elpd_loo", ]
    expect_lt(abs(e[["Estimate"]] - full$estimates["elpd_loo", "Estimate"]),
              4 * e[["subsampling SE"]])
    expect_equal(e[["SE"]], full$estimates["elpd_loo", "SE"], tolerance = 0.1)
    ## the row function: one row at many draws, and every row at one draw
    B <- sgfs:::loo_draws(fit, 100)
    ll <- rstantools::log_lik(fit, draws = Inf)[sgfs:::chosen_index(fit, 100), ]
    llfun <- sgfs:::row_llfun(fit)
    expect_equal(llfun(matrix(17L), B), ll[, 17, drop = FALSE], ignore_attr = TRUE)
    point <- B[3, , drop = FALSE]
    expect_equal(vapply(c(1L, 250L, 600L), function(i) llfun(matrix(i), point), 0),
                 ll[3, c(1, 250, 600)])
})

test_that("a mixed model's loo() and loo_subsample() include its group effects", {
    skip_if_not_installed("lme4")
    set.seed(4)
    d <- data.frame(g = factor(rep(1:12, each = 25)), x = rnorm(300))
    d$y <- rbinom(300, 1, plogis(-0.5 + d$x + rnorm(12)[d$g]))
    fit <- sgldcv(y ~ x + (1 | g), d, family = binomial(), n_iter = 4000, progress = FALSE)
    ll <- rstantools::log_lik(fit)
    whole <- loo::loo(ll, r_eff = loo::relative_eff(exp(ll), chain_id = rep(1, nrow(ll))))
    expect_equal(sgfs:::by_rows(fit, sgfs:::loo_draws(fit, NULL), function(l)
        loo::loo(l, r_eff = loo::relative_eff(exp(l), chain_id = rep(1, nrow(l)))),
        block = nrow(ll) * 40), whole)
    sub <- loo::loo_subsample(fit, observations = 100)
    expect_lt(abs(sub$estimates["elpd_loo", "Estimate"] - whole$estimates["elpd_loo", "Estimate"]),
              4 * sub$estimates["elpd_loo", "subsampling SE"])
})
