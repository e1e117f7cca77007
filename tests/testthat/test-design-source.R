## design_from(): a design file from a formula and chunked data (CSV files,
## a data frame, a reader function), coded as model.matrix() codes the
## whole data, whatever chunk a level first appears in.

source_data <- function() {
    withr::with_seed(6, {
        d <- data.frame(y = rbinom(900, 1, 0.4), x = rnorm(900),
                        g = sample(c("b", "a", "c"), 900, replace = TRUE),
                        n = rpois(900, 3) + 1)
        d$g[1:300] <- sample(c("a", "b"), 300, replace = TRUE)      # ("c" from the second chunk)
        d
    })
}

test_that("CSV files in chunks give model.matrix()'s coding and the fit on the whole data", {
    d <- source_data()
    csv <- withr::local_tempfile(fileext = ".csv")
    utils::write.csv(d, csv, row.names = FALSE)
    out <- withr::local_tempfile(fileext = ".sgd")
    s <- design_from(y ~ x + g, csv, out, chunk_rows = 300)
    expect_s3_class(s, "sgfs_design_source")
    mm <- model.matrix(y ~ x + g, d)[, -1]
    expect_equal(as.matrix(s$x), mm, ignore_attr = TRUE)
    expect_identical(colnames(as.matrix(s$x)), colnames(mm))
    expect_identical(s$N, 900)
    expect_identical(as.numeric(s$y), as.numeric(d$y))
    expect_identical(s$xlevels, list(g = c("a", "b", "c")))
    expect_identical(colnames(model.matrix(s$terms, d[1:5, ], xlev = s$xlevels))[-1], colnames(mm))
    ## the fit on the file is the fit on the same data in memory (as the
    ## CSV file holds them: 15 significant digits), to rounding
    read_back <- utils::read.csv(csv)
    a <- sgld(s$x, s$y, n_iter = 300, seed = 1, progress = FALSE)
    b <- sgld(model.matrix(y ~ x + g, read_back)[, -1], read_back$y, n_iter = 300, seed = 1,
              progress = FALSE)
    expect_equal(as.matrix(a), as.matrix(b), tolerance = 1e-12)
    ## several files, one after another
    halves <- c(withr::local_tempfile(fileext = ".csv"), withr::local_tempfile(fileext = ".csv"))
    utils::write.csv(d[1:450, ], halves[1], row.names = FALSE)
    utils::write.csv(d[451:900, ], halves[2], row.names = FALSE)
    s2 <- design_from(y ~ x + g, halves, withr::local_tempfile(fileext = ".sgd"), chunk_rows = 200)
    expect_equal(as.matrix(s2$x), as.matrix(s$x))
})

test_that("a data frame and a reader function are sources too; responses, offsets, missing rows", {
    d <- source_data()
    d$x[c(5, 700)] <- NA
    reader <- function() {
        at <- 0
        function(n) {
            if (at >= nrow(d)) return(NULL)
            rows <- seq(at + 1, min(nrow(d), at + n))
            at <<- at + length(rows)
            d[rows, ]
        }
    }
    f <- cbind(y, n - y) ~ x + g + offset(log(n))
    a <- design_from(f, d, withr::local_tempfile(fileext = ".sgd"), chunk_rows = 250)
    b <- design_from(f, reader, withr::local_tempfile(fileext = ".sgd"), chunk_rows = 333)
    full <- model.frame(f, d)                                  # (na.omit: 898 rows)
    expect_identical(a$N, 898)
    expect_equal(as.matrix(a$x), model.matrix(f, full)[, -1], ignore_attr = TRUE)
    expect_equal(as.matrix(b$x), as.matrix(a$x))
    expect_equal(a$y, model.response(full), ignore_attr = TRUE)
    expect_equal(a$offset, log(d$n[-c(5, 700)]))
    ## a factor response keeps its levels; `.` reads every column
    d$z <- factor(ifelse(d$y == 1, "yes", "no"))
    s <- design_from(z ~ . - y - n, d, withr::local_tempfile(fileext = ".sgd"), chunk_rows = 400)
    expect_identical(levels(s$y), c("no", "yes"))
    expect_identical(colnames(as.matrix(s$x)), c("x", "gb", "gc"))
})

test_that("design_from() refuses what it cannot code, naming the argument", {
    d <- source_data()
    out <- withr::local_tempfile(fileext = ".sgd")
    expect_error(design_from(~ x, d, out), "'formula' must be a two-sided model formula")
    expect_error(design_from(y ~ x + (1 | g), d, out), "'formula' has random-effect terms")
    expect_error(design_from(y ~ x + w, d, out), "'data' has no column 'w'")
    expect_error(design_from(y ~ x, 42, out), "'data' must be CSV file path")
    expect_error(design_from(y ~ x, "no-such-file.csv", out), "'data' names no file")
    expect_error(design_from(y ~ x, function() 1, out), "'data' must, as a function, return a reader")
    mixed <- d
    mixed$x <- as.character(mixed$x)
    mixed$x[600] <- "unknown"
    csv <- withr::local_tempfile(fileext = ".csv")
    utils::write.csv(mixed, csv, row.names = FALSE)
    open_before <- nrow(showConnections())
    expect_error(design_from(y ~ x, csv, out, chunk_rows = 300),
                 "column 'x' holds numbers in some chunks and text in others")
    expect_identical(nrow(showConnections()), open_before)     # (the file closed)
})
