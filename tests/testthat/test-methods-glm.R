## The base generics that answer as for glm fits (fitted, residuals, terms,
## model.frame, model.matrix, family, sigma, confint, update with a formula)
## and the reshaping of draws (as.data.frame, c, window, [) that keeps a fit
## a fit (issue 16, item 4).

cached <- local({
    fits <- list()
    function(name, make) {
        if (is.null(fits[[name]])) fits[[name]] <<- make()
        fits[[name]]
    }
})

pima_logit <- function() cached("logit", function() {
    set.seed(161)
    sgfs(type ~ glu + bmi + age, data = MASS::Pima.tr, n_iter = 400, batch_size = 50,
         progress = FALSE)
})

cars_gauss <- function() cached("gauss", function() {
    set.seed(162)
    suppressWarnings(sgld(mpg ~ wt + hp, data = mtcars, family = gaussian(), n_iter = 400,
                          batch_size = 16, progress = FALSE))
})

## two one-chain runs of the same model, and a run of two chains
pima_runs <- function() cached("runs", function() {
    run <- function(seed, ...) withr::with_seed(seed, suppressWarnings(
        sgld(type ~ glu + bmi, data = MASS::Pima.tr, n_iter = 300, batch_size = 50,
             progress = FALSE, ...)))
    list(a = run(163), b = run(164), two = run(165, chains = 2))
})

test_that("fitted() is the posterior mean of the expected response on the training rows", {
    fit <- pima_logit()
    X <- model.matrix(~ glu + bmi + age, MASS::Pima.tr)
    B <- as.matrix(fit)
    expect_equal(fitted(fit), rowMeans(plogis(X %*% t(B))), ignore_attr = TRUE)
    expect_length(fitted(fit), 200)
    g <- cars_gauss()
    Xg <- model.matrix(~ wt + hp, mtcars)
    Bg <- as.matrix(g)
    ## identity link: the mean over draws is the design times the mean draw
    expect_equal(fitted(g), drop(Xg %*% colMeans(Bg[, 1:3])), ignore_attr = TRUE,
                 tolerance = 1e-10)
})

test_that("residuals() are y - fitted, and Pearson's divide by the variance function", {
    fit <- pima_logit()
    y <- as.numeric(MASS::Pima.tr$type == "Yes")
    mu <- fitted(fit)
    expect_equal(residuals(fit), y - mu)
    expect_equal(residuals(fit, type = "response"), y - mu)
    expect_equal(residuals(fit, "pearson"), (y - mu) / sqrt(mu * (1 - mu)))
    ## as residuals.glm: gaussian Pearson residuals are y - mu (not / sigma)
    g <- cars_gauss()
    expect_equal(residuals(g), mtcars$mpg - fitted(g), ignore_attr = TRUE, tolerance = 1e-12)
    expect_equal(residuals(g, "pearson"), residuals(g))
    ref <- glm(mpg ~ wt + hp, data = mtcars)
    expect_equal(residuals(ref, "pearson"), residuals(ref, "response"))
    expect_error(residuals(fit, type = "deviance"), "'type' must be one of \"response\", \"pearson\"")
})

test_that("terms, model.frame, model.matrix and family are those of the equivalent glm", {
    fit <- pima_logit()
    ref <- glm(type ~ glu + bmi + age, data = MASS::Pima.tr, family = binomial())
    expect_equal(terms(fit), terms(ref), ignore_formula_env = TRUE)
    expect_equal(model.frame(fit), model.frame(ref), ignore_formula_env = TRUE)
    expect_equal(model.matrix(fit), model.matrix(ref))
    expect_equal(family(fit), binomial())
    expect_identical(family(fit)$family, "binomial")
    expect_equal(family(cars_gauss()), gaussian())
    ## factors: the contrasts and levels of the fit
    d <- MASS::Pima.tr
    d$old <- factor(d$age > 30, labels = c("young", "old"))
    set.seed(166)
    ff <- sgfs(type ~ glu + old, data = d, n_iter = 200, batch_size = 50, progress = FALSE)
    fref <- glm(type ~ glu + old, data = d, family = binomial())
    expect_equal(model.matrix(ff), model.matrix(fref))
    expect_identical(colnames(model.matrix(ff)), coda::varnames(ff))
    ## the data changed since the fit: said, not a wrong frame
    d <- d[1:100, ]
    expect_error(model.frame(ff), "changed since the fit: 100 rows are used now, 200 were then")
    ## model.frame(data = ) rebuilds on other data
    expect_equal(nrow(model.frame(ff, data = d)), 100)
})

