## bench/bench_in_place.R - the matrix read in place against the engine's
## copy: microseconds per iteration of sgfs(), sgld() and sgldcv() at their
## defaults on simulated logistic data (N x P doubles), 2,000 iterations,
## medians of `reps` interleaved repetitions (the C loop's time,
## attr(fit, "sgfit")$elapsed; the set-up's full-data passes excluded).
##
##   Rscript bench/bench_in_place.R [N] [P] [reps]
##
## Writes bench/results-in-place.md.
suppressMessages(library(sgfs))
args <- commandArgs(trailingOnly = TRUE)
N <- if (length(args) >= 1L) as.numeric(args[1]) else 2e6
P <- if (length(args) >= 2L) as.integer(args[2]) else 50L
reps <- if (length(args) >= 3L) as.integer(args[3]) else 3L
n_iter <- 2000L
set.seed(1)
x <- matrix(rnorm(N * P), N, P, dimnames = list(NULL, paste0("x", seq_len(P))))
y <- rbinom(N, 1, plogis(x[, 1] - x[, 2]))
time_one <- function(f, in_place)
    withr::with_options(list(sgfs.in_place = in_place), withr::with_seed(2, {
        fit <- suppressWarnings(f(x, y, n_iter = n_iter, progress = FALSE, verbose = FALSE))
        1e6 * attr(fit, "sgfit")$elapsed / n_iter
    }))
rows <- list()
for (name in c("sgfs", "sgld", "sgldcv")) {
    f <- get(name, envir = asNamespace("sgfs"))
    us <- matrix(NA_real_, reps, 2, dimnames = list(NULL, c("copy", "in_place")))
    for (r in seq_len(reps))
        for (m in if (r %% 2L) c("copy", "in_place") else c("in_place", "copy"))
            us[r, m] <- time_one(f, m == "in_place")
    rows[[name]] <- data.frame(sampler = paste0(name, "()"), copy_us = round(median(us[, 1])),
                               in_place_us = round(median(us[, 2])),
                               ratio = round(median(us[, 2] / us[, 1]), 2))
    print(rows[[name]])
}
tab <- do.call(rbind, rows)
out <- c("# The matrix in place against the engine's copy (bench/bench_in_place.R)", "",
         sprintf("%s; BLAS: %s; N = %s, P = %d, simulated logistic data; %d iterations at each sampler's defaults; medians of %d interleaved repetitions (ratio: median of the per-repetition ratios); microseconds per iteration of the C loop.",
                 format(Sys.Date()), sgfs:::blas_label(), format(N, big.mark = ","), P, n_iter, reps),
         "", knitr::kable(tab, row.names = FALSE), "",
         paste("In place, a random row is P scattered reads (R keeps a matrix by columns); the copy",
               "holds its rows in a random order, so that a minibatch is a few windows of consecutive",
               "rows read as contiguous blocks (R/data-access.R, shuffled_copy()), which the user's",
               "matrix, in the user's order, cannot be.  In place the fit adds no copy of the data",
               "(bench/results-memory.md): by default it reads in place only when the copy would take",
               "more than a quarter of the machine's memory."))
writeLines(out, "bench/results-in-place.md")
cat(out, sep = "\n")
