## Readers for the public benchmark data sets the papers use (the package
## ships the readers, never the data).

#' Read the MNIST digits
#'
#' Reads the MNIST images and labels from the four IDX files (gzip
#' compressed, as distributed: `train-images-idx3-ubyte.gz`, ...).
#'
#' @param path the folder holding the IDX files.
#' @param set `"train"` (60,000 digits) or `"test"` (10,000).
#' @return A list with `x`, a numeric matrix with one row per image and 784
#'   columns (pixel intensities divided by 255, row by row), and `y`, the
#'   digits as a factor with levels `0`, ..., `9`.
#' @examples
#' path <- file.path("..", "shared", "datasets", "mnist")
#' if (file.exists(file.path(path, "t10k-labels-idx1-ubyte.gz"))) {
#'     test <- read_mnist(path, "test")
#'     dim(test$x)
#' }
#' @export
read_mnist <- function(path, set = c("train", "test")) {
    if (!is.character(path) || length(path) != 1L || is.na(path))
        stop_arg("path", "must be the folder holding the IDX files, not ", format_value(path))
    set <- choose_arg(set, c("train", "test"), "set")
    stem <- if (set == "train") "train" else "t10k"
    image_file <- paste0(stem, "-images-idx3-ubyte.gz")
    label_file <- paste0(stem, "-labels-idx1-ubyte.gz")
    images <- read_idx(file.path(path, image_file))
    labels <- read_idx(file.path(path, label_file))
    if (length(images$dim) != 3L)
        stop_arg("path", sprintf("'%s' holds %d-dimensional data, not images (3 dimensions)",
                                 image_file, length(images$dim)))
    if (length(labels$dim) != 1L)
        stop_arg("path", sprintf("'%s' holds %d-dimensional data, not labels (1 dimension)",
                                 label_file, length(labels$dim)))
    if (images$dim[1L] != labels$dim[1L])
        stop_arg("path", sprintf("'%s' has %d images but '%s' has %d labels", image_file,
                                 images$dim[1L], label_file, labels$dim[1L]))
    y <- as.integer(labels$data)
    if (any(y > 9L))
        stop_arg("path", sprintf("'%s' has labels outside 0-9 (e.g. %d)", label_file,
                                 y[y > 9L][1L]))
    x <- matrix(as.double(images$data) / 255, images$dim[1L],
                prod(images$dim[-1L]), byrow = TRUE)
    list(x = x, y = factor(y, levels = 0:9))
}

## an IDX file of unsigned bytes: list(dim, data)
read_idx <- function(file) {
    if (!file.exists(file)) stop_arg("path", sprintf("has no file '%s'", basename(file)))
    con <- gzfile(file, "rb")
    on.exit(close(con))
    magic <- readBin(con, "integer", 1L, size = 4L, endian = "big")
    if (length(magic) != 1L || magic %/% 256L != 8L)
        stop_arg("path", sprintf("has '%s', which is not an IDX file of unsigned bytes", file))
    dims <- readBin(con, "integer", magic %% 256L, size = 4L, endian = "big")
    data <- readBin(con, "raw", prod(dims))
    if (length(data) != prod(dims))
        stop_arg("path", sprintf("has '%s', which is truncated", file))
    list(dim = dims, data = data)
}

