## The plots of the draws: 2-D marginals with 2-sd ellipses, running means,
## error curves, the KSD step-size grid; their geometry and their errors.

test_that("ellipse_points() traces the 2-sd contour of the covariance", {
    S <- matrix(c(4, 1.2, 1.2, 1), 2)
    m <- c(1, -2)
    p <- sgfs:::ellipse_points(m, S)
    ## every point has Mahalanobis distance 2 from the mean
    z <- sweep(p, 2L, m)
    expect_equal(rowSums((z %*% solve(S)) * z), rep(4, nrow(p)), tolerance = 1e-12)
    ## and the extreme x is 2 sd away
    expect_equal(max(p[, 1L]) - m[1L], 2 * sqrt(S[1, 1]), tolerance = 1e-3)
})

test_that("plot_marginals() and plot_running_means() draw fits and matrices", {
    data(Pima.tr, package = "MASS", envir = environment())
    set.seed(3)
    fit <- sgfs(type ~ glu + bmi, data = Pima.tr, n_iter = 600L, batch_size = 50L)
    d <- as.matrix(fit)
    pdf(NULL)
    on.exit(dev.off())
    expect_identical(plot_marginals(fit, c("glu", "bmi"), reference = fit), fit)
    expect_silent(plot_marginals(d, 2:3, reference = list(mean = colMeans(d), cov = cov(d)),
                                 max_points = 50L))
    expect_silent(plot_running_means(fit, reference = coef(fit)))
    expect_silent(plot_running_means(d, pars = "glu"))
    expect_error(plot_marginals(fit, "glu"), "'pars' must name two different")
    expect_error(plot_marginals(fit, c("glu", "age")), "'pars' must name")
    expect_error(plot_marginals(fit, c(1, 1)), "'pars' must name two different")
    expect_error(plot_marginals(fit, reference = list(mean = 1, cov = diag(1))),
                 "'reference' has 1 parameters; 'x' has 3")
    expect_error(plot_marginals(list(1)), "'x' must be a fit or a numeric matrix")
    expect_error(plot_running_means(fit, reference = 1:2), "'reference' has 2 parameters")
})

test_that("error_curve() has a plot method that adds curves", {
    data(Pima.tr, package = "MASS", envir = environment())
    set.seed(4)
    fit <- sgld(type ~ glu + bmi, data = Pima.tr, n_iter = 800L, batch_size = 50L)
    curve <- error_curve(fit, list(mean = coef(fit) + 0.1, cov = 2 * vcov(fit)), points = 5L)
    expect_s3_class(curve, "sgfs_error_curve")
    pdf(NULL)
    on.exit(dev.off())
    expect_identical(plot(curve), curve)
    expect_silent(plot(curve, which = "E2", add = TRUE, col = 2))
    expect_error(plot(curve, which = "E3"), "should be one of")
})

test_that("ksd_steps() runs the sampler per step size and ranks them by ksd()", {
    data(Pima.tr, package = "MASS", envir = environment())
    steps <- c(1e-4, 1e-3, 30)
    ## the far too large step diverges (its chain leaves for 1e12 prior
    ## scales within the run): it counts as infinitely bad
    grid <- ksd_steps(sgld, steps, type ~ glu + bmi, data = Pima.tr,
                      n_iter = 400L, batch_size = 50L, seed = 11,
                      max_draws = 200L, metric = "identity")
    expect_identical(grid$ksd[3], Inf)
    expect_s3_class(grid, "sgfs_ksd_steps")
    expect_equal(grid$stepsize, steps)
    ## each row is the run the grid describes, with the same seed
    set.seed(11)
    fit <- sgld(type ~ glu + bmi, data = Pima.tr, n_iter = 400L, batch_size = 50L,
                stepsize = 1e-3, metric = "identity")
    expect_equal(grid$ksd[2], ksd(fit, max_draws = 200L))
    expect_equal(grid$min_ess[2], unname(min(coda::effectiveSize(fit))))
    ## the far too large step is the worst
    expect_gt(grid$ksd[3], 100 * max(grid$ksd[1:2]))
    expect_true(attr(grid, "best") %in% steps[1:2])
    ## a diverging chain counts as infinitely bad
    div <- ksd_steps(sgld, c(1e-3, 1e4), dist ~ speed, data = cars, family = gaussian(),
                     n_iter = 200L, batch_size = 10L, seed = 2, metric = "identity")
    expect_identical(div$ksd[2], Inf)
    expect_identical(attr(div, "best"), 1e-3)
    expect_output(print(grid), "Smallest KSD at stepsize")
    pdf(NULL)
    on.exit(dev.off())
    expect_identical(plot(grid), grid)
    expect_error(ksd_steps(sgld, -1, type ~ glu, data = Pima.tr), "'stepsizes' must be")
    expect_error(ksd_steps("sgld", 1e-3, type ~ glu, data = Pima.tr), "'sampler' must be")
    expect_error(ksd_steps(sgld, 1e-3, type ~ glu, data = Pima.tr, argument = NA_character_),
                 "'argument' must name")
})

test_that("the plot functions take the user's limits and labels over their own", {
    data(Pima.tr, package = "MASS", envir = environment())
    set.seed(3)
    fit <- sgfs(type ~ glu + bmi, data = Pima.tr, n_iter = 600L, batch_size = 50L)
    pdf(NULL)
    on.exit(dev.off())
    expect_silent(plot_marginals(fit, c("glu", "bmi"), xlim = c(-10, 10), main = "m"))
    expect_equal(par("usr")[1:2], c(-10, 10) + c(-0.8, 0.8), tolerance = 1e-6)
    expect_silent(plot_running_means(fit, "glu", ylim = c(-5, 5), xlab = "draws"))
    expect_equal(par("usr")[3:4], c(-5, 5) + c(-0.4, 0.4), tolerance = 1e-6)
})

test_that("plot() of an error curve takes the user's labels", {
    data(Pima.tr, package = "MASS", envir = environment())
    set.seed(4)
    fit <- sgfs(type ~ glu + bmi, data = Pima.tr, n_iter = 600L, batch_size = 50L)
    curve <- error_curve(fit, list(mean = coef(fit) + 0.01, cov = 2 * vcov(fit)))
    pdf(NULL)
    on.exit(dev.off())
    expect_silent(plot(curve, xlab = "s", log = "y", main = "E1"))
})
