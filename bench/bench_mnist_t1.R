## MNIST 784-400-400-10 ReLU at temperature 1, sghmc at its defaults for 20
## epochs (batch 100) but for one knob: what limits the posterior
## predictive's test error at T = 1 (issue 35)?
##   share  the gradient-noise share the default step keeps (noise_share in
##          R/noise-steps.R, 0.3),
##   std    standardize (FALSE: the raw pixels in [0, 1]),
##   prior  an R expression (NULL: the default learned layer scales),
##   spread the most one coordinate's step may exceed another's (max_spread
##          in R/noise-steps.R, 10),
##   sched  an R expression for `schedule` ("constant": the default), e.g.
##          "schedule_cyclical(20)" (Zhang et al. 2020: steps falling from the
##          tuned one to nearly 0 in each of 20 cycles).
## Draws: every 300th iteration after a quarter of the run; MNIST_EPOCHS sets
## the run's epochs (20).
##
##   R_LIBS=/tmp/benchlib Rscript bench/bench_mnist_t1.R SHARE STD [PRIOR [SPREAD [SCHED]]]
##
## Prints one row and appends it to bench/results/mnist-t1.csv.  Needs
## ../shared/datasets/mnist.
suppressPackageStartupMessages(library(sgfs))
args <- commandArgs(TRUE)
share <- as.numeric(args[1])
std <- as.logical(args[2])
prior_text <- if (length(args) > 2L) args[3] else "NULL"
spread <- if (length(args) > 3L) as.numeric(args[4]) else 10
sched_text <- if (length(args) > 4L) args[5] else "\"constant\""
epochs <- as.integer(Sys.getenv("MNIST_EPOCHS", "20"))
source(file.path(if (dir.exists("bench")) "bench" else ".", "mnist_common.R"))
assignInNamespace("noise_share", share, "sgfs")
assignInNamespace("max_spread", spread, "sgfs")
n_iter <- epochs * 600L
set.seed(1)
t0 <- proc.time()[["elapsed"]]
fit <- suppressWarnings(sghmc(train$x, train$y, family = categorical(),
    model = mlp(c(400, 400), "relu"), batch_size = 100L, progress = FALSE, standardize = std,
    prior = eval(parse(text = prior_text)), schedule = eval(parse(text = sched_text)), n_iter = n_iter, burnin = n_iter %/% 4L,
    thin = 300L, keep = predictive(test$x)))
p <- predict(fit, type = "response")
tau <- attr(fit, "sgfit")$states[[1]]$hyper
row <- data.frame(share = share, standardize = std, prior = prior_text, spread = spread,
                  schedule = sched_text,
                  epochs = epochs,
                  test_error = class_error(p, test$y), log_loss = log_loss(p, test$y),
                  tau = if (is.null(tau)) "" else paste(signif(tau, 3), collapse = " "),
                  seconds = round(proc.time()[["elapsed"]] - t0))
print(row)
csv <- file.path(out_dir, "mnist-t1.csv")
utils::write.table(row, csv, sep = ",", row.names = FALSE, col.names = !file.exists(csv),
                   append = file.exists(csv))
