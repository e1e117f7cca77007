## Ordinal regression (cumulative(), logit and probit): the C model's
## log-likelihood against R's distribution functions, its scores against
## finite differences, its curvature against J' H J from finite
## differences, its control variates; the cutpoints' stick-breaking map and
## Dirichlet prior; its mode against MASS::polr(); a chain against a long
## full-data hmc() run on MASS::housing; the draw-level methods on the
## original scale; bad input.

ord_frame <- function(N = 90, K = 4) {
    withr::with_seed(21, {
        d <- data.frame(a = rnorm(N), b = runif(N),
                        g = factor(sample(c("lo", "mid", "hi"), N, replace = TRUE)))
        eta <- 0.8 * d$a - 1.2 * d$b + 0.5 * (d$g == "hi")
        cuts <- c(-1, 0, 0.8, 1.5)[seq_len(K - 1L)]
        u <- stats::rlogis(N)
        d$y <- factor(findInterval(eta + u, cuts) + 1L, levels = seq_len(K),
                      labels = c("none", "some", "much", "all")[seq_len(K)], ordered = TRUE)
        d
    })
}

## R's log-likelihood of classes y (1..K) at eta and original-scale cutpoints z
ord_loglik <- function(y, eta, z, link = "logit") {
    F <- if (link == "logit") stats::plogis else stats::pnorm
    up <- c(z, Inf)[y]
    lo <- c(-Inf, z)[y]
    log(F(up - eta) - F(lo - eta))
}

test_that("the cutpoints' stick-breaking map inverts, and the start is the classes' frequencies", {
    for (link in c("logit", "probit")) {
        V <- matrix(withr::with_seed(1, rnorm(12, sd = 2)), 3)
        Z <- sgfs:::cutpoints_of_v(V, link)
        expect_true(all(t(apply(Z, 1, diff)) > 0))
        expect_equal(sgfs:::v_of_cutpoints(Z, link), V, tolerance = 1e-10)
        ## the class probabilities at eta = 0 are the stick's pieces
        F <- if (link == "logit") stats::plogis else stats::pnorm
        p <- diff(c(0, F(Z[1, ]), 1))
        phi <- stats::plogis(V[1, ])
        expect_equal(p, c(phi, 1) * c(1, cumprod(1 - phi)), tolerance = 1e-12)
    }
    p <- c(0.1, 0.2, 0.3, 0.4)
    expect_equal(sgfs:::cutpoints_of_v(matrix(sgfs:::v_of_probabilities(p), 1), "logit"),
                 matrix(stats::qlogis(cumsum(p)[1:3]), 1), tolerance = 1e-12)
    expect_error(sgfs:::v_of_cutpoints(matrix(c(0, 1, 0.5), 1), "logit"), "not increasing")
})

