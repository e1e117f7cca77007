## The rank-normalised split R-hat and bulk/tail ESS of R/convergence.R
## (Vehtari et al. 2021): their defining properties on draws whose answer is
## known (iid and AR(1) chains, shifted chains, constant draws), values of
## the posterior package recorded for one fixed input, and, where posterior
## is installed (it is not a dependency), a comparison on many inputs.

## AR(1) chains with unit stationary variance, started at stationarity's
## scale (x_1 = e_1 sqrt(1 - phi^2) is close enough for these lengths), plus
## a shift per chain; iid normal for phi = 0
ar1_chains <- function(n, m, phi, shift = 0) {
    x <- matrix(stats::rnorm(n * m) * sqrt(1 - phi^2), n, m)
    for (j in seq_len(m)) x[, j] <- stats::filter(x[, j], phi, method = "recursive")
    x + rep(rep_len(shift, m), each = n)
}

## posterior's functions without '::' (it is not a declared dependency)
posterior_fun <- function(name) getExportedValue("posterior", name)

test_that("split_chains() halves each chain and drops the middle draw of odd lengths", {
    x <- matrix(1:14, 7, 2)
    s <- split_chains(x)
    expect_equal(dim(s), c(3L, 4L))
    expect_equal(s[, 1], 1:3)
    expect_equal(s[, 2], 8:10)
    expect_equal(s[, 3], 5:7)                   # draw 4 (the middle) dropped
    expect_equal(s[, 4], 12:14)
    expect_equal(dim(split_chains(matrix(1:8, 4, 2))), c(2L, 4L))
    expect_equal(split_chains(matrix(1:2, 2, 1)), matrix(1:2, 1, 2))
})

test_that("rank_normalise() gives the normal scores of the average ranks over all draws", {
    set.seed(1)
    x <- matrix(round(stats::rnorm(60), 1), 20, 3)   # many ties
    x[2, 3] <- -Inf
    z <- rank_normalise(x)
    expect_equal(dim(z), dim(x))
    r <- rank(x, ties.method = "average")
    expect_equal(as.vector(z), stats::qnorm((r - 3 / 8) / (60 + 1 / 4)))
    expect_equal(z[2, 3], stats::qnorm((1 - 3 / 8) / (60 + 1 / 4)))
    ## monotone transforms do not change it
    expect_identical(rank_normalise(exp(x)), z)
    ## scores are symmetric about 0 without ties
    z <- rank_normalise(matrix(stats::rnorm(40), 10, 4))
    expect_equal(sort(as.vector(z)), -rev(sort(as.vector(z))))
})

test_that("rhat_basic() is sqrt(var+ / W) of the paper", {
    set.seed(2)
    x <- matrix(stats::rnorm(400), 100, 4)
    n <- 100
    W <- mean(apply(x, 2, stats::var))
    B <- n * stats::var(colMeans(x))
    expect_equal(rhat_basic(x), sqrt(((n - 1) / n * W + B / n) / W))
    expect_true(is.na(rhat_basic(x[, 1, drop = FALSE])))   # one chain: no B
})

test_that("iid normal chains: R-hat within Monte Carlo error of 1, ESS close to S", {
    set.seed(3)
    n <- 1000L
    m <- 4L
    x <- ar1_chains(n, m, 0)
    S <- n * m
    ## with M = 2m split chains of N = n / 2 draws, R-hat^2 - 1 is about
    ## (chi^2_{M-1} / (M - 1) - 1) / N: R-hat has sd sqrt(2 / (M - 1)) / (2 N)
    sd_rhat <- sqrt(2 / (2 * m - 1)) / n
    expect_lt(abs(rhat_rank(x) - 1), 6 * sd_rhat)
    expect_lt(abs(rhat_basic(split_chains(x)) - 1), 6 * sd_rhat)
    ## the estimated autocorrelation time has relative sd about
    ## sqrt(2 (2 W + 1) / S) with W the summation window (Sokal 1997), W about
    ## 2 tau here (iid: tau = 1): 4 such standard errors
    tol <- 4 * sqrt(2 * (2 * 2 + 1) / S)
    expect_lt(abs(ess_bulk(x) / S - 1), tol)
    expect_lt(abs(ess_tail(x) / S - 1), tol)
    expect_lt(abs(ess_basic(x) / S - 1), tol)
    ## heavy tails do not matter to the rank-based ones
    y <- matrix(stats::rcauchy(S), n, m)
    expect_lt(abs(rhat_rank(y) - 1), 6 * sd_rhat)
    expect_lt(abs(ess_bulk(y) / S - 1), tol)
    expect_lt(abs(ess_tail(y) / S - 1), tol)
})

