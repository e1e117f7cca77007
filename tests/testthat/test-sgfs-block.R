## SGFS-b on Gaussian posteriors: exact when the posterior has no correlation
## across the blocks, too narrow (like SGFS-d) between correlated blocks.
## (Its chain against the pure-R replay is in test-reference.R.)

test_that("SGFS-b is exact on the conjugate model, whose blocks are nearly uncorrelated", {
    skip_on_cran()
    ## independent predictors: posterior correlations across the two blocks
    ## are at most 0.02; measured variance ratios 0.97-1.04, means within
    ## 0.05 sd (ESS ~1300)
    cd <- conjugate_data()
    set.seed(320)
    fit <- sgfs(cd$x, cd$y, family = gaussian(), sigma = cd$sigma, prior = normal(0, cd$s0),
                standardize = FALSE, preconditioner = "block", blocks = c(5, 5),
                n_iter = 300000, thin = 5, progress = FALSE)
    expect_close_to_exact(fit, cd)
})

test_that("SGFS-b: exact with blocks that follow the posterior, narrow across correlated ones", {
    skip_on_cran()
    ## predictors with pairwise correlation 0.8: the slopes are correlated
    ## (-0.3) with each other, not with the intercept.  Blocks (intercept)
    ## and (slopes) lose nothing; splitting the slopes (3 + 2) ignores their
    ## correlation and, at alpha = 0, gives variance ratios ~0.7 (measured
    ## 0.67-0.71; at alpha = 1: 0.83-0.90), means unbiased
    cd <- correlated_data()
    x <- cd$x
    y <- cd$y
    exact <- cd$exact
    fit_with <- function(blocks) {
        set.seed(314)
        sgfs(x, y, family = gaussian(), sigma = 1, prior = normal(0, 1), standardize = FALSE,
             preconditioner = "block", blocks = blocks, alpha = 0, n_iter = 200000, thin = 5,
             progress = FALSE, control_variates = FALSE)
    }
    expect_close_to_exact(fit_with(c(1, 4)), exact)
    split <- fit_with(c(3, 2))
    expect_gt(min(coda::effectiveSize(split)), 900)
    expect_lt(max(abs(coef(split) - exact$mean) / sqrt(diag(exact$cov))), 0.1)
    ratio <- diag(vcov(split)) / diag(exact$cov)
    expect_equal(ratio[[1]], 1, tolerance = 0.1)
    expect_true(all(ratio[-1] < 0.8))
})

test_that("the default blocks are the design's parameter groups, when it has them", {
    expect_identical(sgfs:::default_blocks(list(groups = c(1L, 1L, 2L, 2L, 2L, 3L), n_coef = 6),
                                           6L), c(2L, 3L, 1L))
    expect_identical(sgfs:::default_blocks(list(n_coef = 3), 4L), c(3L, 1L))
    expect_identical(sgfs:::default_blocks(list(n_coef = 3), 3L), 3L)
})
