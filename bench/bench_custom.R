## custom_model() on the OSGFS report's one-dimensional toy posteriors and
## sgmcmc's bivariate Gaussian mixture, against exact posteriors.
##   Rscript bench/bench_custom.R   (from the package root, with this sgfs
##   installed first on .libPaths(), e.g. R_LIBS=/tmp/lib Rscript ...)
## Writes bench/results/custom.md.
##
## Toys (tests/testthat/helper-custom.R): N = 10,000 simulated points; the
## report states only that batches below about 1 % of N shifted OSGFS's
## mean, so each toy runs at S = 50 (0.5 %) and S = 1000 (10 %).  Exact
## posterior: numerical integration on a 4001-point grid.  Every chain
## starts at the model's init (init = NULL) and runs 10,000 iterations.
## For the two-mode mixture the posterior mean is 0 by symmetry: the table
## gives the mean and sd of |theta| and the share of draws with theta > 0.
##
## sgmcmc's mixture: 4 parameters (two 2-d means); the posterior is
## symmetric under swapping them, so the table compares the pooled means
## (the vignette's plot) with a long full-data HMC run of this package.

suppressPackageStartupMessages(library(sgfs))
source("tests/testthat/helper-custom.R")

fmt <- function(x, d = 4) formatC(x, digits = d, format = "g")

run_quietly <- function(expr) {
    warned <- character(0)
    t0 <- proc.time()[["elapsed"]]
    fit <- withCallingHandlers(tryCatch(expr, error = function(e) conditionMessage(e)),
                               warning = function(w) {
                                   warned <<- c(warned, conditionMessage(w))
                                   invokeRestart("muffleWarning")
                               })
    list(fit = fit, warned = warned, time = proc.time()[["elapsed"]] - t0)
}

samplers <- list(SGLD = sgld, `SGFS-f` = sgfs, OSGFS = osgfs, SGHMC = sghmc)

toy_rows <- list()
for (kind in c("gaussian", "mixture", "gamma")) {
    toy <- toy_problem(kind)
    exact <- toy_exact(toy)
    mixture <- kind == "mixture"
    toy_rows[[length(toy_rows) + 1L]] <- data.frame(
        toy = kind, sampler = "exact", S = NA, mean = if (mixture) exact$abs_mean else exact$mean,
        sd = if (mixture) exact$abs_sd else exact$sd, z_mean = NA, sd_ratio = NA, W1_sd = 0,
        pos = if (mixture) 0.5 else NA, ESS = NA, time = NA, note = "")
    for (S in c(50L, 1000L)) for (name in names(samplers)) {
        set.seed(1)
        r <- run_quietly(samplers[[name]](toy$x, model = toy$model, prior = toy$prior,
                                          batch_size = S, n_iter = 10000L, init = NULL))
        if (is.character(r$fit)) {
            toy_rows[[length(toy_rows) + 1L]] <- data.frame(
                toy = kind, sampler = name, S = S, mean = NA, sd = NA, z_mean = NA,
                sd_ratio = NA, W1_sd = NA, pos = NA, ESS = NA, time = r$time,
                note = paste("error:", substr(r$fit, 1, 60)))
            next
        }
        d <- as.matrix(r$fit)[, 1L]
        v <- if (mixture) abs(d) else d
        ref_mean <- if (mixture) exact$abs_mean else exact$mean
        ref_sd <- if (mixture) exact$abs_sd else exact$sd
        toy_rows[[length(toy_rows) + 1L]] <- data.frame(
            toy = kind, sampler = name, S = S, mean = mean(v), sd = sd(v),
            z_mean = (mean(v) - ref_mean) / ref_sd, sd_ratio = sd(v) / ref_sd,
            ## (the mixture's exact posterior is symmetric: so are its draws' reflections)
            W1_sd = toy_wasserstein(if (mixture) c(d, -d) else d, exact) / exact$sd,
            pos = if (mixture) mean(d > 0) else NA,
            ESS = round(coda::effectiveSize(v)), time = r$time,
            note = if (length(r$warned)) "warning: draws far from the mode" else "")
    }
}
toys <- do.call(rbind, toy_rows)