test_that("AR(1) chains have ESS near S (1 - phi) / (1 + phi)", {
    set.seed(4)
    for (phi in c(0.5, 0.9)) {
        n <- 5000L
        m <- 4L
        S <- n * m
        x <- ar1_chains(n, m, phi)
        tau <- (1 + phi) / (1 - phi)
        tol <- 4 * sqrt(2 * (2 * 2 * tau + 1) / S)   # as above, W = 2 tau
        expect_lt(abs(ess_bulk(x) / (S / tau) - 1), tol)
        expect_lt(abs(ess_basic(x) / (S / tau) - 1), tol)
        ## R-hat^2 - 1 is about (tau chi^2_{M-1} / (M - 1) - 1) / N
        expect_lt(abs(rhat_rank(x) - 1 - (tau - 1) / (2 * n / 2)),
                  6 * tau * sqrt(2 / (2 * m - 1)) / n)
    }
    ## one chain alone
    x <- ar1_chains(4000L, 1L, 0.5)
    expect_lt(abs(ess_bulk(x) / (4000 / 3) - 1), 4 * sqrt(2 * 13 / 4000))
})

test_that("chains with different means, scales or trends give R-hat clearly above 1.01", {
    set.seed(5)
    x <- ar1_chains(1000L, 4L, 0.3, shift = c(0, 0, 0, 1))
    expect_gt(rhat_rank(x), 1.05)
    expect_gt(rhat_basic(x), 1.05)
    ## the same location, one chain 3 times as wide: seen by the folded R-hat
    y <- ar1_chains(1000L, 4L, 0) * rep(c(1, 1, 1, 3), each = 1000L)
    expect_gt(rhat_rank(y), 1.05)
    expect_lt(rhat_basic(y), 1.01)
    ## a trend within each chain: seen by splitting
    z <- ar1_chains(1000L, 4L, 0) + seq(0, 2, length.out = 1000L)
    expect_gt(rhat_rank(z), 1.05)
    expect_lt(rhat_basic(z), 1.01)
})

test_that("constant, missing and too short draws give NA without a warning", {
    x <- matrix(2.5, 100, 4)
    expect_silent(r <- c(rhat_rank(x), rhat_basic(x), ess_basic(x), ess_bulk(x), ess_tail(x)))
    expect_equal(r, rep(NA_real_, 5))
    expect_true(is.na(ess_bulk(cbind(rep(1, 50)))))
    ## constant within each chain but not across them: no within-chain
    ## variance, R-hat infinite (as in posterior)
    x[, 1] <- 1
    expect_equal(rhat_basic(x), Inf)
    expect_equal(rhat_rank(x), Inf)
    set.seed(6)
    y <- ar1_chains(100L, 4L, 0.5)
    y[10, 2] <- NA
    expect_silent(r <- c(rhat_rank(y), rhat_basic(y), ess_basic(y), ess_bulk(y), ess_tail(y)))
    expect_equal(r, rep(NA_real_, 5))
    ## an infinite draw: the rank-based ones still work, not the others
    y[10, 2] <- Inf
    expect_false(is.na(rhat_rank(y)))
    expect_false(is.na(ess_bulk(y)))
    expect_true(is.na(ess_tail(y)))
    expect_true(is.na(ess_basic(y)))
    ## half-chains of one draw (chains of 2 or 3): no within-chain variance
    expect_silent(r <- c(rhat_rank(y[1:3, ]), ess_bulk(y[1:3, ]), ess_tail(y[1:3, ])))
    expect_equal(r, rep(NA_real_, 3))
    ## a tail indicator that is constant: 97% of the draws equal the largest
    w <- matrix(c(rep(0, 388), -1 - abs(stats::rnorm(12))), 100, 4)
    expect_true(is.na(ess_tail(w)))
    expect_false(is.na(ess_bulk(w)))
    ## a huge antithetic ESS is capped at S log10(S), silently
    a <- matrix(rep(c(-1, 1), 200), 100, 4) + 1e-3 * matrix(stats::rnorm(400), 100, 4)
    expect_silent(e <- ess_bulk(a))
    expect_lte(e, 400 * log10(400) + 1e-9)
})

