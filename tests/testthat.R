library(testthat)
library(sgfs)

test_check("sgfs")
