#!/usr/bin/env Rscript
## bench/bench_student.R - Student t regression, student(df = 4):
## sgldcv() at its defaults against Stan's NUTS (and brms, where installed)
## on a real data set.
##
##   OPENBLAS_NUM_THREADS=1 Rscript bench/bench_student.R
##
## run from the package root.  Needs rstanarm (its prior objects) and rstan
## (Debian: r-cran-rstanarm), MASS, loo and posterior; brms (r-cran-brms)
## for its column.
##
## MASS::Boston (506 census tracts; median home value, in $1000s, whose
## residuals under least squares have heavy tails: the censored medv = 50
## tracts): medv ~ lstat + rm + crim + ptratio + dis + nox, nu = 4 fixed.
## The same priors on both sides, on the response's scale with no
## autoscaling: normal(0, 10) on each coefficient, normal(0, 100) on the
## intercept of the centred predictors (rstanarm's convention, which sgfs
## applies to rstanarm's prior objects), exponential(0.1) on sigma.  Stan:
## a hand-written model (below; rstanarm has no Student t family), 4 chains
## of 2,000 iterations (half warm-up), seed 1; brms: the same model as
## brm(bf(y ~ ..., nu = 4), family = student()).  sgfs: sgldcv(chains = 4,
## cores = 2) at its defaults (the run grows until 400 bulk ESS and R-hat
## <= 1.01), seed = 1.  Criteria: every posterior mean within 0.1 NUTS sd,
## every sd within 10 %, loo elpd within one SE.  sigma is compared as
## log(sigma).
##
## Results: bench/results/student.md.

suppressPackageStartupMessages({
    library(sgfs)
    library(rstan)
})
out_dir <- file.path(if (dir.exists("bench")) "bench" else ".", "results")
d <- MASS::Boston
f <- medv ~ lstat + rm + crim + ptratio + dis + nox
nu <- 4

stan_code <- "
data {
  int<lower=1> N;
  int<lower=1> K;
  matrix[N, K] X;
  vector[N] y;
  real<lower=0> nu;
}
transformed data {
  row_vector[K] m = rep_row_vector(1.0 / N, N) * X;
  matrix[N, K] Xc = X - rep_matrix(m, N);
}
parameters {
  real alpha;
  vector[K] beta;
  real log_sigma;
}
model {
  real sigma = exp(log_sigma);
  y ~ student_t(nu, alpha + Xc * beta, sigma);
  beta ~ normal(0, 10);
  alpha ~ normal(0, 100);
  target += exponential_lpdf(sigma | 0.1) + log_sigma;
}
generated quantities {
  real intercept = alpha - m * beta;
  vector[N] log_lik;
  for (i in 1:N)
    log_lik[i] = student_t_lpdf(y[i] | nu, alpha + Xc[i] * beta, exp(log_sigma));
}
"
X <- model.matrix(f, d)[, -1L]
## Debian's r-cran-bh leaves Boost's headers to libboost-dev, in /usr/include
if (!nzchar(rstan_options("boost_lib")) && dir.exists("/usr/include/boost"))
    rstan_options(boost_lib = "/usr/include")
t_compile <- system.time(sm <- stan_model(model_code = stan_code))[["elapsed"]]
t_stan <- system.time(
    ref <- sampling(sm, data = list(N = nrow(X), K = ncol(X), X = X, y = d$medv, nu = nu),
                    chains = 4, cores = 2, iter = 2000, seed = 1, refresh = 0))[["elapsed"]]
S <- as.matrix(ref)
R <- cbind(S[, "intercept"], S[, sprintf("beta[%d]", seq_len(ncol(X)))], S[, "log_sigma"])
colnames(R) <- c("(Intercept)", colnames(X), "log_sigma")

t_sgfs <- system.time(fit <- sgldcv(f, data = d, family = student(df = nu),
                                    prior = rstanarm::normal(0, 10, autoscale = FALSE),
                                    prior_intercept = rstanarm::normal(0, 100, autoscale = FALSE),
                                    prior_aux = sgfs::exponential(0.1),
                                    chains = 4, cores = 2, seed = 1, refresh = 0))[["elapsed"]]
B <- as.matrix(fit)[, colnames(R)]

