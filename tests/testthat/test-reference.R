## Each sampler's C chain equals a pure-R re-implementation of its update,
## replaying the same random numbers (minibatch draws, then normals).


## `blocks` (sizes of contiguous parameter blocks): SGFS-b, whose Fisher
## estimate is the block-diagonal part of SGFS-f's
## `H`: the curvature sgfs(curvature = TRUE) puts in place of N I + Lambda
## (the full matrix; its diagonal for the diagonal rule)
## at temperature T (`temperature`): gamma_T = 1 + (gamma - 1) / T for gamma,
## the noise sqrt(T) times larger (src/fisher.c)
sgfs_update <- function(N, n, restart, full = TRUE, burnin = 0, guard = TRUE,
                        blocks = NULL, fisher_rows = NULL, H = NULL, temperature = 1) {
    gamma <- 1 + (N / n * (N - n) / (N - 1)) / temperature
    root_T <- sqrt(temperature)
    if (!is.null(blocks)) {
        label <- rep(seq_along(blocks), blocks)
        in_block <- outer(label, label, "==")
    }
    ## trust region during burn-in and while I has seen fewer than 2D
    ## examples: the step 2x, x = A^{-1} r, is shrunk to q = 4D
    ## the Fisher estimate's rows: by default sgfs()'s (its values are
    ## checked below)
    rows <- function(D) if (is.null(fisher_rows)) sgfs:::default_fisher_rows(n, D) else fisher_rows
    shrink <- function(x, r, t) {
        q <- 4 * sum(x * r)
        D <- length(x)
        early <- guard && (t <= burnin || t * (rows(D) - 1) < 2 * D)
        if (early && q > 4 * D) sqrt(4 * D / q) else 1
    }
    update <- function(theta, grad, G, eps, t, state, prec) {
        D <- length(theta)
        V <- cov(G[seq_len(rows(D)), , drop = FALSE])   # the batch's first rows
        if (!full) V <- diag(V)
        if (!is.null(blocks)) V <- V * in_block
        if (is.null(state$I)) state <- list(I = 0 * V, count = 0)
        ## the restart: the mean so far counts as 2D rows' worth
        if (t == restart) state$count <- min(state$count, ceiling(2 * D / (rows(D) - 1)))
        state$count <- state$count + 1
        state$I <- state$I + (V - state$I) / state$count
        a2 <- if (is.finite(eps)) 4 / eps else 0
        if (full) {
            A <- if (is.null(H)) gamma * N * (1 + a2) * state$I + diag(prec, D)
                 else (gamma * (1 + a2) - 1) * N * state$I + (if (is.null(blocks)) H else H * in_block)
            rhs <- grad
            if (a2 > 0)
                rhs <- rhs + root_T * sqrt(a2 * gamma * N) *
                    drop(crossprod(chol(state$I), engine_rnorm(D)))
            x <- drop(solve(A, rhs))
            theta <- theta + 2 * shrink(x, rhs, t) * x
        } else {
            f <- pmax(state$I, prec / N)
            rhs <- grad
            if (a2 > 0) rhs <- rhs + root_T * sqrt(a2 * gamma * N * f) * engine_rnorm(D)
            x <- rhs / (if (is.null(H)) gamma * N * (1 + a2) * f + prec
                        else (gamma * (1 + a2) - 1) * N * f + H)
            theta <- theta + 2 * shrink(x, rhs, t) * x
        }
        list(theta = theta, state = state)
    }
    structure(update, front = rows)
}

sghmc_update <- function(alpha, L, est, N, n) {
    function(theta, grad, G, eps, t, state, prec) {
        D <- length(theta)
        if (t == 1 || (L > 0 && (t - 1) %% L == 0)) state$v <- sqrt(eps) * engine_rnorm(D)
        beta <- if (est) eps / 2 * N^2 / n * apply(G, 2, var) else 0
        noise <- sqrt(2 * eps * pmax(alpha - beta, 0))
        state$v <- (1 - alpha) * state$v + eps * grad + noise * engine_rnorm(D)
        list(theta = theta + state$v, state = state)
    }
}

test_that("SGLD: C chain equals the R reference (constant and polynomial steps)", {
    p <- ref_problem()
    set.seed(42)
    c1 <- c_chain(sgld, p, 10L, 40L, stepsize = 0.01)
    set.seed(42)
    r1 <- r_chain(p, 3, 10L, 40L, function(t) 0.01, sgld_update)
    expect_equal(unname(c1), r1, tolerance = 1e-12)

    set.seed(43)
    c2 <- c_chain(sgld, p, 10L, 40L, stepsize = 0.02,
                  schedule = schedule_polynomial(b = 10, delta = 0.6))
    set.seed(43)
    r2 <- r_chain(p, 3, 10L, 40L, function(t) 0.02 * (11 / (10 + t))^0.6, sgld_update)
    expect_equal(unname(c2), r2, tolerance = 1e-12)

    ## cyclical: 4 cycles over 40 iterations, cycles of 10
    set.seed(44)
    c3 <- c_chain(sgld, p, 10L, 40L, stepsize = 0.02, schedule = schedule_cyclical(cycles = 4))
    set.seed(44)
    cyc <- function(t) 0.01 * (cos(pi * ((t - 1) %% 10) / 10) + 1)
    r3 <- r_chain(p, 3, 10L, 40L, cyc, sgld_update)
    expect_equal(unname(c3), r3, tolerance = 1e-12)
    ## an explicit cycle length and scale; the same schedule for SGHMC
    set.seed(45)
    c4 <- c_chain(sghmc, p, 10L, 40L, friction = 0.2,
                  schedule = schedule_cyclical(cycle_length = 7, a = 1e-3))
    set.seed(45)
    r4 <- r_chain(p, 3, 10L, 40L, function(t) 5e-4 * (cos(pi * ((t - 1) %% 7) / 7) + 1),
                  sghmc_update(0.2, 0, FALSE, 50, 10))
    expect_equal(unname(c4), r4, tolerance = 1e-12)
    ## the step halved every 7 iterations; in epochs, 2 epochs of 50 rows
    ## in batches of 10 are 10 iterations
    set.seed(46)
    c5 <- c_chain(sgld, p, 10L, 40L, stepsize = 0.02, schedule = schedule_step(every = 7))
    set.seed(46)
    r5 <- r_chain(p, 3, 10L, 40L, function(t) 0.02 * 0.5^((t - 1) %/% 7), sgld_update)
    expect_equal(unname(c5), r5, tolerance = 1e-12)
    set.seed(47)
    c6 <- c_chain(sgld, p, 10L, 40L, stepsize = 0.02,
                  schedule = schedule_step(epochs = 2, factor = 0.8))
    set.seed(47)
    r6 <- r_chain(p, 3, 10L, 40L, function(t) 0.02 * 0.8^((t - 1) %/% 10), sgld_update)
    expect_equal(unname(c6), r6, tolerance = 1e-12)
})

