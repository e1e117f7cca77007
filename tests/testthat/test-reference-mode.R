## The mode-based rules (SGA, SGLD-CV, OSGFS, I-SGD): C chains equal pure-R
## re-implementations for the same seed; OSGFS's matrices have the stated
## stationary law.

test_that("SGA with momentum: C iterates equal the R reference", {
    p <- ref_problem()
    mu <- 0.5
    sga_update <- function(theta, grad, G, eps, t, state, prec) {
        if (t == 1) state$prev <- theta
        new <- theta + eps * grad + mu * (theta - state$prev)
        list(theta = new, state = list(prev = theta))
    }
    set.seed(61)
    fit <- sga(p$x, p$y, prior = normal(0, 1), batch_size = 10L, n_iter = 40L,
               burnin = 0L, standardize = FALSE, progress = FALSE, stepsize = 0.01,
               schedule = "constant", momentum = mu)
    set.seed(61)
    r <- r_chain(p, 3, 10L, 40L, function(t) 0.01, sga_update)
    expect_equal(unname(as.matrix(fit$trajectory)), r, tolerance = 1e-12)
    expect_equal(unname(coef(fit)), colMeans(r), tolerance = 1e-12)
})

test_that("SGA finds the full-data mode (Polyak averaging)", {
    p <- ref_problem(N = 400)
    post <- function(b) sum(dbinom(p$y, 1, plogis(drop(p$X %*% b)), log = TRUE)) -
        sum(b^2) / 2
    mode <- optim(double(3), function(b) -post(b), method = "BFGS",
                  control = list(reltol = 1e-12))$par
    sd <- sqrt(diag(solve(optimHess(mode, function(b) -post(b)))))
    set.seed(62)
    fit <- sga(p$x, p$y, prior = normal(0, 1), batch_size = 20L, standardize = FALSE,
               progress = FALSE)
    ## the averaged iterates' minibatch noise: variance about (gamma - 1) / 5000
    ## posterior variances per coordinate (sd 0.06 posterior sd)
    expect_lt(max(abs(coef(fit) - mode) / sd), 0.25)
    expect_s3_class(fit$trajectory, "mcmc")
    expect_output(print(fit), "SGA posterior mode")
})

test_that("SGLD-CV: C chain equals the R reference (same minibatch in both sums)", {
    for (fam in list(binomial(), gaussian())) {
        p <- ref_problem(fam)
        D <- if (fam$family == "binomial") 3 else 4
        centre <- c(0.3, -0.2, 0.1, 0)[seq_len(D)]
        set.seed(63)
        cc <- c_chain(sgldcv, p, 10L, 40L, stepsize = 0.01, centre = centre)
        set.seed(63)
        rc <- r_chain(p, D, 10L, 40L, function(t) 0.01, sgld_update, theta0 = centre,
                      centre = centre)
        expect_equal(unname(cc), rc, tolerance = 1e-12)
    }
})

test_that("the control-variate gradient is unbiased and exact at the centre", {
    ## algorithms vignette 5.3: averaged over minibatches it is the full gradient
    p <- ref_problem(N = 40)
    spec <- engine_spec(p$x, p$y, batch_size = 8L)$spec
    centre <- c(0.2, 0.5, -0.4)
    theta <- c(-0.1, 0.9, -0.7)
    full <- function(th) .Call(sgfs:::C_sgfs_model_loglik, spec, th)$grad
    cv <- function(idx) full(centre) + 40 / 8 *
        (model_eval(spec, theta, idx)$grad - model_eval(spec, centre, idx)$grad)
    set.seed(64)
    est <- rowMeans(replicate(4000, cv(sample.int(40, 8))))
    draws <- replicate(400, cv(sample.int(40, 8)))
    se <- apply(draws, 1L, sd) / sqrt(4000)
    expect_true(all(abs(est - full(theta)) < 4 * se))
    ## at theta = centre it has no noise
    theta <- centre
    expect_equal(cv(1:8), full(centre), tolerance = 1e-12)
})

