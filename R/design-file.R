## Designs kept in a file, for data larger than memory (src/design_file.c):
## written once, chunk by chunk, then mapped by the engine, which reads a
## minibatch's rows where they are and standardises them as it reads.

#' Designs kept in a file, for data larger than memory
#'
#' `write_design_file()` writes a numeric design (a matrix, or a data frame
#' of numeric columns) to a file, or appends rows to one, so that data
#' larger than memory can be written chunk by chunk; `design_file()` opens
#' such a file.  The object it returns is given to the samplers as `x`,
#' with the response `y` (and any `weights` or `offset`) in memory:
#' `sgld(design_file(path), y)`.
#'
#' The engine maps the file: the operating system keeps in memory what
#' fits and reads the rest when it is touched, so a minibatch costs its
#' rows' reads wherever the file is, and the data are never copied into R.
#' Each value is standardised as it is read, with the same arithmetic as
#' the in-memory copy, so a fit on a file gives the draws of the same fit
#' on the same data in memory.  The first fit on a `design_file()` object
#' reads the file from start to end twice for the columns' statistics, and
#' once more for the rows of its 0/1 columns if it has any (for the scan
#' of separated levels); these are kept with the object, so later fits on
#' it do not read them again.  The samplers' set-up then adds their
#' full-data passes (a mode search, curvature): for data much larger than
#' memory, each pass runs at the disk's speed, and a sampler given
#' `stepsize` (and `init`) avoids them.  Chains on other processes or machines (see
#' [future::plan()]) open the file from its path instead of receiving a
#' copy: give a path every worker can read.
#'
#' Rows are stored one after another, so the file keeps the order they
#' were written in; minibatches are drawn at random from all rows whatever
#' that order, a row at a time.  For a file larger than memory, put its
#' rows in random order once with [shuffle_design_file()]: minibatches are
#' then windows of consecutive rows, each read from the disk as one block.
#' From a file larger than half the machine's memory the engine asks the
#' system for each window's rows 32 iterations before they are used, and
#' lets their pages go once they are read, so that the page cache does not
#' fill with rows read before (`sgfs_control(file_prefetch = TRUE or
#' FALSE)` decides for any file).  Factors must be expanded first (e.g. by
#' [stats::model.matrix()] on each chunk, with the same levels):
#' [design_from()] does it from a formula and CSV files, a data frame or any
#' reader of chunks.
#'
#' @param x a numeric matrix, or a data frame of numeric columns.
#' @param path the file's path.
#' @param append `FALSE` (the default) creates (or overwrites) the file;
#'   `TRUE` adds `x`'s rows to it (the same columns, by name).
#' @param precision `"double"` (the default) or `"single"`: each value in 4
#'   bytes instead of 8 (about 7 significant digits), half the disk space
#'   and reads.  Fixed when the file is created.
#' @return `design_file()`: an object of class `"sgfs_design_file"`, with
#'   methods for `dim()`, `dimnames()`, `[` (rows read into a matrix),
#'   `as.matrix()` and `print()`.  `write_design_file()`: the same, for the
#'   file written, invisibly.
#' @examples
#' path <- tempfile(fileext = ".sgd")
#' x <- matrix(rnorm(2000), 500, 4, dimnames = list(NULL, paste0("x", 1:4)))
#' y <- rbinom(500, 1, plogis(x %*% c(1, -1, 0, 0.5)))
#' write_design_file(x[1:250, ], path)
#' write_design_file(x[251:500, ], path, append = TRUE)   # in chunks
#' xf <- design_file(path)
#' xf
#' fit <- sgld(xf, y, n_iter = 500, progress = FALSE)
#' summary(fit)$statistics[, 1:2]
#' unlink(path)
#' @export
write_design_file <- function(x, path, append = FALSE, precision = c("double", "single")) {
    path <- check_path(path, must_exist = FALSE)
    append <- check_flag(append, "append")
    precision <- match.arg(precision)
    if (is.data.frame(x)) {
        num <- vapply(x, function(v) is.numeric(v) && is.null(dim(v)), NA)
        if (!all(num))
            stop_arg("x", "has column(s) that are not numeric (",
                     paste0("'", names(x)[!num], "'", collapse = ", "),
                     "): expand factors first, e.g. with model.matrix()")
        names_x <- design_names(x)
        x <- lapply(x, as.double)
    } else {
        if (!is.matrix(x) || !is.numeric(x))
            stop_arg("x", "must be a numeric matrix or a data frame of numeric columns")
        names_x <- design_names(x)
        if (!is.double(x)) storage.mode(x) <- "double"
    }
    if (!length(names_x)) stop_arg("x", "has no columns")
    if (NROW(if (is.list(x)) x[[1L]] else x) == 0L) stop_arg("x", "has no rows")
    if (append) {
        if (!file.exists(path)) stop_arg("path", sprintf("'%s' does not exist: nothing to append to", path))
        old <- design_file(path)
        if (!identical(old$names, names_x))
            stop_arg("x", sprintf("has columns %s; the file's are %s", short_names(names_x),
                                  short_names(old$names)))
    }
    .Call(C_sgfs_design_file_write, path, x, names_x, append,
          if (precision == "double") 8L else 4L)
    invisible(design_file(path))
}

