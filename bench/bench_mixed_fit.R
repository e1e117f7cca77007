## Mixed models through the formula at the package's defaults against long
## stan_glmer() runs (issue 38): lme4's sleepstudy (gaussian, a correlated
## random intercept and slope), cbpp (binomial with trials) and a simulated
## logistic model of 20,000 rows in 500 groups of very unequal sizes (from
## 1 row to thousands: lognormal, sd 1.5 on the log scale), sgld() and
## sgldcv() at their defaults (one chain, its run length grown until the
## draws mix) and stan_glmer() at rstanarm's defaults but 4 chains of ITER
## iterations (NUTS).  Per parameter: the posterior mean's difference in NUTS
## posterior sds, the ratio of the sds, and each side's bulk ESS and
## split R-hat (posterior::, rank-normalised).  The group sds and
## correlation come from stan_glmer's Sigma draws; the group effects
## (b[...], named alike in both) are summarised in one line a data set (the
## largest errors, the range of the sd ratios, the smallest ESS).
##
##   R_LIBS=/tmp/benchlib OPENBLAS_NUM_THREADS=1 Rscript bench/bench_mixed_fit.R [ITER]
##
## Writes bench/results/mixed-fit.md.

suppressPackageStartupMessages({
    library(sgfs)
    library(rstanarm)
})
args <- commandArgs(TRUE)
iter <- if (length(args)) as.integer(args[1]) else 4000L
out_dir <- file.path(if (dir.exists("bench")) "bench" else ".", "results")

## stan_glmer's draws as ours: sigma, and per group factor the sds and
## correlations of its Sigma
nuts_draws <- function(fit, ours) {
    m <- as.matrix(fit)
    out <- matrix(NA_real_, nrow(m), length(ours), dimnames = list(NULL, ours))
    for (p in ours) {
        if (p %in% colnames(m)) {
            out[, p] <- m[, p]
        } else if (p == "log_sigma") {
            out[, p] <- log(m[, "sigma"])
        } else if (startsWith(p, "sd[")) {
            inner <- sub("^sd\\[(.*) \\| (.*)\\]$", "\\1", p)
            g <- sub("^sd\\[(.*) \\| (.*)\\]$", "\\2", p)
            out[, p] <- sqrt(m[, sprintf("Sigma[%s:%s,%s]", g, inner, inner)])
        } else if (startsWith(p, "cor[")) {
            pair <- strsplit(sub("^cor\\[(.*) \\| (.*)\\]$", "\\1", p), ",", fixed = TRUE)[[1L]]
            g <- sub("^cor\\[(.*) \\| (.*)\\]$", "\\2", p)
            v <- function(a, b) m[, sprintf("Sigma[%s:%s,%s]", g, a, b)]
            out[, p] <- v(pair[2L], pair[1L]) / sqrt(v(pair[1L], pair[1L]) * v(pair[2L], pair[2L]))
        }
    }
    out
}

samplers <- c("sgld", "sgldcv")
compare <- function(name, formula, data, family) {
    t0 <- proc.time()[["elapsed"]]
    nuts <- withr::with_seed(1, stan_glmer(formula, data = data, family = family, chains = 4,
                                           iter = iter, cores = 2, refresh = 0, seed = 1))
    t_nuts <- proc.time()[["elapsed"]] - t0
    lapply(samplers, function(sampler) {
        t0 <- proc.time()[["elapsed"]]
        ours <- withr::with_seed(1, get(sampler)(formula, data, family = family, progress = FALSE,
                                                 verbose = FALSE))
        t_ours <- proc.time()[["elapsed"]] - t0
        a <- as.matrix(ours)
        b <- nuts_draws(nuts, colnames(a))
        arr_b <- array(b, c(nrow(b) / 4, 4, ncol(b)))
        rows <- lapply(colnames(a), function(p) {
            k <- match(p, colnames(a))
            data.frame(data = name, sampler = sampler, parameter = p, mean_nuts = mean(b[, k]),
                       sd_nuts = stats::sd(b[, k]),
                       error_sd = (mean(a[, k]) - mean(b[, k])) / stats::sd(b[, k]),
                       sd_ratio = stats::sd(a[, k]) / stats::sd(b[, k]),
                       ess_ours = posterior::ess_bulk(a[, k]), rhat_ours = posterior::rhat(a[, k]),
                       ess_nuts = posterior::ess_bulk(arr_b[, , k]))
        })
        list(table = do.call(rbind, rows), seconds = c(ours = t_ours, nuts = t_nuts),
             n_iter = attr(ours, "sgfit")$n_iter, sampler = sampler)
    })
}

data(cbpp, package = "lme4")
simulated <- withr::with_seed(20, {
    G <- 500L
    size <- stats::rlnorm(G, 0, 1.5)
    g <- sample.int(G, 20000L, replace = TRUE, prob = size / sum(size))
    x <- stats::rnorm(20000L)
    u <- stats::rnorm(G, 0, 0.7)
    data.frame(y = stats::rbinom(20000L, 1, stats::plogis(-1 + 0.5 * x + u[g])), x = x,
               g = factor(g))
})
runs <- c(
    compare("sleepstudy", Reaction ~ Days + (Days | Subject), lme4::sleepstudy, gaussian()),
    compare("cbpp", cbind(incidence, size - incidence) ~ period + (1 | herd), cbpp, binomial()),
    compare("simulated: 20,000 rows, 500 groups", y ~ x + (1 | g), simulated, binomial()))
md <- c("# Mixed models at sgld()'s and sgldcv()'s defaults against stan_glmer() (bench/bench_mixed_fit.R)", "",
        sprintf("Both with rstanarm's default priors (decov(1, 1, 1, 1) on the group covariance, a gaussian model's sds scaled by sigma); stan_glmer 4 chains x %d iterations (NUTS, 2 cores), ours one chain at the sampler's defaults (its run grown until the draws mix).  error / sd: our posterior mean minus NUTS's, in NUTS posterior sds; sd ratio: ours / NUTS's.  rstanarm %s; BLAS %s.",
                iter, utils::packageVersion("rstanarm"), sgfs:::blas_label()), "")
for (r in runs) {
    t <- r$table
    effect <- startsWith(t$parameter, "b[")
    md <- c(md, sprintf("## %s, %s()", t$data[1L], r$sampler), "",
            sprintf("%s(): %s iterations in %.1f s; stan_glmer: %.1f s.", r$sampler,
                    format(r$n_iter, big.mark = ","), r$seconds[["ours"]], r$seconds[["nuts"]]), "",
            "| parameter | mean (NUTS) | sd (NUTS) | error / sd | sd ratio | bulk ESS ours | R-hat ours | bulk ESS NUTS |",
            "|---|---:|---:|---:|---:|---:|---:|---:|",
            with(t[!effect, ], sprintf("| %s | %.4g | %.3g | %+.3f | %.3f | %.0f | %.3f | %.0f |", parameter, mean_nuts,
                                       sd_nuts, error_sd, sd_ratio, ess_ours, rhat_ours, ess_nuts)),
            with(t[effect, ], sprintf("| %d group effects b[...] | | | %+.3f to %+.3f | %.3f to %.3f | >= %.0f | <= %.3f | >= %.0f |",
                                      length(parameter), min(error_sd), max(error_sd), min(sd_ratio),
                                      max(sd_ratio), min(ess_ours), max(rhat_ours), min(ess_nuts))), "")
}
writeLines(md, file.path(out_dir, "mixed-fit.md"))
print(do.call(rbind, lapply(runs, `[[`, "table")))
