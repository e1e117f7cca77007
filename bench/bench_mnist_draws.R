## MNIST 784-400-400-10 ReLU at temperature 1 (issue 35): each kept draw's
## own test error and log-loss, and those of the running posterior
## predictive (the average of the draws so far), to tell how much of the
## predictive's error is the posterior's (a draw's) and how much the
## number and spread of the draws.  sghmc() at its defaults (batch 100) for
## EPOCHS epochs, a draw every 300th iteration after a quarter of the run,
## but for:
##   SCHED  an R expression for `schedule` ("\"constant\"": the default),
##          e.g. "schedule_cyclical(20)";
##   SHARE  the gradient-noise share the default step keeps (noise_share in
##          R/noise-steps.R, 0.3);
##   PRIOR  an R expression for `prior` (NULL: the default learned layer
##          scales), e.g. "list(student_t(3, 0, 1/sqrt(784)), ...)";
##   STANDARDIZE  TRUE (the default) or FALSE: the raw pixels in [0, 1].
##
##   R_LIBS=/tmp/benchlib Rscript bench/bench_mnist_draws.R TAG EPOCHS SCHED SHARE [PRIOR [STANDARDIZE]]
##
## Writes bench/results/mnist-draws-TAG.csv (a row per draw: draw, its
## error and log-loss, the running predictive's) and appends a summary row
## to bench/results/mnist-draws.csv.  Needs ../shared/datasets/mnist.
suppressPackageStartupMessages(library(sgfs))
args <- commandArgs(TRUE)
tag <- args[1]
epochs <- as.integer(args[2])
sched_text <- args[3]
share <- as.numeric(args[4])
prior_text <- if (length(args) > 4L) args[5] else "NULL"
standardize <- if (length(args) > 5L) as.logical(args[6]) else TRUE
source(file.path(if (dir.exists("bench")) "bench" else ".", "mnist_common.R"))
assignInNamespace("noise_share", share, "sgfs")
n_iter <- epochs * 600L
set.seed(1)
t0 <- proc.time()[["elapsed"]]
fit <- suppressWarnings(sghmc(train$x, train$y, family = categorical(),
    model = mlp(c(400, 400), "relu"), batch_size = 100L, progress = FALSE,
    schedule = eval(parse(text = sched_text)), prior = eval(parse(text = prior_text)),
    n_iter = n_iter, burnin = n_iter %/% 4L, thin = 300L, standardize = standardize))
seconds <- proc.time()[["elapsed"]] - t0
p <- rstantools::posterior_epred(fit, newdata = test$x)       # draws x digits x classes
running <- 0
per_draw <- do.call(rbind, lapply(seq_len(dim(p)[1L]), function(s) {
    ps <- p[s, , ]
    running <<- running + ps
    data.frame(draw = s, draw_error = class_error(ps, test$y), draw_log_loss = log_loss(ps, test$y),
               predictive_error = class_error(running / s, test$y),
               predictive_log_loss = log_loss(running / s, test$y))
}))
utils::write.csv(per_draw, file.path(out_dir, sprintf("mnist-draws-%s.csv", tag)), row.names = FALSE)
last <- per_draw[nrow(per_draw), ]
tau <- attr(fit, "sgfit")$states[[1]]$hyper
row <- data.frame(tag = tag, epochs = epochs, schedule = sched_text, share = share,
                  prior = prior_text, standardize = standardize, draws = nrow(per_draw),
                  mean_draw_error = mean(per_draw$draw_error),
                  mean_draw_log_loss = mean(per_draw$draw_log_loss),
                  predictive_error = last$predictive_error,
                  predictive_log_loss = last$predictive_log_loss,
                  tau = if (is.null(tau)) "" else paste(signif(tau, 3), collapse = " "),
                  seconds = round(seconds))
print(row)
csv <- file.path(out_dir, "mnist-draws.csv")
utils::write.table(row, csv, sep = ",", row.names = FALSE, col.names = !file.exists(csv),
                   append = file.exists(csv))
