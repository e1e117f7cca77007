#!/usr/bin/env Rscript
## bench/bench_negbin.R - negative binomial regression, neg_binomial_2():
## sgldcv() at its defaults against rstanarm's NUTS on a real data set, and
## against MASS::glm.nb() at a million rows.
##
##   R_LIBS=... Rscript bench/bench_negbin.R [--rows=1e6] [--quick]
##
## run from the package root.  Needs rstanarm (Debian: r-cran-rstanarm), MASS,
## loo and posterior.
##
## 1. MASS::quine (146 children, days absent from school; Venables and
##    Ripley's negative binomial example, MASS 4th ed. section 7.4):
##    Days ~ Eth + Sex + Age + Lrn.  Both sides get the same rstanarm prior
##    objects, normal(0, 2.5) on the coefficients (autoscaled by rstanarm's
##    rule, which sgfs applies to an rstanarm prior) and normal(0, 2.5) on the
##    intercept of the centred predictors, and phi's rstanarm default,
##    exponential(1) on phi, given to sgfs as prior_aux.  rstanarm:
##    stan_glm.nb(chains = 4, cores = 2,
##    seed = 1) at its defaults (2,000 iterations a chain, half warm-up);
##    sgfs: sgldcv(chains = 4, cores = 2) at its defaults (the run grows
##    until 400 bulk ESS and R-hat <= 1.01), set.seed(1).  Criteria (as for
##    bench_rstanarm.R): every posterior mean within 0.1 rstanarm sd, every
##    sd within 10 %, loo elpd within one SE.  phi is compared as log(phi).
## 2. Simulated counts, N rows (--rows, 10^6 by default), 8 predictors (4
##    normal, a 4-level factor), phi = 2: sgldcv()'s defaults against
##    glm.nb()'s estimate and standard errors, with the wall time of each.
##
## Results: bench/results/negbin.md (tempdir() with --quick: 2e4 rows, and
## rstanarm at 500 iterations).

suppressPackageStartupMessages({
    library(sgfs)
    library(rstanarm)
    library(loo)
    library(posterior)
})
source(file.path(if (dir.exists("bench")) "bench" else ".", "flags.R"))   # args, flag_value(), quick
rows <- as.numeric(flag_value("rows", if (quick) "2e4" else "1e6"))
out_dir <- if (quick) tempdir() else file.path("bench", "results")
fmt <- function(x, d = 3) formatC(x, digits = d, format = "g")
blas <- tryCatch(sessionInfo()$BLAS, error = function(e) "?")

## ---- 1. quine against rstanarm
quine <- MASS::quine
f <- Days ~ Eth + Sex + Age + Lrn
pri <- rstanarm::normal(0, 2.5)
pri_int <- rstanarm::normal(0, 2.5)
t_stan <- system.time(stan <- rstanarm::stan_glm.nb(
    f, data = quine, prior = pri, prior_intercept = pri_int, chains = 4, cores = 2, seed = 1,
    refresh = 0, iter = if (quick) 500 else 2000))[["elapsed"]]
set.seed(1)
t_sgfs <- system.time(fit <- sgldcv(f, data = quine, family = neg_binomial_2(), prior = pri,
                                    prior_intercept = pri_int, prior_aux = rstanarm::exponential(1),
                                    chains = 4, cores = 2,
                                    progress = FALSE, verbose = FALSE))[["elapsed"]]
S <- as.matrix(stan)
S[, "reciprocal_dispersion"] <- log(S[, "reciprocal_dispersion"])
colnames(S)[colnames(S) == "reciprocal_dispersion"] <- "log_phi"
B <- as.matrix(fit)[, colnames(S)]
sd_stan <- apply(S, 2, sd)
mean_err <- abs(colMeans(B) - colMeans(S)) / sd_stan
sd_err <- abs(apply(B, 2, sd) / sd_stan - 1)
ess_sgfs <- min(apply(B, 2, posterior::ess_bulk))
ess_stan <- min(apply(S, 2, posterior::ess_bulk))
mcse <- function(M) apply(M, 2, function(v) posterior::mcse_mean(v))
z <- max(abs(colMeans(B) - colMeans(S)) / sqrt(mcse(B)^2 + mcse(S)^2))
loo_sgfs <- loo(fit)$estimates["elpd_loo", ]
loo_stan <- loo(stan)$estimates["elpd_loo", ]
params <- data.frame(parameter = colnames(S), mean_sgfs = colMeans(B), mean_stan = colMeans(S),
                     sd_sgfs = apply(B, 2, sd), sd_stan = sd_stan, mean_err = mean_err,
                     sd_err = sd_err, row.names = NULL)
