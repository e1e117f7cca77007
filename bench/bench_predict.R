## Categorical predict() over many draws (issue 15: 1,000 draws of 3,000
## rows in under 0.2 s): a three-class softmax regression on 3,000 rows of
## 10 predictors, fitted with sgld() and 1,000 kept draws; predict() of the
## training rows and of new rows, type "response" (the class probabilities
## averaged over draws) and "class"; medians of 7 repetitions.
##
##   Rscript bench/bench_predict.R
##
## Writes bench/results/predict.md.
suppressMessages(library(sgfs))
set.seed(1)
N <- 3000L
P <- 10L
x <- matrix(rnorm(N * P), N, P, dimnames = list(NULL, paste0("x", seq_len(P))))
B <- matrix(rnorm(P * 2, sd = 0.7), P, 2)
eta <- cbind(0, x %*% B)
p <- exp(eta) / rowSums(exp(eta))
cls <- factor(apply(p, 1L, function(q) sample(3L, 1L, prob = q)), labels = c("a", "b", "c"))
d <- data.frame(y = cls, x)
fit <- suppressWarnings(sgld(y ~ ., data = d, family = categorical(), n_iter = 2000L,
                             burnin = 1000L, progress = FALSE))
draws <- nrow(as.matrix(fit))
new <- d[sample.int(N), ]
time <- function(f, reps = 7L) median(vapply(seq_len(reps), function(i) system.time(f())[["elapsed"]], 0))
tab <- data.frame(
    call = c("predict(fit)  (training rows, response)", "predict(fit, newdata)  (response)",
             "predict(fit, newdata, type = \"class\")"),
    seconds = c(time(function() predict(fit)), time(function() predict(fit, newdata = new)),
                time(function() predict(fit, newdata = new, type = "class"))))
tab$seconds <- round(tab$seconds, 3)
print(tab)
out <- c("# Categorical predict() over many draws (bench/bench_predict.R)", "",
         sprintf("%s; %s; BLAS: %s; %d draws x %d rows, 3 classes, %d predictors; medians of 7 repetitions (elapsed seconds).",
                 format(Sys.time(), "%Y-%m-%d %H:%M"), R.version.string, sgfs:::blas_label(), draws, N, P),
         "", knitr::kable(tab), "",
         sprintf("Criterion (issue 15): under 0.2 s for 1,000 draws of 3,000 rows: %s.",
                 if (all(tab$seconds < 0.2)) "holds" else "fails"))
dir.create("bench/results", showWarnings = FALSE, recursive = TRUE)
writeLines(out, "bench/results/predict.md")
cat(out, sep = "\n")
