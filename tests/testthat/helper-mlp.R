## Pure-R references for the networks' C code (src/model_mlp.c,
## src/draws.c): the forward pass and a draw's link on the original scale.

## the network's outputs (rows x outputs, internal scale) at internal theta
## for standardised inputs U (rows x P)
r_mlp_forward <- function(design, theta, U) {
    w <- design$widths
    L <- length(w) - 1L
    phi <- switch(design$network$activation, tanh = tanh, logistic = stats::plogis,
                  relu = function(a) pmax(a, 0))
    h <- U
    for (l in seq_len(L)) {
        par <- theta[which(design$layer == l)]
        W <- matrix(par[seq_len(w[l] * w[l + 1L])], w[l], w[l + 1L])
        a <- h %*% W + rep(par[-seq_len(w[l] * w[l + 1L])], each = nrow(h))
        h <- if (l < L) phi(a) else a
    }
    h
}

## a fit's link-scale output at one draw theta (original scale) for the
## rows of X (without the intercept column): rows x outputs
r_mlp_link <- function(info, X, theta) {
    d <- info$design
    U <- (X - rep(d$center, each = nrow(X))) / rep(d$scale, each = nrow(X))
    d$y_center + d$y_scale * r_mlp_forward(d, sgfs:::to_internal(theta, d), U)
}

## a small network data set: P standard normal predictors and a binomial,
## gaussian, categorical and poisson response of them
net_data <- function(N = 40, seed = 11, P = 3) {
    withr::with_seed(seed, {
        x <- matrix(rnorm(N * P), N, P, dimnames = list(NULL, letters[seq_len(P)]))
        list(x = x, yb = rbinom(N, 1, plogis(x[, 1] - x[, 2]^2)),
             yg = sin(x[, 1]) + x[, 3] + rnorm(N, sd = 0.3),
             yc = factor(sample(c("u", "v", "w"), N, replace = TRUE)),
             yp = rpois(N, exp(0.5 + 0.5 * tanh(x[, 1]) - 0.3 * x[, 2]^2)))
    })
}
