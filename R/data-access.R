## The engine's data (src/data.c): N examples of P standardised features,
## u_i = (x_i - center) / scale, held as the dense copy xt (P x N, one
## example per column) or as compressed rows (src/sparse_rows.c: each row's
## non-zero entries, the centring applied implicitly), whichever is smaller
## (the rows when they keep at most `sparse_fill()` of the N P entries).  A
## sparse matrix (Matrix's dgCMatrix) is never densified on the way.  With
## control = sgfs_control(precision = "single"), or by default where only a single
## one fits, the dense copy is kept in single precision, xt32 (half the
## memory; each value rounded once, relative error below 6e-8).  A design
## file (R/design-file.R) and the user's double matrix itself (in_place():
## by default from 10,000 rows when a copy would take more than 1/64 of the
## memory, laid out as the engine's rows while a fit reads it,
## with_engine_order()) are read where they are, each value standardised
## when read.  A spec carries N, P
## and one of xt, xt32, rows, file and matrix; R reads the data only
## through the functions below.

## the package's state: the data shared between fits, and whether a call is
## re-evaluated only for its data (below)
the <- new.env(parent = emptyenv())

## The dense copy's precision for an N x P design: sgfs_control(precision =
## "double" or "single"), or by default double unless that copy would take
## more than a quarter of the memory (machine_memory()): half the memory at
## a relative error below 6e-8 beats reading the matrix in place, an order
## of magnitude slower an iteration (bench/results/in-place.md), which
## in_place() leaves for matrices whose single copy would not fit either.
data_precision <- function(N, P) {
    p <- current_control()$precision
    if (is.null(p)) return(if (copy_fits(8, N, P)) "double" else "single")
    p
}

## whether a copy of N x P values of `bytes` bytes takes at most `share`
## of the memory
copy_fits <- function(bytes, N, P, share = 1 / 4) {
    memory <- machine_memory()
    is.na(memory) || bytes * as.double(N) * P <= memory * share
}

## the memory the engine plans for: sgfs_control(memory = bytes), or the
## machine's
machine_memory <- function() {
    m <- current_control()$memory
    if (is.null(m)) physical_memory() else m
}

## Whether the engine reads the dense double matrix x where it is instead of
## making its copy: sgfs_control(in_place = TRUE or FALSE), or by default
## (NA) when its rows are many enough to be read in a random order
## (shuffled_copy()), x's values are R's own memory (not ALTREP) and a copy
## would take more than 1/64 of the memory (a smaller one costs little,
## and iterations on a copy are faster), or when the copy, in its precision
## (data_precision()), would take more than a quarter of the memory.  In
## place the fit adds no copy of the data (a fit keeps x alive, as R shares
## it): with_engine_order() lays x out as the engine's rows while a fit or
## a run reads them, and puts it back after, a few passes over x each time,
## so that an iteration reads rows as a copy's do (bench/results/in-place.md
## compares the two).  Without the random order, a random row is ncol
## scattered reads.
in_place <- function(x) {
    p <- current_control()$in_place
    if (!is.na(p)) return(p)
    N <- nrow(x)
    P <- ncol(x)
    (shuffled_copy(N) && !copy_fits(8, N, P, 1 / 64) && .Call(C_sgfs_reorderable, x)) ||
        !copy_fits(if (data_precision(N, P) == "double") 8 else 4, N, P)
}
## ... for a design x of any kind: only a dense double matrix can be
reads_in_place <- function(x) is.matrix(x) && is.double(x) && in_place(x)

## the compressed rows are made when they store at most this fraction of
## the N x P entries (sgfs_control(sparse_fill); 0 keeps the dense copy)
sparse_fill <- function() current_control()$sparse_fill

