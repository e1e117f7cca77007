## Student t regression (student(df), sigma sampled as log_sigma): the C
## model's scores and log-likelihood against R's dt() and finite
## differences, its curvature against the expected information, its
## control variates; weights as counts; its mode against optim(); a chain
## against a long full-data hmc() run on MASS::Boston; the draw-level
## methods; bad input.

t_frame <- function(N = 80, nu = 3) {
    withr::with_seed(31, {
        d <- data.frame(a = rnorm(N), b = runif(N),
                        g = factor(sample(c("lo", "mid", "hi"), N, replace = TRUE)))
        d$off <- rnorm(N, sd = 0.5)
        d$y <- 1 + 0.5 * d$a - 0.8 * d$b + 0.7 * rt(N, nu)
        d
    })
}

## the t log density of y at location eta and log scale a
dt_log <- function(y, eta, a, nu) stats::dt((y - eta) / exp(a), nu, log = TRUE) - a

test_that("student scores and log-likelihood match dt() and finite differences; the curvature is the expected information", {
    d <- t_frame()
    x <- model.matrix(~ a + b + g, d)
    w <- withr::with_seed(32, runif(nrow(d), 0.5, 2))
    P <- ncol(x)
    for (nu in c(1, 4, 30)) {
        run <- engine_spec(x, d$y, family = student(df = nu), intercept = FALSE, batch_size = 7L)
        expect_identical(run$spec$model, "student")
        expect_identical(run$design$par_names, c(colnames(x), "log_sigma"))
        theta <- c(withr::with_seed(33, rnorm(P, sd = 0.4)), log(0.8))
        for (off in list(NULL, d$off)) for (wt in list(NULL, w)) {
            spec <- run$spec
            spec$offset <- off
            spec$weights <- wt
            expect_scores_match_fd(spec, theta, c(3L, 17L, 40L, 41L, 79L))
            eta <- drop(x %*% theta[1:P]) + if (is.null(off)) 0 else off
            ww <- if (is.null(wt)) rep(1, nrow(d)) else wt
            ll <- sum(ww * dt_log(d$y, eta, theta[P + 1], nu))
            expect_equal(model_eval(spec, theta, seq_len(nrow(d)))$loglik, ll, tolerance = 1e-12)
            expect_equal(.Call(sgfs:::C_sgfs_model_loglik, spec, theta)$loglik, ll,
                         tolerance = 1e-12)
            ## the expected information of each row, (nu + 1) / ((nu + 3) sigma^2) in
            ## eta, 2 nu / (nu + 3) in log sigma, none across
            cur <- .Call(sgfs:::C_sgfs_model_curvature, spec, theta, TRUE)$neg_hessian
            h_eta <- (nu + 1) / ((nu + 3) * exp(2 * theta[P + 1]))
            expect_equal(cur[1:P, 1:P], crossprod(x, ww * h_eta * x), tolerance = 1e-12,
                         ignore_attr = TRUE)
            expect_equal(cur[1:P, P + 1], double(P), tolerance = 1e-12)
            expect_equal(cur[P + 1, P + 1], sum(ww) * 2 * nu / (nu + 3), tolerance = 1e-12)
        }
    }
    ## ... which is the average of the observed information over t draws
    nu <- 4
    z <- withr::with_seed(34, rt(4e5, nu))
    obs <- (nu + 1) * (nu - z^2) / (nu + z^2)^2
    expect_equal(mean(obs), (nu + 1) / (nu + 3), tolerance = 4 * sd(obs) / sqrt(length(z)) /
                 ((nu + 1) / (nu + 3)))
    obs_a <- 2 * (nu + 1) * nu * z^2 / (nu + z^2)^2
    expect_equal(mean(obs_a), 2 * nu / (nu + 3), tolerance = 4 * sd(obs_a) / sqrt(length(z)))
})

test_that("student control variates: first- and second-order score changes", {
    d <- t_frame()
    x <- model.matrix(~ a + b + g, d)
    run <- engine_spec(x, d$y, family = student(df = 4), intercept = FALSE, batch_size = 6L)
    idx <- c(2L, 9L, 11L, 30L, 44L, 78L)
    theta <- c(withr::with_seed(35, rnorm(ncol(x), sd = 0.4)), log(0.6))
    centre <- c(withr::with_seed(36, rnorm(ncol(x), sd = 0.4)), log(1.1))
    for (off in list(NULL, d$off)) {
        spec <- run$spec
        spec$offset <- off
        expect_score_changes(spec, theta, centre, idx)
    }
})

