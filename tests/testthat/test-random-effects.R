## Random-effect terms of a formula (R/random-effects.R): parsed and laid out
## as lme4 does, and refused by the samplers with a message that names them.

test_that("random-effect terms are found, expanded and removed as lme4 does", {
    f <- y ~ x + (1 | a/b) + (x || g) + (1 + x | h)
    bars <- vapply(sgfs:::random_bars(f), deparse1, "")
    expect_equal(bars, c("1 | a", "1 | b:a", "1 | g", "0 + x | g", "1 + x | h"))
    expect_equal(sgfs:::fixed_formula(f), y ~ x)
    expect_equal(sgfs:::fixed_formula(y ~ (1 | g)), y ~ 1)
    expect_equal(sgfs:::fixed_formula(y ~ x + (1 | g) - 1), y ~ x - 1)
    expect_equal(sgfs:::fixed_formula(y ~ x * z), y ~ x * z)
    expect_null(sgfs:::random_bars(y ~ x + log(z)))
    expect_null(sgfs:::random_bars(y ~ splines::ns(x, 3) + log(z)))
    expect_equal(sgfs:::fixed_formula(y ~ splines::ns(x, 3) + (1 | g)), y ~ splines::ns(x, 3))
    expect_equal(all.vars(sgfs:::frame_formula(f)), c("y", "x", "a", "b", "g", "h"))
    expect_error(sgfs:::random_bars(y ~ x * (1 | g)),
                 "'formula' has the random-effect term \\(1 \\| g\\) inside x \\* \\(1 \\| g\\)")
    skip_if_not_installed("lme4")
    for (g in list(y ~ x + (1 | a/b), y ~ (x || g), y ~ 0 + x + (1 | g) + (1 | h)))
        expect_equal(sgfs:::fixed_formula(g), lme4::nobars(g), ignore_attr = TRUE)
})

## the term's Z' as lme4 lays it out: row (level - 1) q + k, column i, Z[i, k]
term_zt <- function(term) {
    q <- ncol(term$Z)
    N <- nrow(term$Z)
    rows <- rep((term$group - 1L) * q, q) + rep(seq_len(q), each = N)
    Matrix::sparseMatrix(i = rows, j = rep(seq_len(N), q), x = as.vector(term$Z),
                         dims = c(length(term$levels) * q, N))
}

expect_like_lme4 <- function(formula, data) {
    lf <- lme4::lFormula(formula, data)
    frame <- stats::model.frame(sgfs:::frame_formula(formula), data)
    terms <- sgfs:::random_design(sgfs:::random_bars(formula), frame)
    expect_equal(unname(stats::model.matrix(sgfs:::fixed_formula(formula), frame)),
                 unname(lf$X), ignore_attr = TRUE)
    zt <- lf$reTrms$Ztlist
    expect_setequal(vapply(terms, `[[`, "", "term"), names(zt))
    for (t in terms) {
        expect_equal(as.matrix(term_zt(t)), as.matrix(zt[[t$term]]), ignore_attr = TRUE,
                     info = t$term)
        expect_equal(t$coef, lf$reTrms$cnms[[match(t$term, names(zt))]], info = t$term)
        expect_equal(t$levels, levels(lf$reTrms$flist[[t$name]]), info = t$term)
    }
}

test_that("random-effect designs equal lme4's model matrices", {
    skip_if_not_installed("lme4")
    sleep <- lme4::sleepstudy
    expect_like_lme4(Reaction ~ Days + (Days | Subject), sleep)
    expect_like_lme4(Reaction ~ Days + (1 | Subject), sleep)
    cbpp <- lme4::cbpp
    expect_like_lme4(cbind(incidence, size - incidence) ~ period + (1 | herd), cbpp)
    set.seed(1)
    d <- data.frame(x = rnorm(200), a = factor(sample(letters[1:5], 200, TRUE)),
                    b = factor(sample(1:4, 200, TRUE)), s = factor(sample(1:30, 200, TRUE)))
    d$y <- rnorm(200)
    expect_like_lme4(y ~ x + (1 | a/b), d)                 # nested
    expect_like_lme4(y ~ x + (1 | a) + (1 + x | s), d)     # crossed, a slope
    expect_like_lme4(y ~ x + (x || s), d)                  # uncorrelated
})

test_that("a missing grouping value and an empty term are refused by name", {
    frame <- data.frame(y = 1:4, g = factor(c("a", NA, "b", "a")))
    expect_error(sgfs:::random_design(sgfs:::random_bars(y ~ (1 | g)), frame),
                 "'formula' has the grouping factor g with missing values")
    frame$g[2] <- "b"
    expect_error(sgfs:::random_design(sgfs:::random_bars(y ~ (0 | g)), frame),
                 "'formula' has the random-effect term \\(0 \\| g\\) with no coefficient")
})

test_that("the samplers that cannot fit random-effect terms refuse them, naming those that can", {
    d <- data.frame(y = rnorm(40), x = rnorm(40), g = factor(rep(1:8, 5)))
    for (f in list(sgfs, osgfs, hmc))
        expect_error(f(y ~ x + (1 | g), d, family = gaussian()),
                     "'formula' has random-effect terms, which [a-z]+\\(\\) does not fit yet: use sgld\\(\\), sgldcv\\(\\), psgld\\(\\), sghmc\\(\\), sgnht\\(\\)")
    expect_error(sgld(y ~ x + (1 | g), d, family = gaussian(), model = mlp(3)),
                 "'model' must be NULL \\(a GLM\\) with random-effect terms")
})