test_that("SGFS-f: C chain equals the R reference (alpha 0 and > 0, restart, gaussian)", {
    p <- ref_problem()
    for (alpha in c(0, 1.5)) {
        set.seed(44)
        fit <- quiet(sgfs(robust = FALSE, curvature = FALSE, p$x, p$y, prior = normal(0, 1), batch_size = 10L, n_iter = 40L,
                          burnin = 10L, standardize = FALSE, progress = FALSE, alpha = alpha))
        set.seed(44)
        eps <- if (alpha > 0) 4 / alpha^2 else Inf
        r <- r_chain(p, 3, 10L, 40L, function(t) eps,
                     sgfs_update(50, 10, restart = 6, burnin = 10))
        expect_equal(unname(sgfs:::all_draws(fit)), r[11:40, ], tolerance = 1e-10)
    }
    ## at temperature T (full and diagonal)
    for (pre in c("full", "diagonal")) {
        set.seed(48)
        fit <- quiet(sgfs(robust = FALSE, curvature = FALSE, p$x, p$y, prior = normal(0, 1),
                          batch_size = 10L, n_iter = 40L, burnin = 10L, standardize = FALSE,
                          progress = FALSE, alpha = 1.5, preconditioner = pre, temperature = 0.3))
        set.seed(48)
        r <- r_chain(p, 3, 10L, 40L, function(t) 4 / 1.5^2,
                     sgfs_update(50, 10, restart = 6, burnin = 10, full = pre == "full",
                                 temperature = 0.3))
        expect_equal(unname(sgfs:::all_draws(fit)), r[11:40, ], tolerance = 1e-10)
    }
    ## the Fisher estimate from the first 4 of each batch's 10 rows (full and
    ## diagonal); by default max(D + 1, 2 n / D) of them, at most n
    for (pre in c("full", "diagonal")) {
        set.seed(49)
        fit <- quiet(sgfs(robust = FALSE, curvature = FALSE, p$x, p$y, prior = normal(0, 1), batch_size = 10L,
                          n_iter = 40L, burnin = 10L, standardize = FALSE, progress = FALSE,
                          alpha = 1.5, fisher_rows = 4L, preconditioner = pre))
        expect_equal(attr(fit, "sgfit")$spec$fisher_rows, 4L)
        set.seed(49)
        r <- r_chain(p, 3, 10L, 40L, function(t) 4 / 1.5^2,
                     sgfs_update(50, 10, restart = 6, burnin = 10, full = pre == "full",
                                 fisher_rows = 4L))
        expect_equal(unname(sgfs:::all_draws(fit)), r[11:40, ], tolerance = 1e-10)
    }
    expect_equal(sgfs:::default_fisher_rows(100L, 2L), 100L)
    expect_equal(sgfs:::default_fisher_rows(100L, 8L), 25L)
    expect_equal(sgfs:::default_fisher_rows(500L, 55L), 56L)
    expect_equal(sgfs:::default_fisher_rows(1000L, 12L), 167L)
    expect_equal(sgfs:::default_fisher_rows(50L, 40L), 41L)
    expect_equal(sgfs:::default_fisher_rows(50L, 60L), 50L)
    ## SGFS's default burn-in when the chains set the run's length: log(far)
    ## e-folds of (1 + alpha^2) gamma / 2 iterations from `far` posterior
    ## sds off (20,000: about 10 e-folds; from a subset's mode fewer), the
    ## run keeping its draws; a given n_iter keeps its tenth
    run <- list(spec = list(N = 500000L, batch_size = 500L, burnin = 1000L), n_iter = 10000L,
                grow = TRUE)
    efold <- (1 + 1) * (1 + 1000 * 499500 / 499999) / 2
    need <- ceiling(log(20000) * efold)
    grown <- sgfs:::sgfs_burnin(run, 1)
    expect_equal(c(grown$spec$burnin, grown$n_iter), c(need, need + 9000))
    near <- sgfs:::sgfs_burnin(run, 1, far = 5 * sqrt(10))
    expect_equal(near$spec$burnin, ceiling(log(5 * sqrt(10)) * efold))
    run$grow <- FALSE
    expect_identical(sgfs:::sgfs_burnin(run, 1), run)
    run$grow <- TRUE
    run$spec$N <- 2000L
    expect_identical(sgfs:::sgfs_burnin(run, 1), run)
    expect_error(sgfs(p$x, p$y, batch_size = 10L, fisher_rows = 11L, n_iter = 10L),
                 "fisher_rows")
    ## a batch smaller than D: the trust region binds while the Fisher
    ## estimate is rank deficient (t (n - 1) < 2D), even without burn-in
    set.seed(48)
    fit <- quiet(sgfs(robust = FALSE, curvature = FALSE, p$x, p$y, prior = normal(0, 1), batch_size = 2L, n_iter = 30L,
                      burnin = 0L, standardize = FALSE, progress = FALSE, alpha = 0))
    set.seed(48)
    r <- r_chain(p, 3, 2L, 30L, function(t) Inf, sgfs_update(50, 2, restart = 0))
    expect_equal(unname(sgfs:::all_draws(fit)), r, tolerance = 1e-10)
    set.seed(48)
    r_free <- r_chain(p, 3, 2L, 30L, function(t) Inf,
                      sgfs_update(50, 2, restart = 0, guard = FALSE))
    expect_gt(max(abs(r - r_free)), 0.1)             # the guard did bind
    g <- ref_problem(gaussian())
    set.seed(45)
    cg <- c_chain(sgfs, g, 12L, 30L, alpha = 3, curvature = FALSE)
    set.seed(45)
    rg <- r_chain(g, 4, 12L, 30L, function(t) 4 / 9, sgfs_update(50, 12, restart = 0))
    expect_equal(unname(cg), rg, tolerance = 1e-10)
})