#' @rdname write_design_file
#' @export
design_file <- function(path) {
    path <- normalizePath(check_path(path, must_exist = TRUE))
    info <- .Call(C_sgfs_design_file_info, path)
    if (info$N < 2L) stop_arg("path", sprintf("'%s' has %d row(s): write at least two", path, info$N))
    structure(list(path = path, N = info$N, ncol = info$ncol, bytes = info$bytes,
                   offset = info$offset, names = info$names, shuffled = info$shuffled,
                   map = .Call(C_sgfs_design_file_map),   # (mapped on first use)
                   cache = new.env(parent = emptyenv())),
              class = "sgfs_design_file")
}

is_design_file <- function(x) inherits(x, "sgfs_design_file")

#' Put a design file's rows in random order
#'
#' Writes a copy of a design file (see [write_design_file()]) whose rows
#' are in a uniformly random order, and returns it with the response (and
#' any other per-row values) in the same order.  Samplers take each
#' minibatch from such a file as distinct blocks of w consecutive rows (a
#' random sample, since the rows are in random order), as they do from the
#' engine's own copy of data in memory: w about 3e-4 N (at least 8,
#' dividing the batch size), so that a file larger than memory is read in
#' windows of the whole batch, which the disk reads as one block: for data
#' larger than memory, the only way a disk keeps up with the sampler.  From
#' a file that is not shuffled rows are drawn one by one at random, which is
#' exact whatever their order but costs a disk read for each row not in
#' memory.  `sgfs_control(batches = "windows" or "rows")` chooses for any
#' data.
#'
#' Windows are not quite random rows: the windows of one order are not all
#' the subsets random rows draw from, and the covariance of the minibatch
#' noise is off by a relative sd of about \eqn{\sqrt{4w/(3N)}}{sqrt(4 w /
#' (3 N))} for windows of w rows (0.3 % for whole batches of 500 at 7e7
#' rows, at most 3.3 % with w = 3e-4 N; at N = 100 n whole-batch windows
#' made SGFS's variances 26 % off in a test).  Hence windows of the whole
#' batch only for files with many rows.
#'
#' The shuffle reads and writes sequentially in two passes (each row goes
#' to one of several bucket files next to `out`, then each bucket is put
#' in order in memory and appended), holding at most `memory` bytes of rows
#' and the permutation (4 bytes a row) in memory.  It needs free disk space
#' for the input's size twice over while it runs (the buckets and the
#' output).  The permutation comes from R's random numbers: `set.seed()`
#' makes it reproducible.
#'
#' @param path the design file to shuffle.
#' @param out the shuffled file's path (may be `path`: the file is then
#'   replaced once the shuffled copy is complete).
#' @param y,weights,offset optional per-row values in the input's order
#'   (vectors of its number of rows), returned in the output's.
#' @param memory the most memory, in bytes, for rows in the second pass.
#' @return A list: `x`, the shuffled file ([design_file()]); `order`, the
#'   input rows in the output's order (`x`'s row `i` is the input's row
#'   `order[i]`); and `y`, `weights` and `offset` in that order, for those
#'   given.
#' @examples
#' path <- tempfile(fileext = ".sgd")
#' x <- matrix(rnorm(2000), 500, 4, dimnames = list(NULL, paste0("x", 1:4)))
#' y <- rbinom(500, 1, plogis(x %*% c(1, -1, 0, 0.5)))
#' write_design_file(x, path)
#' set.seed(1)
#' s <- shuffle_design_file(path, tempfile(fileext = ".sgd"), y = y)
#' s$x
#' all.equal(s$x[1:3, ], x[s$order[1:3], ])
#' fit <- sgld(s$x, s$y, n_iter = 500, progress = FALSE)
#' unlink(c(path, s$x$path))
#' @export
shuffle_design_file <- function(path, out, y = NULL, weights = NULL, offset = NULL,
                                memory = 2^30) {
    out <- check_path(out, must_exist = FALSE, arg = "out")
    x <- design_file(path)
    if (!is.numeric(memory) || length(memory) != 1L || is.na(memory) || memory < 1)
        stop_arg("memory", "must be a positive number of bytes")
    extra <- list(y = y, weights = weights, offset = offset)
    for (name in names(extra)) if (!is.null(extra[[name]]) && NROW(extra[[name]]) != x$N)
        stop_arg(name, sprintf("has %s values; the file has %s rows",
                               big_count(NROW(extra[[name]])), big_count(x$N)))
    row_bytes <- x$bytes * as.double(x$ncol)
    ## at most `memory` bytes of rows a bucket, and at most 256 buckets
    B <- max(floor(memory / row_bytes), ceiling(x$N / 256), 1)
    B <- as.integer(min(B, x$N))
    order <- sample.int(x$N)
    same <- file.exists(out) && normalizePath(out) == x$path
    target <- if (same) tempfile("shuffled", tmpdir = dirname(x$path), fileext = ".sgd") else out
    tmp <- tempfile("buckets", tmpdir = dirname(normalizePath(target, mustWork = FALSE)))
    .Call(C_sgfs_design_file_shuffle, x$path, target, order, B, tmp)
    if (same && !file.rename(target, out)) {
        unlink(target)
        stop_arg("out", sprintf("could not replace '%s'", out))
    }
    value <- list(x = design_file(out), order = order)
    for (name in names(extra)) if (!is.null(extra[[name]]))
        value[[name]] <- if (is.matrix(extra[[name]])) extra[[name]][order, , drop = FALSE]
                         else extra[[name]][order]
    value
}