test_that("cumulative log-likelihood matches R, scores match finite differences, curvature is J' H J", {
    d <- ord_frame()
    x <- model.matrix(~ a + b + g, d)[, -1]
    w <- withr::with_seed(22, runif(nrow(d), 0.5, 2))
    P <- ncol(x)
    y <- as.integer(d$y)
    for (link in c("logit", "probit")) for (wt in list(NULL, w)) {
        run <- engine_spec(x, d$y, family = cumulative(link), intercept = FALSE,
                           batch_size = 9L, weights = wt)
        spec <- run$spec
        expect_identical(spec$model, "cumulative")
        expect_identical(run$design$par_names, c(colnames(x), "none|some", "some|much", "much|all"))
        theta <- c(0.6, -0.9, 0.2, 0.4, -0.3, 0.4, 0.1)
        ww <- if (is.null(wt)) rep(1, nrow(d)) else wt
        z <- drop(sgfs:::cutpoints_of_v(matrix(theta[P + 1:3], 1), link))
        ll <- function(beta, z) sum(ww * ord_loglik(y, drop(x %*% beta), z, link))
        expect_equal(model_eval(spec, theta, seq_len(nrow(d)))$loglik, ll(theta[1:P], z),
                     tolerance = 1e-12)
        expect_equal(.Call(sgfs:::C_sgfs_model_loglik, spec, theta)$loglik, ll(theta[1:P], z),
                     tolerance = 1e-12)
        expect_scores_match_fd(spec, theta, c(1L, 7L, 30L, 44L, 45L, 89L))
        ## minus the Hessian in (beta, zeta), by finite differences of R's
        ## log-likelihood, carried to (beta, v) by the map's Jacobian
        f <- function(q) ll(q[1:P], q[P + 1:3])
        q0 <- c(theta[1:P], z)
        h <- 1e-4
        Hq <- matrix(0, length(q0), length(q0))
        for (i in seq_along(q0)) for (j in seq_along(q0)) {
            ei <- replace(double(length(q0)), i, h)
            ej <- replace(double(length(q0)), j, h)
            Hq[i, j] <- -(f(q0 + ei + ej) - f(q0 + ei - ej) - f(q0 - ei + ej) + f(q0 - ei - ej)) /
                (4 * h^2)
        }
        J <- diag(length(theta))
        J[P + 1:3, P + 1:3] <- vapply(1:3, function(m) {
            e <- replace(double(3), m, 1e-6)
            (sgfs:::cutpoints_of_v(matrix(theta[P + 1:3] + e, 1), link) -
             sgfs:::cutpoints_of_v(matrix(theta[P + 1:3] - e, 1), link)) / 2e-6
        }, double(3))
        cur <- .Call(sgfs:::C_sgfs_model_curvature, spec, theta, TRUE)$neg_hessian
        expect_equal(cur, t(J) %*% Hq %*% J, tolerance = 1e-5, ignore_attr = TRUE)
        expect_gt(min(eigen(cur, only.values = TRUE)$values), 0)
    }
})

test_that("cumulative control variates: first- and second-order score changes", {
    d <- ord_frame()
    x <- model.matrix(~ a + b + g, d)[, -1]
    for (link in c("logit", "probit")) {
        run <- engine_spec(x, d$y, family = cumulative(link), intercept = FALSE, batch_size = 6L)
        idx <- c(2L, 9L, 11L, 30L, 44L, 78L)
        theta <- c(0.6, -0.9, 0.2, 0.4, -0.3, 0.4, 0.1)
        centre <- theta + withr::with_seed(23, rnorm(length(theta), sd = 0.3))
        spec <- run$spec
        expect_score_changes(spec, theta, centre, idx)
    }
})

test_that("the cutpoints' Dirichlet prior is its logit-Beta laws, Jacobian included", {
    d <- ord_frame()
    x <- model.matrix(~ a + b, d)[, -1]
    alpha <- c(1.5, 2, 0.7, 3)
    run <- sgfs:::prepare_run(x, d$y, cumulative(), normal(0, 1), NULL, 10L, 10L, 0L, 1L, 1L, 1L,
                              NULL, FALSE, FALSE, NULL, FALSE, NULL,
                              prior_aux = dirichlet(alpha))
    v <- c(0.3, -0.4, 1.1)
    theta <- c(0.2, -0.1, v)
    pe <- .Call(sgfs:::C_sgfs_prior_eval, run$spec, theta)
    ## the stick's fractions are Beta(alpha_k, sum of the later alphas)
    b <- rev(cumsum(rev(alpha)))[-1]
    phi <- stats::plogis(v)
    lp_v <- sum(dbeta(phi, alpha[1:3], b, log = TRUE) + log(phi * (1 - phi)))
    expect_equal(pe$value, sum(dnorm(theta[1:2], 0, 1, log = TRUE)) + lp_v, tolerance = 1e-12)
    ## ... which is the Dirichlet density of the class probabilities, with
    ## the stick-breaking map's Jacobian
    p <- c(phi, 1) * c(1, cumprod(1 - phi))
    jac <- sum(log(phi * (1 - phi))) + sum(log(cumprod(1 - phi)[1:2]))
    ldir <- lgamma(sum(alpha)) - sum(lgamma(alpha)) + sum((alpha - 1) * log(p))
    expect_equal(lp_v, ldir + jac, tolerance = 1e-12)
    h <- 1e-6
    fd <- vapply(seq_along(theta), function(j) {
        e <- replace(double(length(theta)), j, h)
        (.Call(sgfs:::C_sgfs_prior_eval, run$spec, theta + e)$value -
         .Call(sgfs:::C_sgfs_prior_eval, run$spec, theta - e)$value) / (2 * h)
    }, 0)
    expect_equal(pe$grad, fd, tolerance = 1e-7)
    expect_equal(pe$curvature[3:5], (alpha[1:3] + b) * phi * (1 - phi), tolerance = 1e-12)
})

