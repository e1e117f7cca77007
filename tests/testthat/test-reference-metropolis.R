## MALA and HMC: the C chain equals a pure-R replay (mass matrix, leapfrog,
## Metropolis step, step-size adaptation), and MALA is HMC with one leapfrog
## step.

## R replay of sampler_hmc.c on the reference problem (prior normal(0, 1))
## (L = 0: random trajectory lengths T (0.5 + U), in ceil(T_t / h) steps)
r_hmc <- function(p, n_iter, h0, L, target, burnin, U, theta0, adapt = TRUE,
                  length = 0) {
    D <- length(theta0)
    logpost <- function(b) {
        eta <- drop(p$X %*% b)
        list(value = sum(p$y * eta - log1p(exp(eta))) + sum(dnorm(b, log = TRUE)),
             grad = drop(crossprod(p$X, p$y - plogis(eta))) - b)
    }
    theta <- theta0
    cur <- logpost(theta)
    log_h <- log(h0)
    sums <- c(0, 0)
    out <- matrix(NA_real_, n_iter, D)
    ratios <- double(n_iter)
    for (t in seq_len(n_iter)) {
        h <- exp(log_h)
        steps <- L
        if (L == 0) {
            T_t <- length * (0.5 + runif(1))
            steps <- max(1, ceiling(T_t / h))
            h <- T_t / steps
        }
        z <- drop(U %*% theta)
        mom <- engine_rnorm(D)
        k0 <- sum(mom^2) / 2
        mom <- mom + h / 2 * backsolve(U, cur$grad, transpose = TRUE)
        for (k in seq_len(steps)) {
            z <- z + h * mom
            prop_theta <- backsolve(U, z)
            prop <- logpost(prop_theta)
            mom <- mom + (if (k < steps) h else h / 2) * backsolve(U, prop$grad, transpose = TRUE)
        }
        log_ratio <- prop$value - cur$value + k0 - sum(mom^2) / 2
        ratios[t] <- log_ratio
        a <- min(1, exp(log_ratio))
        if (runif(1) < a) {
            theta <- prop_theta
            cur <- prop
        }
        if (adapt && t <= burnin) {
            log_h <- log_h + (a - target) / t^0.6
            if (t > burnin / 2) sums <- sums + c(log_h, 1)
            if (t == burnin) log_h <- sums[1] / sums[2]
        }
        out[t, ] <- theta
    }
    list(draws = out, log_h = log_h, log_ratio = ratios)
}

hmc_case <- function(fun, p, mass, ...) {
    set.seed(71)
    fit <- quiet(fun(p$x, p$y, prior = normal(0, 1), n_iter = 40L, burnin = 10L,
                     standardize = FALSE, progress = FALSE, mass = mass,
                     init = c(0.1, 0.5, -0.5), ...))
    info <- attr(fit, "sgfit")
    spar <- unname(info$spec$spar)
    list(fit = fit, info = info, target = spar[1], L = spar[2], length = spar[4],
         U = matrix(spar[-(1:4)], 3))
}

test_that("HMC: C chain equals the R replay (dense, diagonal and identity mass)", {
    p <- ref_problem(N = 50)
    for (mass in c("dense", "diagonal", "identity")) {
        cs <- hmc_case(hmc, p, mass, stepsize = 0.4, n_leapfrog = 3L)
        expect_equal(cs$L, 3)
        set.seed(71)
        r <- r_hmc(p, 40, 0.4, 3, 0.8, 10, cs$U, c(0.1, 0.5, -0.5))
        expect_equal(unname(sgfs:::all_draws(cs$fit)), r$draws[11:40, ], tolerance = 1e-10)
        expect_equal(cs$info$eps, exp(r$log_h), tolerance = 1e-10)
        ## the frozen step and the reported acceptance rate
        moved <- sum(rowSums(abs(diff(r$draws[10:40, ]))) > 0)
        expect_equal(sgfs:::acceptance_rate(cs$info), moved / 30)
    }
    ## random trajectory lengths (the default)
    cs <- hmc_case(hmc, p, "dense", stepsize = 0.4)
    expect_equal(cs$L, 0)
    expect_gt(cs$length, 1)
    set.seed(71)
    r <- r_hmc(p, 40, 0.4, 0, 0.8, 10, cs$U, c(0.1, 0.5, -0.5), length = cs$length)
    expect_equal(unname(sgfs:::all_draws(cs$fit)), r$draws[11:40, ], tolerance = 1e-10)
    expect_output(print(cs$fit), "HMC \\(trajectory length .*, random")
    ## the dense mass is minus the Hessian of the log posterior at the mode
    cs <- hmc_case(hmc, p, "dense", stepsize = 0.4, n_leapfrog = 3L)
    post <- function(b) sum(dbinom(p$y, 1, plogis(drop(p$X %*% b)), log = TRUE)) -
        sum(b^2) / 2
    mode <- optim(double(3), function(b) -post(b), method = "BFGS",
                  control = list(reltol = 1e-14))$par
    expect_equal(crossprod(cs$U), optimHess(mode, function(b) -post(b)), tolerance = 1e-5)
})

