## Default steps and gradient-evaluation counts.
##
## Each data-derived default step is recomputed here from the formula in its
## sampler's help and from the posterior's curvature at the mode, both
## computed in this file (Newton's method in R, on the standardised scale
## the samplers work on), never by the package's own helpers; and each
## fit's gradient-evaluation count (info$grad_evals, which the reports'
## costs per effective draw divide) is checked against n_iter times the
## sampler's count per iteration.  A doubled default step or a halved count
## used to pass the suite unnoticed (issue 17).
##
## The problem: logistic regression on MASS::Pima.tr (N = 200, 8
## coefficients), priors normal(0, 1.5) and normal(0, 4) on the intercept,
## batches of n = 20 (gamma = 1 + (N/n)(N-n)/(N-1) = 10.05).
##
## Tolerances: the test's mode is exact to rounding (Newton to a decrement
## of 1e-20) and the package's to a decrement of 1e-10, so curvatures there
## agree to about 1e-9 (measured 2e-10): steps taken at the mode, or in its
## whitened coordinates, are compared at 1e-6.  With metric = "identity"
## the package estimates lambda_max by 30 power iterations of
## finite-difference Hessian products at a BFGS mode (measured within 2e-7
## here): 1e-6 too.  The momentum samplers' steps are roots found by
## uniroot() to about 5e-7 of the step: 1e-5.  A doubled step or a halved
## count misses by 50 % or more.

skip_if_not_installed("MASS")

## the posterior in the package's internal coordinates: predictors centred
## and divided by their standard deviation, the intercept as it is; the
## priors' scales apply there (?normal)
pima_posterior <- function() {
    X <- model.matrix(type ~ ., MASS::Pima.tr)
    X <- cbind(1, scale(X[, -1]))
    y <- as.integer(MASS::Pima.tr$type == "Yes")
    prec <- c(1 / 4^2, rep(1 / 1.5^2, ncol(X) - 1))
    b <- double(ncol(X))
    for (k in 1:50) {
        p <- plogis(drop(X %*% b))
        g <- drop(crossprod(X, y - p)) - prec * b
        H <- crossprod(X * sqrt(p * (1 - p))) + diag(prec)
        step <- solve(H, g)
        b <- b + step
        if (sum(step * g) < 1e-20) break
    }
    p <- plogis(drop(X %*% b))
    H <- crossprod(X * sqrt(p * (1 - p))) + diag(prec)
    N <- nrow(X)
    n <- 20
    list(mode = unname(b), H = H, prec = prec, scores = X * (y - p), N = N, n = n,
         gamma = 1 + (N / n) * (N - n) / (N - 1),
         lambda_max = max(eigen(H, symmetric = TRUE, only.values = TRUE)$values))
}

fit_pima <- function(sampler, ..., n_iter = 40) {
    set.seed(17)
    sampler(type ~ ., data = MASS::Pima.tr, prior = normal(0, 1.5),
            prior_intercept = normal(0, 4), batch_size = 20, n_iter = n_iter,
            progress = FALSE, ...)
}

info <- function(fit) attr(fit, "sgfit")

## the scores in the whitened coordinates z = U theta, U = chol(H): U'^-1 g
whiten <- function(scores, H) t(backsolve(chol(H), t(scores), transpose = TRUE))

## E[gbar^2] for the mean gbar of n of the rows of `scores`, drawn without
## replacement: mean^2 + S^2 (N - n) / (n N)
mean_score_sq <- function(scores, n) {
    N <- nrow(scores)
    mu <- colMeans(scores)
    S2 <- colSums(sweep(scores, 2L, mu)^2) / (N - 1)
    mu^2 + S2 * (N - n) / (n * N)
}

## SGHMC's chain linearised in a direction of curvature lambda (the update
## of ?sghmc with the gradient -lambda z plus minibatch noise of variance
## (gamma - 1) lambda):  z' = (1 - eta lambda) z + (1 - a) v + w,
## v' = -eta lambda z + (1 - a) v + w,  Var w = 2 eta a + eta^2 (gamma - 1) lambda.
## Its stationary variance of z, times lambda, less 1 (the inflation), from
## the sum over k of A^k Q A'^k by doubling.
momentum_inflation <- function(eta, a, gamma, lambda) {
    A <- rbind(c(1 - eta * lambda, 1 - a), c(-eta * lambda, 1 - a))
    if (max(Mod(eigen(A, only.values = TRUE)$values)) >= 1) return(Inf)
    S <- (2 * eta * a + eta^2 * (gamma - 1) * lambda) * matrix(1, 2, 2)
    for (k in 1:40) {
        S <- S + A %*% S %*% t(A)
        A <- A %*% A
    }
    S[1, 1] * lambda - 1
}