test_that("robust SGFS: C chains (full, diagonal; full with the curvature) equal the R replay", {
    p <- ref_problem(N = 200)
    H <- r_mode_curvature(p, 3)
    attr(H, "mode") <- NULL
    for (pre in c("full", "diagonal", "curvature")) {
        set.seed(67)
        fit <- quiet(sgfs(p$x, p$y, prior = normal(0, 1), batch_size = 10L, n_iter = 300L,
                          burnin = 10L, standardize = FALSE, progress = FALSE, alpha = 1.5,
                          preconditioner = if (pre == "diagonal") pre else "full",
                          init = c(0, 0, 0), curvature = pre == "curvature",
                          control_variates = FALSE))
        expect_true(attr(fit, "sgfit")$settings$robust)
        ## the replay: B = gamma N I + Lambda (with the curvature: H + (gamma -
        ## 1) N I), A = (1 + alpha^2) B, eta ~ N(0, alpha^2 B); the full
        ## rule's factor of B refreshed when t' has grown by 5 %
        gamma <- 1 + 200 / 10 * 190 / 199
        a2 <- 1.5^2
        set.seed(67)
        theta <- c(0, 0, 0)
        out <- matrix(NA_real_, 300, 3)
        refreshes <- 0
        m <- sgfs:::default_fisher_rows(10L, 3L)       # 7 of the batch's 10 rows
        for (t in 1:300) {
            G <- r_scores(p, theta, r_shuffle_front(r_minibatch(200, 10L), m))
            grad <- -theta + 200 / 10 * colSums(G)
            V <- if (pre != "diagonal") cov(G[1:m, ]) else apply(G[1:m, ], 2L, var)
            if (t == 1) {
                I <- 0 * V
                count <- last <- 0
            }
            ## the running mean restarts half-way through burn-in, the mean
            ## so far counting as 2D rows' worth (the diagonal rule: D ones)
            if (t == 6) count <- min(count, ceiling(2 * 3 / (m - 1)))
            count <- count + 1
            I <- I + (V - I) / count
            if (pre != "diagonal") {
                if (last == 0 || count <= last || count >= 1.05 * last) {
                    last <- count
                    U <- chol(if (pre == "full") gamma * 200 * I + diag(3)
                              else (gamma - 1) * 200 * I + H)
                    refreshes <- refreshes + 1
                }
                rhs <- grad + sqrt(a2) * drop(crossprod(U, engine_rnorm(3)))
                x <- drop(solve(crossprod(U), rhs)) / (1 + a2)
            } else {
                B <- gamma * 200 * pmax(I, 1 / 200) + 1
                rhs <- grad + sqrt(a2 * B) * engine_rnorm(3)
                x <- rhs / ((1 + a2) * B)
            }
            q <- 4 * sum(x * rhs)              # the burn-in trust region
            s <- if (t <= 10 && q > 12) sqrt(12 / q) else 1
            theta <- theta + 2 * s * x
            out[t, ] <- theta
        }
        ## (t' = 296 at the end: 66 refreshes from the restart on, so 229
        ## iterations on a factor of an older I)
        if (pre != "diagonal") expect_equal(refreshes, 5 + 66)
        expect_equal(unname(sgfs:::all_draws(fit)), out[11:300, ], tolerance = 1e-10)
    }
})

