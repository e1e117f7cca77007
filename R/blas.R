## Which BLAS R runs, for the reports (print(), summary(), the bench
## scripts): OpenBLAS's own description where it is loaded, else the kind of
## library R's BLAS file is.  The engine sets a threaded BLAS to one thread
## while it samples (src/blas_threads.c); the set-up's full-data passes use
## all its threads.
blas_label <- function() {
    info <- .Call(C_sgfs_blas_info)
    path <- extSoftVersion()[["BLAS"]]
    kind <- if (nzchar(info$config)) {
        words <- strsplit(info$config, " ", fixed = TRUE)[[1L]]
        paste(utils::head(words, 2L), collapse = " ")
    } else if (grepl("Rblas|/blas/libblas", path)) "reference BLAS"
    else if (nzchar(path)) basename(path) else "R's BLAS"
    threads <- if (!is.na(info$threads))
        sprintf(", %d thread%s (1 while sampling)", info$threads, if (info$threads == 1L) "" else "s")
    paste0(kind, threads)
}