## sgmcmc's mixture: reference HMC (full data), then the SG samplers at
## sgmcmc's default batch (1 % of the rows)
mix <- sgmcmc_mixture()
set.seed(2)
ref <- run_quietly(hmc(mix$x, model = mix$model, prior = mix$prior, batch_size = 10000L,
                       n_iter = 3000L, init = NULL))
ref_pooled <- pooled_means(as.matrix(ref$fit))
mix_rows <- list(data.frame(sampler = "HMC (reference, 3000 iterations)", mean1 = mean(ref_pooled[, 1]),
                            mean2 = mean(ref_pooled[, 2]), sd1 = sd(ref_pooled[, 1]),
                            sd2 = sd(ref_pooled[, 2]), ESS = round(min(coda::effectiveSize(ref$fit))),
                            time = ref$time, note = ""))
for (name in names(samplers)) {
    set.seed(3)
    r <- run_quietly(samplers[[name]](mix$x, model = mix$model, prior = mix$prior,
                                      batch_size = 100L, n_iter = 10000L, init = NULL))
    if (is.character(r$fit)) {
        mix_rows[[length(mix_rows) + 1L]] <- data.frame(sampler = name, mean1 = NA, mean2 = NA,
            sd1 = NA, sd2 = NA, ESS = NA, time = r$time, note = paste("error:", substr(r$fit, 1, 60)))
        next
    }
    p <- pooled_means(as.matrix(r$fit))
    mix_rows[[length(mix_rows) + 1L]] <- data.frame(
        sampler = name, mean1 = mean(p[, 1]), mean2 = mean(p[, 2]), sd1 = sd(p[, 1]),
        sd2 = sd(p[, 2]), ESS = round(min(coda::effectiveSize(r$fit))), time = r$time,
        note = if (length(r$warned)) "warning: draws far from the mode" else "")
}
mixtab <- do.call(rbind, mix_rows)

md_table <- function(df) {
    df[] <- lapply(df, function(col) if (is.numeric(col)) ifelse(is.na(col), "", fmt(col)) else col)
    c(paste("|", paste(names(df), collapse = " | "), "|"),
      paste("|", paste(rep("---", ncol(df)), collapse = " | "), "|"),
      apply(df, 1L, function(r) paste("|", paste(r, collapse = " | "), "|")))
}

out <- c("# custom_model(): toy posteriors against exact ones",
         "",
         sprintf("Generated by bench/bench_custom.R on %s (R %s).", format(Sys.Date()),
                 getRversion()),
         "",
         "## The OSGFS report's one-dimensional toys (N = 10,000)",
         "",
         paste("Gaussian mean (x ~ N(1, 1)), symmetric two-component mixture",
               "(x ~ N(theta, 1)/2 + N(-theta, 1)/2, theta = 0.15: two modes),",
               "Gamma posterior (Poisson rate, lambda = 2); prior normal(0, 10).",
               "Exact: grid integration (4001 points).  10,000 iterations from the model's",
               "init, default settings otherwise.  For the mixture, mean and sd are those of",
               "|theta|, `pos` is the share of draws with theta > 0 (exact 0.5) and W1 compares",
               "the draws and their reflections -theta with the (symmetric) posterior.",
               "`z_mean` = (mean - exact) / exact sd; `W1_sd` = Wasserstein-1 distance",
               "of the draws to the exact posterior, in exact sds; ESS of the draws",
               "(|theta| for the mixture); time in seconds."),
         "",
         md_table(toys),
         "",
         "## sgmcmc's bivariate Gaussian mixture (N = 10,000, 4 parameters)",
         "",
         paste("Data from N(theta1, I)/2 + N(theta2, I)/2 with theta1 = (0, 0), theta2 = (0.1, 0.1)",
               "(seed 13), priors N(0, 10^2 I) on both means.  The posterior is symmetric under",
               "swapping the means: the columns are the moments of the pooled draws of both",
               "means (coordinates 1 and 2).  Reference: full-data HMC of this package.",
               "Batch 100 (1 %, sgmcmc's default), 10,000 iterations from the model's init;",
               "ESS is the smallest over the 4 parameters."),
         "",
         md_table(mixtab))
dir.create("bench/results", showWarnings = FALSE, recursive = TRUE)
writeLines(out, "bench/results/custom.md")
cat(out, sep = "\n")