test_that("the cumulative mode is MASS::polr()'s estimate (MASS::housing), logit and probit", {
    skip_if_not_installed("MASS")
    h <- MASS::housing
    for (link in c("logit", "probit")) {
        ref <- MASS::polr(Sat ~ Infl + Type + Cont, data = h, weights = Freq,
                          method = if (link == "logit") "logistic" else "probit")
        ## a flat prior: wide normals on the slopes, a Dirichlet of tiny
        ## concentration (flat in the cutpoints' coordinates) on the cutpoints
        x <- model.matrix(~ Infl + Type + Cont, h)[, -1]
        run <- sgfs:::prepare_run(x, h$Sat, cumulative(link), normal(0, 1e4), NULL, 20L, 10L,
                                  0L, 1L, 1L, 1L, NULL, TRUE, FALSE, NULL, FALSE, NULL,
                                  weights = h$Freq, prior_aux = dirichlet(1e-9))
        mode <- sgfs:::to_original(sgfs:::posterior_laplace(run)$mode, run$design)
        expect_equal(unname(mode), unname(c(coef(ref), ref$zeta)), tolerance = 1e-5,
                     info = link)
    }
})

test_that("sgldcv() at its defaults matches a long full-data hmc() run (MASS::housing)", {
    skip_if_not_installed("MASS")
    h <- MASS::housing
    f <- Sat ~ Infl + Type + Cont
    ref <- withr::with_seed(31, hmc(f, data = h, weights = Freq, family = cumulative(),
                                     n_iter = 6000, chains = 2, progress = FALSE))
    R <- as.matrix(ref)
    fit <- withr::with_seed(32, sgldcv(f, data = h, weights = Freq, family = cumulative(),
                                       progress = FALSE, verbose = FALSE))
    B <- as.matrix(fit)
    expect_identical(colnames(B), colnames(R))
    expect_identical(colnames(B)[7:8], c("Low|Medium", "Medium|High"))
    ## the two runs' means differ by their Monte Carlo errors, sd / sqrt(ESS)
    ## each with ESS of at least 400: within 0.3 posterior sd
    s <- apply(R, 2, sd)
    expect_lt(max(abs(colMeans(B) - colMeans(R)) / s), 0.3)
    expect_equal(unname(apply(B, 2, sd) / s), rep(1, ncol(R)), tolerance = 0.2)
    ## and sgfs() at its defaults
    g <- withr::with_seed(33, sgfs(f, data = h, weights = Freq, family = cumulative(),
                                   progress = FALSE, verbose = FALSE))
    G <- as.matrix(g)
    expect_lt(max(abs(colMeans(G) - colMeans(R)) / s), 0.3)
    expect_equal(unname(apply(G, 2, sd) / s), rep(1, ncol(R)), tolerance = 0.2)
})

