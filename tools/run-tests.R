## Runs the whole testthat suite against the installed package and ends with
## the line "N passed, N failed" (exit status 1 if anything failed).
Sys.setenv(NOT_CRAN = "true")
library(testthat)
library(sgfs)
res <- as.data.frame(test_dir("tests/testthat", reporter = ProgressReporter$new(show_praise = FALSE),
                              stop_on_failure = FALSE, package = "sgfs", load_package = "installed"))
passed <- sum(res$passed)
failed <- sum(res$failed) + sum(res$error)
skipped <- sum(res$skipped)
cat(sprintf("%d skipped\n", skipped))
cat(sprintf("%d passed, %d failed\n", passed, failed))
if (failed > 0 || passed == 0) quit(status = 1)
