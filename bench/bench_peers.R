#!/usr/bin/env Rscript
## bench/bench_peers.R - sgld() against the bare C loop and hand-written
## NumPy and PyTorch SGLD loops; sgfs() (SGFS-f) against sgld() (issue 15).
##
##   Rscript bench/bench_peers.R [--reps=5] [--python=/usr/bin/python3] [--quick]
##                               [--shapes=1,2,3] [--label=peers] [--out=DIR]
##
## Simulated logistic regression (an intercept and D - 1 N(0, 1) predictors,
## coefficients N(0, 0.3^2)) at three shapes (N, D, batch):
##   (1e5, 11, 1000)     SGMCMCJax's example
##   (571012, 55, 500)   Covertype's shape
##   (1e6, 50, 500)
## and microseconds per iteration of
##   bare          the package's bare minibatch-gradient loop in C
##                 (sgfs:::C_sgfs_bench_gradients: the engine's minibatch draw
##                 and the model's score, nothing else; src/bench_gradients.c)
##   sgld_rows     sgld(metric = "identity", stepsize = 1e-6) with
##                 options(sgfs.batches = "rows"): the paper's algorithm,
##                 random rows; attr(fit, "sgfit")$elapsed / n_iter, the C
##                 loop without the R-side set-up
##   sgld_id       the same at the default minibatches: from 10,000 rows,
##                 distinct blocks of about 3e-4 N consecutive rows of the
##                 engine's copy, which holds the rows in a random order
##   sgld_windows  sgld_id with options(sgfs.batches = "windows"): each
##                 minibatch n consecutive rows from a random start (valid
##                 here: the simulated rows are independent, in random
##                 order; the default for a shuffled design file larger
##                 than half the memory)
##   sgld          sgld() at its default metric ("mode") and default step
##   sgfs_full     sgfs(preconditioner = "full"), SGFS-f
##   numpy_choice  bench/sgld_numpy.py, rng.choice(N, n, replace = FALSE) per
##                 iteration (an independent subset, as the package draws)
##   numpy_epoch   bench/sgld_numpy.py, slices of one rng.permutation(N) per epoch
##   torch_epoch   bench/sgld_torch.py, slices of one torch.randperm(N) per
##                 epoch (as DataLoader(shuffle = TRUE))
##   torch_randperm  bench/sgld_torch.py, torch.randperm(N)[:n] per iteration
## The Python loops read the same data (written once per shape as float64
## files in tempdir()), run float64 on one thread (OMP_NUM_THREADS=1,
## OPENBLAS_NUM_THREADS=1, MKL_NUM_THREADS=1 in their environment, and
## torch.set_num_threads(1)) and time their loop only (time.perf_counter,
## after 50 warm-up iterations).  Each measurement is repeated `reps` times,
## the methods interleaved (their order rotated each repetition), and the
## median kept; `spread` is (max - min) / median.  Ratios are the medians of
## the ratios within each repetition (on a shared machine the load drifts
## between repetitions more than within one).
## Results: bench/results/<label>.csv and .md (--quick: tempdir(); --out:
## that folder).
## Needs python3-numpy and python3-torch (Debian: apt-get install), about
## 2.5 GB of memory (the 1e6 x 50 shape) and 10-15 minutes.

suppressPackageStartupMessages(library(sgfs))

parse_args <- function(args = commandArgs(trailingOnly = TRUE)) {
    opt <- list(reps = 5L, python = if (file.exists("/usr/bin/python3")) "/usr/bin/python3" else "python3",
                quick = FALSE, shapes = 1:3, label = "peers", out = NULL)
    for (a in args) {
        kv <- regmatches(a, regexec("^--([a-z]+)(=(.*))?$", a))[[1]]
        if (!length(kv)) stop("unknown argument ", a, call. = FALSE)
        key <- kv[2]; val <- kv[4]
        switch(key,
               reps   = opt$reps <- as.integer(val),
               python = opt$python <- val,
               quick  = opt$quick <- TRUE,
               shapes = opt$shapes <- as.integer(strsplit(val, ",")[[1]]),
               label  = opt$label <- val,
               out    = opt$out <- val,
               stop("unknown option --", key, call. = FALSE))
    }
    if (opt$quick) opt$reps <- min(opt$reps, 2L)
    opt
}

script_dir <- function() {
    f <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
    if (length(f)) dirname(normalizePath(f[1])) else file.path(getwd(), "bench")
}

