## sga(): the warning when its estimate is not yet the mode, and plug-in predictions

test_that("sga() warns when its estimate is not yet the mode, and says why", {
    data(Pima.tr, package = "MASS", envir = environment())
    ## unstandardised predictors (glu ~ 120, intercept ~ -10): SGA crawls
    set.seed(2)
    expect_warning(m <- sga(type ~ ., data = Pima.tr, batch_size = 50L, standardize = FALSE),
                   "not yet the posterior mode.*standardize = TRUE")
    set.seed(2)
    expect_no_warning(m <- sga(type ~ ., data = Pima.tr, batch_size = 50L))
    expect_equal(coef(m), coef(glm(type ~ ., binomial, Pima.tr)), tolerance = 0.05)
})

test_that("predict() of an sga() estimate is the plug-in prediction", {
    data(Pima.tr, Pima.te, package = "MASS", envir = environment())
    set.seed(4)
    m <- sga(type ~ glu + bmi + ped, data = Pima.tr, batch_size = 50L, n_iter = 2000L)
    X <- model.matrix(~ glu + bmi + ped, Pima.te)
    expect_equal(predict(m, Pima.te), drop(X %*% coef(m)), ignore_attr = TRUE)
    expect_equal(predict(m, Pima.te, type = "response"), plogis(drop(X %*% coef(m))),
                 ignore_attr = TRUE)
    expect_identical(levels(predict(m, Pima.te, type = "class")), c("No", "Yes"))
    expect_error(predict(m), "'newdata' is needed")
    expect_error(predict(m, Pima.te, interval = "credible"), "interval")
})
