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