SHAPES <- data.frame(name = c("SGMCMCJax example", "Covertype shape", "1e6 x 50"),
                     N = c(1e5, 571012, 1e6), D = c(11L, 55L, 50L),
                     batch = c(1000L, 500L, 500L),
                     ## about 0.5-4 s each: runs of 0.05-0.2 s gave per-repetition
                     ## ratios spread over 1.15-1.93 on this shared machine
                     n_iter = c(20000L, 10000L, 10000L))

METHODS <- c("bare", "sgld_rows", "sgld_id", "sgld_windows", "sgld", "sgfs_full",
             "numpy_choice", "numpy_epoch", "torch_epoch", "torch_randperm")

simulate <- function(N, D) {
    x <- matrix(rnorm(N * (D - 1)), N, D - 1)
    beta <- rnorm(D, sd = 0.3)
    y <- rbinom(N, 1L, plogis(beta[1] + drop(x %*% beta[-1])))
    list(x = x, y = y)
}

## the data for Python: row-major N x D float64 with the intercept column
write_for_python <- function(dat, path) {
    con <- file(paste0(path, ".x"), "wb")
    N <- nrow(dat$x)
    for (s in seq(1, N, by = 50000)) {            # in blocks: t() of 400 MB at once doubles it
        rows <- s:min(N, s + 49999)
        writeBin(as.vector(t(cbind(1, dat$x[rows, , drop = FALSE]))), con)
    }
    close(con)
    writeBin(as.double(dat$y), paste0(path, ".y"))
}

bare_spec <- function(dat, batch) {
    spec <- sgfs:::prepare_run(dat$x, dat$y, family = binomial(), prior = normal(0, 2.5),
                               prior_intercept = NULL, batch_size = batch, n_iter = 10L,
                               burnin = 0L, thin = 1L, chains = 1L, cores = 1L,
                               init = NULL, standardize = FALSE, progress = FALSE,
                               sigma = NULL, intercept = TRUE)$spec
    spec$bench_scores <- FALSE
    spec
}

## seconds of the C loop of one sampler call (set-up time as an attribute)
time_sampler <- function(method, dat, batch, n_iter) {
    x <- dat$x
    y <- dat$y
    thin <- min(100L, n_iter)
    fun <- switch(method,
        sgld_rows = function() withr::with_options(list(sgfs.batches = "rows"),
            sgld(x, y, batch_size = batch, n_iter = n_iter, burnin = 0L, thin = thin,
                 standardize = FALSE, progress = FALSE, metric = "identity", stepsize = 1e-6)),
        sgld_id = function() sgld(x, y, batch_size = batch, n_iter = n_iter, burnin = 0L,
                                  thin = thin, standardize = FALSE, progress = FALSE,
                                  metric = "identity", stepsize = 1e-6),
        sgld_windows = function() withr::with_options(list(sgfs.batches = "windows"),
            sgld(x, y, batch_size = batch, n_iter = n_iter, burnin = 0L, thin = thin,
                 standardize = FALSE, progress = FALSE, metric = "identity", stepsize = 1e-6)),
        sgld = function() sgld(x, y, batch_size = batch, n_iter = n_iter, burnin = 0L,
                               thin = thin, standardize = FALSE, progress = FALSE),
        sgfs_full = function() sgfs(x, y, batch_size = batch, n_iter = n_iter, burnin = 0L,
                                    thin = thin, standardize = FALSE, progress = FALSE,
                                    preconditioner = "full"))
    ## (no warnings: from a start at the mode with burnin = 0 and these short
    ## runs the samplers' convergence checks are not the point here)
    wall <- system.time(fit <- suppressWarnings(fun()))[["elapsed"]]
    info <- attr(fit, "sgfit")
    if (info$states[[1]]$iter != n_iter)
        stop(sprintf("%s stopped after %g of %d iterations", method, info$states[[1]]$iter, n_iter))
    structure(info$elapsed, setup = wall - info$elapsed)
}

time_python <- function(method, opt, path, shape, n_iter) {
    script <- file.path(script_dir(), if (grepl("^numpy", method)) "sgld_numpy.py" else "sgld_torch.py")
    draw <- sub("^[a-z]+_", "", method)
    args <- c(script, path, format(shape$N, scientific = FALSE), shape$D, shape$batch,
              n_iter, paste0("--draw=", draw))
    out <- system2(opt$python, shQuote(args), stdout = TRUE,
                   env = c("OMP_NUM_THREADS=1", "OPENBLAS_NUM_THREADS=1", "MKL_NUM_THREADS=1"))
    line <- grep("^us_per_iter ", out, value = TRUE)
    if (!length(line)) stop(method, " failed: ", paste(out, collapse = "\n"))
    1e-6 * n_iter * as.numeric(sub("^us_per_iter ", "", line))
}

