## The C models' gradients and per-example scores equal central finite
## differences of the C log-likelihood.

mixed_frame <- function(N = 60) {
    withr::with_seed(3, data.frame(
        a = rnorm(N), b = runif(N),
        g = factor(sample(c("lo", "mid", "hi"), N, replace = TRUE)),
        yb = rbinom(N, 1, 0.4), yg = rnorm(N, 2, 3)))
}

test_that("logistic scores match finite differences, with and without intercept", {
    d <- mixed_frame()
    for (icpt in c(TRUE, FALSE)) {
        x <- model.matrix(if (icpt) ~ a + b + g else ~ a + b + g - 1, d)
        run <- engine_spec(x, d$yb, intercept = FALSE, batch_size = 7L)
        theta <- withr::with_seed(4, rnorm(ncol(x), sd = 0.7))
        expect_scores_match_fd(run$spec, theta, c(3L, 17L, 40L, 41L, 59L))
    }
})

test_that("gaussian scores match finite differences, sampled and fixed sigma", {
    d <- mixed_frame()
    x <- model.matrix(~ a + b + g, d)
    run <- engine_spec(x, d$yg, family = gaussian(), intercept = FALSE)
    theta <- c(withr::with_seed(5, rnorm(ncol(x))), log(1.7))
    expect_equal(length(theta), run$design$D)
    expect_scores_match_fd(run$spec, theta, c(1L, 2L, 30L, 60L))

    run <- engine_spec(x, d$yg, family = gaussian(), sigma = 2, intercept = FALSE)
    expect_equal(run$design$D, ncol(x))
    expect_scores_match_fd(run$spec, theta[-length(theta)], c(5L, 6L, 7L))
    x0 <- model.matrix(~ a + b - 1, d)
    run <- engine_spec(x0, d$yg, family = gaussian(), intercept = FALSE)
    expect_scores_match_fd(run$spec, c(0.3, -0.2, 0.1), c(8L, 9L))
})

test_that("log-likelihoods equal R's own densities", {
    d <- mixed_frame()
    x <- model.matrix(~ a + b + g, d)
    theta <- withr::with_seed(6, rnorm(ncol(x)))
    eta <- drop(x %*% theta)
    run <- engine_spec(x, d$yb, intercept = FALSE, batch_size = 60L)
    expect_equal(model_eval(run$spec, theta, 1:60)$loglik,
                 sum(dbinom(d$yb, 1, plogis(eta), log = TRUE)), tolerance = 1e-12)
    run <- engine_spec(x, d$yg, family = gaussian(), intercept = FALSE)
    expect_equal(model_eval(run$spec, c(theta, log(2.5)), 1:60)$loglik,
                 sum(dnorm(d$yg, eta, 2.5, log = TRUE)), tolerance = 1e-12)
    ## the full-data pass in chunks of 7 rows (the last one short) gives the same sum
    run$spec$pass_rows <- 7L
    full <- .Call(sgfs:::C_sgfs_model_loglik, run$spec, c(theta, log(2.5)))
    expect_equal(full$loglik, sum(dnorm(d$yg, eta, 2.5, log = TRUE)), tolerance = 1e-12)
    expect_equal(full$grad, model_eval(run$spec, c(theta, log(2.5)), 1:60)$grad,
                 tolerance = 1e-12)
})

test_that("priors: log density and gradient", {
    x <- matrix(withr::with_seed(7, rnorm(40)), 20)
    y <- rep(0:1, 10)
    theta <- c(0.4, -1.2, 0.7)
    run <- sgfs:::prepare_run(x, y, binomial(), laplace(0.5, 2), normal(1, 3), 5L,
                              10L, 0L, 1L, 1L, 1L, NULL, FALSE, FALSE, NULL, TRUE)
    lp <- model_eval(run$spec, theta, 1:5)$logprior
    expect_equal(lp, dnorm(0.4, 1, 3, log = TRUE) +
                     sum(-abs(theta[-1] - 0.5) / 2 - log(4)))
    expect_equal(run$spec$prior_prec, c(1 / 9, 1 / 8, 1 / 8))
})

