## A battery of bad and edge-case inputs to the public API (issue 17).
##
## Each case is a quoted call of an exported function or method and what it
## must do:
##   * bad(expr, arg): an invalid input, to be refused with an R error whose
##     message names the argument, as stop_arg() writes it ('arg'), unless
##     `named` gives another pattern that names it (an unknown argument, the
##     position of an argument of c()); `pattern`, if given, must match too;
##   * ok(expr, check): an edge case that must work: `check`, evaluated with
##     the value as `r`, must be TRUE (dimensions and names, finite draws,
##     agreement with glm() or with another run, ...).
## The cases run in child R processes (many per child): the child records
## each case's number in a progress file before it runs it and saves its
## outcome after; a child that dies names the case that crashed it, one
## whose case runs longer than `timeout` seconds is killed and the case
## counted as a hang; the next child starts after that case.  The test
## counts the cases, the invalid ones, those refused with a message naming
## the argument (at least 95 % of them), and asserts no crash, no hang and
## no silent wrong result: no invalid input accepted, no edge case refused
## or answered wrongly.  Set SGFS_BATTERY_REPORT=true to print the counts
## and every case that fell short.

skip_on_cran()
skip_on_os("windows")

## ---- the objects the cases use, made in each child before its cases ----
battery_setup <- quote({
    suppressMessages(library(sgfs))
    set.seed(1)
    pima <- MASS::Pima.tr
    X <- matrix(rnorm(200), 100, 2, dimnames = list(NULL, c("a", "b")))
    yb <- rbinom(100, 1, plogis(X[, "a"]))
    dfb <- data.frame(X, y = yb)
    ## a sampler on the matrix data (or x, y) and on Pima, 20 iterations
    ## unless told, without progress bar
    m <- function(f, ..., x = X, y = yb) {
        args <- list(...)
        if (!"n_iter" %in% names(args)) args$n_iter <- 20L
        if (!"progress" %in% names(args)) args$progress <- FALSE
        do.call(f, c(list(x, y), args))
    }
    fp <- function(f, ..., formula = type ~ glu + bmi, data = pima) {
        args <- list(...)
        if (!"n_iter" %in% names(args)) args$n_iter <- 20L
        if (!"progress" %in% names(args)) args$progress <- FALSE
        do.call(f, c(list(formula, data), args))
    }
    finite <- function(r) all(is.finite(as.matrix(r)))
    ## fits the methods' cases use
    fit <- sgld(type ~ glu + bmi, pima, n_iter = 40, progress = FALSE)
    fit2 <- sgld(type ~ glu + bmi, pima, n_iter = 40, chains = 2, progress = FALSE)
    fit_m <- sgld(X, yb, n_iter = 40, progress = FALSE)
    fit_g <- sgld(mpg ~ wt + hp, mtcars, family = gaussian(), n_iter = 40, progress = FALSE)
    fit_c <- sgld(Species ~ ., iris, family = categorical(), n_iter = 40, progress = FALSE)
    fit_off <- sgld(X, yb, offset = X[, "b"] / 2, n_iter = 40, progress = FALSE)
    ## a custom model: the mean of normal data with sd 1
    norm_model <- custom_model(score = function(theta, data) matrix(data - theta, ncol = 1),
                               loglik = function(theta, data) stats::dnorm(data, theta, log = TRUE),
                               init = 0, names = "mu")
    zdat <- rnorm(100, 3)
    ## files for the readers
    tmp <- tempfile("battery")
    dir.create(tmp)
    libsvm <- function(...) {
        f <- tempfile(tmpdir = tmp, fileext = ".svm")
        writeLines(c(...), f)
        f
    }
    idx <- function(file, dims, data = raw(prod(dims))) {
        con <- gzfile(file, "wb")
        writeBin(as.integer(c(0x800 + length(dims), dims)), con, size = 4L, endian = "big")
        writeBin(as.raw(data), con)
        close(con)
    }
    mnist_dir <- function(n_images, n_labels, labels = rep(1L, n_labels), image_dims = c(28L, 28L)) {
        d <- tempfile("mnist", tmpdir = tmp)
        dir.create(d)
        idx(file.path(d, "t10k-images-idx3-ubyte.gz"), c(n_images, image_dims))
        idx(file.path(d, "t10k-labels-idx1-ubyte.gz"), n_labels, labels)
        d
    }
})

## ---- the cases ----
cases <- list()
add <- function(case) {
    case$label <- paste(deparse(case$expr, width.cutoff = 500L), collapse = " ")
    cases[[length(cases) + 1L]] <<- case
}
bad <- function(expr, arg, pattern = NULL, named = NULL)
    add(list(expr = substitute(expr), kind = "bad", arg = arg, pattern = pattern, named = named))
ok <- function(expr, check = TRUE)
    add(list(expr = substitute(expr), kind = "ok", check = substitute(check)))

samplers <- c("sgld", "sgldcv", "sgfs", "psgld", "sghmc", "sgnht", "isgd", "osgfs", "mala", "hmc")

## the arguments every sampler shares, on each sampler
shared_bad <- list(
    n_iter = list(0, -5, 2.5, "20", NA, Inf, c(20, 30), list(20)),
    burnin = list(-1, 20, 1.5, "a"),
    thin = list(0, 100, NA),
    batch_size = list(1, 101, 0.5, "10"),
    chains = list(0, 1.5, NA),
    cores = list(0, "2"),
    init = list(c(1, 2), "mode", c(NA, 0, 0)),
    prior = list("normal", 1),
    prior_intercept = list("normal"),
    family = list("gamma", 3),
    standardize = list(NA),
    max_time = list(-1),
    sigma = list(1))
for (s in samplers) {
    for (arg in names(shared_bad)) {
        for (v in shared_bad[[arg]]) {
            call <- as.call(c(list(as.name("m"), as.name(s)), stats::setNames(list(v), arg)))
            add(list(expr = call, kind = "bad", arg = arg))
        }
    }
    add(list(expr = bquote(m(.(as.name(s)), y = yb[-1])), kind = "bad", arg = "y"))
    add(list(expr = bquote(m(.(as.name(s)), foo = 1)), kind = "bad", arg = "foo",
             named = "unknown argument\\(s\\): foo"))
    ## thin > 1 and two chains: the draws kept, finite, named
    add(list(expr = bquote(fp(.(as.name(s)), n_iter = 40, burnin = 10, thin = 3, chains = 2)),
             kind = "ok",
             check = quote(inherits(r, "mcmc.list") && coda::nchain(r) == 2L &&
                               coda::niter(r) == 10L && coda::thin(r) == 3 &&
                               identical(coda::varnames(r), c("(Intercept)", "glu", "bmi")) &&
                               finite(r))))
}

