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
