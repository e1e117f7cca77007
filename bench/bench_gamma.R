#!/usr/bin/env Rscript
## bench/bench_gamma.R - Gamma regression, Gamma(link = "log"): sgldcv() at
## its defaults against rstanarm's NUTS on a real data set.
##
##   R_LIBS=/tmp/benchlib OPENBLAS_NUM_THREADS=1 Rscript bench/bench_gamma.R
##
## run from the package root.  Needs rstanarm (Debian: r-cran-rstanarm), MASS,
## loo and posterior.
##
## MASS::Boston (506 census tracts; median home value, in $1000s, of
## owner-occupied homes): medv ~ lstat + rm + crim + ptratio + dis + nox.
## Both sides get rstanarm's prior objects, normal(0, 2.5) on the
## coefficients (autoscaled by rstanarm's rule, which sgfs applies to an
## rstanarm prior) and normal(0, 2.5) on the intercept of the centred
## predictors, and rstanarm's default prior of the shape, exponential(1),
## given to both as prior_aux.  rstanarm:
## stan_glm(chains = 4, cores = 2, seed = 1), 2,000 iterations a chain (half
## warm-up), started at 0 (from Stan's random starts in [-2, 2] some chains
## stay stuck far from the posterior); sgfs: sgldcv(chains = 4,
## cores = 2) at its defaults (the run
## grows until 400 bulk ESS and R-hat <= 1.01), seed = 1.  Criteria (as for
## bench_rstanarm.R): every posterior mean within 0.1 rstanarm sd, every sd
## within 10 %, loo elpd within one SE.  The shape is compared as
## log(shape).
##
## Results: bench/results/gamma.md.

suppressPackageStartupMessages({
    library(sgfs)
    library(rstanarm)
})
out_dir <- file.path(if (dir.exists("bench")) "bench" else ".", "results")
d <- MASS::Boston
f <- medv ~ lstat + rm + crim + ptratio + dis + nox

t_stan <- system.time(ref <- stan_glm(f, data = d, family = Gamma(link = "log"),
                                      prior = normal(0, 2.5), prior_intercept = normal(0, 2.5),
                                      prior_aux = exponential(1), chains = 4, cores = 2,
                                      seed = 1, refresh = 0, init = 0))[["elapsed"]]
R <- as.matrix(ref)
R[, "shape"] <- log(R[, "shape"])
colnames(R)[colnames(R) == "shape"] <- "log_shape"

t_sgfs <- system.time(fit <- sgldcv(f, data = d, family = Gamma(link = "log"),
                                    prior = rstanarm::normal(0, 2.5),
                                    prior_intercept = rstanarm::normal(0, 2.5),
                                    prior_aux = rstanarm::exponential(1),
                                    chains = 4, cores = 2, seed = 1, refresh = 0))[["elapsed"]]
B <- as.matrix(fit)[, colnames(R)]

s <- apply(R, 2, sd)
err <- (colMeans(B) - colMeans(R)) / s
sd_err <- apply(B, 2, sd) / s - 1
ess <- function(m, chains) {
    n <- nrow(m) / chains
    apply(m, 2, function(v) posterior::ess_bulk(matrix(v, n, chains)))
}
ess_sgfs <- ess(B, coda::nchain(fit))
ess_stan <- ess(R, 4L)
l_sgfs <- loo::loo(fit)
l_stan <- loo::loo(ref)
tab <- data.frame(parameter = colnames(R), mean_stan = colMeans(R), sd_stan = s,
                  error_sd = err, sd_error = sd_err, ess_sgfs = ess_sgfs, ess_stan = ess_stan)
print(tab, digits = 3)
md <- c("# Gamma regression: sgldcv() at its defaults against rstanarm (bench/bench_gamma.R)", "",
        sprintf("`Rscript bench/bench_gamma.R`; rstanarm %s; BLAS: %s; two cores, 4 chains each side; %s.",
                utils::packageVersion("rstanarm"), sgfs:::blas_label(), format(Sys.time(), "%Y-%m-%d %H:%M")), "",
        "MASS::Boston, `medv ~ lstat + rm + crim + ptratio + dis + nox`, `Gamma(link = \"log\")`.  Against rstanarm's `stan_glm()` (NUTS, 4 x 1,000 kept draws), the same priors on both sides (rstanarm's autoscaled normal(0, 2.5) objects on the coefficients, its default exponential(1) on the shape as prior_aux); the shape compared as log(shape).  Criteria: means within 0.1 sd, sds within 10 %, elpd within one SE.", "",
        "| parameter | mean (NUTS) | sd (NUTS) | error / sd | sd error | bulk ESS sgfs | bulk ESS NUTS |",
        "|---|---:|---:|---:|---:|---:|---:|",
        with(tab, sprintf("| %s | %.4g | %.3g | %+.3f | %+.3f | %.0f | %.0f |", parameter, mean_stan,
                          sd_stan, error_sd, sd_error, ess_sgfs, ess_stan)), "",
        sprintf("Largest error %.3f sd, largest sd error %.1f %%; elpd_loo %.1f (SE %.1f) sgfs, %.1f (SE %.1f) NUTS; wall time %.1f s sgfs, %.1f s NUTS.",
                max(abs(err)), 100 * max(abs(sd_err)), l_sgfs$estimates[1, 1], l_sgfs$estimates[1, 2],
                l_stan$estimates[1, 1], l_stan$estimates[1, 2], t_sgfs, t_stan), "")
writeLines(md, file.path(out_dir, "gamma.md"))
cat(md, sep = "\n")
