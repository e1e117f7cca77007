## keep = predictive(newdata): the running predictive the engine keeps equals
## the average over the draws of a run that kept them all (same seed), for
## every family, for GLMs and networks, across update() and chains; and
## predict(interval = "prediction") for gaussian() fits.

pima <- function() {
    data(Pima.tr, Pima.te, package = "MASS", envir = environment())
    list(train = Pima.tr, test = Pima.te)
}

## the same run twice, keeping all draws and keeping the predictive
both_ways <- function(fun, ..., newdata) {
    set.seed(1)
    all <- suppressWarnings(fun(...))
    set.seed(1)
    kept <- suppressWarnings(fun(..., keep = predictive(newdata)))
    list(all = all, kept = kept)
}

test_that("a GLM's kept predictive equals the predictive of all its draws", {
    d <- pima()
    r <- both_ways(sgld, type ~ ., data = d$train, n_iter = 1500L, batch_size = 50L,
                   newdata = d$test)
    expect_equal(as.matrix(r$kept), as.matrix(r$all))
    expect_equal(predict(r$kept, type = "response"),
                 unname(predict(r$all, d$test, type = "response")), tolerance = 1e-12)
    expect_identical(predict(r$kept, type = "class"), unname(predict(r$all, d$test, type = "class")))
    ## a GLM keeps every draw, so newdata can still be predicted from them
    expect_equal(predict(r$kept, d$test[1:3, ]), predict(r$all, d$test[1:3, ]))

    r <- both_ways(sgfs, Species ~ ., data = iris[-(1:10), ], family = categorical(),
                   n_iter = 800L, batch_size = 40L, newdata = iris[1:10, ])
    expect_equal(predict(r$kept, type = "response"),
                 predict(r$all, iris[1:10, ], type = "response"), tolerance = 1e-12,
                 ignore_attr = TRUE)
})

test_that("a matrix fit takes newdata without the intercept column", {
    d <- pima()
    x <- as.matrix(d$train[, 1:7])
    r <- both_ways(psgld, x, d$train$type, n_iter = 800L, batch_size = 50L,
                   newdata = as.matrix(d$test[, 1:7]))
    expect_equal(predict(r$kept, type = "response"),
                 unname(predict(r$all, as.matrix(d$test[, 1:7]), type = "response")),
                 tolerance = 1e-12)
})

test_that("a network keeps its predictive and only the monitored draws", {
    d <- pima()
    r <- both_ways(sgld, type ~ ., data = d$train, model = mlp(4), n_iter = 1500L,
                   batch_size = 50L, newdata = d$test)
    expect_equal(colnames(r$kept), "b2[1]")
    expect_equal(as.matrix(r$kept), as.matrix(r$all)[, "b2[1]", drop = FALSE],
                 ignore_attr = TRUE)
    expect_equal(predict(r$kept, type = "response"),
                 unname(predict(r$all, d$test, type = "response")), tolerance = 1e-12)
    expect_error(predict(r$kept, d$test), "'newdata' cannot be predicted")
    expect_error(ksd(r$kept), "only some parameters")

    ## gaussian: predictive mean and sd; categorical: class probabilities
    y <- d$train$glu
    x <- as.matrix(d$train[, c("npreg", "bp", "skin", "bmi", "age")])
    xt <- as.matrix(d$test[1:20, c("npreg", "bp", "skin", "bmi", "age")])
    r <- both_ways(sghmc, x, y, family = gaussian(), model = mlp(3), n_iter = 1000L,
                   batch_size = 40L, newdata = xt)
    expect_equal(colnames(r$kept), c("b2[1]", "log_sigma"))
    expect_equal(predict(r$kept, interval = "prediction"),
                 predict(r$all, xt, interval = "prediction"), tolerance = 1e-10,
                 ignore_attr = TRUE)
    r <- both_ways(sgld, Species ~ ., data = iris[-(1:10), ], family = categorical(),
                   model = mlp(3, "relu"), n_iter = 800L, batch_size = 40L,
                   newdata = iris[1:10, ])
    expect_equal(predict(r$kept, type = "response"),
                 predict(r$all, iris[1:10, ], type = "response"), tolerance = 1e-12,
                 ignore_attr = TRUE)
})