test_that("SGFS with the curvature at the mode: C chains equal the R replay (full, diagonal, block)", {
    ## (the chain starts at the mode, unless init is given)
    p <- ref_problem()
    H <- r_mode_curvature(p, 3)
    mode <- attr(H, "mode")
    attr(H, "mode") <- NULL
    for (pre in c("full", "diagonal", "block")) {
        blocks <- if (pre == "block") c(2, 1)
        set.seed(61)
        fit <- quiet(sgfs(robust = FALSE, p$x, p$y, prior = normal(0, 1), batch_size = 10L,
                          n_iter = 40L, burnin = 10L, standardize = FALSE, progress = FALSE,
                          alpha = 1.5, preconditioner = pre, blocks = blocks))
        info <- attr(fit, "sgfit")
        expect_true(info$settings$curvature)
        expect_equal(info$spec$sgfs_curvature, if (pre == "diagonal") diag(H) else H,
                     tolerance = 1e-8)
        expect_equal(info$starts[[1]]$theta, mode, tolerance = 1e-8)
        set.seed(61)
        r <- r_chain(p, 3, 10L, 40L, function(t) 4 / 1.5^2,
                     sgfs_update(50, 10, restart = 6, burnin = 10, full = pre != "diagonal",
                                 blocks = blocks, H = if (pre == "diagonal") diag(H) else H),
                     theta0 = mode)
        expect_equal(unname(sgfs:::all_draws(fit)), r[11:40, ], tolerance = 1e-10)
    }
    ## none for a network or a custom model: the paper's rule
    expect_null(sgfs:::sgfs_curvature(list(design = list(network = list())), "full"))
})

test_that("beyond 100,000 rows SGFS's curvature is a subset's, close to the full data's", {
    set.seed(5)
    N <- 120000L
    x <- matrix(rnorm(2 * N), N)
    y <- rbinom(N, 1, plogis(drop(x %*% c(1, -0.5))))
    fit <- quiet(sgfs(x, y, n_iter = 20L, burnin = 0L, progress = FALSE,
                      control_variates = FALSE))
    info <- attr(fit, "sgfit")
    full <- sgfs:::newton_mode(sgfs:::fit_spec(info), double(3))$curvature$H
    ## 50,000 of the 120,000 rows, weighted N / m: within a few per cent
    expect_equal(info$spec$sgfs_curvature, full, tolerance = 0.03)
    expect_false(isTRUE(all.equal(info$spec$sgfs_curvature, full, tolerance = 1e-6)))
})

test_that("SGFS-b: C chain equals the R reference (model blocks, user blocks, restart)", {
    ## gaussian with log_sigma: the default blocks are the coefficients and log_sigma
    g <- ref_problem(gaussian())
    set.seed(51)
    cg <- c_chain(sgfs, g, 12L, 30L, alpha = 3, preconditioner = "block", curvature = FALSE)
    set.seed(51)
    rg <- r_chain(g, 4, 12L, 30L, function(t) 4 / 9,
                  sgfs_update(50, 12, restart = 0, blocks = c(3, 1)))
    expect_equal(unname(cg), rg, tolerance = 1e-10)
    set.seed(52)
    cg <- c_chain(sgfs, g, 12L, 30L, alpha = 2, preconditioner = "block", blocks = c(1, 2, 1),
                  curvature = FALSE)
    set.seed(52)
    rg <- r_chain(g, 4, 12L, 30L, function(t) 1,
                  sgfs_update(50, 12, restart = 0, blocks = c(1, 2, 1)))
    expect_equal(unname(cg), rg, tolerance = 1e-10)
    ## logistic, blocks (intercept, x1) and x2; burn-in with the Fisher
    ## restart and the trust region; alpha = 0 (no normals) and > 0
    p <- ref_problem()
    fit_with <- function(alpha, ...) {
        set.seed(53)
        quiet(sgfs(robust = FALSE, curvature = FALSE, p$x, p$y, prior = normal(0, 1), batch_size = 10L, n_iter = 40L,
                   burnin = 10L, standardize = FALSE, progress = FALSE, alpha = alpha, ...))
    }
    for (alpha in c(0, 1.5)) {
        fit <- fit_with(alpha, preconditioner = "block", blocks = c(2, 1))
        set.seed(53)
        eps <- if (alpha > 0) 4 / alpha^2 else Inf
        r <- r_chain(p, 3, 10L, 40L, function(t) eps,
                     sgfs_update(50, 10, restart = 6, burnin = 10, blocks = c(2, 1)))
        expect_equal(unname(sgfs:::all_draws(fit)), r[11:40, ], tolerance = 1e-10)
        ## (the blocks matter: SGFS-f's chain is another)
        expect_gt(max(abs(sgfs:::all_draws(fit) - sgfs:::all_draws(fit_with(alpha)))), 1e-3)
    }
})

test_that("SGFS-b with one block is SGFS-f, and with blocks of one SGFS-d without its floor", {
    g <- ref_problem(gaussian())
    run <- function(seed, ...) {
        set.seed(seed)
        c_chain(sgfs, g, 12L, 40L, alpha = 1.5, ...)
    }
    expect_identical(run(54, preconditioner = "block", blocks = 4), run(54))
    ## SGFS-d floors I_jj at Lambda_j / N; where no diagonal is that small
    ## the chains agree up to rounding (1x1 Cholesky factors against sqrt)
    expect_equal(run(55, preconditioner = "block", blocks = rep(1, 4)),
                 run(55, preconditioner = "diagonal"), tolerance = 1e-12)
    ## a predictor that is 0 but in 3 of 200 rows: its I_jj is often below
    ## the floor, and SGFS-b (no floor) then steps by the prior precision alone
    x <- cbind(withr::with_seed(3, rnorm(200)), rep(0:1, c(197, 3)))
    sparse <- function(...) {
        set.seed(56)
        quiet(sgfs(robust = FALSE, curvature = FALSE, x, rep(0:1, 100), batch_size = 20L, n_iter = 100L, burnin = 0L,
                   alpha = 2, standardize = FALSE, progress = FALSE, ...))
    }
    expect_gt(max(abs(sgfs:::all_draws(sparse(preconditioner = "block", blocks = rep(1, 3))) -
                      sgfs:::all_draws(sparse(preconditioner = "diagonal")))), 0.1)
})

