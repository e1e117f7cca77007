#!/usr/bin/env Rscript
## bench/bench_cumulative.R - ordinal regression, cumulative("logit"):
## sgldcv() and sgfs() at their defaults against Stan's NUTS on the same
## posterior, and rstanarm's stan_polr(), on two real data sets.
##
##   OPENBLAS_NUM_THREADS=1 Rscript bench/bench_cumulative.R
##
## run from the package root.  Needs rstan and rstanarm (Debian:
## r-cran-rstanarm), MASS, posterior and ../shared/datasets.
##
## * MASS::housing: satisfaction (Low < Medium < High) of 1,681 tenants in
##   72 cells, Sat ~ Infl + Type + Cont, the cells' counts as weights.
## * UCI wine quality (red), ../shared/datasets/uci_regression: 1,599 wines,
##   quality 3 to 8 (six ordered classes, the extreme ones 10 and 18
##   wines), on the 11 chemical measurements.
##
## The reference is a hand-written Stan model of the same posterior (NUTS,
## 4 chains of 2,000 iterations, half warm-up, seed 1): ordered cutpoints
## of the centred predictors with the Dirichlet(1) law on the class
## probabilities at the predictors' means (sgfs's default prior_aux =
## dirichlet(1); Jacobian prod_k f(c_k)), and normal(0, 100) on each
## coefficient of the standardised predictors (normal(0, 100 / sd(x_j)) on
## the original scale), the rows' weights multiplying their terms.
## rstanarm's stan_polr() is shown beside it: its prior = NULL is not flat
## (a uniform R^2 and direction of beta, the Dirichlet on probabilities
## whose cutpoints are scaled by 1 / sqrt(1 - R^2): src/stan_files/polr.stan),
## so its posterior differs from this one by that prior; MASS::polr()'s
## estimate too.  sgfs: 4 chains at the defaults (the run grows until 400
## bulk ESS and R-hat <= 1.01), seed 1.  Criteria: every posterior mean
## within 0.1 NUTS sd, every sd within 10 %.
##
## Results: bench/results/cumulative.md.

suppressPackageStartupMessages(library(sgfs))
out_dir <- file.path(if (dir.exists("bench")) "bench" else ".", "results")
shared <- Sys.getenv("SGFS_SHARED", file.path("..", "shared"))

wine <- utils::read.table(xzfile(file.path(shared, "datasets", "uci_regression",
                                           "wine-quality-red.txt.xz")))
names(wine) <- c(paste0("x", 1:11), "quality")
wine$quality <- factor(wine$quality, ordered = TRUE)

cases <- list(
    housing = list(data = MASS::housing, formula = Sat ~ Infl + Type + Cont, weights = "Freq"),
    wine_red = list(data = wine, formula = stats::as.formula(paste("quality ~",
                                                                   paste0("x", 1:11, collapse = " + "))),
                    weights = NULL))

ess <- function(m, chains) {
    n <- nrow(m) / chains
    apply(m, 2, function(v) posterior::ess_bulk(matrix(v, n, chains)))
}

stan_code <- "
data {
  int<lower=1> N;
  int<lower=1> K;
  int<lower=2> J;
  matrix[N, K] X;
  int<lower=1, upper=J> y[N];
  vector[N] w;
  vector[K] prior_sd;
  vector[J] alpha;
}
transformed data {
  row_vector[K] m = rep_row_vector(1.0 / N, N) * X;
  matrix[N, K] Xc = X - rep_matrix(m, N);
}
parameters {
  vector[K] beta;
  ordered[J - 1] c;
}
model {
  vector[N] eta = Xc * beta;
  vector[J] p;
  for (n in 1:N) target += w[n] * ordered_logistic_lpmf(y[n] | eta[n], c);
  beta ~ normal(0, prior_sd);
  p[1] = inv_logit(c[1]);
  for (k in 2:(J - 1)) p[k] = inv_logit(c[k]) - inv_logit(c[k - 1]);
  p[J] = 1 - inv_logit(c[J - 1]);
  target += dirichlet_lpdf(p | alpha);
  for (k in 1:(J - 1)) target += log_inv_logit(c[k]) + log1m_inv_logit(c[k]);
}
generated quantities {
  vector[J - 1] zeta = c + m * beta;
}
"
suppressPackageStartupMessages(library(rstan))
## Debian's r-cran-bh leaves Boost's headers to libboost-dev, in /usr/include
if (!nzchar(rstan_options("boost_lib")) && dir.exists("/usr/include/boost"))
    rstan_options(boost_lib = "/usr/include")
sm <- stan_model(model_code = stan_code)

