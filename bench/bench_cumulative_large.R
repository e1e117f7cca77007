#!/usr/bin/env Rscript
## bench/bench_cumulative_large.R - ordinal regression at scale: sgldcv()
## at its defaults, cumulative("logit"), against MASS::polr() (maximum
## likelihood) and glm() of one split of the classes (the cost of a
## binary GLM on the same rows), on a simulated data set of N rows.
##
##   OPENBLAS_NUM_THREADS=1 Rscript bench/bench_cumulative_large.R [N]
##
## run from the package root (N = 1e6 by default).  10 predictors (one a
## rare binary column, 1 row in 1,000), 5 classes; polr()'s estimate and
## standard errors are the reference (the data outweigh the prior here):
## the posterior means within 0.1 of polr's SE, the sds within 10 % of them.
##
## Results: bench/results/cumulative-large.md.

suppressPackageStartupMessages(library(sgfs))
out_dir <- file.path(if (dir.exists("bench")) "bench" else ".", "results")
args <- commandArgs(TRUE)
N <- if (length(args)) as.numeric(args[1]) else 1e6
set.seed(1)
P <- 10
X <- matrix(stats::rnorm(N * P), N, dimnames = list(NULL, paste0("x", seq_len(P))))
X[, P] <- stats::rbinom(N, 1, 0.001)
beta <- c(0.5, -0.3, 0.2, 0, 0.1, -0.6, 0.4, 0.25, -0.15, 1.5)
y <- factor(findInterval(drop(X %*% beta) + stats::rlogis(N), c(-2, -0.5, 0.7, 2.5)) + 1L,
            ordered = TRUE)
t_polr <- system.time(ref <- MASS::polr(y ~ X, Hess = TRUE))[["elapsed"]]
t_glm <- system.time(stats::glm(as.integer(y) > 2L ~ X, family = stats::binomial()))[["elapsed"]]
t_sgfs <- system.time(fit <- sgldcv(X, y, family = cumulative(), seed = 1, refresh = 0))[["elapsed"]]
B <- as.matrix(fit)
est <- c(stats::coef(ref), ref$zeta)
se <- sqrt(diag(stats::vcov(ref)))
err <- (colMeans(B) - est) / se
ratio <- apply(B, 2, stats::sd) / se
ess <- coda::effectiveSize(coda::as.mcmc(B))
md <- c("# Ordinal regression at scale (bench/bench_cumulative_large.R)", "",
        sprintf("`OPENBLAS_NUM_THREADS=1 Rscript bench/bench_cumulative_large.R %g`; BLAS: %s; %s.",
                N, sgfs:::blas_label(), format(Sys.time(), "%Y-%m-%d %H:%M")), "",
        sprintf("%s simulated rows, %d predictors (one a binary column set in 1 row of 1,000), 5 classes; `sgldcv(x, y, family = cumulative())` at its defaults against `MASS::polr()`'s estimate and standard errors.", format(N, big.mark = ",", scientific = FALSE), P), "",
        "| | wall time (s) |", "|---|---:|",
        sprintf("| MASS::polr(Hess = TRUE) | %.1f |", t_polr),
        sprintf("| glm() of one binary split | %.1f |", t_glm),
        sprintf("| sgldcv(), cumulative() | %.1f |", t_sgfs), "",
        sprintf("Posterior means within %.3f of polr's SEs of its estimate, sds %.3f to %.3f of the SEs; bulk ESS (coda) %.0f to %.0f; %s kept draws.",
                max(abs(err)), min(ratio), max(ratio), min(ess), max(ess), nrow(B)), "")
writeLines(md, file.path(out_dir, "cumulative-large.md"))
cat(md, sep = "\n")