test_that("OSGFS: C chain equals the R reference with the fit's matrices", {
    p <- ref_problem()
    set.seed(65)
    fit <- quiet(osgfs(p$x, p$y, prior = normal(0, 1), batch_size = 10L, n_iter = 40L,
                       burnin = 0L, standardize = FALSE, progress = FALSE, stepsize = 0.5,
                       mode = c(0.2, 0.8, -0.9)))
    info <- attr(fit, "sgfit")
    A <- matrix(info$spec$spar[1:9], 3)
    R <- matrix(info$spec$spar[10:18], 3)
    start <- info$settings$mode
    set.seed(65)
    upd <- function(theta, grad, G, eps, t, state, prec)
        list(theta = theta + drop(A %*% grad) + drop(R %*% engine_rnorm(3)), state = state)
    r <- r_chain(p, 3, 10L, 40L, function(t) 0.5, upd, theta0 = start)
    expect_equal(unname(sgfs:::all_draws(fit)), r, tolerance = 1e-10)
    ## the matrices are those of algorithms vignette 2.9 at the full-data mode
    spec <- sgfs:::fit_spec(info)
    cur <- sgfs:::full_curvature(spec, start, cov = TRUE)
    expect_lt(max(abs(cur$grad)), 1e-6)                  # Newton-polished mode
    gamma <- 1 + 50 / 10 * 40 / 49
    Dm <- 2 / gamma * solve(cur$H)
    Q <- 2 * 0.5 * Dm - 0.25 * (50 * (gamma - 1) * Dm %*% cur$C %*% Dm + Dm %*% cur$H %*% Dm)
    expect_equal(A, 0.5 * Dm, tolerance = 1e-8)
    expect_equal(R %*% t(R), Q, tolerance = 1e-8)
})

test_that("OSGFS with fixed rows: the pool's score covariance, and the C chain replayed in R", {
    p <- ref_problem(N = 200)
    p$x[3, ] <- c(-30, 25)             # an outlying, misfitted row (y = 1): in every minibatch
    p$X[3, -1] <- p$x[3, ]
    fit_of <- function(...) {
        set.seed(66)
        quiet(osgfs(p$x, p$y, prior = normal(0, 1), batch_size = 10L, n_iter = 40L,
                    burnin = 0L, standardize = FALSE, progress = FALSE, stepsize = 0.5,
                    control_variates = FALSE, ...))
    }
    fit <- fit_of()
    info <- attr(fit, "sgfit")
    fixed <- info$spec$fixed + 1L
    expect_true(3L %in% fixed)
    expect_lt(length(fixed), 20)
    expect_equal(info$settings$fixed_rows, length(fixed))
    expect_null(attr(fit_of(stratify = FALSE), "sgfit")$spec$fixed)
    ## C over the pool rows, against the scores computed in R
    start <- sgfs:::to_internal(info$settings$mode, info$design)    # the mode
    pool <- setdiff(seq_len(200), fixed)
    S <- r_scores(p, start, pool)
    C_pool <- crossprod(sweep(S, 2L, colMeans(S))) / length(pool)
    got <- sgfs:::pool_score_cov(sgfs:::fit_spec(info), start, fixed - 1L)
    expect_equal(got$N, length(pool))
    expect_equal(got$C, C_pool, tolerance = 1e-10)
    ## the matrices use the pool's N, gamma and C
    cur <- sgfs:::full_curvature(sgfs:::fit_spec(info), start)
    gamma <- 1 + length(pool) / 10 * (length(pool) - 10) / (length(pool) - 1)
    Dm <- 2 / gamma * solve(cur$H)
    A <- matrix(info$spec$spar[1:9], 3)
    R <- matrix(info$spec$spar[10:18], 3)
    expect_equal(A, 0.5 * Dm, tolerance = 1e-8)
    Q <- 0.5 * 2 * Dm - 0.25 * (length(pool) * (gamma - 1) * Dm %*% C_pool %*% Dm +
                                Dm %*% cur$H %*% Dm)
    expect_equal(R %*% t(R), Q, tolerance = 1e-8)
    ## the chain: minibatches from the pool with weight (N - |F|) / n, plus
    ## the fixed rows' exact scores
    set.seed(66)
    theta <- start
    out <- matrix(NA_real_, 40, 3)
    for (t in 1:40) {
        idx <- pool[r_minibatch(length(pool), 10L)]
        g <- length(pool) / 10 * colSums(r_scores(p, theta, idx)) +
            colSums(r_scores(p, theta, fixed)) - theta
        theta <- theta + drop(A %*% g) + drop(R %*% engine_rnorm(3))
        out[t, ] <- theta
    }
    expect_equal(unname(sgfs:::all_draws(fit)), out, tolerance = 1e-10)
})

