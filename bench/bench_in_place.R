## bench/bench_in_place.R - the matrix read in place (the default from
## 10,000 rows when a copy would take more than 1/64 of the memory: laid
## out as the engine's rows while the fit runs, and put back after)
## against the engine's copy (options(sgfs.in_place = FALSE)):
## microseconds per iteration of sgfs(), sgld() and sgldcv() at their
## defaults on simulated logistic data (N x P doubles), 2,000 iterations,
## and the whole call's seconds (the set-up's full-data passes, the copy or
## the layout and its undoing, the post-fit checks), medians of `reps`
## interleaved repetitions.
##
##   Rscript bench/bench_in_place.R [N] [P] [reps]
##
## Writes bench/results/in-place.md.
suppressMessages(library(sgfs))
args <- commandArgs(trailingOnly = TRUE)
N <- if (length(args) >= 1L) as.numeric(args[1]) else 2e6
P <- if (length(args) >= 2L) as.integer(args[2]) else 50L
reps <- if (length(args) >= 3L) as.integer(args[3]) else 3L
n_iter <- 2000L
set.seed(1)
x <- matrix(rnorm(N * P), N, P, dimnames = list(NULL, paste0("x", seq_len(P))))
y <- rbinom(N, 1, plogis(x[, 1] - x[, 2]))
## (a fresh copy of the data for each fit: fits on the same data share the
## engine's copy while one lives)
time_one <- function(f, in_place)
    withr::with_options(list(sgfs.in_place = if (in_place) NA else FALSE), withr::with_seed(2, {
        x1 <- x + 0
        seconds <- system.time(fit <- suppressWarnings(
            f(x1, y, n_iter = n_iter, progress = FALSE, verbose = FALSE)))[["elapsed"]]
        stopifnot(identical(x1, x))
        c(us = 1e6 * attr(fit, "sgfit")$elapsed / n_iter, seconds = seconds)
    }))
rows <- list()
for (name in c("sgfs", "sgld", "sgldcv")) {
    f <- get(name, envir = asNamespace("sgfs"))
    us <- s <- matrix(NA_real_, reps, 2, dimnames = list(NULL, c("copy", "in_place")))
    for (r in seq_len(reps))
        for (m in if (r %% 2L) c("copy", "in_place") else c("in_place", "copy")) {
            t <- time_one(f, m == "in_place")
            us[r, m] <- t[["us"]]
            s[r, m] <- t[["seconds"]]
        }
    rows[[name]] <- data.frame(sampler = paste0(name, "()"), copy_us = round(median(us[, 1])),
                               in_place_us = round(median(us[, 2])),
                               ratio = round(median(us[, 2] / us[, 1]), 2),
                               copy_call_s = round(median(s[, 1]), 1),
                               in_place_call_s = round(median(s[, 2]), 1))
    print(rows[[name]])
}
tab <- do.call(rbind, rows)
out <- c("# The matrix in place against the engine's copy (bench/bench_in_place.R)", "",
         sprintf("%s; BLAS: %s; N = %s, P = %d, simulated logistic data; %d iterations at each sampler's defaults; medians of %d interleaved repetitions (ratio: median of the per-repetition ratios); microseconds per iteration of the C loop, and seconds of the whole call.",
                 format(Sys.Date()), sgfs:::blas_label(), format(N, big.mark = ","), P, n_iter, reps),
         "", knitr::kable(tab, row.names = FALSE), "",
         paste("In place, the user's matrix is laid out as the engine's rows (its rows in the",
               "engine's random order, each row's values together: src/matrix_order.c) while the",
               "fit runs, and put back after it, bit for bit (the script checks); a minibatch is",
               "then a few windows of consecutive rows, read as streams, as from the copy, each",
               "value standardised as it is read.  Outside a fit the engine reads the matrix",
               "through the order, a row's values scattered (an iteration about 12 times slower).",
               "The fit adds no copy of the data (bench/results/memory.md)."))
dir.create("bench/results", showWarnings = FALSE, recursive = TRUE)
writeLines(out, "bench/results/in-place.md")
cat(out, sep = "\n")