## list(N, P, xt, rows) for the N x P design x (a dense matrix or a
## dgCMatrix) standardised by center and scale, with (lead = TRUE) an
## implicit first column of ones, the intercept (then P is ncol(x) + 1, and
## center and scale have P values); `rows = FALSE` for the dense copy
## whatever the zeros
engine_data <- function(x, center, scale, rows = TRUE, lead = FALSE) {
    center <- as.double(center)
    scale <- as.double(scale)
    if (is_design_file(x))
        return(list(N = nrow(x), P = ncol(x) + lead,
                    file = list(design = x, center = center, inv_scale = 1 / scale, lead = lead,
                                prefetch = file_prefetch(x))))
    inplace <- reads_in_place(x)
    ## the engine's rows in a random order when there are many
    ## (shuffled_copy()): the copy's, or the matrix's during a run
    order <- if (rows && shuffled_copy(nrow(x))) copy_order(nrow(x))
    compressed <- if (rows) {
        if (inherits(x, "dgCMatrix"))
            .Call(C_sgfs_sparse_rows_csc, x@i, x@p, x@x, x@Dim, center, scale, sparse_fill(),
                  lead, order)
        else .Call(C_sgfs_sparse_rows, x, center, scale, sparse_fill(), lead, order)
    }
    if (is.null(compressed) && inplace)
        return(list(N = nrow(x), P = ncol(x) + lead, order = order,
                    matrix = list(x = x, center = center, inv_scale = 1 / scale, lead = lead,
                                  state = matrix_state())))
    if (is.null(compressed) && inherits(x, "Matrix")) x <- dense_copy(x, "x")
    single <- is.null(compressed) && data_precision(nrow(x), ncol(x)) == "single"
    list(N = nrow(x), P = ncol(x) + lead,
         xt = if (is.null(compressed) && !single)
             .Call(C_sgfs_design_copy, x, center, scale, lead, order),
         xt32 = if (single) .Call(C_sgfs_design_copy32, x, center, scale, lead, order),
         rows = compressed, order = order)
}

## A matrix read in place whose engine rows are in a random order (spec$order)
## is laid out as the engine's rows (each row's values contiguous, the rows
## in that order: src/matrix_order.c) for the evaluation of expr, and put
## back after it, bit for bit, however expr ends (an error, Ctrl-C).
## Minibatches are then windows of rows read as one stream each, as from a
## copy (without: a scattered read a value).  A fit (sg_fit()) and a run of
## chains (run_chains()) are the R code evaluated in between, which reads
## the data only through the engine; outside, R reads the matrix as given
## and the engine through the order.  The scratch is allocated
## before the values move, so that putting them back allocates nothing.
## Nested calls, and a matrix of ALTREP values (mapped or computed: read
## through the order), leave it as it is.
with_engine_order <- function(spec, expr) {
    m <- spec$matrix
    if (is.null(m) || is.null(spec$order) || isTRUE(m$state$engine_layout) ||
        !.Call(C_sgfs_reorderable, m$x))
        return(expr)
    scratch <- raw(.Call(C_sgfs_matrix_scratch_bytes, nrow(m$x), ncol(m$x)))
    on.exit(if (isTRUE(m$state$engine_layout))
        .Call(C_sgfs_matrix_reorder, m$x, spec$order, scratch, m$state, FALSE))
    .Call(C_sgfs_matrix_reorder, m$x, spec$order, scratch, m$state, TRUE)
    expr
}

## a matrix read in place's state: whether it is in the engine's layout now
## (with_engine_order())
matrix_state <- function() {
    state <- new.env(parent = emptyenv())
    state$engine_layout <- FALSE
    state
}

## Whether the engine's copy of N rows (dense or compressed) holds them in a
## random order, so that a minibatch can be a window of consecutive rows (a
## random sample read as one stream rather than n scattered rows,
## bench/results/peers-windows.md): from 10,000 rows (then
## the default batch has at most N / 100 rows), unless sgfs_control(batches
## = "rows").
shuffled_copy <- function(N) {
    N >= 10000 && !identical(batches_option(), "rows")
}

