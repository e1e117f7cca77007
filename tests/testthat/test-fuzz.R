## A fuzz of the .Call boundary.  Every registered routine is called with
## arguments derived from valid ones (the specs and states of real fits of
## every model, update rule and prior kind): each element of a spec or
## state, each element of its sub-lists and each other argument in turn is
## removed, NULL, of another type, empty, cut to its first value, doubled
## in length, NA, negative, huge, infinite or NaN.  A fit carries its spec,
## so a fit saved by one version and updated by another reaches the engine
## with whatever it holds: each call must return or stop with an R error,
## never crash R or hang.  The cases run in a child R process that records
## each case before it runs it; a child that dies or times out names the
## case, and the next child starts after it.
##
## Under ASan and UBSan (0 crashes, 2026-11-24; UBSan found a signed
## overflow on an NA row index, now refused): a Makevars file with
##   CFLAGS = -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined
##            -fno-sanitize-recover=undefined
##   LDFLAGS = -fsanitize=address,undefined
## given as R_MAKEVARS_USER to R CMD INSTALL, and the install and this file
## run with LD_PRELOAD="$(gcc -print-file-name=libasan.so)
## $(gcc -print-file-name=libubsan.so)" and
## ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1 (R's own
## allocations of impossible sizes then fail as R errors, as without ASan).

skip_on_cran()

