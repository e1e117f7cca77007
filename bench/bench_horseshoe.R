#!/usr/bin/env Rscript
## bench/bench_horseshoe.R - the regularised horseshoe, hs(), on a simulated
## sparse logistic regression (issue 16, item 3):
##
##   N = 2,000 rows, p = 200 independent N(0, 1) predictors, 5 non-zero
##   coefficients (2, -1.5, 1, -1, 0.75), intercept -0.5, fixed seed;
##   prior hs(global_scale = p0 / (p - p0) * 2 / sqrt(N)) with p0 = 5
##   (Piironen and Vehtari's choice, noise scale 2 for a logistic model),
##   its other settings rstanarm's defaults.  403 sampled coordinates.
##
##   Rscript bench/bench_horseshoe.R [--quick] [--out=DIR] [--save-fits=DIR]
##
## --save-fits=DIR: each run's fit saved as DIR/horseshoe-<run>.rds (the
## hmc() reference for other comparisons on the same data and prior).
##
## The reference is hmc() at its defaults (mass from the horseshoe's
## warm-up), 4 chains of 150,000 iterations (burn-in 5,000, thin 10); its
## own precision is shown by the largest rank-normalised split R-hat and by
## how far its chains' pooled halves disagree.  SGLD-CV and SGLD at their
## defaults (metric "mode": the warm-up's) run 4 chains each of 400,000
## (SGLD-CV) and 2,000,000 (SGLD) iterations.  The table reports, per
## group of parameters (the intercept, the non-zero coefficients, the 195
## zero ones, their local scales, log tau, log c), the largest and median
## |difference of means| / reference sd and |sd ratio - 1| against the
## reference, and the share within 0.1 sd and 10 %.  The scales tau and c
## are compared on the log scale (c^2's Inv-Gamma(2, .) has no variance;
## lambda_j's half-Cauchy has no mean: the local scales are compared by
## their log too).  Results go to DIR/horseshoe.md (DIR = bench/results/ by
## default; tempdir() with --quick, which runs 10 times shorter chains).

suppressPackageStartupMessages(library(sgfs))
Sys.setenv(OPENBLAS_NUM_THREADS = "1")

args <- commandArgs(trailingOnly = TRUE)
quick <- "--quick" %in% args
out_dir <- sub("^--out=", "", grep("^--out=", args, value = TRUE))
if (!length(out_dir)) out_dir <- if (quick) tempdir() else file.path("bench", "results")
save_dir <- sub("^--save-fits=", "", grep("^--save-fits=", args, value = TRUE))
scale_runs <- if (quick) 0.1 else 1
cores <- min(4L, parallel::detectCores())

source("bench/sim_sparse.R")         # sim_sparse(): the horseshoe's simulated data
d <- sim_sparse()
prior <- hs(global_scale = d$tau0)

## the draws with the scales on the log scale, per chain
log_scales <- function(fit) lapply(if (inherits(fit, "mcmc.list")) unclass(fit) else list(fit),
                                   function(ch) {
    m <- as.matrix(ch)
    hs <- grepl("^hs_", colnames(m))
    m[, hs] <- log(m[, hs])
    m
})

run <- function(label, sampler, n_iter, burnin, thin, seed) {
    set.seed(seed)
    t0 <- proc.time()[["elapsed"]]
    fit <- sampler(d$x, d$y, prior = prior, n_iter = as.integer(n_iter * scale_runs),
                   burnin = as.integer(burnin * scale_runs), thin = thin, chains = 4L,
                   cores = cores, verbose = FALSE)
    info <- attr(fit, "sgfit")
    if (length(save_dir)) {
        dir.create(save_dir, showWarnings = FALSE, recursive = TRUE)
        saveRDS(fit, file.path(save_dir, sprintf("horseshoe-%s%s.rds", sub(" .*", "", label),
                                                 if (quick) "-quick" else "")))
    }
    message(sprintf("%s: %.0f s wall (set-up %.1f s), step %s", label,
                    proc.time()[["elapsed"]] - t0, info$setup_seconds,
                    paste(signif(unique(info$eps), 3), collapse = ", ")))
    list(label = label, chains = log_scales(fit), seconds = proc.time()[["elapsed"]] - t0,
         rhat = max(sgfs:::convergence_table(unclass(fit))$rhat, na.rm = TRUE),
         ess = min(sgfs:::convergence_table(unclass(fit))$ess_bulk, na.rm = TRUE))
}

ref <- run("hmc (reference)", hmc, 150000, 5000, 10L, 1)
fits <- list(run("sgldcv", sgldcv, 400000, 20000, 40L, 2),
             run("sgld", sgld, 2000000, 100000, 200L, 3))

R <- do.call(rbind, ref$chains)
m0 <- colMeans(R)
s0 <- apply(R, 2, sd)
nm <- colnames(R)
group <- ifelse(grepl("^hs_lambda", nm), "log lambda (zero)",
                ifelse(nm == "hs_tau", "log tau", ifelse(nm == "hs_c", "log c", "beta (zero)")))
group[1] <- "intercept"
group[2:6] <- "beta (non-zero)"
group[grepl("lambda\\[x00[1-5]\\]", nm)] <- "log lambda (non-zero)"
groups <- unique(group)

summarise <- function(label, dm, sr, seconds, rhat) {
    do.call(rbind, lapply(groups, function(g) {
        k <- group == g
        data.frame(run = label, group = g, n = sum(k), seconds = round(seconds),
                   max_rhat = round(rhat, 3),
                   mean_max = max(dm[k]), mean_median = stats::median(dm[k]),
                   mean_within_0.1 = mean(dm[k] < 0.1),
                   sd_max = max(sr[k]), sd_median = stats::median(sr[k]),
                   sd_within_10pct = mean(sr[k] < 0.1))
    }))
}
## the reference's own precision: its chains' pooled halves against each other
A <- do.call(rbind, ref$chains[1:2])
B <- do.call(rbind, ref$chains[3:4])
rows <- list(summarise("hmc chains 1-2 vs 3-4", abs(colMeans(A) - colMeans(B)) / s0,
                       abs(apply(A, 2, sd) / apply(B, 2, sd) - 1), ref$seconds, ref$rhat))
for (f in fits) {
    D <- do.call(rbind, f$chains)
    rows[[length(rows) + 1L]] <- summarise(f$label, abs(colMeans(D) - m0) / s0,
                                           abs(apply(D, 2, sd) / s0 - 1), f$seconds, f$rhat)
}
tab <- do.call(rbind, rows)
num <- vapply(tab, is.numeric, NA)
tab[num] <- lapply(tab[num], function(v) signif(v, 3))
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
md <- file.path(out_dir, "horseshoe.md")
writeLines(c("# The horseshoe on a sparse logistic regression (bench/bench_horseshoe.R)", "",
             sprintf("N = 2,000, p = 200, 5 non-zero; hs(global_scale = %.3g); %s", d$tau0,
                     if (quick) "quick run (10 times shorter chains)" else "full run"), "",
             "| run | group | n | s | max R-hat | max dmean/sd | median | share < 0.1 | max abs(sd ratio - 1) | median | share < 10 % |",
             "|---|---|---|---|---|---|---|---|---|---|---|",
             apply(tab, 1L, function(r) paste0("| ", paste(trimws(r), collapse = " | "), " |"))),
           md)
print(tab, row.names = FALSE)
message("wrote ", md)