test_that("SGLD with a laplace prior: C chain equals the R reference", {
    p <- ref_problem()
    set.seed(49)
    fit <- quiet(sgld(p$x, p$y, prior = laplace(0.2, 0.5), prior_intercept = normal(1, 2),
                      batch_size = 10L, n_iter = 30L, burnin = 0L, stepsize = 0.01,
                      standardize = FALSE, progress = FALSE, init = NULL, metric = "identity"))
    set.seed(49)
    N <- 50
    theta <- double(3)
    r <- matrix(NA_real_, 30, 3)
    for (t in 1:30) {
        idx <- r_minibatch(N, 10)
        prior_grad <- c(-(theta[1] - 1) / 4, -sign(theta[-1] - 0.2) / 0.5)
        grad <- prior_grad + N / 10 * colSums(r_scores(p, theta, idx))
        theta <- theta + 0.01 / 2 * grad + sqrt(0.01) * engine_rnorm(3)
        r[t, ] <- theta
    }
    expect_equal(unname(sgfs:::all_draws(fit)), r, tolerance = 1e-12)
})

test_that("pSGLD: C chain equals the R reference", {
    p <- ref_problem()
    decay <- 0.9
    lambda <- 1e-3
    psgld_update <- function(theta, grad, G, eps, t, state, prec) {
        gbar <- (grad + prec * theta) / 50           # mean score, prior removed
        state$V <- if (t == 1) gbar^2 else decay * state$V + (1 - decay) * gbar^2
        Gd <- 1 / (lambda + sqrt(state$V))
        list(theta = theta + eps / 2 * Gd * grad + sqrt(eps * Gd) * engine_rnorm(length(theta)),
             state = state)
    }
    set.seed(50)
    cp <- c_chain(psgld, p, 10L, 40L, stepsize = 1e-3, decay = decay, lambda = lambda)
    set.seed(50)
    rp <- r_chain(p, 3, 10L, 40L, function(t) 1e-3, psgld_update)
    expect_equal(unname(cp), rp, tolerance = 1e-12)
})

test_that("SGHMC: C chain equals the R reference (resampling, noise estimate)", {
    p <- ref_problem()
    for (case in list(c(L = 0, est = 0), c(L = 7, est = 0), c(L = 0, est = 1))) {
        set.seed(51)
        ch <- c_chain(sghmc, p, 10L, 40L, stepsize = 2e-3, friction = 0.1,
                      trajectory = if (case[["L"]] > 0) case[["L"]],
                      noise_estimate = case[["est"]] == 1)
        set.seed(51)
        rh <- r_chain(p, 3, 10L, 40L, function(t) 2e-3,
                      sghmc_update(0.1, case[["L"]], case[["est"]] == 1, 50, 10))
        expect_equal(unname(ch), rh, tolerance = 1e-12)
    }
})

test_that("SGNHT: C chain equals the R reference", {
    p <- ref_problem()
    a <- 0.05
    sgnht_update <- function(theta, grad, G, eps, t, state, prec) {
        D <- length(theta)
        if (t == 1) state <- list(u = sqrt(eps) * engine_rnorm(D), xi = a)
        state$u <- state$u + eps * grad - state$xi * state$u + sqrt(2 * a * eps) * engine_rnorm(D)
        state$xi <- state$xi + sum(state$u^2) / D - eps
        list(theta = theta + state$u, state = state)
    }
    set.seed(52)
    cn <- c_chain(sgnht, p, 10L, 40L, stepsize = 1e-3, diffusion = a)
    set.seed(52)
    rn <- r_chain(p, 3, 10L, 40L, function(t) 1e-3, sgnht_update)
    expect_equal(unname(cn), rn, tolerance = 1e-12)
})

test_that("the default momentum step inflates the stiffest variance by 5 %", {
    ## friction 1 is SGLD with step 2 eta: 1 / (1 - eps lambda / 4) = 1.05
    lambda <- 37
    eta <- sgfs:::momentum_step(1, 1, lambda)
    expect_equal(2 * eta * lambda, 4 * (1 - 1 / 1.05), tolerance = 1e-5)
    ## with minibatch noise, (1 + eps v / 4) / (1 - eps lambda / 4), v = (gamma - 1) lambda
    eta <- sgfs:::momentum_step(1, 101, lambda)
    eps <- 2 * eta
    expect_equal((1 + eps * 100 * lambda / 4) / (1 - eps * lambda / 4), 1.05, tolerance = 1e-5)
    for (alpha in c(0.1, 0.01))
        expect_equal(sgfs:::momentum_variance(sgfs:::momentum_step(alpha, 50, lambda),
                                              alpha, 50, lambda), 1.05, tolerance = 1e-6)
})

