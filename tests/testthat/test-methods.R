## The value is a coda object: coda functions work on it unchanged; the
## model-fit methods and predict.

pima_fit <- local({
    fit <- NULL
    function() {
        if (is.null(fit)) {
            set.seed(20)
            fit <<- sgfs(type ~ npreg + glu + bmi + age, data = MASS::Pima.tr,
                         n_iter = 3000, batch_size = 50, progress = FALSE)
        }
        fit
    }
})

test_that("a fit of one draw prints and summarises, quietly", {
    set.seed(21)
    fit <- quiet(sgld(type ~ glu + bmi, data = MASS::Pima.tr, n_iter = 2, burnin = 1,
                      progress = FALSE))
    expect_equal(coda::niter(fit), 1)
    ## coda's time-series SE cannot be estimated from one draw: NA, and the
    ## error of its AR fit (inside try()) is not printed
    errs <- utils::capture.output(s <- summary(fit), type = "message")
    expect_length(errs, 0)
    expect_true(all(is.na(s$statistics[, "Time-series SE"])))
    expect_equal(unname(s$statistics[, "Mean"]), unname(coef(fit)))
    expect_true(any(grepl("Mixing", utils::capture.output(print(s)))))
    expect_true(any(grepl("1 draws", utils::capture.output(quiet(print(fit))))))
})

test_that("one chain is an mcmc object with true iteration numbers", {
    fit <- pima_fit()
    expect_identical(class(fit), c("sgfit", "mcmc"))
    expect_true(coda::is.mcmc(fit))
    expect_identical(coda::mcpar(fit), c(301, 3000, 1))
    expect_identical(coda::varnames(fit),
                     c("(Intercept)", "npreg", "glu", "bmi", "age"))
    s <- summary(fit)
    expect_s3_class(s, "summary.mcmc")
    expect_equal(unname(s$statistics[, "Mean"]), unname(coef(fit)))
    expect_length(coda::effectiveSize(fit), 5)
    hpd <- coda::HPDinterval(fit)
    expect_true(all(hpd[, "lower"] < coef(fit) & coef(fit) < hpd[, "upper"]))
    w <- window(fit, start = 1001, thin = 10)
    expect_identical(coda::mcpar(w), c(1001, 2991, 10))
    expect_equal(nrow(as.matrix(w)), 200)
    expect_output(print(fit), "SGFS-f with control variates at the mode \\(alpha = 1\\) posterior draws, binomial\\(logit\\)")
    expect_output(print(s), "3. Mixing")
    ## the mixing costs: ESS/s, ATUC = autocorrelation time x s per kept draw,
    ## gradient evaluations and data passes per effective draw
    info <- attr(fit, "sgfit")
    ess <- sgfs:::convergence_table(sgfs:::chain_draws(fit))$ess_bulk
    expect_equal(unname(s$ess_per_second), ess / info$elapsed)
    expect_equal(unname(s$atuc), (2700 / ess) * info$elapsed / 2700)
    expect_equal(s$grad_per_ess, info$grad_evals / min(ess))
    expect_equal(s$passes_per_ess, info$grad_evals / min(ess) / 200)
    expect_output(print(s), "ATUC \\(s\\)")
    expect_output(print(fit), "per effective draw")
    expect_equal(nobs(fit), 200)
    expect_equal(formula(fit), type ~ npreg + glu + bmi + age, ignore_attr = TRUE)
    expect_equal(dim(vcov(fit)), c(5, 5))
    expect_equal(vcov(fit), cov(as.matrix(fit)), ignore_attr = TRUE)
    pdf(NULL); on.exit(dev.off())
    expect_silent(plot(fit))
})

