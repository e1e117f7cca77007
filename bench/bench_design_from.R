## design_from() on a CSV file (issue 39): a CSV of N rows (a binary
## response, 8 numeric columns and two factors of 5 and 50 levels, the
## second's last levels first seen late in the file) turned into a design
## file in chunks of 1e5 rows, then shuffled, then fitted by sgldcv(); each
## step in a fresh R process: its wall time and the process's peak resident
## memory (VmHWM), against reading the whole CSV with read.csv() and
## coding it with model.matrix(), which is what memory would have to hold
## otherwise.
##
##   R_LIBS=/tmp/benchlib OPENBLAS_NUM_THREADS=1 Rscript bench/bench_design_from.R [N]
##
## (default N = 5e6).  Writes bench/results/design-from.md.

args <- commandArgs(TRUE)
N <- if (length(args)) as.numeric(args[1]) else 5e6
out_dir <- file.path(if (dir.exists("bench")) "bench" else ".", "results")
work <- tempfile("design-from")
dir.create(work)
on.exit(unlink(work, recursive = TRUE), add = TRUE)
csv <- file.path(work, "big.csv")

## the CSV, written in chunks
local({
    set.seed(39)
    beta <- seq(-1, 1, length.out = 8)
    con <- file(csv, "w")
    on.exit(close(con))
    step <- 5e5
    for (start in seq(1, N, by = step)) {
        n <- min(step, N - start + 1)
        x <- matrix(round(rnorm(n * 8), 6), n, dimnames = list(NULL, paste0("x", 1:8)))
        late <- start > N / 2
        f <- sample(letters[1:5], n, replace = TRUE)
        g <- sprintf("g%02d", sample(if (late) 50 else 40, n, replace = TRUE))
        eta <- drop(x %*% beta) + (f == "b") - 0.5 * (g == "g45")
        d <- data.frame(y = rbinom(n, 1, plogis(eta)), x, f = f, g = g)
        utils::write.table(d, con, sep = ",", row.names = FALSE, col.names = start == 1)
    }
})

one_step <- function(step) {
    code <- sprintf('
        suppressPackageStartupMessages(library(sgfs))
        hwm <- function() as.numeric(gsub("[^0-9]", "", grep("VmHWM", readLines("/proc/self/status"),
                                                              value = TRUE))) / 1024
        step <- "%s"; csv <- "%s"; work <- "%s"
        t <- system.time(if (step == "design_from") {
            d <- design_from(y ~ ., csv, file.path(work, "big.sgd"), chunk_rows = 1e5)
            saveRDS(d$y, file.path(work, "y0.rds"))
        } else if (step == "shuffle") {
            s <- shuffle_design_file(file.path(work, "big.sgd"), file.path(work, "big-shuffled.sgd"),
                                     y = readRDS(file.path(work, "y0.rds")))
            saveRDS(list(y = s$y, cols = ncol(as.matrix(s$x[1:2, ]))), file.path(work, "y.rds"))
        } else if (step == "fit") {
            s <- readRDS(file.path(work, "y.rds"))
            fit <- sgldcv(design_file(file.path(work, "big-shuffled.sgd")), s$y, progress = FALSE,
                          verbose = FALSE, seed = 1)
            cat("ESS", round(min(coda::effectiveSize(fit))), "\\n")
        } else {
            d <- utils::read.csv(csv)
            x <- model.matrix(y ~ ., d)
        })[["elapsed"]]
        cat("RESULT", t, hwm(), "\\n")', step, csv, work)
    out <- system2(file.path(R.home("bin"), "Rscript"), c("-e", shQuote(code)), stdout = TRUE)
    r <- as.numeric(strsplit(trimws(sub("^RESULT ", "", grep("^RESULT", out, value = TRUE))), " +")[[1L]])
    data.frame(step = step, seconds = r[1], peak_mb = r[2],
               note = paste(grep("^ESS", out, value = TRUE), collapse = ""))
}

tab <- do.call(rbind, lapply(c("design_from", "shuffle", "fit", "read.csv"), one_step))
print(tab)
csv_mb <- file.size(csv) / 2^20
sgd_mb <- file.size(file.path(work, "big-shuffled.sgd")) / 2^20
labels <- c(design_from = "design_from() in chunks of 1e5 rows",
            shuffle = "shuffle_design_file() (its default memory, 1 GiB of rows)",
            fit = "sgldcv() on the shuffled design file at its defaults",
            read.csv = "read.csv() of the whole file and model.matrix() (the in-memory way)")
md <- c("# A design file from a CSV file in chunks (bench/bench_design_from.R)", "",
        sprintf("A CSV file of %s rows (a binary response, 8 numeric columns, factors of 5 and 50 levels, 10 of the latter first seen in the file's second half): %.0f MB; the design file (%d columns of doubles) %.0f MB.  Each step in a fresh R process: wall time and peak resident memory (VmHWM).  BLAS: %s; %s.",
                format(N, big.mark = ",", scientific = FALSE), csv_mb,
                readRDS(file.path(work, "y.rds"))$cols, sgd_mb, sgfs:::blas_label(), format(Sys.time(), "%Y-%m-%d %H:%M")), "",
        "(The fit's peak counts the pages of the mapped design file it touched.)", "",
        "| step | seconds | peak MB | |", "|---|---:|---:|---|",
        sprintf("| %s | %.1f | %.0f | %s |", labels[tab$step], tab$seconds, tab$peak_mb, tab$note), "")
writeLines(md, file.path(out_dir, "design-from.md"))
cat(md, sep = "\n")