## valid calls: list(routine = name, args = list(...)), from fits
fuzz_bases <- function() {
    data(Pima.tr, package = "MASS", envir = environment())
    set.seed(1)
    onehot <- data.frame(x1 = rnorm(300), x2 = runif(300),
                         f = factor(sample(letters[1:8], 300, replace = TRUE)),
                         g = factor(sample(c("u", "v", "w"), 300, replace = TRUE)))
    onehot$y <- rbinom(300, 1, plogis(onehot$x1))
    onehot$count <- rpois(300, exp(0.3 * onehot$x1))
    separated <- onehot                 # level "a" all 1, the reference level
    separated$y[separated$f == "a"] <- 1
    ## a design file (in the session's temporary folder: the child processes
    ## run there too, so that a mutated path writes nowhere else)
    pima_x <- model.matrix(type ~ . - 1, Pima.tr)
    pima_y <- as.double(Pima.tr$type == "Yes")
    pima_file <- write_design_file(pima_x, tempfile(fileext = ".sgd"))
    fits <- suppressWarnings(list(
        sgldcv = sgldcv(type ~ ., Pima.tr, n_iter = 20, progress = FALSE),
        windows = withr::with_options(list(sgfs.batches = "windows"),
                                      sgld(type ~ ., Pima.tr, n_iter = 20, progress = FALSE)),
        sgld_rows = sgld(y ~ x1 + x2 + f + g, onehot, n_iter = 20, progress = FALSE),
        poisson = sgldcv(count ~ x1 + f, onehot, family = poisson(), n_iter = 20,
                         progress = FALSE),
        separated = sgldcv(y ~ x1 + f, separated, n_iter = 20, progress = FALSE),
        sgfs = sgfs(type ~ ., Pima.tr, n_iter = 20, progress = FALSE),      # (Metropolis adjusted)
        sgfs_cv = sgfs(type ~ ., Pima.tr, n_iter = 20, batch_size = 50, progress = FALSE),
        sgfs_paper = sgfs(type ~ ., Pima.tr, n_iter = 20, control_variates = FALSE,
                          progress = FALSE),
        sgfs_d = sgfs(type ~ ., Pima.tr, n_iter = 20, preconditioner = "diagonal",
                      batch_size = 50, progress = FALSE),
        sgfs_b = sgfs(type ~ ., Pima.tr, n_iter = 20, preconditioner = "block",
                      batch_size = 50, progress = FALSE),
        psgld = psgld(type ~ ., Pima.tr, n_iter = 20, progress = FALSE),
        sghmc = sghmc(type ~ ., Pima.tr, n_iter = 20, progress = FALSE),
        sgnht = sgnht(type ~ ., Pima.tr, n_iter = 20, progress = FALSE),
        isgd = isgd(type ~ ., Pima.tr, n_iter = 20, progress = FALSE),
        osgfs = osgfs(type ~ ., Pima.tr, n_iter = 20, progress = FALSE),
        hmc = hmc(type ~ glu + bmi, Pima.tr, n_iter = 20, progress = FALSE),
        mala = mala(type ~ glu + bmi, Pima.tr, n_iter = 20, progress = FALSE),
        gaussian = sgld(mpg ~ wt + hp, mtcars, family = gaussian(), n_iter = 20,
                        progress = FALSE),
        categorical = sgld(Species ~ ., iris, family = categorical(), n_iter = 20,
                           progress = FALSE),
        probit = sgld(type ~ glu + bmi, Pima.tr, family = binomial("probit"), n_iter = 20,
                      progress = FALSE),
        file = sgld(pima_file, pima_y, n_iter = 20, progress = FALSE),
        mlp = sgld(mpg ~ wt + hp, mtcars, family = gaussian(), model = mlp(3), n_iter = 20,
                   progress = FALSE),
        student = sgld(type ~ glu + bmi, Pima.tr, prior = student_t(3, 0, 2), n_iter = 20,
                       progress = FALSE),
        horseshoe = sgld(type ~ ., Pima.tr, prior = hs(), n_iter = 20, progress = FALSE)))
    C <- function(name) paste0("sgfs_", name)
    calls <- list()
    from <- "data"
    add <- function(name, ...) calls[[length(calls) + 1L]] <<- list(routine = C(name),
                                                                     args = list(...), from = from)
    for (from in names(fits)) {
        f <- fits[[from]]
        info <- attr(f, "sgfit")
        spec <- sgfs:::fit_spec(info)
        state <- info$states[[1L]]
        theta <- state$theta
        D <- length(theta)
        add("engine_new", spec, state, 5L)
        if (is.null(spec$hs)) {
            add("model_eval", spec, theta, 1:3, theta, TRUE)
            add("model_loglik", spec, theta)
            add("model_curvature", spec, theta, TRUE)
            add("row_derivs", spec, theta, 0.5, if (spec$model == "categorical") 1L else 0L)
            add("row_derivs", spec, theta, matrix(0.5, spec$N, 2L), 0L)
        } else {
            add("hs_eval", spec, theta)
        }
        add("prior_eval", spec, theta)
        if (!is.null(spec$separated_rows))
            add("line_logdens", spec, theta, spec$separated_dir[seq_along(theta)],
                spec$separated_rows[1:3], c(-1, 0, 2))
        draws <- t(sgfs:::all_draws(f))[, 1:5, drop = FALSE]
        add("ksd", spec, t(sgfs:::to_internal(t(draws), info$design)), 1, -0.5)
    }
    ## the mixed models' random-effect blocks (a group of 3 rows, q = 1; a
    ## covariance of q = 2)
    for (from in c("sgldcv", "gaussian")) {
        info <- attr(fits[[from]], "sgfit")
        add("ranef_group_draw", sgfs:::fit_spec(info), info$states[[1L]]$theta, 0:2,
            c(0.1, -0.2, 0.3), rep(1, 3), 0.2, 1, 4)
    }
    ## an engine with random effects: the probit fit's spec with (1 | npreg)
    info <- attr(fits$probit, "sgfit")
    spec <- sgfs:::fit_spec(info)
    terms <- sgfs:::random_design(sgfs:::random_bars(type ~ glu + (1 | npreg)), Pima.tr)
    spec$ranef <- sgfs:::ranef_engine_spec(terms, length(info$states[[1L]]$theta),
                                           list(family = "half_normal", scale = 1),
                                           list(diag(length(info$states[[1L]]$theta))[, 1L, drop = FALSE]))
    add("engine_new", spec, info$states[[1L]], 5L)
    sd_prior <- list(family = 4L, scale = 1, df = 3, shape = 1, concentration = 1, zeta = 1)
    add("ranef_cov_draw", c(0.1, -0.2, 0.3), c(2, 0.1, 0.1, 1), 5L, sd_prior, 1, FALSE)
    add("ranef_cov_draw", c(0.1, -0.2, 0.3), c(2, 0.1, 0.1, 1), 5L, sd_prior, 1, TRUE)
    add("ranef_translation_draw", rep(0.3, 10), 1L, 0.1, 0.5, 0, 2.5)
    from <- "sgldcv"
    glm_info <- attr(fits$sgldcv, "sgfit")
    spec <- sgfs:::fit_spec(glm_info)
    P <- spec$P
    add("row_leverage", spec, glm_info$spec$metric, P)
    theta <- glm_info$states[[1L]]$theta
    add("change_cov", spec, theta, theta / 2, 0:9)
    add("bench_gradients", spec, 3L)
    th <- matrix(glm_info$states[[1L]]$theta, ncol = 1)
    for (what in 0:2)
        add("draws_eval", spec, th, sgfs:::data_columns(spec, 1:4),
            if (what == 2L) as.double(spec$y[1:4]), what, double(0), c(0, 1), NULL)
    ## the data routines on compressed rows (sgldcv's one-hot design) and on
    ## a dense copy (the network's)
    fits$single <- withr::with_options(list(sgfs.precision = "single"),
                                       sgld(type ~ ., Pima.tr, n_iter = 20, progress = FALSE))
    for (from in c("sgldcv", "mlp", "single", "file")) {
        spec <- sgfs:::fit_spec(attr(fits[[from]], "sgfit"))
        add("data_xb", spec, rep(0.5, spec$P))
        add("data_rows_of", spec, c(1L, 3L, 2L))
        add("data_slice", spec, c(2L, 1L, 4L))
        if (from == "single")            # (the engine on the single-precision copy)
            add("engine_new", spec, attr(fits[[from]], "sgfit")$states[[1L]], 5L)
        add("data_xtr", spec, rep(0.5, spec$N))
        add("data_col_wss", spec, rep(0.5, spec$N))
        add("data_hess_times", spec, rep(0.5, spec$N), rep(0.1, spec$P))
    }
    from <- "data"
    x <- model.matrix(y ~ x1 + x2 + f + g, onehot)
    center <- c(0, colMeans(x)[-1])
    scale <- c(1, apply(x, 2, sd)[-1])
    add("design_copy", x, center, scale, FALSE, NULL)
    add("design_copy32", x, center, scale, FALSE, rev(seq_len(nrow(x))))
    add("first_bad_column", x, FALSE)
    ## a data frame's columns, read where they are
    xf <- as.list(as.data.frame(x[, -1]))
    add("design_copy", xf, center, scale, TRUE, NULL)
    add("sparse_rows", xf, center, scale, 0.9, TRUE, NULL)
    add("column_stats", xf)
    add("first_bad_column", xf, TRUE)
    add("sparse_rows", x, center, scale, 0.9, FALSE, rev(seq_len(nrow(x))))
    ## the same with the intercept implicit (lead = TRUE)
    add("design_copy", x[, -1], center, scale, TRUE, rev(seq_len(nrow(x))))
    add("sparse_rows", x[, -1], center, scale, 0.9, TRUE, NULL)
    xs <- Matrix::Matrix(x, sparse = TRUE)
    add("sparse_rows_csc", xs@i, xs@p, xs@x, xs@Dim, center, scale, 0.9, FALSE, rev(seq_len(nrow(x))))
    add("column_stats", x)
    add("column_stats_csc", xs@i, xs@p, xs@x, xs@Dim)
    yo <- as.double(onehot$y)
    add("indicator_stats", x, yo)
    add("indicator_stats_csc", xs@i, xs@p, xs@x, xs@Dim, yo)
    ## a matrix laid out as the engine's rows and back (the case's own copy)
    xr <- x + 0
    scratch <- raw(.Call(sgfs:::C_sgfs_matrix_scratch_bytes, nrow(xr), ncol(xr)))
    add("matrix_reorder", xr, rev(seq_len(nrow(xr))), scratch, new.env(), TRUE)
    add("matrix_reorder", xr, rev(seq_len(nrow(xr))), scratch, new.env(), FALSE)
    add("matrix_scratch_bytes", nrow(xr), ncol(xr))
    add("reorderable", xr)
    key <- new.env()
    add("weakref", key, list(a = 1))
    add("weakref_value", .Call(sgfs:::C_sgfs_weakref, key, list(a = 1)))
    add("parse_libsvm", c("1 1:0.5 3:1", "-1 2:1 # c", "+1 qid:3 1:2"))
    ## the design file's routines, on its R object (mapped in the child by
    ## the first case that reads it: the later ones check their fields
    ## against the map)
    from <- "file"
    add("design_file_info", pima_file$path)
    add("design_file_map")
    add("design_file_stats", pima_file)
    add("design_file_rows", pima_file, c(3L, 1L, 200L))
    add("design_file_columns", pima_file, c(1L, 7L))
    add("design_file_write", tempfile(fileext = ".sgd"), pima_x[1:5, ], colnames(pima_x),
        FALSE, 8L)
    add("design_file_write", pima_file$path, pima_x[1:5, ], colnames(pima_x), TRUE, 8L)
    add("design_file_shuffle", pima_file$path, tempfile(fileext = ".sgd"),
        sample.int(nrow(pima_x)), 50L, tempfile("buckets"))
    add("physical_memory")
    info <- attr(fits$sgldcv, "sgfit")
    add("map_rows", matrix(as.double(unclass(sgfs:::all_draws(fits$sgldcv))[1:3, ]), 3L),
        info$design$M$C)
    add("blas_info")
    add("single_precision")
    add("spec_version")
    add("gamma", 1000L, 50L)
    add("rnorm_block", 10)
    hmc <- attr(fits$hmc, "sgfit")
    add("state_parts", hmc$spec$sampler, length(hmc$states[[1L]]$theta), hmc$states[[1L]]$sstate)
    calls
}

