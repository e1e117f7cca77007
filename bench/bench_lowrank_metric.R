#!/usr/bin/env Rscript
## bench/bench_lowrank_metric.R - a wide model's metric with and without its
## low-rank part (R/laplace.R, lowrank_metric(); src/metric.c).
##
##   R_LIBS=<lib> Rscript bench/bench_lowrank_metric.R [--N=100000] [--P=10000]
##       [--nnz=20] [--seconds=120] [--long=4]
##
## The sparse logistic regression of bench_wide_sparse.R (N rows, P binary
## features of skewed popularity, nnz a row, a sparse truth) is sampled by
## sgld() at its defaults but for the run length: each metric for about
## `seconds` of sampling (iterations from a 2,000-iteration pilot's pace),
## 1,000 draws kept.  A run with the low-rank part `long` times as long is
## the reference for the sds.  Reported: the whitened curvature's extreme
## eigenvalues before and after the correction (its stiffness sets the
## step), the step, the iterations, the smallest and median bulk ESS, the
## draws' log density below the mode against D / 2 (the check that warns
## when it is far less), the median ratio of each coordinate's sd to the
## reference's, and the share of the truth's non-zero coefficients inside
## the 90 % intervals.  Writes bench/results/lowrank-metric.md.

suppressPackageStartupMessages(library(sgfs))
opt <- list(N = 1e5, P = 1e4, nnz = 20, seconds = 120, long = 4)
for (a in commandArgs(trailingOnly = TRUE)) {
    kv <- regmatches(a, regexec("^--([a-zA-Z]+)=(.*)$", a))[[1]]
    if (!length(kv)) stop("unknown argument ", a, call. = FALSE)
    opt[[kv[2]]] <- as.numeric(kv[3])
}
here <- function() {
    f <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
    if (length(f)) dirname(normalizePath(f[1])) else file.path(getwd(), "bench")
}
N <- as.integer(opt$N); P <- as.integer(opt$P); k <- as.integer(opt$nnz)
set.seed(1)
j <- pmax(1L, pmin(P, as.integer(ceiling(P * stats::rbeta(N * k, 0.6, 3)))))
x <- Matrix::sparseMatrix(i = rep(seq_len(N), each = k), j = j, x = 1, dims = c(N, P))
rm(j)
x@x[] <- 1
x <- x[, Matrix::colSums(x) > 0]
truth <- stats::rnorm(ncol(x), sd = 0.3) * stats::rbinom(ncol(x), 1, 0.1)
y <- stats::rbinom(N, 1, stats::plogis(-1 + as.vector(x %*% truth)))

fit_with <- function(rank, n_iter) withr::with_options(list(sgfs.metric_rank = rank), {
    set.seed(2)
    suppressWarnings(sgld(x, y, n_iter = n_iter, burnin = n_iter %/% 10,
                          thin = max(1L, as.integer(0.9 * n_iter / 1000)),
                          progress = FALSE, verbose = FALSE))
})
## the whitened curvature's extremes (Lanczos, as the set-up finds them)
spectrum <- withr::with_options(list(sgfs.metric_rank = 16L), {
    run <- sgfs:::prepare_run(x, y, binomial(), NULL, NULL, NULL, 10L, 0L, 1L, 1L, 1L,
                              NULL, TRUE, FALSE, NULL, TRUE)
    lap <- sgfs:::posterior_laplace(run)
    t_lr <- system.time(lr <- sgfs:::lowrank_metric(lap))[["elapsed"]]
    list(before = sgfs:::metric_stiffness(lap), after = sgfs:::metric_stiffness(lap, lr),
         values = lr$values, seconds = t_lr)
})
pace <- function(rank) {
    f <- fit_with(rank, 2000L)
    attr(f, "sgfit")$elapsed / 2000
}
runs <- list()
for (rank in c(0L, 16L)) {
    n_iter <- as.integer(opt$seconds / pace(rank))
    runs[[as.character(rank)]] <- fit_with(rank, n_iter)
}
ref <- fit_with(16L, as.integer(opt$long * opt$seconds / pace(16L)))
ref_sd <- apply(as.matrix(ref), 2, stats::sd)
nz <- which(truth != 0) + 1L
row <- function(label, fit) {
    info <- attr(fit, "sgfit")
    d <- as.matrix(fit)
    conv <- sgfs:::convergence_table(list(d))
    gap <- sgfs:::mode_gap(fit)
    lo <- apply(d, 2, stats::quantile, 0.05)
    hi <- apply(d, 2, stats::quantile, 0.95)
    data.frame(metric = label, stepsize = signif(info$settings$stepsize, 3),
               iterations = info$n_iter, seconds = round(info$elapsed),
               min_ess = round(min(conv$ess_bulk)), median_ess = round(stats::median(conv$ess_bulk)),
               gap = round(gap$gap), expected_gap = round(gap$expected),
               sd_ratio = round(stats::median(apply(d, 2, stats::sd) / ref_sd), 2),
               cover = round(mean(truth[nz - 1L] >= lo[nz] & truth[nz - 1L] <= hi[nz]), 2))
}
tab <- rbind(row("diagonal", runs[["0"]]),
             row(attr(runs[["16"]], "sgfit")$settings$metric, runs[["16"]]),
             row(paste("reference:", attr(ref, "sgfit")$settings$metric), ref))
out <- c("# A wide model's metric with and without its low-rank part (bench/bench_lowrank_metric.R)", "",
         sprintf(paste("%s; `Rscript bench/bench_lowrank_metric.R --N=%d --P=%d --nnz=%d --seconds=%g --long=%g`;",
                       "BLAS: %s; sgld() at its defaults but for the run length, 1,000 draws kept."),
                 format(Sys.Date()), N, P, k, opt$seconds, opt$long, sgfs:::blas_label()), "",
         sprintf("Data: %s rows, %s binary features (%d a row, skewed popularity), %d parameters.",
                 format(N, big.mark = ","), format(ncol(x), big.mark = ","), k, ncol(x) + 1L),
         sprintf(paste("Whitened curvature: stiffest eigenvalue %.3g with the diagonal alone, %.3g with the",
                       "low-rank part (%d eigenvectors, eigenvalues %s; found in %.1f s)."),
                 spectrum$before, spectrum$after, length(spectrum$values),
                 paste(signif(sort(spectrum$values), 2), collapse = ", "), spectrum$seconds), "",
         knitr::kable(tab, row.names = FALSE), "",
         paste("gap: the draws' log density below the mode, on average; about D / 2 for draws of",
               "a near-Gaussian posterior.  sd_ratio: the median over parameters of the run's sd",
               "over the reference's.  cover: the share of the truth's non-zero coefficients",
               "inside the 90 % intervals."))
dir.create(file.path(here(), "results"), showWarnings = FALSE, recursive = TRUE)
writeLines(out, file.path(here(), "results", "lowrank-metric.md"))
cat(out, sep = "\n")