test_that("SGFS-d: C chain equals the R reference", {
    p <- ref_problem()
    set.seed(46)
    cd <- c_chain(sgfs, p, 10L, 40L, preconditioner = "diagonal", alpha = 2, curvature = FALSE)
    set.seed(46)
    rd <- r_chain(p, 3, 10L, 40L, function(t) 1, sgfs_update(50, 10, 0, full = FALSE))
    expect_equal(unname(cd), rd, tolerance = 1e-10)
    ## with burn-in: the Fisher restart and the trust region (which binds
    ## here, from a start far from the mode)
    far <- p
    far$y <- 1 - far$y
    set.seed(47)
    fit <- quiet(sgfs(robust = FALSE, curvature = FALSE, far$x, far$y, prior = normal(0, 1), batch_size = 10L, n_iter = 40L,
                      burnin = 20L, standardize = FALSE, progress = FALSE, alpha = 0.5,
                      preconditioner = "diagonal", init = c(5, 5, -5)))
    set.seed(47)
    upd <- sgfs_update(50, 10, restart = 11, full = FALSE, burnin = 20)
    r <- r_chain(far, 3, 10L, 40L, function(t) 16, upd, theta0 = c(5, 5, -5))
    expect_equal(unname(sgfs:::all_draws(fit)), r[21:40, ], tolerance = 1e-10)
})

test_that("the engine's minibatch draw is R's sample.int under both sample kinds, across a power of two", {
    ## minibatch.c forms R_unif_index itself; N = 70, n = 10: j + 1 runs
    ## over 61..70, across 64, where the index takes a seventh bit
    p <- ref_problem(N = 70)
    old <- RNGkind()[3]
    on.exit(suppressWarnings(RNGkind(sample.kind = old)))
    chains <- list()
    for (kind in c("Rounding", "Rejection")) {
        suppressWarnings(RNGkind(sample.kind = kind))
        suppressWarnings(set.seed(44))
        chains[[kind]] <- c_chain(sgld, p, 10L, 30L, stepsize = 0.01)
        suppressWarnings(set.seed(44))
        r <- suppressWarnings(r_chain(p, 3, 10L, 30L, function(t) 0.01, sgld_update))
        expect_equal(unname(chains[[kind]]), r, tolerance = 1e-12)
    }
    expect_false(isTRUE(all.equal(chains$Rounding, chains$Rejection)))
})

test_that("the minibatch draw (replayed by the R reference, which the C chains equal exactly) is uniform without replacement", {
    ## every pair of examples appears together equally often
    counts <- matrix(0, 6, 6)
    set.seed(47)
    distinct <- logical(3000)
    for (k in 1:3000) {
        idx <- r_minibatch(6, 3)
        distinct[k] <- length(unique(idx)) == 3
        counts[idx, idx] <- counts[idx, idx] + 1
    }
    expect_true(all(distinct))
    off <- counts[upper.tri(counts)]
    ## each pair: probability 3*2/(6*5) = 0.2 per draw
    expect_true(all(abs(off - 600) < 4 * sqrt(3000 * 0.2 * 0.8)))
})

test_that("momentum resampled every L steps: the periodic stationary variance", {
    eta <- 0.02; alpha <- 0.1; gamma <- 30; lambda <- 2
    R <- 2 * eta * alpha + eta^2 * (gamma - 1) * lambda
    ## L = 1: v is fresh before every step, a scalar recursion in Var z
    s <- ((1 - alpha)^2 * eta + R) / (1 - (1 - eta * lambda)^2)
    expect_equal(sgfs:::momentum_variance(eta, alpha, gamma, lambda, L = 1), s * lambda,
                 tolerance = 1e-10)
    ## L = 7: run the covariance recursion of (z, v) through many trajectories
    M <- matrix(c(1 - eta * lambda, -eta * lambda, 1 - alpha, 1 - alpha), 2L)
    S <- diag(c(0, eta))
    for (cycle in 1:3000) {
        S <- diag(c(S[1L], eta))
        vars <- double(7)
        for (k in 1:7) {
            S <- M %*% S %*% t(M) + R
            vars[k] <- S[1L]
        }
    }
    expect_equal(sgfs:::momentum_variance(eta, alpha, gamma, lambda, L = 7), mean(vars) * lambda,
                 tolerance = 1e-8)
    ## resampling shrinks the variance: at small steps to about L / (L + 1) of
    ## the posterior's (each trajectory's first step takes a full kick from
    ## the fresh momentum), with no resampling to the posterior's
    expect_lt(sgfs:::momentum_variance(eta, alpha, gamma, lambda, L = 7),
              sgfs:::momentum_variance(eta, alpha, gamma, lambda))
    for (L in c(1, 2, 5))
        expect_equal(sgfs:::momentum_variance(1e-7, 0.01, 1, 1, L = L), L / (L + 1),
                     tolerance = 0.01)
    expect_equal(sgfs:::momentum_variance(1e-7, 0.01, 1, 1), 1, tolerance = 1e-3)
})

test_that("SGHMC's report warns when momentum resampling shrinks the variance", {
    data(Pima.tr, package = "MASS", envir = environment())
    set.seed(6)
    fit <- sghmc(type ~ glu + bmi, data = Pima.tr, n_iter = 200L, batch_size = 50L,
                 trajectory = 2L)
    s <- attr(fit, "sgfit")$settings
    ## the default step ignores the resampling; the report includes it
    expect_lt(s$inflation, -0.2)
    expect_output(print(fit), "resampling the momentum every 2 steps shrinks the posterior variance")
})

