## mlp(precision = "single"): the minibatch score's passes in floats
## (src/mlp_layers.h compiled for float, where R's BLAS has sgemm).  Its
## scores against the double ones and finite differences, its
## log-likelihood, a chain on it, and the error where the BLAS has none.

test_that("without sgemm in R's BLAS, precision = 'single' is refused, naming the argument", {
    skip_if(sgfs:::single_precision_available())
    expect_error(mlp(5, precision = "single"), "'precision' \"single\" needs single-precision")
})

test_that("single-precision scores equal the double ones to float rounding, for every family and architecture", {
    skip_if_not(sgfs:::single_precision_available())
    d <- net_data(N = 60, seed = 3, P = 4)
    idx <- c(3L, 8L, 21L, 40L, 59L)
    fams <- list(list(binomial(), "yb"), list(gaussian(), "yg"), list(categorical(), "yc"),
                 list(poisson(), "yp"))
    for (fam in fams)
        for (hidden in list(5L, c(4L, 3L)))
            for (act in c("tanh", "logistic", "relu")) {
                one <- function(precision)
                    engine_spec(d$x, d[[fam[[2]]]], family = fam[[1]], batch_size = 5L,
                                model = mlp(hidden, act, precision = precision))
                single <- one("single")
                double <- one("double")
                theta <- withr::with_seed(4, rnorm(double$design$D, sd = 0.7))
                es <- model_eval(single$spec, theta, idx)
                ed <- model_eval(double$spec, theta, idx)
                label <- paste(fam[[1]]$family, paste(hidden, collapse = "-"), act)
                ## float rounding: relative 1e-7 per operation, a few dozen in a row
                scale <- max(abs(ed$grad))
                expect_lt(max(abs(es$grad - ed$grad)) / scale, 1e-5, label = label)
                expect_lt(max(abs(es$scores - ed$scores)) / max(abs(ed$scores)), 1e-5,
                          label = label)
                expect_equal(colSums(es$scores), es$grad, tolerance = 1e-5)
                expect_equal(es$loglik, ed$loglik, tolerance = 1e-5, label = label)
                ## and against finite differences of the double log-likelihood
                expect_lt(max(abs(es$grad - fd_grad(double$spec, theta, idx))) / scale, 1e-5,
                          label = label)
            }
})

test_that("a chain in single precision samples the same posterior as one in double", {
    skip_if_not(sgfs:::single_precision_available())
    d <- net_data(N = 400, seed = 5, P = 4)
    fit <- function(precision) {
        set.seed(11)
        sgld(d$x, d$yg, family = gaussian(), model = mlp(4, "tanh", precision = precision),
             stepsize = 1e-3, batch_size = 40L, n_iter = 6000L, burnin = 2000L, thin = 4L,
             init = "map", progress = FALSE)
    }
    s <- fit("single")
    db <- fit("double")
    ## the noise sd and the fitted values: identifiable, and close once the
    ## rounding's 1e-7 differences have been amplified along the chain
    sig <- function(f) mean(exp(as.matrix(f)[, "log_sigma"]))
    expect_equal(sig(s), sig(db), tolerance = 0.05)
    expect_equal(predict(s), predict(db), tolerance = 0.05)
    ## reproducible under set.seed()
    expect_identical(as.matrix(fit("single")), as.matrix(s))
})

test_that("mlp() records the precision and prints it", {
    expect_identical(mlp(3)$precision, "double")
    expect_output(print(mlp(3)), "^mlp\\(hidden = 3, activation = \"tanh\"\\)$")
    expect_error(mlp(3, precision = "half"), "'precision' must be one of")
    skip_if_not(sgfs:::single_precision_available())
    expect_output(print(mlp(3, precision = "single")), "precision = \"single\"")
})
