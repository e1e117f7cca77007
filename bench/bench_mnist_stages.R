## MNIST 784-400-400-10 ReLU at a sampler's defaults (batch 100), run in
## stages of 25 epochs that each continue the chain (update(), append =
## FALSE): the posterior predictive of each stage's own draws on the 10,000
## test digits, to see whether the chain is still improving (convergence
## limits the result) or has settled (the sampled posterior does).
##
##   R_LIBS=/tmp/benchlib Rscript bench/bench_mnist_stages.R [SAMPLER [STAGES]]
##
## Needs ../shared/datasets/mnist.  Writes bench/results/mnist-stages-<sampler>.md.
suppressPackageStartupMessages(library(sgfs))
args <- commandArgs(TRUE)
sampler <- if (length(args)) args[1] else "sghmc"
stages <- if (length(args) > 1L) as.integer(args[2]) else 5L
source(file.path(if (dir.exists("bench")) "bench" else ".", "mnist_common.R"))
per <- 15000L                                   # 25 epochs of batch 100
set.seed(1)
t0 <- proc.time()[["elapsed"]]
fit <- suppressWarnings(get(sampler)(train$x, train$y, family = categorical(),
    model = mlp(c(400, 400), "relu"), batch_size = 100L, n_iter = per, burnin = 3000L,
    thin = 600L, keep = predictive(test$x), progress = FALSE))
rows <- list()
for (k in seq_len(stages)) {
    if (k > 1L) fit <- suppressWarnings(update(fit, n_iter = per, append = FALSE, progress = FALSE))
    p <- predict(fit, type = "response")
    rows[[k]] <- data.frame(stage = k, epochs = sprintf("%d-%d", if (k == 1L) 5L else 25L * (k - 1L), 25L * k),
                            test_error = class_error(p, test$y), log_loss = log_loss(p, test$y),
                            seconds = proc.time()[["elapsed"]] - t0)
    print(rows[[k]])
}
tab <- do.call(rbind, rows)
md <- c(sprintf("# MNIST 784-400-400-10 ReLU, %s at its defaults, in stages of 25 epochs (bench/bench_mnist_stages.R)", sampler), "",
        sprintf("Batch 100; each stage continues the chain and predicts from its own draws (every 600th iteration; the first stage after 5 epochs of burn-in). BLAS: %s.", sgfs:::blas_label()), "",
        "| stage | epochs | test error | test log-loss | seconds |", "|---|---|---|---|---|",
        sprintf("| %d | %s | %.4f | %.4f | %.0f |", tab$stage, tab$epochs, tab$test_error,
                tab$log_loss, tab$seconds))
writeLines(md, file.path(out_dir, sprintf("mnist-stages-%s.md", sampler)))
cat(md, sep = "\n")
