## The data readers: read_mnist() on small IDX files written here (and on
## ../shared/datasets when present), refusing malformed ones

write_idx <- function(file, dims, data) {
    con <- gzfile(file, "wb")
    on.exit(close(con))
    writeBin(as.raw(c(0, 0, 8, length(dims))), con)
    writeBin(as.integer(dims), con, size = 4L, endian = "big")
    writeBin(as.raw(data), con)
}

mnist_dir <- function(n_images = 3L, n_labels = 3L, labels = c(7L, 0L, 9L), image_dims = c(2L, 2L)) {
    dir <- tempfile("mnist")
    dir.create(dir)
    write_idx(file.path(dir, "t10k-images-idx3-ubyte.gz"), c(n_images, image_dims),
              seq_len(n_images * prod(image_dims)) %% 256L)
    write_idx(file.path(dir, "t10k-labels-idx1-ubyte.gz"), n_labels, labels[seq_len(n_labels)])
    dir
}

test_that("read_mnist() reads images row by row, scaled to [0, 1], and labels 0-9", {
    m <- read_mnist(mnist_dir(), "test")
    expect_equal(dim(m$x), c(3L, 4L))
    expect_equal(m$x[2L, ], (5:8) / 255)
    expect_equal(m$y, factor(c(7, 0, 9), levels = 0:9))
})

test_that("read_mnist() refuses malformed files with a message naming the file", {
    expect_error(read_mnist(mnist_dir(n_labels = 2L), "test"),
                 "'path' 't10k-images-idx3-ubyte.gz' has 3 images but 't10k-labels-idx1-ubyte.gz' has 2 labels")
    expect_error(read_mnist(mnist_dir(labels = c(7L, 11L, 9L)), "test"),
                 "labels outside 0-9 \\(e.g. 11\\)")
    expect_error(read_mnist(mnist_dir(image_dims = 4L), "test"),
                 "holds 2-dimensional data, not images")
    expect_error(read_mnist(tempdir(), "train"), "'path' has no file 'train-images-idx3-ubyte.gz'")
    expect_error(read_mnist(mnist_dir(), "validation"), "'set'")
    bad <- mnist_dir()
    con <- gzfile(file.path(bad, "t10k-labels-idx1-ubyte.gz"), "wb")
    writeBin(as.raw(1:10), con)
    close(con)
    expect_error(read_mnist(bad, "test"), "is not an IDX file of unsigned bytes")
    file.create(file.path(bad, "t10k-labels-idx1-ubyte.gz"))      # empty
    expect_error(read_mnist(bad, "test"), "is not an IDX file of unsigned bytes")
})

test_that("read_mnist() reads the shipped test set when ../shared/datasets is present", {
    path <- file.path("..", "..", "..", "shared", "datasets", "mnist")
    skip_if_not(file.exists(file.path(path, "t10k-labels-idx1-ubyte.gz")), "no ../shared/datasets/mnist")
    m <- read_mnist(path, "test")
    expect_equal(dim(m$x), c(10000L, 784L))
    expect_equal(range(m$x), c(0, 1))
    expect_equal(as.vector(table(m$y)),
                 c(980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009))
})

test_that("read_libsvm() reads the LIBSVM format, sparse or dense", {
    tf <- withr::local_tempfile(fileext = ".txt")
    writeLines(c("1 1:0.5 3:1 # a comment", "-1 2:1 qid:3 5:2", "", "# only a comment",
                 "+1 4:1.5e-1"), tf)
    r <- read_libsvm(tf)
    expect_s4_class(r$x, "dgCMatrix")
    expect_equal(r$y, c(1, -1, 1))
    dense <- matrix(0, 3, 5, dimnames = list(NULL, paste0("f", 1:5)))
    dense[1, c(1, 3)] <- c(0.5, 1)
    dense[2, c(2, 5)] <- c(1, 2)
    dense[3, 4] <- 0.15
    expect_equal(as.matrix(r$x), dense)
    expect_equal(read_libsvm(tf, sparse = FALSE)$x, dense)
    expect_equal(dim(read_libsvm(tf, n_features = 7)$x), c(3L, 7L))
    ## compressed files too (R's file() recognises gzip)
    gz <- withr::local_tempfile(fileext = ".gz")
    con <- gzfile(gz, "w")
    writeLines(readLines(tf), con)
    close(con)
    expect_equal(read_libsvm(gz, sparse = FALSE)$x, dense)
    ## malformed files are refused with the line
    bad <- function(lines, msg) {
        f <- withr::local_tempfile(fileext = ".txt")
        writeLines(lines, f)
        expect_error(read_libsvm(f), msg)
    }
    bad(c("1 1:1", "x 2:1"), "line 2 of the file: the label is not a number")
    bad("1 2:1 1:1", "line 1 of the file: feature indices must increase")
    bad("1 0:1", "line 1 .* positive integer index")
    bad("1 3:abc", "line 1 .* the value of feature 3 is not a number")
    bad("1 3", "line 1 .* index:value")
    expect_error(read_libsvm(tf, n_features = 4), "'n_features' is 4 but the file has feature 5")
    expect_error(read_libsvm(file.path(tempdir(), "no-such-file")), "'file' .* does not exist")
    ## a sparse design is accepted by the samplers (through a dense copy)
    x <- Matrix::Matrix(withr::with_seed(3, matrix(stats::rbinom(600, 1, 0.3), 200, 3)), sparse = TRUE)
    y <- withr::with_seed(4, stats::rbinom(200, 1, 0.5))
    a <- withr::with_seed(5, sgld(x, y, n_iter = 200, progress = FALSE))
    b <- withr::with_seed(5, sgld(as.matrix(x), y, n_iter = 200, progress = FALSE))
    expect_identical(as.matrix(a), as.matrix(b))
})

test_that("read_libsvm() reads a9a from the shared data sets", {
    path <- file.path("..", "..", "..", "shared", "datasets", "a9a.xz")
    skip_if_not(file.exists(path), "../shared/datasets/a9a.xz is not here")
    a9a <- read_libsvm(path)
    expect_equal(dim(a9a$x), c(32561L, 123L))
    expect_equal(sort(unique(a9a$y)), c(-1, 1))
    expect_equal(sum(a9a$y == 1), 7841)
    expect_true(all(a9a$x@x == 1))                # binary features
})