test_that("student_t and cauchy priors: C log density equals R's, gradient finite differences", {
    x <- matrix(withr::with_seed(7, rnorm(60)), 20)
    y <- rep(0:1, 10)
    run <- sgfs:::prepare_run(x, y, binomial(), student_t(c(1, 4, 30), -0.5, c(2, 0.7, 1.5)),
                              cauchy(1, 3), 5L, 10L, 0L, 1L, 1L, 1L, NULL, FALSE, FALSE, NULL, TRUE)
    spec <- run$spec
    expect_equal(spec$prior_type, rep(2L, 4))
    expect_equal(spec$prior_df, c(1, 1, 4, 30))
    ## the Fisher information is SGFS's constant precision
    expect_equal(spec$prior_prec, c(2 / (4 * 9), 2 / (4 * 4), 5 / (7 * 0.49), 31 / (33 * 2.25)))
    dens <- function(theta) sum(dt((theta - spec$prior_loc) / spec$prior_scale, spec$prior_df,
                                   log = TRUE) - log(spec$prior_scale))
    for (theta in list(c(0.4, -1.2, 0.7, 3), c(-30, 25, -4, 0.01), c(1, -0.5, -0.5, -0.5))) {
        lp <- sgfs:::log_prior(theta, spec)
        expect_equal(lp$value, dens(theta), tolerance = 1e-12)
        expect_equal(model_eval(spec, theta, 1:5)$logprior, dens(theta), tolerance = 1e-12)
        h <- 1e-6
        fd <- vapply(1:4, function(j) {
            e <- replace(double(4), j, h)
            (dens(theta + e) - dens(theta - e)) / (2 * h)
        }, 0)
        expect_equal(lp$grad, fd, tolerance = 1e-7)
        ## curvature: the exact second derivative where it exceeds the Fisher
        ## information, that information in the tails
        fd2 <- vapply(1:4, function(j) {
            e <- replace(double(4), j, 1e-4)
            -(dens(theta + e) - 2 * dens(theta) + dens(theta - e)) / 1e-8
        }, 0)
        expect_equal(lp$curvature, pmax(fd2, spec$prior_prec), tolerance = 1e-5)
        expect_true(all(lp$curvature > 0))
    }
    ## a cauchy() is dcauchy, a student_t with df = 1
    expect_equal(sgfs:::log_prior(2.5, list(prior_type = 2L, prior_loc = 1, prior_scale = 3,
                                            prior_prec = 1, prior_df = 1))$value,
                 dcauchy(2.5, 1, 3, log = TRUE), tolerance = 1e-12)
    ## normal and laplace: the curvature is the precision
    lp <- sgfs:::log_prior(c(3, -2), list(prior_type = c(0L, 1L), prior_loc = c(1, 0),
                                          prior_scale = c(2, 0.5), prior_prec = c(0, 0)))
    expect_equal(lp$value, dnorm(3, 1, 2, log = TRUE) + log(0.5 * exp(-2 / 0.5) / 0.5))
    expect_equal(lp$grad, c(-0.5, 2))
    expect_equal(lp$curvature, c(0.25, 2))
})

test_that("the full-data log posterior of the full-data samplers includes the student_t prior", {
    d <- mixed_frame()
    x <- model.matrix(~ a + b, d)
    run <- engine_spec(x, d$yb, intercept = FALSE, prior = student_t(3, 0.2, 0.8), batch_size = 60L)
    theta <- c(0.3, -1, 2)
    eta <- drop(x %*% theta)
    ll <- sum(dbinom(d$yb, 1, plogis(eta), log = TRUE))
    lp <- sum(dt((theta - 0.2) / 0.8, 3, log = TRUE) - log(0.8))
    post <- sgfs:::subset_log_posterior(run$spec, 60)
    expect_equal(post(theta)$value, ll + lp, tolerance = 1e-12)
    h <- 1e-6
    fd <- vapply(1:3, function(j) {
        e <- replace(double(3), j, h)
        (post(theta + e)$value - post(theta - e)$value) / (2 * h)
    }, 0)
    expect_equal(post(theta)$grad, fd, tolerance = 1e-6)
})

