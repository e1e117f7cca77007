#!/usr/bin/env Rscript
## bench/bench_speed.R - speed of the sgfs samplers against a bare C loop
## that only computes the same minibatch gradients.
##
##   Rscript bench/bench_speed.R [--label=NAME] [--reps=3] [--target=1.5] [--quick]
##
## On simulated logistic data (D = 50: 49 N(0, 1) predictors + intercept,
## batch_size 500) it times, for N = 10^4, 5 * 10^5 and 10^6:
##   grad         the bare loop (C_sgfs_bench_gradients, bench_scores = FALSE)
##   grad+scores  the same loop also forming the D x n per-example scores
##   SGLD, SGFS-d, SGFS-f   the samplers, timed by attr(fit, "sgfit")$elapsed
##                (the wall time of the C loop, without the R-side set-up)
## and reports iterations/s and the ratio sampler / bare loop per iteration
## (SGLD against `grad`, SGFS-d and SGFS-f against `grad+scores`).  It also
## times the dense algebra of one SGFS-f step (dsyrk, dpotrf) from R, to see
## how much of SGFS-f's extra cost that algebra explains.
##
## Each measurement is repeated `reps` times, the methods interleaved, and the
## median is reported: the machines this runs on are shared and noisy.
## Results go to bench/results/<label>.csv and bench/results/<label>.md, where
## <label> is the BLAS R loaded (detected, or --label).  See bench/README.md.

suppressPackageStartupMessages(library(sgfs))

## ---------------------------------------------------------------- options

parse_args <- function(args = commandArgs(trailingOnly = TRUE)) {
    opt <- list(label = NULL, reps = 3L, target = 1.5, quick = FALSE)
    for (a in args) {
        kv <- regmatches(a, regexec("^--([a-z]+)(=(.*))?$", a))[[1]]
        if (!length(kv)) { opt$label <- a; next }      # bare word: the label
        key <- kv[2]; val <- kv[4]
        switch(key,
               label  = opt$label <- val,
               reps   = opt$reps <- as.integer(val),
               target = opt$target <- as.numeric(val),
               quick  = opt$quick <- TRUE,
               stop("unknown option --", key, call. = FALSE))
    }
    ## --quick: a smoke test of the script in well under a minute (its
    ## results go to tempdir(), not bench/results/)
    opt$sizes <- if (opt$quick) c(1e4, 1e5) else c(1e4, 5e5, 1e6)
    opt$main_N <- if (opt$quick) 1e5 else 5e5
    if (opt$quick) { opt$target <- min(opt$target, 0.2); opt$reps <- min(opt$reps, 2L) }
    opt
}

script_dir <- function() {
    f <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
    if (length(f)) dirname(normalizePath(f[1])) else file.path(getwd(), "bench")
}

## ------------------------------------------------------------ which BLAS

## The shared objects mapped into this process whose names look like BLAS
## or LAPACK: sessionInfo() only shows the path R was linked against (the
## Debian alternatives link), not always the library actually loaded.
mapped_blas <- function() {
    maps <- tryCatch(readLines("/proc/self/maps"), error = function(e) character())
    objs <- unique(sub("^.*\\s", "", maps[grepl("\\.so", maps)]))
    objs[grepl("blas|lapack|mkl|atlas|blis|accelerate", objs, ignore.case = TRUE)]
}

blas_info <- function() {
    mapped <- mapped_blas()
    blas <- unname(extSoftVersion()["BLAS"])
    all <- tolower(paste(c(mapped, blas, La_library()), collapse = " "))
    label <- if (grepl("openblas", all)) "openblas"
             else if (grepl("mkl", all)) "mkl"
             else if (grepl("blis", all)) "blis"
             else if (grepl("atlas", all)) "atlas"
             else if (grepl("accelerate|veclib", all)) "accelerate"
             else if (grepl("rblas|/blas/libblas|libblas", all)) "reference"
             else "unknown"
    list(label = label, blas = blas, lapack = La_library(),
         session = sessionInfo()$BLAS, mapped = mapped,
         threads = Sys.getenv(c("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")))
}

## ------------------------------------------------------------------ data

P <- 49L           # random predictors; D = P + 1 with the intercept
BATCH <- 500L