test_that("OSGFS's noise gives the exact stationary covariance H^-1 (linear-Gaussian oracle)", {
    ## algorithms vignette 5.1: z' = (I - A H) z + (gradient noise) + R xi; Var = H^-1
    set.seed(66)
    D <- 4
    B <- matrix(rnorm(D * D), D)
    H <- crossprod(B) + diag(D)
    N <- 1000
    for (n in c(10, 500)) {
        for (Cs in list(H / N, H / N * 0.7 + diag(0.1, D) / N)) {
            for (eps in c(1, 0.3, "max")) {
                rule <- sgfs:::osgfs_rule(H, Cs, N, n, eps)
                if (rule$excess > 0) next                    # Q clipped: not exact
                gamma <- 1 + N / n * (N - n) / (N - 1)
                M <- diag(D) - rule$A %*% H
                Qtot <- rule$A %*% (N * (gamma - 1) * Cs) %*% t(rule$A) + rule$R %*% t(rule$R)
                S <- matrix(solve(diag(D^2) - kronecker(M, M), c(Qtot)), D)
                expect_equal(S, solve(H), tolerance = 1e-8)
            }
        }
    }
    ## at C = H/N and eps = 1 nothing is injected
    expect_lt(max(abs(sgfs:::osgfs_rule(H, H / N, N, 10, 1)$R)), 1e-6)
    ## a noisier C: "max" is the largest eps with Q >= 0, and eps = 1 reports the excess
    big <- sgfs:::osgfs_rule(H, 2 * H / N, N, 10, "max")
    expect_lt(big$eps, 1)
    expect_equal(sgfs:::osgfs_rule(H, 2 * H / N, N, 10, 1)$excess, 1 / big$eps - 1,
                 tolerance = 1e-8)
    ## the default step: 1, or gamma / 2 where that is smaller (all rows: 1/2,
    ## where 1 would mirror a Gaussian chain deterministically)
    expect_equal(sgfs:::osgfs_rule(H, H / N, N, 10, NULL)$eps, 1)
    expect_equal(sgfs:::osgfs_rule(H, H / N, N, N, NULL)$eps, 0.5)
    n3 <- as.integer(0.75 * N)
    expect_equal(sgfs:::osgfs_rule(H, H / N, N, n3, NULL)$eps, sgfs:::gamma_fpc(N, n3) / 2)
    expect_lt(sgfs:::gamma_fpc(N, n3) / 2, 1)
    ## so osgfs() at its defaults samples a small data set (all its rows in
    ## every batch) instead of refusing its own default
    set.seed(3)
    fit <- osgfs(uptake ~ Type + Treatment + conc, data = CO2, family = gaussian(),
                 n_iter = 4000, progress = FALSE, control_variates = FALSE)
    expect_equal(attr(fit, "sgfit")$settings$stepsize, 0.5)
    set.seed(3)
    ref <- hmc(uptake ~ Type + Treatment + conc, data = CO2, family = gaussian(),
               n_iter = 4000, progress = FALSE)
    expect_equal(apply(as.matrix(fit), 2, sd), apply(as.matrix(ref), 2, sd), tolerance = 0.15)
    expect_error(osgfs(uptake ~ conc, data = CO2, family = gaussian(), stepsize = 1,
                       n_iter = 10, progress = FALSE, control_variates = FALSE), "deterministic")
})