## x and y
bad(m(sgld, x = X[0, ], y = yb[0]), "x")
bad(m(sgld, x = X[1, , drop = FALSE], y = yb[1]), "x")
bad(m(sgld, x = replace(X, 3, NA)), "x")
bad(m(sgld, x = replace(X, 3, Inf)), "x")
bad(m(sgld, x = replace(X, 3, NaN)), "x")
bad(m(sgld, x = matrix(letters[1:4], 2)), "x")
bad(m(sgld, x = list(1, 2)), "x")
bad(m(sgld, x = function(x) x), "x")
bad(m(sgld, x = NULL), "x")
bad(m(sgld, x = cbind(X, c = 1)), "x", "constant")
bad(m(sgld, x = X[, 0], intercept = FALSE), "x")
bad(m(sgld, x = cbind(X, a2 = X[, "a"] * c(1e308, 0))), "x")
bad(m(sgld, y = replace(yb, 2, NA)), "y")
bad(m(sgld, y = replace(as.double(yb), 2, NaN)), "y")
bad(m(sgld, y = replace(as.double(yb), 2, Inf)), "y")
bad(m(sgld, y = 0:99), "y")
bad(m(sgld, y = rep(2, 100)), "y")
bad(m(sgld, y = rep(c("a", "b"), 50)), "y")
bad(m(sgld, y = as.list(yb)), "y")
bad(m(sgld, y = function(x) x), "y")
bad(m(sgld, y = NULL), "y")
bad(m(sgld, y = factor(rep(c("a", "b", "c", "d"), 25))), "y")
bad(m(sgld, y = cbind(yb, 1 - yb, yb)), "y")
bad(m(sgld, y = cbind(yb, yb - 1)), "y")
bad(m(sgld, y = cbind(yb, replace(1 - yb, 1, NA))), "y")
bad(m(sgld, y = cbind(yb + 0.5, 1 - yb)), "y")
bad(m(sgld, y = X[, 1], family = poisson()), "y")
bad(m(sgld, y = -yb, family = poisson()), "y")
bad(m(sgld, y = yb + 0.5, family = poisson()), "y")
bad(m(sgld, y = replace(X[, 1], 4, NA), family = gaussian()), "y")
bad(m(sgld, y = replace(X[, 1], 4, -Inf), family = gaussian()), "y")
bad(m(sgld, y = yb, family = categorical()), "y")
bad(m(sgld, y = factor(replace(rep(c("a", "b", "c"), length.out = 100), 5, NA)),
      family = categorical()), "y")
bad(sgld(X, n_iter = 20, progress = FALSE), "y")
bad(fp(sgld, formula = type ~ glu, data = pima[1, ]), "x")
bad(fp(sgld, formula = type ~ glu + nonexistent), "formula")
bad(fp(sgld, data = pima[0, ]), "data")
bad(fp(sgld, data = "pima"), "data")
bad(fp(sgld, subset = 1000:2000), "subset")
bad(fp(sgld, weights = rep(NA_real_, 200)), "data")
bad(fp(sgld, keep = predictive(pima[, "glu", drop = FALSE])), "keep")
bad(m(sgld, keep = predictive(X[0, ])), "newdata")
bad(m(sgld, schedule = schedule_polynomial(delta = 1e300)), "schedule")
bad(m(sgld, thin = 1 + 1e-12), "thin", "not 1.000000000001")
bad(fp(sgld, formula = type ~ glu + const, data = transform(pima, const = 1)), "x", "constant")
bad(fp(sgld, formula = type ~ glu, data = transform(pima, glu = replace(glu, 1, NA)),
       na.action = na.fail), "na.action")
bad(fp(sgld, formula = y ~ a, data = dfb, intercept = FALSE), "intercept")
bad(fp(sgld, formula = y ~ a, data = dfb, contrasts = "contr.sum"), "contrasts")
bad(fp(sgld, formula = type ~ glu + age, data = transform(pima, age = factor(age > 30)),
       contrasts = list(age = "no_such_contrast")), "contrasts")
bad(fp(sgld, formula = mpg ~ wt + log_sigma, data = transform(mtcars, log_sigma = qsec),
       family = gaussian()), "x")
bad(fp(sgld, formula = mpg ~ wt, data = transform(mtcars, mpg = 1), family = gaussian()), "y")

## huge counts (n_iter = 2e9 keeps more draws than memory allows: refused
## by the check on thin, the argument that would make such a run possible)
bad(m(sgld, n_iter = 2e9), "thin", "more than memory allows")
bad(m(sgld, n_iter = .Machine$integer.max + 1), "n_iter")
bad(m(sgld, n_iter = 2e9, burnin = 2e9), "burnin")
bad(m(sgld, thin = 2e9), "thin")
bad(m(sgld, batch_size = 2e9), "batch_size")
bad(m(sgld, chains = 2e9), "chains")
bad(m(sgld, chains = 1e10), "chains")
bad(m(hmc, n_leapfrog = 2e9), "n_leapfrog")
bad(m(sgfs, fisher_rows = 2e9), "fisher_rows")
bad(m(sgld, y = (X[, 1] + rnorm(100)) * 1e200, family = gaussian()), "y")
bad(mlp(2e9), "hidden")
bad(schedule_cyclical(cycles = 2e9 * 2), "cycles")

## edge cases of the data that must work
ok(m(sgld, x = X * 1e150, n_iter = 100),      # predictors on scales far from 1
   finite(r) && all(abs(colMeans(as.matrix(r))[-1] * 1e150) < 5))
ok(m(sgld, x = X * 1e-150, n_iter = 100),
   finite(r) && all(abs(colMeans(as.matrix(r))[-1] * 1e-150) < 5))
ok(m(sgld, y = (X[, 1] + rnorm(100)) * 1e100, family = gaussian(), n_iter = 100),
   finite(r) && abs(colMeans(as.matrix(r))[["a"]] / 1e100 - 1) < 0.5)
ok(m(sgld, chains = 2, cores = 1e6), coda::nchain(r) == 2L)
ok(m(sgld, x = X[, 0]), identical(coda::varnames(r), "(Intercept)") && finite(r))
ok(m(sgld, x = X[, 1, drop = FALSE]),
   identical(coda::varnames(r), c("(Intercept)", "a")) && finite(r) && coda::niter(r) == 18L)
ok(m(sgld, x = X[1:2, ], y = c(0, 1)), finite(r) && ncol(r) == 3L)
ok(m(sgld, x = `storage.mode<-`(round(X * 10), "integer")), finite(r))
ok(m(sgld, x = as.data.frame(X)), identical(coda::varnames(r), c("(Intercept)", "a", "b")))
ok(m(sgld, x = Matrix::Matrix(X, sparse = TRUE)), finite(r) && ncol(r) == 3L)
ok(m(sgld, x = unname(X)), identical(coda::varnames(r), c("(Intercept)", "x1", "x2")))
ok(m(sgld, y = as.logical(yb)), finite(r) && is.null(attr(r, "sgfit")$levels))
ok(m(sgld, y = as.integer(yb)), finite(r))
ok(m(sgld, y = factor(yb, labels = c("no", "yes"))),
   identical(attr(r, "sgfit")$levels, c("no", "yes")) && finite(r))
ok(m(sgld, y = rep(0:1, 50)), finite(r))
ok(m(sgld, y = cbind(s = yb * 3, f = c(0, 0, rep(2, 98)))),
   finite(r) && nobs(r) == 100L)                     # two rows of no trial
ok(m(sgld, y = rpois(100, 2), family = poisson()), finite(r))
ok(m(sgld, y = rpois(100, 2) + 0L, family = "poisson"), finite(r))
ok(m(sgld, y = X[, 1] + rnorm(100), family = gaussian),
   identical(coda::varnames(r), c("(Intercept)", "a", "b", "log_sigma")))
ok(m(sgld, y = X[, 1] + rnorm(100), family = gaussian(), sigma = 1),
   identical(coda::varnames(r), c("(Intercept)", "a", "b")))
ok(m(sgld, y = factor(rep(c("u", "v", "w"), length.out = 100)), family = categorical()),
   ncol(r) == 6L && finite(r))
