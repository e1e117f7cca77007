## Full-batch HMC as the exact reference for the UCI networks (issue 35):
## hmc() at its defaults for networks (random start, a warm-up's diagonal
## mass, the layers' learned scales drawn by Gibbs) on one split, next to
## the stochastic-gradient samplers' rows of bench/results/uci-<set>.csv for
## the same split (their defaults, 80,000 iterations): test RMSE, test
## log-likelihood of the posterior predictive, and the posterior mean of the
## noise sd sigma.
##
##   R_LIBS=/tmp/benchlib Rscript bench/bench_uci_hmc.R SET SPLIT [ITERATIONS [BURNIN]]
##
## Writes bench/results/uci-hmc-<set>-<split>.csv; bench/results/uci-hmc.md
## gathers every such file with the samplers' rows.

suppressPackageStartupMessages(library(sgfs))
args <- commandArgs(TRUE)
set <- args[1]
k <- as.integer(args[2])
n_iter <- if (length(args) > 2L) as.integer(args[3]) else 6000L
burnin <- if (length(args) > 3L) as.integer(args[4]) else n_iter %/% 3L
out_dir <- file.path(if (dir.exists("bench")) "bench" else ".", "results")
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
u <- read_uci(set, file.path("..", "shared", "datasets", "uci_regression"))
s <- u$splits[[k]]

test_metrics <- function(fit, x, y) {
    B <- as.matrix(fit)
    mu <- t(sgfs:::posterior_linpred.sgfit(fit, newdata = x))
    sigma <- exp(B[, "log_sigma"])
    dens <- dnorm(y, mu, rep(sigma, each = nrow(mu)), log = TRUE)
    m <- apply(dens, 1L, max)
    c(rmse = sqrt(mean((rowMeans(mu) - y)^2)), ll = mean(m + log(rowMeans(exp(dens - m)))),
      sigma = mean(sigma))
}

set.seed(k)
t0 <- proc.time()[["elapsed"]]
fit <- suppressWarnings(hmc(u$x[s$train, ], u$y[s$train], family = gaussian(),
                            model = mlp(u$hidden, "relu"), n_iter = n_iter,
                            burnin = burnin, progress = FALSE))
info <- attr(fit, "sgfit")
r <- test_metrics(fit, u$x[s$test, , drop = FALSE], u$y[s$test])
row <- data.frame(data = set, split = k, sampler = "HMC", iterations = n_iter, burnin = burnin,
                  rmse = r[["rmse"]], ll = r[["ll"]], sigma = r[["sigma"]],
                  acceptance = sgfs:::acceptance_rate(info),
                  leapfrogs = sum(vapply(info$states, function(st)
                      sgfs:::state_parts(info, st)$leapfrogs, 0)),
                  seconds = proc.time()[["elapsed"]] - t0)
print(row)
utils::write.csv(row, file.path(out_dir, sprintf("uci-hmc-%s-%d.csv", set, k)),
                 row.names = FALSE)

files <- list.files(out_dir, "^uci-hmc-.*[.]csv$", full.names = TRUE)
hmc_rows <- do.call(rbind, lapply(files, utils::read.csv))
sg_rows <- do.call(rbind, lapply(unique(hmc_rows$data), function(d) {
    f <- file.path(out_dir, sprintf("uci-%s.csv", d))
    if (file.exists(f)) utils::read.csv(f)
}))
sg_rows <- merge(sg_rows, unique(hmc_rows[c("data", "split")]))
md <- c("# UCI networks against full-batch HMC (bench/bench_uci_hmc.R)", "",
        "One hidden layer of 50 ReLU units, the default prior (learned layer scales). HMC: hmc() at its defaults for networks (random start, diagonal mass from a warm-up). The other rows: the stochastic-gradient samplers at their defaults, 80,000 iterations, batch 32 (bench/bench_uci.R), on the same split. sigma: the posterior mean of the noise sd.", "",
        "| data | split | sampler | test RMSE | test log-lik | sigma | seconds |",
        "|---|---|---|---|---|---|---|",
        sprintf("| %s | %d | HMC (%d iterations, %s burn-in, acceptance %.2f) | %.3f | %.3f | %.3f | %.0f |",
                hmc_rows$data, hmc_rows$split, hmc_rows$iterations,
                if (is.null(hmc_rows$burnin)) "a third" else format(hmc_rows$burnin), hmc_rows$acceptance,
                hmc_rows$rmse, hmc_rows$ll, hmc_rows$sigma, hmc_rows$seconds),
        if (!is.null(sg_rows) && nrow(sg_rows))
            sprintf("| %s | %d | %s | %.3f | %.3f | | %.0f |", sg_rows$data, sg_rows$split,
                    sg_rows$sampler, sg_rows$rmse, sg_rows$ll, sg_rows$seconds))
writeLines(md, file.path(out_dir, "uci-hmc.md"))
cat(md, sep = "\n")
