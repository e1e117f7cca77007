## Installs the packages DESCRIPTION names (Imports and Suggests) that are
## missing, from the machine's configured repository.
fields <- read.dcf("DESCRIPTION", fields = c("Imports", "Suggests"))
pkgs <- trimws(unlist(strsplit(gsub("\\([^)]*\\)", "", paste(fields[!is.na(fields)],
                                                           collapse = ",")), ",")))
base <- rownames(installed.packages(priority = "base"))
pkgs <- setdiff(pkgs[nzchar(pkgs)], base)
missing <- pkgs[!vapply(pkgs, requireNamespace, NA, quietly = TRUE)]
if (length(missing)) {
    message("installing: ", paste(missing, collapse = ", "))
    install.packages(missing)
}
still <- missing[!vapply(missing, requireNamespace, NA, quietly = TRUE)]
if (length(still)) stop("could not install: ", paste(still, collapse = ", "))
