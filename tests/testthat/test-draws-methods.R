## Draw-level methods for the generics of rstantools (posterior_linpred,
## posterior_epred, posterior_predict, log_lik, posterior_interval,
## predictive_interval, prior_summary), loo/waic and pp_check (issue 16,
## item 1): values against R computations from the draws.

skip_if_not_installed("rstantools")
library(rstantools)

cached <- local({
    fits <- list()
    function(name, make) {
        if (is.null(fits[[name]])) fits[[name]] <<- make()
        fits[[name]]
    }
})

logit_fit <- function() cached("logit", function() {
    set.seed(1601)
    suppressWarnings(sgfs(type ~ glu + bmi + age, data = MASS::Pima.tr, n_iter = 300,
                          batch_size = 50, progress = FALSE))
})

gauss_fit <- function() cached("gauss", function() {
    set.seed(1602)
    suppressWarnings(sgld(mpg ~ wt + hp, data = mtcars, family = gaussian(), n_iter = 300,
                          batch_size = 16, chains = 2, progress = FALSE))
})

cat_fit <- function() cached("cat", function() {
    set.seed(1603)
    suppressWarnings(sgld(Species ~ Sepal.Length + Petal.Width, data = iris,
                          family = categorical(), n_iter = 300, batch_size = 50,
                          progress = FALSE))
})

## the draws rows chosen by draws = k (evenly spaced)
even_rows <- function(S, k) unique(round(seq(1, S, length.out = k)))

test_that("posterior_linpred() and posterior_epred() of a logistic fit are X b and plogis(X b) per draw", {
    fit <- logit_fit()
    B <- as.matrix(fit)
    X <- model.matrix(~ glu + bmi + age, MASS::Pima.tr)
    eta <- B %*% t(X)
    lp <- posterior_linpred(fit)
    expect_equal(dim(lp), c(nrow(B), 200L))
    expect_equal(lp, eta, ignore_attr = TRUE, tolerance = 1e-10)
    expect_equal(posterior_epred(fit), plogis(eta), ignore_attr = TRUE, tolerance = 1e-10)
    expect_identical(posterior_linpred(fit, transform = TRUE), posterior_epred(fit))
    ## new rows, and a subset of the draws
    te <- MASS::Pima.te[1:7, ]
    rows <- even_rows(nrow(B), 20)
    lp_new <- posterior_linpred(fit, newdata = te, draws = 20)
    expect_equal(dim(lp_new), c(20L, 7L))
    expect_equal(colnames(lp_new), rownames(te))
    expect_equal(lp_new, B[rows, ] %*% t(model.matrix(~ glu + bmi + age, te)),
                 ignore_attr = TRUE, tolerance = 1e-10)
})

test_that("log_lik() of a logistic fit is dbinom(y, 1, p, log = TRUE) per draw and row", {
    fit <- logit_fit()
    B <- as.matrix(fit)
    p <- plogis(B %*% t(model.matrix(~ glu + bmi + age, MASS::Pima.tr)))
    y <- as.numeric(MASS::Pima.tr$type == "Yes")
    ll <- log_lik(fit)
    expect_equal(dim(ll), c(nrow(B), nobs(fit)))
    expect_equal(ll, dbinom(rep(y, each = nrow(B)), 1, p, log = TRUE), ignore_attr = TRUE,
                 tolerance = 1e-10)
    ## new rows with their response in newdata
    te <- MASS::Pima.te[1:9, ]
    pn <- plogis(B %*% t(model.matrix(~ glu + bmi + age, te)))
    yn <- as.numeric(te$type == "Yes")
    expect_equal(log_lik(fit, newdata = te), dbinom(rep(yn, each = nrow(B)), 1, pn, log = TRUE),
                 ignore_attr = TRUE, tolerance = 1e-10)
})