## Minibatches as windows of consecutive rows (src/minibatch.c), their
## starts drawn this many iterations ahead, or 0: random rows.
## sgfs_control(batches = "windows" or "rows"); by default (NA) windows
## for many rows in a random order: a design file shuffle_design_file()
## wrote (random rows would cost a disk read each once it is larger than
## memory, and a scattered read each when it is not) and the engine's copy,
## which it holds in a random order (shuffled_copy()).  The depth keeps
## that many windows' reads in flight on a disk at once: a disk serves
## random reads of a window's size faster the more of them it has queued,
## up to a few dozen (bench/results/file-single.md measures the depths).
## One depth for all data, as it orders the random numbers: the same seed
## gives the same draws from a file as from memory.
batch_windows <- function(data) {
    b <- batches_option()
    windows <- if (is.na(b)) random_order(data) else b == "windows"
    if (windows) 32L else 0L
}

## whether the engine reads the data's rows in a random order: its copy's
## own, or a shuffled design file's, of as many rows as shuffled_copy()
## asks of a copy
random_order <- function(data) {
    !is.null(data$order) || (isTRUE(data$file$design$shuffled) && shuffled_copy(data$N))
}

## The rows of a window, for batches of n: the N windows of one order are
## not all the subsets random rows draw from, and the minibatch noise's
## covariance is off by a relative sd of about sqrt(4 w / (3 N)) for
## windows of w rows (whole windows of n = 100 of a copy of 10,000 rows
## shuffled once gave SGFS-b variances 26 % off).  So by default windows
## of 3e-4 N rows, at least 8 (2 %; 3.3 % at 10,000 rows with 8), read as
## streams -- the largest divisor of n up to that: the whole batch, one
## read, for a shuffled file larger than memory (N / n in the 100,000s);
## with sgfs_control(batches = "windows") the whole batch always.
window_rows <- function(data, n) {
    if (!(is.na(batches_option()) && random_order(data))) return(as.integer(n))
    target <- min(n, max(8, floor(3e-4 * data$N)))
    ## (windows are blocks of one partition, n / w of them: w divides n)
    w <- seq_len(target)
    as.integer(max(w[n %% w == 0]))
}

batches_option <- function() current_control()$batches

## Whether the engine asks the system for a minibatch's rows of the design
## file x before it reads them, and lets their pages go after
## (src/design_file.c, src/driver.c): sgfs_control(file_prefetch
## = TRUE or FALSE), or by default (NA) when the file is larger than half
## the machine's memory (then, shuffled, it is read in windows: one request
## a window, made iterations before it is read; the page cache is never
## full of windows read before, which the system would otherwise evict at
## every read).  A file that fits stays in the page cache after the set-up's
## passes, and asking would only add a system call per row.
file_prefetch <- function(x) {
    p <- current_control()$file_prefetch
    if (!is.na(p)) return(p)
    file_prefetch_default(x)
}
file_prefetch_default <- function(x) larger_than_memory(x)

