#!/usr/bin/env Rscript
## bench/bench_small_defaults.R - every sampler at its defaults on small
## regressions of data shipped with R, against a long hmc() run: what a user
## trying the package on R's own data sets gets.
##
##   R_LIBS=<lib> Rscript bench/bench_small_defaults.R [--out=bench/results]
##
## Data (all rows in every minibatch for most: at most 100 rows take them
## all): CO2 (gaussian, heteroscedastic), warpbreaks (poisson,
## overdispersed), esoph (grouped binomial, sparse cells), Pima.tr
## (logistic), iris (categorical), swiss (gaussian), mtcars am ~ wt
## (probit).  Each sampler with its defaults (one chain; the run grows to
## 400 bulk effective draws), set.seed(1); the reference hmc() with n_iter =
## 20,000.  Per cell: the largest |z| over the parameters of the means and
## of the sds against the reference's, z the difference over the Monte Carlo
## standard errors of both combined (mcse() below); the range of sd / sd_hmc;
## seconds; and whether it warned or failed.  The criterion: every |z| <= 4.
## Writes DIR/small-defaults.md.
suppressPackageStartupMessages(library(sgfs))
args <- commandArgs(trailingOnly = TRUE)
out_dir <- sub("^--out=", "", grep("^--out=", args, value = TRUE))
if (!length(out_dir)) out_dir <- file.path("bench", "results")

cases <- list(
    CO2 = list(uptake ~ Type + Treatment + conc, CO2, gaussian()),
    warpbreaks = list(breaks ~ wool + tension, warpbreaks, poisson()),
    esoph = list(cbind(ncases, ncontrols) ~ agegp + alcgp, esoph, binomial()),
    Pima = list(type ~ ., MASS::Pima.tr, binomial()),
    iris = list(Species ~ Sepal.Length + Sepal.Width, iris, categorical()),
    swiss = list(Fertility ~ ., swiss, gaussian()),
    `mtcars probit` = list(am ~ wt, mtcars, binomial(link = "probit")),
    quine = list(Days ~ Eth + Sex + Lrn, MASS::quine, poisson()),
    birthwt = list(low ~ age + lwt + smoke + ht + ui, MASS::birthwt, binomial()))
samplers <- c("sgfs", "sgld", "psgld", "sghmc", "sgnht", "sgldcv", "osgfs", "isgd", "mala")

## Monte Carlo standard errors of each column's mean and sd: the mean's
## sd / sqrt(ESS), the sd's by the delta method from the variance's, whose
## terms (x - mean)^2 have their own ESS
mcse <- function(M) {
    m <- colMeans(M)
    s <- apply(M, 2, sd)
    ess <- pmax(coda::effectiveSize(M), 10)
    sq <- sweep(M, 2, m)^2
    ess_sq <- pmax(coda::effectiveSize(sq), 10)
    list(mean = m, sd = s, se_mean = s / sqrt(ess),
         se_sd = apply(sq, 2, sd) / sqrt(ess_sq) / (2 * s))
}

cells <- list()
worst <- list()
for (nm in names(cases)) {
    cs <- cases[[nm]]
    set.seed(1)
    ref <- suppressWarnings(hmc(cs[[1]], data = cs[[2]], family = cs[[3]], n_iter = 20000L,
                                verbose = FALSE))
    R <- mcse(as.matrix(ref))
    for (smp in samplers) {
        set.seed(1)
        warned <- FALSE
        t <- system.time(fit <- tryCatch(withCallingHandlers(
            get(smp)(cs[[1]], data = cs[[2]], family = cs[[3]], verbose = FALSE),
            warning = function(w) { warned <<- TRUE; invokeRestart("muffleWarning") }),
            error = function(e) e))[["elapsed"]]
        cell <- if (inherits(fit, "error")) "error" else {
            M <- mcse(as.matrix(fit))
            r <- M$sd / R$sd
            zm <- max(abs(M$mean - R$mean) / sqrt(M$se_mean^2 + R$se_mean^2))
            zs <- max(abs(M$sd - R$sd) / sqrt(M$se_sd^2 + R$se_sd^2))
            worst[[smp]] <- max(worst[[smp]], zm, zs)
            sprintf("%s%.1f, %.1f; %.2f-%.2f; %.1f s%s", if (max(zm, zs) > 4) "**" else "",
                    zm, zs, min(r), max(r), t, if (warned) "; warned" else "")
        }
        if (inherits(fit, "error")) worst[[smp]] <- Inf
        cells[[nm]][[smp]] <- cell
        cat(sprintf("%-14s %-7s %s\n", nm, smp, cell))
    }
}
md <- c("# Every sampler at its defaults on small data sets of R (bench/bench_small_defaults.R)", "",
        sprintf("%s; R %s; BLAS %s; `R_LIBS=<lib> Rscript bench/bench_small_defaults.R`.",
                format(Sys.time(), "%Y-%m-%d %H:%M"), getRversion(), extSoftVersion()[["BLAS"]]), "",
        "Each cell: the largest |z| of the means and of the sds over the parameters (the difference from the reference over both Monte Carlo standard errors; ** marks a cell beyond 4); the range of sd / sd_hmc; seconds of the whole call (a shared machine); whether it warned.  Reference: hmc(n_iter = 20000).", "",
        paste0("| data | ", paste(samplers, collapse = " | "), " |"),
        paste0("|---|", paste(rep("---", length(samplers)), collapse = "|"), "|"),
        vapply(names(cells), function(nm)
            paste0("| ", nm, " | ", paste(unlist(cells[[nm]][samplers]), collapse = " | "), " |"), ""),
        paste0("| **largest \\|z\\|** | ",
               paste(sprintf("%.1f", unlist(worst[samplers])), collapse = " | "), " |"))
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
writeLines(md, file.path(out_dir, "small-defaults.md"))
cat(md, sep = "\n")
