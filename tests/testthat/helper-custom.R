## Custom models for the tests of custom_model() and bench/bench_custom.R:
## logistic regression written in R, the one-dimensional toy posteriors of
## the OSGFS report (El Hanchi 2018, section 1: 10,000 simulated points) and
## sgmcmc's bivariate Gaussian mixture, with exact posteriors by numerical
## integration on a grid.

## logistic regression on data list(X = design matrix, y = 0/1)
logistic_custom_model <- function(X) {
    custom_model(
        score = function(theta, data)
            (data$y - stats::plogis(drop(data$X %*% theta))) * data$X,
        loglik = function(theta, data) {
            eta <- drop(data$X %*% theta)
            data$y * eta - ifelse(eta > 0, eta + log1p(exp(-eta)), log1p(exp(eta)))
        },
        init = double(ncol(X)), names = colnames(X))
}

## A one-dimensional toy: data, model, prior and the range holding the
## posterior's mass (for the grid).  The report gives no more than the
## models' kinds and N; the settings are ours:
##   gaussian: x_i ~ N(mu, 1), mu = 1 (posterior Gaussian);
##   mixture:  x_i ~ N(theta, 1) / 2 + N(-theta, 1) / 2, theta = 0.15, whose
##             posterior has two modes +-0.18, the density between them down
##             to 7 % of the peaks (simulated with seed 3);
##   gamma:    x_i ~ Poisson(lambda), lambda = 2 sampled as it is, a
##             Gamma(sum x + 1, N) posterior (times the flat normal prior).
## Every prior is normal(0, 10).
toy_problem <- function(kind = c("gaussian", "mixture", "gamma"), N = 10000L,
                        seed = if (kind == "mixture") 3L else 1L) {
    kind <- match.arg(kind)
    x <- withr::with_seed(seed, switch(kind,
        gaussian = stats::rnorm(N, 1, 1),
        mixture = stats::rnorm(N, sample(c(-0.15, 0.15), N, replace = TRUE), 1),
        gamma = stats::rpois(N, 2)))
    model <- switch(kind,
        gaussian = custom_model(
            score = function(theta, data) data - theta,
            loglik = function(theta, data) stats::dnorm(data, theta, log = TRUE),
            init = c(mu = 0)),
        mixture = custom_model(
            score = function(theta, data) {
                ## responsibility of the +theta component
                r <- stats::plogis(2 * theta * data)
                r * (data - theta) - (1 - r) * (data + theta)
            },
            ## log(phi(x - t) / 2 + phi(x + t) / 2) = log phi(x) - t^2 / 2 + log cosh(t x)
            loglik = function(theta, data) {
                z <- abs(theta * data)
                stats::dnorm(data, log = TRUE) - theta^2 / 2 + z + log1p(exp(-2 * z)) - log(2)
            },
            init = c(theta = 0.5)),
        gamma = custom_model(   # zero likelihood for lambda <= 0
            score = function(theta, data)
                if (theta > 0) data / theta - 1 else rep(NaN, length(data)),
            loglik = function(theta, data)
                if (theta > 0) stats::dpois(data, theta, log = TRUE) else rep(-Inf, length(data)),
            init = c(lambda = mean(x) + 0.01)))
    centre <- switch(kind, gaussian = mean(x), mixture = 0, gamma = mean(x))
    half <- switch(kind, gaussian = 12 / sqrt(N), mixture = 0.5,
                   gamma = 12 * sqrt(max(mean(x), 1 / N) / N))
    list(kind = kind, x = x, model = model, prior = normal(0, 10),
         range = c(centre - half, centre + half))
}

## The exact posterior of a one-dimensional toy on a grid of m points:
## density, mean, sd and cdf.  (Each grid point is one full-data call of the
## model's loglik.)
toy_exact <- function(toy, m = 4001L) {
    grid <- seq(toy$range[1L], toy$range[2L], length.out = m)
    prior <- toy$prior
    lp <- vapply(grid, function(t) sum(toy$model$loglik(t, toy$x)), 0) +
        stats::dnorm(grid, prior$location, prior$scale, log = TRUE)
    w <- exp(lp - max(lp))
    w <- w / sum(w)
    mean <- sum(w * grid)
    list(grid = grid, weight = w, mean = mean, sd = sqrt(sum(w * (grid - mean)^2)),
         cdf = cumsum(w), abs_mean = sum(w * abs(grid)),
         abs_sd = sqrt(sum(w * grid^2) - sum(w * abs(grid))^2))
}

## Wasserstein-1 distance between draws and the exact posterior on its grid
toy_wasserstein <- function(draws, exact) {
    F_draws <- stats::ecdf(draws)(exact$grid)
    sum(abs(F_draws - exact$cdf)) * diff(exact$grid[1:2])
}

## sgmcmc's Gaussian-mixture example (its vignette gaussMixture): N = 10^4
## points from N(theta1, I) / 2 + N(theta2, I) / 2, theta1 = (0, 0),
## theta2 = (0.1, 0.1); the parameters are the two means (4 numbers), prior
## N(0, 10^2 I) (the vignette's scale_diag 10).  The posterior is symmetric
## under swapping theta1 and theta2.
sgmcmc_mixture <- function(N = 10000L, seed = 13L) {
    x <- withr::with_seed(seed, {
        z <- sample(2L, N, replace = TRUE)
        means <- rbind(c(0, 0), c(0.1, 0.1))[z, ]
        means + matrix(stats::rnorm(2 * N), N, 2L)
    })
    ## per-example log densities of the two components (n x 2)
    comp <- function(theta, X) {
        d1 <- -rowSums((X - rep(theta[1:2], each = nrow(X)))^2) / 2
        d2 <- -rowSums((X - rep(theta[3:4], each = nrow(X)))^2) / 2
        cbind(d1, d2)
    }
    model <- custom_model(
        score = function(theta, data) {
            d <- comp(theta, data)
            r <- stats::plogis(d[, 1L] - d[, 2L])      # responsibility of component 1
            cbind(r * (data - rep(theta[1:2], each = nrow(data))),
                  (1 - r) * (data - rep(theta[3:4], each = nrow(data))))
        },
        loglik = function(theta, data) {
            d <- comp(theta, data)
            top <- pmax(d[, 1L], d[, 2L])
            top + log(0.5 * exp(d[, 1L] - top) + 0.5 * exp(d[, 2L] - top)) - log(2 * pi)
        },
        init = c(0, 0, 0.1, 0.1),
        names = c("theta1[1]", "theta1[2]", "theta2[1]", "theta2[2]"))
    list(x = x, model = model, prior = normal(0, 10))
}

## label-invariant summaries of sgmcmc_mixture draws: both means pooled
## (the vignette's plot), coordinate by coordinate
pooled_means <- function(draws) {
    rbind(draws[, 1:2, drop = FALSE], draws[, 3:4, drop = FALSE])
}