## the malformed versions of one value ("removed": the list element dropped)
removed <- structure(list(), class = "fuzz_removed")
mutations <- function(v) {
    if (is.environment(v) || typeof(v) %in% c("weakref", "externalptr"))   # (a handle's parts)
        return(list(null = NULL, character = "a", number = 1, list = list(v)))
    n <- length(v)
    out <- list(removed = removed, null = NULL, character = "a", empty = v[0],
                first = if (n) v[1L], doubled = c(v, v), list = list(v))
    if (is.numeric(v) || is.logical(v)) {
        na <- v
        na[] <- NA
        out <- c(out, list(na = na, negative = -abs(v) - 1L, zero = v * 0L))
        out$huge <- if (is.integer(v)) rep(.Machine$integer.max, max(n, 1L)) else rep(1e300, max(n, 1L))
        if (is.double(v))
            out <- c(out, list(inf = rep(Inf, max(n, 1L)), nan = rep(NaN, max(n, 1L)),
                               int = as.integer(pmin(pmax(v, -1e9), 1e9))))
        if (is.matrix(v)) out$transposed <- t(v)
    }
    out
}

## every case: one argument (or one element of a list argument, or of a
## list inside it) replaced by each of its mutations
fuzz_cases <- function(bases) {
    cases <- list()
    put <- function(base, path, value, label) {
        drop <- inherits(value, "fuzz_removed")
        if (drop && length(path) == 1L) return()       # (a positional argument)
        set <- function(x, i, rest) {
            if (length(rest)) x[i] <- list(set(x[[i]], rest[1L], rest[-1L]))
            else if (drop) x[[i]] <- NULL
            else x[i] <- list(value)
            x
        }
        cases[[length(cases) + 1L]] <<- list(routine = base$routine,
                                             args = set(base$args, path[1L], path[-1L]),
                                             label = label)
    }
    for (b in bases) {
        for (a in seq_along(b$args)) {
            v <- b$args[[a]]
            if (is.list(v) && !is.data.frame(v)) {
                for (el in names(v)) {
                    w <- v[[el]]
                    if (is.list(w)) {
                        for (el2 in names(w))
                            for (m in names(ms <- mutations(w[[el2]])))
                                put(b, c(a, match(el, names(v)), match(el2, names(w))), ms[[m]],
                                    sprintf("%s (%s) arg %d $%s$%s %s", b$routine, b$from, a, el, el2, m))
                    }
                    for (m in names(ms <- mutations(w)))
                        put(b, c(a, match(el, names(v))), ms[[m]],
                            sprintf("%s (%s) arg %d $%s %s", b$routine, b$from, a, el, m))
                }
            } else {
                for (m in names(ms <- mutations(v)))
                    put(b, a, ms[[m]], sprintf("%s (%s) arg %d %s", b$routine, b$from, a, m))
            }
        }
    }
    cases
}

