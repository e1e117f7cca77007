## A design file from a formula and data read in chunks (CSV files, a data
## frame, or any reader: a database query, an Arrow dataset), for data
## larger than memory: a first pass fixes each column's type and each
## factor's levels, a second writes the model matrix chunk by chunk.

#' Write a design file from a formula and data read in chunks
#'
#' `design_from()` builds a design file ([write_design_file()]) from a model
#' formula and data too large for memory, read `chunk_rows` rows at a time,
#' in two passes.  The first reads every chunk to fix each variable's type
#' (a column is numeric only if every chunk's values are) and each factor's
#' levels (every value any chunk has, sorted, as [factor()] sorts them), so
#' that every chunk is coded with the same columns.  The second codes each
#' chunk with [stats::model.matrix()] (treatment contrasts, the intercept
#' left to the sampler, rows with missing values in the formula's variables
#' dropped as by [stats::na.omit()]) and appends its rows to the file.  Only
#' one chunk is in memory at a time, with the response and, if the formula
#' has them, the `offset()` terms (one number per row).
#'
#' `data` is where the rows are:
#' * the path of a CSV file, or several (read with [utils::read.csv()] on a
#'   connection; `...` is passed to it, e.g. `sep`, `na.strings`);
#' * a data frame (in memory: for a design file made from it in chunks);
#' * a function of no arguments that opens the source and returns a reader:
#'   a function of `n` that returns the next (at most `n`) rows as a data
#'   frame, and `NULL` or a data frame of no rows at the end.  It is called
#'   once a pass.  For a database query with 'DBI':
#'   `function() { res <- DBI::dbSendQuery(con, sql); function(n) { d <-
#'   DBI::dbFetch(res, n); if (!nrow(d)) DBI::dbClearResult(res); d } }`;
#'   for an Arrow dataset: `function() { r <- arrow::as_record_batch_reader(
#'   dataset); function(n) { b <- r$read_next_batch(); if (is.null(b)) NULL
#'   else as.data.frame(b) } }` (Arrow's batches are its own size).
#'
#' For a CSV file larger than memory, the whole workflow is
#' `d <- design_from(y ~ ., "big.csv", "big.sgd", chunk_rows = 1e6)`, then
#' `s <- shuffle_design_file(d$x$path, "big-shuffled.sgd", y = d$y)` (so that
#' minibatches are read as blocks) and `sgldcv(s$x, s$y)`; memory holds one
#' chunk and the response (`bench/results/design-from.md` measures it).
#'
#' @param formula a model formula, `y ~ x1 + f`, as for the samplers'
#'   formula methods (no random-effect terms).
#' @param data the source of the rows: CSV path(s), a data frame, or a
#'   function that returns a chunk reader (see Details).
#' @param path the design file's path.
#' @param chunk_rows the rows read at a time.
#' @param precision `"double"` or `"single"`, as for [write_design_file()].
#' @param ... for CSV files, passed to [utils::read.csv()].
#' @return A list of class `sgfs_design_source`: `x`, the design file
#'   ([design_file()]); `y`, the response of the rows written (a factor for a
#'   factor response, a two-column matrix for `cbind(successes, failures)`);
#'   `offset` (`NULL` without offset terms); `terms` and `xlevels`, with
#'   which [stats::model.matrix()] codes new rows alike (drop its
#'   `"(Intercept)"` column); and `N`, the rows written.  A sampler takes
#'   `x` and `y`: `sgld(d$x, d$y, offset = d$offset)`.
#' @examples
#' csv <- tempfile(fileext = ".csv")
#' set.seed(1)
#' big <- data.frame(y = rbinom(3000, 1, 0.4), x = rnorm(3000),
#'                   g = sample(c("a", "b", "c"), 3000, replace = TRUE))
#' utils::write.csv(big, csv, row.names = FALSE)
#' d <- design_from(y ~ x + g, csv, tempfile(fileext = ".sgd"), chunk_rows = 1000)
#' d$x
#' fit <- sgld(d$x, d$y, n_iter = 2000, seed = 1, progress = FALSE)
#' colMeans(as.matrix(fit))
#' coef(glm(y ~ x + g, binomial, big))
#' unlink(c(csv, d$x$path))
#' @export
design_from <- function(formula, data, path, chunk_rows = 100000L,
                        precision = c("double", "single"), ...) {
    if (!inherits(formula, "formula") || length(formula) != 3L)
        stop_arg("formula", "must be a two-sided model formula, y ~ x1 + x2")
    if (length(random_bars(formula)))
        stop_arg("formula", "has random-effect terms, which a design file does not hold")
    path <- check_path(path, must_exist = FALSE)
    chunk_rows <- check_count(chunk_rows, "chunk_rows", 1L)
    precision <- match.arg(precision)
    open <- chunk_source(data, list(...))
    vars <- all.vars(formula)
    ## pass 1: each variable's type and each factor's levels
    kinds <- list()
    n_read <- 0
    read <- open()
    on.exit(close_reader(read), add = TRUE)
    repeat {
        chunk <- next_chunk(read, chunk_rows)
        if (is.null(chunk)) break
        if ("." %in% vars) vars <- union(setdiff(vars, "."), names(chunk))
        kinds <- merge_kinds(kinds, chunk, intersect(vars, names(chunk)))
        n_read <- n_read + nrow(chunk)
    }
    if (!n_read) stop_arg("data", "has no rows")
    kinds <- lapply(kinds, function(k) if (k$kind == "na") list(kind = "numeric") else k)
    missing_vars <- setdiff(all.vars(formula), c(".", names(kinds)))
    if (length(missing_vars))
        stop_arg("data", "has no column ", paste0("'", missing_vars, "'", collapse = ", "),
                 " of the formula")
    ## pass 2: each chunk coded alike and appended
    close_reader(read)
    read <- open()
    on.exit(close_reader(read), add = TRUE)
    terms <- NULL
    ys <- offsets <- list()
    written <- 0
    repeat {
        chunk <- next_chunk(read, chunk_rows)
        if (is.null(chunk)) break
        chunk <- fixed_kinds(chunk, kinds)
        mf <- stats::model.frame(formula, chunk, na.action = stats::na.omit,
                                 xlev = factor_levels(kinds))
        if (!nrow(mf)) next
        if (is.null(terms)) terms <- stats::terms(mf)
        x <- stats::model.matrix(terms, mf)
        x <- x[, colnames(x) != "(Intercept)", drop = FALSE]
        if (!ncol(x)) stop_arg("formula", "has no predictors (the intercept is the sampler's)")
        write_design_file(x, path, append = written > 0, precision = precision)
        ys[[length(ys) + 1L]] <- stats::model.response(mf)
        offsets[[length(offsets) + 1L]] <- stats::model.offset(mf)
        written <- written + nrow(x)
    }
    if (written < 2) stop_arg("data", "has fewer than two complete rows for the formula")
    y <- join_responses(ys)
    list_offset <- if (length(offsets) && !is.null(offsets[[1L]])) unlist(offsets, use.names = FALSE)
    structure(list(x = design_file(path), y = y, offset = list_offset, terms = terms,
                   xlevels = factor_levels(kinds)[intersect(names(factor_levels(kinds)),
                                                            all.vars(terms))],
                   N = written),
              class = "sgfs_design_source")
}