iters_for <- function(method, shape, quick) {
    k <- shape$n_iter
    if (method == "torch_randperm") k <- max(200L, k %/% 10L)   # O(N) per draw
    if (quick) k <- max(100L, k %/% 10L)
    as.integer(k)
}

run_shape <- function(shape, opt) {
    cat(sprintf("\n== %s: N = %s, D = %d, batch = %d ==\n", shape$name,
                format(shape$N, big.mark = ","), shape$D, shape$batch))
    set.seed(15)
    dat <- simulate(shape$N, shape$D)
    path <- tempfile("peers")
    write_for_python(dat, path)
    on.exit(unlink(paste0(path, c(".x", ".y"))))
    spec <- bare_spec(dat, shape$batch)
    us <- matrix(NA_real_, opt$reps, length(METHODS), dimnames = list(NULL, METHODS))
    setup <- us
    for (r in seq_len(opt$reps)) {
        order <- METHODS[(seq_along(METHODS) + r - 2L) %% length(METHODS) + 1L]
        for (m in order) {
            k <- iters_for(m, shape, opt$quick)
            s <- switch(m,
                bare = system.time(.Call(sgfs:::C_sgfs_bench_gradients, spec, k))[["elapsed"]],
                sgld_rows = , sgld_id = , sgld_windows = , sgld = , sgfs_full =
                    time_sampler(m, dat, shape$batch, k),
                time_python(m, opt, path, shape, k))
            us[r, m] <- 1e6 * s / k
            if (!is.null(attr(s, "setup"))) setup[r, m] <- attr(s, "setup")
        }
        cat(sprintf("rep %d: %s\n", r, paste(sprintf("%s %.0f", METHODS, us[r, ]), collapse = ", ")))
    }
    med <- apply(us, 2, median)
    data.frame(shape = shape$name, N = shape$N, D = shape$D, batch = shape$batch,
               method = METHODS, n_iter = vapply(METHODS, iters_for, 1L, shape = shape, quick = opt$quick),
               us_per_iter = round(med, 1),
               spread = round((apply(us, 2, max) - apply(us, 2, min)) / med, 2),
               setup_s = round(apply(setup, 2, median), 2),
               ## ratios: medians of the per-repetition ratios (methods
               ## measured minutes apart in one repetition see the same load)
               vs_bare = round(apply(us / us[, "bare"], 2, median), 2),
               vs_sgld_id = round(apply(us / us[, "sgld_id"], 2, median), 2),
               vs_sgld = round(apply(us / us[, "sgld"], 2, median), 2),
               row.names = NULL)
}

versions <- function(python) {
    py <- tryCatch(system2(python, c("-c", shQuote(paste(
        "import sys, numpy, torch;",
        "print('Python', sys.version.split()[0], '/ NumPy', numpy.__version__,",
        "'/ torch', torch.__version__)"))), stdout = TRUE, stderr = TRUE),
        error = function(e) "python: not found")
    cpu <- tryCatch(sub("^.*:\\s*", "", grep("^model name", readLines("/proc/cpuinfo"), value = TRUE)[1]),
                    error = function(e) NA)
    list(date = format(Sys.time(), "%Y-%m-%d %H:%M %Z"),
         machine = sprintf("%s, %d cores (%s)", cpu, parallel::detectCores(), R.version$platform),
         r = R.version.string, blas = sgfs:::blas_label(), python = paste(py, collapse = " "),
         sgfs = as.character(utils::packageVersion("sgfs")),
         commit = tryCatch(system2("git", c("-C", shQuote(script_dir()), "rev-parse", "--short", "HEAD"),
                                   stdout = TRUE, stderr = FALSE), error = function(e) NA),
         load = tryCatch(readLines("/proc/loadavg"), error = function(e) NA))
}