test_that("the SGFS-b report names its blocks", {
    set.seed(26)
    fit <- sgfs(type ~ glu + bmi, data = MASS::Pima.tr, n_iter = 300, batch_size = 50,
                preconditioner = "block", blocks = c(1, 2), progress = FALSE)
    expect_output(print(fit), "SGFS-b with control variates at the mode \\(alpha = 1; blocks 1 \\+ 2\\) posterior draws")
    expect_identical(sgfs:::blocks_label(rep(1:2, 5)), "10 blocks of 1 to 2")
    ## by default the coefficients and a sampled log_sigma
    fit <- sgfs(bmi ~ glu + age, data = MASS::Pima.tr, family = gaussian(), n_iter = 300,
                batch_size = 50, preconditioner = "block", progress = FALSE)
    expect_identical(attr(fit, "sgfit")$settings$blocks, c(3L, 1L))
})

test_that("the SGLD report states the step's variance inflation and warns when large", {
    set.seed(25)
    fit <- sgld(type ~ glu + bmi, data = MASS::Pima.tr, n_iter = 500, batch_size = 50,
                progress = FALSE, metric = "identity")
    ## the step's inflation eps gamma lambda_max / 4, from the exact Hessian
    ## at the mode (the default step aims at 5 %)
    X <- model.matrix(~ glu + bmi, MASS::Pima.tr)
    Xs <- cbind(1, scale(X[, -1]))
    yy <- as.integer(MASS::Pima.tr$type == "Yes")
    nlp <- function(b) -sum(yy * (Xs %*% b) - log1p(exp(Xs %*% b))) + sum(b^2) / (2 * 2.5^2)
    mode <- optim(c(0, 0, 0), nlp, method = "BFGS")$par
    w <- drop(plogis(Xs %*% mode))
    H <- crossprod(Xs * sqrt(w * (1 - w))) + diag(1 / 2.5^2, 3)
    gamma <- 1 + 200 / 50 * 150 / 199
    settings <- attr(fit, "sgfit")$settings
    expect_equal(settings$stepsize * gamma * max(eigen(H)$values) / 4, 0.05,
                 tolerance = 0.02)
    expect_output(print(fit), "variance inflation ~5(\\.[0-9])?%")
    big <- sgld(type ~ glu + bmi, data = MASS::Pima.tr, n_iter = 500, batch_size = 50,
                stepsize = 40 * attr(fit, "sgfit")$settings$stepsize, progress = FALSE,
                metric = "identity")
    ## 40 times the step: eps gamma lambda / 4 = 2, exactly 2 / (1 - 2 / gamma) = 398 %
    expect_output(print(big), "inflates the posterior variance by about 39[0-9]%")
    advice <- attr(big, "sgfit")$settings$step_5pct
    expect_equal(advice, attr(fit, "sgfit")$settings$stepsize, tolerance = 0.02)
    expect_output(print(big), sprintf("stepsize = %.2g would by 5%%", advice))
    ## (past the limit the draws may also be far from the posterior's mass, and say so)
    past <- withr::with_seed(3, suppressWarnings(sgld(
        type ~ glu + bmi, data = MASS::Pima.tr, n_iter = 20, burnin = 0, batch_size = 50,
        stepsize = 85 * attr(fit, "sgfit")$settings$stepsize, progress = FALSE,
        metric = "identity")))
    expect_equal(attr(past, "sgfit")$settings$inflation, Inf)
    expect_output(print(past), "past the stability limit")
})

test_that("several chains are an mcmc.list; gelman.diag works", {
    set.seed(21)
    fit <- sgld(type ~ glu + bmi, data = MASS::Pima.tr, n_iter = 2000, chains = 3,
                batch_size = 50, progress = FALSE)
    expect_identical(class(fit), c("sgfit", "mcmc.list"))
    expect_true(coda::is.mcmc.list(fit))
    g <- coda::gelman.diag(fit)
    expect_equal(dim(g$psrf), c(3, 2))
    expect_output(print(summary(fit)), "Rhat")
    expect_equal(nrow(as.matrix(fit)), 3 * 1800)
    expect_equal(coef(fit), colMeans(as.matrix(fit)))
    expect_identical(coda::mcpar(window(fit, start = 1001)[[2]]), c(1001, 2000, 1))
})