## a random order of 1..N that is the same for every fit on N rows (fits on
## the same data share one copy), from R's generator under a fixed seed,
## the user's random numbers left as they were
copy_order <- function(N) with_fixed_seed(20261127L, sample.int(N))

## the engine's rows (1-based) of the user's rows r (all: NULL), and the
## user's order of a vector (or the columns of a matrix) in the engine's
## order: the identity unless the copy is shuffled (spec$order, a
## permutation, inverted in O(N))
engine_rows <- function(spec, r = NULL) {
    if (is.null(spec$order)) return(if (is.null(r)) seq_len(spec$N) else r)
    pos <- integer(spec$N)
    pos[spec$order] <- seq_len(spec$N)
    if (is.null(r)) pos else pos[r]
}
user_order <- function(spec, v) {
    if (is.null(spec$order) || is.null(v)) return(v)
    pos <- engine_rows(spec)
    if (is.matrix(v)) v[, pos, drop = FALSE] else v[pos]
}

## the fields that hold the engine's data, one of the first five, and the
## copy's row order
backend_fields <- c("xt", "xt32", "rows", "file", "matrix", "order")

## the spec's data fields (to put in a spec, or to replace a spec's)
data_fields <- function(data) c(list(N = as.integer(data$N), P = as.integer(data$P)),
                                lapply(stats::setNames(nm = backend_fields), function(f) data[[f]]))

## spec restricted to its rows idx (1-based): data, responses, offsets
## and weights
slice_rows <- function(spec, idx) {
    idx <- as.integer(idx)
    part <- .Call(C_sgfs_data_slice, spec, idx)
    for (f in backend_fields) spec[f] <- list(part[[f]])
    spec$N <- length(idx)
    spec$y <- spec$y[idx]
    if (!is.null(spec$offset)) spec$offset <- spec$offset[idx]
    if (!is.null(spec$weights)) spec$weights <- spec$weights[idx]
    spec
}

## the N values u_i' beta[1:P] (without offsets)
data_xb <- function(spec, beta) .Call(C_sgfs_data_xb, spec, as.double(beta))

## the examples idx (1-based) as the columns of a P x m matrix (internal scale)
data_columns <- function(spec, idx = seq_len(spec$N))
    .Call(C_sgfs_data_rows_of, spec, as.integer(idx))

## ---- a fit's handle on its data ------------------------------------------
##
## A fit refers to its data instead of carrying them (as glm(model = FALSE)):
## the spec's N-sized fields live in a weak reference whose key is an
## environment the fit keeps (src/data.c), so the data stay as long as a
## fit (or a copy, window() or update() of it) refers to them, and every
## such fit shares one copy.  serialize() writes a weak reference empty:
## a fit saved with saveRDS() holds its draws and settings, not its data,
## and in a new session takes them again through update(fit, data = ) (or
## x = , y = ), which checks that they are the same.

## A weak reference to `value`, alive while the environment `key` is, and
## its value (NULL once gone, or after serialisation).  The value is boxed
## in an environment: R copies a referenced value when it makes a weak
## reference, and would copy the data; an environment is never copied.
weak_ref <- function(key, value) {
    box <- new.env(parent = emptyenv())
    box$value <- value
    .Call(C_sgfs_weakref, key, box)
}
weak_value <- function(ref) {
    box <- .Call(C_sgfs_weakref_value, ref)
    if (is.environment(box)) box$value
}

## the spec's fields held by the handle
handle_fields <- c(backend_fields, "y", "offset", "weights", "callback", "prior_weights",
                   "trials")

## list(spec without the data, handle)
detach_data <- function(spec) {
    held <- intersect(names(spec), handle_fields)
    key <- new.env(parent = emptyenv())
    list(spec = spec[setdiff(names(spec), held)],
         handle = list(key = key, ref = weak_ref(key, spec[held])))
}

