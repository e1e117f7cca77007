## Time per epoch of a 784-400-400-10 ReLU network on MNIST (batch 100,
## 600 iterations an epoch): the package's sgld, psgld, sghmc and isgd
## against the same rules hand-written in PyTorch (bench/mlp_torch.py,
## float64 and float32, one thread), measured alternately in one run.
## The package's chains run at a given step (no pilots) with keep =
## predictive() on 100 test digits, so that the draws kept are not D per
## iteration; its time is the sampling's (attr(fit, "sgfit")$elapsed).
##
##   R_LIBS=/tmp/benchlib Rscript bench/bench_mnist_speed.R [iterations] [rounds]
##
## Needs ../shared/datasets/mnist and python3-torch, python3-numpy (Debian).
## Writes bench/results/mnist-speed.md.

suppressPackageStartupMessages(library(sgfs))
args <- commandArgs(TRUE)
n_iter <- if (length(args)) as.integer(args[1]) else 300L
rounds <- if (length(args) > 1L) as.integer(args[2]) else 3L
path <- file.path("..", "shared", "datasets", "mnist")
bench_dir <- if (dir.exists("bench")) "bench" else "."
out_dir <- file.path(bench_dir, "results")
python <- if (file.exists("/usr/bin/python3")) "/usr/bin/python3" else "python3"
script <- file.path(bench_dir, "mlp_torch.py")
train <- read_mnist(path, "train")
test <- read_mnist(path, "test")
blas <- sgfs:::blas_label()

rules <- list(
    sgld = function(...) sgld(..., stepsize = 1e-9),
    psgld = function(...) psgld(..., stepsize = 1e-9),
    sghmc = function(...) sghmc(..., stepsize = 1e-9),
    isgd = function(...) isgd(..., stepsize = 1e-9))

r_epoch <- function(rule, precision) {
    set.seed(1)
    fit <- suppressWarnings(rules[[rule]](
        train$x, train$y, family = categorical(),
        model = mlp(c(400, 400), "relu", precision = precision),
        batch_size = 100L, n_iter = n_iter, burnin = n_iter %/% 2L, init = NULL,
        keep = predictive(test$x[1:100, ]), progress = FALSE))
    info <- attr(fit, "sgfit")
    600 * info$elapsed / n_iter
}
torch_epoch <- function(rule, dtype) {
    out <- system2(python, c(script, path, rule, dtype, n_iter), stdout = TRUE)
    as.numeric(sub("s_per_epoch ", "", grep("^s_per_epoch", out, value = TRUE)))
}

rows <- list()
for (k in seq_len(rounds)) for (rule in names(rules)) {
    t <- c(sgfs = r_epoch(rule, "double"), torch64 = torch_epoch(rule, "float64"),
           sgfs32 = r_epoch(rule, "single"), torch32 = torch_epoch(rule, "float32"))
    cat(sprintf("round %d %-6s sgfs %.2f s  torch float64 %.2f s  sgfs float32 %.2f s  torch float32 %.2f s\n",
                k, rule, t[1], t[2], t[3], t[4]))
    rows[[length(rows) + 1L]] <- data.frame(round = k, rule = rule, sgfs = t[["sgfs"]],
                                            torch64 = t[["torch64"]], sgfs32 = t[["sgfs32"]],
                                            torch32 = t[["torch32"]])
}
tab <- do.call(rbind, rows)
agg <- do.call(rbind, lapply(split(tab, tab$rule), function(d)
    data.frame(rule = d$rule[1], sgfs = median(d$sgfs), torch64 = median(d$torch64),
               sgfs32 = median(d$sgfs32), torch32 = median(d$torch32),
               ratio64 = median(d$sgfs / d$torch64), ratio32 = median(d$sgfs32 / d$torch32))))
md <- c("# MNIST 784-400-400-10 ReLU: seconds per epoch (bench/bench_mnist_speed.R)", "",
        sprintf(paste("Batch 100, 600 iterations an epoch, timed over %d iterations; median of %d",
                      "rounds run alternately in one process. sgfs: %s (the engine's BLAS one thread",
                      "while sampling); float32: mlp(precision = \"single\"). PyTorch %s, one thread,",
                      "autograd. Ratios: sgfs's time over PyTorch's in the same precision, per round,",
                      "median."), n_iter, rounds, blas,
                system2(python, c("-c", shQuote("import torch; print(torch.__version__)")),
                        stdout = TRUE)), "",
        "| rule | sgfs float64 | PyTorch float64 | sgfs float32 | PyTorch float32 | sgfs / PyTorch float64 | sgfs / PyTorch float32 |",
        "|---|---|---|---|---|---|---|",
        sprintf("| %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |", agg$rule, agg$sgfs, agg$torch64,
                agg$sgfs32, agg$torch32, agg$ratio64, agg$ratio32))
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
writeLines(md, file.path(out_dir, "mnist-speed.md"))
cat(md, sep = "\n")
