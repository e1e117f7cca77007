## Separated levels (R/separation.R): found from the data, measured along
## the line through the mode, and the metric widened there; the posterior
## of such a level against its exact marginal.

## 3,000 rows: x continuous; f with reference level "a" (40 rows, all 0),
## "b" and "c" mixed, "d" (25 rows, all 1); e a mixed 0/1 column
separated_data <- function(seed = 1) {
    set.seed(seed)
    N <- 3000
    f <- factor(c(rep("a", 40), rep("d", 25), sample(c("b", "c"), N - 65, TRUE)))
    x <- rnorm(N)
    e <- rbinom(N, 1, 0.3)
    eta <- 0.3 + 0.8 * x - 0.5 * e + ifelse(f == "c", 0.7, 0)
    y <- rbinom(N, 1, plogis(eta))
    y[f == "a"] <- 0
    y[f == "d"] <- 1
    data.frame(y = y, x = x, e = e, f = f)
}

## the exact marginal (mean, sd) of a separated level's coefficient b: the
## prior normal(0, prior_sd) times its rows' likelihood ll(b), on a grid of
## +- 10 prior sd
exact_marginal <- function(ll, prior_sd) {
    g <- seq(-10 * prior_sd, 10 * prior_sd, length.out = 40001)
    lf <- vapply(g, ll, 0) + dnorm(g, 0, prior_sd, log = TRUE)
    w <- exp(lf - max(lf))
    w <- w / sum(w)
    m <- sum(w * g)
    c(mean = m, sd = sqrt(sum(w * (g - m)^2)))
}

## the level's draws against it, within Monte Carlo error from their ESS
## (the sd's error for a skewed, light-tailed marginal at most 1.2 /
## sqrt(2 ESS) relative)
expect_exact_marginal <- function(draws, ess, exact) {
    expect_lt(abs(mean(draws) - exact[["mean"]]) / (exact[["sd"]] / sqrt(ess)), 4)
    expect_lt(abs(sd(draws) / exact[["sd"]] - 1), 4 * 1.2 / sqrt(2 * ess))
}

test_that("separated levels are found through the formula and the matrix interface", {
    d <- separated_data()
    run <- sgfs:::prepare_run(model.matrix(y ~ x + e + f, d)[, -1], d$y, binomial(),
                              NULL, NULL, NULL, 1000L, NULL, 1L, 1L, 1L, NULL, TRUE, FALSE,
                              NULL, TRUE)
    ## the matrix interface: the adjacent columns fb, fc, fd form a group
    levels <- run$design$separated
    expect_equal(vapply(levels, `[[`, "", "name"),
                 c("fd", "the reference level of fb, fc, fd"))
    expect_equal(vapply(levels, `[[`, NA, "reference"), c(FALSE, TRUE))
    expect_equal(levels[[2]]$rows, which(d$f == "a"))
    expect_equal(levels[[1]]$rows, which(d$f == "d"))
    ## the formula interface: the factor's columns from the model matrix
    fit <- sgld(y ~ f + x + e, d, n_iter = 50, progress = FALSE)
    expect_equal(vapply(attr(fit, "sgfit")$design$separated, `[[`, "", "name"),
                 c("fd", "the reference level of fb, fc, fd"))
    ## a poisson level of zero counts is separated, one of ones is not
    z <- rpois(nrow(d), 2)
    z[d$f == "a"] <- 0
    z[d$f == "d"] <- 1
    run <- sgfs:::prepare_run(model.matrix(y ~ f + x, d)[, -1], z, poisson(), NULL, NULL,
                              NULL, 1000L, NULL, 1L, 1L, 1L, NULL, TRUE, FALSE, NULL, TRUE)
    expect_equal(vapply(run$design$separated, `[[`, "", "name"),
                 "the reference level of fb, fc, fd")
    ## nothing is separated in a gaussian model, or without 0/1 columns
    run <- sgfs:::prepare_run(model.matrix(y ~ f + x, d)[, -1], d$x, gaussian(), NULL,
                              NULL, NULL, 1000L, NULL, 1L, 1L, 1L, NULL, TRUE, FALSE, NULL,
                              TRUE)
    expect_null(run$design$separated)
    data(Pima.tr, package = "MASS", envir = environment())
    fit <- sgldcv(type ~ ., data = Pima.tr, n_iter = 100, progress = FALSE)
    expect_null(attr(fit, "sgfit")$design$separated)
    expect_null(attr(fit, "sgfit")$spec$separated_rows)
})