simulate_logistic <- function(N, P) {
    x <- matrix(rnorm(N * P), N, P)
    beta <- rnorm(P, sd = 0.1)
    y <- rbinom(N, 1L, plogis(drop(x %*% beta) + 0.2))
    list(x = x, y = y)
}

## ------------------------------------------------------------- timers
## Each timer runs `n_iter` iterations and returns the seconds they took.

## The bare gradient loop, on a spec prepared once per data set.
bench_spec <- function(dat) {
    sgfs:::prepare_run(dat$x, dat$y, family = binomial(), prior = normal(0, 2.5),
                       prior_intercept = NULL, batch_size = BATCH, n_iter = 10L,
                       burnin = 0L, thin = 1L, chains = 1L, cores = 1L,
                       init = NULL, standardize = FALSE, progress = FALSE,
                       sigma = NULL, intercept = TRUE)$spec
}

time_grad <- function(spec, n_iter, scores) {
    spec$bench_scores <- scores
    system.time(.Call(sgfs:::C_sgfs_bench_gradients, spec, as.integer(n_iter)))[["elapsed"]]
}

## A sampler call; returns the C-loop time and, as an attribute, the R-side
## set-up time (the call's wall time minus the loop).
## (Direct calls, not do.call(), so that the fit's stored call does not hold
## the data.)
time_sampler <- function(method, dat, n_iter) {
    x <- dat$x
    y <- dat$y
    thin <- min(100L, n_iter)        # few stored draws: storage costs nothing
    fun <- switch(method,
        "SGLD"   = function() sgld(x, y, batch_size = BATCH, n_iter = n_iter, burnin = 0L,
                                   thin = thin, standardize = FALSE, progress = FALSE,
                                   stepsize = 1e-6),
        "SGFS-d" = function() sgfs(x, y, batch_size = BATCH, n_iter = n_iter, burnin = 0L,
                                   thin = thin, standardize = FALSE, progress = FALSE,
                                   preconditioner = "diagonal", alpha = 1),
        "SGFS-f" = function() sgfs(x, y, batch_size = BATCH, n_iter = n_iter, burnin = 0L,
                                   thin = thin, standardize = FALSE, progress = FALSE,
                                   preconditioner = "full", alpha = 1))
    wall <- system.time(fit <- fun())[["elapsed"]]
    info <- attr(fit, "sgfit")
    done <- info$states[[1]]$iter
    if (done != n_iter)
        stop(sprintf("%s stopped after %g of %d iterations (diverged?)", method, done, n_iter))
    structure(info$elapsed, setup = wall - info$elapsed)
}

## "algebra": the dense algebra of an SGFS-f step alone, timed from R in the
## same repetitions as the rest so that it sees the same machine load.
METHODS <- c("grad", "grad+scores", "SGLD", "SGFS-d", "SGFS-f", "algebra")
BASELINE <- c("grad" = NA, "grad+scores" = NA, "SGLD" = "grad",
              "SGFS-d" = "grad+scores", "SGFS-f" = "grad+scores", "algebra" = NA)

run_one <- function(method, dat, spec, n_iter) {
    switch(method,
           "grad"        = time_grad(spec, n_iter, FALSE),
           "grad+scores" = time_grad(spec, n_iter, TRUE),
           "algebra"     = time_step_algebra(n_iter),
           time_sampler(method, dat, n_iter))
}

## ------------------------------------------------- dense algebra of SGFS-f

## Median seconds per call of f(), called k times, over `reps` repetitions.
per_call <- function(f, k, reps) {
    median(replicate(reps, system.time(for (i in seq_len(k)) f())[["elapsed"]])) / k
}

## One SGFS-f step does a rank-n update V = Gc Gc' / (n - 1) (dsyrk: R's
## one-argument tcrossprod) and two Cholesky factorisations (dpotrf: chol).
algebra_operands <- function(D, n) {
    G <- matrix(rnorm(D * n), D, n)
    list(G = G, A = tcrossprod(G) / (n - 1) + diag(D))
}

## Seconds for n_iter steps' worth of that algebra.
time_step_algebra <- function(n_iter, D = P + 1L, n = BATCH) {
    op <- algebra_operands(D, n)
    G <- op$G
    A <- op$A
    system.time(for (i in seq_len(n_iter)) {
        tcrossprod(G); chol(A); chol(A)
    })[["elapsed"]]
}

