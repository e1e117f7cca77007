## The cost of a mixed model's random effects in the engine (issue 38: an
## iteration's cost independent of N and of the number of groups): a
## simulated logistic model with random intercepts, N rows in G groups of
## very unequal sizes (a group's size drawn from a lognormal), run through
## the engine's part (src/ranef_engine.c) from a fixed-effects fit's spec,
## against the same chain without random effects, side by side.  Per
## iteration: the SGLD step on a minibatch of 100 rows, then groups until
## 100 rows are spent, the sd's update, and at each sweep's end (about an
## epoch) the translation and the scale move, one pass each over the rows.
##
##   R_LIBS=/tmp/benchlib OPENBLAS_NUM_THREADS=1 Rscript bench/bench_mixed_engine.R
##
## Writes bench/results/mixed-engine.md.

suppressPackageStartupMessages(library(sgfs))
out_dir <- file.path(if (dir.exists("bench")) "bench" else ".", "results")
n_iter <- 20000L

one_case <- function(N, G, seed) {
    set.seed(seed)
    size <- stats::rlnorm(G, 0, 1.2)
    g <- sample.int(G, N, replace = TRUE, prob = size / sum(size))
    x <- stats::rnorm(N)
    u <- stats::rnorm(G, 0, 0.8)
    y <- stats::rbinom(N, 1, stats::plogis(-0.5 + x + u[g]))
    d <- data.frame(y, x, g = factor(g))
    fit <- sgld(y ~ x, d, n_iter = 20, batch_size = 100L, progress = FALSE)
    info <- attr(fit, "sgfit")
    spec <- sgfs:::fit_spec(info)
    spec$burnin <- n_iter
    spec$thin <- 1L
    terms <- sgfs:::random_design(sgfs:::random_bars(y ~ x + (1 | g)), d)
    D <- length(info$states[[1L]]$theta)
    mixed <- spec
    mixed$ranef <- sgfs:::ranef_engine_spec(terms, D, list(family = "half_normal", scale = 1),
                                            list(diag(D)[, 1L, drop = FALSE]), order = spec$order)
    time_of <- function(s) {
        t0 <- proc.time()[["elapsed"]]
        res <- sgfs:::run_chain(s, info$states[[1L]], n_iter, FALSE)
        list(seconds = proc.time()[["elapsed"]] - t0, res = res)
    }
    fixed <- time_of(spec)
    both <- time_of(mixed)
    data.frame(N = N, groups = length(terms[[1L]]$levels),
               largest = max(tabulate(terms[[1L]]$group)),
               singletons = sum(tabulate(terms[[1L]]$group) == 1L),
               fixed_us = 1e6 * fixed$seconds / n_iter, mixed_us = 1e6 * both$seconds / n_iter,
               ratio = both$seconds / fixed$seconds,
               sweeps = n_iter * 100 / N, acceptance = both$res$ranef$acceptance)
}

cases <- expand.grid(N = c(1e5, 1e6), G = c(1e3, 1e4))
tab <- do.call(rbind, lapply(seq_len(nrow(cases)), function(k)
    one_case(cases$N[k], cases$G[k], seed = k)))
print(tab)
md <- c("# A mixed model's random effects in the engine: cost per iteration (bench/bench_mixed_engine.R)", "",
        sprintf("Logistic, random intercepts (1 | g), groups' sizes lognormal (sd 1.2 on the log scale); %d iterations of sgld() at batch 100 from a fixed-effects fit's spec, with and without the random-effect part (src/ranef_engine.c), one after the other in one run. BLAS: %s.", n_iter, sgfs:::blas_label()), "",
        "| rows | groups | largest group | groups of one row | fixed effects alone (us / iteration) | with random effects (us / iteration) | ratio | sweeps of the groups | acceptance |",
        "|---|---|---|---|---|---|---|---|---|",
        sprintf("| %.0e | %d | %d | %d | %.1f | %.1f | %.2f | %.1f | %.3f |", tab$N, tab$groups, tab$largest,
                tab$singletons, tab$fixed_us, tab$mixed_us, tab$ratio, tab$sweeps, tab$acceptance))
writeLines(md, file.path(out_dir, "mixed-engine.md"))