test_that("MALA is HMC with one leapfrog step, and its ratio is the Langevin one", {
    p <- ref_problem(N = 50)
    cs <- hmc_case(mala, p, "dense", stepsize = 0.7)
    expect_equal(cs$L, 1)
    expect_equal(cs$target, 0.574)
    set.seed(71)
    r <- r_hmc(p, 40, 0.7, 1, 0.574, 10, cs$U, c(0.1, 0.5, -0.5))
    expect_equal(unname(sgfs:::all_draws(cs$fit)), r$draws[11:40, ], tolerance = 1e-10)
    ## one leapfrog step's Metropolis ratio equals MALA's with proposal
    ## theta + (h^2/2) M^-1 grad + h M^-1/2 xi (algorithms vignette 2.2)
    U <- cs$U
    Minv <- chol2inv(U)
    logpost <- function(b) sum(p$y * drop(p$X %*% b) - log1p(exp(drop(p$X %*% b)))) +
        sum(dnorm(b, log = TRUE))
    grad <- function(b) drop(crossprod(p$X, p$y - plogis(drop(p$X %*% b)))) - b
    h <- 0.7
    logq <- function(a, b) {                   # log q(a | b), M-metric
        d <- a - b - h^2 / 2 * drop(Minv %*% grad(b))
        -sum(d * drop(crossprod(U) %*% d)) / (2 * h^2)
    }
    set.seed(72)
    theta <- c(0.1, 0.5, -0.5)
    xi <- engine_rnorm(3)
    prop <- theta + h^2 / 2 * drop(Minv %*% grad(theta)) + h * backsolve(U, xi)
    langevin <- logpost(prop) - logpost(theta) + logq(theta, prop) - logq(prop, theta)
    set.seed(72)
    one <- r_hmc(p, 1, h, 1, 0.574, 0, U, theta, adapt = FALSE)
    expect_equal(one$log_ratio, langevin, tolerance = 1e-10)
})

test_that("MALA and HMC find the mode of a gaussian model whose Hessian is indefinite at the start", {
    ## minus the Hessian in (beta, log sigma) is indefinite at 0 when x
    ## explains most of y: Newton's method needs Levenberg's regularisation
    withr::with_seed(81, {
        x <- matrix(rnorm(1000), 500, 2)
        y <- drop(x %*% c(2, -1)) + rnorm(500, sd = 0.5)
    })
    set.seed(82)
    fit <- mala(x, y, family = gaussian(), n_iter = 2000, progress = FALSE)
    ref <- lm(y ~ x)
    expect_lt(max(abs(coef(fit)[1:3] - coef(ref)) / sqrt(diag(vcov(ref)))), 0.3)
    expect_equal(unname(exp(coef(fit)[4])), summary(ref)$sigma, tolerance = 0.05)
    expect_s3_class(hmc(x, y, family = gaussian(), n_iter = 500, progress = FALSE), "sgfit")
})

test_that("the reported gradient evaluations count HMC's leapfrog steps", {
    p <- ref_problem(N = 50)
    set.seed(83)
    fit <- hmc(p$x, p$y, n_iter = 200, progress = FALSE)
    steps <- attr(fit, "sgfit")$states[[1]]$sstate[8]
    expect_gt(steps, 200)
    expect_equal(attr(fit, "sgfit")$grad_evals, 50 * steps)
})

test_that("the curvature entry survives garbage collection at every allocation", {
    skip_on_cran()
    p <- ref_problem(N = 12)
    spec <- engine_spec(p$x, p$y, batch_size = 5L)$spec
    ref <- .Call(sgfs:::C_sgfs_model_curvature, spec, c(0.1, 0.2, -0.3), TRUE)
    gctorture(TRUE)
    out <- .Call(sgfs:::C_sgfs_model_curvature, spec, c(0.1, 0.2, -0.3), TRUE)
    gctorture(FALSE)
    expect_identical(out, ref)
})