test_that("a separated level's line moves only its rows; its width is the exact conditional sd", {
    d <- separated_data()
    d$f <- factor(ifelse(d$f == "a", "b", as.character(d$f)))      # only "d" separated
    x <- model.matrix(y ~ x + e + f, d)[, -1]
    run <- sgfs:::prepare_run(x, d$y, binomial(), NULL, NULL, NULL, 1000L, NULL, 1L, 1L,
                              1L, NULL, TRUE, FALSE, NULL, TRUE)
    expect_length(run$design$separated, 1L)
    lap <- sgfs:::posterior_laplace(run)
    sep <- sgfs:::separated_spec(run, lap, 0L)
    rows <- which(d$f == "d")
    expect_equal(sep$spec$separated_rows, rows - 1L)
    expect_equal(sep$spec$separated_ptr, c(0L, length(rows)))
    expect_equal(sep$levels$level, "fd")
    v <- sep$spec$separated_dir
    eta_move <- sgfs:::data_xb(run$spec, v)
    expect_equal(eta_move[rows], rep(1, length(rows)), tolerance = 1e-10)
    expect_lt(max(abs(eta_move[-rows])), 1e-10)
    ## the exact conditional density along the line through the mode,
    ## written out here: the rows' log-likelihood (all y = 1) plus the prior
    eta <- sgfs:::data_xb(run$spec, lap$mode)[rows]
    logf <- function(t) vapply(t, function(s)
        sum(plogis(eta + s, log.p = TRUE)) +
            sgfs:::log_prior(lap$mode + s * v, run$spec)$value, 0)
    top <- logf(0)
    dens <- function(t) exp(logf(t) - top)
    mass <- integrate(dens, -Inf, Inf, rel.tol = 1e-10)$value
    mean_t <- integrate(function(t) t * dens(t), -Inf, Inf, rel.tol = 1e-10)$value / mass
    var_t <- integrate(function(t) (t - mean_t)^2 * dens(t), -Inf, Inf,
                       rel.tol = 1e-10)$value / mass
    expect_equal(sep$spec$separated_width, sqrt(var_t), tolerance = 1e-3)
    ## much wider than the Laplace approximation along the line
    a <- drop(t(v) %*% lap$H %*% v)
    expect_equal(sep$levels$sd_ratio, sqrt(var_t * a), tolerance = 1e-3)
    expect_gt(sep$levels$sd_ratio, 1.5)
    ## every: the updates cost about 15 % of the iterations' gradients
    P <- run$spec$P
    expect_equal(sep$every, max(1L, as.integer(ceiling(
        (length(rows) * (P + 16) + 16 * P) / (0.15 * run$spec$batch_size * P)))))
    ## in the metric of the mode the chain gets them; not with the papers' rule
    fit <- sgldcv(x, d$y, n_iter = 100, progress = FALSE)
    info <- attr(fit, "sgfit")
    expect_equal(info$spec$separated_rows, rows - 1L)
    expect_equal(info$settings$separated$level, "fd")
    fit <- sgldcv(x, d$y, n_iter = 100, progress = FALSE, metric = "identity")
    expect_null(attr(fit, "sgfit")$spec$separated_rows)
})

test_that("SGLD and SGLD-CV with separated levels: C chains equal the R replay", {
    p <- ref_problem(N = 200)
    lev <- as.numeric(seq_len(200) %in% c(3, 50, 77, 120, 190))
    p$y[lev == 1] <- 1
    p$x <- cbind(p$x, lev)
    p$X <- unname(cbind(1, p$x))
    D <- 4
    for (fun in c("sgld", "sgldcv")) {
        set.seed(21)
        fit <- quiet(get(fun)(p$x, p$y, family = binomial(), prior = normal(0, 1),
                              batch_size = 10L, n_iter = 60L, burnin = 0L,
                              standardize = FALSE, progress = FALSE, init = double(D)))
        info <- attr(fit, "sgfit")
        expect_equal(info$spec$separated_rows, which(lev == 1) - 1L)
        spec <- sgfs:::fit_spec(info)
        spec$separated_every <- 1L               # every iteration, for the replay
        set.seed(23)
        theta0 <- double(D)
        run <- sgfs:::run_chain(spec, list(theta = theta0, iter = 0, sstate = double(0)),
                                60L, FALSE)
        set.seed(23)
        ref <- r_chain_metric(p, 10L, 60L, info$eps, spec, theta0,
                              centre = if (fun == "sgldcv") spec$centre)
        expect_equal(unname(run$draws), ref, tolerance = 1e-12)
        ## the level moved along its line: the draws differ from a chain without it
        spec$separated_rows <- NULL
        set.seed(23)
        plain <- r_chain_metric(p, 10L, 60L, info$eps, spec, theta0,
                                centre = if (fun == "sgldcv") spec$centre)
        expect_gt(max(abs(plain[, 4] - ref[, 4])), 0.1)
    }
})