test_that("posterior's values for a fixed input are reproduced (recorded numbers)", {
    ## posterior 1.7.0: rhat(), rhat_basic(), ess_basic() (both split by
    ## default), ess_bulk(), ess_tail() of this input
    set.seed(20240607)
    x <- ar1_chains(1001L, 4L, 0.7, shift = c(0, 0, 0, 0.3))
    x[, 2] <- x[, 2]^3
    expect_equal(rhat_rank(x), 1.01425666861817, tolerance = 1e-8)
    expect_equal(rhat_basic(split_chains(x)), 1.01056019444883, tolerance = 1e-8)
    expect_equal(ess_basic(split_chains(x)), 883.315350717458, tolerance = 1e-8)
    expect_equal(ess_bulk(x), 643.582634060926, tolerance = 1e-8)
    expect_equal(ess_tail(x), 624.286243628771, tolerance = 1e-8)
    ## and the table gives the same
    tab <- convergence_table(lapply(1:4, function(j) cbind(a = x[, j])))
    expect_equal(unlist(tab["a", ]),
                 c(rhat = 1.01425666861817, ess_bulk = 643.582634060926,
                   ess_tail = 624.286243628771), tolerance = 1e-8)
})

test_that("the functions agree with posterior on many inputs", {
    skip_if_not_installed("posterior")
    p_rhat <- posterior_fun("rhat")
    p_rhat_basic <- posterior_fun("rhat_basic")
    p_ess_basic <- posterior_fun("ess_basic")
    p_ess_bulk <- posterior_fun("ess_bulk")
    p_ess_tail <- posterior_fun("ess_tail")
    set.seed(7)
    inputs <- list()
    for (phi in c(0, 0.5, 0.95)) for (m in c(1L, 4L)) for (n in c(1000L, 1001L, 37L))
        inputs[[sprintf("AR(1) phi %g, %d chains of %d", phi, m, n)]] <- ar1_chains(n, m, phi)
    inputs$shifted <- ar1_chains(500L, 4L, 0.3, shift = c(0, 0, 0.5, 1))
    inputs$cauchy <- matrix(stats::rcauchy(4000), 1000, 4)
    inputs$t2_odd <- matrix(stats::rt(6002, 2), 3001, 2)
    inputs$lognormal <- matrix(exp(3 * stats::rnorm(2000)), 500, 4)
    inputs$poisson_ties <- matrix(stats::rpois(4000, 2), 1000, 4)
    inputs$two_values <- matrix(sample(c(-1, 1), 400, TRUE), 100, 4)
    inputs$mostly_zero <- matrix(c(rep(0, 390), stats::rnorm(10)), 100, 4)
    inputs$antithetic <- ar1_chains(1000L, 4L, -0.9)
    inputs$slow_short <- ar1_chains(20L, 4L, 0.999)
    inputs$with_inf <- { y <- ar1_chains(100L, 4L, 0.3); y[5, 2] <- Inf; y }
    inputs$constant <- matrix(3, 100, 4)
    for (n in 4:13) inputs[[sprintf("%d draws", n)]] <- ar1_chains(n, 3L, 0.5)
    same <- function(a, b, what) {
        if (is.na(b)) expect_true(is.na(a), label = what)
        else expect_equal(a, b, tolerance = 1e-8, label = what)
    }
    for (nm in names(inputs)) {
        x <- inputs[[nm]]
        suppressWarnings({                      # posterior's "ESS capped"
            same(rhat_rank(x), p_rhat(x), paste("rhat:", nm))
            same(rhat_basic(split_chains(x)), p_rhat_basic(x), paste("rhat_basic:", nm))
            same(ess_basic(split_chains(x)), p_ess_basic(x), paste("ess_basic:", nm))
            same(ess_basic(x), p_ess_basic(x, split = FALSE), paste("ess_basic unsplit:", nm))
            same(ess_bulk(x), p_ess_bulk(x), paste("ess_bulk:", nm))
            same(ess_tail(x), p_ess_tail(x), paste("ess_tail:", nm))
        })
    }
    ## Documented difference: chains of 2 or 3 draws split into half-chains
    ## of one draw, which posterior (1.7.0) turns into a matrix of the wrong
    ## shape (a dropped dimension) and so returns numbers; here they are NA
    ## (see the test of NA above).
})