## the learning rate of 5 % inflation (the smallest: bracketed from below)
momentum_5pct <- function(a, gamma, lambda) {
    hi <- 1e-8 / lambda
    while (momentum_inflation(hi, a, gamma, lambda) < 0.05) hi <- 2 * hi
    uniroot(function(e) momentum_inflation(e, a, gamma, lambda) - 0.05, c(hi / 2, hi),
            tol = 1e-12 * hi)$root
}

test_that("the metric is the curvature at the mode; SGLD's and I-SGD's steps are 0.2 / (gamma lambda_max)", {
    post <- pima_posterior()
    fit <- fit_pima(sgld)
    ## the test's problem is the package's: its priors, its mode and curvature
    expect_equal(info(fit)$spec$prior_prec, post$prec)
    expect_equal(info(fit)$laplace$mode, post$mode, tolerance = 1e-6)
    ## (a given step: no pilot, whose slowed coordinates scale rows of U)
    given <- fit_pima(sgld, stepsize = 0.2 / post$gamma)
    expect_null(info(given)$settings$pilot)
    expect_equal(crossprod(info(given)$spec$metric), post$H, tolerance = 1e-6,
                 ignore_attr = TRUE)
    scale <- diag(info(fit)$spec$metric) / diag(info(given)$spec$metric)
    expect_true(all(scale >= 1 - 1e-12))
    expect_equal(sum(scale > 1 + 1e-12), info(fit)$settings$pilot$slowed)
    ## whitened, lambda_max = 1
    expect_equal(info(fit)$settings$fixed_rows, 0)
    expect_equal(info(fit)$settings$stepsize, 0.2 / post$gamma, tolerance = 1e-6)
    ident <- fit_pima(sgld, metric = "identity")
    expect_equal(info(ident)$settings$stepsize, 0.2 / (post$gamma * post$lambda_max),
                 tolerance = 1e-6)
    ## I-SGD's warm-up step: "as for sgld()" (the papers' rule, unwhitened)
    isgd_fit <- fit_pima(isgd, burnin = 10)
    expect_equal(info(isgd_fit)$settings$warmup_stepsize, 0.2 / (post$gamma * post$lambda_max),
                 tolerance = 1e-6)
})

test_that("pSGLD's step is 0.2 / (gamma lambda_max(G^1/2 H G^1/2)), G from E[gbar^2] at the mode", {
    post <- pima_posterior()
    G_of <- function(scores) 1 / (1e-5 + sqrt(mean_score_sq(scores, post$n)))
    ## whitened (H = I): 0.2 / max_j G_j (1 + V_j), V_j the variance of the
    ## minibatch gradient's noise, N^2 S_j^2 (N - n) / (n N), so that no
    ## coordinate's variance is inflated by more than about 5 %
    W <- whiten(post$scores, post$H)
    G <- G_of(W)
    N <- nrow(W)
    V <- N * apply(W, 2, var) * (N - post$n) / post$n
    fit <- fit_pima(psgld)
    expect_equal(info(fit)$settings$fixed_rows, 0)
    expect_equal(info(fit)$settings$stepsize, 0.2 / max(G * (1 + V)), tolerance = 1e-6)
    ## where the scores' covariance is the curvature's (V = gamma - 1), the
    ## step of 0.2 / (gamma max G); Pima's are near that
    expect_equal(max(G * (1 + V)) / max(G), post$gamma, tolerance = 0.25)
    G <- G_of(post$scores)
    stiff <- max(eigen(sqrt(G) * t(sqrt(G) * post$H), symmetric = TRUE, only.values = TRUE)$values)
    ident <- fit_pima(psgld, metric = "identity")
    expect_equal(info(ident)$settings$stepsize, 0.2 / (post$gamma * stiff), tolerance = 1e-6)
})