ok(m(sgld, x = X, y = yb, intercept = FALSE), identical(coda::varnames(r), c("a", "b")))
ok(m(sgld, standardize = FALSE), finite(r))
ok(m(sgld, batch_size = 100), attr(r, "sgfit")$spec$batch_size == 100L && finite(r))
ok(m(sgld, batch_size = 2), attr(r, "sgfit")$spec$batch_size == 2L && finite(r))
ok(m(sgld, n_iter = 1, burnin = 0), coda::niter(r) == 1L && finite(r))
ok(m(sgld, n_iter = 2, burnin = 1), coda::niter(r) == 1L)
ok(m(sgld, n_iter = 20, burnin = 0, thin = 20), coda::niter(r) == 1L)
ok(m(sgld, n_iter = 20L, burnin = 5L, thin = 5L), coda::niter(r) == 3L && coda::thin(r) == 5)
ok(m(sgld, chains = 1), inherits(r, "mcmc") && !inherits(r, "mcmc.list"))
ok(m(sgld, chains = 3), inherits(r, "mcmc.list") && coda::nchain(r) == 3L)
ok(list(withr::with_seed(5, m(sgld, chains = 2, cores = 2)),
        withr::with_seed(5, m(sgld, chains = 2, cores = 1))),
   isTRUE(all.equal(as.matrix(r[[1]]), as.matrix(r[[2]]))))
ok(m(sgld, init = c(0.1, 0.2, -0.3)), finite(r))
ok(m(sgld, init = NULL), finite(r))
ok(m(sgld, max_time = Inf), finite(r))
ok(m(sgld, stepsize = 1e-4, metric = "identity"), attr(r, "sgfit")$settings$stepsize == 1e-4)
ok(m(sgld, schedule = schedule_polynomial(b = 10)), finite(r))
ok(m(sgld, schedule = schedule_cyclical(cycles = 2)), finite(r))
ok(m(sgld, prior = laplace(0, 1)), finite(r))
ok(m(sgld, prior = student_t(3, 0, 2)), finite(r))
ok(m(sgld, prior = cauchy()), finite(r))
ok(m(sgld, prior = normal(0, c(5, 1, 1))), finite(r))
ok(m(sgld, prior = hs()), finite(r) && ncol(r) == 7L &&     # the coefficients, then the scales
       identical(coda::varnames(r)[1:4], c("(Intercept)", "a", "b", "hs_lambda[a]")))
ok(m(sgld, prior_intercept = normal(0, 10)), finite(r))
ok(m(sgld, family = binomial("probit")), finite(r))
ok(m(sgld, weights = rep(1, 100)), finite(r))
ok(list(withr::with_seed(6, m(sgld, weights = rep(1, 100))), withr::with_seed(6, m(sgld))),
   identical(as.matrix(r[[1]]), as.matrix(r[[2]])))        # weights of 1: the same draws
ok(m(sgld, weights = c(rep(0, 10), rep(2, 90))),
   finite(r) && identical(weights(r), c(rep(0, 10), rep(2, 90))))
ok(m(sgld, offset = rep(0.5, 100)), finite(r))
ok(fp(sgld, formula = type ~ glu + bmi + offset(age / 100)), finite(r))
ok(fp(sgld, formula = type ~ npreg + f, data = transform(pima, f = factor(ifelse(age > 30, "old", "young"),
                                                                          levels = c("old", "young", "none")))),
   identical(coda::varnames(r), c("(Intercept)", "npreg", "fyoung")))   # an empty level
ok(fp(sgld, formula = type ~ npreg + f, data = transform(pima, f = ifelse(age > 30, "old", "young"),
                                                         stringsAsFactors = FALSE)),
   identical(coda::varnames(r), c("(Intercept)", "npreg", "fyoung")))   # a character column
ok(fp(sgld, formula = type ~ glu + bmi, data = transform(pima, glu = replace(glu, 1:3, NA))),
   nobs(r) == 197L)
ok(fp(sgld, formula = type ~ glu + bmi, data = transform(pima, glu = replace(glu, 1:3, NA)),
      na.action = na.exclude),
   nobs(r) == 197L && length(predict(r)) == 200L && sum(is.na(predict(r))) == 3L)
ok(fp(sgld, formula = type ~ glu, subset = 1:50), nobs(r) == 50L)
ok(fp(sgld, formula = y ~ a - 1, data = dfb), identical(coda::varnames(r), "a"))
ok(fp(sgld, formula = type ~ 1), identical(coda::varnames(r), "(Intercept)") && finite(r))
ok(fp(sgld, formula = I(type == "Yes") ~ glu), finite(r))
ok(fp(sgld, formula = mpg ~ wt + hp, data = mtcars, family = gaussian(), model = mlp(2)),
   finite(r) && ncol(r) == 10L)   # 2 x 2 + 2 + 2 + 1 weights and biases, log_sigma
ok(fp(sgld, formula = type ~ glu + bmi, model = mlp(c(2, 2), activation = "relu")), finite(r))
ok(suppressWarnings(withr::with_seed(7, fp(hmc, n_iter = 400, burnin = 100))),
   local({   # agrees with glm() within three standard errors
       g <- summary(glm(type ~ glu + bmi, binomial, pima))$coefficients
       all(abs(colMeans(as.matrix(r)) - g[, 1]) < 3 * g[, 2])
   }))
ok(local({
       d <- data.frame(x = rnorm(150), e = runif(150, 1, 5))
       d$n <- rpois(150, d$e * exp(0.5 + 0.3 * d$x))
       list(fit = withr::with_seed(8, hmc(n ~ x, d, family = poisson(), offset = log(e),
                                          n_iter = 400, progress = FALSE)),
            glm = glm(n ~ x, poisson, d, offset = log(e)))
   }),
   local({   # an offset: agrees with glm()'s
       g <- summary(r$glm)$coefficients
       all(abs(colMeans(as.matrix(r$fit)) - g[, 1]) < 3 * g[, 2])
   }))
ok(m(sga, n_iter = 50), inherits(r, "sgfs_map") && all(is.finite(coef(r))))
ok(m(sgfs, preconditioner = "block", blocks = c(1, 2)), finite(r))
ok(m(sgfs, preconditioner = "diagonal", alpha = 0, batch_size = 50, control_variates = FALSE),
   finite(r))

