## bench/sim_sparse.R - the simulated sparse logistic regression of
## bench_horseshoe.R and bench_rstanarm.R's hs-logit row (sourced by both,
## from the package root): N rows, p independent N(0, 1) predictors
## x001..xp, 5 non-zero coefficients (2, -1.5, 1, -1, 0.75), intercept
## -0.5; tau0 = p0 / (p - p0) * 2 / sqrt(N), p0 = 5, the horseshoe's global
## scale (Piironen and Vehtari 2017, 2 the noise scale of a logistic model).
sim_sparse <- function(seed = 2026, N = 2000, p = 200) {
    set.seed(seed)
    x <- matrix(rnorm(N * p), N)
    colnames(x) <- sprintf("x%03d", seq_len(p))
    beta <- c(2, -1.5, 1, -1, 0.75, rep(0, p - 5))
    y <- rbinom(N, 1, plogis(-0.5 + drop(x %*% beta)))
    list(x = x, y = y, tau0 = 5 / (p - 5) * 2 / sqrt(N))
}