#' @export
print.sgfs_design_source <- function(x, ...) {
    cat(sprintf("A design file of %s rows from %s\n", big_count(x$N),
                deparse1(stats::formula(x$terms))))
    print(x$x)
    invisible(x)
}

## the source's opener: a function of no arguments returning a reader
## function(n) of the next chunk (NULL at the end)
chunk_source <- function(data, csv_args) {
    if (is.function(data)) {
        return(function() {
            reader <- data()
            if (!is.function(reader) && !inherits(reader, "sgfs_csv_reader"))
                stop_arg("data", "must, as a function, return a reader: a function(n) of the next n rows")
            reader
        })
    }
    if (is.data.frame(data)) {
        return(function() {
            at <- 0L
            function(n) {
                if (at >= nrow(data)) return(NULL)
                rows <- seq.int(at + 1L, min(nrow(data), at + n))
                at <<- at + length(rows)
                data[rows, , drop = FALSE]
            }
        })
    }
    if (is.character(data) && length(data) && !anyNA(data)) {
        missing_files <- data[!file.exists(data)]
        if (length(missing_files)) stop_arg("data", "names no file '", missing_files[1L], "'")
        return(function() csv_reader(data, csv_args))
    }
    stop_arg("data", "must be CSV file path(s), a data frame or a function returning a chunk ",
             "reader, not ", format_value(data))
}