test_that("a gaussian fit's linpred is X b, its log_lik dnorm with each draw's sigma (sampled or fixed)", {
    fit <- gauss_fit()
    B <- as.matrix(fit)
    expect_equal(nrow(B), 2L * coda::niter(fit))
    mu <- B[, 1:3] %*% t(model.matrix(~ wt + hp, mtcars))
    expect_equal(posterior_linpred(fit), mu, ignore_attr = TRUE, tolerance = 1e-10)
    expect_equal(posterior_epred(fit), mu, ignore_attr = TRUE, tolerance = 1e-10)
    ll <- log_lik(fit)
    expect_equal(ll, dnorm(rep(mtcars$mpg, each = nrow(B)), mu, exp(B[, "log_sigma"]), log = TRUE),
                 ignore_attr = TRUE, tolerance = 1e-10)
    expect_equal(names(attributes(posterior_epred(fit))), "dim")
    expect_equal(names(attributes(ll)), "dim")
    set.seed(1604)
    fixed <- suppressWarnings(sgld(mpg ~ wt, data = mtcars, family = gaussian(), sigma = 2.5,
                                   n_iter = 200, batch_size = 16, progress = FALSE))
    Bf <- as.matrix(fixed)
    muf <- Bf %*% t(model.matrix(~ wt, mtcars))
    expect_equal(log_lik(fixed), dnorm(rep(mtcars$mpg, each = nrow(Bf)), muf, 2.5, log = TRUE),
                 ignore_attr = TRUE, tolerance = 1e-10)
})

test_that("a categorical fit gives arrays draws x rows x classes: logits, probabilities summing to 1", {
    fit <- cat_fit()
    B <- as.matrix(fit)
    X <- model.matrix(~ Sepal.Length + Petal.Width, iris)
    lp <- posterior_linpred(fit, draws = 30)
    rows <- even_rows(nrow(B), 30)
    expect_equal(dim(lp), c(30L, 150L, 3L))
    expect_equal(dimnames(lp)[[3]], levels(iris$Species))
    expect_equal(lp[, , 1], matrix(0, 30, 150), ignore_attr = TRUE)
    expect_equal(lp[, , 2], B[rows, 1:3] %*% t(X), ignore_attr = TRUE, tolerance = 1e-10)
    expect_equal(lp[, , 3], B[rows, 4:6] %*% t(X), ignore_attr = TRUE, tolerance = 1e-10)
    p <- posterior_epred(fit, draws = 30)
    expect_equal(apply(p, 1:2, sum), matrix(1, 30, 150), ignore_attr = TRUE, tolerance = 1e-12)
    softmax <- exp(lp) / array(apply(exp(lp), 1:2, sum), dim(lp))
    expect_equal(p, softmax, ignore_attr = TRUE, tolerance = 1e-10)
    ## log_lik: the log probability of the observed class
    ll <- log_lik(fit, draws = 30)
    y <- as.integer(iris$Species)
    expect_equal(ll, vapply(1:150, function(i) log(p[, i, y[i]]), double(30)), tolerance = 1e-10,
                 ignore_attr = TRUE)
})

test_that("posterior_predict() is reproducible with a seed, leaves the user's stream, and averages to epred", {
    fit <- logit_fit()
    set.seed(99)
    before <- runif(1)
    set.seed(99)
    a <- posterior_predict(fit, seed = 7)
    after <- runif(1)
    expect_identical(before, after)
    expect_identical(a, posterior_predict(fit, seed = 7))
    expect_false(identical(a, posterior_predict(fit, seed = 8)))
    expect_true(is.integer(a) && all(a %in% 0:1))
    p <- posterior_epred(fit)
    ## the mean of S n independent Bernoulli draws: sd sqrt(sum p(1 - p)) / (S n)
    tol <- 4 * sqrt(sum(p * (1 - p))) / length(p)
    expect_lt(abs(mean(a) - mean(p)), tol)
    ## per row over draws: within 4.5 binomial sds (fixed seed; 200 rows)
    se <- sqrt(colMeans(p * (1 - p)) / nrow(p))
    expect_true(all(abs(colMeans(a) - colMeans(p)) < 4.5 * se + 1e-12))

    g <- gauss_fit()
    yrep <- posterior_predict(g, seed = 3)
    mu <- posterior_epred(g)
    sigma <- exp(as.matrix(g)[, "log_sigma"])
    expect_lt(abs(mean(yrep) - mean(mu)), 4 * sqrt(mean(sigma^2) / length(mu)))
    ## the spread around each draw's mean is that draw's sigma
    z <- (yrep - mu) / sigma
    expect_lt(abs(sd(as.vector(z)) - 1), 4 / sqrt(2 * length(z)))

    cf <- cat_fit()
    cls <- posterior_predict(cf, seed = 4)
    expect_equal(attr(cls, "levels"), levels(iris$Species))
    pc <- posterior_epred(cf)
    freq <- vapply(1:3, function(k) mean(cls == k), 0)
    expect_lt(max(abs(freq - apply(pc, 3, mean))), 4 * sqrt(0.25 / length(cls)))
})