## each sampler's own arguments
bad(m(sgld, stepsize = "a"), "stepsize")
bad(m(sgld, stepsize = NA), "stepsize")
bad(m(sgld, stepsize = Inf), "stepsize")
bad(m(sgld, stepsize = c(1e-3, 1e-2)), "stepsize")
bad(m(sgld, stepsize = list(1e-3)), "stepsize")
bad(m(sgld, metric = "euclid"), "metric")
bad(m(sgld, metric = 1), "metric")
bad(m(sgld, metric = NA), "metric")
bad(m(sgld, standardize = "yes"), "standardize")
bad(m(sgld, standardize = c(TRUE, FALSE)), "standardize")
bad(m(sgld, progress = "yes"), "progress")
bad(m(sgld, progress = "no"), "progress")
bad(m(sgld, verbose = NA), "verbose")
bad(m(sgld, max_time = 0), "max_time")
bad(m(sgld, max_time = NA), "max_time")
bad(m(sgld, max_time = "1"), "max_time")
bad(m(sgld, cores = 1.5), "cores")
bad(m(sgld, cores = NA), "cores")
bad(m(sgld, chains = -1), "chains")
bad(m(sgld, chains = Inf), "chains")
bad(m(sgld, chains = "2"), "chains")
bad(m(sgld, y = X[, 1], family = gaussian(), sigma = 0), "sigma")
bad(m(sgld, y = X[, 1], family = gaussian(), sigma = -1), "sigma")
bad(m(sgld, y = X[, 1], family = gaussian(), sigma = NA), "sigma")
bad(m(sgld, y = X[, 1], family = gaussian(), sigma = "1"), "sigma")
bad(m(sgld, y = X[, 1], family = gaussian(), sigma = c(1, 2)), "sigma")
bad(m(sgld, y = X[, 1], family = gaussian(), sigma = Inf), "sigma")
bad(m(sgld, prior = normal(0, c(1, 2, 3, 4))), "prior")
bad(m(sgld, prior = list()), "prior")
bad(m(sgld, prior = function(x) x), "prior")
bad(m(sgld, prior = NA), "prior")
bad(m(sgld, prior_intercept = 1), "prior_intercept")
bad(m(sgld, prior_intercept = hs()), "prior_intercept")
bad(m(sgld, prior_intercept = normal(0, c(1, 2))), "prior_intercept")
bad(m(sgld, family = binomial("cloglog")), "family")
bad(m(sgld, family = list()), "family")
bad(m(sgld, family = Gamma()), "family")
bad(m(sgld, family = quasibinomial()), "family")
bad(m(sgld, family = NULL), "family")
bad(m(sgld, family = NA), "family")
bad(m(sgld, family = "no_such_family"), "family")
bad(m(sgld, family = c("binomial", "poisson")), "family")
bad(m(sgld, model = "mlp"), "model")
bad(m(sgld, model = 3), "model")
bad(m(sgld, model = list(type = "mlp")), "model")
bad(m(sgld, model = mlp(2), family = binomial("probit")), "family")
bad(m(sgld, model = mlp(2), prior_intercept = normal()), "prior_intercept")
bad(m(sgld, model = mlp(2), prior = list(normal(), normal(), normal())), "prior")
bad(m(sgld, weights = replace(rep(1, 100), 1, -1)), "weights")
bad(m(sgld, weights = replace(rep(1, 100), 1, NA)), "weights")
bad(m(sgld, weights = replace(rep(1, 100), 1, Inf)), "weights")
bad(m(sgld, weights = rep(1, 99)), "weights")
bad(m(sgld, weights = rep("1", 100)), "weights")
bad(m(sgld, weights = rep(0, 100)), "weights")
bad(m(sgld, weights = cbind(rep(1, 100), 1)), "weights")
bad(m(sgld, weights = rep(1, 100), model = mlp(2)), "weights")
ok(m(sgld, y = factor(rep(c("u", "v", "w"), length.out = 100)), family = categorical(),
     weights = rep(1, 100)), finite(r))
bad(m(sgld, offset = rep(0, 99)), "offset")
bad(m(sgld, offset = replace(rep(0, 100), 1, NA)), "offset")
bad(m(sgld, offset = rep("0", 100)), "offset")
bad(m(sgld, offset = matrix(0, 100, 2)), "offset")
bad(m(sgld, offset = rep(0, 100), model = mlp(2)), "offset")
bad(m(sgld, y = factor(rep(c("u", "v", "w"), length.out = 100)), family = categorical(),
      offset = rep(0, 100)), "offset")
bad(m(sgld, offset = rep(0, 100), keep = predictive(X[1:5, ])), "offset")
bad(fp(sgld, weights = rep(1, 3)), "weights")
bad(fp(sgld, offset = rep(1, 3)), "offset")
bad(m(sgld, keep = "all"), "keep")
bad(m(sgld, keep = 3), "keep")
bad(m(sgld, keep = predictive(X[1:5, 1, drop = FALSE])), "keep")
bad(m(sgld, keep = predictive(replace(X[1:5, ], 1, NA))), "keep")
bad(predictive("a"), "newdata")
bad(predictive(X[1:3, ], monitor = list(1)), "monitor")
bad(m(sgld, keep = predictive(X[1:5, ], monitor = "a")), "monitor")
bad(m(sgld, schedule = "linear"), "schedule")
bad(m(sgld, schedule = 3), "schedule")
bad(m(sgld, intercept = NA), "intercept")
bad(m(sgld, intercept = "yes"), "intercept")
bad(m(sgld, contrasts = list(a = "contr.sum")), "contrasts")
bad(m(sgfs, alpha = -1), "alpha")
bad(m(sgfs, alpha = NA), "alpha")
bad(m(sgfs, alpha = "a"), "alpha")
bad(m(sgfs, alpha = Inf), "alpha")
bad(m(sgfs, preconditioner = "blocks"), "preconditioner")
bad(m(sgfs, preconditioner = 1), "preconditioner")
bad(m(sgfs, preconditioner = "block", blocks = c(1, 1)), "blocks")
bad(m(sgfs, blocks = 3), "blocks")
bad(m(sgfs, fisher_rows = 1), "fisher_rows")
bad(m(sgfs, fisher_rows = 1000), "fisher_rows")
bad(m(sgfs, robust = NA), "robust")
bad(m(sgfs, schedule = schedule_polynomial(), alpha = 0, batch_size = 50,
      control_variates = FALSE), "schedule")
bad(m(psgld, decay = 1), "decay")
bad(m(psgld, decay = -0.1), "decay")
bad(m(psgld, decay = NA), "decay")
bad(m(psgld, lambda = 0), "lambda")
bad(m(psgld, lambda = "a"), "lambda")
bad(m(sghmc, friction = 0), "friction")
bad(m(sghmc, friction = 2), "friction")
bad(m(sghmc, friction = NA), "friction")
bad(m(sghmc, trajectory = 0), "trajectory")
bad(m(sghmc, trajectory = 1.5), "trajectory")
bad(m(sghmc, noise_estimate = "yes"), "noise_estimate")
bad(m(sgnht, diffusion = -1), "diffusion")
bad(m(sgnht, diffusion = NA), "diffusion")
bad(m(sgnht, diffusion = "a"), "diffusion")
bad(m(isgd, warmup = 1), "warmup")
bad(m(isgd, warmup = 2.5), "warmup")
bad(m(isgd, groups = 1:2), "groups")
bad(m(isgd, groups = c(1, NA, 2)), "groups")
bad(m(isgd, burnin = 1), "burnin")
bad(m(osgfs, stepsize = 2), "stepsize")
bad(m(osgfs, stepsize = "maximal"), "stepsize")
bad(m(osgfs, stepsize = 0), "stepsize")
bad(m(osgfs, mode = 1:4), "mode")
bad(m(osgfs, mode = c(NA, 1, 1)), "mode")
bad(m(osgfs, stratify = NA), "stratify")
bad(m(osgfs, opt_iter = 0), "opt_iter")
bad(m(sgldcv, centre = c(1, 2)), "centre")
bad(m(sgldcv, centre = "a"), "centre")
bad(m(sgldcv, opt_iter = 1), "opt_iter")
bad(m(sgldcv, opt_stepsize = 0), "opt_stepsize")
bad(m(sgldcv, opt_stepsize = NA), "opt_stepsize")
bad(m(sgldcv, stepsize = -1), "stepsize")
bad(m(mala, mass = "full"), "mass")
bad(m(mala, target_accept = 1), "target_accept")
bad(m(mala, target_accept = 0), "target_accept")
bad(m(mala, target_accept = NA), "target_accept")
bad(m(mala, adapt = NA), "adapt")
bad(m(mala, stepsize = 0), "stepsize")
bad(m(hmc, n_leapfrog = 0), "n_leapfrog")
bad(m(hmc, n_leapfrog = 1.5), "n_leapfrog")
bad(m(hmc, n_leapfrog = 1e10), "n_leapfrog")
bad(m(hmc, target_accept = 2), "target_accept")
bad(m(hmc, mass = 1), "mass")
bad(m(hmc, adapt = "yes"), "adapt")
bad(m(sga, momentum = 1), "momentum")
bad(m(sga, momentum = -0.5), "momentum")
bad(m(sga, stepsize = 0), "stepsize")
bad(m(sga, n_iter = 0), "n_iter")
bad(m(sga, batch_size = 1), "batch_size")
bad(m(sga, burnin = 30), "burnin")
bad(m(sga, optimizer = "bogus"), "optimizer")
bad(m(sga, schedule = "bogus"), "schedule")
bad(m(sga, chains = 2), "chains", named = "unknown argument\\(s\\): chains")

