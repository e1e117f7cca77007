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

## the standardised design the compressed rows hold (P x N, as xt): row i
## is the words [nv][np][nv doubles][nv + np columns] from ptr[i]
decode_rows <- function(rows, N) {
    P <- length(rows$shift)
    out <- matrix(-rows$shift, P, N)
    for (i in seq_len(N)) {
        w <- rows$ent[seq(rows$ptr[i] + 1, rows$ptr[i + 1])]
        nv <- w[1]
        np <- w[2]
        val <- if (nv) readBin(writeBin(w[2 + seq_len(2 * nv)], raw()), "double", nv)
        col <- w[2 + 2 * nv + seq_len(nv + np)] + 1L
        v <- c(val, rows$level[col[nv + seq_len(np)]])
        stopifnot(!anyDuplicated(col))
        out[col, i] <- out[col, i] + v
    }
    out
}

test_that("the compressed rows hold the standardised design exactly", {
    d <- onehot_data()
    x <- stats::model.matrix(y ~ x1 + x2 + f + g, d)
    center <- c(0, colMeans(x)[-1])
    scale <- c(1, apply(x, 2, stats::sd)[-1])
    rows <- .Call(sgfs:::C_sgfs_sparse_rows, x, center, scale, 0.9, FALSE, NULL)
    expect_named(rows, c("ptr", "ent", "width", "shift", "level"))
    expect_type(rows$ent, "integer")
    xt <- .Call(sgfs:::C_sgfs_design_copy, x, center, scale, FALSE, NULL)
    ## every row stores its two continuous values (2 + 2 x 2 + 2 words) and
    ## the column of the level of each factor it holds, when not the
    ## reference (one word each: the one-hot columns are patterns); the
    ## intercept is its base, 1, everywhere: no entry, shift -1.  Rows of 8,
    ## 9 and 10 words are padded to 10 (at most a quarter more than their
    ## mean)
    own <- (d$f != "a") + (d$g != "u")
    words <- 8L + own + own %% 2L
    expect_lt(10 / mean(words), 1.25)
    expect_equal(rows$width, 10L)
    expect_true(all(diff(rows$ptr) == 10L))
    starts <- rows$ptr[seq_len(nrow(x))] + 1
    expect_equal(rows$ent[starts], rep(2L, nrow(x)))
    expect_equal(rows$ent[starts + 1], own)
    expect_equal(decode_rows(rows, nrow(x)), xt, tolerance = 1e-14)
    expect_equal(rows$shift[1:3], c(-1, 0, 0))
    expect_equal(rows$level[4:6], unname(1 / scale[4:6]))
    ## nothing is made when the design is dense
    expect_null(.Call(sgfs:::C_sgfs_sparse_rows, x, center, scale, 0.1, FALSE, NULL))
    ## a column mostly 1 stores its zeros (pattern); one mostly 3 its other
    ## values (valued); rows of very different lengths are not padded: then
    ## the row starts say where each row is
    wide <- cbind(x, one = as.numeric(d$x1 > -1.5), three = ifelse(d$x2 > 0.8, d$x2, 3),
                  diag(nrow(x))[, 1:8])
    wide[1, ncol(x) + 2 + 1:8] <- 1
    wc <- colMeans(wide)
    wc[1] <- 0
    ws <- c(1, apply(wide, 2, stats::sd)[-1])
    ragged <- .Call(sgfs:::C_sgfs_sparse_rows, wide, wc, ws, 0.9, FALSE, NULL)
    expect_equal(ragged$width, 0L)
    expect_equal(length(ragged$ent), ragged$ptr[nrow(x) + 1L])
    expect_gt(diff(ragged$ptr)[1], 20)
    expect_equal(decode_rows(ragged, nrow(x)),
                 .Call(sgfs:::C_sgfs_design_copy, wide, wc, ws, FALSE, NULL), tolerance = 1e-14)
    k <- ncol(x) + 1:2
    expect_equal(ragged$shift[k], unname((wc[k] - c(1, 3)) / ws[k]))
    expect_equal(ragged$level[k], unname(c(-1 / ws[k[1]], 0)))
    ## the same from the dgCMatrix, to the last bit
    sparse <- Matrix::Matrix(wide, sparse = TRUE)
    expect_identical(.Call(sgfs:::C_sgfs_sparse_rows_csc, sparse@i, sparse@p, sparse@x, sparse@Dim,
                           wc, ws, 0.9, FALSE, NULL), ragged)
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
