## The exact updates of the mixed-model sampler's random-effect blocks
## (vignette("internals"), "Mixed models"), in plain R: the reference the
## engine's updates are to be replayed against, draw for draw, and here
## checked against quadrature of the conditionals they sample
## (test-mixed-reference.R).
##
## A group of one term: its n rows' responses y, prior weights w, linear
## predictors without the group's own effects eta0, covariates Z (n x q)
## and the term's covariance's inverse P = Sigma^-1.  The conditional of its
## effects b is
##   log p(b | .) = sum_i w_i l(y_i, eta0_i + z_i' b) - b' P b / 2 + const.

## a GLM row's log-likelihood and its first two derivatives in eta, for
## the engine's models (logistic, probit, poisson, gaussian at sd sigma)
glm_row_terms <- function(model, y, eta, sigma = 1) {
    switch(model,
        logistic = {
            p <- stats::plogis(eta)
            list(l = stats::dbinom(y, 1, p, log = TRUE), d1 = y - p, d2 = -p * (1 - p))
        },
        probit = {
            lp <- stats::pnorm(eta, log.p = TRUE)
            lq <- stats::pnorm(eta, lower.tail = FALSE, log.p = TRUE)
            a <- exp(stats::dnorm(eta, log = TRUE) - lp)       # phi / Phi
            b <- exp(stats::dnorm(eta, log = TRUE) - lq)       # phi / (1 - Phi)
            d1 <- ifelse(y > 0, a, -b)
            list(l = ifelse(y > 0, lp, lq), d1 = d1,
                 d2 = ifelse(y > 0, -a * (eta + a), b * (eta - b)))
        },
        poisson = {
            mu <- exp(eta)
            list(l = stats::dpois(y, mu, log = TRUE), d1 = y - mu, d2 = -mu)
        },
        gaussian = list(l = stats::dnorm(y, eta, sigma, log = TRUE), d1 = (y - eta) / sigma^2,
                        d2 = rep(-1 / sigma^2, length(y))),
        stop("internal error: no row terms for the model ", model))
}

## the group's log conditional at b, with its gradient and minus its Hessian
## (g$mean: the normal prior's mean, 0 when absent: a block of fixed
## effects is a "group" of every row, its prior N(mean, P^-1))
group_logdens <- function(b, g) {
    t <- glm_row_terms(g$model, g$y, g$eta0 + drop(g$Z %*% b), g$sigma)
    d <- if (is.null(g$mean)) b else b - g$mean
    list(value = sum(g$w * t$l) - 0.5 * sum(d * (g$P %*% d)),
         grad = drop(crossprod(g$Z, g$w * t$d1)) - drop(g$P %*% d),
         H = crossprod(g$Z, -g$w * t$d2 * g$Z) + g$P)
}

## the conditional's mode by Newton's method from b = 0 (step halving
## where the density would fall), and the Cholesky factor of its
## curvature there: the Laplace approximation N(mode, H^-1), a function of
## the group's data, eta0 and P only
group_laplace <- function(g, tol = 1e-12, max_steps = 100L) {
    b <- numeric(ncol(g$Z))
    f <- group_logdens(b, g)
    for (k in seq_len(max_steps)) {
        U <- chol(f$H)
        step <- backsolve(U, forwardsolve(t(U), f$grad))
        if (sum(step * f$grad) < tol) break           # the Newton decrement
        s <- 1
        repeat {
            f_new <- group_logdens(b + s * step, g)
            if (is.finite(f_new$value) && f_new$value >= f$value) break
            s <- s / 2
        }
        b <- b + s * step
        f <- f_new
    }
    list(mode = b, U = chol(f$H))
}

## One update of the group's effects b: for a gaussian model the exact
## draw from the normal conditional; otherwise an independence
## Metropolis-Hastings step whose proposal is a multivariate t with `df`
## degrees of freedom at the Laplace approximation's mode and scale: its
## polynomial tails are heavier than the conditional's (which the normal
## prior makes at least Gaussian), so that the ratio target / proposal is
## bounded and the chain is uniformly ergodic; with the normal itself a
## chain in the conditional's heavier tail (a poisson group's, on the side
## of small means) could stay there for ever.  R's stream: q normals, then
## (not gaussian) a chi-squared and a uniform.  Returns list(b, accepted).
update_group <- function(b, g, df = 4) {
    lap <- group_laplace(g)
    q <- length(b)
    z <- stats::rnorm(q)
    if (g$model == "gaussian") return(list(b = lap$mode + backsolve(lap$U, z), accepted = TRUE))
    prop <- lap$mode + backsolve(lap$U, z) / sqrt(stats::rchisq(1, df) / df)
    ## log q(x) of the proposal, up to a constant
    log_q <- function(x) -0.5 * (df + q) * log1p(sum((lap$U %*% (x - lap$mode))^2) / df)
    log_ratio <- group_logdens(prop, g)$value - group_logdens(b, g)$value +
        log_q(b) - log_q(prop)
    if (log(stats::runif(1)) < log_ratio) list(b = prop, accepted = TRUE)
    else list(b = b, accepted = FALSE)
}