test_that("the engine's data copy is the transposed, standardised design", {
    x <- matrix(withr::with_seed(12, rnorm(300 * 7)), 300, 7)
    center <- colMeans(x)
    scale <- apply(x, 2, sd)
    xt <- .Call(sgfs:::C_sgfs_design_copy, x, center, scale, FALSE, NULL)
    expect_identical(dim(xt), c(7L, 300L))
    expect_equal(xt, t(scale(x)), ignore_attr = TRUE, tolerance = 1e-15)
})

test_that("full-data curvature: Hessian, score covariance and log-likelihood, in chunks", {
    d <- mixed_frame(N = 45)
    x <- model.matrix(~ a + b + g, d)
    cases <- list(list(y = d$yb, family = binomial(), sigma = NULL),
                  list(y = d$yg, family = gaussian(), sigma = NULL),
                  list(y = d$yg, family = gaussian(), sigma = 2))
    for (cs in cases) {
        ## batch 7: chunks of 7 rows, the last one shorter
        run <- engine_spec(x, cs$y, family = cs$family, sigma = cs$sigma,
                           intercept = FALSE, batch_size = 7L)
        D <- length(run$theta0)
        theta <- withr::with_seed(5, rnorm(D, sd = 0.3))
        cur <- .Call(sgfs:::C_sgfs_model_curvature, run$spec, theta, TRUE)
        all <- model_eval(run$spec, theta, seq_len(45))
        expect_equal(cur$loglik, all$loglik, tolerance = 1e-12)
        expect_equal(cur$grad, all$grad, tolerance = 1e-12)
        G <- all$scores
        expect_equal(cur$score_cov, crossprod(sweep(G, 2, colMeans(G))) / 45,
                     tolerance = 1e-10)
        h <- 1e-5
        fd <- vapply(seq_len(D), function(j) {
            e <- replace(double(D), j, h)
            -(model_eval(run$spec, theta + e, seq_len(45))$grad -
                  model_eval(run$spec, theta - e, seq_len(45))$grad) / (2 * h)
        }, double(D))
        expect_equal(cur$neg_hessian, fd, tolerance = 1e-6)
        expect_equal(.Call(sgfs:::C_sgfs_model_loglik, run$spec, theta)$loglik, all$loglik,
                     tolerance = 1e-12)
    }
})

test_that("categorical (softmax) scores, log-likelihood and Hessian match R and finite differences", {
    d <- mixed_frame(N = 40)
    x <- model.matrix(~ a + b, d)
    y <- factor(withr::with_seed(6, sample(c("u", "v", "w"), 40, replace = TRUE)))
    run <- engine_spec(x, y, family = categorical(), intercept = FALSE, batch_size = 6L)
    expect_equal(length(run$theta0), 6L)
    expect_equal(run$design$par_names[c(1, 4)], c("v:(Intercept)", "w:(Intercept)"))
    theta <- withr::with_seed(7, rnorm(6, sd = 0.8))
    idx <- c(2L, 9L, 17L, 30L, 33L, 40L)
    expect_scores_match_fd(run$spec, theta, idx)
    ## the log-likelihood, from R: reference class u
    B <- matrix(theta, 3)
    eta <- cbind(0, x %*% B)
    ll <- sum(eta[cbind(1:40, as.integer(y))] - log(rowSums(exp(eta))))
    expect_equal(.Call(sgfs:::C_sgfs_model_loglik, run$spec, theta)$loglik, ll,
                 tolerance = 1e-12)
    cur <- .Call(sgfs:::C_sgfs_model_curvature, run$spec, theta, TRUE)
    h <- 1e-5
    fd <- vapply(1:6, function(j) {
        e <- replace(double(6), j, h)
        -(model_eval(run$spec, theta + e, 1:40)$grad -
              model_eval(run$spec, theta - e, 1:40)$grad) / (2 * h)
    }, double(6))
    expect_equal(cur$neg_hessian, fd, tolerance = 1e-6)
})