test_that("posterior_interval() and predictive_interval() are central quantiles", {
    fit <- logit_fit()
    B <- as.matrix(fit)
    pi <- posterior_interval(fit, prob = 0.8)
    expect_equal(dimnames(pi), list(colnames(B), c("10%", "90%")))
    expect_equal(pi[, 1], apply(B, 2, quantile, 0.1), ignore_attr = TRUE)
    expect_equal(pi[, 2], apply(B, 2, quantile, 0.9), ignore_attr = TRUE)
    expect_equal(rownames(posterior_interval(fit, pars = c("glu", "bmi"))), c("glu", "bmi"))
    expect_equal(posterior_interval(gauss_fit())["wt", ],
                 quantile(as.matrix(gauss_fit())[, "wt"], c(0.05, 0.95)), ignore_attr = TRUE)
    g <- gauss_fit()
    yrep <- posterior_predict(g, seed = 5)
    expect_equal(predictive_interval(g, prob = 0.5, seed = 5),
                 t(apply(yrep, 2, quantile, c(0.25, 0.75))), ignore_attr = TRUE)
    new <- predictive_interval(g, newdata = mtcars[1:3, ], draws = 100, seed = 1)
    expect_equal(dim(new), c(3L, 2L))
    expect_equal(rownames(new), rownames(mtcars)[1:3])
    expect_error(predictive_interval(cat_fit()), "class codes")
})

test_that("loo() and waic() run through log_lik, with the chains' relative efficiency", {
    skip_if_not_installed("loo")
    fit <- gauss_fit()
    ## 32 rows and few draws: some Pareto k are high, which loo says
    l <- suppressWarnings(loo::loo(fit))
    expect_s3_class(l, "psis_loo")
    expect_equal(nrow(l$pointwise), 32L)
    expect_true(is.finite(l$estimates["elpd_loo", "Estimate"]))
    ## the same as loo's matrix method given the chain ids
    ll <- log_lik(fit)
    ref <- suppressWarnings(loo::loo(ll, r_eff = loo::relative_eff(
        exp(ll), chain_id = rep(1:2, each = coda::niter(fit)))))
    expect_equal(l$estimates, ref$estimates)
    w <- suppressWarnings(loo::waic(logit_fit()))
    expect_s3_class(w, "waic")
    expect_equal(nrow(w$pointwise), 200L)
    expect_equal(nrow(suppressWarnings(loo::loo(cat_fit()))$pointwise), 150L)
})

test_that("pp_check() returns a ggplot for every family", {
    skip_if_not_installed("bayesplot")
    expect_s3_class(bayesplot::pp_check(gauss_fit(), seed = 1), "ggplot")
    expect_s3_class(bayesplot::pp_check(logit_fit(), ndraws = 20), "ggplot")
    expect_s3_class(bayesplot::pp_check(cat_fit(), ndraws = 10), "ggplot")
    expect_s3_class(bayesplot::pp_check(gauss_fit(), plotfun = "stat", stat = "mean",
                                        binwidth = 0.1), "ggplot")
    expect_error(bayesplot::pp_check(gauss_fit(), plotfun = "nonsense"), "'plotfun'")
    expect_error(bayesplot::pp_check(gauss_fit(), ndraws = 0), "'ndraws'")
})