test_that("SGLD's variance inflation is the linearised chain's exact stationary variance", {
    lambda <- 3; gamma <- 40
    for (eps in c(0.001, 0.05, 0.5, 1.2)) {
        s <- 0                        # Var z of z' = (1 - eps lambda / 2) z + noise
        for (t in 1:20000) s <- (1 - eps * lambda / 2)^2 * s + eps + eps^2 * (gamma - 1) * lambda / 4
        expect_equal(sgfs:::sgld_inflation(eps, lambda, gamma), s * lambda - 1, tolerance = 1e-10)
    }
    expect_equal(sgfs:::sgld_inflation(4 / lambda, lambda, gamma), Inf)
    ## the step the report advises inflates by 5 %
    expect_equal(sgfs:::sgld_inflation(sgfs:::sgld_step(lambda, gamma), lambda, gamma), 0.05)
    ## the Leimkuhler-Matthews noise z' = a z + sqrt(eps) (xi + xi') / 2 + noise:
    ## y = z - sqrt(eps) xi' / 2 follows y' = a y + (1 + a) sqrt(eps) xi / 2 + noise
    ## and Var z = Var y + eps / 4
    for (eps in c(0.001, 0.05, 0.5, 1.2)) {
        a <- 1 - eps * lambda / 2
        v <- 0
        for (t in 1:20000) v <- a^2 * v + (1 + a)^2 * eps / 4 + eps^2 * (gamma - 1) * lambda / 4
        expect_equal(sgfs:::sgld_inflation(eps, lambda, gamma, lm = TRUE),
                     (v + eps / 4) * lambda - 1, tolerance = 1e-10)
        expect_equal(sgfs:::sgld_inflation(eps, lambda, 1, lm = TRUE), 0)
    }
    expect_equal(sgfs:::sgld_inflation(sgfs:::sgld_step(lambda, gamma, lm = TRUE), lambda, gamma,
                                       lm = TRUE), 0.05)
    expect_null(sgfs:::sgld_step(lambda, 1, lm = TRUE))
    ## SGHMC: a learning rate past stability is infinitely inflated, not negative
    expect_equal(sgfs:::momentum_variance(1, 0.5, 1, 10), Inf)
})

## SGLD and SGLD-CV in the metric of the mode: the driver's whitened
## coordinates z = U theta (U'U the curvature at the mode), the fixed rows in
## The metric of a wide model (src/metric.c): the curvature's diagonal S^2
## with a low-rank part along eigenvectors V of its whitened curvature, U =
## C S, C = I + V diag(lambda^(1/2) - 1) V'; built here by hand on a small
## problem (the set-up makes one beyond 500 parameters)
test_that("a diagonal metric with a low-rank part: the C chain equals the R reference", {
    p <- ref_problem(N = 200)
    a <- metric_run(p, sgld, 5)
    info <- a$info
    s <- sqrt(colSums(info$spec$metric^2))          # sqrt(diag(U'U))
    info$spec$metric <- s
    info$spec$metric_vectors <- qr.Q(qr(cbind(c(1, 2, -1), c(0, 1, 3))))
    info$spec$metric_values <- c(9, 0.25)
    spec <- sgfs:::fit_spec(info)
    state <- list(theta = c(0, 0, 0), iter = 0, sstate = numeric(0))
    set.seed(5)
    res <- sgfs:::run_chain(spec, state, 60L, FALSE)
    set.seed(5)
    ref <- r_chain_metric(p, 10L, 60L, info$eps, info$spec, c(0, 0, 0))
    expect_equal(res$draws, ref, tolerance = 1e-12)
    ## the transforms' R counterparts agree with the engine's U
    lr <- list(vectors = info$spec$metric_vectors, values = info$spec$metric_values)
    U <- sgfs:::lowrank_times(lr, diag(3)) %*% diag(s)
    g <- c(0.3, -1, 2)
    expect_equal(drop(sgfs:::metric_scores(list(laplace = list(scales = s), lowrank = lr),
                                           matrix(g, 1L))), drop(solve(t(U), g)))
    expect_equal(crossprod(U), diag(s) %*% sgfs:::lowrank_times(lr, sgfs:::lowrank_times(lr, diag(3))) %*% diag(s))
})

test_that("SGLD and SGLD-CV in the metric of the mode: C chains equal the R reference", {
    p <- ref_problem(N = 200)
    run <- function(fun, seed, ...) metric_run(p, fun, seed, ...)
    a <- run(sgld, 5)
    expect_true(is.matrix(a$info$spec$metric))
    set.seed(5)
    ref <- r_chain_metric(p, 10L, 60L, a$info$eps, a$info$spec, c(0, 0, 0))
    expect_equal(a$draws, ref, tolerance = 1e-12)
    ## a large step that the clip binds, and rows fixed by hand
    b <- run(sgld, 6, stepsize = 3)
    expect_gt(b$info$clipped, 0)
    set.seed(6)
    expect_equal(b$draws, r_chain_metric(p, 10L, 60L, 3, b$info$spec, c(0, 0, 0)),
                 tolerance = 1e-12)
    cv <- run(sgldcv, 7)
    set.seed(7)
    ref <- r_chain_metric(p, 10L, 60L, cv$info$eps, cv$info$spec, c(0, 0, 0),
                          centre = cv$info$spec$centre)
    expect_equal(cv$draws, ref, tolerance = 1e-12)
})

test_that("fixed rows: the stratified minibatch gradient equals the R replay", {
    p <- ref_problem(gaussian(), N = 200)
    p$x[3, ] <- c(40, -30)            # an outlying row, which every minibatch must hold
    p$X[3, -1] <- p$x[3, ]
    set.seed(9)
    fit <- quiet(sgldcv(p$x, p$y, family = p$family, prior = normal(0, 1), batch_size = 10L,
                        n_iter = 60L, burnin = 0L, standardize = FALSE, progress = FALSE,
                        init = c(0, 0, 0, 0), metric = "mode"))
    info <- attr(fit, "sgfit")
    expect_true(2L %in% info$spec$fixed)                    # row 3, 0-based
    expect_lt(length(info$spec$fixed), 20)
    set.seed(9)
    ref <- r_chain_metric(p, 10L, 60L, info$eps, info$spec, c(0, 0, 0, 0),
                          centre = info$spec$centre)
    expect_equal(unname(sgfs:::all_draws(fit)), ref, tolerance = 1e-12)
})