test_that("control variates' one-pass score change equals the difference of two scores", {
    d <- mixed_frame()
    x <- model.matrix(~ a + b + g, d)
    idx <- c(2L, 9L, 11L, 30L, 44L, 58L)
    check <- function(run, theta, centre) {
        ev <- model_eval(run$spec, theta, idx, centre)
        expect_length(ev$change, length(theta))
        expect_equal(ev$change, ev$grad - model_eval(run$spec, centre, idx)$grad,
                     tolerance = 1e-12)
    }
    theta <- withr::with_seed(11, rnorm(ncol(x), sd = 0.7))
    centre <- withr::with_seed(12, rnorm(ncol(x), sd = 0.7))
    check(engine_spec(x, d$yb, intercept = FALSE, batch_size = 6L), theta, centre)
    ## gaussian: sigma sampled (its score too) and fixed
    check(engine_spec(x, d$yg, family = gaussian(), intercept = FALSE, batch_size = 6L),
          c(theta, log(1.7)), c(centre, log(2.4)))
    check(engine_spec(x, d$yg, family = gaussian(), sigma = 2, intercept = FALSE,
                      batch_size = 6L), theta, centre)
    ## softmax with 3 classes: theta = vec(B), P x 2
    y3 <- withr::with_seed(13, sample(0:2, nrow(d), replace = TRUE))
    run <- engine_spec(x, factor(y3), family = categorical(), intercept = FALSE, batch_size = 6L)
    check(run, withr::with_seed(14, rnorm(2 * ncol(x), sd = 0.5)),
          withr::with_seed(15, rnorm(2 * ncol(x), sd = 0.5)))
    ## a network has none (the driver then calls its score twice)
    run <- engine_spec(x, d$yb, intercept = FALSE, batch_size = 6L, model = mlp(3))
    w <- withr::with_seed(16, rnorm(length(run$theta0), sd = 0.3))
    expect_null(model_eval(run$spec, w, idx, w / 2)$change)
})

test_that("the second-order score change adds the Hessian at the centre times the move", {
    d <- mixed_frame()
    x <- model.matrix(~ a + b + g, d)
    idx <- c(1L, 5L, 12L, 33L, 47L, 60L)
    check <- function(run, theta, centre) {
        ev <- model_eval(run$spec, theta, idx, centre, second = TRUE)
        H <- .Call(sgfs:::C_sgfs_model_curvature,
                   sgfs:::slice_rows(run$spec, idx),
                   as.double(centre), FALSE)$neg_hessian
        first <- model_eval(run$spec, theta, idx, centre)$change
        expect_equal(ev$change, first + drop(H %*% (theta - centre)), tolerance = 1e-10)
    }
    theta <- withr::with_seed(21, rnorm(ncol(x), sd = 0.7))
    centre <- withr::with_seed(22, rnorm(ncol(x), sd = 0.7))
    check(engine_spec(x, d$yb, intercept = FALSE, batch_size = 6L), theta, centre)
    check(engine_spec(x, d$yg, family = gaussian(), intercept = FALSE, batch_size = 6L),
          c(theta, log(1.7)), c(centre, log(2.4)))
    ## a fixed sigma: the likelihood is quadratic in beta, the change 0
    run <- engine_spec(x, d$yg, family = gaussian(), sigma = 2, intercept = FALSE, batch_size = 6L)
    check(run, theta, centre)
    expect_equal(model_eval(run$spec, theta, idx, centre, second = TRUE)$change,
                 rep(0, ncol(x)), tolerance = 1e-10)
    y3 <- withr::with_seed(23, sample(0:2, nrow(d), replace = TRUE))
    check(engine_spec(x, factor(y3), family = categorical(), intercept = FALSE, batch_size = 6L),
          withr::with_seed(24, rnorm(2 * ncol(x), sd = 0.5)),
          withr::with_seed(25, rnorm(2 * ncol(x), sd = 0.5)))
})

## ---- prior weights (issue 16 item 2) ------------------------------------