## Each kernel on its own, per call (median over reps).
time_algebra <- function(D, n, reps, target) {
    op <- algebra_operands(D, n)
    G <- op$G
    A <- op$A
    k <- function(f) max(20L, as.integer(target / 3 / max(per_call(f, 20L, 1L), 1e-7)))
    f_syrk <- function() tcrossprod(G)
    f_chol <- function() chol(A)
    syrk <- per_call(f_syrk, k(f_syrk), reps)
    potrf <- per_call(f_chol, k(f_chol), reps)
    data.frame(kernel = c("dsyrk (D x n -> D x D)", "dpotrf (D x D)",
                          "SGFS-f step algebra = dsyrk + 2 dpotrf"),
               us = 1e6 * c(syrk, potrf, syrk + 2 * potrf))
}

## ------------------------------------------------------------ one size

## Iterations per measurement, from a short pilot of the bare loops and the
## algebra estimate: aims at `target` seconds per measurement.
plan_iterations <- function(spec, algebra_s, target) {
    pilot <- 300L
    t_grad <- time_grad(spec, pilot, FALSE) / pilot
    t_scores <- time_grad(spec, pilot, TRUE) / pilot
    est <- c("grad" = t_grad, "grad+scores" = t_scores, "SGLD" = t_grad,
             "SGFS-d" = 1.2 * t_scores, "SGFS-f" = t_scores + algebra_s,
             "algebra" = algebra_s)
    pmin(pmax(round(target / est, -2), 200), 1e6)
}

bench_size <- function(N, opt, algebra_s) {
    set.seed(20240 + N)
    dat <- simulate_logistic(N, P)
    spec <- bench_spec(dat)
    n_iter <- plan_iterations(spec, algebra_s, opt$target)
    rows <- list()
    for (r in seq_len(opt$reps)) {
        for (m in METHODS) {
            s <- run_one(m, dat, spec, n_iter[[m]])
            setup <- attr(s, "setup")
            rows[[length(rows) + 1L]] <- data.frame(
                N = N, method = m, rep = r, n_iter = n_iter[[m]], seconds = as.numeric(s),
                setup_s = if (is.null(setup)) NA_real_ else setup)
            cat(sprintf("  N = %-8s %-12s rep %d: %6d iterations in %.3f s\n",
                        format(N, scientific = FALSE), m, r, n_iter[[m]], s))
        }
    }
    rm(dat, spec); invisible(gc())
    do.call(rbind, rows)
}

## Medians over repetitions; per-iteration times and ratios to the baseline.
summarise <- function(raw) {
    raw$us_per_iter <- 1e6 * raw$seconds / raw$n_iter
    key <- unique(raw[c("N", "method")])
    out <- do.call(rbind, lapply(seq_len(nrow(key)), function(i) {
        d <- raw[raw$N == key$N[i] & raw$method == key$method[i], ]
        data.frame(N = key$N[i], method = key$method[i], reps = nrow(d),
                   n_iter = d$n_iter[1], us_per_iter = median(d$us_per_iter),
                   us_min = min(d$us_per_iter),
                   spread = diff(range(d$us_per_iter)) / median(d$us_per_iter),
                   setup_s = median(d$setup_s))
    }))
    out$iter_per_s <- 1e6 / out$us_per_iter
    out$baseline <- unname(BASELINE[out$method])
    baseline_of <- function(col) mapply(function(N, b) if (is.na(b)) NA_real_ else
                                            out[[col]][out$N == N & out$method == b],
                                        out$N, out$baseline)
    out$ratio <- out$us_per_iter / baseline_of("us_per_iter")
    ## the same from the fastest repetitions: noise on a shared machine only
    ## ever adds time, so this is a useful cross-check of the medians
    out$ratio_min <- out$us_min / baseline_of("us_min")
    out
}

## us/iter of each method at each N, and largest N / smallest N.
n_scaling <- function(res) {
    Ns <- sort(unique(res$N))
    tab <- data.frame(method = METHODS)
    for (N in Ns)
        tab[[paste0("N=", format(N, scientific = TRUE))]] <-
            res$us_per_iter[res$N == N][match(METHODS, res$method[res$N == N])]
    tab$largest_over_smallest <- tab[[ncol(tab)]] / tab[[2]]
    tab
}

