## A design file larger than memory: per-iteration time of sgld() sampling
## from it against the same shape in memory.
##
##   Rscript bench/bench_file.R [rows] [dir]
##
## rows: the file's rows (default 7e7: 50 columns of doubles, 26.1 GiB,
## more than this machine's 24 GiB of memory); dir: where to write it
## (default tempdir(); it needs rows x 400 bytes free).  The file is
## written in chunks of 10^6 rows (the whole design is never in memory),
## timed, sampled from, and deleted.  In memory: 2e6 rows of the same
## shape.  Both fits start at the same point with the same step size
## (the set-up's full-data passes are timed separately), batch 500, and
## run the same number of iterations; the per-iteration time is the
## sampling phase's (attr(fit, "sgfit")$elapsed / n_iter).  Writes
## bench/results-file.md.
suppressMessages(library(sgfs))
args <- commandArgs(trailingOnly = TRUE)
rows <- if (length(args) >= 1L) as.numeric(args[1]) else 7e7
dir <- if (length(args) >= 2L) args[2] else tempdir()
P <- 50L
chunk <- 1e6
n_iter <- as.integer(Sys.getenv("BENCH_ITER", "20000"))
beta <- c(-0.5, withr::with_seed(1, rnorm(P, sd = 0.3)))

make_chunk <- function(k, m) {
    set.seed(100 + k)
    x <- matrix(rnorm(m * P), m, P, dimnames = list(NULL, paste0("x", seq_len(P))))
    y <- rbinom(m, 1, plogis(beta[1] + drop(x %*% beta[-1])))
    list(x = x, y = y)
}

path <- file.path(dir, "bench_file.sgd")
y_path <- paste0(path, ".y.rds")
if (Sys.getenv("BENCH_KEEP") != "1") on.exit(unlink(c(path, y_path)), add = TRUE)
t_write <- NA
if (!file.exists(y_path) || design_file(path)$N != rows) {
    y <- integer(0)
    t_write <- system.time({
        for (k in seq_len(ceiling(rows / chunk))) {
            m <- min(chunk, rows - (k - 1) * chunk)
            ch <- make_chunk(k, m)
            write_design_file(ch$x, path, append = k > 1L)
            y <- c(y, ch$y)
            rm(ch)
        }
    })[["elapsed"]]
    saveRDS(y, y_path)
} else y <- readRDS(y_path)
xf <- design_file(path)
gib <- file.size(path) / 2^30
cat(sprintf("file: %s rows x %d, %.1f GiB, written in %.0f s\n", format(rows, big.mark = ","),
            P, gib, t_write))

run <- function(x, y) {
    sgld(x, y, init = c(beta[1], beta[-1]), stepsize = 2e-8, metric = "identity",
         n_iter = n_iter, batch_size = 500L, progress = FALSE, max_time = 3600)
}
## the file with the default prefetching (on when the file is larger than
## half the memory) and with the other setting
auto <- sgfs:::file_prefetch_default(xf)
fits <- list()
for (pf in c(auto, !auto)) {
    f <- withr::with_options(list(sgfs.file_prefetch = pf), run(xf, y))
    fits[[sprintf("design file, %.1f GiB, prefetch %s%s", gib, if (pf) "on" else "off",
                  if (pf == auto) " (default)" else "")]] <- attr(f, "sgfit")
}
rm(y)
invisible(gc())
mem <- make_chunk(1, 2e6)
fits[["in memory, 2e6 rows"]] <- attr(run(mem$x, mem$y), "sgfit")
us <- vapply(fits, function(info) 1e6 * info$elapsed / n_iter, 0)
tab <- data.frame(data = names(fits), rows = c(rows, rows, 2e6),
                  setup_s = round(vapply(fits, function(i) i$setup_seconds, 0), 1),
                  us_per_iter = round(us), ratio = round(us / us[3], 2), row.names = NULL)
print(tab)
ratio <- tab$ratio[1]
blas <- sgfs:::blas_label()
out <- c("# A design file larger than memory (bench/bench_file.R)", "",
         sprintf("%s; BLAS: %s; sgld(), batch 500, %d iterations from the same start with the same step size;",
                 format(Sys.Date()), blas, n_iter),
         sprintf("the file written in chunks of 10^6 rows in %.0f s (disk needed: %.1f GiB, deleted after); %.1f GiB of memory.", t_write, gib, sgfs:::physical_memory() / 2^30),
         "", knitr::kable(tab), "",
         sprintf("Per-iteration time on the file at the defaults: %.2f x the in-memory figure for the same shape.", ratio))
writeLines(out, "bench/results-file.md")
cat(out, sep = "\n")
