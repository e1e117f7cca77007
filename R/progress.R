## A run's progress, over all its chains: in an interactive session a bar
## with the time spent and the time left (at the pace so far); elsewhere
## (Rscript, a log) lines.  `progress`: TRUE shows it (outside an
## interactive session a line every tenth of the run), NA (the default)
## too but outside one only a line every `line_every` seconds of a run that
## takes longer than that, FALSE nothing.  Chains in forked workers or in
## futures on this machine report their iterations through a file each,
## which the parent reads as it waits (run_parallel(), run_futures()).

line_every <- 10

## a display of `total` iterations: list(update = function(done), close =
## function()), or NULL for none
progress_display <- function(progress, total, label = "sampling") {
    if (!is.character(label) || length(label) != 1L) label <- "sampling"
    if (is.null(progress) || isFALSE(progress) || total <= 0) return(NULL)
    bar <- interactive()
    start <- proc.time()[["elapsed"]]
    last <- start
    shown <- 0
    width <- 30L
    update <- function(done) {
        now <- proc.time()[["elapsed"]]
        spent <- now - start
        left <- if (done > 0) spent * (total - done) / done else NA_real_
        text <- sprintf("%s: %s / %s iterations (%3.0f%%), %s, %s left", label,
                        big_count(done), big_count(total), 100 * done / total,
                        seconds_label(spent), if (is.na(left)) "?" else seconds_label(left))
        if (bar) {
            if (now - last < 0.2 && done < total) return(invisible())
            k <- round(width * done / total)
            cat(sprintf("\r|%s%s| %s", strrep("=", k), strrep(" ", width - k), text))
            utils::flush.console()
        } else {
            due <- if (isTRUE(progress)) done >= shown + total / 10 || done == total
                   else now - last >= line_every
            if (!due || done == shown) return(invisible())
            cat(text, "\n", sep = "")
            shown <<- done
        }
        last <<- now
        invisible()
    }
    close <- function() if (bar) cat("\n")
    list(update = update, close = close)
}

seconds_label <- function(s) {
    if (s < 60) return(sprintf("%.1f s", s))
    if (s < 3600) return(sprintf("%d min %02d s", s %/% 60, round(s %% 60)))
    sprintf("%d h %02d min", s %/% 3600, round((s %% 3600) / 60))
}

## Files through which chains running elsewhere report the iterations they
## have done: one per chain (a number, rewritten as it grows)
progress_files <- function(chains) {
    paths <- file.path(tempdir(), sprintf("sgfs-progress-%d-%s-%d", Sys.getpid(),
                                          format(as.numeric(Sys.time()) * 1e3, scientific = FALSE,
                                                 nsmall = 0), seq_len(chains)))
    for (p in paths) writeLines("0", p)
    paths
}

## the reporter a worker's chain calls with its iterations done
file_reporter <- function(path) function(done)
    try(writeLines(format(done, scientific = FALSE), path), silent = TRUE)

## the iterations done over all chains, read from their files (a file
## being rewritten, or gone, counts as what it said last)
files_done <- function(paths, last) {
    now <- vapply(paths, function(p) {
        v <- suppressWarnings(tryCatch(as.numeric(readLines(p, n = 1L, warn = FALSE)),
                                       error = function(e) NA_real_))
        if (length(v) == 1L && is.finite(v)) v else NA_real_
    }, 0)
    ifelse(is.na(now), last, now)
}
