## Which sampler when: effective draws per second of every sampler at its
## defaults, against the number of rows N and against the conditioning of
## the posterior.
##
## Simulated logistic regressions with D = 10 predictors (plus intercept)
## whose correlation is AR(1) with parameter rho (rho -> 1: a badly
## conditioned posterior), true coefficients alternating +-0.5.
##   N sweep:            N = 1e3, 1e4, 1e5, 1e6 at rho = 0.9
##   conditioning sweep: rho = 0, 0.9, 0.99, 0.999 at N = 1e4
## Each sampler runs one chain with its defaults (n_iter = NULL: the run
## grows to 400 bulk effective draws, within max_time = 60 s here), seed
## fixed.  Measured: wall seconds of the whole call (set-up, mode, sampling,
## checks), the smallest bulk ESS over parameters, effective draws per
## second (the figure), and the condition number of the posterior's
## curvature at the mode on the standardised scale.
##
## Run from the repository root:
##   R_LIBS=<library with sgfs> Rscript bench/bench_which_sampler.R [N|rho]
## (one sweep only with an argument; each sweep's rows are kept in
## bench/results/which-sampler-<sweep>.csv and the table and figure are made
## from the sweeps there)
## Writes bench/results/which-sampler.{md,csv} and the figure
## vignettes/which-sampler.png (used by README.md and the getting-started
## vignette).
suppressPackageStartupMessages(library(sgfs))

simulate <- function(N, rho, D = 10L, seed = 1L) {
    set.seed(seed)
    z <- matrix(rnorm(N * D), N, D)
    x <- z
    for (j in 2:D) x[, j] <- rho * x[, j - 1L] + sqrt(1 - rho^2) * z[, j]
    beta <- rep(c(0.5, -0.5), length.out = D)
    y <- rbinom(N, 1L, plogis(drop(x %*% beta)))
    list(x = x, y = y)
}

samplers <- list(
    `SGFS-f` = function(d) sgfs(d$x, d$y, max_time = 60, verbose = FALSE, progress = FALSE),
    SGLD = function(d) sgld(d$x, d$y, max_time = 60, verbose = FALSE, progress = FALSE),
    `SGLD (identity)` = function(d) sgld(d$x, d$y, metric = "identity", max_time = 60,
                                         verbose = FALSE, progress = FALSE),
    `SGLD-CV` = function(d) sgldcv(d$x, d$y, max_time = 60, verbose = FALSE, progress = FALSE),
    pSGLD = function(d) psgld(d$x, d$y, max_time = 60, verbose = FALSE, progress = FALSE),
    SGHMC = function(d) sghmc(d$x, d$y, max_time = 60, verbose = FALSE, progress = FALSE),
    OSGFS = function(d) osgfs(d$x, d$y, max_time = 60, verbose = FALSE, progress = FALSE),
    MALA = function(d) mala(d$x, d$y, max_time = 60, verbose = FALSE, progress = FALSE),
    HMC = function(d) hmc(d$x, d$y, max_time = 60, verbose = FALSE, progress = FALSE))

condition_number <- function(d) {
    fit <- glm(d$y ~ scale(d$x), family = binomial)
    ev <- eigen(solve(vcov(fit)), symmetric = TRUE, only.values = TRUE)$values
    max(ev) / min(ev)
}

one <- function(name, d, N, rho) {
    set.seed(2)
    t <- system.time(fit <- tryCatch(suppressWarnings(samplers[[name]](d)),
                                     error = function(e) e))[["elapsed"]]
    if (inherits(fit, "error"))
        return(data.frame(sampler = name, N = N, rho = rho, seconds = t, min_ess = NA,
                          ess_per_second = NA, n_iter = NA, stop = conditionMessage(fit)))
    info <- attr(fit, "sgfit")
    ess <- min(sgfs:::convergence_table(sgfs:::chain_draws(fit))$ess_bulk)
    data.frame(sampler = name, N = N, rho = rho, seconds = t, min_ess = ess,
               ess_per_second = ess / t, n_iter = info$n_iter,
               stop = if (is.null(info$run_length)) "" else info$run_length$stop)
}

