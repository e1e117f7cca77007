## categorical(): the reference-class softmax model on the one engine.

test_that("with two levels categorical() is logistic regression, draw for draw", {
    ir <- droplevels(iris[iris$Species != "setosa", ])
    x <- as.matrix(ir[, 1:2])
    set.seed(141)
    a <- sgfs(x, ir$Species, family = categorical(), n_iter = 600, batch_size = 20,
              progress = FALSE, control_variates = FALSE)
    set.seed(141)
    b <- sgfs(x, ir$Species, family = binomial(), n_iter = 600, batch_size = 20,
              progress = FALSE, control_variates = FALSE)
    ## the same draws up to rounding: the logistic kernel's dot products may
    ## use fused multiply-adds (its AVX2 clone), the categorical ones BLAS
    expect_equal(unname(sgfs:::all_draws(a)), unname(sgfs:::all_draws(b)), tolerance = 1e-12)
    expect_identical(colnames(a), paste0("virginica:", c("(Intercept)", "Sepal.Length", "Sepal.Width")))
})

test_that("every sampler runs on a categorical model", {
    fits <- list(
        sgfs = function(...) sgfs(..., n_iter = 400),
        sgfs_d = function(...) sgfs(..., preconditioner = "diagonal", n_iter = 400),
        sgld = function(...) sgld(..., n_iter = 400),
        sgldcv = function(...) sgldcv(..., n_iter = 400, opt_iter = 400),
        psgld = function(...) psgld(..., n_iter = 400),
        sghmc = function(...) sghmc(..., n_iter = 400),
        sgnht = function(...) sgnht(..., n_iter = 400),
        isgd = function(...) isgd(..., n_iter = 400),
        osgfs = function(...) osgfs(..., n_iter = 400, opt_iter = 400, stepsize = "max"),
        mala = function(...) mala(..., n_iter = 400),
        hmc = function(...) hmc(..., n_iter = 200))
    for (name in names(fits)) {
        set.seed(142)
        fit <- suppressWarnings(fits[[name]](Species ~ Petal.Width + Sepal.Width, data = iris,
                                             family = categorical(), batch_size = 30,
                                             progress = FALSE))
        d <- sgfs:::all_draws(fit)
        expect_true(all(is.finite(d)), info = name)
        expect_equal(ncol(d), 6L, info = name)
        expect_equal(levels(predict(fit, newdata = iris[1:5, ], type = "class")),
                     levels(iris$Species), info = name)
    }
    ## a categorical fit has no single linear predictor: probabilities by default
    p <- predict(fit, newdata = iris[1:5, ])
    expect_identical(p, predict(fit, newdata = iris[1:5, ], type = "response"))
    expect_equal(unname(rowSums(p)), rep(1, 5), tolerance = 1e-12)
    expect_error(predict(fit, newdata = iris[1:5, ], type = "link"), "'type'")
    map <- sga(Species ~ Petal.Width, data = iris, family = categorical(), n_iter = 500,
               progress = FALSE)
    expect_named(coef(map), c("versicolor:(Intercept)", "versicolor:Petal.Width",
                              "virginica:(Intercept)", "virginica:Petal.Width"))
})

test_that("categorical(): standardisation maps each class's coefficients back", {
    ## a weak prior: fits with and without internal standardisation agree
    ## (simulated, not separable: the posterior is proper and near Gaussian)
    withr::with_seed(10, {
        x <- matrix(rnorm(1200), 600, 2)
        eta <- cbind(0, cbind(1, x) %*% matrix(c(0.5, 1, -1, -0.5, 0.5, 1), 3))
        y <- factor(apply(exp(eta), 1L, function(p) sample(c("a", "b", "c"), 1L, prob = p)))
    })
    x <- sweep(x * rep(c(10, 0.1), each = 600), 2L, c(5, -3), "+")
    set.seed(143)
    a <- mala(x, y, family = categorical(), prior = normal(0, 100), n_iter = 6000,
              progress = FALSE)
    set.seed(144)
    b <- mala(x, y, family = categorical(), prior = normal(0, 100), standardize = FALSE,
              n_iter = 6000, progress = FALSE)
    z <- (coef(a) - coef(b)) / sqrt(diag(vcov(b)))
    expect_lt(max(abs(z)), 0.15)
    expect_true(all(abs(sqrt(diag(vcov(a)) / diag(vcov(b))) - 1) < 0.1))
})

test_that("a rare level's rows are held in every minibatch of a categorical model (SGFS-CV)", {
    skip_on_cran()
    set.seed(4)
    N <- 6000
    x1 <- rnorm(N)
    f <- factor(c(rep("s", 30), sample(c("p", "q"), N - 30, TRUE)))
    P <- cbind(1, exp(0.5 + x1 + ifelse(f == "s", 1, 0)), exp(-0.3 + ifelse(f == "q", -0.7, 0)))
    P <- P / rowSums(P)
    d <- data.frame(y = factor(apply(P, 1, function(p) sample(c("A", "B", "C"), 1, prob = p))),
                    x1, f)
    set.seed(2)
    fit <- sgfs(y ~ ., d, family = categorical(), batch_size = 60L, n_iter = 20000L,
                progress = FALSE)
    info <- attr(fit, "sgfit")
    expect_true(info$settings$control_variates)
    ## the level's 30 rows move the whitened gradient by many sd when drawn
    expect_true(all(0:29 %in% info$spec$fixed))
    ## its coefficients' sds within Monte Carlo error of HMC's (drawn in
    ## minibatches, the level's rows had made C:fs's 8 % too wide here)
    set.seed(1)
    ref <- hmc(y ~ ., d, family = categorical(), n_iter = 6000L, progress = FALSE)
    a <- as.matrix(fit)
    b <- as.matrix(ref)
    se <- sqrt(1 / (2 * coda::effectiveSize(a)) + 1 / (2 * coda::effectiveSize(b)))
    expect_lt(max(abs(apply(a, 2, sd) / apply(b, 2, sd) - 1) / se), 4)
})

test_that("an ordered response given to categorical() is fitted as unordered, with a warning", {
    d <- data.frame(x = rnorm(60), y = factor(rep(c("lo", "mid", "hi"), 20),
                                             levels = c("lo", "mid", "hi"), ordered = TRUE))
    expect_warning(f <- sgld(y ~ x, d, family = categorical(), iter = 200, seed = 1, progress = FALSE),
                   "ordered factor, whose order categorical\\(\\) does not use")
    d$y <- factor(d$y, ordered = FALSE)
    expect_silent(g <- sgld(y ~ x, d, family = categorical(), iter = 200, seed = 1, progress = FALSE))
    expect_identical(as.matrix(f), as.matrix(g))
})
