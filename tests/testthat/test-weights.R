## Prior weights, two-column binomial responses and contrasts (issue 16,
## item 2): the modes equal glm()'s, integer weights replicate rows, and the
## draw-level methods weigh rows as the likelihood does.

weights_frame <- function(N = 150, seed = 11) {
    withr::with_seed(seed, {
        d <- data.frame(a = rnorm(N), b = rnorm(N),
                        f = factor(sample(c("u", "v", "w"), N, replace = TRUE)))
        d$w <- rexp(N) + 0.1
        d$y <- rbinom(N, 1, plogis(0.3 + d$a - d$b))
        d$cnt <- rpois(N, exp(0.2 + 0.5 * d$a))
        d$yg <- 1 + d$a - d$b + rnorm(N) / sqrt(d$w)
        d$m <- sample(0:6, N, replace = TRUE)
        d$s <- rbinom(N, d$m, plogis(0.2 + d$a))
        d$fl <- d$m - d$s
        d$six <- 6
        d$prop <- rbinom(N, 6, plogis(d$b)) / 6
    })
    d
}

weak <- normal(0, 1e5)

## the mode of a fit's log posterior, Newton's method run to convergence
## (the sampler's own stops at a Newton decrement of 1e-10), original scale
polished_mode <- function(fit) {
    info <- attr(fit, "sgfit")
    mode <- sgfs:::newton_mode(sgfs:::fit_spec(info), info$laplace$mode, tol = 1e-24)$mode
    stats::setNames(sgfs:::to_original(mode, info$design), info$design$par_names)
}

test_that("weighted modes equal glm(weights = ): binomial, probit, poisson, gaussian, cbind, proportions", {
    d <- weights_frame()
    tight <- glm.control(epsilon = 1e-14, maxit = 100)
    cases <- list(
        list(f = y ~ a + b + f, fam = binomial(), w = TRUE),
        list(f = y ~ a + b + f, fam = binomial("probit"), w = TRUE),
        list(f = cnt ~ a + b + f, fam = poisson(), w = TRUE),
        list(f = yg ~ a + b + f, fam = gaussian(), w = TRUE),
        list(f = cbind(s, fl) ~ a + b, fam = binomial(), w = FALSE),
        list(f = cbind(s, fl) ~ a + b, fam = binomial(), w = TRUE),
        list(f = cbind(s, fl) ~ a + b, fam = binomial("probit"), w = TRUE))
    for (cs in cases) {
        label <- paste(deparse(cs$f), cs$fam$family, cs$fam$link, cs$w)
        ref <- if (cs$w) suppressWarnings(glm(cs$f, family = cs$fam, data = d, weights = w, control = tight))
               else glm(cs$f, family = cs$fam, data = d, control = tight)
        fit <- if (cs$w) sgld(cs$f, data = d, family = cs$fam, weights = w, prior = weak,
                              prior_intercept = weak, n_iter = 20, progress = FALSE)
               else sgld(cs$f, data = d, family = cs$fam, prior = weak, prior_intercept = weak,
                         n_iter = 20, progress = FALSE)
        mode <- polished_mode(fit)
        expect_equal(mode[names(coef(ref))], coef(ref), tolerance = 1e-6, label = label)
        ## the sampler's own mode (Laplace, init = "map") is within its tolerance
        info <- attr(fit, "sgfit")
        lap <- sgfs:::to_original(info$laplace$mode, info$design)[seq_along(coef(ref))]
        expect_equal(lap, unname(coef(ref)), tolerance = 1e-4, label = label)
        if (cs$fam$family == "gaussian") {
            ## the noise sd's mode: near sqrt(sum w r^2 / N), the maximum
            ## likelihood (its prior, normal(0, 5) on log sigma, moves it a little)
            expect_equal(exp(mode[["log_sigma"]]), sqrt(sum(ref$weights * ref$residuals^2) / nrow(d)),
                         tolerance = 1e-3)
        }
    }
    ## proportions with weights (the trials), as glm()
    ref <- glm(prop ~ a + b, family = binomial(), data = d, weights = six, control = tight)
    fit <- sgld(prop ~ a + b, data = d, weights = six, prior = weak, prior_intercept = weak,
                n_iter = 20, progress = FALSE)
    expect_equal(polished_mode(fit)[names(coef(ref))], coef(ref), tolerance = 1e-6)
    ## the matrix method: cbind(s, f) as y, weights as a vector
    X <- model.matrix(~ a + b, d)[, -1]
    fm <- sgld(X, cbind(d$s, d$fl), weights = d$w, prior = weak, prior_intercept = weak,
               n_iter = 20, progress = FALSE)
    ref <- suppressWarnings(glm(cbind(s, fl) ~ a + b, binomial(), d, weights = w, control = tight))
    expect_equal(unname(polished_mode(fm)), unname(coef(ref)), tolerance = 1e-6)
})