test_that("SGLD-CV's step is 0.2 / lambda_max, and the pilot slows the noisiest coordinates", {
    post <- pima_posterior()
    ident <- fit_pima(sgldcv, metric = "identity")
    expect_null(info(ident)$settings$pilot)
    expect_equal(info(ident)$settings$stepsize, 0.2 / post$lambda_max, tolerance = 1e-6)
    ## whitened: 0.2, which the pilot's gradient energy m (< 2 here) keeps
    fit <- fit_pima(sgldcv)
    pilot <- info(fit)$settings$pilot
    expect_equal(pilot$first_step, 0.2)
    expect_lt(pilot$energy, 2)
    expect_equal(pilot$slowed, 0L)
    expect_equal(info(fit)$settings$stepsize, 0.2)
    ## a factor of 150 levels of about 20 rows each and batches of 5: more
    ## rows of high leverage than a minibatch can hold (10 x 5), so some
    ## coordinates' noise would inflate them by more than 5 % at the first
    ## step: those are slowed to 0.2 / (m_j - 1), the slowest to
    ## 0.2 / (max m - 1), the others keep the step.  (A separated level, a
    ## wall of the likelihood, no longer counts: it is updated exactly, off
    ## the rule's steps; test-separation.R.)
    withr::local_seed(5)
    f <- factor(sample(seq_len(150), 3000, TRUE))
    x <- cbind(rnorm(3000), model.matrix(~ f)[, -1])
    y <- rbinom(3000, 1, plogis(x[, 1] + rnorm(150)[f]))
    noisy <- sgldcv(x, y, batch_size = 5L, n_iter = 20, progress = FALSE)
    pilot <- info(noisy)$settings$pilot
    expect_lte(pilot$first_step, 0.2)
    expect_gt(pilot$energy, 2)
    ## (the pilot's energy varies from run to run, 11 to 82 here: the
    ## coordinates are slowed exactly when 0.2 / (energy - 1) is below the
    ## first step)
    expect_identical(pilot$slowed > 0L, 0.2 / (pilot$energy - 1) < pilot$first_step)
    expect_lt(pilot$slowed, ncol(x) + 1L)
    expect_equal(pilot$slowest, min(pilot$first_step, 0.2 / (pilot$energy - 1)))
    expect_equal(pilot$step, pilot$first_step)
    expect_equal(info(noisy)$settings$stepsize, pilot$step)
    expect_lte(info(noisy)$settings$inflation, 0.05 + 1e-12)
})

test_that("SGHMC's and SGNHT's steps inflate the linearised chain's variance by 5 %", {
    post <- pima_posterior()
    fit <- fit_pima(sghmc, friction = 0.1)
    expect_equal(info(fit)$settings$fixed_rows, 0)
    expect_equal(info(fit)$settings$stepsize, momentum_5pct(0.1, post$gamma, 1),
                 tolerance = 1e-5)
    ident <- fit_pima(sghmc, metric = "identity")
    expect_equal(info(ident)$settings$stepsize,
                 momentum_5pct(0.01, post$gamma, post$lambda_max), tolerance = 1e-5)
    ## SGNHT: as SGHMC with friction = diffusion
    nht <- fit_pima(sgnht, diffusion = 0.05)
    expect_equal(info(nht)$settings$stepsize, momentum_5pct(0.05, post$gamma, 1),
                 tolerance = 1e-5)
    ident <- fit_pima(sgnht, metric = "identity")
    expect_equal(info(ident)$settings$stepsize,
                 momentum_5pct(0.01, post$gamma, post$lambda_max), tolerance = 1e-5)
})

test_that("OSGFS's largest step is min(1, 2 / lambda_max(D^-1 M), gamma / 2)", {
    post <- pima_posterior()
    ## M = N(gamma - 1) DCD + DHD, D = (2 / gamma) H^-1, C the score covariance
    ## (divisor N) of the rows not held in every minibatch, N and gamma theirs
    eps_max <- function(held) {
        S <- if (length(held)) post$scores[-held, ] else post$scores
        N <- nrow(S)
        gamma <- 1 + (N / post$n) * (N - post$n) / (N - 1)
        C <- crossprod(sweep(S, 2L, colMeans(S))) / N
        Dm <- (2 / gamma) * solve(post$H)
        M <- N * (gamma - 1) * Dm %*% C %*% Dm + Dm %*% post$H %*% Dm
        lam <- max(Re(eigen(solve(Dm, M), only.values = TRUE)$values))
        min(1, 2 / lam, gamma / 2)
    }
    plain <- fit_pima(osgfs, stratify = FALSE, stepsize = "max", control_variates = FALSE)
    expect_lt(eps_max(NULL), 1)                      # the rule binds here
    expect_equal(info(plain)$settings$stepsize, eps_max(NULL), tolerance = 1e-6)
    ## the default step is 1, the largest reported; with the rows held
    fit <- fit_pima(osgfs, control_variates = FALSE)
    held <- info(fit)$spec$fixed + 1L
    expect_gt(length(held), 0)
    expect_equal(info(fit)$settings$stepsize, 1)
    expect_equal(info(fit)$settings$max_stepsize, eps_max(held), tolerance = 1e-6)
})