## Fits on the same data share the engine's copy: each fit registers its
## copy under the key of the data it was made from (the standardisation,
## the columns' sds and order-sensitive checksums, the precision and the
## rows' threshold: prepare_design()), through a weak reference on the
## fit's handle, and a later design with the same key takes that copy
## while the fit lives.
the$shared <- list()

## the engine data (list(N, P, xt, xt32, rows)) a live fit holds for `key`,
## or NULL
shared_data <- function(key) {
    alive <- Filter(function(s) !is.null(weak_value(s$ref)), the$shared)
    the$shared <- alive
    for (s in alive) if (identical(s$key, key)) return(weak_value(s$ref))
    NULL
}

## registers the data a fit's handle (its key environment) holds under key
share_data <- function(key, handle, spec) {
    if (is.null(key)) return(invisible())
    data <- data_fields(spec)
    the$shared <- c(the$shared, list(list(key = key, ref = weak_ref(handle$key, data))))
    invisible()
}

## the fit's data (the spec's held fields), or NULL when they are gone
handle_data <- function(info) {
    if (is.null(info$handle)) return(NULL)
    weak_value(info$handle$ref)
}

## the training rows' prior weights and binomial trials (NULL: none)
training_weights <- function(info) fit_spec(info)$prior_weights
training_trials <- function(info) fit_spec(info)$trials

## the fit's full spec (settings and data), or a clear error when its data
## are not in this session
fit_spec <- function(info) {
    data <- handle_data(info)
    if (is.null(data))
        stop("this fit's data are not in this R session (a fit saved with saveRDS() keeps ",
             "its draws, not its data): give them again with update(fit, n_iter = , data = ",
             "<the data>) (x = , y = for a fit given a matrix), or predict() with newdata",
             call. = FALSE)
    c(info$spec, data)
}

## numbers that tell a fit's data apart (checked when they are given again,
## with the design's column means and sds): N, P and sums of the responses,
## offsets and weights
data_signature <- function(spec) {
    total <- function(v) if (is.null(v)) 0 else as.double(sum(v))   # (no copy of v)
    N <- spec$N
    c(N = N, P = spec$P, y = total(spec$y), y_order = sum(spec$y * (seq_len(N) / N)),
      offset = total(spec$offset), weights = total(spec$weights))
}

## set while a sampler's call is re-evaluated only for its data
## (reattach_data): sg_fit() then returns the prepared spec and design, not
## a fit
the$data_only <- FALSE

## a fit whose handle is gone (a fit read back with readRDS()) with its data
## again: the sampler's call re-evaluated with `args` (unevaluated, in env)
## up to its engine spec, whose data must be the fit's (data_signature)
reattach_data <- function(object, args, env) {
    info <- sgfit_info(object)
    call <- info$call
    for (a in names(args)) call[[a]] <- args[[a]]
    ## (the engine's copy in the fit's precision: the call's own control
    ## gives way to the current one, the fit's, with that precision)
    call$control <- NULL
    control <- current_control()
    control$precision <- if (is.null(info$precision)) "double" else info$precision
    local_control(control)
    the$data_only <- TRUE
    on.exit(the$data_only <- FALSE, add = TRUE)
    got <- eval(call, env)
    the$data_only <- FALSE
    if (!inherits(got, "sgfs_data_only")) stop("internal error: the call did not stop at its data")
    spec <- got$spec
    if (!isTRUE(all.equal(data_signature(spec), info$data_signature, tolerance = 1e-12)) ||
        !isTRUE(all.equal(got$design$columns, info$design$columns, tolerance = 1e-12)))
        stop_arg(names(args)[1L], "must be the data this fit was made with; these differ ",
                 sprintf("(%s rows and %s columns; the fit's: %s and %s, or other values)",
                         big_count(spec$N), big_count(spec$P), big_count(info$data_signature[["N"]]),
                         big_count(info$data_signature[["P"]])))
    held <- detach_data(spec)
    info$handle <- held$handle
    attr(object, "sgfit") <- info
    object
}
