## The main job: SGFS (at its default for a GLM, with control variates at the
## mode) on the Pima Indians diabetes data (MASS), in minibatches of 50: a Bayesian
## logistic regression of diabetes on seven predictors, fitted to Pima.tr
## (200 women) and checked on Pima.te (332 women).  Prints the report, the
## posterior summary with its timing, and the test-set accuracy.
library(sgfs)
data(Pima.tr, Pima.te, package = "MASS")
set.seed(2012)
fit <- sgfs(type ~ ., data = Pima.tr, batch_size = 50, n_iter = 20000, burnin = 2000,
            progress = FALSE)
print(fit)
print(summary(fit))
p <- predict(fit, newdata = Pima.te, type = "response")
cat(sprintf("\nTest set (Pima.te, %d women): accuracy %.3f, log loss %.3f\n",
            nrow(Pima.te), mean((p > 0.5) == (Pima.te$type == "Yes")),
            -mean(ifelse(Pima.te$type == "Yes", log(p), log(1 - p)))))