test_that("gradient evaluations are n_iter times the count per iteration", {
    n_iter <- 40
    N <- 200
    n <- 20
    held <- function(fit) length(info(fit)$spec$fixed)
    evals <- function(fit) info(fit)$grad_evals
    ## one minibatch score per row drawn, and one per row held in every minibatch
    for (sampler in list(sgld, psgld, sghmc, sgnht)) {
        fit <- fit_pima(sampler)
        expect_equal(info(fit)$n_iter, n_iter)
        expect_equal(evals(fit), n_iter * (n + held(fit)))
    }
    expect_equal(evals(fit_pima(isgd, burnin = 10)), n_iter * n)
    osgfs_fit <- fit_pima(osgfs, control_variates = FALSE)
    expect_gt(held(osgfs_fit), 0)
    expect_equal(evals(osgfs_fit), n_iter * (n + held(osgfs_fit)))
    ## with control variates each drawn row at the chain's point and the mode
    osgfs_cv <- fit_pima(osgfs)
    expect_equal(evals(osgfs_cv), n_iter * (2 * n + held(osgfs_cv)))
    ## SGFS without control variates holds no rows; its step is 4 / alpha^2
    sgfs_fit <- fit_pima(sgfs, alpha = 2, control_variates = FALSE)
    expect_null(info(sgfs_fit)$spec$fixed)
    expect_equal(evals(sgfs_fit), n_iter * n)
    expect_equal(info(sgfs_fit)$eps, 4 / 2^2)
    ## with them (the default) it reads each minibatch row at both points and
    ## each held row once, as sgldcv(); its step is 4 / alpha^2 at the alpha
    ## the held rows leave
    cv_fit <- fit_pima(sgfs, alpha = 2)
    expect_equal(evals(cv_fit), n_iter * (2 * n + held(cv_fit)))
    expect_equal(info(cv_fit)$eps, 4 / info(cv_fit)$settings$alpha^2)
    expect_gte(info(cv_fit)$settings$alpha, 2)
    ## chains add up
    expect_equal(evals(fit_pima(sgld, chains = 2)), 2 * n_iter * n)
    ## SGLD-CV: each drawn row at the chain's point and at the centre, each
    ## held row at the chain's point only: 2 n + |held|
    cv <- fit_pima(sgldcv)
    expect_gt(held(cv), 0)
    expect_equal(evals(cv), n_iter * (2 * n + held(cv)))
    cv <- fit_pima(sgldcv, metric = "identity")
    expect_equal(held(cv), 0)
    expect_equal(evals(cv), n_iter * 2 * n)
    ## full-data samplers: N per leapfrog step, one per MALA iteration
    expect_equal(evals(fit_pima(mala)), n_iter * N)
    expect_equal(evals(fit_pima(hmc, n_leapfrog = 3)), n_iter * 3 * N)
})

