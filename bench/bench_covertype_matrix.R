#!/usr/bin/env Rscript
## bench/bench_covertype_matrix.R - Covertype given as the SG-MCMC
## literature gives it: the 54 raw columns (10 continuous, 4 + 40 one-hot)
## as a matrix, pine = (class == 2), the same 10,000 rows held out as
## bench_real_data.R.  sgldcv() at its defaults (2 chains, the run grown to
## its ESS target) against the full-data HMC reference of
## bench/results/reference-covertype.csv for the 10 continuous
## coefficients (the same parameters in both designs: only the one-hot
## levels' coding differs), and its test log-loss.
##
##   R_LIBS=<lib> Rscript bench/bench_covertype_matrix.R
##
## Writes bench/results/covertype-matrix.md.

suppressPackageStartupMessages(library(sgfs))
here <- function() {
    f <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
    if (length(f)) dirname(normalizePath(f[1])) else file.path(getwd(), "bench")
}
path <- file.path(here(), "..", "..", "shared", "datasets", "covtype.rds")
if (!file.exists(path)) stop("../shared/datasets/covtype.rds is not here", call. = FALSE)
cv <- readRDS(path)
x <- cv$x
y <- as.integer(cv$y == 2)
set.seed(1)
held <- sample.int(nrow(x), 10000L)
ref <- utils::read.csv(file.path(here(), "results", "reference-covertype.csv"), comment.char = "#")
ref <- ref[match(c("elevation", "aspect", "slope", "h_hydro", "v_hydro", "h_road", "shade_9am",
                   "shade_noon", "shade_3pm", "h_fire"), ref$parameter), ]

t0 <- proc.time()[["elapsed"]]
fit <- withr::with_seed(2, sgldcv(x[-held, ], y[-held], chains = 2, cores = 2, progress = FALSE,
                                  verbose = FALSE))
seconds <- proc.time()[["elapsed"]] - t0
info <- attr(fit, "sgfit")
conv <- sgfs:::convergence_table(sgfs:::chain_draws(fit))
m <- as.matrix(fit)[, 1L + seq_len(10)]
p <- pmin(pmax(as.vector(predict(fit, x[held, ], type = "response", draws = 2000)), 1e-15),
          1 - 1e-15)
logloss <- -mean(y[held] * log(p) + (1 - y[held]) * log(1 - p))

tab <- data.frame(parameter = ref$parameter, ref_mean = signif(ref$mean, 4),
                  mean = signif(colMeans(m), 4), err_sd = round((colMeans(m) - ref$mean) / ref$sd, 3),
                  sd_ratio = round(apply(m, 2, sd) / ref$sd, 3),
                  ess = round(conv$ess_bulk[1L + seq_len(10)]))
lines <- c("# Covertype as a raw matrix (54 columns): sgldcv() at its defaults against HMC", "",
           sprintf("Run %s; `R_LIBS=<lib> Rscript bench/bench_covertype_matrix.R`; BLAS: %s.",
                   format(Sys.time(), "%Y-%m-%d %H:%M"), sgfs:::blas_label()), "",
           sprintf(paste("- sgldcv(x, y, chains = 2, cores = 2): %.1f s in all (set-up %.1f s); %s",
                         "iterations x 2 chains (stop: %s); step %.3g; %d rows held in every",
                         "minibatch of %d"), seconds, info$setup_seconds, format(info$n_iter, big.mark = ","),
                   info$run_length$stop, info$settings$stepsize, as.integer(info$settings$fixed_rows),
                   info$spec$batch_size),
           sprintf("- every parameter: min bulk ESS %.0f, max R-hat %.4f", min(conv$ess_bulk, na.rm = TRUE),
                   max(conv$rhat, na.rm = TRUE)),
           sprintf("- test log-loss %.5f (the reference's, on the factor coding: %s)", logloss,
                   sub(".*test_logloss=([0-9.]+).*", "\\1",
                       readLines(file.path(here(), "results", "reference-covertype.csv"), n = 1L))), "",
           "The continuous coefficients against the reference (err_sd = (mean - ref mean) / ref sd; sd_ratio = sd / ref sd):", "",
           "| parameter | ref mean | mean | err_sd | sd_ratio | bulk ESS |",
           "|---|---:|---:|---:|---:|---:|",
           sprintf("| %s | %s | %s | %.3f | %.3f | %.0f |", tab$parameter, tab$ref_mean, tab$mean,
                   tab$err_sd, tab$sd_ratio, tab$ess))
writeLines(lines)
dir.create(file.path(here(), "results"), showWarnings = FALSE, recursive = TRUE)
writeLines(lines, file.path(here(), "results", "covertype-matrix.md"))