test_that("a weighted categorical mode equals nnet::multinom(weights = )'s", {
    d <- weights_frame()
    skip_if_not_installed("nnet")
    ## categorical(): nnet::multinom(weights = ), the same parameters (class u
    ## the reference, each other class's coefficients in turn)
    ref <- nnet::multinom(f ~ a + b, data = d, weights = w, trace = FALSE, reltol = 1e-14,
                          maxit = 1000)
    fit <- sgld(f ~ a + b, data = d, family = categorical(), weights = w, prior = weak,
                prior_intercept = weak, n_iter = 20, progress = FALSE)
    expect_equal(unname(polished_mode(fit)), c(t(coef(ref))), tolerance = 1e-5)
})

test_that("integer weights k give the log posterior of the rows repeated k times", {
    d <- weights_frame(N = 40)
    k <- withr::with_seed(3, sample(0:3, 40, replace = TRUE))
    rep_rows <- rep(seq_len(40), k)
    x <- model.matrix(~ a + b + f, d)
    cases <- list(list(fam = binomial(), y = d$y), list(fam = binomial("probit"), y = d$y),
                  list(fam = poisson(), y = d$cnt), list(fam = gaussian(), y = d$yg, sigma = 1.3))
    theta <- withr::with_seed(4, rnorm(ncol(x), sd = 0.3))
    for (cs in cases) {
        ## standardize = FALSE: the standardised scale (and the prior on it)
        ## would otherwise differ between the two data sets
        wr <- engine_spec(x, cs$y, family = cs$fam, intercept = FALSE, weights = k,
                          sigma = cs$sigma)
        rr <- engine_spec(x[rep_rows, ], cs$y[rep_rows], family = cs$fam, intercept = FALSE,
                          sigma = cs$sigma)
        a <- .Call(sgfs:::C_sgfs_model_curvature, wr$spec, theta, FALSE)
        b <- .Call(sgfs:::C_sgfs_model_curvature, rr$spec, theta, FALSE)
        ## a gaussian's weights are precisions: its log-likelihood differs
        ## from the repeated rows' by the constant sum_i [log(k_i)/2 - (k_i - 1)
        ## (-log sigma - log(2 pi)/2)] (k_i > 0), its score and curvature not
        shift <- if (cs$fam$family == "gaussian") {
            pos <- k > 0
            sum(0.5 * log(k[pos]) + (k[pos] - 1) * (log(1.3) + 0.5 * log(2 * pi)))
        } else 0
        expect_equal(a$loglik - shift, b$loglik, tolerance = 1e-13)
        expect_equal(a$grad, b$grad, tolerance = 1e-13)
        expect_equal(a$neg_hessian, b$neg_hessian, tolerance = 1e-13)
        post <- function(run) sgfs:::subset_log_posterior(run$spec, run$spec$N)(theta)
        expect_equal(post(wr)$value - shift, post(rr)$value, tolerance = 1e-13)
    }
    ## categorical(): a table's frequencies are its rows repeated, for the
    ## score, the curvature and the control variates' score change (first
    ## and second order)
    wr <- engine_spec(x, d$f, family = categorical(), intercept = FALSE, weights = k)
    rr <- engine_spec(x[rep_rows, ], d$f[rep_rows], family = categorical(), intercept = FALSE)
    theta2 <- withr::with_seed(7, rnorm(2 * ncol(x), sd = 0.3))
    a <- .Call(sgfs:::C_sgfs_model_curvature, wr$spec, theta2, TRUE)
    b <- .Call(sgfs:::C_sgfs_model_curvature, rr$spec, theta2, TRUE)
    expect_equal(a[c("loglik", "grad", "neg_hessian")], b[c("loglik", "grad", "neg_hessian")],
                 tolerance = 1e-13)
    centre <- withr::with_seed(8, rnorm(2 * ncol(x), sd = 0.3))
    for (second in c(FALSE, TRUE)) {
        ga <- model_eval(wr$spec, theta2, 1:40, centre, second)
        gb <- model_eval(rr$spec, theta2, seq_along(rep_rows), centre, second)
        expect_equal(ga[c("loglik", "grad", "change")], gb[c("loglik", "grad", "change")],
                     tolerance = 1e-12)
        ## (each row's score: its weight times its own)
        expect_equal(ga$scores[k > 0, ], gb$scores[match(which(k > 0), rep_rows), ] * k[k > 0],
                     tolerance = 1e-12)
    }
    ## a two-column response is its rows' Bernoulli trials
    m <- withr::with_seed(5, sample(0:3, 40, replace = TRUE))
    s <- withr::with_seed(6, rbinom(40, m, 0.4))
    cb <- engine_spec(x, cbind(s, m - s), intercept = FALSE)
    yb <- unlist(lapply(seq_len(40), function(i) rep(c(1, 0), c(s[i], m[i] - s[i]))))
    rb <- engine_spec(x[rep(seq_len(40), m), ], yb, intercept = FALSE)
    a <- .Call(sgfs:::C_sgfs_model_curvature, cb$spec, theta, FALSE)
    b <- .Call(sgfs:::C_sgfs_model_curvature, rb$spec, theta, FALSE)
    expect_equal(a[c("loglik", "grad", "neg_hessian")], b[c("loglik", "grad", "neg_hessian")],
                 tolerance = 1e-13)
})