grid <- rbind(data.frame(N = c(1e3, 1e4, 1e5, 1e6), rho = 0.9, sweep = "N"),
              data.frame(N = 1e4, rho = c(0, 0.99, 0.999), sweep = "rho"))
only <- commandArgs(trailingOnly = TRUE)
sweeps <- if (length(only)) only else c("N", "rho")
grid <- grid[grid$sweep %in% sweeps, ]
rows <- list()
for (g in seq_len(nrow(grid))) {
    d <- simulate(grid$N[g], grid$rho[g])
    kappa <- condition_number(d)
    for (name in names(samplers)) {
        r <- one(name, d, grid$N[g], grid$rho[g])
        r$kappa <- kappa
        r$sweep <- grid$sweep[g]
        rows[[length(rows) + 1L]] <- r
        cat(sprintf("N %g rho %g (kappa %.3g) %-16s %7.1f s  ESS %6.0f  ESS/s %8.2f  %s\n",
                    r$N, r$rho, kappa, name, r$seconds, r$min_ess, r$ess_per_second, r$stop))
    }
}
res <- do.call(rbind, rows)
dir.create("bench/results", showWarnings = FALSE, recursive = TRUE)
for (sw in sweeps)
    write.csv(res[res$sweep == sw, ], sprintf("bench/results/which-sampler-%s.csv", sw),
              row.names = FALSE)
files <- sprintf("bench/results/which-sampler-%s.csv", c("N", "rho"))
res <- do.call(rbind, lapply(files[file.exists(files)], utils::read.csv))

blas <- basename(extSoftVersion()[["BLAS"]])
md <- c("# Which sampler when: effective draws per second at the defaults",
        "",
        sprintf("`R_LIBS=<lib> Rscript bench/bench_which_sampler.R`, %s, BLAS: %s, %s.",
                format(Sys.Date()), if (nzchar(blas)) blas else "R's reference BLAS",
                "2-core shared machine (seconds are upper bounds)"),
        "Simulated logistic regression, D = 10 AR(1)-correlated predictors; one chain",
        "per sampler at its defaults (n_iter = NULL, max_time = 60 s); wall seconds",
        "of the whole call; ESS = smallest bulk effective sample size.", "",
        "| N | rho | kappa | sampler | s | min ESS | ESS/s | n_iter | stop |",
        "|---|---|---|---|---|---|---|---|---|",
        sprintf("| %s | %g | %.3g | %s | %.1f | %.0f | %.2f | %s | %s |",
                format(res$N, big.mark = ",", scientific = FALSE, trim = TRUE), res$rho,
                res$kappa, res$sampler, res$seconds, res$min_ess, res$ess_per_second,
                format(res$n_iter, big.mark = ",", scientific = FALSE, trim = TRUE), res$stop))
writeLines(md, "bench/results/which-sampler.md")

png("vignettes/which-sampler.png", width = 900, height = 420, res = 100)
op <- par(mfrow = c(1, 2), mar = c(4, 4, 2, 1))
cols <- setNames(seq_along(samplers), names(samplers))
draw <- function(sub, x, xlab, main) {
    y <- pmax(sub$ess_per_second, 1e-3)
    plot(NA, xlim = range(x), ylim = range(y[is.finite(y)], na.rm = TRUE), log = "xy",
         xlab = xlab, ylab = "effective draws / s (whole call)", main = main)
    for (name in names(samplers)) {
        k <- sub$sampler == name
        lines(x[k], y[k], type = "b", col = cols[name], pch = cols[name])
    }
}
n_sweep <- res[res$sweep == "N", ]
draw(n_sweep, n_sweep$N, "rows N", "rho = 0.9")
r_sweep <- res[res$N == 1e4, ]
r_sweep <- r_sweep[order(r_sweep$kappa), ]
draw(r_sweep, r_sweep$kappa, "condition number of the posterior", "N = 10,000")
legend("bottomleft", legend = names(samplers), col = cols, pch = cols, lty = 1, cex = 0.7,
       bty = "n")
par(op)
invisible(dev.off())
