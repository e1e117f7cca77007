## The methods on a mixed model's fit: fixef(), ranef(), coef(), VarCorr()
## from its draws; the effects' sums when their draws are not kept (the
## same chain either way); draw-level predictions and log_lik() with the
## group effects, re.form and new levels, against the draws by hand.

methods_data <- function(seed, G = 12L) {
    withr::with_seed(seed, {
        g <- rep(seq_len(G), sample(c(3L, 8L, 20L), G, replace = TRUE))
        x <- stats::rnorm(length(g))
        h <- sample(letters[1:4], length(g), TRUE)
        eta <- 0.3 + 0.8 * x + stats::rnorm(G, 0, 0.7)[g] + stats::rnorm(G, 0, 0.3)[g] * x +
            c(a = -0.4, b = 0, c = 0.2, d = 0.5)[h]
        data.frame(y = eta + stats::rnorm(length(g), 0, 0.4), x, g = factor(g), h = factor(h),
                   k = stats::rbinom(length(g), 1, stats::plogis(eta)))
    })
}

mixed_fit <- function(d, formula = y ~ x + (1 + x | g), family = gaussian(), seed = 2,
                      n_iter = 3000L, ...)
    withr::with_seed(seed, sgld(formula, d, family = family, n_iter = n_iter, burnin = 500L,
                                progress = FALSE, verbose = FALSE, ...))

## each row's linear predictor at each draw, from as.matrix() by hand
by_hand_link <- function(m, d, terms) {
    out <- m[, "(Intercept)"] %o% rep(1, nrow(d)) + m[, "x"] %o% d$x
    for (t in terms) {
        for (coef in t$coef) {
            cols <- sprintf("b[%s %s:%s]", coef, t$g, as.character(d[[t$g]]))
            z <- if (coef == "(Intercept)") 1 else d[[coef]]
            out <- out + m[, cols, drop = FALSE] * rep(z, each = nrow(m))
        }
    }
    unname(out)
}

test_that("fixef(), ranef(), coef() and VarCorr() are the draws' posterior means", {
    d <- methods_data(1)
    fit <- mixed_fit(d)
    m <- as.matrix(fit)
    expect_equal(fixef(fit), colMeans(m[, c("(Intercept)", "x")]))
    re <- ranef(fit)
    expect_named(re, "g")
    expect_equal(dim(re$g), c(12L, 2L))
    expect_equal(re$g[["x"]], unname(colMeans(m[, sprintf("b[x g:%d]", 1:12)])))
    expect_equal(attr(re$g, "sd")[["(Intercept)"]],
                 unname(apply(m[, sprintf("b[(Intercept) g:%d]", 1:12)], 2, stats::sd)))
    cf <- coef(fit)$g
    expect_equal(cf[["x"]], fixef(fit)[["x"]] + re$g[["x"]])
    expect_equal(rownames(cf), as.character(1:12))
    vc <- VarCorr(fit)
    S <- vc$g
    expect_equal(diag(S), colMeans(m[, c("sd[(Intercept) | g]", "sd[x | g]")]^2),
                 ignore_attr = TRUE)
    expect_equal(S[1, 2], mean(m[, "sd[(Intercept) | g]"] * m[, "sd[x | g]"] *
                                   m[, "cor[(Intercept),x | g]"]))
    expect_equal(attr(vc, "sc"), mean(exp(m[, "log_sigma"])))
    expect_output(print(vc), "Residual")
    ## plot(): the fixed effects, sds and correlation (not the 24 effects)
    grDevices::pdf(NULL)
    expect_no_error(plot(fit, ask = FALSE))
    grDevices::dev.off()
    expect_output(print(fit), "group effects b\\[...\\]: ranef\\(fit\\)")
    expect_error(fixef(sgld(y ~ x, d, family = gaussian(), n_iter = 200, progress = FALSE,
                                 verbose = FALSE)),
                 "is for fits with random-effect terms")
})

test_that("without the effects' draws the chain is the same and ranef() comes from its sums", {
    d <- methods_data(2)
    kept <- mixed_fit(d, y ~ x + (1 | g) + (1 | h))
    summed <- withr::with_options(list(sgfs.group_draws = FALSE),
                                  mixed_fit(d, y ~ x + (1 | g) + (1 | h)))
    expect_equal(coda::varnames(summed), coda::varnames(kept)[1:5])
    expect_identical(unclass(as.matrix(summed)), unclass(as.matrix(kept))[, 1:5])
    expect_equal(ranef(summed), ranef(kept), tolerance = 1e-10)
    expect_output(print(summed), "not kept")
    expect_error(rstantools::posterior_epred(summed), "sgfs_control\\(group_draws = TRUE\\)")
    expect_equal(predict(summed, re.form = NA), predict(kept, re.form = NA))
    ## the sums continue with the chain
    more <- suppressWarnings(update(summed, n_iter = 1000))
    expect_equal(attr(more, "sgfit")$states[[1]]$ranef$sums$n, coda::niter(more))
    ## (the rule: draws kept for up to 10,000 effects)
    terms <- list(list(coef = c("a", "b"), levels = as.character(1:5000)))
    expect_true(sgfs:::keep_group_draws(terms))
    terms[[2]] <- list(coef = "a", levels = "x")
    expect_false(sgfs:::keep_group_draws(terms))
})