## a group sd's prior, list(family, scale, df): "half_normal" (0, scale),
## "half_t" (df, 0, scale) or "exponential" (rate 1 / scale; rstanarm's
## decov() for a term of one coefficient, shape 1); its log density at s
## (up to a constant), for each value of s.  "decov" (list(family, shape,
## scale, concentration)) is rstanarm's prior on a term's q sds jointly:
## see decov_logdens().
sd_prior_logdens <- function(s, prior, dispersion = 1)
    switch(prior$family,
           half_normal = stats::dnorm(s / prior$scale, log = TRUE),
           half_t = stats::dt(s / prior$scale, prior$df, log = TRUE),
           exponential = -s / prior$scale,
           decov = decov_logdens(s, prior, dispersion),
           stop("internal error: no sd prior ", prior$family))

## rstanarm's decov(regularization, concentration, shape, scale) on a
## term's q sds s (its LKJ part is the covariance's zeta): s_k = d tau
## sqrt(q pi_k), tau ~ Gamma(shape, rate 1 / scale), pi ~ Dirichlet(
## concentration), d the noise sd for a gaussian model (rstanarm scales the
## group sds by it), else 1.  With c = q d^2, tau^2 = sum(s^2) / c and
## pi_k = s_k^2 / sum(s^2), the density of s is that of (tau, pi) times the
## Jacobians of tau -> T = tau^2 (1 / (2 tau)), of (T, pi) -> u = c T pi
## (1 / (c^q T^(q - 1))) and of u_k = s_k^2 (2 s_k each).
decov_logdens <- function(s, prior, dispersion = 1) {
    q <- length(s)
    c <- q * dispersion^2
    ss <- sum(s^2)
    tau <- sqrt(ss / c)
    pi_k <- s^2 / ss
    a <- prior$concentration
    log_dir <- if (q > 1) lgamma(q * a) - q * lgamma(a) + (a - 1) * sum(log(pi_k)) else 0
    stats::dgamma(tau, prior$shape, rate = 1 / prior$scale, log = TRUE) - log(2 * tau) +
        log_dir - q * log(c) - (q - 1) * log(tau^2) + sum(log(2 * s))
}

## One slice-sampling update (stepping out and shrinking, Neal 2003) of the
## scalar u for the log density f: an exponential and uniforms from R's
## stream.  Exact for any width w.
update_slice <- function(u, f, w = 1, max_steps = 100L) {
    level <- f(u) - stats::rexp(1)
    left <- u - w * stats::runif(1)
    right <- left + w
    k <- 0L
    while (f(left) > level && k < max_steps) { left <- left - w; k <- k + 1L }
    k <- 0L
    while (f(right) > level && k < max_steps) { right <- right + w; k <- k + 1L }
    repeat {
        v <- left + (right - left) * stats::runif(1)
        if (f(v) > level) return(v)
        if (v < u) left <- v else right <- v
    }
}

## A term's covariance of q coefficients, Sigma = S Omega S, from its
## unconstrained coordinates x: q log sds, then the q (q - 1) / 2 canonical
## partial correlations' atanh, row by row below the diagonal (the
## Lewandowski, Kurowicka and Joe 2009 construction of Omega's Cholesky
## factor L: L[i, j] = z_ij sqrt(1 - sum_{k < j} L[i, k]^2)); with the log
## Jacobian of x -> (sds, Omega): x -> z (tanh), z -> L, L -> Omega; and
## log det Omega.
cov_from_coords <- function(x, q) {
    s <- exp(x[seq_len(q)])
    z <- tanh(x[-seq_len(q)])
    L <- diag(q)
    log_jac <- sum(x[seq_len(q)]) + sum(log1p(-z^2))
    k <- 0L
    for (i in seq_len(q)[-1L]) {
        left <- 1
        for (j in seq_len(i - 1L)) {
            k <- k + 1L
            L[i, j] <- z[k] * sqrt(left)
            log_jac <- log_jac + 0.5 * log(left)
            left <- left - L[i, j]^2
        }
        L[i, i] <- sqrt(left)
    }
    ## (and of L -> Omega = L L': prod_i L[i, i]^(q - i))
    log_jac <- log_jac + sum((q - seq_len(q)) * log(diag(L)))
    Omega <- tcrossprod(L)
    list(Sigma = s * t(s * Omega), sds = s, Omega = Omega, log_jac = log_jac,
         log_det_omega = 2 * sum(log(diag(L))))
}

