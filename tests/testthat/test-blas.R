## Which BLAS ran, in every fit's report, and a threaded BLAS on one thread
## while the engine samples (src/blas_threads.c), restored afterwards.

test_that("a fit's report names the BLAS", {
    label <- sgfs:::blas_label()
    expect_true(is.character(label) && length(label) == 1L && nzchar(label))
    data(Pima.tr, package = "MASS", envir = environment())
    fit <- sgld(type ~ ., data = Pima.tr, n_iter = 300, progress = FALSE)
    expect_identical(attr(fit, "sgfit")$blas, label)
    expect_output(print(fit), paste0("BLAS: ", label), fixed = TRUE)
})

test_that("the sampling loop runs a threaded BLAS on one thread and restores it", {
    threads <- .Call(sgfs:::C_sgfs_blas_info)$threads
    skip_if(is.na(threads), "R's BLAS has no thread control (reference BLAS)")
    skip_if(threads < 2L, "R's BLAS runs one thread here")
    seen <- integer(0)
    model <- custom_model(
        score = function(theta, data) {
            seen <<- c(seen, .Call(sgfs:::C_sgfs_blas_info)$threads)
            data - theta
        },
        loglik = function(theta, data) stats::dnorm(data, theta, log = TRUE),
        init = c(mu = 0))
    x <- withr::with_seed(1, stats::rnorm(200))
    fit <- sgld(model = model, x = x, n_iter = 20, batch_size = 10, stepsize = 1e-3,
                progress = FALSE)
    expect_true(length(seen) >= 20L)
    ## the set-up's calls (outside the loop) see every thread, the loop's one
    expect_true(any(seen == 1L))
    expect_identical(.Call(sgfs:::C_sgfs_blas_info)$threads, threads)
})