## minus the Hessian of the examples' log-likelihood by central differences
## of the C score
fd_neg_hessian <- function(spec, theta, idx, h = 1e-5) {
    H <- vapply(seq_along(theta), function(j) {
        e <- replace(double(length(theta)), j, h)
        -(model_eval(spec, theta + e, idx)$grad - model_eval(spec, theta - e, idx)$grad) / (2 * h)
    }, double(length(theta)))
    (H + t(H)) / 2
}

test_that("weighted scores, curvatures and control variates match finite differences, every GLM family", {
    d <- mixed_frame()
    x <- model.matrix(~ a + b + g, d)
    w <- withr::with_seed(7, rexp(60))
    w[c(2L, 30L)] <- 0                                  # rows of weight 0
    off <- withr::with_seed(8, runif(60, -0.3, 0.3))
    prop <- withr::with_seed(9, runif(60))              # proportions (binomial)
    cnt <- withr::with_seed(10, rpois(60, 2))
    theta <- withr::with_seed(4, rnorm(ncol(x), sd = 0.5))
    idx <- c(2L, 3L, 17L, 30L, 40L, 41L, 59L)
    cases <- list(list(fam = binomial(), y = d$yb), list(fam = binomial(), y = prop),
                  list(fam = binomial("probit"), y = d$yb), list(fam = binomial("probit"), y = prop),
                  list(fam = poisson(), y = cnt), list(fam = gaussian(), y = d$yg),
                  list(fam = gaussian(), y = d$yg, sigma = 2))
    for (cs in cases) {
        gauss <- cs$fam$family == "gaussian"
        run <- engine_spec(x, cs$y, family = cs$fam, intercept = FALSE, batch_size = 7L,
                           sigma = cs$sigma, weights = w)
        expect_identical(run$spec$weights, w)
        th <- if (gauss && is.null(cs$sigma)) c(theta, log(1.3)) else theta
        for (o in list(NULL, off)) {
            run$spec$offset <- o
            label <- paste(cs$fam$family, cs$fam$link, if (!is.null(o)) "offset")
            expect_scores_match_fd(run$spec, th, idx)
            ## zero-weight rows score 0
            ev <- model_eval(run$spec, th, idx)
            expect_equal(unname(ev$scores[c(1L, 4L), ]), matrix(0, 2L, length(th)), label = label)
            ## the full-data one-pass score (no per-example scores) equals the gathered sum
            full <- .Call(sgfs:::C_sgfs_model_loglik, run$spec, th)
            all <- model_eval(modifyList(run$spec, list(batch_size = 60L)), th, seq_len(60))
            expect_equal(full$grad, all$grad, tolerance = 1e-10, label = label)
            expect_equal(full$loglik, all$loglik, tolerance = 1e-12, label = label)
            ## the curvature (model_curvature's neg_hessian) of the rows idx
            sub <- sgfs:::slice_rows(modifyList(run$spec, list(weights = w, offset = o)), idx)
            H <- .Call(sgfs:::C_sgfs_model_curvature, sub, th, TRUE)
            expect_equal(H$neg_hessian, fd_neg_hessian(run$spec, th, idx), tolerance = 1e-6,
                         label = label)
            ## control variates: first order the score's difference, second
            ## order plus the curvature at the centre times the move
            centre <- th / 2
            first <- model_eval(run$spec, th, idx, centre)$change
            expect_equal(first, ev$grad - model_eval(run$spec, centre, idx)$grad,
                         tolerance = 1e-10, label = label)
            second <- model_eval(run$spec, th, idx, centre, second = TRUE)$change
            Hc <- .Call(sgfs:::C_sgfs_model_curvature, sub, centre, FALSE)$neg_hessian
            expect_equal(second, first + drop(Hc %*% (th - centre)), tolerance = 1e-10,
                         label = label)
        }
    }
})