rows <- list()
summary_lines <- character(0)
for (name in names(cases)) {
    k <- cases[[name]]
    w <- if (!is.null(k$weights)) k$data[[k$weights]]
    X <- stats::model.matrix(k$formula, k$data)[, -1L]
    y <- stats::model.response(stats::model.frame(k$formula, k$data))
    J <- nlevels(y)
    t_stan <- system.time(ref <- sampling(sm, data = list(
        N = nrow(X), K = ncol(X), J = J, X = X, y = as.integer(y),
        w = if (is.null(w)) rep(1, nrow(X)) else as.double(w),
        prior_sd = 100 / apply(X, 2, stats::sd), alpha = rep(1, J)),
        chains = 4, cores = 2, iter = 2000, seed = 1, refresh = 0))[["elapsed"]]
    S <- as.matrix(ref)
    R <- cbind(S[, sprintf("beta[%d]", seq_len(ncol(X)))], S[, sprintf("zeta[%d]", seq_len(J - 1L))])
    colnames(R) <- c(colnames(X), paste(levels(y)[-J], levels(y)[-1L], sep = "|"))
    s <- apply(R, 2, sd)
    t_polr <- system.time(polr <- rstanarm::stan_polr(k$formula, data = k$data, weights = w,
                                                      prior = NULL,
                                                      prior_counts = rstanarm::dirichlet(1),
                                                      chains = 4, cores = 2, seed = 1,
                                                      refresh = 0))[["elapsed"]]
    P <- as.matrix(polr)[, colnames(R)]
    mle <- MASS::polr(k$formula, data = if (is.null(w)) k$data else cbind(k$data, .w = w),
                      weights = if (!is.null(w)) .w)
    mle_est <- c(stats::coef(mle), mle$zeta)
    for (sampler in c("sgldcv", "sgfs")) {
        f <- get(sampler, asNamespace("sgfs"))
        t_sgfs <- system.time(fit <- f(k$formula, data = k$data, weights = w,
                                       family = cumulative(), prior = normal(0, 100),
                                       chains = 4, cores = 2, seed = 1,
                                       refresh = 0))[["elapsed"]]
        B <- as.matrix(fit)
        stopifnot(identical(colnames(B), colnames(R)))
        err <- (colMeans(B) - colMeans(R)) / s
        sd_err <- apply(B, 2, sd) / s - 1
        rows[[length(rows) + 1L]] <- data.frame(
            data = name, sampler = sampler, parameter = colnames(R), mean_stan = colMeans(R),
            sd_stan = s, error_sd = err, sd_error = sd_err,
            ess_sgfs = ess(B, coda::nchain(fit)), ess_stan = ess(R, 4L),
            polr_error = (colMeans(P) - colMeans(R)) / s, mle_error = (mle_est - colMeans(R)) / s)
        summary_lines <- c(summary_lines, sprintf(
            "* %s, %s(): largest error %.3f sd, largest sd error %.1f %%; wall time %.1f s against Stan's %.1f s sampling (stan_polr %.1f s).",
            name, sampler, max(abs(err)), 100 * max(abs(sd_err)), t_sgfs, t_stan, t_polr))
    }
    summary_lines <- c(summary_lines, sprintf(
        "* %s: stan_polr(prior = NULL)'s means lie up to %.3f sd from this posterior's (its R^2 prior), polr()'s estimate up to %.3f sd.",
        name, max(abs((colMeans(P) - colMeans(R)) / s)), max(abs((mle_est - colMeans(R)) / s))))
}
tab <- do.call(rbind, rows)
print(tab, digits = 3, row.names = FALSE)

md <- c("# Ordinal regression: sgldcv() and sgfs() at their defaults against Stan (bench/bench_cumulative.R)", "",
        sprintf("`OPENBLAS_NUM_THREADS=1 Rscript bench/bench_cumulative.R`; rstan %s, rstanarm %s; BLAS: %s; two cores, 4 chains each side; %s.",
                utils::packageVersion("rstan"), utils::packageVersion("rstanarm"), sgfs:::blas_label(),
                format(Sys.time(), "%Y-%m-%d %H:%M")), "",
        "`cumulative(\"logit\")` against a hand-written Stan model of the same posterior (NUTS, 4 x 1,000 kept draws; a Dirichlet(1) law on the class probabilities at the predictors' means, sgfs's default, and normal(0, 100) on the standardised coefficients): MASS::housing (`Sat ~ Infl + Type + Cont`, the 72 cells' counts as weights) and the UCI red wines (quality 3 to 8 on 11 measurements, 1,599 rows).  Criteria: means within 0.1 sd, sds within 10 %.  Beside them rstanarm's `stan_polr(prior = NULL, prior_counts = dirichlet(1))`, whose prior = NULL is a uniform R^2 (not flat), and `MASS::polr()`'s estimate, each as its distance from the reference's means in reference sds.", "",
        summary_lines, "",
        "| data | sampler | parameter | mean (NUTS) | sd (NUTS) | error / sd | sd error | bulk ESS sgfs | bulk ESS NUTS | stan_polr / sd | polr / sd |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        with(tab, sprintf("| %s | %s | %s | %.4g | %.3g | %+.3f | %+.3f | %.0f | %.0f | %+.3f | %+.3f |",
                          data, sampler, parameter, mean_stan, sd_stan, error_sd, sd_error,
                          ess_sgfs, ess_stan, polr_error, mle_error)), "")
writeLines(md, file.path(out_dir, "cumulative.md"))
cat(md, sep = "\n")