test_that("convergence_table() equals the functions column by column", {
    set.seed(8)
    n <- 501L
    chains <- lapply(1:3, function(i) {
        x <- cbind(a = ar1_chains(n, 1L, 0.2)[, 1], b = ar1_chains(n, 1L, 0.8)[, 1] + i,
                   c = 7, d = stats::rt(n, 1), e = round(ar1_chains(n, 1L, 0.5)[, 1]),
                   f = c(rep(Inf, n - 100L), stats::rnorm(100L)))   # median Inf
        x[3, "e"] <- Inf
        x
    })
    chains[[2]][10, "d"] <- NA
    tab <- convergence_table(chains)
    expect_s3_class(tab, "data.frame")
    expect_equal(dim(tab), c(6L, 3L))
    expect_equal(rownames(tab), c("a", "b", "c", "d", "e", "f"))
    expect_equal(names(tab), c("rhat", "ess_bulk", "ess_tail"))
    for (v in rownames(tab)) {
        x <- sapply(chains, function(ch) ch[, v])
        expect_equal(unlist(tab[v, ], use.names = FALSE),
                     c(rhat_rank(x), ess_bulk(x), ess_tail(x)), tolerance = 1e-12,
                     label = v)
    }
    expect_true(all(is.na(tab["c", ])))
    expect_true(all(is.na(tab["d", ])))
    expect_true(is.na(tab["f", "rhat"]) && is.na(tab["f", "ess_tail"]))
    expect_false(is.na(tab["e", "rhat"]) || is.na(tab["f", "ess_bulk"]))
    expect_gt(tab["b", "rhat"], 1.1)
    ## reproducible, from matrices or an mcmc.list
    expect_identical(convergence_table(chains), tab)
    expect_identical(convergence_table(coda::mcmc.list(lapply(chains, coda::mcmc))), tab)
    expect_identical(rhat_rank(sapply(chains, function(ch) ch[, "a"])),
                     rhat_rank(sapply(chains, function(ch) ch[, "a"])))
    ## one chain; chains without column names
    one <- convergence_table(chains[1])
    expect_equal(one["a", "ess_bulk"], ess_bulk(chains[[1]][, "a", drop = FALSE]))
    expect_equal(rownames(convergence_table(list(unname(chains[[1]])))), paste0("V", 1:6))
    expect_error(convergence_table(list(chains[[1]], chains[[2]][-1, ])), "same dimensions")
    expect_error(convergence_table(list(chains[[1]], chains[[2]][, 6:1])), "same column names")
    expect_error(convergence_table("a"), "'chains'")
})

test_that("convergence_table() is fast", {
    skip_on_cran()
    set.seed(9)
    chains <- lapply(1:4, function(i) matrix(stats::rnorm(1e5), 1e4, 10))
    ## about 0.2 s on a 2-core virtual machine; 4 x 10,000 x 100 about 1.5 s
    expect_lt(system.time(tab <- convergence_table(chains))[["elapsed"]], 3)
    expect_true(all(abs(tab$rhat - 1) < 0.01))
})

test_that("long chains: no integer overflow in the autocovariance scaling", {
    ## 2 chains x 40,000 draws split in 4: L n k > 2^31 in integers
    x <- matrix(rnorm(80000), 40000, 2)
    tab <- convergence_table(list(matrix(x[, 1], ncol = 1, dimnames = list(NULL, "a")),
                                  matrix(x[, 2], ncol = 1, dimnames = list(NULL, "a"))))
    expect_true(is.finite(tab$ess_bulk))
    expect_equal(tab$ess_bulk, 80000, tolerance = 0.1)
})