test_that("network fits: outputs against the R forward pass, log_lik for gaussian", {
    set.seed(1605)
    net <- suppressWarnings(sgld(type ~ glu + bmi, data = MASS::Pima.tr, model = mlp(3),
                                 n_iter = 200, batch_size = 50, progress = FALSE))
    B <- as.matrix(net)
    info <- attr(net, "sgfit")
    te <- MASS::Pima.te[1:6, ]
    X <- model.matrix(~ glu + bmi, te)[, -1]
    ref <- t(vapply(seq_len(nrow(B)), function(s) drop(r_mlp_link(info, X, B[s, ])), double(6)))
    expect_equal(posterior_linpred(net, newdata = te), ref, ignore_attr = TRUE, tolerance = 1e-10)
    expect_equal(colMeans(posterior_epred(net)), fitted(net), ignore_attr = TRUE, tolerance = 1e-10)
    y <- as.numeric(MASS::Pima.tr$type == "Yes")
    expect_equal(log_lik(net), dbinom(rep(y, each = nrow(B)), 1, posterior_epred(net), log = TRUE),
                 ignore_attr = TRUE, tolerance = 1e-10)

    set.seed(1606)
    gnet <- suppressWarnings(sgld(mpg ~ wt + hp, data = mtcars, family = gaussian(),
                                  model = mlp(2), n_iter = 200, batch_size = 16, progress = FALSE))
    Bg <- as.matrix(gnet)
    mu <- posterior_epred(gnet)
    Xg <- model.matrix(~ wt + hp, mtcars)[, -1]
    ref <- t(vapply(seq_len(nrow(Bg)), function(s)
        drop(r_mlp_link(attr(gnet, "sgfit"), Xg, Bg[s, ])), double(32)))
    expect_equal(mu, ref, ignore_attr = TRUE, tolerance = 1e-10)
    expect_equal(log_lik(gnet), dnorm(rep(mtcars$mpg, each = nrow(Bg)), mu, exp(Bg[, "log_sigma"]),
                                      log = TRUE), ignore_attr = TRUE, tolerance = 1e-10)
    expect_equal(dim(posterior_predict(gnet, draws = 10, seed = 1)), c(10L, 32L))

    set.seed(1612)
    cnet <- suppressWarnings(sgld(Species ~ ., data = iris, family = categorical(),
                                  model = mlp(3), n_iter = 200, batch_size = 50, progress = FALSE))
    pc <- posterior_epred(cnet)
    expect_equal(dim(pc), c(nrow(as.matrix(cnet)), 150L, 3L))
    expect_equal(apply(pc, 2:3, mean), fitted(cnet), ignore_attr = TRUE, tolerance = 1e-10)
    y <- as.integer(iris$Species)
    expect_equal(log_lik(cnet), vapply(1:150, function(i) log(pc[, i, y[i]]), double(nrow(pc))),
                 ignore_attr = TRUE, tolerance = 1e-10)

    set.seed(1607)
    kept <- suppressWarnings(sgld(type ~ glu + bmi, data = MASS::Pima.tr, model = mlp(3),
                                  n_iter = 100, batch_size = 50, progress = FALSE,
                                  keep = predictive(MASS::Pima.te[1:5, ])))
    expect_error(posterior_epred(kept), "every parameter's draws")
})

test_that("custom_model() fits have log_lik (and loo); the other methods say why not", {
    set.seed(1608)
    x <- rnorm(300, mean = 1, sd = 2)
    m <- custom_model(score = function(theta, data) (data - theta) / 4,
                      loglik = function(theta, data) dnorm(data, theta, 2, log = TRUE),
                      init = c(mu = 0))
    fit <- suppressWarnings(sgld(x, model = m, prior = normal(0, 10), n_iter = 200,
                                 batch_size = 50, progress = FALSE))
    B <- as.matrix(fit)
    ll <- log_lik(fit)
    expect_equal(ll, outer(B[, "mu"], x, function(mu, v) dnorm(v, mu, 2, log = TRUE)),
                 ignore_attr = TRUE)
    expect_equal(log_lik(fit, newdata = c(0, 5), draws = 3),
                 outer(B[even_rows(nrow(B), 3), "mu"], c(0, 5),
                       function(mu, v) dnorm(v, mu, 2, log = TRUE)), ignore_attr = TRUE)
    if (requireNamespace("loo", quietly = TRUE))
        expect_equal(nrow(suppressWarnings(loo::loo(fit))$pointwise), 300L)
    for (f in list(posterior_linpred, posterior_epred, posterior_predict))
        expect_error(f(fit), "custom_model\\(\\) defines only its likelihood")
    expect_error(predictive_interval(fit), "custom_model")
    expect_equal(dim(posterior_interval(fit)), c(1L, 2L))
    expect_error(log_lik(fit, y = 1), "'y'")
})