## --------------------------------------------------------------- output

fmt_table <- function(df, digits = 3) {
    df[] <- lapply(df, function(col) if (is.numeric(col))
        ifelse(is.na(col), "", formatC(col, digits = digits, format = "fg", big.mark = ""))
        else ifelse(is.na(col), "", as.character(col)))
    df
}

md_table <- function(df) {
    df <- fmt_table(df)
    c(paste("|", paste(names(df), collapse = " | "), "|"),
      paste("|", paste(rep("---", ncol(df)), collapse = " | "), "|"),
      apply(df, 1, function(r) paste("|", paste(r, collapse = " | "), "|")))
}

## Per N: how much of SGFS-f's cost over the loop with scores is explained by
## its dense algebra ("algebra" row, timed from R in the same repetitions).
sgfs_f_breakdown <- function(res) {
    us <- function(N, m) res$us_per_iter[res$N == N & res$method == m]
    do.call(rbind, lapply(sort(unique(res$N)), function(N) {
        extra <- us(N, "SGFS-f") - us(N, "grad+scores")
        data.frame(N = N, grad_scores_us = us(N, "grad+scores"), sgfs_f_us = us(N, "SGFS-f"),
                   extra_us = extra, algebra_us = us(N, "algebra"),
                   algebra_over_extra = us(N, "algebra") / extra,
                   algebra_share_of_sgfs_f = us(N, "algebra") / us(N, "SGFS-f"))
    }))
}

report_lines <- function(blas, opt, res, scaling, kernels) {
    main <- res[res$N == opt$main_N, ]
    breakdown <- sgfs_f_breakdown(res)
    b <- breakdown[breakdown$N == opt$main_N, ]
    ratio <- function(m) main$ratio[main$method == m]
    cols <- c("method", "n_iter", "us_per_iter", "iter_per_s", "baseline", "ratio",
              "us_min", "ratio_min", "spread", "setup_s")
    c(sprintf("# sgfs speed benchmark (%s BLAS)", blas$label), "",
      sprintf("- date: %s; R %s; sgfs %s; %s", format(Sys.time(), "%Y-%m-%d %H:%M"),
              getRversion(), packageVersion("sgfs"), R.version$platform),
      sprintf("- CPU: %s (%s cores); load average at start / end: %s / %s", cpu_name(),
              parallel::detectCores(), opt$load, load_average()),
      sprintf("- extSoftVersion()[\"BLAS\"]: %s", blas$blas),
      sprintf("- La_library(): %s", blas$lapack),
      sprintf("- sessionInfo()$BLAS: %s", blas$session),
      sprintf("- BLAS/LAPACK objects mapped in the process (/proc/self/maps): %s",
              paste(blas$mapped, collapse = ", ")),
      sprintf("- OPENBLAS_NUM_THREADS=%s OMP_NUM_THREADS=%s",
              blas$threads[[1]], blas$threads[[2]]),
      sprintf("- data: logistic, D = %d (%d predictors + intercept), batch_size = %d; median of %d repetitions of ~%g s, methods interleaved",
              P + 1L, P, BATCH, opt$reps, opt$target),
      "", sprintf("## Iterations per second, N = %s", format(opt$main_N, scientific = FALSE)), "",
      md_table(main[cols]),
      "",
      sprintf("- SGLD / bare gradient loop: %.2fx (goal: within 1.3x).", ratio("SGLD")),
      sprintf("- SGFS-d / loop with scores: %.2fx; SGFS-f / loop with scores: %.2fx.",
              ratio("SGFS-d"), ratio("SGFS-f")),
      sprintf("- SGFS-f costs %.0f us per iteration more than the loop with scores; its dense algebra (dsyrk + 2 dpotrf, timed from R) takes %.0f us (%.0f%% of that extra, %.0f%% of SGFS-f's time).",
              b$extra_us, b$algebra_us, 100 * b$algebra_over_extra,
              100 * b$algebra_share_of_sgfs_f),
      "", "## SGFS-f: extra cost over the loop with scores vs its dense algebra", "",
      md_table(breakdown),
      "", "## Dense algebra kernels (D = 50, n = 500), timed from R at the start", "",
      md_table(kernels),
      "", "## Time per iteration (us) against N", "",
      sprintf("The engine's copy of the data takes %s; the CPU's last-level cache is %s.",
              paste(sprintf("%g MB at N = %s", 8 * (P + 1) * sort(unique(res$N)) / 1e6,
                            format(sort(unique(res$N)), scientific = FALSE, trim = TRUE)),
                    collapse = ", "),
              cache_size()),
      "",
      md_table(scaling),
      "", "## All results", "",
      md_table(res[c("N", cols)]),
      "",
      "us_per_iter: median wall time per iteration of the C loop; ratio: us_per_iter / baseline's;",
      "us_min, ratio_min: the same from the fastest repetition of each method;",
      "spread: (max - min) / median over the repetitions; setup_s: R-side time of the sampler call",
      "outside the C loop (argument checks, transposing the data, set-up), not in us_per_iter;",
      "algebra: tcrossprod (dsyrk) + 2 chol (dpotrf) of an SGFS-f step, from R (N-independent).")
}