## the prior, model and schedule constructors
bad(normal(NA), "location")
bad(normal(Inf), "location")
bad(normal("a"), "location")
bad(normal(numeric(0)), "location")
bad(normal(0, 0), "scale")
bad(normal(0, -1), "scale")
bad(normal(0, NA), "scale")
bad(normal(0, Inf), "scale")
bad(normal(0, "1"), "scale")
bad(normal(0, NULL), "scale")
bad(laplace(0, 0), "scale")
bad(laplace(NA), "location")
bad(student_t(0), "df")
bad(student_t(-1), "df")
bad(student_t(Inf), "df")
bad(student_t(NA), "df")
bad(student_t(3, 0, -2), "scale")
bad(cauchy(0, -1), "scale")
bad(cauchy("a"), "location")
bad(hs(df = 0), "df")
bad(hs(global_scale = -1), "global_scale")
bad(hs(slab_df = NA), "slab_df")
bad(hs(slab_scale = "a"), "slab_scale")
bad(hs(global_df = Inf), "global_df")
bad(mlp(0), "hidden")
bad(mlp(-1), "hidden")
bad(mlp(2.5), "hidden")
bad(mlp("a"), "hidden")
bad(mlp(c(2, 2, 2)), "hidden")
bad(mlp(NA), "hidden")
bad(mlp(), "hidden", named = "argument \"hidden\" is missing")
bad(mlp(2, activation = "sigmoid"), "activation")
bad(schedule_polynomial(b = -1), "b")
bad(schedule_polynomial(delta = 0), "delta")
bad(schedule_polynomial(a = -1), "a")
bad(schedule_cyclical(cycles = 0), "cycles")
bad(schedule_cyclical(cycle_length = 2.5), "cycle_length")
bad(schedule_cyclical(a = "a"), "a")
ok(normal(c(0, 1), 2), inherits(r, "sgfs_prior") && identical(r$location, c(0, 1)))
ok(capture.output(print(student_t(3, 0, 2))), any(grepl("student_t", r)))

## custom models
bad(custom_model(score = 1, loglik = function(theta, data) data, init = 0), "score")
bad(custom_model(score = function(theta, data) data, loglik = "f", init = 0), "loglik")
bad(custom_model(function(theta, data) data, function(theta, data) data, init = NA), "init")
bad(custom_model(function(theta, data) data, function(theta, data) data, init = "a"), "init")
bad(custom_model(function(theta, data) data, function(theta, data) data, init = c(0, 0),
                 names = "a"), "names")
bad(custom_model(function(theta, data) data, function(theta, data) data, init = c(0, 0),
                 names = c("a", "a")), "names")
bad(sgld(zdat, yb, model = norm_model, n_iter = 20, progress = FALSE), "y")
bad(sgld(zdat, model = norm_model, family = gaussian(), n_iter = 20, progress = FALSE), "family")
bad(sgld(zdat, model = norm_model, sigma = 1, n_iter = 20, progress = FALSE), "sigma")
bad(sgld(zdat, model = norm_model, weights = rep(1, 100), n_iter = 20, progress = FALSE), "weights")
bad(sgld(zdat[1], model = norm_model, n_iter = 20, progress = FALSE), "x")
bad(sgld(list(), model = norm_model, n_iter = 20, progress = FALSE), "x")
bad(sgld(list(zdat, zdat[1:50]), model = norm_model, n_iter = 20, progress = FALSE), "x")
bad(sgld(function(x) x, model = norm_model, n_iter = 20, progress = FALSE), "x")
bad(sgld(y ~ x, data.frame(x = zdat, y = zdat), model = norm_model, n_iter = 20,
         progress = FALSE), "model")
bad(sgld(zdat, model = norm_model, keep = predictive(matrix(zdat[1:3])), n_iter = 20, progress = FALSE),
    "keep")
bad(sgld(zdat, model = custom_model(function(theta, data) matrix(NaN, length(data), 1),
                                    function(theta, data) data, init = 0),
         n_iter = 20, progress = FALSE), "score", named = "score\\(theta, data\\)")
bad(sgld(zdat, model = custom_model(function(theta, data) { stats::runif(1); data - theta },
                                    function(theta, data) data, init = 0),
         n_iter = 20, progress = FALSE), "score", named = "score\\(theta, data\\)")
bad(sgld(zdat, model = custom_model(function(theta, data) matrix(1, 2, 2),
                                    function(theta, data) data, init = 0),
         n_iter = 20, progress = FALSE), "score", named = "score\\(theta, data\\)")
bad(sgld(zdat, model = custom_model(function(theta, data) data - theta,
                                    function(theta, data) stop("boom"), init = 0),
         n_iter = 20, progress = FALSE), "loglik", named = "loglik\\(theta, data\\)")
ok(withr::with_seed(9, sgld(zdat, model = norm_model, n_iter = 300, progress = FALSE)),
   identical(coda::varnames(r), "mu") && finite(r) && abs(mean(r) - mean(zdat)) < 0.5)

## predict()
bad(predict(fit, newdata = pima[, "glu", drop = FALSE]), "newdata")
bad(predict(fit, newdata = transform(pima, glu = as.character(glu))), "newdata")
bad(predict(fit, newdata = "a"), "newdata")
bad(predict(fit, newdata = 1:3), "newdata")
bad(predict(fit, type = "bogus"), "type")
bad(predict(fit, type = 1), "type")
bad(predict(fit, interval = "bogus"), "interval")
bad(predict(fit, interval = "prediction"), "interval")
bad(predict(fit, interval = "credible", level = 1.5), "level")
bad(predict(fit, interval = "credible", level = -1), "level")
bad(predict(fit, interval = "credible", level = NA), "level")
bad(predict(fit, draws = 0), "draws")
bad(predict(fit, draws = -1), "draws")
bad(predict(fit, draws = "a"), "draws")
bad(predict(fit, offset = 1), "offset")
bad(predict(fit_g, type = "class"), "type")
bad(predict(fit_c, type = "link"), "type")
bad(predict(fit_c, type = "response", interval = "credible"), "interval")
bad(predict(fit_m, newdata = X[, 1]), "newdata")
bad(predict(fit_m, newdata = X[1:3, c(1, 1, 2)]), "newdata")
bad(predict(fit_m, newdata = matrix(c("1", "2"), 1)), "newdata")
bad(predict(fit_m, newdata = cbind(a = 1:2, c = 3:4)), "newdata")
bad(predict(fit_m, newdata = list(1, 2)), "newdata")
bad(predict(fit_off, newdata = X[1:3, ]), "offset")
bad(predict(fit_off, newdata = X[1:3, ], offset = 1:2), "offset")
bad(predict(fit_off, newdata = X[1:3, ], offset = c("1", "2", "3")), "offset")
bad(predict(fit_off, offset = rep(1, 100)), "offset")
bad(predict(fit, newdata = pima, foo = 1), "foo", named = "unknown argument\\(s\\): foo")
ok(predict(fit, newdata = pima[1:5, ], type = "response"),
   length(r) == 5L && all(r > 0 & r < 1))
