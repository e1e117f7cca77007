## The methods rstanarm users call after the fit: bayes_R2(), loo_R2(),
## predictive_error(), kfold() and broom's tidy(), each against its
## definition computed by hand from the draws.

skip_if_not_installed("rstantools")

pima_fit <- local({
    fit <- NULL
    function() {
        if (is.null(fit)) {
            data(Pima.tr, package = "MASS", envir = environment())
            fit <<- sgld(type ~ glu + bmi, Pima.tr, iter = 2500, warmup = 500, seed = 2,
                         progress = FALSE)
        }
        fit
    }
})

test_that("bayes_R2() is var(mu) / (var(mu) + the model's residual variance) at each draw", {
    f <- pima_fit()
    mu <- rstantools::posterior_epred(f)
    v <- apply(mu, 1, var)
    expect_equal(rstantools::bayes_R2(f), v / (v + rowMeans(mu * (1 - mu))), tolerance = 1e-12)
    g <- sgld(mpg ~ wt + hp, mtcars, family = gaussian(), iter = 2000, seed = 1, progress = FALSE)
    mu <- rstantools::posterior_epred(g)
    sigma <- exp(as.matrix(g)[, "log_sigma"])
    v <- apply(mu, 1, var)
    expect_equal(rstantools::bayes_R2(g), v / (v + sigma^2), tolerance = 1e-10)
    ## counts of several trials: the expected counts' variance, m mu (1 - mu)
    d <- data.frame(s = c(3, 5, 1, 8, 6, 2), n = c(10, 12, 9, 15, 11, 8), x = c(-1, 0, -2, 1, 0.5, -1))
    b <- sgld(cbind(s, n - s) ~ x, d, iter = 1000, seed = 1, progress = FALSE)
    p <- rstantools::posterior_epred(b)
    m <- rep(d$n, each = nrow(p))
    v <- apply(m * p, 1, var)
    expect_equal(rstantools::bayes_R2(b), v / (v + rowMeans(m * p * (1 - p))), tolerance = 1e-10)
    cat_fit <- sgld(Species ~ Sepal.Length, iris, family = categorical(), iter = 300, seed = 1,
                    progress = FALSE)
    expect_error(rstantools::bayes_R2(cat_fit), "bayes_R2\\(\\) is for a gaussian")
})

test_that("loo_R2() is 1 - var(y - E_loo(mu)) / var(y) under Bayesian bootstrap weights", {
    skip_if_not_installed("loo")
    f <- pima_fit()
    y <- as.integer(MASS::Pima.tr$type == "Yes")
    set.seed(5)
    r <- rstantools::loo_R2(f, n_boot = 200)
    ## by hand, with the same exponentials (one block of rows)
    mu <- rstantools::posterior_epred(f)
    ll <- rstantools::log_lik(f)
    w <- loo::psis(-ll, r_eff = loo::relative_eff(exp(ll), chain_id = rep(1, nrow(ll))))
    e <- y - suppressWarnings(loo::E_loo(mu, w, log_ratios = -ll))$value
    set.seed(5)
    g <- matrix(rexp(200 * length(y)), 200)
    g <- g / rowSums(g)
    vy <- drop(g %*% y^2) - drop(g %*% y)^2
    ve <- drop(g %*% e^2) - drop(g %*% e)^2
    expect_equal(r, 1 - ve / vy, tolerance = 1e-10)
    expect_true(all(r >= -1 & r <= 1))
})

