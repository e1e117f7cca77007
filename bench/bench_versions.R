## Two installed versions of sgfs side by side: the C loop's time per
## iteration of a few workloads (sgld and sgldcv on a9a's compressed rows,
## sgld, sgldcv and sgfs on dense simulated logistic data, sgld on Poisson
## counts), each version in its own R process, the two alternating PAIRS
## times, so that a refactor's speed is compared in one run on a shared
## machine (the ratio of each pair, then their median and range).
##
##   Rscript bench/bench_versions.R LIB_BEFORE LIB_AFTER [PAIRS] [LABEL]
##
## LIB_*: library folders each holding an installed sgfs (R CMD INSTALL -l).
## Writes bench/results/versions-LABEL.md (LABEL "refactor" by default).
## Needs ../shared/datasets/a9a.xz.
args <- commandArgs(TRUE)
if (length(args) >= 2L && args[1] == "--child") {
    suppressPackageStartupMessages(library(sgfs, lib.loc = args[2]))
    a9a <- read_libsvm(args[3])
    a9a$y <- as.integer(a9a$y > 0)
    set.seed(1)
    N <- 200000
    P <- 50
    x <- matrix(rnorm(N * P), N)
    y <- rbinom(N, 1, plogis(x[, 1] - x[, 2]))
    counts <- rpois(N, exp(0.3 * x[, 1]))
    per_iter <- function(fit, n) 1e6 * attr(fit, "sgfit")$elapsed / n
    run <- function(f, n = 20000) per_iter(suppressWarnings(f(n)), n)
    out <- c(
        sparse_sgld = run(function(n) sgld(a9a$x, a9a$y, n_iter = n, batch_size = 500,
                                           metric = "identity", progress = FALSE)),
        sparse_sgldcv = run(function(n) sgldcv(a9a$x, a9a$y, n_iter = n, progress = FALSE)),
        dense_sgld = run(function(n) sgld(x, y, n_iter = n, batch_size = 500,
                                          metric = "identity", progress = FALSE)),
        dense_sgldcv = run(function(n) sgldcv(x, y, n_iter = n, progress = FALSE)),
        dense_sgfs = run(function(n) sgfs(x, y, n_iter = n, batch_size = 500, progress = FALSE),
                         5000),
        poisson_sgld = run(function(n) sgld(x, counts, family = poisson(), n_iter = n,
                                            batch_size = 500, metric = "identity",
                                            progress = FALSE)))
    cat(paste(names(out), signif(out, 6), sep = "=", collapse = " "), "\n")
    quit(save = "no")
}
before <- normalizePath(args[1])
after <- normalizePath(args[2])
pairs <- if (length(args) > 2L) as.integer(args[3]) else 5L
label <- if (length(args) > 3L) args[4] else "refactor"
here <- if (dir.exists("bench")) "bench" else "."
data <- normalizePath(file.path(here, "..", "..", "shared", "datasets", "a9a.xz"))
if (!file.exists(data)) data <- normalizePath(file.path("..", "shared", "datasets", "a9a.xz"))
script <- normalizePath(file.path(here, "bench_versions.R"))
one <- function(lib) {
    line <- system2(file.path(R.home("bin"), "Rscript"), c(script, "--child", lib, data),
                    stdout = TRUE, env = "OPENBLAS_NUM_THREADS=1")
    kv <- strsplit(strsplit(trimws(utils::tail(line, 1L)), " ")[[1]], "=")
    stats::setNames(as.numeric(vapply(kv, `[`, "", 2L)), vapply(kv, `[`, "", 1L))
}
b <- a <- NULL
for (k in seq_len(pairs)) {
    b <- rbind(b, one(before))
    a <- rbind(a, one(after))
}
ratio <- a / b
fmt <- function(v) formatC(v, digits = 3, format = "g")
rows <- sprintf("| %s | %s | %s | %s (%s-%s) |", colnames(b), fmt(apply(b, 2, stats::median)),
                fmt(apply(a, 2, stats::median)), fmt(apply(ratio, 2, stats::median)),
                fmt(apply(ratio, 2, min)), fmt(apply(ratio, 2, max)))
lines <- c(sprintf("# Two versions side by side (bench/bench_versions.R, %s)", label), "",
           sprintf("`Rscript bench/bench_versions.R %s %s %d %s`; %d alternating pairs of R processes, OpenBLAS on one thread (%s); the C loop's microseconds per iteration, medians, and the median (range) of the pairs' ratios after / before.",
                   args[1], args[2], pairs, label, pairs, sessionInfo()$BLAS),
           "", "| workload | before, us/iter | after, us/iter | after / before |",
           "|---|---:|---:|---:|", rows)
writeLines(lines)
writeLines(lines, file.path(here, "results", sprintf("versions-%s.md", label)))