test_that("draws are on the original scale of the predictors", {
    ## standardisation is internal: the linear predictor of a draw is the
    ## same whether computed from original-scale draws or internally
    fit <- pima_fit()
    X <- model.matrix(~ npreg + glu + bmi + age, MASS::Pima.tr)
    info <- attr(fit, "sgfit")
    internal <- sgfs:::to_internal(as.matrix(fit)[7, ], info$design)
    eta_int <- sgfs:::data_xb(sgfs:::fit_spec(info), internal)
    expect_equal(drop(X %*% as.matrix(fit)[7, ]), eta_int, ignore_attr = TRUE)
    expect_equal(sgfs:::to_original(internal, info$design), as.matrix(fit)[7, ],
                 ignore_attr = TRUE)
    ## gaussian: log_sigma reported on the response's scale
    set.seed(22)
    g <- sgfs(mpg ~ wt + hp, data = mtcars, family = gaussian(), n_iter = 4000,
              batch_size = 16, progress = FALSE)
    expect_identical(coda::varnames(g), c("(Intercept)", "wt", "hp", "log_sigma"))
    ref <- lm(mpg ~ wt + hp, data = mtcars)
    expect_lt(max(abs(coef(g)[1:3] - coef(ref)) / sqrt(diag(vcov(ref)))), 0.5)
    expect_lt(abs(exp(coef(g)[["log_sigma"]]) / sigma(ref) - 1), 0.2)
})

test_that("predict averages over the posterior draws", {
    fit <- pima_fit()
    te <- MASS::Pima.te
    B <- as.matrix(fit)
    X <- model.matrix(~ npreg + glu + bmi + age, te)
    expect_equal(predict(fit, te), rowMeans(X %*% t(B)), ignore_attr = TRUE)
    p <- predict(fit, te, type = "response")
    expect_equal(p, rowMeans(plogis(X %*% t(B))), ignore_attr = TRUE)
    expect_gt(mean((p > 0.5) == (te$type == "Yes")), 0.7)
    cls <- predict(fit, te, type = "class")
    expect_identical(levels(cls), c("No", "Yes"))
    expect_identical(cls == "Yes", unname(p > 0.5))
    ci <- predict(fit, te[1:5, ], type = "response", interval = "credible", level = 0.9)
    expect_identical(colnames(ci), c("fit", "lwr", "upr"))
    expect_true(all(ci[, "lwr"] < ci[, "fit"] & ci[, "fit"] < ci[, "upr"]))
    expect_length(predict(fit), 200)
    expect_error(predict(fit, te, type = "class", interval = "credible"), NA)
    g <- sgfs(mpg ~ wt, data = mtcars, family = gaussian(), n_iter = 500,
              batch_size = 16, progress = FALSE)
    expect_error(predict(g, type = "class"), "'type'")
})

test_that("predict handles factors and matrix fits", {
    df <- withr::with_seed(23, data.frame(g = factor(sample(c("a", "b", "c"), 200, TRUE)),
                                          x = rnorm(200)))
    df$y <- rbinom(200, 1, plogis(df$x + (df$g == "b")))
    set.seed(24)
    fit <- sgfs(y ~ g + x, data = df, n_iter = 500, batch_size = 50, progress = FALSE)
    expect_identical(coda::varnames(fit), c("(Intercept)", "gb", "gc", "x"))
    expect_length(predict(fit, data.frame(g = c("c", "a"), x = c(0, 1))), 2)
    expect_error(predict(fit, data.frame(g = "z", x = 0)), "new level")
    set.seed(24)
    mfit <- sgfs(as.matrix(df["x"]), df$y, n_iter = 500, batch_size = 50, progress = FALSE)
    expect_length(predict(mfit, matrix(c(0, 1, 2), ncol = 1)), 3)
    expect_error(predict(mfit, matrix(1:4, ncol = 2)), "'newdata' must have 1 columns")
    expect_null(formula(mfit))
})

