## The compressed-row copy of a mostly-zero design (src/sparse_rows.c): the
## one-pass minibatch score reads each row's stored entries and applies the
## centring implicitly; the draws equal those of the dense copy.

onehot_data <- function(N = 400L, seed = 1L) {
    withr::with_seed(seed, {
        d <- data.frame(x1 = stats::rnorm(N), x2 = stats::runif(N),
                        f = factor(sample(letters[1:8], N, replace = TRUE,
                                          prob = c(30, 20, 15, 10, 10, 8, 5, 2))),
                        g = factor(sample(c("u", "v", "w"), N, replace = TRUE)))
        eta <- -0.3 + d$x1 - 0.5 * d$x2 + c(0, 0.4, -0.4, 0.8, -0.8, 1, -1, 1.5)[d$f]
        d$y <- stats::rbinom(N, 1L, stats::plogis(eta))
        d$count <- stats::rpois(N, exp(0.2 + 0.3 * d$x1 + 0.2 * (d$f == "b")))
        d
    })
}

test_that("the compressed rows hold the standardised design exactly", {
    d <- onehot_data()
    x <- stats::model.matrix(y ~ x1 + x2 + f + g, d)
    center <- c(0, colMeans(x)[-1])
    scale <- c(1, apply(x, 2, stats::sd)[-1])
    rows <- .Call(sgfs:::C_sgfs_sparse_rows, x, center, scale, 0.9, FALSE, NULL)
    expect_named(rows, c("ptr", "ent", "width", "shift"))
    xt <- .Call(sgfs:::C_sgfs_design_copy, x, center, scale, FALSE, NULL)
    ## every row keeps its intercept, two continuous entries, one level of
    ## each factor (when not the reference): the one-hot columns are sparse;
    ## 3-5 entries a row, padded to 5 (at most a quarter more than their
    ## mean) with zeros in column 0
    own <- 3L + (d$f != "a") + (d$g != "u")
    expect_equal(range(own), c(3L, 5L))
    expect_lt(5 / mean(own), 1.25)
    expect_equal(rows$width, 5L)
    counts <- diff(rows$ptr)
    expect_true(all(counts == 5L))
    expect_equal(sum(rows$ent[c(TRUE, FALSE)] != 0), sum(own))
    dense <- matrix(-rows$shift, ncol(x), nrow(x))
    for (i in seq_len(nrow(x))) {
        k <- if (counts[i]) seq(rows$ptr[i] + 1, rows$ptr[i + 1])
        add <- rowsum(rows$ent[2 * k - 1], rows$ent[2 * k] + 1)   # (padding repeats column 0)
        cols <- as.integer(rownames(add))
        dense[cols, i] <- dense[cols, i] + add
    }
    expect_equal(dense, xt, tolerance = 1e-14)
    ## the continuous columns are stored as in xt, without a shift
    expect_equal(rows$shift[1:3], c(0, 0, 0))
    ## nothing is made when the design is dense
    expect_null(.Call(sgfs:::C_sgfs_sparse_rows, x, center, scale, 0.1, FALSE, NULL))
    ## rows of very different lengths are not padded: then the row starts
    ## say where each row is
    wide <- cbind(x, diag(nrow(x))[, 1:8])
    wide[1, ncol(x) + 1:8] <- 1
    ragged <- .Call(sgfs:::C_sgfs_sparse_rows, wide, c(center, rep(0, 8)),
                    c(scale, rep(1, 8)), 0.9, FALSE, NULL)
    expect_equal(ragged$width, 0L)
    expect_equal(length(ragged$ent) / 2, ragged$ptr[nrow(x) + 1L])
    expect_gt(diff(ragged$ptr)[1], 5)
})

test_that("score changes from the compressed rows equal the dense copy's", {
    d <- onehot_data()
    x <- stats::model.matrix(y ~ x1 + x2 + f + g, d)[, -1]
    run <- engine_spec(x, d$y, standardize = TRUE)
    expect_false(is.null(run$spec$rows))
    dense <- withr::with_options(list(sgfs.sparse_fill = 0),
                                 engine_spec(x, d$y, standardize = TRUE))$spec
    expect_null(dense$rows)
    theta <- withr::with_seed(2, stats::rnorm(ncol(x) + 1L, sd = 0.3))
    centre <- theta + withr::with_seed(3, stats::rnorm(length(theta), sd = 0.1))
    idx <- c(5L, 17L, 3L, 200L, 399L, 42L, 7L, 8L, 100L, 101L)
    for (second in c(FALSE, TRUE))
        expect_equal(model_eval(run$spec, theta, idx, centre, second)$change,
                     model_eval(dense, theta, idx, centre, second)$change, tolerance = 1e-13)
})

test_that("chains on the compressed rows equal those on the dense copy", {
    d <- onehot_data()
    form <- y ~ x1 + x2 + f + g
    same <- function(fit_fun) {
        sparse <- withr::with_seed(4, fit_fun())
        dense <- withr::with_options(list(sgfs.sparse_fill = 0), withr::with_seed(4, fit_fun()))
        expect_false(is.null(sgfs:::fit_spec(attr(sparse, "sgfit"))$rows))
        expect_null(sgfs:::fit_spec(attr(dense, "sgfit"))$rows)
        expect_equal(unclass(as.matrix(sparse)), unclass(as.matrix(dense)), tolerance = 1e-12)
    }
    same(function() sgld(form, data = d, n_iter = 400, batch_size = 20, progress = FALSE))
    same(function() sgldcv(form, data = d, n_iter = 400, batch_size = 20, progress = FALSE))
    same(function() sgld(form, data = d, family = binomial("probit"), n_iter = 300,
                         batch_size = 20, progress = FALSE))
    same(function() sgldcv(count ~ x1 + x2 + f + g, data = d, family = poisson(),
                           n_iter = 300, batch_size = 20, progress = FALSE))
})
