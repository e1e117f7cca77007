## The horseshoe's posterior of a small sparse logistic regression (2 of 10
## coefficients non-zero): SGLD-CV and SGLD at their defaults against a
## long HMC run (slow tier).  Two HMC runs of 1e5 iterations agree to 0.07
## sd in every coefficient's mean and 1 % in its sd; the scales' draws
## (hs_tau, hs_c) are compared on the log scale (c^2's Inv-Gamma(2, .) has
## no variance).

hs_data <- function(N, p, seed) {
    withr::with_seed(seed, {
        x <- matrix(rnorm(N * p), N, dimnames = list(NULL, paste0("v", seq_len(p))))
        y <- rbinom(N, 1, plogis(0.3 + 1.5 * x[, 1] - x[, 2]))
    })
    list(x = x, y = y)
}

test_that("a sparse logistic regression under hs(): SGLD-CV and SGLD agree with HMC", {
    d <- hs_data(N = 400, p = 10, seed = 8)
    prior <- hs(global_scale = 2 * 2 / (8 * sqrt(400)))
    ref <- withr::with_seed(1, hmc(d$x, d$y, prior = prior, n_iter = 100000, verbose = FALSE))
    R <- as.matrix(ref)
    R[, c("hs_tau", "hs_c")] <- log(R[, c("hs_tau", "hs_c")])
    m0 <- colMeans(R)
    s0 <- apply(R, 2, sd)
    keep <- c(1:11, 22:23)                     # coefficients, log tau, log c
    for (sampler in list(sgldcv, sgld)) {
        fit <- withr::with_seed(2, sampler(d$x, d$y, prior = prior, n_iter = 300000,
                                           thin = 10, verbose = FALSE))
        D <- as.matrix(fit)
        expect_identical(colnames(D), colnames(R))
        D[, c("hs_tau", "hs_c")] <- log(D[, c("hs_tau", "hs_c")])
        expect_lt(max(abs(colMeans(D)[keep] - m0[keep]) / s0[keep]), 0.2)
        expect_lt(max(abs(apply(D, 2, sd)[keep] / s0[keep] - 1)), 0.15)
    }
    ## the non-zero coefficients escape the shrinkage, the others do not
    expect_true(all(abs(m0[2:3]) > 0.8))
    expect_true(all(abs(m0[4:11]) < 0.15))
})