#' Read a UCI regression benchmark with its standard splits
#'
#' Reads one of the UCI regression data sets used to benchmark Bayesian
#' neural networks (Hernandez-Lobato and Adams, 2015) and the 20 standard
#' train/test splits (5 for protein) from `splits.tar.xz`.
#'
#' @param name the data set, e.g. `"bostonHousing"`, `"concrete"`,
#'   `"energy"`, `"wine-quality-red"`, `"yacht"`.
#' @param path the folder holding `<name>.txt.xz` and `splits.tar.xz`.
#' @return A list with `x` (numeric matrix of the features), `y` (the
#'   target), `splits` (a list of `list(train, test)` 1-based row indices)
#'   and `hidden` (the hidden-layer size the protocol uses).
#' @export
read_uci <- function(name, path) {
    if (!is.character(name) || length(name) != 1L)
        stop_arg("name", "must be a data set name such as \"concrete\"")
    if (!is.character(path) || length(path) != 1L || !dir.exists(path))
        stop_arg("path", "must be the folder holding the data set, not ", format_value(path))
    file <- file.path(path, paste0(name, ".txt.xz"))
    if (!file.exists(file)) stop_arg("name", sprintf("'%s': there is no file %s", name, file))
    data <- as.matrix(utils::read.table(file))
    dir <- tempfile("uci")
    on.exit(unlink(dir, recursive = TRUE))
    utils::untar(file.path(path, "splits.tar.xz"), exdir = dir,
                 files = paste0("./", name))
    split_dir <- file.path(dir, name)
    ints <- function(f) scan(file.path(split_dir, f), quiet = TRUE)
    n_splits <- ints("n_splits.txt")
    splits <- lapply(seq_len(n_splits) - 1L, function(k)
        list(train = ints(sprintf("index_train_%d.txt", k)) + 1L,
             test = ints(sprintf("index_test_%d.txt", k)) + 1L))
    list(x = data[, ints("index_features.txt") + 1L, drop = FALSE],
         y = data[, ints("index_target.txt") + 1L], splits = splits,
         hidden = ints("n_hidden.txt"))
}

#' Read a LIBSVM / SVMlight data file
#'
#' Reads the sparse text format of LIBSVM and SVMlight (one example per
#' line: `label index:value index:value ...`, 1-based increasing feature
#' indices, `#` comments; SVMlight's `qid:` tokens are skipped), as
#' distributed for a9a, covtype.binary, rcv1, news20 and many others; plain
#' or compressed with gzip, bzip2 or xz (R's [file()] recognises them).  The
#' lines are parsed in C.
#'
#' @param file the file's path.
#' @param n_features the number of feature columns; `NULL` (the default):
#'   the largest index in the file.  Give it for a test set that may lack
#'   the training set's last features.
#' @param sparse `TRUE` (the default) for a sparse [Matrix::dgCMatrix-class],
#'   `FALSE` for a dense numeric matrix.
#' @return A list with `x`, the N x `n_features` design (columns named
#'   `f1`, `f2`, ...; absent features are 0), and `y`, the labels as numbers.
#'   For a binary problem labelled -1/+1, `y == 1` is the 0/1 response the
#'   package's `binomial()` models take.  The samplers keep a sparse design
#'   as compressed rows, without a dense copy: a minibatch's gradient costs
#'   its rows' non-zeros (see [sgfs()]).
#' @examples
#' path <- file.path("..", "shared", "datasets", "a9a.xz")
#' if (file.exists(path)) {
#'     a9a <- read_libsvm(path)
#'     dim(a9a$x)
#'     table(a9a$y)
#' }
#' @export
read_libsvm <- function(file, n_features = NULL, sparse = TRUE) {
    if (!is.character(file) || length(file) != 1L || is.na(file))
        stop_arg("file", "must be the path of one file")
    if (!file.exists(file)) stop_arg("file", sprintf("'%s' does not exist", file))
    if (dir.exists(file)) stop_arg("file", sprintf("'%s' is a folder, not a file", file))
    sparse <- check_flag(sparse, "sparse")
    con <- file(file, "r")
    on.exit(close(con))
    parsed <- tryCatch(.Call(C_sgfs_parse_libsvm, readLines(con, warn = FALSE)),
                       error = function(e) stop_arg("file", sprintf("'%s' is malformed: %s", file,
                                                                    conditionMessage(e))))
    N <- length(parsed$label)
    if (N == 0L) stop_arg("file", sprintf("'%s' holds no examples", file))
    largest <- if (length(parsed$j)) max(parsed$j) else 0L
    if (is.null(n_features)) n_features <- largest
    else {
        n_features <- check_count(n_features, "n_features", 1L, .Machine$integer.max)
        if (largest > n_features)
            stop_arg("n_features", sprintf("is %d but the file has feature %d", n_features, largest))
    }
    names <- list(NULL, paste0("f", seq_len(n_features)))
    x <- if (sparse)
        Matrix::sparseMatrix(i = parsed$i, j = parsed$j, x = parsed$x,
                             dims = c(N, n_features), dimnames = names)
    else {
        m <- matrix(0, N, n_features, dimnames = names)
        m[cbind(parsed$i, parsed$j)] <- parsed$x
        m
    }
    list(x = x, y = parsed$label)
}