test_that("the kept predictive of a continued run or of several chains is the average of all", {
    d <- pima()
    set.seed(2)
    long <- sgld(type ~ ., data = d$train, model = mlp(3), n_iter = 1200L, burnin = 200L,
                 batch_size = 50L, keep = predictive(d$test), chains = 2L)
    set.seed(2)
    part <- sgld(type ~ ., data = d$train, model = mlp(3), n_iter = 700L, burnin = 200L,
                 batch_size = 50L, keep = predictive(d$test), chains = 2L)
    part <- suppressWarnings(update(part, n_iter = 500L))
    expect_equal(predict(part, type = "response"), predict(long, type = "response"),
                 tolerance = 1e-12)
    expect_equal(attr(long, "sgfit")$pred$count, 2000)
    set.seed(2)
    all <- sgld(type ~ ., data = d$train, model = mlp(3), n_iter = 1200L, burnin = 200L,
                batch_size = 50L, chains = 2L)
    expect_equal(predict(long, type = "response"),
                 unname(predict(all, d$test, type = "response")), tolerance = 1e-12)
})

test_that("interval = \"prediction\" gives a gaussian fit's predictive mean and sd", {
    d <- pima()
    set.seed(3)
    fit <- sgld(glu ~ bmi + age, data = d$train, family = gaussian(), n_iter = 2000L,
                batch_size = 50L)
    p <- predict(fit, d$test[1:5, ], interval = "prediction")
    B <- as.matrix(fit)
    X <- model.matrix(~ bmi + age, d$test[1:5, ])
    mu <- X %*% t(B[, 1:3])
    expect_equal(unname(p[, "fit"]), unname(rowMeans(mu)))
    expect_equal(unname(p[, "sd"]),
                 unname(sqrt(mean(exp(2 * B[, "log_sigma"])) + rowMeans((mu - rowMeans(mu))^2))))
    ## with sigma fixed, its variance enters as given
    fit <- sgld(glu ~ bmi + age, data = d$train, family = gaussian(), sigma = 30,
                n_iter = 2000L, batch_size = 50L)
    p <- predict(fit, d$test[1:5, ], interval = "prediction")
    expect_true(all(p[, "sd"] > 30 & p[, "sd"] < 31))
    expect_error(predict(sgld(type ~ ., data = d$train, n_iter = 200L), interval = "prediction"),
                 "needs a gaussian")
})

test_that("bad keep arguments give clear errors", {
    d <- pima()
    expect_error(sgld(type ~ ., data = d$train, keep = "predictive"),
                 "'keep' must be \"draws\" or predictive")
    expect_error(predictive(), "'newdata' must be a data frame or a matrix")
    expect_error(sgld(as.matrix(d$train[, 1:7]), d$train$type,
                      keep = predictive(as.matrix(d$test[, 1:5]))),
                 "'keep' has newdata with 5 columns; the model's design has 8")
    bad <- d$test
    bad$glu[2] <- NA
    expect_error(sgld(type ~ ., data = d$train, keep = predictive(bad)), "missing")
    expect_error(sgld(type ~ ., data = d$train, keep = predictive(d$test, monitor = "bmi")),
                 "'monitor' is for networks")
    expect_error(sgld(type ~ ., data = d$train, model = mlp(3),
                      keep = predictive(d$test, monitor = "W9[1,1]")),
                 "'monitor' must name distinct parameters")
    fit <- sgld(type ~ ., data = d$train, model = mlp(3), n_iter = 300L,
                keep = predictive(d$test, monitor = c("W1[1,1]", "b1[2]")))
    expect_equal(colnames(fit), c("W1[1,1]", "b1[2]"))
})