test_that("sigma() is the posterior mean of the residual sd; 1 for fixed dispersion", {
    g <- cars_gauss()
    expect_equal(sigma(g), mean(exp(as.matrix(g)[, "log_sigma"])))
    expect_gt(sigma(g), 1.5)
    expect_lt(sigma(g), 4)
    expect_identical(sigma(pima_logit()), 1)
    set.seed(167)
    fixed <- suppressWarnings(sgld(mpg ~ wt, data = mtcars, family = gaussian(), sigma = 2.5,
                                   n_iter = 100, batch_size = 16, progress = FALSE))
    expect_equal(sigma(fixed), 2.5)
})

test_that("confint() gives posterior quantiles, not mean +- 1.96 sd", {
    fit <- pima_logit()
    B <- as.matrix(fit)
    ci <- confint(fit)
    expect_identical(colnames(ci), c("2.5 %", "97.5 %"))
    expect_identical(rownames(ci), colnames(B))
    expect_equal(ci, t(apply(B, 2L, quantile, c(0.025, 0.975))), ignore_attr = TRUE)
    normal <- cbind(colMeans(B) - qnorm(0.975) * apply(B, 2L, sd),
                    colMeans(B) + qnorm(0.975) * apply(B, 2L, sd))
    expect_false(isTRUE(all.equal(unname(ci), unname(normal))))
    ci90 <- confint(fit, c("bmi", "glu"), level = 0.9)
    expect_identical(dimnames(ci90), list(c("bmi", "glu"), c("5 %", "95 %")))
    expect_equal(ci90["glu", ], quantile(B[, "glu"], c(0.05, 0.95)), ignore_attr = TRUE)
    expect_equal(confint(fit, 2), confint(fit, "glu"))
    ## several chains: pooled
    two <- pima_runs()$two
    expect_equal(confint(two, "bmi"), t(quantile(as.matrix(two)[, "bmi"], c(0.025, 0.975))),
                 ignore_attr = TRUE)
    expect_error(confint(fit, "BMI"), "'parm' names no parameter of the fit: BMI")
    expect_error(confint(fit, 7), "'parm' must be parameter names or indices between 1 and 4")
    expect_error(confint(fit, level = 95), "'level' must be a single number between 0 and 1")
})

test_that("update() with a new formula refits; with a number it continues", {
    fit <- pima_logit()
    small <- update(fit, . ~ . - bmi, n_iter = 200)
    expect_identical(coda::varnames(small), c("(Intercept)", "glu", "age"))
    expect_equal(formula(small), type ~ glu + age, ignore_attr = TRUE)
    expect_identical(coda::niter(small), 180L)
    expect_identical(model.matrix(small), model.matrix(fit)[, c(1, 2, 4)], ignore_attr = TRUE)
    expect_identical(coda::niter(update(fit, 50)), coda::niter(fit) + 50L)
    expect_error(update(fit, "y ~ x"), "'formula.' must be a formula")
    expect_error(update(fit, . ~ ., append = FALSE), "'append' is for continuing the chains")
    set.seed(168)
    m <- sgfs(as.matrix(MASS::Pima.tr[c("glu", "bmi")]), MASS::Pima.tr$type, n_iter = 200,
              batch_size = 50, progress = FALSE)
    expect_error(update(m, . ~ . - glu), "'formula.' is for a fit made with a formula")
    expect_error(terms(m), "terms\\(\\) needs a fit made with a formula")
    expect_error(model.frame(m), "model.frame\\(\\) needs a fit made with a formula")
    expect_equal(model.matrix(m), cbind(`(Intercept)` = 1, as.matrix(MASS::Pima.tr[c("glu", "bmi")])),
                 ignore_attr = TRUE, tolerance = 1e-12)
    expect_equal(fitted(m), predict(m, type = "response"))
})

