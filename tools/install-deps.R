## Installs the packages DESCRIPTION names (Imports and Suggests) that are
## missing, from the machine's configured repository.
##
## Whether a package loads is asked of a fresh R process each time: asking
## here would load the namespaces of what is installed (testthat loads rlang,
## cli, ...), and a package installed afterwards that needs newer versions of
## them would then fail to load in this process although it loads anywhere
## else (bayesplot on a fresh machine: ggplot2 needs a newer rlang than
## Debian's).
fields <- read.dcf("DESCRIPTION", fields = c("Imports", "Suggests"))
pkgs <- trimws(unlist(strsplit(gsub("\\([^)]*\\)", "", paste(fields[!is.na(fields)],
                                                           collapse = ",")), ",")))
base <- rownames(installed.packages(priority = "base"))
pkgs <- setdiff(pkgs[nzchar(pkgs)], base)

## the packages of `pkgs` that load, asked of a new R process
loadable <- function(pkgs) {
    if (!length(pkgs)) return(character(0))
    expr <- sprintf("for (p in c(%s)) if (requireNamespace(p, quietly = TRUE)) cat(p, '\\n')",
                    paste0("'", pkgs, "'", collapse = ", "))
    out <- suppressWarnings(system2(file.path(R.home("bin"), "Rscript"), c("-e", shQuote(expr)),
                                    stdout = TRUE, stderr = FALSE))
    intersect(pkgs, trimws(out))
}

missing <- setdiff(pkgs, loadable(pkgs))
if (length(missing)) {
    message("installing: ", paste(missing, collapse = ", "))
    install.packages(missing)
}
still <- setdiff(missing, loadable(missing))
if (length(still)) stop("could not install: ", paste(still, collapse = ", "))