## The log density in those coordinates of a term's covariance given its
## G groups' effects' cross-product Q = sum_g b_g b_g' (q x q): the normal
## effects' likelihood, the sds' prior (sd_prior_logdens()), LKJ(zeta) on
## Omega, and the Jacobian
cov_log_conditional <- function(x, q, Q, G, prior, zeta = 1, dispersion = 1) {
    cv <- cov_from_coords(x, q)
    U <- chol(cv$Sigma)
    -G * sum(log(diag(U))) - 0.5 * sum(chol2inv(U) * Q) +
        sum(sd_prior_logdens(cv$sds, prior, dispersion)) + (zeta - 1) * cv$log_det_omega +
        cv$log_jac
}

## One update of a term's covariance: a slice-sampling update of each
## coordinate in turn (q = 1: the log sd alone, whose conditional is
## -G u - Q exp(-2u) / 2 + log p(sigma) + u in u = log sigma)
update_cov <- function(x, q, Q, G, prior, zeta = 1, dispersion = 1) {
    for (k in seq_along(x))
        x[k] <- update_slice(x[k], function(v) {
            x[k] <- v
            cov_log_conditional(x, q, Q, G, prior, zeta, dispersion)
        })
    x
}

## The translation of coefficient c of a term's effects b (G x q, precision
## P) against the same fixed coefficient beta_j ~ N(mean, sd^2): adding
## delta to beta_j and taking it from every group's coefficient leaves the
## linear predictors unchanged, so delta's conditional is the priors'
## alone, normal; one normal from R's stream.
translation_delta <- function(b, P, c, beta_j, mean, sd) {
    prec <- 1 / sd^2 + nrow(b) * P[c, c]
    lin <- -(beta_j - mean) / sd^2 + sum((b %*% P)[, c])
    lin / prec + stats::rnorm(1) / sqrt(prec)
}

