## The family table (R/families.R): one entry per supported family, the
## only place the package asks what a family is

test_that("every family's entry answers the same questions, and each link names an engine model", {
    tab <- sgfs:::family_table
    fields <- names(tab[[1L]])
    for (name in names(tab)) {
        entry <- tab[[name]]
        expect_setequal(names(entry), fields)
        expect_true(is.function(entry$code) && is.function(entry$simulate))
        expect_true(all(names(entry$network) %in% names(entry$links)))
        expect_setequal(names(entry$prior_scale), names(entry$links))
        for (link in names(entry$links)) {
            got <- sgfs:::engine_entry(entry$links[[link]])
            expect_identical(got$engine, entry$links[[link]])
            same <- setdiff(fields, "prior_scale")
            expect_identical(got[same], entry[same])
            expect_identical(got$prior_scale, entry$prior_scale[[link]])
        }
    }
    expect_null(sgfs:::engine_entry("mlp"))
})

test_that("each link's engine model fits, and a family outside the table is refused by name", {
    x <- matrix(withr::with_seed(1, stats::rnorm(60)), 30, 2)
    y <- list(binomial = rep(0:1, 15), gaussian = x[, 1] + 1, student = x[, 1] + 1,
              poisson = rep(0:2, 10),
              neg_binomial_2 = rep(0:3, length.out = 30), Gamma = exp(x[, 1] / 2) * rep(c(0.5, 1, 2), 10),
              categorical = factor(rep(c("a", "b", "c"), 10)),
              cumulative = factor(rep(c("lo", "mid", "hi"), 10), levels = c("lo", "mid", "hi")))
    for (name in names(sgfs:::family_table)) {
        for (link in names(sgfs:::family_table[[name]]$links)) {
            family <- if (name == "categorical") categorical() else get(name)(link = link)
            fit <- withr::with_seed(2, sgld(x, y[[name]], family = family, n_iter = 20,
                                            stepsize = 1e-3, progress = FALSE))
            expect_identical(attr(fit, "sgfit")$spec$model,
                             sgfs:::family_table[[name]]$links[[link]])
        }
    }
    expect_error(sgld(x, y$poisson, family = quasipoisson()),
                 "'quasipoisson' is not supported: use one of binomial\\(\\), gaussian\\(\\)")
})
