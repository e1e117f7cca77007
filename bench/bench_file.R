## A design file larger than memory: per-iteration time of sgld() sampling
## from it against the same shape in memory.
##
##   Rscript bench/bench_file.R [rows] [dir] [precision]
##
## rows: the file's rows (default 7e7 doubles or 1.4e8 singles: 50 columns,
## 26.1 GiB, more than this machine's 24 GiB of memory); dir: where to write it
## (default tempdir(); it needs rows x 800 bytes free while the shuffle
## runs: the file and its buckets); precision: "double" (default) or
## "single" (write_design_file(precision = "single"): 4 bytes a value, half
## the reads an iteration; results in bench/results/file-single.md).  The file is written in chunks of 10^6
## rows (the whole design is never in memory), its rows put in random order
## by shuffle_design_file() (in place), sampled from, and deleted.  In
## memory: 2e6 rows of the same shape.  Every fit starts at the same point
## with the same step size (no set-up passes), batch 500, and runs the same
## number of iterations; the per-iteration time is the sampling phase's
## (attr(fit, "sgfit")$elapsed / n_iter).
##
## In memory: a copy's random rows; the default (the matrix read in place,
## laid out as the engine's rows); and the copy's default minibatches
## (from 10,000 rows, distinct blocks of consecutive rows of a copy in a
## random order), the reference: the fastest in memory.
## Rows of the file, read:
##   windows, warm    the default for a shuffled file: each minibatch a
##                    window of 500 consecutive rows, asked of the disk 32
##                    iterations ahead; the page cache as the shuffle left it
##   windows, cold    the same after the page cache is emptied (as root:
##                    /proc/sys/vm/drop_caches), so that nearly every window
##                    is read from the disk: a file much larger than memory
##   rows, warm       options(sgfs.batches = "rows"): 500 rows drawn one by
##                    one, a disk read for each not in memory
## Writes bench/results/file.md.
suppressMessages(library(sgfs))
args <- commandArgs(trailingOnly = TRUE)
precision <- if (length(args) >= 3L) match.arg(args[3], c("double", "single")) else "double"
rows <- if (length(args) >= 1L && args[1] != "") as.numeric(args[1]) else
    if (precision == "double") 7e7 else 1.4e8
dir <- if (length(args) >= 2L && args[2] != "") args[2] else tempdir()
result_file <- if (precision == "double") "bench/results/file.md" else "bench/results/file-single.md"
P <- 50L
chunk <- 1e6
n_iter <- as.integer(Sys.getenv("BENCH_ITER", "20000"))
beta <- c(-0.5, withr::with_seed(1, rnorm(P, sd = 0.3)))

make_chunk <- function(k, m) {
    set.seed(100 + k)
    ## rows in an order that matters: sorted by the response within a chunk
    x <- matrix(rnorm(m * P), m, P, dimnames = list(NULL, paste0("x", seq_len(P))))
    y <- rbinom(m, 1, plogis(beta[1] + drop(x %*% beta[-1])))
    o <- order(y)
    list(x = x[o, , drop = FALSE], y = y[o])
}

path <- file.path(dir, "bench_file.sgd")
y <- integer(rows)
t_write <- system.time({
    for (k in seq_len(ceiling(rows / chunk))) {
        m <- min(chunk, rows - (k - 1) * chunk)
        ch <- make_chunk(k, m)
        write_design_file(ch$x, path, append = k > 1L, precision = precision)
        y[(k - 1) * chunk + seq_len(m)] <- ch$y
        rm(ch)
    }
})[["elapsed"]]
gib <- file.size(path) / 2^30
cat(sprintf("file: %s rows x %d (%s), %.1f GiB, written in %.0f s\n", format(rows, big.mark = ","),
            P, precision, gib, t_write))
set.seed(2)
t_shuffle <- system.time(s <- shuffle_design_file(path, path, y = y))[["elapsed"]]
xf <- s$x
y <- s$y
rm(s)
invisible(gc())
cat(sprintf("shuffled in %.0f s\n", t_shuffle))

run <- function(x, y) {
    sgld(x, y, init = c(beta[1], beta[-1]), stepsize = 2e-8, metric = "identity",
         n_iter = n_iter, batch_size = 500L, progress = FALSE, max_time = 3600)
}
drop_caches <- function() {
    system("sync")
    ok <- tryCatch({ cat("3\n", file = "/proc/sys/vm/drop_caches"); TRUE },
                   error = function(e) FALSE, warning = function(w) FALSE)
    if (!ok) cat("(could not empty the page cache: not root)\n")
    ok
}
## The disk's own sequential read rate, measured in this run: `dd` reading
## 4 GiB of the file in 4 MiB requests, bypassing the page cache
## (iflag=direct), to set the file's per-iteration time against what the
## disk gives (an iteration reads batch x P x bytes from it)
disk_rate <- function(from) {
    skip <- floor(from * file.size(path) / 2^22)
    out <- suppressWarnings(system2("dd", c(paste0("if=", path), "of=/dev/null", "bs=4M", "count=1024",
                                            paste0("skip=", skip), "iflag=direct"),
                                    stdout = TRUE, stderr = TRUE))
    line <- grep("copied", out, value = TRUE)
    bytes <- as.numeric(sub("^([0-9]+) bytes.*", "\\1", line))
    secs <- as.numeric(sub(".*copied, ([0-9.]+) s.*", "\\1", line))
    if (length(secs) != 1L || is.na(secs) || is.na(bytes)) return(NA_real_)
    bytes / secs
}
disk <- c(before = disk_rate(0.1))
fits <- list()
label <- sprintf("design file (%s), %.1f GiB, ", precision, gib)
## (the shuffle's writes flushed first: their writeback competes with the
## reads, and made a warm run slower than a cold one, 90 against 49 us)
system("sync")
fits[[paste0(label, "windows (default), warm cache")]] <- attr(run(xf, y), "sgfit")
if (drop_caches())
    fits[[paste0(label, "windows (default), cold cache")]] <- attr(run(xf, y), "sgfit")