test_that("sgldcv() samples a separated level's marginal, far from the Laplace approximation", {
    d <- separated_data(2)
    d$f <- factor(ifelse(d$f == "a", "b", as.character(d$f)))
    x <- model.matrix(y ~ x + e + f, d)[, -1]
    set.seed(5)
    fit <- sgldcv(x, d$y, n_iter = 30000, chains = 2, progress = FALSE)
    draws <- as.matrix(fit)[, "fd"]
    ess <- sgfs:::convergence_table(sgfs:::chain_draws(fit))["fd", "ess_bulk"]
    ## the exact marginal of fd: the conditional along its line through the
    ## posterior mean of the others, which it moves only through 25 rows
    ## (their posterior sd, about 0.1, is nothing against fd's)
    run <- sgfs:::prepare_run(x, d$y, binomial(), NULL, NULL, NULL, 1000L, NULL, 1L, 1L,
                              1L, NULL, TRUE, FALSE, NULL, TRUE)
    beta <- colMeans(as.matrix(fit))
    rows <- which(d$f == "d")
    eta <- drop(cbind(1, x[rows, ]) %*% beta) - beta[["fd"]]
    exact <- exact_marginal(function(b) sum(plogis(eta + b, log.p = TRUE)),
                            2.5 / sd(x[, "fd"]))
    ## far from the Laplace approximation: its sd is much smaller
    lap <- sgfs:::posterior_laplace(run)
    expect_gt(sgfs:::separated_spec(run, lap)$levels$sd_ratio, 1.5)
    ## the exact updates mix the level: bulk ESS about 4,600 of 58,000 draws
    ## (without them, in the same run, about 430)
    expect_gt(ess, 2000)
    expect_exact_marginal(draws, ess, exact)
})

test_that("poisson zero counts and probit levels: their exact marginals too", {
    set.seed(3)
    N <- 3000
    f <- factor(c(rep("d", 30), sample(c("b", "c"), N - 30, TRUE)))
    x <- rnorm(N)
    X <- model.matrix(~ x + f)[, -1]
    counts <- rpois(N, exp(0.5 + 0.5 * x + ifelse(f == "c", 0.3, 0)))
    counts[f == "d"] <- 0
    binary <- rbinom(N, 1, pnorm(0.3 + 0.8 * x))
    binary[f == "d"] <- 1
    cases <- list(list(y = counts, family = poisson(),
                       ll = function(eta) function(s) -sum(exp(eta + s))),
                  list(y = binary, family = binomial("probit"),
                       ll = function(eta) function(s) sum(pnorm(eta + s, log.p = TRUE))))
    rows <- which(f == "d")
    prior_sd <- 2.5 / sd(X[, "fd"])
    for (cs in cases) {
        set.seed(5)
        fit <- sgldcv(X, cs$y, family = cs$family, n_iter = 30000, chains = 2, progress = FALSE)
        expect_equal(attr(fit, "sgfit")$settings$separated$level, "fd")
        draws <- as.matrix(fit)[, "fd"]
        ess <- sgfs:::convergence_table(sgfs:::chain_draws(fit))["fd", "ess_bulk"]
        beta <- colMeans(as.matrix(fit))
        exact <- exact_marginal(cs$ll(drop(cbind(1, X[rows, ]) %*% beta) - beta[["fd"]]),
                                prior_sd)
        expect_gt(ess, 1500)
        expect_exact_marginal(draws, ess, exact)
    }
})

## 3,000 rows of three classes A (the reference), B, C: x continuous; f with
## "b" and "c" mixed, "d" (30 rows) holding no B, "e" (25 rows) all B
separated_classes_data <- function(seed = 1) {
    set.seed(seed)
    N <- 3000
    f <- factor(c(rep("d", 30), rep("e", 25), sample(c("b", "c"), N - 55, TRUE)))
    x <- rnorm(N)
    p <- cbind(1, exp(0.2 + 0.5 * x), exp(-0.3 - 0.4 * x))
    y <- apply(p / rowSums(p), 1, function(pr) sample(3, 1, prob = pr))
    y[f == "d"] <- sample(c(1, 3), 30, TRUE)
    y[f == "e"] <- 2
    list(X = model.matrix(~ x + f)[, -1], y = factor(c("A", "B", "C")[y]), f = f)
}