ok(predict(fit, newdata = pima[0, ]), length(r) == 0L)
ok(predict(fit, newdata = transform(pima[1:4, ], glu = replace(glu, 2, NA))),
   length(r) == 4L && is.na(r[2]) && all(is.finite(r[-2])))
ok(predict(fit, newdata = pima[1:4, c("bmi", "glu")]), length(r) == 4L && all(is.finite(r)))
ok(predict(fit, interval = "credible", level = 0.5),
   all(r[, "lwr"] <= r[, "upr"]) && identical(colnames(r), c("fit", "lwr", "upr")))
ok(predict(fit, type = "class"), is.factor(r) && identical(levels(r), c("No", "Yes")))
ok(predict(fit_c, type = "class"), is.factor(r) && length(r) == 150L &&
       identical(levels(r), levels(iris$Species)))
ok(predict(fit_c, newdata = iris[c(1, 51, 101), ], type = "response"),
   all(abs(rowSums(r) - 1) < 1e-8) && ncol(r) == 3L)
ok(predict(fit_g, newdata = mtcars[1:3, ], interval = "prediction"),
   all(r[, "sd"] > 0) && nrow(r) == 3L)
ok(predict(fit_m, newdata = replace(X[1:3, ], 1, NA)), is.na(r[1]) && all(is.finite(r[2:3])))
ok(predict(fit_off, newdata = X[1:3, ], offset = c(0, 0, 10)), r[3] - r[1] > 5)
ok(predict(fit, draws = 1), length(r) == 200L && all(is.finite(r)))

## update(), window(), [, c(), as.data.frame(), summary(), print()
bad(update(fit), "n_iter")
bad(update(fit, n_iter = 0), "n_iter")
bad(update(fit, n_iter = -1), "n_iter")
bad(update(fit, n_iter = 2.5), "n_iter")
bad(update(fit, n_iter = NA), "n_iter")
bad(update(fit, n_iter = "a"), "n_iter")
bad(update(fit, n_iter = 3e9), "n_iter")
bad(update(fit, n_iter = 5, append = NA), "append")
bad(update(fit, n_iter = 5, append = "no"), "append")
bad(update(fit, n_iter = 5, progress = c(TRUE, FALSE)), "progress")
bad(update(fit, "x"), "formula.")
bad(update(fit, 10, n_iter = 10), "formula.")
bad(update(fit_m, . ~ . - a), "formula.")
bad(update(fit, batch_size = 0), "batch_size")
bad(update(fit, . ~ . + nonexistent), "formula")
bad(update(fit, append = FALSE, stepsize = 1e-3), "append")
bad(window(fit, start = 1e6), "start")
bad(window(fit, end = 1), "end")
bad(window(fit, thin = 0), "thin")
bad(window(fit, thin = 1.5), "thin")
bad(window(fit, start = "a"), "start")
bad(window(fit, start = NA), "start")
bad(fit2[3], "i")
bad(fit2[c(1, 1)], "i")
bad(fit2[0], "i")
bad(fit2["a"], "i")
bad(fit2[NA], "i")
bad(fit[, 99], "j")
bad(fit[, "nonexistent"], "j")
bad(c(fit, 1), "...", named = "argument 2")
bad(c(fit, fit_g), "...", named = "fit 2")
bad(confint(fit, level = 2), "level")
bad(confint(fit, level = NA), "level")
bad(residuals(fit, type = "deviance_bogus"), "type")
bad(summary(fit, foo = 1), "foo", named = "unknown argument\\(s\\): foo")
ok(c(fit, NULL), identical(r, fit))
ok(c(fit2[1], fit2[2]), coda::nchain(r) == 2L && identical(as.matrix(r[[2]]), as.matrix(fit2[[2]])))
ok(update(fit, n_iter = 10), coda::niter(r) == coda::niter(fit) + 10L)
ok(update(fit, n_iter = 10, append = FALSE), coda::niter(r) == 10L)
ok(update(fit2, n_iter = 6), coda::niter(r) == 42L && coda::nchain(r) == 2L)
ok(update(fit, 10), coda::niter(r) == coda::niter(fit) + 10L)
ok(update(fit, . ~ . - bmi), identical(coda::varnames(r), c("(Intercept)", "glu")))
ok(window(fit, start = 30), coda::niter(r) == 11L && start(r) == 30 && inherits(r, "sgfit"))
ok(window(fit2, thin = 2), coda::niter(r) == 18L && coda::nchain(r) == 2L)
ok(suppressWarnings(window(fit, start = -5)), coda::niter(r) == coda::niter(fit))
ok(fit2[2], inherits(r, "sgfit") && !inherits(r, "mcmc.list") && coda::niter(r) == 36L)
ok(fit2[2:1], inherits(r, "sgfit") && coda::nchain(r) == 2L)
ok(fit[, "glu"], coda::is.mcmc(r) && identical(c(r), c(as.matrix(fit)[, "glu"])))
ok(fit[, c("bmi", "glu")], coda::is.mcmc(r) && identical(coda::varnames(r), c("bmi", "glu")))
ok(as.data.frame(fit2), nrow(r) == 72L &&
       identical(names(r), c("(Intercept)", "glu", "bmi", ".chain", ".iteration", ".draw")) &&
       identical(r$.draw, 1:72))
ok(as.data.frame(m(sgld, n_iter = 2, burnin = 1)), nrow(r) == 1L)
ok(capture.output(print(m(sgld, n_iter = 1, burnin = 0))), length(r) > 0L)
ok(summary(m(sgld, n_iter = 1, burnin = 0)), inherits(r, "summary.sgfit"))
ok(capture.output(print(summary(m(sgld, x = X[, 1, drop = FALSE], n_iter = 3, burnin = 0)))),
   any(grepl("\\ba\\b", r)))
ok(capture.output(print(fit_c), print(summary(fit2))), length(r) > 0L)
ok(capture.output(print(fit, digits = 6)), length(r) > 0L)
bad(print(fit, digits = -1), "digits")
bad(print(fit, digits = "a"), "digits")
bad(print(summary(fit), digits = NA), "digits")
ok(coef(fit_g), length(r) == 4L && all(is.finite(r)))
ok(vcov(fit2), all(dim(r) == 3L) && all(diag(r) > 0))
ok(confint(fit, level = 0.5), all(r[, 1] <= r[, 2]))
ok(fitted(fit), length(r) == 200L && all(r > 0 & r < 1))
ok(residuals(fit_g, type = "pearson"), length(r) == 32L && all(is.finite(r)))
ok(sigma(fit_g), length(r) == 1L && r > 0)
ok(nobs(fit_c), r == 150L)

## the draw-level methods (rstantools' generics) and plots
bad(rstantools::posterior_predict(fit, draws = 0), "draws")
bad(rstantools::posterior_predict(fit, seed = "a"), "seed")
bad(rstantools::posterior_predict(fit, newdata = pima[, "bmi", drop = FALSE]), "newdata")
bad(rstantools::log_lik(fit, newdata = pima[1:5, ], y = 1:3), "y")
bad(rstantools::posterior_epred(fit, draws = -2), "draws")
bad(rstantools::posterior_interval(fit, prob = 2), "prob")
bad(rstantools::predictive_interval(fit, prob = 0), "prob")
ok(rstantools::posterior_predict(fit, draws = 5, seed = 1),
   identical(dim(r), c(5L, 200L)) && all(r %in% 0:1))