brms_row <- NULL
if (requireNamespace("brms", quietly = TRUE)) {
    pr <- c(brms::set_prior("normal(0, 10)", class = "b"),
            brms::set_prior("normal(0, 100)", class = "Intercept"),
            brms::set_prior("exponential(0.1)", class = "sigma"))
    t_brms <- system.time(bf <- brms::brm(brms::bf(f, nu = nu), data = d,
                                          family = brms::student(), prior = pr, chains = 4,
                                          cores = 2, iter = 2000, seed = 1, refresh = 0,
                                          silent = 2))[["elapsed"]]
    Dm <- as.matrix(bf)
    Bm <- cbind(Dm[, "b_Intercept"], Dm[, paste0("b_", colnames(X))], log(Dm[, "sigma"]))
    colnames(Bm) <- colnames(R)
    brms_row <- list(draws = Bm, seconds = t_brms, loo = brms::loo(bf))
}

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
l_stan <- loo::loo(loo::extract_log_lik(ref, merge_chains = FALSE))
tab <- data.frame(parameter = colnames(R), mean_stan = colMeans(R), sd_stan = s,
                  error_sd = err, sd_error = sd_err, ess_sgfs = ess_sgfs, ess_stan = ess_stan)
if (!is.null(brms_row))
    tab$error_brms <- (colMeans(brms_row$draws) - colMeans(R)) / s
print(tab, digits = 3)

## least squares on the same data, for the tails' effect
ols <- sgldcv(f, data = d, family = gaussian(), chains = 4, cores = 2, seed = 1, refresh = 0)
shift <- (colMeans(as.matrix(ols))[colnames(X)] - colMeans(R)[colnames(X)]) / s[colnames(X)]
l_ols <- loo::loo(ols)

md <- c("# Student t regression: sgldcv() at its defaults against Stan (bench/bench_student.R)", "",
        sprintf("`OPENBLAS_NUM_THREADS=1 Rscript bench/bench_student.R`; rstan %s%s; BLAS: %s; two cores, 4 chains each side; %s.",
                utils::packageVersion("rstan"),
                if (!is.null(brms_row)) sprintf(", brms %s", utils::packageVersion("brms")) else "",
                sgfs:::blas_label(), format(Sys.time(), "%Y-%m-%d %H:%M")), "",
        "MASS::Boston, `medv ~ lstat + rm + crim + ptratio + dis + nox`, `student(df = 4)`.  Against a hand-written Stan model (NUTS, 4 x 1,000 kept draws) with the same priors: normal(0, 10) on the coefficients, normal(0, 100) on the intercept of the centred predictors, exponential(0.1) on sigma, none autoscaled; sigma compared as log(sigma).  Criteria: means within 0.1 sd, sds within 10 %, elpd within one SE.", "",
        paste0("| parameter | mean (NUTS) | sd (NUTS) | error / sd | sd error | bulk ESS sgfs | bulk ESS NUTS |",
               if (!is.null(brms_row)) " brms error / sd |" else ""),
        paste0("|---|---:|---:|---:|---:|---:|---:|", if (!is.null(brms_row)) "---:|" else ""),
        paste0(with(tab, sprintf("| %s | %.4g | %.3g | %+.3f | %+.3f | %.0f | %.0f |", parameter,
                                 mean_stan, sd_stan, error_sd, sd_error, ess_sgfs, ess_stan)),
               if (!is.null(brms_row)) sprintf(" %+.3f |", tab$error_brms) else ""), "",
        sprintf("Largest error %.3f sd, largest sd error %.1f %%; elpd_loo %.1f (SE %.1f) sgfs, %.1f (SE %.1f) Stan; wall time %.1f s sgfs, %.1f s Stan sampling (%.0f s compiling)%s.",
                max(abs(err)), 100 * max(abs(sd_err)), l_sgfs$estimates[1, 1], l_sgfs$estimates[1, 2],
                l_stan$estimates[1, 1], l_stan$estimates[1, 2], t_sgfs, t_stan, t_compile,
                if (!is.null(brms_row)) sprintf(", %.1f s brms (compiling included; elpd_loo %.1f)",
                                                brms_row$seconds, brms_row$loo$estimates[1, 1])
                else ""), "",
        sprintf("The gaussian fit of the same formula (sgldcv(), gaussian()): its slopes lie %.1f to %.1f t-posterior sds from the t fit's, elpd_loo %.1f (SE %.1f) against the t's %.1f: the heavy tails fit these data better.",
                min(abs(shift)), max(abs(shift)), l_ols$estimates[1, 1], l_ols$estimates[1, 2],
                l_sgfs$estimates[1, 1]), "")
writeLines(md, file.path(out_dir, "student.md"))
cat(md, sep = "\n")