test_that("I-SGD: C chain equals the R reference (warm-up, then isotropic noise)", {
    for (fam in list(binomial(), gaussian())) {
        p <- ref_problem(fam)
        D <- if (fam$family == "binomial") 3 else 4
        groups <- if (D == 3) c(1, 1, 1) else c(1, 1, 1, 2)
        isgd_update <- function(theta, grad, G, eps, t, state, prec) {
            if (t == 1) state <- list(acc = c(0, 0), tau = NULL)
            if (t <= 20) {
                if (t > 10) state$acc <- state$acc + tapply(grad^2, factor(groups, 1:2), sum, default = 0)
                if (t == 20) state$tau <- pmax(state$acc / 10, floors)
                return(list(theta = theta + eps / 2 * grad + sqrt(eps) * engine_rnorm(D), state = state))
            }
            tau <- state$tau[groups]
            w <- sqrt(pmax(tau - grad^2, 0)) * engine_rnorm(D)
            list(theta = theta + 2 / tau * (grad + w), state = state)
        }
        set.seed(67)
        fit <- quiet(isgd(p$x, p$y, family = fam, prior = normal(0, 1), batch_size = 10L,
                          n_iter = 40L, burnin = 20L, standardize = FALSE, progress = FALSE,
                          init = NULL, stepsize = 0.01))
        ## each group's tau at least 21 times its block's largest curvature at the mode
        H <- r_mode_curvature(p, D)
        floors <- vapply(1:2, function(g) if (!any(groups == g)) 0 else
            21 * max(eigen(H[groups == g, groups == g, drop = FALSE])$values), 0)
        spar <- attr(fit, "sgfit")$spec$spar
        expect_equal(unname(spar[-seq_len(2 + D)]), floors[groups], tolerance = 1e-4)
        floors <- unname(spar[-seq_len(2 + D)])[match(1:2, groups)]
        floors[is.na(floors)] <- 0
        set.seed(67)
        ri <- r_chain(p, D, 10L, 40L, function(t) 0.01, isgd_update)
        expect_equal(unname(sgfs:::all_draws(fit)), ri[21:40, ], tolerance = 1e-12)
    }
})

test_that("I-SGD's update has variance eps_p per coordinate (Gaussian target)", {
    ## scalar oracle: with total noise tau on the gradient and step 4/tau the
    ## stationary variance is 1 / (a (1 - eps a / 4)) (algorithms vignette 5.1)
    cd <- conjugate_data(N = 2000, D = 3, seed = 3)
    set.seed(68)
    fit <- isgd(cd$x, cd$y, family = gaussian(), sigma = 1, prior = normal(0, 1),
                standardize = FALSE, batch_size = 20, n_iter = 1000000, burnin = 2000,
                thin = 25, progress = FALSE)
    info <- attr(fit, "sgfit")
    eps <- sgfs:::isgd_steps(info)[1]
    A <- solve(cd$cov)
    S <- solve(A - eps * A %*% A / 4)                   # linear-recursion law
    expect_gt(min(coda::effectiveSize(fit)), 2000)
    ratio <- diag(vcov(fit)) / diag(S)
    expect_lt(max(abs(ratio - 1)), 0.1)
    expect_lt(max(abs(coef(fit) - cd$mean) / sqrt(diag(cd$cov))), 0.1)
})

test_that("OSGFS's largest step stops at gamma / 2: at batch_size = N it samples, not freezes", {
    data(Pima.tr, package = "MASS", envir = environment())
    set.seed(84)
    fit <- osgfs(type ~ glu + bmi, data = Pima.tr, batch_size = 200, stepsize = "max",
                 n_iter = 3000, progress = FALSE, control_variates = FALSE)
    expect_equal(attr(fit, "sgfit")$settings$stepsize, 0.5)
    ref <- glm(type ~ glu + bmi, data = Pima.tr, family = binomial())
    ratio <- sqrt(diag(vcov(fit)) / diag(vcov(ref)))
    expect_true(all(ratio > 0.85 & ratio < 1.15))
})