test_that("categorical: a level without some class is separated along that class's line", {
    d <- separated_classes_data()
    run <- sgfs:::prepare_run(d$X, d$y, categorical(), NULL, NULL, NULL, 1000L, NULL, 1L, 1L,
                              1L, NULL, TRUE, FALSE, NULL, TRUE)
    levels <- run$design$separated
    ## d holds no B: B's coefficient of fd; e holds only B: every class
    ## against A (no A), C's (no C) and B's own
    expect_equal(vapply(levels, `[[`, "", "name"),
                 c("B:fd", "fe (every class against A)", "B:fe", "C:fe"))
    expect_equal(vapply(levels, `[[`, 0L, "class"), c(1L, 0L, 1L, 2L))
    P <- run$spec$P                                 # 5: the intercept, x, fc, fd, fe
    expect_equal(lapply(levels, `[[`, "coords"), list(4L, c(5L, 5L + P), 5L, 5L + P))
    expect_equal(levels[[1]]$rows, which(d$f == "d"))
    expect_equal(run$design$par_names[c(4, 5, 5 + P)], c("B:fd", "B:fe", "C:fe"))
    ## the line's density in C against the softmax written out here: class
    ## B's predictor of fd's rows moved by t
    lap <- sgfs:::posterior_laplace(run)
    sep <- sgfs:::separated_spec(run, lap, 0L)
    expect_equal(sep$spec$separated_class, c(1L, 0L, 1L, 2L))
    v <- sep$spec$separated_dir[seq_len(2 * P)]
    rows <- which(d$f == "d")
    eta <- matrix(sgfs:::data_xb(run$spec, lap$mode[seq_len(P)]), ncol = 1)
    eta <- cbind(eta, sgfs:::data_xb(run$spec, lap$mode[P + seq_len(P)]))[rows, ]
    code <- as.integer(d$y[rows])
    t <- c(-3, -0.5, 0, 0.7, 2)
    logf <- vapply(t, function(s) {
        z <- cbind(0, eta[, 1] + s, eta[, 2])
        sum(z[cbind(seq_along(rows), code)] - log(rowSums(exp(z)))) +
            sgfs:::log_prior(lap$mode + s * v, run$spec)$value
    }, 0)
    expect_equal(.Call(sgfs:::C_sgfs_line_logdens, run$spec, lap$mode, v, rows - 1L, 1L, t),
                 logf, tolerance = 1e-12)
    ## fe's line against A (class 0): both predictors of its rows moved
    v0 <- sep$spec$separated_dir[2 * P + seq_len(2 * P)]
    rows0 <- which(d$f == "e")
    eta0 <- cbind(sgfs:::data_xb(run$spec, lap$mode[seq_len(P)]),
                  sgfs:::data_xb(run$spec, lap$mode[P + seq_len(P)]))[rows0, ]
    logf0 <- vapply(t, function(s) {
        z <- cbind(0, eta0 + s)
        sum(z[, 2] - log(rowSums(exp(z)))) + sgfs:::log_prior(lap$mode + s * v0, run$spec)$value
    }, 0)
    expect_equal(.Call(sgfs:::C_sgfs_line_logdens, run$spec, lap$mode, v0, rows0 - 1L, 0L, t),
                 logf0, tolerance = 1e-12)
    ## the line moves B's predictor of those rows only
    eta_move <- sgfs:::data_xb(run$spec, v[seq_len(P)])
    expect_equal(eta_move[rows], rep(1, length(rows)), tolerance = 1e-10)
    expect_lt(max(abs(eta_move[-rows])), 1e-10)
    expect_lt(max(abs(v[P + seq_len(P)])), 1e-12)
})