test_that("as.data.frame() has a row per draw of every chain and the draws_df columns", {
    two <- pima_runs()$two
    df <- as.data.frame(two)
    n <- coda::niter(two)
    expect_identical(dim(df), c(2L * n, 6L))
    expect_identical(names(df), c("(Intercept)", "glu", "bmi", ".chain", ".iteration", ".draw"))
    expect_identical(df$.chain, rep(1:2, each = n))
    expect_identical(df$.iteration, rep(seq_len(n), 2))
    expect_identical(df$.draw, seq_len(2L * n))
    expect_equal(as.matrix(df[1:3]), as.matrix(two), ignore_attr = TRUE)
    expect_equal(unlist(df[n + 1, 1:3]), two[[2]][1, ], ignore_attr = TRUE)
    one <- as.data.frame(pima_logit())
    expect_identical(dim(one), c(360L, 7L))
    expect_true(all(one$.chain == 1L))
})

test_that("c() of runs of one model is a fit with their chains, and continues each", {
    r <- pima_runs()
    ab <- c(r$a, r$b)
    expect_identical(class(ab), c("sgfit", "mcmc.list"))
    expect_identical(coda::nchain(ab), 2L)
    expect_equal(as.matrix(ab[[2]]), as.matrix(r$b), ignore_attr = TRUE)
    expect_equal(coef(ab), colMeans(rbind(as.matrix(r$a), as.matrix(r$b))))
    expect_s3_class(summary(ab), "summary.sgfit")
    expect_output(print(ab), "2 chains x 270 draws")
    expect_output(print(summary(ab)), "Rhat")
    expect_equal(attr(ab, "sgfit")$elapsed,
                 attr(r$a, "sgfit")$elapsed + attr(r$b, "sgfit")$elapsed)
    expect_length(predict(ab, MASS::Pima.te[1:3, ]), 3)
    ## each chain continues from its own state and random-number stream
    more <- update(ab, n_iter = 40, progress = FALSE)
    expect_identical(unclass(more[[1]]), unclass(update(r$a, n_iter = 40)), ignore_attr = TRUE)
    expect_identical(as.matrix(more[[2]]), as.matrix(update(r$b, n_iter = 40)),
                     ignore_attr = TRUE)
    expect_identical(coda::nchain(c(ab, r$two)), 4L)
    ## not chains of one fit
    expect_error(c(r$a, r$a), "some of these are the same chain")
    expect_error(c(r$a, 3), "argument 2 is of class numeric")
    expect_error(c(r$a, pima_logit()), "fit 2 differs from fit 1 in the sampler \\(sgfs, not sgld\\)")
    other <- withr::with_seed(169, suppressWarnings(
        sgld(type ~ glu + age, data = MASS::Pima.tr, n_iter = 300, batch_size = 50, progress = FALSE)))
    expect_error(c(r$a, other), "differs from fit 1 in the parameters")
    longer <- withr::with_seed(170, suppressWarnings(
        sgld(type ~ glu + bmi, data = MASS::Pima.tr, n_iter = 300, burnin = 50, batch_size = 50,
             progress = FALSE)))
    expect_error(c(r$a, longer), "the kept iterations \\(burnin 50, thin 1, not burnin 30")
    step <- withr::with_seed(171, suppressWarnings(
        sgld(type ~ glu + bmi, data = MASS::Pima.tr, n_iter = 300, batch_size = 50,
             stepsize = 1e-3, progress = FALSE)))
    expect_error(c(r$a, step), "the sampler's settings")
    expect_error(c(r$a, update(r$b, n_iter = 10)), "its draws' iterations \\(31:310:1, not 31:300:1\\)")
})