print(params, digits = 3)
quine_row <- sprintf(paste("| quine, %d rows, %d parameters | %s (%s) | %s (%s) | %d / %d | %s |",
                           "%.1f (%.1f) / %.1f (%.1f) | %s / %s |"),
                     nrow(quine), ncol(S), fmt(max(mean_err), 2), params$parameter[which.max(mean_err)],
                     fmt(max(sd_err), 2), params$parameter[which.max(sd_err)],
                     round(ess_sgfs), round(ess_stan), fmt(z, 2), loo_sgfs[[1]], loo_sgfs[[2]],
                     loo_stan[[1]], loo_stan[[2]], fmt(t_sgfs, 3), fmt(t_stan, 3))

## ---- 2. a million rows against glm.nb
N <- as.integer(rows)
d <- withr::with_seed(2026, {
    d <- data.frame(x1 = rnorm(N), x2 = rnorm(N), x3 = rnorm(N), x4 = rnorm(N),
                    g = factor(sample(letters[1:4], N, replace = TRUE)))
    eta <- 0.5 + 0.3 * d$x1 - 0.2 * d$x2 + 0.1 * d$x3 + 0.25 * (d$g == "b") - 0.3 * (d$g == "d")
    d$y <- rnbinom(N, size = 2, mu = exp(eta))
    d
})
g <- y ~ x1 + x2 + x3 + x4 + g
t_glm <- system.time(ref <- MASS::glm.nb(g, data = d))[["elapsed"]]
set.seed(1)
t_big <- system.time(big <- sgldcv(g, data = d, family = neg_binomial_2(), progress = FALSE,
                                   verbose = FALSE))[["elapsed"]]
est <- c(coef(ref), log_phi = log(ref$theta))
se <- c(sqrt(diag(vcov(ref))), ref$SE.theta / ref$theta)
Bb <- as.matrix(big)
zb <- (colMeans(Bb) - est) / se
sdr <- apply(Bb, 2, sd) / se
big_row <- sprintf("| simulated, %s rows, %d parameters | %s | %s-%s | %d | %s / %s = %s |",
                   format(N, big.mark = ","), length(est), fmt(max(abs(zb)), 2),
                   fmt(min(sdr), 3), fmt(max(sdr), 3), round(min(apply(Bb, 2, posterior::ess_bulk))),
                   fmt(t_big, 3), fmt(t_glm, 3), fmt(t_big / t_glm, 2))

lines <- c(
    "# Negative binomial regression: sgldcv() at its defaults against rstanarm and glm.nb (bench/bench_negbin.R)",
    "",
    sprintf("`%s`; BLAS: %s; two cores, 4 chains each side.", paste(c("Rscript bench/bench_negbin.R", args), collapse = " "), blas),
    "",
    "Against rstanarm's `stan_glm.nb()` (NUTS, 4 x 1,000 kept draws), the same priors on both sides (rstanarm's autoscaled normal(0, 2.5) objects on the coefficients, its default exponential(1) on phi as prior_aux); phi compared as log(phi).  Criteria: means within 0.1 sd, sds within 10 %, elpd within one SE.",
    "",
    "| data | max mean error (sd) | max sd error | min bulk ESS sgfs / stan | max z | elpd_loo (SE) sgfs / stan | seconds sgfs / stan |",
    "|---|---|---|---|---|---|---|",
    quine_row,
    "",
    "Against `MASS::glm.nb()`'s estimate and standard errors (the posterior under a weak prior at this N is their normal approximation): z = (posterior mean - MLE) / se, the ratio of posterior sd to se, wall time of the whole call.",
    "",
    "| data | max abs z | sd / se | min bulk ESS | seconds sgfs / glm.nb |",
    "|---|---|---|---|---|",
    big_row)
writeLines(lines)
writeLines(lines, file.path(out_dir, "negbin.md"))
write.csv(params, file.path(out_dir, "negbin-quine.csv"), row.names = FALSE)