test_that("bad weights and responses are refused by name", {
    d <- weights_frame(N = 30)
    X <- as.matrix(d[c("a", "b")])
    expect_error(sgld(X, d$y, weights = d$w[-1], n_iter = 10), "'weights' must be 30 non-negative")
    expect_error(sgld(X, d$y, weights = replace(d$w, 2, NA), n_iter = 10), "'weights' must be 30")
    expect_error(sgld(X, d$y, weights = replace(d$w, 2, -1), n_iter = 10), "'weights' must be 30")
    expect_error(sgld(X, d$y, weights = replace(d$w, 2, Inf), n_iter = 10), "'weights' must be 30")
    expect_error(sgld(X, d$y, weights = as.character(d$w), n_iter = 10), "'weights' must be 30")
    expect_error(sgld(X, d$y, weights = 0 * d$w, n_iter = 10), "'weights' are all zero")
    expect_error(sgld(y ~ a, data = d, weights = w[1:3], n_iter = 10),
                 "'weights' must have one number per row")
    expect_error(sgld(y ~ a, data = d, weights = -w, n_iter = 10), "'weights' must be 30")
    expect_error(sgld(y ~ a, data = d, model = mlp(2), weights = w, n_iter = 10),
                 "'weights' are for GLMs.*networks")
    expect_error(sgld(prop ~ a, data = d, n_iter = 10), "'y' must be 0/1.*proportions")
    expect_error(sgld(cbind(s, fl / 2) ~ a, data = d, n_iter = 10),
                 "'y' cbind\\(successes, failures\\) must be non-negative whole numbers")
    expect_error(sgld(cbind(s, fl) ~ a, data = d, family = poisson(), n_iter = 10), "'y' must be a vector")
    expect_error(sgld(y ~ a + f, data = d, contrasts = "contr.sum", n_iter = 10),
                 "'contrasts' must be a list")
    expect_error(sgld(X, d$y, contrasts = list(f = "contr.sum"), n_iter = 10),
                 "'contrasts' is for the formula method")
})