close_reader <- function(read) if (inherits(read, "sgfs_csv_reader")) read$close()

## a reader of CSV files one after another, each with its header
csv_reader <- function(files, csv_args) {
    k <- 0L
    con <- NULL
    header <- NULL
    ## (its connection closed by design_from() however the pass ends)
    structure(class = "sgfs_csv_reader", list(close = function() if (!is.null(con)) {
        close(con)
        con <<- NULL
    }, read = function(n) {
        repeat {
            if (is.null(con)) {
                k <<- k + 1L
                if (k > length(files)) return(NULL)
                header <<- names(do.call(utils::read.csv, c(list(files[k], nrows = 1L), csv_args)))
                con <<- file(files[k], "r")
                readLines(con, n = 1L)
            }
            chunk <- tryCatch(do.call(utils::read.csv,
                                      c(list(con, header = FALSE, nrows = n, col.names = header,
                                             colClasses = "character"), csv_args)),
                              error = function(e) NULL)
            if (!is.null(chunk) && nrow(chunk)) return(convert_columns(chunk))
            close(con)
            con <<- NULL
        }
    }))
}

## character columns read from text, converted as read.csv() would
convert_columns <- function(chunk) {
    chunk[] <- lapply(chunk, utils::type.convert, as.is = TRUE)
    chunk
}

next_chunk <- function(read, n) {
    chunk <- if (inherits(read, "sgfs_csv_reader")) read$read(n) else read(n)
    if (is.null(chunk) || !NROW(chunk)) return(NULL)
    as.data.frame(chunk, stringsAsFactors = FALSE)
}

## per variable: "numeric", "logical" or "factor" with the levels seen
## (every value, in the order met; factor_levels() sorts them)
merge_kinds <- function(kinds, chunk, vars) {
    for (v in vars) {
        col <- chunk[[v]]
        now <- if (is.factor(col) || is.character(col))
                   list(kind = "factor", levels = unique(as.character(stats::na.omit(col))))
               else if (all(is.na(col))) list(kind = "na")         # (says nothing of the kind)
               else if (is.logical(col)) list(kind = "logical")
               else if (is.numeric(col)) list(kind = "numeric")
               else stop_arg("data", sprintf("column '%s' is of class %s, which a design file cannot code",
                                             v, class(col)[1L]))
        old <- kinds[[v]]
        kinds[v] <- list(if (is.null(old) || old$kind == "na") now
                         else if (now$kind == "na") old
                         else if (old$kind == "factor" && now$kind == "factor")
                             list(kind = "factor", levels = union(old$levels, now$levels))
                         else if (old$kind == "factor" || now$kind == "factor")
                             stop_arg("data", sprintf(paste(
                                 "column '%s' holds numbers in some chunks and text in others:",
                                 "clean it, or read it as text in every chunk (e.g. colClasses)"), v))
                         else if (old$kind == now$kind) old
                         else list(kind = "numeric"))              # (logical and numeric)
    }
    kinds
}

factor_levels <- function(kinds) {
    f <- Filter(function(k) k$kind == "factor", kinds)
    lapply(f, function(k) sort(k$levels))
}

## a chunk's columns in the kinds the first pass fixed
fixed_kinds <- function(chunk, kinds) {
    for (v in intersect(names(kinds), names(chunk))) {
        k <- kinds[[v]]
        chunk[[v]] <- switch(k$kind,
                             factor = factor(as.character(chunk[[v]]), levels = sort(k$levels)),
                             numeric = as.numeric(chunk[[v]]),
                             logical = as.logical(chunk[[v]]))
    }
    chunk
}

## the chunks' responses as one: a factor keeps its levels, a matrix is bound
join_responses <- function(ys) {
    first <- ys[[1L]]
    if (is.factor(first)) return(factor(unlist(lapply(ys, as.character)), levels = levels(first)))
    if (is.matrix(first)) return(do.call(rbind, ys))
    unlist(ys, use.names = FALSE)
}
