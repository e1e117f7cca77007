## UCI regression benchmarks for Bayesian neural networks (issue 4): one
## hidden layer of 50 ReLU units, inputs and target standardised on each
## training split (the package's standardize = TRUE), the standard 20
## train/test splits (protein: 100 units, 5 splits), RMSE and test
## log-likelihood of the posterior predictive averaged over the splits, for
## pSGLD, SGHMC and SGLD at their defaults (random start, steps from the
## chain's gradient noise, R/noise-steps.R; each layer's prior scale learned,
## normal_gamma()) with the protocol's batch of 32 and a fixed length
## (UCI_ITER iterations, default 80,000, a quarter burn-in), next to the
## published MC-dropout results on the same splits (Gal and Ghahramani
## 2016, grid-search version, mean and standard error).  UCI_SAMPLERS
## (e.g. "pSGLD") runs some of the samplers.
##
##   R_LIBS=/tmp/benchlib Rscript bench/bench_uci.R [splits] [datasets...]
##
## Writes bench/results/uci-<data set>.csv (one row per split and sampler)
## and bench/results/uci.md (the averages over every such file present), so
## that data sets can run in parallel processes.  Needs ../shared/datasets.

suppressPackageStartupMessages(library(sgfs))
args <- commandArgs(TRUE)
n_splits <- if (length(args)) as.integer(args[1]) else 20L
sets <- if (length(args) > 1L) args[-1L] else
    c("bostonHousing", "concrete", "energy", "kin8nm", "naval-propulsion-plant", "power-plant",
      "protein-tertiary-structure", "wine-quality-red", "yacht")
path <- file.path("..", "shared", "datasets", "uci_regression")
if (!dir.exists(path)) stop("no UCI data at ", path)
out_dir <- file.path(if (dir.exists("bench")) "bench" else ".", "results")
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
## UCI_ITER=auto: the package's own run length and batch (n_iter = NULL,
## the default batch_size), into uci-auto-*.csv / uci-auto.md
auto <- identical(Sys.getenv("UCI_ITER"), "auto")
n_iter <- if (auto) NA_integer_ else as.integer(Sys.getenv("UCI_ITER", "80000"))
tag <- if (auto) "uci-auto" else "uci"

dropout <- data.frame(
    data = c("bostonHousing", "concrete", "energy", "kin8nm", "naval-propulsion-plant",
             "power-plant", "protein-tertiary-structure", "wine-quality-red", "yacht"),
    rmse = c(2.90, 4.82, 0.54, 0.08, 0.00, 4.01, 4.27, 0.62, 0.67),
    rmse_se = c(0.18, 0.16, 0.06, 0.00, 0.00, 0.04, 0.01, 0.01, 0.05),
    ll = c(-2.40, -2.93, -1.21, 1.14, 4.45, -2.80, -2.87, -0.93, -1.25),
    ll_se = c(0.04, 0.02, 0.01, 0.01, 0.00, 0.01, 0.00, 0.01, 0.01))

samplers <- list(
    pSGLD = function(...) psgld(...),
    SGHMC = function(...) sghmc(...),
    SGLD = function(...) sgld(...))
if (nzchar(Sys.getenv("UCI_SAMPLERS")))
    samplers <- samplers[strsplit(Sys.getenv("UCI_SAMPLERS"), ",")[[1L]]]

## posterior predictive RMSE and mean log density on the test rows
test_metrics <- function(fit, x, y) {
    B <- as.matrix(fit)
    mu <- t(sgfs:::posterior_linpred.sgfit(fit, newdata = x))    # rows x draws
    sigma <- exp(B[, "log_sigma"])
    dens <- dnorm(y, mu, rep(sigma, each = nrow(mu)), log = TRUE)
    m <- apply(dens, 1L, max)
    c(rmse = sqrt(mean((rowMeans(mu) - y)^2)),
      ll = mean(m + log(rowMeans(exp(dens - m)))))
}