test_that("a two-column response: fitted, residuals, weights, log_lik and posterior_predict as glm", {
    skip_if_not_installed("rstantools")
    d <- weights_frame(N = 120)
    d$m[1:2] <- 0                          # rows of no trial: kept, weight 0
    d$s[1:2] <- d$fl[1:2] <- 0
    ref <- suppressWarnings(glm(cbind(s, fl) ~ a + b, binomial(), d, weights = w))
    fit <- withr::with_seed(1, sgld(cbind(s, fl) ~ a + b, data = d, weights = w, n_iter = 400,
                                    progress = FALSE))
    expect_equal(weights(fit), unname(weights(ref)))
    mu <- fitted(fit)
    expect_length(mu, 120)
    expect_equal(unname(mu), unname(fitted(ref)), tolerance = 0.05)
    y <- ifelse(d$m > 0, d$s / pmax(d$m, 1), 0)
    expect_equal(residuals(fit), y - mu)
    expect_equal(residuals(fit, type = "pearson"),
                 (y - mu) * sqrt(weights(ref)) / sqrt(mu * (1 - mu)), ignore_attr = TRUE)
    expect_equal(residuals(fit, type = "pearson")[1:2], c(0, 0), ignore_attr = TRUE)
    ## log_lik: w_i log Bin(s_i | m_i, p_i), as rstanarm weighs rows
    ll <- rstantools::log_lik(fit, draws = 7)
    p <- rstantools::posterior_epred(fit, draws = 7)
    expect_equal(dim(ll), c(7L, 120L))
    expect_equal(ll, rep(d$w, each = 7) * dbinom(rep(d$s, each = 7), rep(d$m, each = 7), p, log = TRUE),
                 ignore_attr = TRUE, tolerance = 1e-10)
    ## newdata: the response gives the trials, the weights are evaluated there
    nd <- d[3:6, ]
    ll_new <- rstantools::log_lik(fit, newdata = nd, draws = 7)
    expect_equal(ll_new, ll[, 3:6], ignore_attr = TRUE, tolerance = 1e-12)
    expect_error(rstantools::log_lik(fit, newdata = nd[c("a", "b", "s", "fl")], draws = 2),
                 "'newdata' must hold the fit's weights")
    ## posterior_predict: successes out of each row's trials
    yrep <- rstantools::posterior_predict(fit, draws = 50, seed = 3)
    expect_equal(dim(yrep), c(50L, 120L))
    expect_true(all(yrep >= 0 & yrep <= rep(d$m, each = 50)))
    expect_true(all(yrep[, 1:2] == 0))
    expect_equal(rstantools::posterior_predict(fit, newdata = nd, draws = 50, seed = 3),
                 withr::with_seed(3, matrix(rbinom(200, rep(d$m[3:6], each = 50),
                     rstantools::posterior_epred(fit, newdata = nd, draws = 50)), 50)),
                 ignore_attr = TRUE)
    yt <- rstantools::posterior_predict(fit, newdata = nd[c("a", "b")], draws = 5, trials = c(1, 2, 3, 100))
    expect_true(all(yt <= rep(c(1, 2, 3, 100), each = 5)))
    expect_error(rstantools::posterior_predict(fit, newdata = nd[c("a", "b")], draws = 5),
                 "'trials' are needed")
    ## predict() needs no weights: the means of the rows
    expect_equal(predict(fit, nd[c("a", "b")], type = "response"), mu[3:6], ignore_attr = TRUE)
    if (requireNamespace("loo", quietly = TRUE))
        expect_s3_class(suppressMessages(suppressWarnings(loo::loo(fit))), "loo")
})

test_that("a weighted categorical fit: frequencies weigh log_lik, and weights() returns them", {
    skip_if_not_installed("rstantools")
    tab <- as.data.frame(with(weights_frame(N = 200), table(f, a > 0, b > 0)))
    names(tab) <- c("f", "a", "b", "n")
    tab$n[1] <- 0                                 # a cell kept with weight 0
    fit <- withr::with_seed(2, sgld(f ~ a + b, data = tab, family = categorical(), weights = n,
                                    n_iter = 300, progress = FALSE))
    expect_equal(weights(fit), tab$n)
    ll <- rstantools::log_lik(fit, draws = 5)
    p <- rstantools::posterior_epred(fit, draws = 5)        # draws x rows x classes
    expect_equal(dim(ll), c(5L, nrow(tab)))
    own <- sapply(seq_len(nrow(tab)), function(i) log(p[, i, as.integer(tab$f[i])]))
    expect_equal(ll, rep(tab$n, each = 5) * own, ignore_attr = TRUE, tolerance = 1e-10)
    expect_equal(ll[, 1], rep(0, 5))
    ## newdata: its weights evaluated there
    expect_equal(rstantools::log_lik(fit, newdata = tab[2:5, ], draws = 5), ll[, 2:5],
                 ignore_attr = TRUE, tolerance = 1e-12)
})

test_that("weighted gaussian: precision weights in log_lik, posterior_predict and prediction intervals", {
    skip_if_not_installed("rstantools")
    d <- weights_frame(N = 200)
    d$w[1] <- 0
    fit <- withr::with_seed(2, sgld(yg ~ a + b, data = d, family = gaussian(), weights = w,
                                    n_iter = 2000, progress = FALSE))
    mu <- rstantools::posterior_epred(fit, draws = 400)
    sig <- exp(as.matrix(fit)[, "log_sigma"])
    sig <- sig[unique(round(seq(1, length(sig), length.out = 400)))]
    ll <- rstantools::log_lik(fit, draws = 400)
    expect_equal(ll[, -1], dnorm(rep(d$yg[-1], each = 400), mu[, -1], sig / rep(sqrt(d$w[-1]), each = 400),
                                 log = TRUE), ignore_attr = TRUE, tolerance = 1e-10)
    expect_equal(ll[, 1], rep(0, 400))
    yrep <- rstantools::posterior_predict(fit, draws = 400, seed = 1)
    expect_true(all(is.na(yrep[, 1])))
    z <- (yrep[, -1] - mu[, -1]) / (sig / rep(sqrt(d$w[-1]), each = 400))
    expect_equal(sd(as.vector(z)), 1, tolerance = 0.02)
    pi <- predict(fit, interval = "prediction")
    expect_equal(colnames(pi), c("fit", "sd"))
    expect_true(is.infinite(pi[1, "sd"]))
    ## the heavier a row, the narrower its predictive
    big <- which.max(d$w)
    small <- which.min(d$w[-1]) + 1
    expect_lt(pi[big, "sd"], pi[small, "sd"])
    expect_equal(residuals(fit, type = "pearson"), (d$yg - fitted(fit)) * sqrt(d$w),
                 ignore_attr = TRUE)
})

