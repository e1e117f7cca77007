## lme4::InstEval (issue 38): 73,421 ratings (1 to 5) of 1,128 lecturers (d)
## by 2,972 students (s), crossed, with the lecturers' 14 departments;
## y ~ service + (1 | s) + (1 | d) + (1 | dept), gaussian, sgldcv() at its
## defaults against lmer()'s REML fit (at 73,421 rows the posterior
## concentrates at the likelihood's maximum: the fixed effects, group sds
## and sigma must sit within a few posterior sds of lmer's), and NUTS's
## cost from a short stan_lmer() run (1 chain, NUTS_ITER iterations, half
## warm-up), extrapolated to 4 chains of 2,000.
##
##   R_LIBS=/tmp/benchlib OPENBLAS_NUM_THREADS=1 Rscript bench/bench_mixed_insteval.R [NUTS_ITER]
##
## Writes bench/results/mixed-insteval.md.

suppressPackageStartupMessages(library(sgfs))
args <- commandArgs(TRUE)
nuts_iter <- if (length(args)) as.integer(args[1]) else 0L
out_dir <- file.path(if (dir.exists("bench")) "bench" else ".", "results")
data(InstEval, package = "lme4")
ie <- InstEval
ie$y <- as.numeric(ie$y)
formula <- y ~ service + (1 | s) + (1 | d) + (1 | dept)

t0 <- proc.time()[["elapsed"]]
ref <- lme4::lmer(formula, data = ie)
t_lmer <- proc.time()[["elapsed"]] - t0

t0 <- proc.time()[["elapsed"]]
fit <- withr::with_seed(1, sgldcv(formula, ie, family = gaussian(), progress = FALSE))
t_ours <- proc.time()[["elapsed"]] - t0
info <- attr(fit, "sgfit")
m <- as.matrix(fit)
vc <- as.data.frame(lme4::VarCorr(ref))
ref_values <- c(lme4::fixef(ref),
                log_sigma = log(vc$sdcor[vc$grp == "Residual"]),
                stats::setNames(vc$sdcor[vc$grp != "Residual"],
                                sprintf("sd[(Intercept) | %s]", vc$grp[vc$grp != "Residual"])))
main <- names(ref_values)
tab <- data.frame(parameter = main, mean = colMeans(m[, main]), sd = apply(m[, main], 2, stats::sd),
                  lmer = unname(ref_values))
tab$error_sd <- (tab$mean - tab$lmer) / tab$sd
tab$ess <- vapply(main, function(p) posterior::ess_bulk(m[, p]), 0)
tab$rhat <- vapply(main, function(p) posterior::rhat(m[, p]), 0)
print(tab)

nuts <- NULL
if (nuts_iter > 0L) {
    t0 <- proc.time()[["elapsed"]]
    ok <- tryCatch({
        suppressPackageStartupMessages(library(rstanarm))   # (stan_lmer() calls stan_glmer())
        suppressWarnings(stan_lmer(formula, data = ie, chains = 1, iter = nuts_iter,
                                   refresh = 0, seed = 1))
        TRUE
    }, error = function(e) {
        message("stan_lmer() failed: ", conditionMessage(e))
        FALSE
    })
    nuts <- if (ok) proc.time()[["elapsed"]] - t0
}

md <- c("# lme4::InstEval at sgldcv()'s defaults against lmer() (bench/bench_mixed_insteval.R)", "",
        sprintf("y ~ service + (1 | s) + (1 | d) + (1 | dept), gaussian: %s rows, %d students, %d lecturers, %d departments.  One run, one core; BLAS %s.",
                format(nrow(ie), big.mark = ","), nlevels(ie$s), nlevels(ie$d), nlevels(ie$dept),
                sgfs:::blas_label()), "",
        sprintf("lmer() (lme4 %s, REML): %.1f s.  sgldcv() at its defaults: %.1f s, %s iterations, %d kept draws; its run stopped: %s.%s",
                utils::packageVersion("lme4"), t_lmer, t_ours, format(info$n_iter, big.mark = ","),
                nrow(m), info$run_length$stop,
                if (is.null(nuts)) "" else sprintf("  stan_lmer() (rstanarm %s, NUTS), 1 chain of %d iterations: %.0f s, so 4 chains of 2,000 about %.0f s on one core.",
                                                   utils::packageVersion("rstanarm"), nuts_iter, nuts,
                                                   nuts * 4 * 2000 / nuts_iter)), "",
        "error / sd: the posterior mean minus lmer's estimate, in posterior sds (log_sigma: lmer's residual sd's log).", "",
        "| parameter | posterior mean | posterior sd | lmer | error / sd | bulk ESS | split R-hat |",
        "|---|---:|---:|---:|---:|---:|---:|",
        sprintf("| %s | %.4f | %.4f | %.4f | %+.2f | %.0f | %.4f |", tab$parameter, tab$mean, tab$sd,
                tab$lmer, tab$error_sd, tab$ess, tab$rhat))
writeLines(md, file.path(out_dir, "mixed-insteval.md"))