test_that("rel_error computes Ahn et al.'s E1 and E2", {
    m <- matrix(c(1, 2, 3, 4, 2, 2, 6, 4), 4)
    e <- rel_error(m, c(2, 4), diag(2))
    C <- cov(m) * 3 / 4
    expect_equal(e[["E1"]], (abs(2.5 - 2) + abs(3.5 - 4)) / 6)
    expect_equal(e[["E2"]], sum(abs(C - diag(2))) / 2)
    expect_error(rel_error(m, 1, diag(2)), "'ref_mean'")
    expect_error(rel_error(m, 1:2, diag(3)), "'ref_cov'")
})

test_that("a fit keeps no reference to the caller's data and survives saveRDS", {
    big <- matrix(withr::with_seed(26, rnorm(4000)), 1000, 4)
    y <- withr::with_seed(27, rbinom(1000, 1, 0.5))
    set.seed(28)
    fit <- sgld(big, y, n_iter = 200, batch_size = 50, progress = FALSE)
    ## the fit refers to its data: serialised, it holds its draws, not them,
    ## and its size does not grow with the rows (beyond the windows drawn
    ## ahead a chain's state holds from 10,000 rows: at most 32 x 50
    ## doubles for batches of 50)
    big10 <- big[rep(1:1000, 10), ]
    fit10 <- withr::with_seed(28, sgld(big10, rep(y, 10), n_iter = 200, batch_size = 50,
                                       progress = FALSE))
    size <- length(serialize(fit, NULL))
    expect_lt(abs(length(serialize(fit10, NULL)) - size), 0.02 * size + 8 * 32 * 50)
    f <- tempfile(fileext = ".rds")
    saveRDS(fit, f)
    back <- readRDS(f)
    set.seed(29)
    a <- update(fit, n_iter = 50, progress = FALSE)
    ## read back, it has no data: update() and in-sample predict() say how
    ## to give them again
    expect_error(update(back, n_iter = 50, progress = FALSE),
                 "this fit's data are not in this R session .* update\\(fit, n_iter = , data =")
    expect_error(predict(back), "not in this R session")
    expect_equal(predict(back, newdata = big[1:3, ]), predict(fit, newdata = big[1:3, ]))
    ## given again, they are checked and the chains go on as if never saved
    set.seed(30)
    b <- update(back, n_iter = 50, progress = FALSE, x = big, y = y)
    expect_identical(sgfs:::all_draws(a), sgfs:::all_draws(b))
    expect_equal(predict(b), predict(a))
    expect_error(update(back, n_iter = 50, progress = FALSE, x = big, y = 1 - y),
                 "'x' must be the data this fit was made with")
})

test_that("fits on the same data share the engine's copy while one of them lives", {
    skip_if_not(capabilities("profmem"), "R without memory profiling (tracemem)")
    x <- matrix(withr::with_seed(31, rnorm(8000)), 2000, 4)
    y <- withr::with_seed(32, rbinom(2000, 1, 0.5))
    address <- function(fit) {
        a <- tracemem(sgfs:::fit_spec(attr(fit, "sgfit"))$xt)
        untracemem(sgfs:::fit_spec(attr(fit, "sgfit"))$xt)
        a
    }
    a <- sgld(x, y, n_iter = 50, progress = FALSE)
    b <- sgldcv(x, y, n_iter = 50, progress = FALSE)
    expect_identical(address(b), address(a))
    ## other data (two rows swapped: the same column statistics) get their own
    x2 <- x
    x2[1:2, ] <- x2[2:1, ]
    expect_false(identical(address(sgld(x2, y, n_iter = 50, progress = FALSE)), address(a)))
    ## a saved fit does not keep them, nor does the package once no fit does
    f <- tempfile(fileext = ".rds")
    saveRDS(a, f)
    expect_null(sgfs:::handle_data(attr(readRDS(f), "sgfit")))
    key <- attr(a, "sgfit")$design$data_key
    expect_false(is.null(sgfs:::shared_data(key)))
    rm(a, b)
    invisible(gc())
    expect_null(sgfs:::shared_data(key))
})