test_that("rows' jumps (the held-row rule) scale with their weights", {
    d <- weights_frame(N = 80)
    x <- model.matrix(~ a + b, d)
    for (fam in list(binomial(), binomial("probit"), poisson(), gaussian())) {
        y <- switch(fam$family, binomial = d$y, poisson = d$cnt, d$yg)
        run <- engine_spec(x, y, family = fam, intercept = FALSE, weights = d$w)
        theta <- c(0.1, 0.2, -0.1, if (fam$family == "gaussian") 0.2)
        move <- withr::with_seed(1, runif(80))
        for (cv in c(FALSE, TRUE)) {
            w <- sgfs:::residual_reach(run$spec, theta, move, cv)
            u <- sgfs:::residual_reach(modifyList(run$spec, list(weights = NULL)), theta, move, cv)
            expect_equal(w, d$w * u)
        }
    }
    ## a heavy row is held in every minibatch of SGLD-CV
    d$w[5] <- 500
    fit <- sgldcv(y ~ a + b, data = d, weights = w, batch_size = 10, n_iter = 50, progress = FALSE)
    expect_gte(attr(fit, "sgfit")$settings$fixed_rows, 1)
})

test_that("contrasts: glm's coefficients, kept for predict(), model.matrix() and update()", {
    d <- weights_frame()
    tight <- glm.control(epsilon = 1e-14)
    for (ct in list(list(f = "contr.sum"), list(f = contr.helmert))) {
        ref <- glm(y ~ a + b + f, binomial(), d, contrasts = ct, control = tight)
        fit <- withr::with_seed(1, sgld(y ~ a + b + f, data = d, contrasts = ct, prior = weak,
                                        prior_intercept = weak, n_iter = 200, progress = FALSE))
        expect_equal(polished_mode(fit)[names(coef(ref))], coef(ref), tolerance = 1e-6)
        expect_equal(model.matrix(fit), model.matrix(ref), ignore_attr = TRUE)
        nd <- d[c(1, 5, 9), ]
        expect_equal(predict(fit, nd, type = "link"),
                     drop(model.matrix(ref)[c(1, 5, 9), ] %*% coef(fit)), ignore_attr = TRUE,
                     tolerance = 1e-10)
        up <- update(fit, . ~ . - b, n_iter = 50, progress = FALSE)
        expect_equal(colnames(as.matrix(up)), c("(Intercept)", "a", "f1", "f2"))
        expect_equal(model.matrix(up), model.matrix(glm(y ~ a + f, binomial(), d, contrasts = ct)),
                     ignore_attr = TRUE)
    }
})

test_that("a weighted gaussian mode is found on unstandardised predictors with weak priors (state.x77)", {
    ## Newton's method started at 0 (log sigma 0, intercept 0 for a mean of
    ## 71) is in the region where minus the Hessian in (beta, log sigma) is
    ## not positive definite; Levenberg's steps alone stopped after 100
    ## steps with the intercept at 1.7 ("no well-defined mode")
    st <- as.data.frame(state.x77)
    names(st) <- make.names(names(st))
    st$w <- st$Population / mean(st$Population)
    f <- Life.Exp ~ Income + Illiteracy + Murder + HS.Grad + Frost
    ref <- lm(f, st, weights = w)
    fit <- sgldcv(f, data = st, family = gaussian(), weights = w, standardize = FALSE,
                  prior = normal(0, 1000), prior_intercept = normal(0, 1000),
                  n_iter = 20, verbose = FALSE)
    info <- attr(fit, "sgfit")
    expect_lt(info$laplace$steps, 30)
    mode <- stats::setNames(sgfs:::to_original(info$laplace$mode, info$design),
                            info$design$par_names)
    expect_equal(mode[names(coef(ref))], coef(ref), tolerance = 1e-5)
    ## log sigma's mode: sqrt(sum w r^2 / N) up to its normal(0, 5) prior
    expect_equal(exp(mode[["log_sigma"]]), sqrt(sum(st$w * ref$residuals^2) / nrow(st)),
                 tolerance = 1e-3)
})