## size of the largest CPU cache, as the kernel reports it
cache_size <- function() {
    dirs <- Sys.glob("/sys/devices/system/cpu/cpu0/cache/index*")
    if (!length(dirs)) return("unknown")
    sizes <- vapply(dirs, function(d) readLines(file.path(d, "size"))[1], "")
    kb <- as.numeric(sub("[KM]$", "", sizes)) * ifelse(grepl("M$", sizes), 1024, 1)
    sprintf("%.0f MB", max(kb) / 1024)
}

load_average <- function()
    tryCatch(strsplit(readLines("/proc/loadavg"), " ")[[1]][1], error = function(e) "?")

cpu_name <- function() {
    l <- tryCatch(grep("^model name", readLines("/proc/cpuinfo"), value = TRUE), error = function(e) "")
    if (length(l) && nzchar(l[1])) sub("^model name\\s*:\\s*", "", l[1]) else R.version$platform
}

## ----------------------------------------------------------------- main

main <- function() {
    opt <- parse_args()
    blas <- blas_info()
    label <- if (is.null(opt$label)) blas$label else opt$label
    opt$load <- load_average()
    if (!exists("C_sgfs_bench_gradients", envir = asNamespace("sgfs")))
        stop("this sgfs has no bare gradient loop (C_sgfs_bench_gradients): reinstall it")

    cat("sgfs", format(packageVersion("sgfs")), "from", dirname(find.package("sgfs")), "\n")
    cat("BLAS (extSoftVersion):", blas$blas, "\n")
    cat("LAPACK (La_library):  ", blas$lapack, "\n")
    cat("BLAS (sessionInfo):   ", blas$session, "\n")
    cat("mapped BLAS/LAPACK:   ", paste(blas$mapped, collapse = "\n                       "), "\n")
    cat("label:", label, "\n\n")

    cat("timing the dense algebra of an SGFS-f step ...\n")
    kernels <- time_algebra(P + 1L, BATCH, opt$reps, opt$target)
    print(fmt_table(kernels), row.names = FALSE)

    raw <- list()
    for (N in opt$sizes) {
        cat(sprintf("\nN = %s\n", format(N, scientific = FALSE)))
        raw[[length(raw) + 1L]] <- bench_size(N, opt, kernels$us[3] / 1e6)
    }
    res <- summarise(do.call(rbind, raw))
    scaling <- n_scaling(res)

    lines <- report_lines(blas, opt, res, scaling, kernels)
    cat("\n", lines, sep = "\n")

    ## (smoke tests leave bench/results/ alone)
    out <- if (opt$quick) tempdir() else file.path(script_dir(), "results")
    dir.create(out, showWarnings = FALSE, recursive = TRUE)
    base <- file.path(out, label)
    res$blas <- label
    write.csv(res, paste0(base, ".csv"), row.names = FALSE)
    writeLines(lines, paste0(base, ".md"))
    cat("\nwrote", paste0(base, ".csv"), "and", paste0(base, ".md"), "\n")
}

main()
