## Installs the packages DESCRIPTION names (Imports and Suggests) that are
## missing, from the machine's configured repository; with --demo only what
## the package and the demo (tools/demo.R) need: Imports and MASS (the
## demo's data), so that a first contact does not build every Suggests
## package (bayesplot, ggplot2, ... from source) first.
##
## Whether a package loads is asked of a fresh R process each time: asking
## here would load the namespaces of what is installed (testthat loads rlang,
## cli, ...), and a package installed afterwards that needs newer versions of
## them would then fail to load in this process although it loads anywhere
## else (bayesplot on a fresh machine: ggplot2 needs a newer rlang than
## Debian's).
demo <- "--demo" %in% commandArgs(TRUE)
fields <- read.dcf("DESCRIPTION", fields = if (demo) "Imports" else c("Imports", "Suggests"))
pkgs <- trimws(unlist(strsplit(gsub("\\([^)]*\\)", "", paste(fields[!is.na(fields)],
                                                           collapse = ",")), ",")))
if (demo) pkgs <- c(pkgs, "MASS")
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