test_that("pSGLD, SGHMC and SGNHT in the metric of the mode: C chains equal the R reference", {
    p <- ref_problem(N = 200)
    run <- function(fun, seed, ...) metric_run(p, fun, seed, ...)
    decay <- 0.9
    lambda <- 1e-3
    psgld_z <- function(z, gz, glik, eps, t, state) {
        gbar <- glik / 200
        state$V <- if (t == 1) gbar^2 else decay * state$V + (1 - decay) * gbar^2
        Gd <- 1 / (lambda + sqrt(state$V))
        list(z = z + eps / 2 * Gd * gz + sqrt(eps * Gd) * engine_rnorm(length(z)), state = state)
    }
    a <- run(psgld, 61, stepsize = 1e-3, decay = decay, lambda = lambda)
    set.seed(61)
    expect_equal(a$draws, r_chain_metric(p, 10L, 60L, 1e-3, a$info$spec, c(0, 0, 0),
                                         update = psgld_z), tolerance = 1e-12)
    sghmc_z <- function(z, gz, glik, eps, t, state) {
        step <- sghmc_update(0.1, 7, FALSE, 200, 10)(z, gz, NULL, eps, t, state, NULL)
        list(z = step$theta, state = step$state)
    }
    b <- run(sghmc, 62, stepsize = 2e-3, friction = 0.1, trajectory = 7)
    set.seed(62)
    expect_equal(b$draws, r_chain_metric(p, 10L, 60L, 2e-3, b$info$spec, c(0, 0, 0),
                                         update = sghmc_z), tolerance = 1e-12)
    da <- 0.05
    sgnht_z <- function(z, gz, glik, eps, t, state) {
        D <- length(z)
        if (t == 1) state <- list(u = sqrt(eps) * engine_rnorm(D), xi = da)
        state$u <- state$u + eps * gz - state$xi * state$u + sqrt(2 * da * eps) * engine_rnorm(D)
        state$xi <- state$xi + sum(state$u^2) / D - eps
        list(z = z + state$u, state = state)
    }
    cc <- run(sgnht, 63, stepsize = 1e-3, diffusion = da)
    set.seed(63)
    expect_equal(cc$draws, r_chain_metric(p, 10L, 60L, 1e-3, cc$info$spec, c(0, 0, 0),
                                          update = sgnht_z), tolerance = 1e-12)
})

test_that("weighted SGLD, SGLD-CV and SGFS chains (and cbind responses) equal the R replays", {
    w <- withr::with_seed(9, rexp(50))
    w[c(3L, 20L)] <- 0
    cases <- list(list(fam = binomial()), list(fam = binomial("probit")),
                  list(fam = poisson()), list(fam = gaussian()),
                  list(fam = binomial(), cbind = TRUE), list(fam = binomial("probit"), cbind = TRUE))
    for (cs in cases) {
        for (wt in list(w, NULL)) {
            if (is.null(wt) && !isTRUE(cs$cbind)) next
            p <- ref_problem(cs$fam, weights = wt, cbind = isTRUE(cs$cbind))
            D <- 3 + (cs$fam$family == "gaussian")
            ## (a stable step: the Poisson posterior is the stiffest)
            eps <- if (cs$fam$family == "poisson") 0.003 else 0.01
            set.seed(42)
            c1 <- c_chain(sgld, p, 10L, 40L, stepsize = eps)
            set.seed(42)
            r1 <- r_chain(p, D, 10L, 40L, function(t) eps, sgld_update)
            expect_equal(unname(c1), r1, tolerance = 1e-12)
            centre <- c(0.3, -0.2, 0.1, if (D == 4) 0.05)
            set.seed(63)
            cc <- c_chain(sgldcv, p, 10L, 40L, stepsize = eps, centre = centre)
            set.seed(63)
            rc <- r_chain(p, D, 10L, 40L, function(t) eps, sgld_update, theta0 = centre,
                          centre = centre)
            expect_equal(unname(cc), rc, tolerance = 1e-12)
        }
    }
    ## SGFS: its Fisher estimate is the covariance of the weighted
    ## per-example scores
    p <- ref_problem(weights = w)
    set.seed(44)
    fit <- quiet(sgfs(robust = FALSE, curvature = FALSE, p$x, p$y, weights = w, prior = normal(0, 1), batch_size = 10L,
                      n_iter = 40L, burnin = 10L, standardize = FALSE, progress = FALSE, alpha = 1.5))
    set.seed(44)
    r <- r_chain(p, 3, 10L, 40L, function(t) 4 / 1.5^2, sgfs_update(50, 10, restart = 6, burnin = 10))
    expect_equal(unname(sgfs:::all_draws(fit)), r[11:40, ], tolerance = 1e-10)
})

test_that("weights of 1 leave a chain draw for draw unchanged", {
    p <- ref_problem()
    set.seed(42)
    c0 <- c_chain(sgldcv, p, 10L, 40L, stepsize = 0.01, centre = c(0.3, -0.2, 0.1))
    p$weights <- rep(1, 50)
    set.seed(42)
    c1 <- c_chain(sgldcv, p, 10L, 40L, stepsize = 0.01, centre = c(0.3, -0.2, 0.1))
    expect_identical(c1, c0)
})