## a design file larger than half the machine's memory
larger_than_memory <- function(x) {
    memory <- machine_memory()
    !is.na(memory) && x$bytes * as.double(x$N) * x$ncol > memory / 2
}
physical_memory <- function() .Call(C_sgfs_physical_memory)

check_path <- function(path, must_exist, arg = "path") {
    if (!is.character(path) || length(path) != 1L || is.na(path) || !nzchar(path))
        stop_arg(arg, "must be the path of one file")
    if (must_exist && !file.exists(path)) stop_arg(arg, sprintf("'%s' does not exist", path))
    if (dir.exists(path)) stop_arg(arg, sprintf("'%s' is a folder, not a file", path))
    path
}

short_names <- function(names) {
    shown <- paste0("'", utils::head(names, 5L), "'", collapse = ", ")
    if (length(names) > 5L) paste0(shown, ", ... (", length(names), ")") else shown
}

#' @export
dim.sgfs_design_file <- function(x) c(x$N, x$ncol)

#' @export
dimnames.sgfs_design_file <- function(x) list(NULL, x$names)

#' @export
`[.sgfs_design_file` <- function(x, i, j, drop = TRUE) {
    rows <- if (missing(i)) seq_len(x$N) else seq_len(x$N)[i]
    if (anyNA(rows)) stop_arg("i", "selects rows beyond the file's ", big_count(x$N))
    out <- .Call(C_sgfs_design_file_rows, x, as.integer(rows))
    colnames(out) <- x$names
    if (!missing(j)) out <- out[, j, drop = FALSE]
    if (drop) drop(out) else out
}

#' @export
as.matrix.sgfs_design_file <- function(x, ...) x[, , drop = FALSE]

#' @export
print.sgfs_design_file <- function(x, ...) {
    size <- structure(x$bytes * as.double(x$N) * x$ncol, class = "object_size")
    cat(sprintf("<design file %s: %s rows x %s columns (%s) of %s, %s>\n", x$path,
                big_count(x$N), big_count(x$ncol), short_names(x$names),
                if (x$bytes == 8L) "doubles" else "floats", format(size, units = "auto")))
    invisible(x)
}

## the columns' statistics (column_stats(): mean, sd, meansq, ones,
## checksum), which columns hold only 0s and 1s ("indicator") and the first
## columns with a non-finite ("bad") or infinite value: two passes over the
## file, once per opened file
design_file_stats <- function(x) {
    if (is.null(x$cache$stats)) x$cache$stats <- .Call(C_sgfs_design_file_stats, x)
    x$cache$stats
}

## the design file x as a design: checked (every value finite), its
## columns named
file_design <- function(x, arg, allow_na) {
    st <- design_file_stats(x)
    if ((if (allow_na) st$infinite else st$bad) > 0L)
        stop_arg(arg, sprintf("(the design file %s) has missing or non-finite values in column '%s'",
                              x$path, x$names[if (allow_na) st$infinite else st$bad]))
    x
}

## the 0/1 columns of a design file as a dgCMatrix (the others empty), for
## the separated levels' scan: one pass if there are any but columns of
## ones (an intercept, which the scan leaves out), once per design_file()
## object (whatever the response: later fits do not read the file for it)
file_indicator_columns <- function(x) {
    if (is.null(x$cache$indicators)) {
        st <- design_file_stats(x)
        cols <- which(st$indicator & !st$ones)
        s <- if (length(cols)) .Call(C_sgfs_design_file_columns, x, cols)
             else list(i = integer(), p = integer(x$ncol + 1L), x = double())
        x$cache$indicators <- Matrix::sparseMatrix(i = s$i, p = s$p, x = s$x,
                                                   dims = c(x$N, x$ncol),
                                                   dimnames = list(NULL, x$names), index1 = FALSE)
    }
    x$cache$indicators
}

## indicator_stats() of a design file, from those columns: which are 0/1,
## and of each its ones and their responses' sum (NA for the others; a
## column of ones has N and sum(y))
file_indicator_stats <- function(x, y) {
    stopifnot(length(y) == x$N)
    st <- design_file_stats(x)
    indicator <- st$indicator
    ones <- ysum <- ifelse(indicator, 0, NA_real_)
    ones[st$ones] <- x$N
    ysum[st$ones] <- sum(as.double(y))
    cols <- file_indicator_columns(x)
    count <- diff(cols@p)
    if (length(cols@i)) {
        sums <- rowsum(as.double(y)[cols@i + 1L], rep.int(seq_along(count), count))
        j <- as.integer(rownames(sums))
        ones[j] <- count[j]
        ysum[j] <- sums[, 1L]
    }
    list(indicator = indicator, ones = ones, ysum = ysum)
}
