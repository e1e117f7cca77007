## Regenerates the precomputed vignettes: knits each vignettes/NAME.Rmd.orig
## (which runs the package on ../shared/datasets, for minutes) into
## vignettes/NAME.Rmd with its figures as vignettes/NAME-*.png, so that
## R CMD build only renders committed results.
##   Rscript tools/precompute-vignettes.R            # all of them
##   Rscript tools/precompute-vignettes.R covertype  # the ones named
## Run from the package root with the package installed (make vignettes).
args <- commandArgs(trailingOnly = TRUE)
origs <- Sys.glob("vignettes/*.Rmd.orig")
names(origs) <- sub("\\.Rmd\\.orig$", "", basename(origs))
if (length(args)) {
    unknown <- setdiff(args, names(origs))
    if (length(unknown)) stop("no vignettes/", unknown[1L], ".Rmd.orig")
    origs <- origs[args]
}
if (!dir.exists("../shared/datasets")) stop("../shared/datasets is needed beside the package")
owd <- setwd("vignettes")
for (name in names(origs)) {
    message("knitting ", name, " ...")
    ## from scratch: a knitr cache left by an earlier package would replay its output
    unlink(paste0(name, "-cache"), recursive = TRUE)
    t0 <- proc.time()[["elapsed"]]
    ## a fresh R per vignette, so one's state cannot leak into another's
    status <- system2(file.path(R.home("bin"), "Rscript"),
                      c("-e", shQuote(sprintf(
                          "knitr::opts_chunk$set(fig.path = '%s-', dpi = 96); knitr::knit('%s.Rmd.orig', '%s.Rmd', quiet = TRUE)",
                          name, name, name))))
    if (status != 0) stop("knitting ", name, " failed")
    message(sprintf("  %s.Rmd written in %.0f s", name, proc.time()[["elapsed"]] - t0))
}
setwd(owd)
