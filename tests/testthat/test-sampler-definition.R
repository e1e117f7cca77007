## Each sampler's default method is made from its one definition
## (R/sampler-definition.R): the shared arguments in one order with one set
## of defaults, the sampler's own between them, and `...` refused.

samplers <- c("sgfs", "sgld", "sgldcv", "psgld", "sghmc", "sgnht", "isgd", "osgfs", "mala",
              "hmc", "sga")
default_of <- function(m) getFromNamespace(paste0(m, ".default"), "sgfs")

test_that("every sampler's usage is the shared head, its own arguments, the shared tail, ...", {
    head <- sgfs:::shared_head
    tail <- sgfs:::shared_tail
    for (m in samplers) {
        f <- formals(default_of(m))
        a <- names(f)
        h <- names(head)[names(head) %in% a]
        t <- names(tail)[names(tail) %in% a]
        L <- length(a)
        own <- a[seq_len(L - length(h) - length(t) - 1L) + length(h)]
        expect_identical(a[seq_along(h)], h, label = m)
        expect_identical(a[L - length(t) - 1L + seq_along(t)], t, label = m)
        expect_identical(a[L], "...", label = m)
        expect_false(any(own %in% c(names(head), names(tail))), label = m)
        expect_true("stepsize" %in% own || m == "sgfs", label = m)
        ## a shared default is the same everywhere, except those a sampler
        ## changes on purpose (init, and sga()'s run length)
        for (arg in setdiff(c(h, t), c("init", "n_iter", "burnin")))
            expect_identical(f[[arg]], c(head, tail)[[arg]], label = paste(m, arg))
    }
    ## the defaults of init each sampler documents: for a GLM and a network
    init_map <- c("sgld", "psgld", "sghmc", "sgnht", "isgd")
    init_for <- function(init, model) eval(init, list(model = model))
    for (m in samplers) {
        init <- formals(default_of(m))$init
        glm <- init_for(init, NULL)
        net <- init_for(init, mlp(3))
        if (m %in% init_map) {
            expect_identical(glm, "map", label = m)
            expect_null(net, label = m)
        } else if (m == "sgfs") {
            expect_null(glm)
            expect_identical(net, "map")
        } else {
            expect_null(glm, label = m)
            expect_null(net, label = m)
        }
    }
    expect_identical(formals(default_of("sga"))$n_iter, 10000L)
    expect_false(any(c("chains", "cores", "keep", "max_time", "verbose") %in%
                     names(formals(default_of("sga")))))
})

test_that("a sampler refuses arguments it does not take, named or not", {
    p <- pima_data()
    expect_error(sgld(p$x, p$y, n_iter = 10, bogus = 1), "unknown argument\\(s\\): bogus")
    expect_error(sga(p$x, p$y, chains = 2), "unknown argument\\(s\\): chains")
    expect_error(sgfs:::no_dots(1, 2), "unknown argument\\(s\\): <unnamed>, <unnamed>")
    expect_silent(sgfs:::no_dots())
})

test_that("sampler_method() refuses a definition that clashes with the shared arguments", {
    expect_error(sgfs:::sampler_method(alist(prior = NULL), { 1 }))
    expect_error(sgfs:::sampler_method(alist(a = 1), { 1 }, defaults = alist(nothing = 1)))
    expect_error(sgfs:::sampler_method(alist(a = 1), { 1 }, drop = "x"))
    f <- sgfs:::sampler_method(alist(a = 1), { a + 1 }, defaults = alist(thin = 5L),
                               drop = "weights")
    expect_identical(formals(f)$thin, 5L)
    expect_false("weights" %in% names(formals(f)))
    expect_identical(f(1, 2, a = 2), 3)
    expect_error(f(1, 2, zz = 2), "unknown argument\\(s\\): zz")
})
