#' Numerical settings of a fit
#'
#' How a fit holds and reads its data and shapes its metric: settings that
#' a model's answer does not depend on, or (`batches`, `metric_rank`, and
#' through the precision of the data's copy `precision` and `memory`)
#' depends on only within Monte Carlo error.  Every sampler takes them as
#' its `control` argument, records them in the fit, and [summary()]
#' prints them; [update()][update.sgfit] continues and refits with them.
#' Their defaults come from options of the same names (`sgfs.precision`,
#' `sgfs.in_place`, ...), read when `sgfs_control()` is called, so that a
#' session can set them once: options never change a fit once made.
#'
#' @param precision of the engine's standardised copy of a dense design:
#'   `"double"`, `"single"` (half the memory, each value rounded once: a
#'   relative error below 6e-8), or `NULL`, double unless that copy would
#'   take more than a quarter of `memory`.
#' @param in_place whether a dense double matrix is read where it is
#'   (laid out as the engine's rows while a fit reads it, and put back bit
#'   for bit) instead of copied: `TRUE`, `FALSE`, or `NA`, when it has
#'   10,000 rows or more and a copy would take more than 1/64 of `memory`,
#'   or when even a single-precision copy would take more than a quarter.
#' @param memory the bytes of memory the fit plans for; `NULL`: the
#'   machine's physical memory.
#' @param batches how minibatches are drawn: `NA`, random rows, read from
#'   10,000 rows as blocks of consecutive rows of the engine's randomly
#'   ordered copy (or of a shuffled [design_file()]); `"rows"`, random rows
#'   from the data in their order; `"windows"`, whole-batch windows of any
#'   data (whose rows must then be in random order).
#' @param file_prefetch whether the engine asks the system for a design
#'   file's rows before it reads them and lets their pages go after: `TRUE`,
#'   `FALSE`, or `NA`, when the file is larger than half of `memory`.
#' @param sparse_fill the largest share of a design's N x P entries that
#'   its compressed rows may store; above it the engine keeps a dense copy
#'   (0: always dense).  The draws are the same either way.
#' @param metric_rank the largest rank of the low-rank part of a diagonal
#'   metric of the mode (the directions its diagonal whitens worst); 0: the
#'   diagonal alone.
#' @param group_draws whether a mixed model's draws hold every group
#'   effect (`b[...]` columns, as 'rstanarm' keeps them): `TRUE`, `FALSE`
#'   (the fit keeps each effect's posterior mean and sd, from sums over the
#'   kept draws: [ranef()][ranef.sgfit] works, draw-level predictions with
#'   the groups' effects do not), or `NA`, when the terms have at most
#'   10,000 effects in all.  The chain is the same either way.
#' @return A list of class `"sgfs_control"`.
#' @seealso [sampler-arguments]
#' @examples
#' sgfs_control()
#' sgfs_control(precision = "single", batches = "rows")
#' @export
sgfs_control <- function(precision = getOption("sgfs.precision"),
                         in_place = getOption("sgfs.in_place", NA),
                         memory = getOption("sgfs.memory"),
                         batches = getOption("sgfs.batches", NA),
                         file_prefetch = getOption("sgfs.file_prefetch", NA),
                         sparse_fill = getOption("sgfs.sparse_fill", 0.5),
                         metric_rank = getOption("sgfs.metric_rank", 16L),
                         group_draws = getOption("sgfs.group_draws", NA)) {
    ## (each message names the option that sets the argument's default)
    bad <- function(arg, ...)
        stop(sprintf("'%s' (options(sgfs.%s =) sets its default) %s", arg, arg, paste0(...)),
             call. = FALSE)
    if (!(is.null(precision) || identical(precision, "double") || identical(precision, "single")))
        bad("precision", "must be \"double\", \"single\" or NULL, not ", format_value(precision))
    flag_na <- function(x, arg) {
        if (!is.logical(x) || length(x) != 1L)
            bad(arg, "must be TRUE, FALSE or NA, not ", format_value(x))
        x
    }
    in_place <- flag_na(in_place, "in_place")
    group_draws <- flag_na(group_draws, "group_draws")
    file_prefetch <- flag_na(file_prefetch, "file_prefetch")
    if (!is.null(memory)) {
        if (!is.numeric(memory) || length(memory) != 1L || is.na(memory) || memory <= 0)
            bad("memory", "must be a number of bytes or NULL, not ", format_value(memory))
        memory <- as.double(memory)
    }
    if (!(identical(batches, NA) || identical(batches, "rows") || identical(batches, "windows")))
        bad("batches", "must be \"rows\", \"windows\" or NA, not ", format_value(batches))
    if (!is.numeric(sparse_fill) || length(sparse_fill) != 1L || is.na(sparse_fill) ||
        sparse_fill < 0 || sparse_fill > 1)
        bad("sparse_fill", "must be a number in [0, 1], not ", format_value(sparse_fill))
    if (!is.numeric(metric_rank) || length(metric_rank) != 1L || !is.finite(metric_rank) ||
        metric_rank < 0 || metric_rank != round(metric_rank))
        bad("metric_rank", "must be a count (0 for none), not ", format_value(metric_rank))
    structure(list(precision = precision, in_place = in_place, memory = memory,
                   batches = batches, file_prefetch = file_prefetch,
                   sparse_fill = as.double(sparse_fill), metric_rank = as.integer(metric_rank),
                   group_draws = group_draws),
              class = "sgfs_control")
}

#' @export
print.sgfs_control <- function(x, ...) {
    cat("sgfs_control():\n")
    cat(control_lines(x), sep = "\n")
    invisible(x)
}

## one line a setting, "  name = value", with what NULL and NA mean (and
## for a fit's control the precision its data were held in, `precision`)
control_lines <- function(x, precision = NULL) {
    shown <- vapply(names(x), function(k) {
        v <- x[[k]]
        if (is.null(v) && k == "precision" && !is.null(precision))
            return(sprintf("NULL (by memory: %s)", precision))
        if (is.null(v)) return(if (k == "memory") "NULL (the machine's)" else "NULL (by memory)")
        if (identical(v, NA)) return("NA (the default rule)")
        if (k == "memory") return(if (is.na(v)) "unknown" else sprintf("%.4g bytes", v))
        format(v)
    }, "")
    sprintf("  %-13s = %s", names(x), shown)
}

## The control of the fit being made: every sampler sets it for its call
## (local_control()); outside a fit (the data readers called directly) the
## defaults.
current_control <- function() {
    if (is.null(the$control)) sgfs_control() else the$control
}

## the current control as a fit records it: with the memory it planned for
## (the machine's, unless set)
recorded_control <- function() {
    control <- current_control()
    control["memory"] <- list(machine_memory())
    control
}

## control (an sgfs_control() or a list of its arguments) checked, made the
## current one until the calling function returns; NULL: the current one
## (update() of a fit sets the fit's), else sgfs_control()
local_control <- function(control, frame = parent.frame()) {
    if (is.null(control)) control <- current_control()
    if (!inherits(control, "sgfs_control")) {
        if (!is.list(control) || is.null(names(control)) ||
            !all(names(control) %in% names(formals(sgfs_control))))
            stop_arg("control", "must be sgfs_control(...) or a list of its arguments, not ",
                     format_value(control))
        control <- do.call(sgfs_control, control)
    }
    old <- the$control
    the$control <- control
    do.call(on.exit, list(call("assign", "control", old, envir = the), add = TRUE), envir = frame)
    invisible(control)
}