test_that("with every row in every batch the momentum rules, pSGLD and I-SGD sample the posterior at their defaults", {
    ## CO2 (84 rows, gaussian: 4 coefficients and log_sigma): the shared
    ## default batch holds every row.  Before: SGHMC's and SGNHT's clip bound
    ## almost every coordinate (sds 25 x), SGNHT's thermostat wandered (1.6 x),
    ## pSGLD's RMSprop followed the chain (1.4 x), I-SGD's log_sigma 5.6 x.
    f <- uptake ~ Type + Treatment + conc
    sds <- function(fit) apply(as.matrix(fit), 2, stats::sd)
    set.seed(20)
    ref <- sds(hmc(f, data = CO2, family = gaussian(), n_iter = 10000, progress = FALSE))
    fits <- list()
    for (smp in c("sghmc", "sgnht", "psgld", "isgd")) {
        set.seed(21)
        fits[[smp]] <- get(smp)(f, data = CO2, family = gaussian(), progress = FALSE,
                                verbose = FALSE)
        ## (at least 400 effective draws each: about 4 % Monte Carlo error on an sd)
        expect_equal(sds(fits[[smp]]), ref, tolerance = 0.15, label = smp)
    }
    expect_lte(info(fits$sgnht)$settings$stepsize, 0.01 * sqrt(5 / 2) * (1 + 1e-12))
    expect_equal(info(fits$psgld)$spec$batch_size, 21L)
    expect_equal(info(fits$sghmc)$spec$batch_size, 84L)
})

test_that("a factor of many rare levels: more rows are held than ten batches when that costs less per unit of step", {
    skip_on_cran()
    ## 400 levels on 700 rows: nearly every row's level is rare, and a jump
    ## of many posterior sd when it is drawn.  At batch 20 ten batches (200
    ## rows) cannot hold them; shrinking the step for the rest cost 25 times
    ## the step (0.0017: min bulk ESS 7, sds 0.74-1.43 of HMC's), holding
    ## 315 rows costs 1.6 times the rows an iteration reads
    set.seed(3)
    d <- data.frame(y = rbinom(700, 1, 0.5), g = factor(sample(400, 700, TRUE)), x = rnorm(700))
    ref <- hmc(y ~ g + x, d, chains = 2, n_iter = 3000, progress = FALSE, verbose = FALSE)
    fit <- withr::with_seed(9, suppressWarnings(
        sgldcv(y ~ g + x, d, batch_size = 20, chains = 2, n_iter = 30000, progress = FALSE,
               verbose = FALSE)))
    expect_gt(info(fit)$settings$fixed_rows, 10 * 20)
    expect_gt(info(fit)$settings$stepsize, 0.02)
    ess_fit <- sgfs:::convergence_table(sgfs:::chain_draws(fit))$ess_bulk
    ess_ref <- sgfs:::convergence_table(sgfs:::chain_draws(ref))$ess_bulk
    expect_gt(min(ess_fit), 20)
    m <- as.matrix(fit)
    r <- as.matrix(ref)
    s_ref <- apply(r, 2, sd)
    ## the means within 4 Monte Carlo standard errors (of both runs; 402
    ## parameters: the largest of them about 3); the sds' ratios about 1,
    ## their spread that of ESS in the hundreds (a skewed marginal's sd
    ## has a relative error about 1.2 / sqrt(2 ESS): 4 % at 400)
    se <- sqrt(apply(m, 2, var) / ess_fit + s_ref^2 / ess_ref)
    expect_lt(max(abs(colMeans(m) - colMeans(r)) / se), 4)
    ratio <- apply(m, 2, sd) / s_ref
    expect_gt(median(ratio), 0.97)
    expect_lt(median(ratio), 1.05)
    expect_gt(quantile(ratio, 0.01), 0.85)
    expect_lt(quantile(ratio, 0.99), 1.2)
})

test_that("on overdispersed counts the pilots of sgld() and sghmc() slow the coordinates their noise inflates", {
    skip_on_cran()
    ## MASS::quine (146 rows, days absent: variance about 13 times the mean):
    ## the minibatch noise is many times what gamma assumes, and the default
    ## steps without the pilot gave sds 1.12-1.14 (SGLD) and 1.19-1.26
    ## (SGHMC) times HMC's in runs of this length
    f <- Days ~ Eth + Sex + Lrn
    d <- MASS::quine
    set.seed(1)
    ref <- hmc(f, d, family = poisson(), n_iter = 40000L, progress = FALSE)
    s_ref <- apply(as.matrix(ref), 2, sd)
    for (sampler in list(sgld, sghmc)) {
        set.seed(2)
        fit <- sampler(f, d, family = poisson(), n_iter = 100000L, progress = FALSE)
        p <- attr(fit, "sgfit")$settings$pilot
        expect_gt(p$slowed, 0L)
        ## (about 650 effective draws: the sd's Monte Carlo error near 3 %)
        expect_lt(max(abs(apply(as.matrix(fit), 2, sd) / s_ref - 1)), 0.1)
    }
})
