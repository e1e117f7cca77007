## A formula of plain numeric columns takes the short way to its design
## (R/fit.R's numeric_frame(): no model.frame() copy of the data, the
## intercept implicit): the same design, draws and methods as model.matrix().

numeric_data <- function(N = 300L) {
    withr::with_seed(1, {
        d <- data.frame(a = rnorm(N), b = runif(N), c = rpois(N, 3))
        d$y <- rbinom(N, 1, plogis(0.5 * d$a - d$b))
        d$g <- factor(ifelse(d$y == 1, "yes", "no"))
        d
    })
}

test_that("a numeric formula's fit equals the one through model.matrix()", {
    d <- numeric_data()
    short <- sgfs:::numeric_frame(quote(f(formula = y ~ ., data = d)), environment(), NULL, NULL, NULL)
    expect_null(short)                      # (g, a factor, is among the predictors)
    d$g <- NULL
    frame <- sgfs:::numeric_frame(quote(f(formula = y ~ ., data = d)), environment(), NULL, NULL, NULL)
    expect_identical(as.matrix(frame$x), as.matrix(d[c("a", "b", "c")]) + 0)
    expect_true(frame$intercept)
    fit <- withr::with_seed(2, sgld(y ~ ., d, n_iter = 300, progress = FALSE))
    ref <- withr::with_seed(2, sgld(model.matrix(y ~ ., d), d$y, intercept = FALSE, n_iter = 300,
                                    progress = FALSE))
    expect_identical(unclass(as.matrix(fit)), unclass(as.matrix(ref)))
    expect_equal(predict(fit, newdata = d[1:5, ]), predict(ref, newdata = model.matrix(y ~ ., d)[1:5, -1]),
                 tolerance = 1e-12, ignore_attr = TRUE)
    expect_equal(predict(fit), predict(ref), ignore_attr = TRUE)
    ## no intercept; a factor response; update() with a smaller formula
    no_icpt <- withr::with_seed(3, sgld(y ~ a + b - 1, d, n_iter = 200, progress = FALSE))
    expect_identical(coda::varnames(no_icpt), c("a", "b"))
    d$g <- factor(ifelse(d$y == 1, "yes", "no"))
    by_factor <- withr::with_seed(2, sgld(g ~ a + b + c, d, n_iter = 300, progress = FALSE))
    expect_identical(unclass(as.matrix(by_factor)), unclass(as.matrix(fit)))
    smaller <- update(fit, . ~ . - c, n_iter = 100)
    expect_identical(coda::varnames(smaller), c("(Intercept)", "a", "b"))
    ## missing values, a subset or transformed terms: model.frame() as before
    d$a[3] <- NA
    expect_null(sgfs:::numeric_frame(quote(f(formula = y ~ ., data = d)), environment(), NULL, NULL, NULL))
    expect_identical(coda::niter(sgld(y ~ a + b, d, n_iter = 100, burnin = 0, progress = FALSE)), 100L)
    expect_null(sgfs:::numeric_frame(quote(f(formula = y ~ log(b) + c, data = d)), environment(), NULL,
                                     NULL, NULL))
})

test_that("a data frame's columns serve as the design: separated levels, tibbles, the matrix method", {
    d <- withr::with_seed(4, {
        N <- 300
        d <- data.frame(a = rnorm(N), b = rbinom(N, 1, 0.1), c = rbinom(N, 1, 0.05))
        d$y <- rbinom(N, 1, plogis(d$a))
        d$y[d$c == 1] <- 1                   # c's rows all 1: a separated level
        d
    })
    fit <- withr::with_seed(2, sgld(y ~ ., d, n_iter = 200, progress = FALSE))
    expect_identical(attr(fit, "sgfit")$settings$separated$level, "c")
    ref <- withr::with_seed(2, sgld(model.matrix(y ~ ., d), d$y, intercept = FALSE, n_iter = 200,
                                    progress = FALSE))
    expect_identical(unclass(as.matrix(fit)), unclass(as.matrix(ref)))
    ## the matrix method given the data frame of predictors
    by_frame <- withr::with_seed(2, sgld(d[c("a", "b", "c")], d$y, n_iter = 200, progress = FALSE))
    expect_identical(unclass(as.matrix(by_frame)), unclass(as.matrix(fit)))
    skip_if_not_installed("tibble")
    tb <- tibble::as_tibble(d)
    expect_identical(unclass(as.matrix(withr::with_seed(2, sgld(y ~ ., tb, n_iter = 200,
                                                                progress = FALSE)))),
                     unclass(as.matrix(fit)))
})
