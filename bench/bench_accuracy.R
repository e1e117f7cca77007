#!/usr/bin/env Rscript
## bench/bench_accuracy.R - every sampler at its defaults against full-data
## HMC and MALA, on two logistic regressions:
##
##   pima       MASS::Pima.tr + Pima.te (N = 532, D = 8), type ~ .
##   simulated  N = 100,000, D = 20 (intercept + 19 correlated N(0, 1)
##              predictors, pairwise correlation 0.3), fixed seed
##
##   Rscript bench/bench_accuracy.R [--quick] [--out=DIR]
##
## The reference is hmc() (two chains of 20,000 draws after burn-in);
## mala() (two chains of 34,000) must agree with it (E1 <= 0.02, E2 <= 0.10, Ahn et al.'s relative
## errors of the mean and covariance, ALGORITHMS.md 4.1).  Every stochastic
## gradient sampler then runs with its defaults (one chain; n_iter = NULL:
## 10,000 iterations, extended by the factor the effective sample size
## projects, thinned to at most 9,000 kept draws, until every parameter has
## 400 bulk effective draws, within max_time = 300 s; batch N/100 clamped to
## [100, 500]; metric = "mode" where the sampler has one, and SGLD once more
## with the paper's rule, metric = "identity") and the table reports E1 and
## E2 against HMC, the run length and thin the chain chose, the smallest
## bulk effective sample size, the largest split R-hat, why the run stopped,
## and wall time (set-up included).  Results go to DIR/accuracy.csv and
## .md (DIR = bench/results/ by default; tempdir() with --quick).

suppressPackageStartupMessages(library(sgfs))

args <- commandArgs(trailingOnly = TRUE)
quick <- "--quick" %in% args
out_dir <- sub("^--out=", "", grep("^--out=", args, value = TRUE))
if (!length(out_dir)) out_dir <- if (quick) tempdir() else file.path("bench", "results")

problems <- list(
    pima = function() {
        data(Pima.tr, package = "MASS", envir = environment())
        data(Pima.te, package = "MASS", envir = environment())
        list(formula = type ~ ., data = rbind(Pima.tr, Pima.te))
    },
    simulated = function() {
        set.seed(20261122)
        N <- if (quick) 20000 else 100000
        P <- 19
        L <- chol(0.7 * diag(P) + 0.3)
        x <- matrix(rnorm(N * P), N) %*% L
        colnames(x) <- paste0("x", seq_len(P))
        beta <- c(-0.5, rnorm(P, sd = 0.4))
        y <- rbinom(N, 1, plogis(drop(cbind(1, x) %*% beta)))
        list(formula = y ~ ., data = data.frame(x, y = y))
    })

samplers <- list(
    `SGFS-f` = function(f, d) sgfs(f, data = d, progress = FALSE),
    `SGFS-d` = function(f, d) sgfs(f, data = d, preconditioner = "diagonal", progress = FALSE),
    SGLD = function(f, d) sgld(f, data = d, progress = FALSE),
    `SGLD (identity)` = function(f, d) sgld(f, data = d, metric = "identity", progress = FALSE),
    `SGLD-CV` = function(f, d) sgldcv(f, data = d, progress = FALSE),
    pSGLD = function(f, d) psgld(f, data = d, progress = FALSE),
    SGHMC = function(f, d) sghmc(f, data = d, progress = FALSE),
    SGNHT = function(f, d) sgnht(f, data = d, progress = FALSE),
    `I-SGD` = function(f, d) isgd(f, data = d, progress = FALSE),
    OSGFS = function(f, d) osgfs(f, data = d, progress = FALSE),
    `OSGFS max` = function(f, d) osgfs(f, data = d, stepsize = "max", progress = FALSE),
    `MALA (default)` = function(f, d) mala(f, data = d, progress = FALSE))

row_for <- function(problem, name, fit, seconds, ref) {
    if (inherits(fit, "error"))
        return(data.frame(problem = problem, sampler = name, E1 = NA, E2 = NA,
                          n_iter = NA, thin = NA, min_ess = NA, max_rhat = NA,
                          seconds = seconds, note = conditionMessage(fit)))
    e <- rel_error(fit, coef(ref), vcov(ref))
    conv <- sgfs:::convergence_table(sgfs:::chain_draws(fit))
    info <- attr(fit, "sgfit")
    rl <- info$run_length
    data.frame(problem = problem, sampler = name, E1 = e[["E1"]], E2 = e[["E2"]],
               n_iter = info$n_iter, thin = info$spec$thin,
               min_ess = min(conv$ess_bulk), max_rhat = max(conv$rhat),
               seconds = seconds,
               note = if (is.null(rl)) "" else rl$stop)
}

