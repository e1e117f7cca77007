## What the MNIST benchmarks share (sourced by bench_mnist_*.R): the data
## from ../shared/datasets/mnist, where results go, and the two scores of a
## matrix p of predicted class probabilities (rows: digits).
path <- file.path("..", "shared", "datasets", "mnist")
out_dir <- file.path(if (dir.exists("bench")) "bench" else ".", "results")
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
train <- read_mnist(path, "train")
test <- read_mnist(path, "test")
class_error <- function(p, y) mean(max.col(p, ties.method = "first") != as.integer(y))
log_loss <- function(p, y) -mean(log(pmax(p[cbind(seq_along(y), as.integer(y))], 1e-15)))
