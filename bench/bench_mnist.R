## MNIST networks (issue 4).
##
## A. Ahn, Korattikara and Welling (2012) section 5.2.2: the ten digits,
##    inputs a 20-dimensional random projection of the pixels, one hidden
##    layer of 30 logistic units, softmax output (here with the first class
##    as reference: D = 30 * 21 + 9 * 31 = 909 rather than the paper's 940),
##    batch 2,000.  SGFS-f, SGFS-d and SGLD (each started at the Adam mode,
##    their default for networks) against plain SGD with the same total
##    number of minibatch gradients; test error of the posterior predictive
##    (SGD: of its Polyak-averaged estimate) and time per iteration.
## B. sgmcmc's MNIST example: a 784-100-10 network, SGLD at step 1e-4, batch
##    500, pixels in [0, 1] (constant pixels dropped, no standardisation),
##    with keep = predictive(test): test log-loss and error; and the same at
##    the package's data-derived default step.  (sgmcmc's network uses a
##    softmax as hidden activation and Gamma hyperpriors; ours uses tanh
##    units and the fixed fan-in prior, whose curvature is far larger.)
##
##   R_LIBS=/tmp/benchlib Rscript bench/bench_mnist.R [A|B]
##
## Writes bench/results/mnist.md.  Needs ../shared/datasets/mnist.  With
## reference BLAS part A's SGFS-f takes about 1 s per iteration; see
## bench/README.md for running with OpenBLAS.

suppressPackageStartupMessages(library(sgfs))
parts <- commandArgs(TRUE)
if (!length(parts)) parts <- c("A", "B")
path <- file.path("..", "shared", "datasets", "mnist")
if (!dir.exists(path)) stop("no MNIST data at ", path)
out_dir <- file.path(if (dir.exists("bench")) "bench" else ".", "results")
blas <- sub(".*/", "", extSoftVersion()[["BLAS"]])
if (any(grepl("openblas", readLines("/proc/self/maps")))) blas <- paste(blas, "(OpenBLAS)")

train <- read_mnist(path, "train")
test <- read_mnist(path, "test")
lines <- c("# MNIST networks (bench/bench_mnist.R)", "", sprintf("BLAS: %s.", blas), "")

class_error <- function(p, y) mean(max.col(p, ties.method = "first") != as.integer(y))
log_loss <- function(p, y) -mean(log(pmax(p[cbind(seq_along(y), as.integer(y))], 1e-15)))

if ("A" %in% parts) {
    set.seed(1)
    R <- matrix(rnorm(784 * 20), 784, 20) / sqrt(784)
    x <- train$x %*% R
    xt <- test$x %*% R
    n_iter <- 2000L
    runs <- list(
        `SGFS-f` = function() sgfs(x, train$y, family = categorical(), model = mlp(30, "logistic"),
                                   batch_size = 2000L, n_iter = n_iter, burnin = 500L, thin = 5L),
        `SGFS-d` = function() sgfs(x, train$y, family = categorical(), model = mlp(30, "logistic"),
                                   preconditioner = "diagonal", batch_size = 2000L,
                                   n_iter = n_iter, burnin = 500L, thin = 5L),
        SGLD = function() sgld(x, train$y, family = categorical(), model = mlp(30, "logistic"),
                               batch_size = 2000L, n_iter = n_iter, burnin = 500L, thin = 5L,
                               init = "map"),
        SGD = function() sga(x, train$y, family = categorical(), model = mlp(30, "logistic"),
                             optimizer = "sgd", batch_size = 2000L, n_iter = 10000L + n_iter),
        Adam = function() sga(x, train$y, family = categorical(), model = mlp(30, "logistic"),
                              batch_size = 2000L, n_iter = 10000L + n_iter))
    rows <- list()
    for (name in names(runs)) {
        set.seed(2)
        t0 <- proc.time()[["elapsed"]]
        fit <- suppressWarnings(runs[[name]]())
        total <- proc.time()[["elapsed"]] - t0
        info <- attr(fit, "sgfit")
        p <- predict(fit, xt, type = "response")
        its <- info$n_iter
        rows[[name]] <- data.frame(
            method = name, iterations = its,
            test_error = class_error(p, test$y), log_loss = log_loss(p, test$y),
            ms_per_iter = 1000 * info$elapsed / its, total_s = total)
        print(rows[[name]])
    }
    tab <- do.call(rbind, rows)
    lines <- c(lines, "## A. Ahn et al. 5.2.2: 20-d random projection, 30 logistic units, batch 2000", "",
               "SGFS-f, SGFS-d and SGLD run 2,000 iterations (500 burn-in, thin 5) from the Adam mode found in 10,000 iterations (SGFS's default for networks; SGLD's given, init = \"map\", as its default for networks is now a random start), at their default steps (SGLD's from its gradient noise); SGD and Adam alone run 12,000 iterations from the random start. ms/iteration counts the sampler's own iterations only; total time includes finding the start.", "",
               "| method | iterations | test error | test log-loss | ms / iteration | total s |",
               "|---|---|---|---|---|---|",
               sprintf("| %s | %d | %.4f | %.4f | %.2f | %.1f |", tab$method, tab$iterations,
                       tab$test_error, tab$log_loss, tab$ms_per_iter, tab$total_s), "")
}

if ("B" %in% parts) {
    keep_px <- apply(train$x, 2L, stats::sd) > 0
    x <- train$x[, keep_px]
    xt <- test$x[, keep_px]
    rows <- list()
    for (step in list(1e-4, NULL)) {
        set.seed(3)
        t0 <- proc.time()[["elapsed"]]
        fit <- suppressWarnings(sgld(x, train$y, family = categorical(), model = mlp(100),
                                     standardize = FALSE, stepsize = step, batch_size = 500L,
                                     n_iter = 5000L, burnin = 1000L, thin = 40L,
                                     keep = predictive(xt)))
        total <- proc.time()[["elapsed"]] - t0
        info <- attr(fit, "sgfit")
        p <- predict(fit, type = "response")
        rows[[length(rows) + 1L]] <- data.frame(
            stepsize = info$settings$stepsize, inflation = info$settings$inflation,
            test_error = class_error(p, test$y), log_loss = log_loss(p, test$y),
            ms_per_iter = 1000 * info$elapsed / info$n_iter, total_s = total,
            draws_kept = info$pred$count, mb = as.numeric(utils::object.size(fit)) / 2^20)
        print(rows[[length(rows)]])
    }
    tab <- do.call(rbind, rows)
    lines <- c(lines, sprintf("## B. sgmcmc's example: 784-100-10 tanh network (D = %d), SGLD, batch 500", info$design$D), "",
               "5,000 iterations (1,000 burn-in); every 40th draw adds its predictive on the 10,000 test digits (keep = predictive(test)); init = \"map\" (Adam). inflation: the default report's estimate of the variance inflation in the stiffest direction.", "",
               "| step size | variance inflation | test error | test log-loss | ms / iteration | total s | predictive draws | fit size (MB; the engine's data copy) |",
               "|---|---|---|---|---|---|---|---|",
               sprintf("| %.3g | %.3g | %.4f | %.4f | %.1f | %.1f | %d | %.2f |", tab$stepsize,
                       tab$inflation, tab$test_error, tab$log_loss, tab$ms_per_iter, tab$total_s,
                       tab$draws_kept, tab$mb), "")
}
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
writeLines(lines, file.path(out_dir, sprintf("mnist%s.md",
                                             if (length(parts) == 1L) paste0("-", parts) else "")))
cat(lines, sep = "\n")