disk[["after"]] <- disk_rate(0.5)
fits[[paste0(label, "rows (sgfs.batches = \"rows\"), warm cache")]] <-
    attr(withr::with_options(list(sgfs.batches = "rows"), run(xf, y)), "sgfit")
rm(y)
unlink(path)                  # (the file's space back before the in-memory run)
invisible(gc())
mem <- make_chunk(1, 2e6)
## in memory: the reference is the engine's copy, the fastest (the default
## reads the matrix in place, laid out as the copy's rows, each value
## standardised as it is read)
copy <- list(sgfs.in_place = FALSE)
fits[["in memory, 2e6 rows, a copy, random rows (sgfs.batches = \"rows\")"]] <-
    attr(withr::with_options(c(copy, sgfs.batches = "rows"), run(mem$x, mem$y)), "sgfit")
fits[["in memory, 2e6 rows, the matrix in place (the default)"]] <- attr(run(mem$x, mem$y), "sgfit")
mem_fit <- attr(withr::with_options(copy, run(mem$x, mem$y)), "sgfit")
fits[["in memory, 2e6 rows, a copy (blocks of its shuffled rows)"]] <- mem_fit
us <- vapply(fits, function(info) 1e6 * info$elapsed / n_iter, 0)
ref <- us[length(us)]
tab <- data.frame(data = names(fits), rows = c(rep(rows, length(fits) - 3L), 2e6, 2e6, 2e6),
                  setup_s = round(vapply(fits, function(i) i$setup_seconds, 0), 1),
                  us_per_iter = round(us), ratio = round(us / ref, 2), row.names = NULL)
print(tab)
## what the disk gave in this run: dd's rate, and the windows' own rate
## (the bytes an iteration reads over its time: the reads of 32 windows in
## flight can come faster than one sequential stream)
disk_line <- function() {
    iter_bytes <- 500 * P * if (precision == "double") 8 else 4
    if (anyNA(disk)) return("(the disk's rate could not be measured: dd failed)")
    windows <- us[grepl("windows", names(us))]
    sprintf(paste("The disk, measured in this run (dd: 4 GiB of the file in 4 MiB direct reads, before the warm run and after the cold one): %s GB/s;",
                  "at that rate an iteration's %.0f kB take %s us (%s x the copy's time).",
                  "The file's windows came at %s GB/s (warm and cold: an iteration's bytes over its time)."),
            paste(sprintf("%.2f", disk / 1e9), collapse = " and "), iter_bytes / 1e3,
            paste(sprintf("%.0f", 1e6 * iter_bytes / disk), collapse = " and "),
            paste(sprintf("%.2f", 1e6 * iter_bytes / disk / ref), collapse = " and "),
            paste(sprintf("%.2f", iter_bytes / windows / 1e3), collapse = " and "))
}
blas <- sgfs:::blas_label()
out <- c("# A design file larger than memory (bench/bench_file.R)", "",
         sprintf("%s; BLAS: %s; sgld(), batch 500, %d iterations from the same start with the same step size;",
                 format(Sys.Date()), blas, n_iter),
         sprintf("the file written in chunks of 10^6 rows in %.0f s, its rows shuffled in place by shuffle_design_file() in %.0f s (disk needed: %.1f GiB for the file and as much again while it is shuffled; deleted after); %.1f GiB of memory.",
                 t_write, t_shuffle, gib, sgfs:::physical_memory() / 2^30),
         "", knitr::kable(tab), "",
         sprintf("Per-iteration time on the shuffled file at the defaults: %s x the in-memory copy's for the same shape; %s x the in-memory default's (the matrix in place).",
                 paste(sprintf("%.2f", tab$ratio[grepl("windows", tab$data)]), collapse = " (warm) and "),
                 paste(sprintf("%.2f", us[grepl("windows", names(us))] /
                                   us[grepl("in place", names(us))]), collapse = " and ")),
         "(cold: after the page cache was emptied)",
         disk_line())
dir.create(dirname(result_file), showWarnings = FALSE, recursive = TRUE)
writeLines(out, result_file)
cat(out, sep = "\n")