## runs the cases in child processes; returns the cases that crashed or hung
run_fuzz <- function(cases, timeout = 120) {
    dir <- tempfile("fuzz")
    dir.create(dir)
    on.exit(unlink(dir, recursive = TRUE))
    cases_file <- file.path(dir, "cases.rds")
    saveRDS(cases, cases_file)
    progress <- file.path(dir, "progress")
    child <- file.path(dir, "child.R")
    writeLines(c(
        "args <- commandArgs(TRUE)",
        "suppressMessages(library(sgfs))",
        "cases <- readRDS(args[1]); start <- as.integer(args[3])",
        "setwd(dirname(args[1]))            # (a mutated file path writes here)",
        "con <- file(args[2], open = 'a')",
        "ns <- asNamespace('sgfs')",
        "for (k in seq.int(start, length(cases))) {",
        "    writeLines(as.character(k), con); flush(con)",
        "    cs <- cases[[k]]",
        "    sym <- get(paste0('C_', cs$routine), envir = ns)",
        "    r <- tryCatch(suppressWarnings(do.call(.Call, c(list(sym), cs$args))),",
        "                  error = function(e) NULL)",
        "    if (cs$routine == 'sgfs_engine_new' && inherits(r, 'externalptr')) {",
        "        tryCatch(suppressWarnings(.Call(ns$C_sgfs_engine_run, r, 3L)), error = function(e) NULL)",
        "        tryCatch(.Call(ns$C_sgfs_engine_result, r), error = function(e) NULL)",
        "    }",
        "}",
        "writeLines('done', con); close(con)"), child)
    env <- paste0("R_LIBS=", paste(.libPaths(), collapse = .Platform$path.sep))
    bad <- character(0)
    start <- 1L
    while (start <= length(cases)) {
        unlink(progress)
        status <- suppressWarnings(system2(file.path(R.home("bin"), "Rscript"),
                                           c("--vanilla", shQuote(child), shQuote(cases_file),
                                             shQuote(progress), start),
                                           env = env, stdout = FALSE, stderr = FALSE,
                                           timeout = timeout))
        seen <- if (file.exists(progress)) readLines(progress) else character(0)
        if (length(seen) && seen[length(seen)] == "done") break
        if (!length(seen)) stop("the fuzz's child process did not start (status ", status, ")")
        k <- as.integer(seen[length(seen)])
        bad <- c(bad, sprintf("%s: %s", if (identical(status, 124L)) "hang" else "crash",
                              cases[[k]]$label))
        start <- k + 1L
    }
    bad
}

test_that("malformed arguments to every .Call routine never crash or hang", {
    bases <- fuzz_bases()
    ## every routine (the engine's run and result follow each engine made)
    expect_setequal(c(unique(vapply(bases, `[[`, "", "routine")),
                      "sgfs_engine_run", "sgfs_engine_result"),
                    names(getDLLRegisteredRoutines("sgfs")$.Call))
    cases <- fuzz_cases(bases)
    expect_gt(length(cases), 3000)
    expect_identical(run_fuzz(cases), character(0))
})
