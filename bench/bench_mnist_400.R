## MNIST 784-400-400-10 ReLU networks, batch 100, up to 100 epochs
## (issue 35): the posterior predictive's test error and log-loss of
##   defaults  psgld() / sgld() at T = 1 and their defaults (random start,
##             steps from the gradient noise, learned layer scales);
##   defaults_raw  the same on the raw pixels in [0, 1] (standardize = FALSE):
##             the prior then weighs a rare pixel's weight by its own values,
##             not by values scaled up to ten times;
##   student_raw  defaults_raw with a fixed student_t(3, 0, 1/sqrt(fan-in))
##             prior per layer (heavy tails instead of learned scales);
##   pcode     the pSGLD paper's code's settings: T = 1/N, N(0, 1) prior,
##             halved every 20 epochs (schedule_step()), random start; psgld
##             at step 1.67e-8 (its learning rate 5e-4 for the mean loss),
##             sgld at 1e-5 (a learning rate of 0.3 for the mean loss: the
##             best of 3.3e-7, 1e-6, 3.3e-6, 1e-5, 3.3e-5 and 1e-4 (diverged)
##             after 5 epochs on 50,000 training digits, validated on the
##             other 10,000);
##   pcode_step2  pcode with twice its steps: psgld 3.33e-8 (a learning
##             rate of 1e-3 for the mean loss), sgld 2e-5 (the two steps
##             tried beside pcode's);
##   pcode_wide  pcode's psgld with the paper's other prior, N(0, 10^2);
##   pcode_raw pcode's settings on the raw pixels in [0, 1] (standardize =
##             FALSE), as the paper's code reads them: its N(0, 1) prior is
##             then on the weights of those inputs, not of the standardised
##             ones (whose rare pixels are scaled up to ten times);
##   adam      the Adam mode (sga(optimizer = "adam"), 100 epochs, the mean of
##             every 100th iterate of its second half): the
##             log-loss the defaults must not be worse than.
## Each kept draw (every THIN-th iteration after burn-in, a quarter of the
## run; THIN 600, one an epoch) adds its predictive on the 10,000 test
## digits (keep = predictive()).
##
##   R_LIBS=/tmp/benchlib /usr/bin/time -v Rscript bench/bench_mnist_400.R CONFIG SAMPLER [EPOCHS] [THIN]
##
## Writes bench/results/mnist-400-<CONFIG>-<SAMPLER>[-thin<THIN>].csv (one
## row; the suffix for THIN other than 600); the table
## bench/results/mnist-400.md gathers every such file.

suppressPackageStartupMessages(library(sgfs))
args <- commandArgs(TRUE)
config <- args[1]
sampler <- if (length(args) > 1L) args[2] else "psgld"
epochs <- if (length(args) > 2L) as.integer(args[3]) else 100L
thin <- if (length(args) > 3L) as.integer(args[4]) else 600L
source(file.path(if (dir.exists("bench")) "bench" else ".", "mnist_common.R"))
N <- nrow(train$x)
n_iter <- epochs * N %/% 100L
common <- list(train$x, train$y, family = categorical(), model = mlp(c(400, 400), "relu"),
               batch_size = 100L, progress = FALSE)
set.seed(1)
t0 <- proc.time()[["elapsed"]]
if (config == "adam") {
    fit <- do.call(sga, c(common, list(optimizer = "adam", n_iter = n_iter, thin = 100L)))
    p <- predict(fit, newdata = test$x, type = "response")
    step <- NA
} else {
    extra <- switch(config,
        defaults = list(),
        defaults_raw = list(standardize = FALSE),
        student_raw = list(standardize = FALSE,
                           prior = lapply(c(784, 400, 400), function(w) student_t(3, 0, 1 / sqrt(w)))),
        pcode_step2 = list(temperature = 1 / N, prior = normal(0, 1),
                           stepsize = if (sampler == "sgld") 2e-5 else 3.33e-8,
                           schedule = schedule_step(epochs = 20), init = NULL),
        pcode_wide = list(temperature = 1 / N, prior = normal(0, 10),
                          stepsize = if (sampler == "sgld") 1e-5 else 1.67e-8,
                          schedule = schedule_step(epochs = 20), init = NULL),
        pcode = , pcode_raw = list(temperature = 1 / N, prior = normal(0, 1),
                     stepsize = if (sampler == "sgld") 1e-5 else 1.67e-8,
                     schedule = schedule_step(epochs = 20), init = NULL,
                     standardize = config == "pcode"))
    fit <- suppressWarnings(do.call(get(sampler), c(common, extra, list(
        n_iter = n_iter, burnin = n_iter %/% 4L, thin = thin, keep = predictive(test$x)))))
    p <- predict(fit, type = "response")
    step <- attr(fit, "sgfit")$settings$stepsize
}
total <- proc.time()[["elapsed"]] - t0
row <- data.frame(config = config, sampler = if (config == "adam") "sga (Adam)" else sampler,
                  epochs = epochs, thin = if (config == "adam") NA else thin, test_error = class_error(p, test$y),
                  log_loss = log_loss(p, test$y), step = step, seconds = total,
                  blas = sgfs:::blas_label())
print(row)
utils::write.csv(row, file.path(out_dir, sprintf("mnist-400-%s-%s%s.csv", config,
                                                 if (config == "adam") "adam" else sampler,
                                                 if (thin == 600L) "" else sprintf("-thin%d", thin))),
                 row.names = FALSE)
files <- list.files(out_dir, "^mnist-400-.*[.]csv$", full.names = TRUE)
tab <- do.call(rbind, lapply(files, function(f) {
    r <- utils::read.csv(f)
    if (is.null(r$thin)) r$thin <- if (r$config == "adam") NA else 600L   # (rows before THIN)
    r[c("config", "sampler", "epochs", "thin", "test_error", "log_loss", "step", "seconds", "blas")]
}))
md <- c("# MNIST 784-400-400-10 ReLU, batch 100 (bench/bench_mnist_400.R)", "",
        "Posterior predictive over the kept draws (every `thin`-th iteration after a quarter of the run) on the 10,000 test digits; adam: the Adam mode. Seconds: the whole call, set-up (pilots) included.", "",
        "| config | sampler | epochs | thin | test error | test log-loss | step | seconds | BLAS |",
        "|---|---|---|---|---|---|---|---|---|",
        sprintf("| %s | %s | %d | %s | %.4f | %.4f | %.3g | %.0f | %s |", tab$config, tab$sampler,
                tab$epochs, ifelse(is.na(tab$thin), "", tab$thin), tab$test_error, tab$log_loss,
                tab$step, tab$seconds, tab$blas))
writeLines(md, file.path(out_dir, "mnist-400.md"))