test_that("a student row of weight k counts as k rows (frequency weights, not precisions)", {
    d <- t_frame(N = 30)
    x <- model.matrix(~ a + b, d)
    k <- rep(1:3, 10)
    rep_rows <- rep(seq_len(nrow(d)), k)
    theta <- c(0.9, 0.4, -0.7, log(0.75))
    weighted <- engine_spec(x, d$y, family = student(df = 5), intercept = FALSE, weights = k)
    repeated <- engine_spec(x[rep_rows, ], d$y[rep_rows], family = student(df = 5),
                            intercept = FALSE)
    a <- model_eval(weighted$spec, theta, seq_len(nrow(d)))
    b <- model_eval(repeated$spec, theta, seq_along(rep_rows))
    expect_equal(a$loglik, b$loglik, tolerance = 1e-12)
    expect_equal(a$grad, b$grad, tolerance = 1e-12)
    ## and log_lik() of a weighted fit is the row's weight times its density
    fit <- withr::with_seed(37, sgld(y ~ a + b, data = d, family = student(df = 5), weights = k,
                                     n_iter = 300, batch_size = 10, progress = FALSE))
    B <- as.matrix(fit)
    eta <- cbind(1, d$a, d$b) %*% t(B[, 1:3])
    ll <- t(k * dt_log(d$y, eta, rep(B[, "log_sigma"], each = nrow(d)), 5))
    expect_equal(rstantools::log_lik(fit, draws = Inf), ll, ignore_attr = TRUE, tolerance = 1e-10)
})

test_that("the student mode is optim()'s maximum likelihood estimate (stackloss)", {
    x <- model.matrix(stack.loss ~ ., stackloss)
    y <- stackloss$stack.loss
    nll <- function(p) -sum(dt_log(y, drop(x %*% p[1:4]), p[5], 4))
    start <- c(coef(lm(stack.loss ~ ., stackloss)), log(2))
    mle <- optim(start, nll, method = "BFGS", control = list(reltol = 1e-14, maxit = 1000))
    mle <- optim(mle$par, nll, method = "Nelder-Mead", control = list(reltol = 1e-15, maxit = 5000))
    run <- engine_spec(x, y, family = student(df = 4), standardize = TRUE, intercept = FALSE,
                       prior = normal(0, 1e4), batch_size = 21L)
    run$spec$prior_scale[] <- 1e4                 # log_sigma's prior too: the MLE
    run$spec$prior_prec[] <- 1e-8
    est <- sgfs:::to_original(sgfs:::posterior_laplace(run)$mode, run$design)
    expect_equal(est, mle$par, tolerance = 1e-4, ignore_attr = TRUE)
    expect_lt(nll(est), mle$value + 1e-8)
})

test_that("sgldcv() at its defaults matches a long full-data hmc() run (MASS::Boston)", {
    skip_if_not_installed("MASS")
    f <- medv ~ lstat + rm + crim + ptratio
    ref <- withr::with_seed(41, hmc(f, data = MASS::Boston, family = student(df = 3),
                                     n_iter = 6000, chains = 2, progress = FALSE))
    R <- as.matrix(ref)
    fit <- withr::with_seed(42, sgldcv(f, data = MASS::Boston, family = student(df = 3),
                                       progress = FALSE, verbose = FALSE))
    B <- as.matrix(fit)
    expect_identical(colnames(B), colnames(R))
    expect_identical(colnames(B)[ncol(B)], "log_sigma")
    ## the two runs' means differ by their Monte Carlo errors, sd / sqrt(ESS)
    ## each with ESS of at least 400: within 0.3 posterior sd
    s <- apply(R, 2, sd)
    expect_lt(max(abs(colMeans(B) - colMeans(R)) / s), 0.3)
    expect_equal(unname(apply(B, 2, sd) / s), rep(1, ncol(R)), tolerance = 0.2)
    ## heavy tails: the t fit's slopes are not the gaussian's (Boston's
    ## censored, outlying medv = 50 rows pull least squares)
    g <- withr::with_seed(43, sgldcv(f, data = MASS::Boston, family = gaussian(), progress = FALSE,
                                     verbose = FALSE))
    G <- as.matrix(g)
    expect_gt(max(abs(colMeans(G)[2:5] - colMeans(R)[2:5]) / s[2:5]), 1)
})

