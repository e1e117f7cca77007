## loo() and loo_subsample() on large logistic fits (issue 39): a simulated
## logistic regression of N rows and 10 predictors fitted by sgldcv() at its
## defaults (one chain), then in a fresh R process each of: the fit alone,
## the fit and loo(fit), the fit and loo_subsample(fit) (400 rows, plpd);
## per step its wall time and the process's peak resident memory (VmHWM),
## so that a step's memory is its peak minus the fit's; and the elpd
## estimates, whose difference is compared with loo_subsample()'s
## subsampling standard error.
##
##   R_LIBS=/tmp/benchlib OPENBLAS_NUM_THREADS=1 Rscript bench/bench_loo.R [N ...]
##
## (default N: 1e5 and 1e6).  Writes bench/results/loo.md and loo.csv.

args <- commandArgs(TRUE)
sizes <- if (length(args)) as.numeric(args) else c(1e5, 1e6)
out_dir <- file.path(if (dir.exists("bench")) "bench" else ".", "results")

one_step <- function(N, step) {
    code <- sprintf('
        suppressPackageStartupMessages(library(sgfs))
        hwm <- function() as.numeric(gsub("[^0-9]", "", grep("VmHWM", readLines("/proc/self/status"),
                                                              value = TRUE))) / 1024
        N <- %.0f
        set.seed(39)
        x <- matrix(rnorm(N * 10), N)
        y <- rbinom(N, 1, plogis(x %%*%% seq(-1, 1, length.out = 10)))
        t_fit <- system.time(fit <- sgldcv(x, y, family = binomial(), progress = FALSE,
                                           verbose = FALSE))[["elapsed"]]
        S <- coda::niter(fit) * coda::nchain(fit)
        step <- "%s"
        est <- c(NA, NA, NA)
        t <- system.time(if (step == "loo") {
            l <- loo::loo(fit)
            est <- c(l$estimates["elpd_loo", ], NA)
        } else if (step == "loo_subsample") {
            set.seed(1)
            l <- loo::loo_subsample(fit, observations = 400)
            est <- l$estimates["elpd_loo", c("Estimate", "SE", "subsampling SE")]
        })[["elapsed"]]
        cat("RESULT", t_fit, S, t, hwm(), est, "\\n")', N, step)
    out <- system2(file.path(R.home("bin"), "Rscript"), c("-e", shQuote(code)), stdout = TRUE)
    r <- suppressWarnings(as.numeric(strsplit(trimws(sub("^RESULT ", "", grep("^RESULT", out, value = TRUE))),
                                              " +")[[1L]]))
    data.frame(N = N, step = step, fit_s = r[1], kept_draws = r[2], seconds = r[3],
               peak_mb = r[4], elpd = r[5], se = r[6], subsampling_se = r[7])
}

rows <- list()
for (N in sizes) for (step in c("fit", "loo", "loo_subsample")) {
    rows[[length(rows) + 1L]] <- one_step(N, step)
    print(rows[[length(rows)]])
}
tab <- do.call(rbind, rows)
utils::write.csv(tab, file.path(out_dir, "loo.csv"), row.names = FALSE)

md <- c("# loo() and loo_subsample() at large N (bench/bench_loo.R)", "",
        sprintf("A simulated logistic regression of N rows and 10 predictors, fitted by sgldcv() at its defaults (one chain; its kept draws below), each step in a fresh R process: its wall time and the peak resident memory of the process (VmHWM, the fit's included: the fit alone is the first row of each N).  loo() and loo_subsample() read 4,000 draws (their default); loo_subsample() 400 rows and the plpd approximation.  BLAS: %s; loo %s; %s.",
                sgfs:::blas_label(), utils::packageVersion("loo"), format(Sys.time(), "%Y-%m-%d %H:%M")), "",
        "| N | step | kept draws | seconds | peak MB | elpd_loo | SE | subsampling SE |",
        "|---:|---|---:|---:|---:|---:|---:|---:|",
        with(tab, sprintf("| %s | %s | %d | %.1f | %.0f | %s | %s | %s |", format(N, big.mark = ",", scientific = FALSE),
                          ifelse(step == "fit", "fit alone", paste0(step, "()")),
                          kept_draws, ifelse(step == "fit", fit_s, seconds), peak_mb,
                          ifelse(is.na(elpd), "", sprintf("%.1f", elpd)),
                          ifelse(is.na(se), "", sprintf("%.1f", se)),
                          ifelse(is.na(subsampling_se), "", sprintf("%.2f", subsampling_se)))), "")
for (N in sizes) {
    a <- tab[tab$N == N & tab$step == "loo", ]
    b <- tab[tab$N == N & tab$step == "loo_subsample", ]
    if (nrow(a) && nrow(b) && is.finite(a$elpd))
        md <- c(md, sprintf("N = %s: loo_subsample()'s elpd_loo minus loo()'s: %+.2f, %.2f subsampling SEs (%.2f of loo()'s SE); loo_subsample() %.0f x faster.",
                            format(N, big.mark = ",", scientific = FALSE), b$elpd - a$elpd,
                            abs(b$elpd - a$elpd) / b$subsampling_se, abs(b$elpd - a$elpd) / a$se,
                            a$seconds / b$seconds), "")
}
writeLines(md, file.path(out_dir, "loo.md"))
cat(md, sep = "\n")
