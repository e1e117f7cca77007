## Pure-R replays of the engine's driver, shared by the reference-chain tests:
## the same random numbers (minibatch draws, then the sampler's normals).

## (offset: NULL, or the rows' offsets, p$offset, added to the linear
## predictor; weights: NULL, or the rows' prior weights, p$weights; cbind:
## a binomial response of 0 to 4 trials per row, p$y = cbind(s, f), whose
## replay reads the proportions p$yr and the weights p$w, trials times
## prior weights)
ref_problem <- function(family = binomial(), N = 50, seed = 8, offset = NULL, weights = NULL,
                        cbind = FALSE) {
    withr::with_seed(seed, {
        x <- matrix(rnorm(N * 2), N, 2)
        m <- if (cbind) sample(0:4, N, replace = TRUE) else 1
        y <- switch(family$family,
                    binomial = rbinom(N, m, plogis(x[, 1] - x[, 2])),
                    poisson = rpois(N, exp(0.3 + 0.5 * x[, 1] - 0.5 * x[, 2])),
                    1 + x[, 1] + rnorm(N))
    })
    yr <- NULL
    w <- weights
    if (cbind) {
        yr <- ifelse(m > 0, y / pmax(m, 1), 0)
        w <- if (is.null(weights)) m else weights * m
        y <- cbind(y, m - y)
    }
    list(x = x, y = y, X = cbind(1, x), family = family, offset = offset, weights = weights,
         yr = yr, w = w)
}

## per-example scores in R (n x D), for theta on the internal scale; each
## row's weighted by p$w (a gaussian row's weight a precision)
r_scores <- function(p, theta, idx) {
    X <- p$X[idx, , drop = FALSE]
    off <- if (is.null(p$offset)) 0 else p$offset[idx]
    w <- if (is.null(p$w)) 1 else p$w[idx]
    y <- if (is.null(p$yr)) p$y[idx] else p$yr[idx]
    if (p$family$family == "binomial" && p$family$link == "probit") {
        eta <- drop(X %*% theta) + off
        mills <- function(z) dnorm(z) / pnorm(z)
        return(w * (y * mills(eta) - (1 - y) * mills(-eta)) * X)
    }
    if (p$family$family == "binomial")
        return(w * (y - plogis(drop(X %*% theta) + off)) * X)
    if (p$family$family == "poisson")
        return(w * (y - exp(drop(X %*% theta) + off)) * X)
    beta <- theta[seq_len(ncol(X))]
    s2 <- exp(2 * theta[length(theta)])
    r <- y - drop(X %*% beta)
    cbind(w * r / s2 * X, w * r^2 / s2 - (w > 0))
}

## minus the Hessian of the examples' log-likelihood in R (D x D)
r_neg_hessian <- function(p, theta, idx) {
    X <- p$X[idx, , drop = FALSE]
    if (p$family$family == "binomial") {
        w <- plogis(drop(X %*% theta))
        return(crossprod(X * (w * (1 - w)), X))
    }
    s <- exp(-2 * theta[length(theta)])
    r <- p$y[idx] - drop(X %*% theta[seq_len(ncol(X))])
    rbind(cbind(s * crossprod(X), 2 * s * crossprod(X, r)),
          c(2 * s * crossprod(r, X), 2 * s * sum(r^2)))
}

## The driver in R: minibatch, gradient of the log posterior (prior normal(0, 1)
## on the coefficients, normal(0, 5) on log_sigma), step size, then the
## sampler's update.
prior_prec <- function(D, p) 1 / c(rep(1, ncol(p$X)), 5)[seq_len(D)]^2

## With a `centre`, the gradient has control variates (ALGORITHMS.md 1.3).
r_chain <- function(p, D, n, n_iter, eps_at, update, theta0 = double(D),
                    centre = NULL) {
    prec <- prior_prec(D, p)
    N <- nrow(p$X)
    theta <- theta0
    state <- list()
    out <- matrix(NA_real_, n_iter, D)
    if (!is.null(centre)) full <- colSums(r_scores(p, centre, seq_len(N)))
    for (t in seq_len(n_iter)) {
        idx <- r_minibatch(N, n)
        G <- r_scores(p, theta, idx)
        grad <- if (is.null(centre)) -prec * theta + N / n * colSums(G)
                else -prec * theta + full + N / n * colSums(G - r_scores(p, centre, idx))
        step <- update(theta, grad, G, eps_at(t), t, state, prec)
        theta <- step$theta
        state <- step$state
        out[t, ] <- theta
    }
    out
}

sgld_update <- function(theta, grad, G, eps, t, state, prec)
    list(theta = theta + eps / 2 * grad + sqrt(eps) * rnorm(length(theta)), state = state)

## (a few dozen iterations from a far start: the fit may warn that its draws
## are not yet where the posterior's mass is, which is not what is tested)
quiet <- function(expr) suppressWarnings(expr)

## the chain from zero (unless `init` is given); samplers with a metric
## run the papers' rule (metric = "identity") unless told otherwise
c_chain <- function(fun, p, n, n_iter, init = NULL, ...) {
    args <- list(...)
    name <- deparse(substitute(fun))
    method <- utils::getS3method(name, "default", optional = TRUE, envir = asNamespace("sgfs"))
    if (!is.null(method) && "metric" %in% names(formals(method)) && is.null(args$metric))
        args$metric <- "identity"
    if (!is.null(method) && "stratify" %in% names(formals(method)) && is.null(args$stratify))
        args$stratify <- FALSE
    if (!is.null(method) && "robust" %in% names(formals(method)) && is.null(args$robust))
        args$robust <- FALSE
    if (!is.null(p$offset)) args$offset <- p$offset
    if (!is.null(p$weights)) args$weights <- p$weights
    fit <- quiet(do.call(fun, c(list(p$x, p$y, family = p$family, prior = normal(0, 1),
                                      batch_size = n, n_iter = n_iter, burnin = 0L,
                                      standardize = FALSE, progress = FALSE, init = init),
                                 args)))
    sgfs:::all_draws(fit)
}