test_that("predictive_error() is y minus posterior_predict()'s draws", {
    f <- pima_fit()
    y <- as.integer(MASS::Pima.tr$type == "Yes")
    e <- rstantools::predictive_error(f, draws = 20, seed = 3)
    yrep <- rstantools::posterior_predict(f, draws = 20, seed = 3)
    expect_equal(e, -sweep(yrep, 2, y))
    ## new rows: their response minus the draws for them
    te <- MASS::Pima.te[1:30, ]
    e_new <- rstantools::predictive_error(f, newdata = te, draws = 20, seed = 4)
    yrep_new <- rstantools::posterior_predict(f, newdata = te, draws = 20, seed = 4)
    expect_equal(e_new, -sweep(yrep_new, 2, as.integer(te$type == "Yes")), ignore_attr = TRUE)
    g <- sgld(mpg ~ wt, mtcars, family = gaussian(), iter = 400, seed = 1, progress = FALSE)
    eg <- rstantools::predictive_error(g, newdata = mtcars[1:5, ], draws = 10, seed = 2)
    yg <- rstantools::posterior_predict(g, newdata = mtcars[1:5, ], draws = 10, seed = 2)
    expect_equal(eg, -sweep(yg, 2, mtcars$mpg[1:5]), ignore_attr = TRUE, tolerance = 1e-10)
    expect_error(rstantools::predictive_error(f, y = 1), "'y' is the response of new rows")
})

test_that("kfold() refits without each fold and scores its rows, as rstanarm's kfold()", {
    skip_if_not_installed("loo")
    data(Pima.tr, package = "MASS", envir = environment())
    f <- sgld(type ~ glu + bmi, Pima.tr, iter = 1500, warmup = 300, seed = 2, progress = FALSE)
    folds <- rep(1:3, length.out = nrow(Pima.tr))
    set.seed(8)
    k <- loo::kfold(f, folds = folds, save_fits = TRUE)
    expect_s3_class(k, "kfold")
    expect_equal(attr(k, "K"), 3L)
    ## fold 2 by hand, from the fit kfold() made
    fit2 <- k$fits[[2]]$fit
    expect_identical(k$fits[[2]]$omitted, which(folds == 2))
    expect_equal(coda::niter(fit2), 1200L)
    ll <- rstantools::log_lik(fit2, newdata = Pima.tr[folds == 2, ])
    lme <- function(v) log(mean(exp(v)))
    expect_equal(k$pointwise[folds == 2, "elpd_kfold"], apply(ll, 2, lme), tolerance = 1e-10,
                 ignore_attr = TRUE)
    expect_equal(k$estimates["elpd_kfold", "Estimate"], sum(k$pointwise[, "elpd_kfold"]))
    ## loo_compare() takes it with a loo()
    expect_warning(cmp <- loo::loo_compare(k, loo::loo(f)), "K-fold")
    expect_equal(nrow(cmp), 2L)
    expect_error(loo::kfold(f, folds = 1:3), "'folds' must give each of the fit's 200 rows")
    x <- model.matrix(~ glu, Pima.tr)[, -1, drop = FALSE]
    m <- sgld(x, as.integer(Pima.tr$type == "Yes"), iter = 300, progress = FALSE)
    expect_error(loo::kfold(m), "needs a fit of a formula with a data frame")
})

test_that("tidy() gives each parameter's median, mad and interval; a mixed model's parts by `effects`", {
    skip_if_not_installed("generics")
    f <- pima_fit()
    t <- as.data.frame(generics::tidy(f, conf.int = TRUE, conf.level = 0.8))
    B <- as.matrix(f)
    expect_identical(t$term, colnames(B))
    expect_equal(t$estimate, unname(apply(B, 2, median)))
    expect_equal(t$std.error, unname(apply(B, 2, mad)))
    expect_equal(t$conf.high, unname(apply(B, 2, quantile, 0.9)))
    expect_identical(as.data.frame(generics::tidy(f, pars = "bmi"))$term, "bmi")
    skip_if_not_installed("lme4")
    set.seed(4)
    d <- data.frame(g = factor(rep(1:6, each = 20)), x = rnorm(120))
    d$y <- rbinom(120, 1, plogis(d$x + rnorm(6)[d$g]))
    m <- sgldcv(y ~ x + (1 | g), d, family = binomial(), iter = 2000, seed = 1, progress = FALSE)
    expect_identical(generics::tidy(m)$term, c("(Intercept)", "x", "sd[(Intercept) | g]"))
    expect_identical(generics::tidy(m, effects = "ran_vals")$term, sprintf("b[(Intercept) g:%d]", 1:6))
    expect_error(generics::tidy(m, effects = "all"), "'effects' must be some of")
})
