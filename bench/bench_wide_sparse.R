#!/usr/bin/env Rscript
## bench/bench_wide_sparse.R - a sparse logistic regression too wide to
## densify: N rows, P binary features, `nnz` non-zeros a row (the features'
## popularity skewed, Beta(0.6, 3), as words in text), a sparse truth (10 %
## of the coefficients non-zero, sd 0.3).  Its dense copy would take
## 8 N P bytes (800 GB at the defaults); sgld() and sgldcv() sample it from
## compressed rows at their defaults (one chain, n_iter and thin given so
## that 100 draws of the P + 1 parameters are kept).
##
##   R_LIBS=<lib> Rscript bench/bench_wide_sparse.R [--N=1000000] [--P=100000]
##       [--nnz=20] [--iter=4000] [--sampler=sgld]     (one sampler a run)
##
## Reports the set-up and sampling times, the per-iteration time, the
## memory peak of the process (VmHWM) and the share of the truth's non-zero
## coefficients whose 90 % interval covers them, to
## bench/results/wide-sparse.md (one row appended per run).

suppressPackageStartupMessages(library(sgfs))
opt <- list(N = 1e6, P = 1e5, nnz = 20, iter = 4000, sampler = "sgld")
for (a in commandArgs(trailingOnly = TRUE)) {
    kv <- regmatches(a, regexec("^--([a-zA-Z]+)=(.*)$", a))[[1]]
    if (!length(kv)) stop("unknown argument ", a, call. = FALSE)
    opt[[kv[2]]] <- if (kv[2] == "sampler") kv[3] else as.numeric(kv[3])
}
here <- function() {
    f <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
    if (length(f)) dirname(normalizePath(f[1])) else file.path(getwd(), "bench")
}
peak_mb <- function() {
    s <- readLines("/proc/self/status")
    as.numeric(gsub("[^0-9]", "", grep("^VmHWM", s, value = TRUE))) / 1024
}

N <- as.integer(opt$N); P <- as.integer(opt$P); k <- as.integer(opt$nnz)
t_gen <- system.time({
    set.seed(1)
    j <- pmax(1L, pmin(P, as.integer(ceiling(P * stats::rbeta(N * k, 0.6, 3)))))
    x <- Matrix::sparseMatrix(i = rep(seq_len(N), each = k), j = j, x = 1, dims = c(N, P))
    rm(j)
    x@x[] <- 1                            # (repeated features of a row: a 0/1 design)
    x <- x[, Matrix::colSums(x) > 0]
    truth <- stats::rnorm(ncol(x), sd = 0.3) * stats::rbinom(ncol(x), 1, 0.1)
    y <- stats::rbinom(N, 1, stats::plogis(-1 + as.vector(x %*% truth)))
})[["elapsed"]]
gen_peak <- peak_mb()
fun <- get(opt$sampler, asNamespace("sgfs"))
thin <- max(1L, as.integer(opt$iter %/% 100))
t_fit <- system.time(fit <- fun(x, y, n_iter = opt$iter, burnin = opt$iter %/% 2, thin = thin,
                                progress = FALSE, verbose = FALSE))[["elapsed"]]
info <- attr(fit, "sgfit")
d <- as.matrix(fit)
lo <- apply(d, 2, stats::quantile, 0.05)
hi <- apply(d, 2, stats::quantile, 0.95)
nz <- which(truth != 0) + 1L                   # (column 1: the intercept)
cover <- mean(truth[nz - 1L] >= lo[nz] & truth[nz - 1L] <= hi[nz])
row <- sprintf("| %s | %s x %s, %d a row | %.0f | %.0f | %.0f | %s | %.2f | %.0f | %.2f | %s |",
               opt$sampler, format(N, big.mark = ","), format(ncol(x), big.mark = ","), k,
               t_gen, t_fit - info$elapsed, info$elapsed, format(opt$iter, big.mark = ","),
               1e3 * info$elapsed / opt$iter, peak_mb(), cover,
               info$settings$metric)
dir.create(file.path(here(), "results"), showWarnings = FALSE, recursive = TRUE)
file <- file.path(here(), "results", "wide-sparse.md")
if (!file.exists(file))
    writeLines(c("# A sparse logistic regression too wide to densify", "",
                 "`R_LIBS=<lib> Rscript bench/bench_wide_sparse.R --sampler=<s>` (defaults N = 10^6,",
                 "P = 10^5, 20 non-zeros a row; one chain, 100 draws kept).  Times in seconds",
                 "(set-up: design, mode, curvature, checks); peak: the process's resident",
                 "memory at its highest (VmHWM), the simulated data included; cover: the share",
                 "of the truth's non-zero coefficients inside the 90 % interval.",
                 sprintf("BLAS: %s.", sgfs:::blas_label()), "",
                 "| sampler | data | generate, s | set-up, s | sampling, s | iterations | ms/iter | peak, MB | cover | metric |",
                 "|---|---|---:|---:|---:|---:|---:|---:|---:|---|"), file)
cat(row, "\n", file = file, append = TRUE)
cat(row, "\n")
cat(sprintf("data peak %.0f MB; x %.0f MB\n", gen_peak, as.double(object.size(x)) / 2^20))