wide_table <- function(res) {
    rows <- lapply(split(res, factor(res$shape, unique(res$shape))), function(d) {
        u <- setNames(d$us_per_iter, d$method)
        b <- setNames(d$vs_bare, d$method)
        g <- setNames(d$vs_sgld_id, d$method)
        s <- setNames(d$vs_sgld, d$method)
        sprintf("| %s, %s, %d | %.0f | %.0f (%.2fx) | %.0f (%.2fx) | %.0f (%.2fx) | %.0f (%.2fx) | %.0f (%.2fx sgld(), %.2fx sgld_id) | %.0f (%.2fx) | %.0f (%.2fx) | %.0f (%.2fx) | %.0f (%.2fx) |",
                format(d$N[1], big.mark = ",", scientific = FALSE), d$D[1], d$batch[1],
                u[["bare"]], u[["sgld_rows"]], b[["sgld_rows"]], u[["sgld_id"]], b[["sgld_id"]],
                u[["sgld_windows"]], b[["sgld_windows"]],
                u[["sgld"]], b[["sgld"]],
                u[["sgfs_full"]], s[["sgfs_full"]], g[["sgfs_full"]],
                u[["numpy_choice"]], g[["numpy_choice"]],
                u[["numpy_epoch"]], g[["numpy_epoch"]],
                u[["torch_epoch"]], g[["torch_epoch"]],
                u[["torch_randperm"]], g[["torch_randperm"]])
    })
    c("| shape (N, D, batch) | bare loop (random rows) | sgld(metric = \"identity\"), random rows (x bare) | the same, default minibatches (x bare) | the same, whole windows (x bare) | sgld() default (x bare) | sgfs() full | NumPy, choice (x sgld_id) | NumPy, epoch perm. (x sgld_id) | PyTorch, epoch perm. (x sgld_id) | PyTorch, randperm (x sgld_id) |",
      "|---|---|---|---|---|---|---|---|---|---|---|", unlist(rows))
}

main <- function() {
    opt <- parse_args()
    v <- versions(opt$python)
    cat("sgfs", v$sgfs, "commit", v$commit, "|", v$blas, "|", v$python, "\n")
    res <- do.call(rbind, lapply(opt$shapes, function(i) run_shape(SHAPES[i, ], opt)))
    cat("\n")
    print(res, row.names = FALSE)
    tab <- wide_table(res)
    cat("", tab, sep = "\n")
    out <- if (!is.null(opt$out)) opt$out
           else if (opt$quick) tempdir() else file.path(script_dir(), "results")
    dir.create(out, showWarnings = FALSE, recursive = TRUE)
    cmd <- paste(c("Rscript bench/bench_peers.R", commandArgs(trailingOnly = TRUE)), collapse = " ")
    write.csv(res, file.path(out, sprintf("%s.csv", opt$label)), row.names = FALSE)
    md <- c("# sgld() and sgfs() against the bare loop, NumPy and PyTorch (bench/bench_peers.R)", "",
            sprintf("- date: %s", v$date),
            sprintf("- machine: %s; shared (load average at the end: %s)", v$machine, v$load),
            sprintf("- %s; sgfs %s at commit %s; BLAS: %s", v$r, v$sgfs, v$commit, v$blas),
            sprintf("- %s; Python loops single-threaded (OMP_NUM_THREADS=1, OPENBLAS_NUM_THREADS=1, torch.set_num_threads(1))", v$python),
            sprintf("- command: `%s`", cmd),
            sprintf("- medians of %d interleaved repetitions; microseconds per iteration; ratios from this one run", opt$reps),
            "", "Ratios (medians of the per-repetition ratios): sgld() columns against the bare loop; sgfs() against sgld() at its defaults and against sgld(metric = \"identity\"); the Python loops against sgld(metric = \"identity\") (above 1: slower than the package).", "",
            tab, "", "All measurements (`spread` = (max - min) / median over the repetitions; `setup_s` = the sampler call's wall time minus its C loop):", "",
            "| shape | method | n_iter | us/iter | spread | setup s | x bare | x sgld_id | x sgld |",
            "|---|---|---|---|---|---|---|---|---|",
            sprintf("| %s | %s | %d | %.1f | %.2f | %s | %.2f | %.2f | %.2f |", res$shape, res$method, res$n_iter,
                    res$us_per_iter, res$spread, ifelse(is.na(res$setup_s), "", format(res$setup_s)),
                    res$vs_bare, res$vs_sgld_id, res$vs_sgld))
    writeLines(md, file.path(out, sprintf("%s.md", opt$label)))
    cat("\nwritten:", file.path(out, sprintf("%s.{csv,md}", opt$label)), "\n")
}

main()