test_that("sgldcv() samples a categorical model's separated coefficient's exact marginal", {
    d <- separated_classes_data()
    set.seed(5)
    fit <- sgldcv(d$X, d$y, family = categorical(), n_iter = 20000, chains = 2, progress = FALSE)
    expect_equal(attr(fit, "sgfit")$settings$separated$level,
                 c("B:fd", "fe (every class against A)", "B:fe", "C:fe"))
    draws <- as.matrix(fit)[, "B:fd"]
    ess <- sgfs:::convergence_table(sgfs:::chain_draws(fit))["B:fd", "ess_bulk"]
    ## its exact marginal: the conditional along its line through the
    ## posterior mean of the others (B's predictor of fd's 30 rows, none B)
    beta <- colMeans(as.matrix(fit))
    rows <- which(d$f == "d")
    Xr <- cbind(1, d$X[rows, ])
    eB <- drop(Xr %*% beta[1:5]) - beta[["B:fd"]]
    eC <- drop(Xr %*% beta[6:10])
    own <- ifelse(d$y[rows] == "A", 0, eC)            # (no row is B)
    exact <- exact_marginal(function(b) sum(own - log(1 + exp(eB + b) + exp(eC))),
                            2.5 / sd(d$X[, "fd"]))
    ## the exact updates mix it: bulk ESS about 900 of 36,000 draws (without
    ## them about 90, sgfs 0.1.0 before this change, the same run)
    expect_gt(ess, 400)
    expect_exact_marginal(draws, ess, exact)
})

test_that("a separated level of many rows is left to the rule, not frozen on its line", {
    d <- separated_data()
    d$f <- factor(ifelse(d$f == "a", "b", as.character(d$f)))      # "d": 25 rows, all 1
    ## a 0/1 column of 1,500 rows, all y = 0: separated, but an update along
    ## it costs 1,500 rows, which at batch 10 would come every ~3,700 iterations
    d$g <- 0
    d$g[sample(which(d$f != "d"), 1500)] <- 1
    d$y[d$g == 1] <- 0
    x <- model.matrix(y ~ x + e + f + g, d)[, -1]
    run <- sgfs:::prepare_run(x, d$y, binomial(), NULL, NULL, 10L, 1000L, NULL, 1L, 1L,
                              1L, NULL, TRUE, FALSE, NULL, TRUE)
    expect_equal(vapply(run$design$separated, `[[`, "", "name"), c("fd", "g"))
    lap <- sgfs:::posterior_laplace(run)
    sep <- sgfs:::separated_spec(run, lap, 0L)
    expect_equal(sep$levels$level, "fd")
    expect_equal(sep$skipped, 1L)
    expect_lte(sep$every, sgfs:::separated_every_max)
    ## both at batch 1,000: every level's updates fit
    run$spec$batch_size <- 1000L
    expect_equal(sgfs:::separated_spec(run, lap, 0L)$levels$level, c("fd", "g"))
    ## (sgld(): sgldcv()'s rows held in every batch would make its updates cheaper)
    fit <- suppressWarnings(sgld(x, d$y, batch_size = 10, n_iter = 100, progress = FALSE))
    expect_equal(attr(fit, "sgfit")$settings$separated$level, "fd")
    expect_equal(attr(fit, "sgfit")$settings$separated_skipped, 1L)
})

test_that("a nearly separated level (one success in 13 rows) is updated exactly: SGFS-CV's marginal", {
    skip_on_cran()
    set.seed(9)
    N <- 3000
    x <- cbind(x = rnorm(N), r = rep(c(1, 0), c(13, N - 13)), e = rbinom(N, 1, 0.4))
    y <- rbinom(N, 1, plogis(0.3 + 0.8 * x[, "x"] - 0.4 * x[, "e"]))
    y[1:13] <- c(1, rep(0, 12))
    ## found with the rarer response's count; a mixed column is not
    run <- sgfs:::prepare_run(x, y, binomial(), NULL, NULL, NULL, 300L, NULL, 1L, 1L, 1L,
                              NULL, TRUE, FALSE, NULL, TRUE)
    levels <- run$design$separated
    expect_equal(vapply(levels, `[[`, "", "name"), "r")
    expect_equal(levels[[1]]$minority, 1)
    set.seed(10)
    fit <- sgfs(x, y, batch_size = 300L, n_iter = 20000L, progress = FALSE)
    info <- attr(fit, "sgfit")
    expect_true(info$settings$control_variates)
    expect_equal(info$settings$separated$level, "r")
    expect_equal(info$settings$separated$minority, 1)
    ## r's exact marginal: its conditional through the others' posterior
    ## mean (their sds, about 0.05, are nothing against r's, about 1.3).
    ## Without the exact updates its sd came out 5 % small here (z = -6).
    draws <- as.matrix(fit)
    beta <- colMeans(draws)
    rows <- 1:13
    eta <- drop(cbind(1, x[rows, ]) %*% beta) - beta[["r"]]
    exact <- exact_marginal(function(b) sum(dbinom(y[rows], 1, plogis(eta + b), log = TRUE)),
                            2.5 / sd(x[, "r"]))
    expect_exact_marginal(draws[, "r"], coda::effectiveSize(draws[, "r"]), exact)
})