test_that("student fits' draw-level methods: epred, log_lik, predict, posterior_predict, R2", {
    d <- t_frame(N = 200)
    fit <- withr::with_seed(51, sgldcv(y ~ a + b, data = d, family = student(df = 5),
                                       n_iter = 4000, progress = FALSE))
    B <- as.matrix(fit)
    X <- cbind(1, d$a, d$b)
    mu <- B[, 1:3] %*% t(X)
    expect_equal(rstantools::posterior_epred(fit, draws = Inf), mu, ignore_attr = TRUE,
                 tolerance = 1e-10)
    sig <- exp(B[, "log_sigma"])
    ll <- dt_log(rep(d$y, each = nrow(B)), mu, rep(log(sig), nrow(d)), 5)
    expect_equal(rstantools::log_lik(fit, draws = Inf), ll, ignore_attr = TRUE, tolerance = 1e-10)
    ## the predictive sd: sigma sqrt(nu / (nu - 2)) mixed over draws
    p <- predict(fit, d[1:5, ], interval = "prediction")
    v <- colMeans(mu[, 1:5]^2 + sig^2 * 5 / 3) - colMeans(mu[, 1:5])^2
    expect_equal(unname(p[, "sd"]), sqrt(v), tolerance = 1e-8)
    ## ... which the running predictive gives too
    kept <- withr::with_seed(51, sgldcv(y ~ a + b, data = d, family = student(df = 5),
                                        n_iter = 4000, keep = predictive(d[1:5, ]),
                                        progress = FALSE))
    expect_equal(unname(predict(kept, interval = "prediction")), unname(p), tolerance = 1e-8)
    ## posterior_predict's draws have the t's spread: their residuals'
    ## kurtosis is the t_5's, 6 above the normal's 3
    yrep <- rstantools::posterior_predict(fit, draws = 400, seed = 2)
    expect_equal(dim(yrep), c(400L, nrow(d)))
    r <- c((yrep - rstantools::posterior_epred(fit, draws = 400, seed = 2)) /
           rep(exp(B[seq_len(400) * floor(nrow(B) / 400), "log_sigma"]), nrow(d)))
    expect_equal(var(r), 5 / 3, tolerance = 0.1)
    ## R2 with the t's residual variance, sigma^2 nu / (nu - 2)
    v <- apply(mu, 1, var)
    expect_equal(rstantools::bayes_R2(fit), v / (v + sig^2 * 5 / 3), tolerance = 1e-10)
})

test_that("a fixed sigma, and what student() refuses", {
    d <- t_frame()
    fit <- withr::with_seed(61, sgldcv(y ~ a + b, data = d, family = student(), sigma = 0.7,
                                       n_iter = 2000, progress = FALSE))
    expect_identical(colnames(as.matrix(fit)), c("(Intercept)", "a", "b"))
    x <- model.matrix(~ a + b, d)
    run <- engine_spec(x, d$y, family = student(df = 4), sigma = 0.7, intercept = FALSE)
    theta <- c(0.9, 0.4, -0.7)
    expect_equal(model_eval(run$spec, theta, seq_len(nrow(d)))$loglik,
                 sum(dt_log(d$y, drop(x %*% theta), log(0.7), 4)), tolerance = 1e-12)
    expect_error(student(df = 0), "'df' must be one positive finite number")
    expect_error(student(df = Inf), "'df' must be one positive finite number")
    expect_error(student(df = c(3, 4)), "'df' must be one positive finite number")
    expect_error(student(link = "log"), "'link' must be \"identity\" for student\\(\\)")
    expect_error(sgld(y ~ a + (1 | g), data = d, family = student(), n_iter = 10),
                 "'family' must be .* with random-effect terms")
    expect_error(sgld(y ~ a, data = d, family = student(), model = mlp(3), n_iter = 10),
                 "'family' student\\(link = \"identity\"\\) is available for GLMs")
    cauchy_fit <- withr::with_seed(62, sgld(y ~ a, data = d, family = student(df = 1),
                                            n_iter = 200, batch_size = 20, progress = FALSE))
    expect_error(predict(cauchy_fit, d[1:3, ], interval = "prediction"), "df")
})

test_that("the compressed rows' one-pass score gives the dense copy's chain (model_aux.c's families)", {
    skip_if_not_installed("Matrix")
    X <- withr::with_seed(51, Matrix::rsparsematrix(400, 30, density = 0.05,
                                                   rand.x = function(n) rep(1, n)))
    e <- as.vector(X %*% withr::with_seed(52, rnorm(30, sd = 0.5)))
    ys <- list(student = e + withr::with_seed(53, rt(400, 4)),
               negbin = withr::with_seed(54, rnbinom(400, size = 3, mu = exp(e))),
               gamma = withr::with_seed(55, rgamma(400, 4, 4 / exp(e))))
    fams <- list(student = student(), negbin = neg_binomial_2(), gamma = Gamma(link = "log"))
    for (k in names(fams)) {
        a <- sgldcv(X, ys[[k]], family = fams[[k]], n_iter = 300, seed = 1, progress = FALSE)
        b <- sgldcv(X, ys[[k]], family = fams[[k]], n_iter = 300, seed = 1, progress = FALSE,
                    control = sgfs_control(sparse_fill = 0))
        expect_false(is.null(sgfs:::fit_spec(attr(a, "sgfit"))$rows), info = k)
        expect_null(sgfs:::fit_spec(attr(b, "sgfit"))$rows, info = k)
        expect_equal(as.matrix(a), as.matrix(b), tolerance = 1e-8, info = k)
    }
})
