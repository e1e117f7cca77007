## Runs the whole testthat suite against the installed package and ends with
## the line "N passed, N failed" (exit status 1 if anything failed).
## `--fast` (make test-fast): the development loop's tier, every file but
## the slow ones below (54 s here; the whole suite about 4 minutes of tests,
## 10 with the check).
slow <- c("conjugate", "posterior", "interrupt", "run-length", "horseshoe-posterior", "fuzz",
          "battery")
fast <- "--fast" %in% commandArgs(trailingOnly = TRUE)
Sys.setenv(NOT_CRAN = "true")
library(testthat)
library(sgfs)
res <- as.data.frame(test_dir("tests/testthat", reporter = ProgressReporter$new(show_praise = FALSE),
                              stop_on_failure = FALSE, package = "sgfs", load_package = "installed",
                              filter = if (fast) sprintf("^(%s)$", paste(slow, collapse = "|")),
                              invert = fast))
passed <- sum(res$passed)
failed <- sum(res$failed) + sum(res$error)
skipped <- sum(res$skipped)
cat(sprintf("%d skipped\n", skipped))
cat(sprintf("%d passed, %d failed\n", passed, failed))
if (failed > 0 || passed == 0) quit(status = 1)
