## Memory of a run that keeps its posterior predictive (keep =
## predictive(newdata)) against one that keeps every draw (issue 4): the
## peak resident memory (VmHWM) of a fresh R process running SGLD on a
## network with D = 2,201 parameters (20 inputs, 100 tanh units, binomial
## output), 5,000 training and 2,000 predicted rows, for a growing n_iter.
##
##   R_LIBS=/tmp/benchlib Rscript bench/bench_predictive_memory.R
##
## Writes bench/results/predictive-memory.md.

out_dir <- file.path(if (dir.exists("bench")) "bench" else ".", "results")
one_run <- function(keep, n_iter) {
    code <- sprintf('
        suppressPackageStartupMessages(library(sgfs))
        set.seed(1)
        x <- matrix(rnorm(5000 * 20), 5000, 20)
        y <- rbinom(5000, 1, plogis(sin(x[, 1]) + x[, 2] * x[, 3]))
        newx <- matrix(rnorm(2000 * 20), 2000, 20)
        keep <- if ("%s" == "draws") "draws" else predictive(newx)
        fit <- suppressWarnings(sgld(x, y, model = mlp(100), n_iter = %d, burnin = 0,
                                     batch_size = 100, keep = keep, init = NULL,
                                     stepsize = 1e-5))
        hwm <- grep("VmHWM", readLines("/proc/self/status"), value = TRUE)
        cat(as.numeric(gsub("[^0-9]", "", hwm)) / 1024, coda::nvar(fit), "\n")',
        keep, as.integer(n_iter))
    out <- system2(file.path(R.home("bin"), "Rscript"), c("-e", shQuote(code)), stdout = TRUE)
    as.numeric(strsplit(trimws(utils::tail(out, 1L)), " ")[[1L]])
}
rows <- list()
for (n_iter in c(1000, 5000, 20000)) for (keep in c("draws", "predictive")) {
    r <- one_run(keep, n_iter)
    rows[[length(rows) + 1L]] <- data.frame(keep = keep, n_iter = n_iter, peak_mb = r[1],
                                            kept_columns = r[2])
    print(rows[[length(rows)]])
}
tab <- do.call(rbind, rows)
md <- c("# Memory of keep = predictive() (bench/bench_predictive_memory.R)", "",
        "SGLD on a 20-100-1 tanh network (D = 2,201), 5,000 rows, every iteration kept (burn-in 0); with keep = predictive(newx) each kept draw adds its predictive on 2,000 rows. Peak resident memory of the whole R process (VmHWM).", "",
        "| keep | n_iter | peak MB | columns kept |", "|---|---|---|---|",
        sprintf("| %s | %d | %.0f | %d |", tab$keep, tab$n_iter, tab$peak_mb, tab$kept_columns))
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
writeLines(md, file.path(out_dir, "predictive-memory.md"))
cat(md, sep = "\n")
