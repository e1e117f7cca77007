## A logistic mixed model of N rows in G groups of very unequal sizes
## (issue 38: 1,000,000 rows and 10,000 groups): SAMPLER(y ~ x + (1 | g)) at
## its defaults (sgldcv() unless named) against glmer()'s wall time on the same machine, its mixing
## (split R-hat and bulk ESS of the fixed effects and the group sd), and
## its group effects against their exact conditional posteriors: for a
## sample of groups (the largest, the smallest and others spread over the
## sizes), the mixture over the kept draws of the conditional density of
## b_g given that draw's fixed effects and sd (quadrature on a grid), whose
## mean and sd the group's draws must match.
##
##   R_LIBS=/tmp/benchlib OPENBLAS_NUM_THREADS=1 Rscript bench/bench_mixed_large.R [N] [G] [SAMPLER]
##
## Writes bench/results/mixed-large-<SAMPLER>-<N>-<G>.md (and .csv, the
## sampled groups).

suppressPackageStartupMessages(library(sgfs))
args <- commandArgs(TRUE)
N <- if (length(args) > 0L) as.numeric(args[1]) else 1e6
G <- if (length(args) > 1L) as.integer(args[2]) else 10000L
sampler <- if (length(args) > 2L) args[3] else "sgldcv"
out_dir <- file.path(if (dir.exists("bench")) "bench" else ".", "results")

d <- withr::with_seed(38, {
    size <- stats::rlnorm(G, 0, 1.2)
    g <- sample.int(G, N, replace = TRUE, prob = size / sum(size))
    x <- stats::rnorm(N)
    u <- stats::rnorm(G, 0, 0.7)
    data.frame(y = stats::rbinom(N, 1, stats::plogis(-1 + 0.5 * x + u[g])), x = x,
               g = factor(g))
})
sizes <- tabulate(as.integer(d$g))

t0 <- proc.time()[["elapsed"]]
ref <- lme4::glmer(y ~ x + (1 | g), data = d, family = stats::binomial())
t_glmer <- proc.time()[["elapsed"]] - t0

t0 <- proc.time()[["elapsed"]]
fit <- withr::with_seed(1, get(sampler)(y ~ x + (1 | g), d, progress = FALSE))
t_sgld <- proc.time()[["elapsed"]] - t0
info <- attr(fit, "sgfit")
m <- as.matrix(fit)
main <- c("(Intercept)", "x", "sd[(Intercept) | g]")
mixing <- data.frame(parameter = main, mean = colMeans(m[, main]), sd = apply(m[, main], 2, stats::sd),
                     glmer = c(lme4::fixef(ref), sqrt(unlist(lme4::VarCorr(ref)))),
                     ess = vapply(main, function(p) posterior::ess_bulk(m[, p]), 0),
                     rhat = vapply(main, function(p) posterior::rhat(m[, p]), 0))

## the sampled groups: the largest, the smallest, and sizes spread between
levels_by_size <- order(sizes)
pick <- unique(c(levels_by_size[round(seq(1, length(sizes), length.out = 18))],
                 which.max(sizes), which.min(sizes)))
S <- min(400L, nrow(m))
rows_s <- unique(round(seq(1, nrow(m), length.out = S)))
check <- do.call(rbind, lapply(pick, function(k) {
    col <- sprintf("b[(Intercept) g:%s]", levels(d$g)[k])
    b <- m[, col]
    i <- which(as.integer(d$g) == k)
    grid <- seq(min(b) - 3 * stats::sd(b), max(b) + 3 * stats::sd(b), length.out = 301L)
    ## the mixture of the conditionals p(b | beta_s, sd_s, y_g) over the draws s
    dens <- vapply(rows_s, function(s) {
        eta0 <- m[s, "(Intercept)"] + m[s, "x"] * d$x[i]
        lp <- vapply(grid, function(v) {
            eta <- eta0 + v
            sum(d$y[i] * eta - log1p(exp(eta)))
        }, 0) + stats::dnorm(grid, 0, m[s, "sd[(Intercept) | g]"], log = TRUE)
        w <- exp(lp - max(lp))
        w / sum(w)
    }, double(length(grid)))
    mix <- rowMeans(dens)
    mu <- sum(grid * mix)
    sdq <- sqrt(sum((grid - mu)^2 * mix))
    data.frame(group = levels(d$g)[k], rows = length(i), mean_draws = mean(b), mean_exact = mu,
               error_sd = (mean(b) - mu) / sdq, sd_ratio = stats::sd(b) / sdq,
               ess = posterior::ess_bulk(b))
}))
utils::write.csv(check, file.path(out_dir, sprintf("mixed-large-%s-%g-%d.csv", sampler, N, G)),
                 row.names = FALSE)
print(mixing)
print(check)
ess_b <- vapply(grep("^b\\[", colnames(m), value = TRUE), function(p) posterior::ess_bulk(m[, p]), 0)

md <- c(sprintf("# A logistic mixed model of %s rows and %s groups at %s()'s defaults (bench/bench_mixed_large.R)",
                format(N, big.mark = ",", scientific = FALSE), format(G, big.mark = ","), sampler), "",
        sprintf("y ~ x + (1 | g), %d groups with rows, their sizes lognormal (sd 1.2 on the log scale: %d to %d rows, %d groups of one row); truth: intercept -1, slope 0.5, sd 0.7.  One run, one core; BLAS %s; peak memory: see /usr/bin/time -v in the note.",
                length(sizes), min(sizes), max(sizes), sum(sizes == 1L), sgfs:::blas_label()), "",
        sprintf("glmer() (lme4 %s, Laplace): %.1f s.  %s() at its defaults: %.1f s (%.1f x glmer's), %s iterations, %d kept draws; its run stopped: %s.",
                utils::packageVersion("lme4"), t_glmer, sampler, t_sgld, t_sgld / t_glmer,
                format(info$n_iter, big.mark = ","), nrow(m), info$run_length$stop), "",
        "| parameter | posterior mean | posterior sd | glmer | bulk ESS | split R-hat |",
        "|---|---:|---:|---:|---:|---:|",
        sprintf("| %s | %.4f | %.4f | %.4f | %.0f | %.4f |", mixing$parameter, mixing$mean, mixing$sd,
                mixing$glmer, mixing$ess, mixing$rhat), "",
        sprintf("The %d group effects' bulk ESS: min %.0f, median %.0f.", length(ess_b), min(ess_b),
                stats::median(ess_b)), "",
        sprintf("Group effects against their exact conditional posteriors (mixture over %d of the kept draws of p(b_g | beta, sd, y_g), quadrature on 301 points): error / sd is the draws' mean minus the mixture's, in the mixture's sds.", length(rows_s)), "",
        "| group | rows | mean (draws) | mean (exact) | error / sd | sd ratio | bulk ESS |",
        "|---|---:|---:|---:|---:|---:|---:|",
        sprintf("| %s | %d | %.4f | %.4f | %+.3f | %.3f | %.0f |", check$group, check$rows, check$mean_draws,
                check$mean_exact, check$error_sd, check$sd_ratio, check$ess))
writeLines(md, file.path(out_dir, sprintf("mixed-large-%s-%g-%d.md", sampler, N, G)))