ok(rstantools::log_lik(fit_g), identical(dim(r), c(36L, 32L)) && all(is.finite(r)))
ok(rstantools::posterior_interval(fit2, prob = 0.5), all(r[, 1] <= r[, 2]) && nrow(r) == 3L)
ok(predict(fit, draws = 2e9), isTRUE(all.equal(r, predict(fit))))
ok(plot(m(sgld, n_iter = 3, burnin = 0)), TRUE)
ok(plot_marginals(fit2, pars = c("glu", "bmi"), reference = fit), TRUE)
ok(plot_running_means(fit, pars = 1), TRUE)
ok(rstantools::prior_summary(fit_c), inherits(r, "sgfs_prior_summary"))

## the other exported functions
bad(ksd(1), "fit")
bad(ksd(fit, beta = 0), "beta")
bad(ksd(fit, beta = "a"), "beta")
bad(ksd(fit, c = -1), "c")
bad(ksd(fit, max_draws = 1), "max_draws")
bad(ksd(m(sgld, prior = hs())), "fit")
bad(compare_samplers(list(1)), "fits")
bad(compare_samplers(fit), "fits")
bad(compare_samplers(list()), "fits")
bad(compare_samplers(list(a = fit), newdata = pima), "y")
bad(compare_samplers(list(a = fit), n_iter = 10), "...")
bad(compare_samplers(list(a = fit), ksd = NA), "ksd")
bad(rel_error(as.matrix(fit), c(0, 0), diag(3)), "ref_mean")
bad(rel_error(as.matrix(fit), c(0, 0, 0), diag(2)), "ref_cov")
bad(rel_error("a", c(0, 0, 0), diag(3)), "draws")
bad(error_curve(1, as.matrix(fit)), "fit")
bad(error_curve(fit, "a"), "reference")
bad(error_curve(fit, as.matrix(fit)[, 1:2]), "reference")
bad(error_curve(fit, as.matrix(fit), points = 0), "points")
bad(ksd_steps(1, c(1e-3, 1e-2)), "sampler")
bad(ksd_steps(sgld, -1), "stepsizes")
bad(ksd_steps(sgld, c(1e-3, NA)), "stepsizes")
bad(ksd_steps(sgld, 1e-3, argument = 1), "argument")
bad(ksd_steps(sgld, 1e-3, seed = -1), "seed")
bad(ksd_steps(sgld, 1e-3, max_draws = 1), "max_draws")
bad(plot_marginals(fit, pars = 99), "pars")
bad(plot_marginals(fit, pars = c("glu", "nonexistent")), "pars")
bad(plot_marginals(1), "x")
bad(plot_marginals(fit, reference = as.matrix(fit)[, 1:2]), "reference")
bad(plot_running_means("a"), "x")
bad(plot_running_means(fit, pars = 0), "pars")
bad(predictive_scores(predict(fit, type = "response"), pima$type[1:10]), "y")
bad(predictive_scores(matrix(5, 200, 2), pima$type), "pred")
ok(ksd(fit), is.numeric(r) && length(r) == 1L && is.finite(r) && r >= 0)
ok(rel_error(as.matrix(fit), colMeans(as.matrix(fit)), cov(as.matrix(fit))),
   all(is.finite(r)) && r[1] < 1e-8)
ok(error_curve(fit, as.matrix(fit2[1]), points = 3), nrow(r) == 3L && all(is.finite(r$E1)))
ok(predictive_scores(predict(fit, type = "response"), pima$type), all(is.finite(unlist(r))))
ok(compare_samplers(list(a = fit, b = fit_m[, 1:3])), is.data.frame(r) && nrow(r) == 2L)

## the readers
bad(read_libsvm(file.path(tmp, "no-such-file")), "file")
bad(read_libsvm(1), "file")
bad(read_libsvm(NA_character_), "file")
bad(read_libsvm(c("a", "b")), "file")
bad(read_libsvm(tmp), "file")
bad(read_libsvm(libsvm(character(0))), "file")
bad(read_libsvm(libsvm("1 a:b")), "file")
bad(read_libsvm(libsvm("1 3:1 2:1")), "file")
bad(read_libsvm(libsvm("abc 1:1")), "file")
bad(read_libsvm(libsvm("1 0:1")), "file")
bad(read_libsvm(libsvm("1 -3:1")), "file")
bad(read_libsvm(libsvm("1 1:1", "0 2")), "file")
bad(read_libsvm(libsvm("1 99999999999:1")), "file")
bad(read_libsvm(libsvm("1 1:1 3:2"), n_features = 2), "n_features")
bad(read_libsvm(libsvm("1 1:1"), n_features = 0), "n_features")
bad(read_libsvm(libsvm("1 1:1"), n_features = "a"), "n_features")
bad(read_libsvm(libsvm("1 1:1"), sparse = NA), "sparse")
ok(read_libsvm(libsvm("1 1:0.5 3:1 # comment", "-1 qid:2 2:1", "+1")),
   identical(dim(r$x), c(3L, 3L)) && identical(r$y, c(1, -1, 1)) && r$x[1, 3] == 1)
ok(read_libsvm(libsvm("1 1:0.5", "0"), n_features = 4, sparse = FALSE),
   is.matrix(r$x) && identical(dim(r$x), c(2L, 4L)) && identical(colnames(r$x), paste0("f", 1:4)))
bad(read_mnist(file.path(tmp, "no-such-dir"), "test"), "path")
bad(read_mnist(tmp, "validation"), "set")
bad(read_mnist(c("a", "b"), "test"), "path")
bad(read_mnist(NA, "test"), "path")
bad(read_mnist(tmp, 1), "set")
bad(read_mnist(mnist_dir(3, 2), "test"), "path")
bad(read_mnist(mnist_dir(2, 2, labels = c(1, 12)), "test"), "path")
bad(read_mnist(mnist_dir(2, 2, image_dims = 784L), "test"), "path")
bad(read_mnist(local({
        d <- mnist_dir(2, 2)
        writeLines("not idx", gzfile(file.path(d, "t10k-images-idx3-ubyte.gz")))
        d
    }), "test"), "path")
bad(read_mnist(local({
        d <- mnist_dir(2, 2)
        idx(file.path(d, "t10k-images-idx3-ubyte.gz"), c(2L, 28L, 28L), raw(100))  # truncated
        d
    }), "test"), "path")
ok(read_mnist(mnist_dir(2, 2, labels = c(0, 9)), "test"),
   identical(dim(r$x), c(2L, 784L)) && identical(as.character(r$y), c("0", "9")))
bad(read_uci(1, tmp), "name")
bad(read_uci(c("a", "b"), tmp), "name")
bad(read_uci("no-such-set", tmp), "name")
bad(read_uci("concrete", file.path(tmp, "no-such-dir")), "path")
bad(read_uci("concrete", 1), "path")

## ---- the runner ----

## in the child: make the objects, then run the cases from `start`, each
## recorded in `dir`/progress before it runs and its outcome saved after
battery_child <- function(bundle, dir, start) {
    writeLines(as.character(Sys.getpid()), file.path(dir, "pid"))
    grDevices::pdf(NULL)
    eval(bundle$setup, globalenv())
    con <- file(file.path(dir, "progress"), open = "a")
    for (k in seq.int(start, length(bundle$cases))) {
        cs <- bundle$cases[[k]]
        writeLines(as.character(k), con)
        flush(con)
        warns <- character(0)
        env <- new.env(parent = globalenv())
        t0 <- proc.time()[["elapsed"]]
        utils::capture.output(value <- tryCatch(withCallingHandlers(
            eval(cs$expr, env),
            warning = function(w) {
                warns <<- c(warns, conditionMessage(w))
                invokeRestart("muffleWarning")
            },
            message = function(m) invokeRestart("muffleMessage")),
            error = function(e) e))
        res <- list(seconds = proc.time()[["elapsed"]] - t0, warnings = warns)
        if (inherits(value, "error")) {
            res$error <- conditionMessage(value)
        } else if (cs$kind == "ok") {
            env$r <- value
            chk <- tryCatch(eval(cs$check, env),
                            error = function(e) paste("the check failed:", conditionMessage(e)))
            res$check <- if (isTRUE(chk)) TRUE else if (is.character(chk)) chk
                         else "the check is not TRUE"
        }
        saveRDS(res, file.path(dir, sprintf("case%04d.rds", k)))
    }
    writeLines("done", con)
    close(con)
}
environment(battery_child) <- globalenv()