test_that("predict gives NA for rows with missing predictors, and pads na.exclude", {
    fit <- pima_fit()
    te <- MASS::Pima.te[1:6, ]
    te$glu[2] <- NA
    p <- predict(fit, te, type = "response", interval = "credible")
    expect_true(all(is.na(p[2, ])))
    expect_false(anyNA(p[-2, ]))
    df <- MASS::Pima.tr[1:80, ]
    df$bmi[5] <- NA
    set.seed(31)
    ex <- sgfs(type ~ glu + bmi, data = df, na.action = na.exclude, n_iter = 300,
               batch_size = 40, progress = FALSE)
    pe <- predict(ex)
    expect_length(pe, 80)
    expect_true(is.na(pe[5]))
    set.seed(32)
    m <- sgfs(as.matrix(df[-5, c("glu", "bmi")]), df$type[-5], n_iter = 300,
              batch_size = 40, progress = FALSE)
    expect_true(is.na(predict(m, rbind(c(100, NA), c(100, 30)))[1]))
    expect_error(predict(m, matrix("a", 1, 2)), "'newdata' must be a numeric matrix")
    expect_error(predict(m, type = "prob"), "'type' must be one of")
})

test_that("a short run's report says how much longer to run", {
    data(Pima.tr, package = "MASS", envir = environment())
    set.seed(131)
    fit <- suppressWarnings(sgld(type ~ ., data = Pima.tr, n_iter = 1000, progress = FALSE,
                                 metric = "identity"))
    ess <- min(sgfs:::convergence_table(sgfs:::chain_draws(fit))$ess_bulk)
    expect_lt(ess, 100)
    more <- ceiling(900 * (400 / ess - 1))
    expect_output(print(fit), sprintf("only %.0f bulk effective draws.*update\\(fit, n_iter = %.0f\\)",
                                      ess, more))
})

test_that("the report's posterior table keeps each column in fixed notation", {
    tab <- cbind(mean = c(-10.234, 1.77, 0.0481), sd = c(1.2, 0.003, 2e-6),
                 ESS = c(120, 3400, 2e6))
    out <- capture.output(sgfs:::print_columns(tab, 3))
    expect_match(out[2], "-10.2 +1.20 +120$")
    expect_match(out[3], "1.77 +0.00300 +3400$")
    expect_match(out[4], "0.0481 +2e-06 +2000000$")
    ## a full-data sampler's report says it uses every row
    data(Pima.tr, package = "MASS", envir = environment())
    set.seed(5)
    fit <- hmc(type ~ glu + bmi, data = Pima.tr, n_iter = 300L)
    expect_output(print(fit), "all 200 rows each iteration")
    expect_false(any(grepl("batch", capture.output(print(fit)))))
})

test_that("a fit restored in a fresh session has coda's methods (coda is loaded with sgfs)", {
    skip_on_cran()
    set.seed(8)
    fit <- sgld(type ~ glu + bmi, data = MASS::Pima.tr, n_iter = 300, chains = 2,
                batch_size = 50, progress = FALSE)
    f <- tempfile(fileext = ".rds")
    saveRDS(fit, f)
    code <- sprintf("library(sgfs, lib.loc = '%s'); cat(dim(as.matrix(readRDS('%s'))))",
                    dirname(find.package("sgfs")), f)
    out <- system2(file.path(R.home("bin"), "Rscript"), c("--vanilla", "-e", shQuote(code)),
                   stdout = TRUE)
    expect_identical(out, "540 3")
})