test_that("weighted log-likelihoods equal R's densities (gaussian weights are precisions)", {
    d <- mixed_frame()
    x <- model.matrix(~ a + b + g, d)
    w <- withr::with_seed(7, rexp(60))
    w[5] <- 0
    theta <- withr::with_seed(6, rnorm(ncol(x)))
    eta <- drop(x %*% theta)
    ll <- function(run, th) .Call(sgfs:::C_sgfs_model_loglik, modifyList(run$spec, list(weights = w)), th)$loglik
    run <- engine_spec(x, d$yb, intercept = FALSE)
    expect_equal(ll(run, theta), sum(w * dbinom(d$yb, 1, plogis(eta), log = TRUE)), tolerance = 1e-12)
    run <- engine_spec(x, d$yb, family = binomial("probit"), intercept = FALSE)
    expect_equal(ll(run, theta), sum(w * dbinom(d$yb, 1, pnorm(eta), log = TRUE)), tolerance = 1e-12)
    cnt <- withr::with_seed(10, rpois(60, 2))
    run <- engine_spec(x, cnt, family = poisson(), intercept = FALSE)
    expect_equal(ll(run, theta / 3), sum(w * dpois(cnt, exp(eta / 3), log = TRUE)), tolerance = 1e-12)
    run <- engine_spec(x, d$yg, family = gaussian(), intercept = FALSE)
    pos <- w > 0
    expect_equal(ll(run, c(theta, log(1.7))),
                 sum(dnorm(d$yg[pos], eta[pos], 1.7 / sqrt(w[pos]), log = TRUE)), tolerance = 1e-12)
})