## runs the cases in child processes; each case's outcome, or
## list(failure = "crash" / "hang"): a case is killed as hung after
## `timeout` seconds (a child's start-up, before its first case, gets 120 s)
run_battery <- function(cases, setup, timeout = 60) {
    dir <- tempfile("battery")
    dir.create(dir)
    on.exit(unlink(dir, recursive = TRUE))
    bundle <- file.path(dir, "bundle.rds")
    saveRDS(list(setup = setup, cases = cases, child = battery_child), bundle)
    script <- file.path(dir, "child.R")
    writeLines(c("args <- commandArgs(TRUE)",
                 "bundle <- readRDS(args[1])",
                 "bundle$child(bundle, args[2], as.integer(args[3]))"), script)
    files <- file.path(dir, c(progress = "progress", pid = "pid", exit = "exit"))
    names(files) <- c("progress", "pid", "exit")
    lines <- function(f) if (file.exists(f)) readLines(f, warn = FALSE) else character(0)
    failure <- rep(NA_character_, length(cases))
    start <- 1L
    while (start <= length(cases)) {
        unlink(files)
        cmd <- sprintf("R_LIBS=%s %s --vanilla %s %s %s %d >/dev/null 2>&1; echo $? > %s",
                       shQuote(paste(.libPaths(), collapse = .Platform$path.sep)),
                       shQuote(file.path(R.home("bin"), "Rscript")), shQuote(script),
                       shQuote(bundle), shQuote(dir), start, shQuote(files[["exit"]]))
        system2("sh", c("-c", shQuote(cmd)), wait = FALSE)
        last <- ""
        since <- Sys.time()
        hung <- FALSE
        while (!file.exists(files[["exit"]])) {
            Sys.sleep(0.05)
            seen <- lines(files[["progress"]])
            now <- if (length(seen)) seen[length(seen)] else ""
            if (!identical(now, last)) {
                last <- now
                since <- Sys.time()
            } else if (!hung && difftime(Sys.time(), since, units = "secs") >
                       if (nzchar(now)) timeout else max(timeout, 120)) {   # (start-up: 120 s)
                hung <- TRUE
                pid <- as.integer(lines(files[["pid"]]))
                if (length(pid)) tools::pskill(pid, tools::SIGKILL)
            }
        }
        seen <- lines(files[["progress"]])
        if (length(seen) && seen[length(seen)] == "done") break
        if (!length(seen))
            stop("the battery's child process did not reach its first case (exit status ",
                 lines(files[["exit"]]), ")")
        k <- as.integer(seen[length(seen)])
        failure[k] <- if (hung) "hang" else "crash"
        start <- k + 1L
    }
    lapply(seq_along(cases), function(k) {
        f <- file.path(dir, sprintf("case%04d.rds", k))
        if (file.exists(f)) readRDS(f) else list(failure = failure[k])
    })
}

## the outcome of each case: "crash", "hang", "named" (refused naming the
## argument), "unnamed" (refused, without naming it), "accepted" (an
## invalid input not refused), "pattern" (refused, but not with the message
## expected), "refused" (an edge case refused), "wrong" (an edge case's
## check failed), "ok"
classify <- function(cs, res) {
    if (!is.null(res$failure)) return(res$failure)
    if (cs$kind == "bad") {
        if (is.null(res$error)) return("accepted")
        named <- if (is.null(cs$named)) grepl(sprintf("'%s'", cs$arg), res$error, fixed = TRUE)
                 else grepl(cs$named, res$error)
        if (!named) return("unnamed")
        if (!is.null(cs$pattern) && !grepl(cs$pattern, res$error)) return("pattern")
        return("named")
    }
    if (!is.null(res$error)) return("refused")
    if (!isTRUE(res$check)) return("wrong")
    "ok"
}

test_that("the battery of bad and edge-case inputs: no crash, hang or silent wrong result", {
    t0 <- proc.time()[["elapsed"]]
    results <- run_battery(cases, battery_setup)
    outcome <- mapply(classify, cases, results)
    labels <- vapply(cases, `[[`, "", "label")
    detail <- vapply(results, function(r)
        if (!is.null(r$error)) r$error else if (is.character(r$check)) r$check else "", "")
    which_are <- function(kinds) {
        k <- outcome %in% kinds
        sprintf("%s: %s -> %s", outcome[k], labels[k], detail[k])
    }
    invalid <- sum(vapply(cases, `[[`, "", "kind") == "bad")
    named <- sum(outcome == "named" | outcome == "pattern")
    share <- named / invalid
    if (nzchar(Sys.getenv("SGFS_BATTERY_REPORT"))) {
        cat(sprintf(paste0("\nbattery: %d cases (%d invalid, %d edge cases) in %.0f s; ",
                           "%d of the invalid refused naming the argument (%.1f %%); ",
                           "%d crashes, %d hangs, %d silent wrong results\n"),
                    length(cases), invalid, length(cases) - invalid,
                    proc.time()[["elapsed"]] - t0, named, 100 * share,
                    sum(outcome == "crash"), sum(outcome == "hang"),
                    sum(outcome %in% c("accepted", "wrong"))))
        slow <- order(-vapply(results, function(r) if (is.null(r$seconds)) 0 else r$seconds, 0))[1:5]
        cat(sprintf("  slowest: %.2f s %s\n", vapply(results[slow], `[[`, 0, "seconds"),
                    substr(labels[slow], 1, 100)), sep = "")
        cat(paste0("  ", which_are(c("crash", "hang", "accepted", "wrong", "refused",
                                     "unnamed", "pattern")), "\n"), sep = "")
    }
    expect_gte(length(cases), 250L)
    expect_identical(which_are("crash"), character(0))
    expect_identical(which_are("hang"), character(0))
    ## silent wrong results: an invalid input accepted, an edge case's value wrong
    expect_identical(which_are(c("accepted", "wrong")), character(0))
    ## edge cases that must work
    expect_identical(which_are("refused"), character(0))
    ## refused, naming the argument but not with the message expected
    expect_identical(which_are("pattern"), character(0))
    expect_gte(share, 0.95)
})

test_that("the battery's runner names the case that crashed or hung its child", {
    probe <- list(
        list(expr = quote(stop_arg_free <- 1), kind = "ok", check = TRUE, label = "fine"),
        list(expr = quote(tools::pskill(Sys.getpid(), tools::SIGKILL)), kind = "ok",
             check = TRUE, label = "crash"),
        list(expr = quote(Sys.sleep(600)), kind = "ok", check = TRUE, label = "hang"),
        list(expr = quote(normal(0, -1)), kind = "bad", arg = "scale", label = "after"))
    res <- run_battery(probe, quote(suppressMessages(library(sgfs))), timeout = 3)
    expect_identical(mapply(classify, probe, res), c("ok", "crash", "hang", "named"))
})