test_that("cumulative fits' draw-level methods are the model's, on the original scale", {
    d <- ord_frame(N = 120)
    for (link in c("logit", "probit")) {
        fit <- withr::with_seed(41, sgldcv(y ~ a + b + g, data = d, family = cumulative(link),
                                           n_iter = 3000, progress = FALSE))
        B <- as.matrix(fit)
        X <- model.matrix(~ a + b + g, d)[, -1]
        eta <- B[, 1:4] %*% t(X)
        Z <- B[, 5:7]
        F <- if (link == "logit") stats::plogis else stats::pnorm
        cum <- lapply(1:3, function(k) F(Z[, k] - eta))
        probs <- array(c(cum[[1]], cum[[2]] - cum[[1]], cum[[3]] - cum[[2]], 1 - cum[[3]]),
                       c(dim(eta), 4))
        ep <- rstantools::posterior_epred(fit, draws = Inf)
        expect_equal(dim(ep), c(nrow(B), nrow(d), 4L))
        expect_equal(unname(ep), probs, tolerance = 1e-10)
        expect_identical(dimnames(ep)[[3]], levels(d$y))
        lp <- rstantools::posterior_linpred(fit, draws = Inf)
        expect_equal(unname(lp), unname(eta), tolerance = 1e-10)
        ll <- rstantools::log_lik(fit, draws = Inf)
        expect_equal(unname(ll), log(probs[cbind(rep(seq_len(nrow(B)), nrow(d)),
                                                 rep(seq_len(nrow(d)), each = nrow(B)),
                                                 rep(as.integer(d$y), each = nrow(B)))]) |>
                         matrix(nrow(B)), tolerance = 1e-10)
        p <- predict(fit, d[1:5, ])
        expect_equal(unname(p), apply(probs[, 1:5, ], c(2, 3), mean), tolerance = 1e-10)
        cls <- predict(fit, d[1:5, ], type = "class")
        expect_identical(levels(cls), levels(d$y))
        expect_identical(as.integer(cls), max.col(p, ties.method = "first"))
        yrep <- rstantools::posterior_predict(fit, draws = 200, seed = 1)
        expect_equal(dim(yrep), c(200L, nrow(d)))
        expect_true(all(yrep %in% 1:4))
        expect_identical(attr(yrep, "levels"), levels(d$y))
        ## the predictive's class frequencies are the mean probabilities
        expect_equal(mean(yrep == 4), mean(ep[, , 4]), tolerance = 0.1)
        expect_error(predict(fit, type = "link"), "\"response\" or \"class\" for a cumulative")
        expect_error(rstantools::predictive_interval(fit), "cumulative\\(\\) fit's predictive")
        expect_error(residuals(fit, type = "pearson"), "cumulative\\(\\) fit's residuals")
    }
    ## a start given on the original scale is taken there
    init <- c(0.5, -1, 0, 0.3, -0.8, 0.1, 1.2)
    fit <- sgld(y ~ a + b + g, data = d, family = cumulative(), init = init, n_iter = 1,
                burnin = 0, stepsize = 1e-18, seed = 1, progress = FALSE)
    expect_equal(unname(drop(as.matrix(fit))), init, tolerance = 1e-6)
    expect_error(sgld(y ~ a + b + g, data = d, family = cumulative(),
                      init = c(0.5, -1, 0, 0.3, 0.8, 0.1, 1.2), n_iter = 10),
                 "'init' has cutpoints that are not increasing")
})

test_that("a weighted table fits as its rows repeated", {
    d <- ord_frame(N = 40, K = 3)
    x <- model.matrix(~ a + b, d)[, -1]
    k <- rep(1:4, 10)
    rep_rows <- rep(seq_len(nrow(d)), k)
    theta <- c(0.7, -0.4, 0.3, -0.2)
    weighted <- engine_spec(x, d$y, family = cumulative(), intercept = FALSE, weights = k)
    repeated <- engine_spec(x[rep_rows, ], d$y[rep_rows], family = cumulative(), intercept = FALSE)
    a <- model_eval(weighted$spec, theta, seq_len(nrow(d)))
    b <- model_eval(repeated$spec, theta, seq_along(rep_rows))
    expect_equal(a$loglik, b$loglik, tolerance = 1e-12)
    expect_equal(a$grad, b$grad, tolerance = 1e-12)
})