test_that("the models' row derivatives in eta match finite differences of R's densities", {
    d <- mixed_frame()
    x <- model.matrix(~ a + b, d)
    w <- withr::with_seed(8, runif(nrow(d), 0.2, 2))
    o <- withr::with_seed(9, rnorm(nrow(d), sd = 0.3))
    yc <- withr::with_seed(10, rpois(nrow(d), 2))
    beta <- c(0.2, -0.5, 0.8)
    cases <- list(
        logit = list(family = binomial(), y = d$yb, theta = beta,
                     l = function(y, eta, ls) dbinom(y, 1, plogis(eta), log = TRUE)),
        probit = list(family = binomial("probit"), y = d$yb, theta = beta,
                      l = function(y, eta, ls) dbinom(y, 1, pnorm(eta), log = TRUE)),
        poisson = list(family = poisson(), y = yc, theta = beta,
                       l = function(y, eta, ls) dpois(y, exp(eta), log = TRUE)),
        gaussian = list(family = gaussian(), y = d$yg, theta = c(beta, log(1.7)),
                        l = function(y, eta, ls) dnorm(y, eta, exp(ls), log = TRUE)),
        negbin = list(family = neg_binomial_2(), y = yc, theta = c(beta, log(3)),
                      l = function(y, eta, ls) dnbinom(y, size = exp(ls), mu = exp(eta), log = TRUE)),
        gamma = list(family = Gamma(link = "log"), y = exp(d$yg / 3), theta = c(beta, log(3)),
                     l = function(y, eta, ls) dgamma(y, shape = exp(ls), rate = exp(ls - eta),
                                                     log = TRUE)),
        ## (its curvature is the expected information: below)
        student = list(family = student(df = 4), y = d$yg, theta = c(beta, log(1.7)),
                       l = function(y, eta, ls) dt((y - eta) / exp(ls), 4, log = TRUE) - ls))
    h <- 1e-4
    for (name in names(cases)) {
        k <- cases[[name]]
        run <- engine_spec(x, k$y, family = k$family, intercept = FALSE, weights = w)
        run$spec$offset <- o
        shift <- withr::with_seed(11, rnorm(nrow(d), sd = 0.5))
        out <- sgfs:::row_derivs(run$spec, k$theta, shift)
        eta <- unname(drop(x %*% beta)) + o
        expect_equal(out$eta, eta, tolerance = 1e-12, info = name)
        ls <- if (length(k$theta) > 3L) k$theta[4L] else NA
        f <- function(e) w * k$l(k$y, e, ls)
        at <- eta + shift
        expect_equal(out$d1, (f(at + h) - f(at - h)) / (2 * h), tolerance = 1e-6, info = name)
        if (name == "student") {
            expect_equal(out$d2, w * 5 / 7 / exp(2 * ls), tolerance = 1e-12)
            expect_equal(out$aux, sum(w) * 8 / 7, tolerance = 1e-12)
            expect_equal(out$cross, double(nrow(d)), tolerance = 1e-12)
            next
        }
        expect_equal(out$d2, -(f(at + h) - 2 * f(at) + f(at - h)) / h^2, tolerance = 1e-4,
                     info = name)
        if (is.na(ls)) {
            expect_null(out$aux, info = name)
            expect_null(out$cross, info = name)
        } else {
            g <- function(s) sum(w * k$l(k$y, at, s))
            expect_equal(out$aux, -(g(ls + h) - 2 * g(ls) + g(ls - h)) / h^2,
                         tolerance = 1e-4, info = name)
            fx <- function(e, s) w * k$l(k$y, e, s)
            mixed <- -(fx(at + h, ls + h) - fx(at + h, ls - h) - fx(at - h, ls + h) +
                       fx(at - h, ls - h)) / (4 * h^2)
            expect_equal(out$cross, mixed, tolerance = 1e-4, info = name)
        }
    }
    ## a fixed sigma has no noise coordinate
    run <- engine_spec(x, d$yg, family = gaussian(), sigma = 2, intercept = FALSE)
    out <- sgfs:::row_derivs(run$spec, beta)
    expect_null(out$aux)
    expect_equal(out$d2, rep(1 / 4, nrow(d)))
    ## several shifts at once: one column each, as one shift at a time
    run <- engine_spec(x, yc, family = poisson(), intercept = FALSE, weights = w)
    shifts <- cbind(0.3, withr::with_seed(12, rnorm(nrow(d))), -1)
    both <- sgfs:::row_derivs(run$spec, beta, shifts)
    for (k in 1:3) {
        one <- sgfs:::row_derivs(run$spec, beta, shifts[, k])
        expect_equal(both$d1[, k], one$d1, tolerance = 1e-15)
        expect_equal(both$d2[, k], one$d2, tolerance = 1e-15)
    }
    run <- engine_spec(x, d$yg, family = gaussian(), intercept = FALSE)
    both <- sgfs:::row_derivs(run$spec, c(beta, log(1.7)), cbind(rep(0, nrow(d)), 0.5))
    expect_equal(both$aux[2], sgfs:::row_derivs(run$spec, c(beta, log(1.7)), 0.5)$aux)
    expect_equal(dim(both$cross), c(nrow(d), 2L))
    ## a model of several predictors a row: along class c's line only, which
    ## moves that class's predictor alone
    y3 <- factor(withr::with_seed(13, sample(letters[1:3], nrow(d), replace = TRUE)))
    run <- engine_spec(x, y3, family = categorical(), intercept = FALSE, weights = w)
    B <- matrix(c(beta, -0.3, 0.4, 0.1), 3L)                  # classes b and c
    E <- unname(x %*% B)
    code <- as.integer(y3)
    l <- function(E) w * (cbind(0, E)[cbind(seq_along(code), code)] - log(1 + rowSums(exp(E))))
    for (cls in 1:2) {
        t <- withr::with_seed(14, rnorm(nrow(d), sd = 0.5))
        at <- function(h) { M <- E; M[, cls] <- M[, cls] + t + h; M }
        out <- sgfs:::row_derivs(run$spec, B, t, cls)
        expect_equal(out$eta, E[, cls], tolerance = 1e-12)
        expect_equal(out$d1, (l(at(h)) - l(at(-h))) / (2 * h), tolerance = 1e-6)
        expect_equal(out$d2, -(l(at(h)) - 2 * l(at(0)) + l(at(-h))) / h^2, tolerance = 1e-4)
    }
    expect_error(sgfs:::row_derivs(run$spec, B, 0, 0L), "must be a class")
    expect_error(sgfs:::row_derivs(run$spec, B, 0, 3L), "must be a class")
    ## a model without a linear predictor a row has none
    net <- engine_spec(x, d$yg, family = gaussian(), intercept = FALSE, model = mlp(2))
    expect_error(sgfs:::row_derivs(net$spec, net$theta0), "no row derivatives")
})