timed <- function(expr) {
    t0 <- proc.time()[["elapsed"]]
    fit <- tryCatch(suppressWarnings(expr), error = function(e) e)
    list(fit = fit, seconds = proc.time()[["elapsed"]] - t0)
}

rows <- list()
for (problem in names(problems)) {
    p <- problems[[problem]]()
    ## two chains each, in parallel: E2 between two long runs is dominated
    ## by Monte Carlo error (D = 20: two HMC runs of 20,000 draws differ by
    ## E2 ~ 0.10), so the reference needs ~40,000 HMC and ~70,000 MALA draws
    n_ref <- if (quick) 2000L else 20000L
    set.seed(1)
    ref <- timed(hmc(p$formula, data = p$data, n_iter = n_ref + 2000L, burnin = 2000L,
                     chains = 2, cores = 2, progress = FALSE))
    set.seed(2)
    mal <- timed(mala(p$formula, data = p$data, n_iter = as.integer(1.7 * n_ref) + 2000L,
                      burnin = 2000L, chains = 2, cores = 2, progress = FALSE))
    rows[[length(rows) + 1L]] <- row_for(problem, "HMC (reference)", ref$fit, ref$seconds, ref$fit)
    agree <- row_for(problem, "MALA (long) vs HMC", mal$fit, mal$seconds, ref$fit)
    agree$note <- sprintf("agreement: E1 %s 0.02, E2 %s 0.10",
                          if (agree$E1 <= 0.02) "<=" else ">", if (agree$E2 <= 0.10) "<=" else ">")
    rows[[length(rows) + 1L]] <- agree
    cat(sprintf("%s: HMC %.1f s, MALA %.1f s; MALA vs HMC E1 = %.4f, E2 = %.4f\n",
                problem, ref$seconds, mal$seconds, agree$E1, agree$E2))
    for (name in names(samplers)) {
        set.seed(3)
        r <- timed(samplers[[name]](p$formula, p$data))
        rows[[length(rows) + 1L]] <- row_for(problem, name, r$fit, r$seconds, ref$fit)
        cat(sprintf("  %-15s E1 %.4f E2 %.4f n_iter %.0f thin %.0f ESS %.0f R-hat %.3f  %.1f s %s\n",
                    name, rows[[length(rows)]]$E1, rows[[length(rows)]]$E2,
                    rows[[length(rows)]]$n_iter, rows[[length(rows)]]$thin,
                    rows[[length(rows)]]$min_ess, rows[[length(rows)]]$max_rhat, r$seconds,
                    rows[[length(rows)]]$note))
    }
}
tab <- do.call(rbind, rows)
print(tab, digits = 3, row.names = FALSE)

blas <- sub(".*/", "", extSoftVersion()[["BLAS"]])
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
csv <- file.path(out_dir, "accuracy.csv")
md <- file.path(out_dir, "accuracy.md")
utils::write.csv(tab, csv, row.names = FALSE)
fmt <- function(x, d) ifelse(is.na(x), "-", formatC(x, digits = d, format = "f"))
lines <- c("# Accuracy of every sampler at its defaults (bench/bench_accuracy.R)", "",
           sprintf("%s; R %s; BLAS %s; %s.", format(Sys.time(), "%Y-%m-%d"),
                   getRversion(), if (nzchar(blas)) blas else "reference", if (quick) "QUICK run" else "full run"),
           paste("E1, E2 against hmc(); n_iter and thin as the default run (n_iter = NULL) chose them",
                 "(the references: as given); ESS = smallest bulk effective sample size,",
                 "R-hat = largest rank-normalised split R-hat (one chain: its halves);",
                 "seconds include set-up; note = why the default run stopped."), "",
           "| problem | sampler | E1 | E2 | n_iter | thin | ESS | R-hat | seconds | note |",
           "|---|---|---|---|---|---|---|---|---|---|",
           sprintf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |", tab$problem, tab$sampler,
                   fmt(tab$E1, 4), fmt(tab$E2, 3),
                   ifelse(is.na(tab$n_iter), "-", format(tab$n_iter, big.mark = ",", scientific = FALSE, trim = TRUE)),
                   fmt(tab$thin, 0), fmt(tab$min_ess, 0), fmt(tab$max_rhat, 3),
                   fmt(tab$seconds, 1), tab$note))
writeLines(lines, md)
cat("written:", csv, md, "\n")