test_that("bad arguments give errors naming the argument", {
    fit <- logit_fit()
    expect_error(posterior_epred(fit, draws = 0), "'draws'")
    expect_equal(dim(posterior_epred(fit, draws = 1e6)), dim(posterior_epred(fit)))   # all of them
    expect_error(posterior_epred(fit, draws = "all"), "'draws'")
    expect_error(posterior_linpred(fit, transform = NA), "'transform'")
    expect_error(posterior_predict(fit, seed = "a"), "'seed'")
    expect_error(posterior_epred(fit, newdata = 1:3), "'newdata'")
    te <- MASS::Pima.te[1:4, ]
    te$glu[2] <- NA
    expect_error(posterior_epred(fit, newdata = te), "'newdata' has missing values in row\\(s\\) 2")
    expect_error(log_lik(fit, newdata = MASS::Pima.te[1:4, -8]), "'newdata'")
    expect_error(posterior_epred(fit, newdata = MASS::Pima.te[1:4, -2]), "'newdata'")
    expect_error(log_lik(fit, y = 1:200), "'y'")
    expect_error(log_lik(fit, newdata = MASS::Pima.te[1:4, ], y = 1:4), "'y'")
    expect_error(posterior_interval(fit, prob = 2), "'prob'")
    expect_error(posterior_interval(fit, pars = "nope"), "'pars'")
    expect_error(posterior_interval(fit, type = "hpd"), "'type'")
    expect_error(predictive_interval(fit, prob = 0), "'prob'")
    ## a matrix fit: log_lik of new rows needs their y
    xm <- as.matrix(MASS::Pima.tr[, c("glu", "bmi")])
    set.seed(1609)
    mf <- suppressWarnings(sgld(xm, MASS::Pima.tr$type, n_iter = 100, batch_size = 50,
                                progress = FALSE))
    xn <- as.matrix(MASS::Pima.te[1:4, c("glu", "bmi")])
    expect_error(log_lik(mf, newdata = xn), "'y' is needed")
    expect_error(log_lik(mf, newdata = xn, y = c("Yes", "No", "Maybe", "No")), "'y'")
    B <- as.matrix(mf)
    yn <- as.numeric(MASS::Pima.te$type[1:4] == "Yes")
    p <- plogis(B %*% t(cbind(1, xn)))
    expect_equal(log_lik(mf, newdata = xn, y = MASS::Pima.te$type[1:4]),
                 dbinom(rep(yn, each = nrow(B)), 1, p, log = TRUE), ignore_attr = TRUE,
                 tolerance = 1e-10)
})

test_that("prior_summary() reports every prior on the internal and the original scale", {
    fit <- logit_fit()
    ps <- prior_summary(fit)
    expect_s3_class(ps, "sgfs_prior_summary")
    tab <- ps$table
    expect_equal(tab$parameter, c("(Intercept)", "glu", "bmi", "age"))
    expect_equal(tab$scale, rep(2.5, 4))
    sds <- vapply(MASS::Pima.tr[c("glu", "bmi", "age")], sd, 0)
    expect_equal(tab$scale_original[-1], 2.5 / sds, ignore_attr = TRUE)
    expect_true(all(tab$default))
    expect_output(print(ps), "glu")

    set.seed(1610)
    g <- suppressWarnings(sgld(mpg ~ wt + hp, data = mtcars, family = gaussian(),
                               prior = laplace(0, 1), prior_intercept = normal(1, 10),
                               n_iter = 100, batch_size = 16, progress = FALSE))
    tab <- prior_summary(g)$table
    expect_equal(tab$group, c("(Intercept)", "coefficients", "coefficients", "log_sigma"))
    expect_equal(tab$prior, c("normal", "laplace", "laplace", "normal"))
    expect_equal(tab$scale, c(10, 1, 1, 5))
    ## slopes scaled by sd(y) / sd(x); the intercept at the predictors' means
    expect_equal(tab$scale_original[2:3], sd(mtcars$mpg) / c(sd(mtcars$wt), sd(mtcars$hp)))
    expect_equal(tab$location_original[1], mean(mtcars$mpg) + sd(mtcars$mpg))
    expect_equal(tab$scale_original[1], 10 * sd(mtcars$mpg))
    expect_equal(tab$location_original[4], log(sd(mtcars$mpg)))
    expect_equal(tab$default, c(FALSE, FALSE, FALSE, TRUE))

    set.seed(1611)
    net <- suppressWarnings(sgld(type ~ glu + bmi, data = MASS::Pima.tr, model = mlp(3),
                                 n_iter = 100, batch_size = 50, progress = FALSE))
    tab <- prior_summary(net)$table
    expect_equal(unique(tab$group), c("layer 1", "layer 2"))
    expect_equal(tab$scale[tab$group == "layer 1"], rep(1 / sqrt(2), 9))
    expect_equal(tab$scale[tab$group == "layer 2"], rep(1 / sqrt(3), 4))
})