test_that("window() keeps a fit whose methods work and whose continuation is exact", {
    fit <- pima_logit()
    w <- window(fit, start = 101, thin = 4)
    expect_identical(class(w), class(fit))
    expect_identical(coda::mcpar(w), c(101, 397, 4))
    B <- as.matrix(fit)[seq(61, 357, by = 4), ]
    expect_equal(as.matrix(w), B, ignore_attr = TRUE)
    expect_equal(coef(w), colMeans(B))
    X <- model.matrix(~ glu + bmi + age, MASS::Pima.te[1:5, ])
    expect_equal(predict(w, MASS::Pima.te[1:5, ]), rowMeans(X %*% t(B)), ignore_attr = TRUE)
    expect_output(print(w), "1 chain x 75 draws \\(iterations 101:397, thin 4\\)")
    expect_s3_class(summary(w), "summary.sgfit")
    expect_equal(confint(w), t(apply(B, 2L, quantile, c(0.025, 0.975))), ignore_attr = TRUE)
    ## continuing the window = the window of the continued fit
    expect_identical(unclass(update(w, n_iter = 60)),
                     unclass(window(update(fit, n_iter = 60), start = 101, thin = 4)),
                     ignore_attr = TRUE)
    expect_identical(coda::mcpar(update(w, n_iter = 60)), c(101, 457, 4))
    ## a window that ends before the draws cannot be appended to
    early <- window(fit, end = 200)
    expect_identical(coda::mcpar(early), c(41, 200, 1))
    expect_error(update(early, n_iter = 20), "'append' must be FALSE: the draws end at iteration 200 but the chains ran to iteration 400")
    alone <- update(early, n_iter = 20, append = FALSE)
    expect_identical(coda::mcpar(alone), c(401, 420, 1))
    expect_identical(unclass(alone), unclass(window(update(fit, n_iter = 20), start = 401)),
                     ignore_attr = TRUE)
    ## several chains; coda's warnings pass through
    two <- pima_runs()$two
    w2 <- window(two, start = 101)
    expect_identical(class(w2), c("sgfit", "mcmc.list"))
    expect_identical(coda::mcpar(w2[[2]]), c(101, 300, 1))
    expect_equal(coda::niter(update(w2, n_iter = 10)), 210)
    expect_warning(window(fit, start = 1), "start value not changed")
})

test_that("[ keeps chains as a fit; other subsets are coda's", {
    two <- pima_runs()$two
    second <- two[2]
    expect_identical(class(second), c("sgfit", "mcmc"))
    expect_equal(as.matrix(second), as.matrix(two[[2]]), ignore_attr = TRUE)
    expect_identical(attr(second, "sgfit")$chains, 1L)
    expect_output(print(second), "1 chain x 270 draws")
    expect_length(predict(second, MASS::Pima.te[1:4, ]), 4)
    ## the chain continues as it does among the others
    expect_equal(as.matrix(update(second, n_iter = 30)),
                 as.matrix(update(two, n_iter = 30, progress = FALSE)[[2]]), ignore_attr = TRUE)
    ## on its own stream: the user's random numbers are untouched, kind included
    set.seed(177)
    u <- runif(1)
    set.seed(177)
    invisible(update(second, n_iter = 10))
    expect_identical(RNGkind()[1], "Mersenne-Twister")
    expect_identical(runif(1), u)
    expect_identical(two[1:2], two)
    expect_identical(two[, 1:3], two)
    expect_identical(class(two[, 2:3]), "mcmc.list")
    expect_identical(coda::varnames(two[, "glu", drop = FALSE]), "glu")
    expect_identical(class(pima_logit()[, 2:3]), "mcmc")
    expect_true(is.matrix(pima_logit()[1:5, ]))
    expect_error(two[3], "'i' selects chains the fit does not have: it has 2")
    expect_error(two[c(1, 1)], "'i' selects chain 1 twice")
    ## coda functions that window or subset a fit work on it
    expect_length(coda::geweke.diag(pima_logit())$z, 4)
    expect_equal(dim(coda::gelman.diag(two)$psrf), c(3, 2))
})