test_that("what cumulative() refuses, and an ordered factor given to categorical()", {
    d <- ord_frame()
    expect_error(cumulative("cloglog"), "'link' must be \"logit\" or \"probit\"")
    expect_error(sgld(as.integer(y) ~ a, data = d, family = cumulative(), n_iter = 10),
                 "'y' must be a factor whose levels are in their order")
    expect_error(sgld(cbind(1, d$a), d$y, family = cumulative(), n_iter = 10),
                 "'x' has an intercept .* cumulative\\(\\)'s cutpoints")
    expect_error(sgld(y ~ a, data = d, family = cumulative(), prior_intercept = normal(0, 5),
                      n_iter = 10), "'prior_intercept' .* prior_aux = dirichlet\\(\\)")
    expect_error(sgld(y ~ a, data = d, family = cumulative(), prior_aux = exponential(1),
                      n_iter = 10), "'prior_aux' must be dirichlet")
    expect_error(sgld(y ~ a, data = d, family = cumulative(), prior_aux = dirichlet(c(1, 2)),
                      n_iter = 10), "'prior_aux' is dirichlet\\(\\) whose concentration must be one or 4")
    expect_error(dirichlet(0), "'concentration' must be positive")
    expect_error(sgld(y ~ a, data = d, family = cumulative(), offset = d$b, n_iter = 10),
                 "'offset' is for GLMs")
    expect_error(sgld(y ~ a + (1 | g), data = d, family = cumulative(), n_iter = 10),
                 "'family' must be .* with random-effect terms")
    expect_error(sgld(y ~ a, data = d, family = cumulative(), model = mlp(3), n_iter = 10),
                 "'family' cumulative\\(link = \"logit\"\\) is available for GLMs")
    expect_warning(sgld(y ~ a, data = d, family = categorical(), n_iter = 20, progress = FALSE),
                   "family = cumulative\\(\\) is the ordinal model")
})

test_that("stan_polr()'s prior_counts is cumulative()'s prior_aux", {
    d <- ord_frame(N = 60)
    a <- sgld(y ~ a + b, data = d, family = cumulative(), prior_counts = dirichlet(3),
              n_iter = 50, seed = 1, progress = FALSE)
    b <- sgld(y ~ a + b, data = d, family = cumulative(), prior_aux = dirichlet(3),
              n_iter = 50, seed = 1, progress = FALSE)
    expect_identical(as.matrix(a), as.matrix(b))
    expect_identical(attr(a, "sgfit")$spec$prior_df[3:5], c(3, 3, 3))
    expect_error(sgld(y ~ a, data = d, family = cumulative(), prior_counts = NULL, n_iter = 10),
                 "'prior_counts' = NULL is rstanarm's flat prior on the cutpoints")
    expect_error(sgld(y ~ a, data = d, family = cumulative(), prior_counts = dirichlet(2),
                      prior_aux = dirichlet(2), n_iter = 10),
                 "'prior_counts' is stan_polr\\(\\)'s name")
})

test_that("an ordered response under the default binomial() names cumulative()", {
    skip_if_not_installed("MASS")
    h <- MASS::housing
    expect_error(sgld(Sat ~ Infl, data = h, weights = Freq, n_iter = 10),
                 "'y' is an ordered factor with 3 levels; binomial\\(\\) needs two \\(for ordered classes use family = cumulative\\(\\)\\)")
    h$f <- factor(h$Sat, ordered = FALSE)
    expect_error(sgld(f ~ Infl, data = h, n_iter = 10),
                 "use family = categorical\\(\\), or cumulative\\(\\) if they are ordered")
})

test_that("the compressed rows' one-pass score gives the dense copy's chain", {
    skip_if_not_installed("Matrix")
    X <- withr::with_seed(51, Matrix::rsparsematrix(400, 30, density = 0.05,
                                                   rand.x = function(n) rep(1, n)))
    eta <- as.vector(X %*% withr::with_seed(52, rnorm(30, sd = 0.7)))
    y <- factor(findInterval(eta + withr::with_seed(53, stats::rlogis(400)), c(-1, 0.3, 1.2)) + 1L,
                ordered = TRUE)
    for (f in list(sgld, sgldcv)) {
        a <- f(X, y, family = cumulative(), n_iter = 300, seed = 1, progress = FALSE)
        b <- f(X, y, family = cumulative(), n_iter = 300, seed = 1, progress = FALSE,
               control = sgfs_control(sparse_fill = 0))
        expect_false(is.null(sgfs:::fit_spec(attr(a, "sgfit"))$rows))   # (the compressed rows)
        expect_null(sgfs:::fit_spec(attr(b, "sgfit"))$rows)             # (a dense copy)
        expect_equal(as.matrix(a), as.matrix(b), tolerance = 1e-8)
    }
})
