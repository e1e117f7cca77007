#!/usr/bin/env Rscript
## bench/bench_memory.R - the memory a fit takes, and the size of a fit.
##
##   R_LIBS=<lib> Rscript bench/bench_memory.R [--N=2000000] [--P=50]
##
## Each case runs in a child process under /usr/bin/time -v (GNU time; its
## "Maximum resident set size" is the process's peak, the data and R
## included): sgfs(x, y) on an N x P numeric matrix and sgfs(y ~ ., df) on a
## data frame of the same columns: at the defaults (the matrix read in
## place, laid out as the engine's rows while the fit runs: R/data-access.R;
## the data frame's numeric columns copied, never bound into a matrix) and
## with the engine's copy of the matrix (options(sgfs.in_place = FALSE)), in
## double and in single precision (options(sgfs.precision)).  The child makes its data a
## column at a time (garbage collected as it goes) and reports its peak
## before the fit (VmHWM), so that the fit's own part shows.  Then the size
## of a fit (object.size and saveRDS) at N / 10 and N rows.  Results go to
## bench/results/memory.md.

opt <- list(N = 2e6, P = 50)
for (a in commandArgs(trailingOnly = TRUE)) {
    kv <- regmatches(a, regexec("^--([a-zA-Z]+)=(.*)$", a))[[1]]
    if (!length(kv)) stop("unknown argument ", a, call. = FALSE)
    opt[[kv[2]]] <- as.numeric(kv[3])
}
here <- function() {
    f <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
    if (length(f)) dirname(normalizePath(f[1])) else file.path(getwd(), "bench")
}
if (!file.exists("/usr/bin/time")) stop("this benchmark needs GNU time (/usr/bin/time)", call. = FALSE)

child <- tempfile(fileext = ".R")
writeLines(c(
    "suppressPackageStartupMessages(library(sgfs))",
    "a <- commandArgs(TRUE); N <- as.numeric(a[1]); P <- as.integer(a[2])",
    "options(sgfs.precision = if (a[4] == 'single') 'single' else 'double',",
    "        sgfs.in_place = if (a[4] == 'default') NA else FALSE)",
    "set.seed(1); cols <- paste0('x', seq_len(P))",
    "if (a[3] == 'matrix') {",
    "    x <- matrix(0, N, P, dimnames = list(NULL, cols))",
    "    for (j in seq_len(P)) { x[, j] <- rnorm(N); if (j %% 5 == 0) invisible(gc()) }",
    "    y <- rbinom(N, 1, plogis(x[, 1] - x[, 2]))",
    "} else {",
    "    d <- data.frame(y = integer(N))",
    "    for (j in seq_len(P)) { d[[cols[j]]] <- rnorm(N); if (j %% 5 == 0) invisible(gc()) }",
    "    d$y <- rbinom(N, 1, plogis(d$x1 - d$x2))",
    "}",
    "invisible(gc())",
    "hwm <- function() as.numeric(gsub('[^0-9]', '', grep('^VmHWM', readLines('/proc/self/status'), value = TRUE))) / 1024",
    "before <- hwm()",
    "fit <- if (a[3] == 'matrix') sgfs(x, y, n_iter = 500, progress = FALSE, verbose = FALSE) else",
    "    sgfs(y ~ ., d, n_iter = 500, progress = FALSE, verbose = FALSE)",
    "f <- tempfile(fileext = '.rds'); saveRDS(fit, f)",
    "cat(sprintf('RESULT %.1f %.1f %.1f\\n', before, as.double(object.size(fit)) / 1024, file.size(f) / 1024))"),
    child)
rscript <- file.path(R.home("bin"), "Rscript")
run <- function(N, what, precision) {
    out <- system2("/usr/bin/time", c("-v", rscript, child, format(N, scientific = FALSE), opt$P,
                                      what, precision), stdout = TRUE, stderr = TRUE)
    res <- as.numeric(strsplit(sub("^RESULT ", "", grep("^RESULT", out, value = TRUE)), " ")[[1]])
    rss <- as.numeric(sub(".*: ", "", grep("Maximum resident set size", out, value = TRUE))) / 1024
    data.frame(N = N, interface = if (what == "matrix") "sgfs(x, y)" else "sgfs(y ~ ., df)",
               precision = switch(precision,
                                  default = if (what == "matrix") "the matrix in place (the default)"
                                            else "a copy (the default)",
                                  double = "a copy", single = "a copy in single precision"),
               data_mb = 8 * N * opt$P / 2^20, before_mb = res[1],
               peak_mb = rss, fit_kb = res[2], rds_kb = res[3])
}
rows <- list()
for (what in c("matrix", "formula"))
    for (precision in c("default", if (what == "matrix") "double", "single")) {
        rows[[length(rows) + 1L]] <- run(opt$N, what, precision)
        cat(what, precision, "done\n")
    }
small <- run(opt$N / 10, "matrix", "default")
res <- do.call(rbind, rows)
lines <- c("# Memory of a fit, and its size", "",
           sprintf("Run %s; `R_LIBS=<lib> Rscript bench/bench_memory.R --N=%s --P=%d`.",
                   format(Sys.time(), "%Y-%m-%d %H:%M"), format(opt$N, scientific = FALSE), opt$P),
           "Peak: /usr/bin/time -v's maximum resident set size of the whole process (R, the data",
           "and the fit); before: the process's peak before the fit (its data made a column at a",
           "time); ratios to the data's size (8 N P bytes).", "",
           "| interface | the engine's data | data, MB | peak before the fit | peak | peak / data | the fit's part / data |",
           "|---|---|---:|---:|---:|---:|---:|",
           sprintf("| %s | %s | %.0f | %.0f | %.0f | %.2f | %.2f |", res$interface, res$precision,
                   res$data_mb, res$before_mb, res$peak_mb, res$peak_mb / res$data_mb,
                   (res$peak_mb - res$before_mb) / res$data_mb), "",
           "The fit's size does not grow with N (it refers to its data: see ?update.sgfit):", "",
           "| N | object.size, kB | saveRDS file, kB |", "|---:|---:|---:|",
           sprintf("| %s | %.1f | %.1f |", format(c(small$N, res$N[1]), big.mark = ",", scientific = FALSE),
                   c(small$fit_kb, res$fit_kb[1]), c(small$rds_kb, res$rds_kb[1])))
writeLines(lines)
dir.create(file.path(here(), "results"), showWarnings = FALSE, recursive = TRUE)
writeLines(lines, file.path(here(), "results", "memory.md"))