test_that("networks, categorical and custom models: what is defined, and why not", {
    set.seed(172)
    net <- suppressWarnings(sgld(type ~ glu + bmi, data = MASS::Pima.tr, model = mlp(3),
                                 n_iter = 200, batch_size = 50, progress = FALSE))
    expect_equal(fitted(net), predict(net, type = "response"))
    expect_equal(residuals(net, "pearson"),
                 (as.numeric(MASS::Pima.tr$type == "Yes") - fitted(net)) /
                     sqrt(fitted(net) * (1 - fitted(net))))
    expect_equal(model.matrix(net), model.matrix(type ~ glu + bmi, MASS::Pima.tr))
    set.seed(173)
    cat_fit <- suppressWarnings(sgfs(Species ~ Petal.Width, data = iris, family = categorical(),
                                     n_iter = 200, batch_size = 50, progress = FALSE))
    p <- fitted(cat_fit)
    expect_identical(dim(p), c(150L, 3L))
    expect_equal(residuals(cat_fit), outer(as.integer(iris$Species), 1:3, "==") - p,
                 ignore_attr = TRUE)
    expect_error(residuals(cat_fit, "pearson"), "'type' \"pearson\" is for a numeric response; a categorical\\(\\) fit")
    expect_identical(sigma(cat_fit), 1)
    d <- pima_data()
    X <- cbind(`(Intercept)` = 1, d$x)
    own <- withr::with_seed(174, sgfs(list(X = X, y = d$y), model = logistic_custom_model(X),
                                      n_iter = 200, batch_size = 50, progress = FALSE))
    expect_error(fitted(own), "fitted\\(\\) needs the model's mean, and a custom_model\\(\\) defines only its likelihood")
    expect_error(residuals(own), "residuals\\(\\) needs the model's mean")
    expect_error(family(own), "family\\(\\) is not defined for a custom_model\\(\\) fit")
    expect_error(sigma(own), "sigma\\(\\) is not defined for a custom_model\\(\\) fit")
    expect_error(model.matrix(own), "a custom_model\\(\\) fit has none")
    expect_error(terms(own), "the data of a custom_model\\(\\)")
    expect_equal(dim(confint(own)), c(8L, 2L))
    expect_identical(class(window(own, start = 101)), class(own))
})

test_that("na.exclude pads fitted values and residuals", {
    df <- MASS::Pima.tr[1:80, ]
    df$bmi[5] <- NA
    set.seed(175)
    ex <- sgfs(type ~ glu + bmi, data = df, na.action = na.exclude, n_iter = 200,
               batch_size = 40, progress = FALSE)
    expect_length(fitted(ex), 80)
    expect_true(is.na(fitted(ex)[5]))
    r <- residuals(ex)
    expect_true(is.na(r[5]))
    expect_equal(r[-5], as.numeric(df$type[-5] == "Yes") - fitted(ex)[-5])
    expect_identical(nrow(model.frame(ex)), 79L)
})

test_that("window() keeps on its grid the draws an interrupt left beyond the common length", {
    two <- pima_runs()$two
    ahead <- update(two[1], n_iter = 10)         # chain 1 ran to 310, chain 2 to 300
    uneven <- sgfs:::coda_value(attr(two, "sgfit"),
                                c(sgfs:::chain_draws(ahead), sgfs:::chain_draws(two[2])),
                                c(attr(ahead, "sgfit")$states, attr(two[2], "sgfit")$states), 31)
    w <- window(uneven, start = 101, thin = 3)
    expect_identical(coda::mcpar(w[[1]]), c(101, 299, 3))
    expect_identical(vapply(sgfs:::chain_draws(w), nrow, 0L), c(70L, 67L))
    u <- update(w, n_iter = 30)
    expect_equal(sgfs:::chain_draws(u)[[1]],
                 unclass(window(update(ahead, n_iter = 30), start = 101, thin = 3)),
                 ignore_attr = TRUE)
    expect_equal(unclass(u[[2]]), unclass(window(update(two[2], n_iter = 30), start = 101, thin = 3)),
                 ignore_attr = TRUE)
    expect_error(update(window(uneven, end = 250), n_iter = 5),
                 "draws end at iteration 250 but the chains ran to iteration 310")
})

test_that("a fit cut by window() no longer reads the predictive kept over all its draws", {
    set.seed(176)
    kp <- sgfs(type ~ glu + bmi, data = MASS::Pima.tr, n_iter = 200, batch_size = 50,
               progress = FALSE, keep = predictive(MASS::Pima.te[1:5, ]))
    w <- window(kp, start = 101)
    expect_error(predict(w, type = "response"), "averages draws this fit no longer holds")
    expect_length(predict(w, MASS::Pima.te[1:5, ]), 5)
    expect_equal(fitted(w), predict(w, MASS::Pima.tr, type = "response"), ignore_attr = TRUE)
    expect_error(update(w, n_iter = 10), "'append' must be FALSE: this fit was cut")
    fresh <- update(w, n_iter = 10, append = FALSE)
    expect_length(predict(fresh, type = "response"), 5)
})