## The whole blocked Gibbs sampler for a small mixed model, every block
## exact (the fixed effects as one "group" of every row: the full-data
## version of the engine's stochastic-gradient block): y, w the responses
## and weights, X the fixed effects' design, terms from random_design(),
## model one of glm_row_terms()'s; priors list(beta_mean, beta_sd (one a
## column), sd (the group sds' prior, sd_prior_logdens(); "decov" scales a
## gaussian model's by its noise sd, as rstanarm does), zeta (LKJ),
## sigma_rate (gaussian: an exponential prior on the noise sd)).  Returns
## the draws (n_iter x (beta, each term's sds and correlations, sigma)).
## interweave: each iteration also moves each term's sds in the
## non-centred coordinates (effects over sds fixed), a full pass over the
## rows.
mixed_reference_chain <- function(y, w, X, terms, model, priors, n_iter, seed,
                                  interweave = TRUE) {
    N <- length(y)
    beta <- numeric(ncol(X))
    b <- lapply(terms, function(t) matrix(0, length(t$levels), ncol(t$Z)))
    xc <- lapply(terms, function(t) numeric(ncol(t$Z) * (ncol(t$Z) + 1L) / 2L))
    rows <- lapply(terms, function(t) split(seq_len(N), factor(t$group, seq_along(t$levels))))
    log_sigma <- if (model == "gaussian") log(stats::sd(y)) else 0
    ## rstanarm's decov() scales a gaussian model's group sds by its noise sd
    dispersion <- function(sigma) if (model == "gaussian" && priors$sd$family == "decov") sigma else 1
    effect <- function(k) rowSums(terms[[k]]$Z * b[[k]][terms[[k]]$group, , drop = FALSE])
    width <- ncol(X) + sum(vapply(terms, function(t) ncol(t$Z) * (ncol(t$Z) + 1) / 2, 0)) +
        (model == "gaussian")
    out <- matrix(NA_real_, n_iter, width)
    withr::with_seed(seed, for (it in seq_len(n_iter)) {
        sigma <- exp(log_sigma)
        r <- Reduce(`+`, lapply(seq_along(terms), effect), numeric(N))
        fixed <- list(model = model, y = y, w = w, eta0 = r, Z = X, sigma = sigma,
                      P = diag(1 / priors$beta_sd^2, ncol(X)), mean = priors$beta_mean)
        beta <- update_group(beta, fixed)$b
        xb <- drop(X %*% beta)
        keep <- beta
        for (k in seq_along(terms)) {
            t <- terms[[k]]
            q <- ncol(t$Z)
            Sigma <- cov_from_coords(xc[[k]], q)$Sigma
            own <- effect(k)
            base <- xb + r - own
            for (g in seq_along(t$levels)) {
                i <- rows[[k]][[g]]
                grp <- list(model = model, y = y[i], w = w[i], eta0 = base[i],
                            Z = t$Z[i, , drop = FALSE], P = solve(Sigma), sigma = sigma)
                b[[k]][g, ] <- update_group(b[[k]][g, ], grp)$b
            }
            r <- base - xb + effect(k)
            ## the exact move along each line that adds delta to a fixed
            ## coefficient and takes it from the same coefficient of every
            ## group (the linear predictors do not change: only the priors)
            P <- solve(Sigma)
            for (c in which(t$coef %in% colnames(X))) {
                j <- match(t$coef[c], colnames(X))
                delta <- translation_delta(b[[k]], P, c, beta[j], priors$beta_mean[j],
                                           priors$beta_sd[j])
                beta[j] <- beta[j] + delta
                b[[k]][, c] <- b[[k]][, c] - delta
                r <- r - delta * t$Z[, c]
            }
            xb <- drop(X %*% beta)
            keep[seq_along(beta)] <- beta
            if (interweave) {
                ## the non-centred move: every effect of the term and its sds
                ## scaled by one factor exp(v) (u = b / sd fixed); the
                ## effects' normal density and the scaling's Jacobian cancel,
                ## leaving the likelihood of the term's rows and the sds' prior
                own <- effect(k)
                base <- xb + r - own
                f <- function(v)
                    sum(w * glm_row_terms(model, y, base + exp(v) * own, sigma)$l) +
                        cov_log_conditional(xc[[k]] + c(rep(v, q), numeric(length(xc[[k]]) - q)),
                                            q, matrix(0, q, q), 0, priors$sd, priors$zeta,
                                            dispersion(sigma))
                v <- update_slice(0, f)
                b[[k]] <- exp(v) * b[[k]]
                xc[[k]][seq_len(q)] <- xc[[k]][seq_len(q)] + v
                r <- base - xb + exp(v) * own
            }
            xc[[k]] <- update_cov(xc[[k]], q, crossprod(b[[k]]), length(t$levels),
                                  priors$sd, priors$zeta, dispersion(sigma))
            cv <- cov_from_coords(xc[[k]], q)
            keep <- c(keep, cv$sds, cv$Omega[lower.tri(cv$Omega)])
        }
        if (model == "gaussian") {
            eta <- xb + r
            ## (with decov() the group sds' prior depends on sigma too)
            sds <- lapply(seq_along(terms), function(k) cov_from_coords(xc[[k]], ncol(terms[[k]]$Z))$sds)
            log_sigma <- update_slice(log_sigma, function(u)
                sum(w * stats::dnorm(y, eta, exp(u), log = TRUE)) -
                    priors$sigma_rate * exp(u) + u +
                    if (priors$sd$family == "decov")
                        sum(vapply(sds, sd_prior_logdens, 0, priors$sd, exp(u))) else 0)
            keep <- c(keep, exp(log_sigma))
        }
        out[it, ] <- keep
    })
    out
}

## a group of n rows of one term: logistic, probit, poisson or gaussian
one_group <- function(model, n, q = 1L, seed = 1) {
    withr::with_seed(seed, {
        Z <- if (q == 1L) matrix(1, n) else cbind(1, round(stats::rnorm(n), 2))
        eta0 <- stats::rnorm(n, sd = 0.5)
        truth <- eta0 + drop(Z %*% rep(0.8, q))
        y <- switch(model, logistic = , probit = stats::rbinom(n, 1, stats::plogis(truth)),
                    poisson = stats::rpois(n, exp(truth)), gaussian = stats::rnorm(n, truth, 0.7))
        w <- stats::runif(n, 0.5, 2)
    })
    Sigma <- if (q == 1L) matrix(0.6^2) else matrix(c(0.6^2, 0.1, 0.1, 0.4^2), 2)
    list(model = model, y = y, w = w, eta0 = eta0, Z = Z, P = solve(Sigma), sigma = 0.7)
}