blas <- sub(".*/", "", extSoftVersion()[["BLAS"]])
for (set in if (n_splits > 0L) sets) {          # 0 splits: only the table
    csv <- file.path(out_dir, sprintf("%s-%s.csv", tag, set))
    ## (the other samplers' rows of an earlier run are kept)
    ## (UCI_KEEP=1: the splits a sampler has results for are not run again)
    keep_done <- identical(Sys.getenv("UCI_KEEP"), "1")
    old <- if (file.exists(csv)) utils::read.csv(csv)
    rows <- if (is.null(old)) list()
            else list(old[!(old$sampler %in% names(samplers)) | keep_done, , drop = FALSE])
    u <- read_uci(set, path)
    for (k in seq_len(min(n_splits, length(u$splits)))) {
        s <- u$splits[[k]]
        for (name in names(samplers)) {
            if (keep_done && !is.null(old) && any(old$split == k & old$sampler == name)) next
            set.seed(k)
            t0 <- proc.time()[["elapsed"]]
            res <- tryCatch({
                fit <- suppressWarnings(if (auto)
                    samplers[[name]](u$x[s$train, ], u$y[s$train], family = gaussian(),
                                     model = mlp(u$hidden, "relu"), progress = FALSE)
                else samplers[[name]](
                    u$x[s$train, ], u$y[s$train], family = gaussian(),
                    model = mlp(u$hidden, "relu"), batch_size = 32L, n_iter = n_iter,
                    burnin = n_iter %/% 4L, thin = max(1L, n_iter %/% 2000L), progress = FALSE))
                test_metrics(fit, u$x[s$test, , drop = FALSE], u$y[s$test])
            }, error = function(e) {
                message(set, " split ", k, " ", name, ": ", conditionMessage(e))
                c(rmse = NA, ll = NA)
            })
            row <- data.frame(data = set, split = k, sampler = name, rmse = res[["rmse"]],
                              ll = res[["ll"]], seconds = proc.time()[["elapsed"]] - t0)
            rows[[length(rows) + 1L]] <- row
            cat(sprintf("%-18s %2d %-18s rmse %7.3f  ll %7.3f  %5.1f s\n", set, k, name,
                        row$rmse, row$ll, row$seconds))
            utils::write.csv(do.call(rbind, rows), csv, row.names = FALSE)
        }
    }
}

files <- list.files(out_dir, sprintf("^%s-[a-zA-Z].*[.]csv$", tag), full.names = TRUE)
if (!auto) files <- files[!grepl("^uci-(auto|hmc)-", basename(files))]
all <- do.call(rbind, lapply(files, utils::read.csv))
agg <- function(v) sprintf("%.3f ± %.3f", mean(v, na.rm = TRUE),
                           stats::sd(v, na.rm = TRUE) / sqrt(sum(!is.na(v))))
tab <- do.call(rbind, lapply(split(all, list(all$data, all$sampler), drop = TRUE), function(d)
    data.frame(data = d$data[1], sampler = d$sampler[1], splits = sum(!is.na(d$rmse)),
               rmse = agg(d$rmse), ll = agg(d$ll), seconds = round(mean(d$seconds), 1))))
tab <- merge(tab, setNames(dropout, c("data", "dropout_rmse", "dropout_rmse_se", "dropout_ll",
                                      "dropout_ll_se")), all.x = TRUE)
## the issue's bar: log-lik >= dropout's - 1 se, RMSE <= dropout's + 1 se
mean_of <- function(v) as.numeric(sub(" .*", "", v))
## (dropout's figures are published to two decimals: half a unit of rounding allowed)
tab$meets <- ifelse(mean_of(tab$ll) >= tab$dropout_ll - tab$dropout_ll_se - 0.005 &
                    mean_of(tab$rmse) <= tab$dropout_rmse + tab$dropout_rmse_se + 0.005, "yes", "no")
tab <- tab[order(tab$data, tab$sampler), ]
md <- c("# UCI regression: Bayesian neural networks (bench/bench_uci.R)", "",
        sprintf("One hidden layer of 50 ReLU units (protein 100); %s; defaults otherwise. BLAS: %s. Mean ± standard error over the splits; MC dropout (grid search) from Gal and Ghahramani (2016) on the same splits; 'meets': log-lik at least dropout's minus one standard error and RMSE at most dropout's plus one (each with half a unit of the published rounding).",
                if (auto) "the package's run length (n_iter = NULL: grown until the layers' mean squares and log_sigma mix, within max_time = 300 s) and batch size"
                else sprintf("%s iterations (a quarter burn-in), batch 32", format(n_iter, big.mark = ",")),
                blas), "",
        "| data | sampler | splits | RMSE | test log-lik | MC dropout RMSE | MC dropout log-lik | meets | s per fit |",
        "|---|---|---|---|---|---|---|---|---|",
        sprintf("| %s | %s | %d | %s | %s | %.2f ± %.2f | %.2f ± %.2f | %s | %.1f |", tab$data, tab$sampler,
                tab$splits, tab$rmse, tab$ll, tab$dropout_rmse, tab$dropout_rmse_se,
                tab$dropout_ll, tab$dropout_ll_se, tab$meets, tab$seconds))
writeLines(md, file.path(out_dir, sprintf("%s.md", tag)))
cat(md, sep = "\n")