test_that("draw-level outputs add each row's group effects at each draw", {
    d <- methods_data(3)
    fit <- mixed_fit(d, y ~ x + (1 + x | g) + (1 | h))
    m <- as.matrix(fit)
    terms <- list(list(g = "g", coef = c("(Intercept)", "x")), list(g = "h", coef = "(Intercept)"))
    link <- by_hand_link(m, d, terms)
    expect_equal(unname(rstantools::posterior_linpred(fit)), link, tolerance = 1e-10)
    expect_equal(unname(predict(fit)), colMeans(link), tolerance = 1e-10)
    expect_equal(unname(fitted(fit)), colMeans(link), tolerance = 1e-10)
    ## re.form: none, or some of the terms
    expect_equal(unname(rstantools::posterior_linpred(fit, re.form = NA)),
                 by_hand_link(m, d, list()), tolerance = 1e-10)
    expect_equal(unname(rstantools::posterior_linpred(fit, re.form = ~ (1 | h))),
                 by_hand_link(m, d, terms[2]), tolerance = 1e-10)
    expect_error(predict(fit, re.form = ~ (1 | g)), "'re.form' has the term\\(s\\) \\(1 \\| g\\)")
    expect_error(predict(fit, re.form = "g"), "'re.form' must be NULL")
    ## log_lik: the normal density at each draw's mean and sigma
    ll <- rstantools::log_lik(fit, draws = 50)
    rows <- unique(round(seq(1, nrow(m), length.out = 50)))
    mu <- link[rows, ]
    expect_equal(unname(ll), matrix(stats::dnorm(rep(d$y, each = 50), mu,
                                                 exp(m[rows, "log_sigma"])[row(mu)], log = TRUE),
                                    50), tolerance = 1e-10)
    ## newdata: the fit's levels, in any order
    nd <- d[c(40, 3, 17), ]
    expect_equal(unname(rstantools::posterior_linpred(fit, newdata = nd)),
                 link[, c(40, 3, 17)], tolerance = 1e-10)
})

test_that("new levels are refused unless allowed, then drawn from the groups' distribution", {
    d <- methods_data(4)
    fit <- mixed_fit(d, k ~ x + (1 | g), family = binomial(), n_iter = 6000L)
    nd <- data.frame(x = c(0, 0), g = c("1", "new"))
    expect_error(predict(fit, newdata = nd), "'newdata' has levels of g the fit has not seen \\(new\\)")
    lp <- withr::with_seed(5, rstantools::posterior_linpred(fit, newdata = nd, allow_new_levels = TRUE,
                                                                     draws = Inf))
    m <- as.matrix(fit)
    expect_equal(lp[, 1], m[, "(Intercept)"] + m[, "b[(Intercept) g:1]"], ignore_attr = TRUE)
    ## the new level's effect: sd_s times a standard normal at each draw
    e <- (lp[, 2] - m[, "(Intercept)"]) / m[, "sd[(Intercept) | g]"]
    S <- length(e)
    expect_lt(abs(mean(e)), 4 / sqrt(S))
    expect_lt(abs(var(e) - 1), 4 * sqrt(2 / S))
    expect_error(predict(sgld(y ~ x, d, family = gaussian(), n_iter = 200, progress = FALSE,
                                 verbose = FALSE),
                         re.form = NA), "'re.form' is for fits with random-effect terms")
    expect_error(sgfs::ksd(fit), "ksd\\(\\) is not available for a fit with random-effect terms")
})

test_that("prior_covariance reaches the engine and prior_summary(), and bad ones are refused", {
    d <- methods_data(6)
    fit <- mixed_fit(d, y ~ x + (1 + x | g), prior_covariance = lkj(2, scale = 0.5, df = 3),
                     n_iter = 600L)
    p <- attr(fit, "sgfit")$spec$ranef$terms[[1]]$prior
    expect_equal(unlist(p[c("family", "scale", "df", "zeta")]),
                 c(family = 2, scale = 0.5, df = 3, zeta = 2))
    expect_equal(attr(fit, "sgfit")$spec$ranef$dispersion, -1L)     # (lkj's sds: not in sigma)
    expect_output(print(rstantools::prior_summary(fit)),
                  "\\(1 \\+ x \\| g\\)\\): lkj\\(regularization = 2, scale = 0.5, df = 3\\)")
    expect_equal(lkj(df = Inf)$family, "half_normal")
    ## the default, and rstanarm's own objects (plain lists)
    def <- mixed_fit(d, y ~ x + (1 | g), n_iter = 600L)
    expect_equal(attr(def, "sgfit")$spec$ranef$terms[[1]]$prior$family, 4)
    expect_equal(attr(def, "sgfit")$spec$ranef$dispersion, 2L)      # (decov(): sds in sigma)
    expect_output(print(rstantools::prior_summary(def)), "decov\\(regularization = 1, concentration = 1")
    rs <- list(dist = "decov", regularization = 3, concentration = 1, shape = 2, scale = 1)
    expect_equal(sgfs:::check_prior_covariance(rs), decov(3, 1, 2, 1))
    expect_error(mixed_fit(d, y ~ x + (1 | g), prior_covariance = normal()),
                 "'prior_covariance' must be decov\\(\\) or lkj\\(\\)")
    expect_error(mixed_fit(d, y ~ x, prior_covariance = decov()),
                 "'prior_covariance' is the prior of random-effect terms' covariances")
    expect_error(decov(regularization = 0), "'regularization' must be a positive number")
    expect_error(lkj(df = NA), "'df' must be a positive number \\(or Inf\\)")
    ## a tight half-normal pulls the sd to its scale (internal: the response's sd units)
    tight <- mixed_fit(d, y ~ x + (1 | g), prior_covariance = lkj(scale = 0.01, df = Inf),
                       n_iter = 3000L)
    expect_lt(mean(as.matrix(tight)[, "sd[(Intercept) | g]"]), 0.03 * sd(d$y))
})
