## n_iter = NULL: a run long enough for the chain at hand.
##
## A stochastic gradient chain's autocorrelation time is not known before it
## runs: it grows with N/n, with the posterior's condition number and, for
## SGLD-type samplers, with the inverse of the (bias-limited) step.  On a
## 100,000-row logistic regression with batch 500 it is ~30,000 iterations
## for SGLD at its default step and ~400 for SGFS.  So the default run starts
## with `first_run` iterations and doubles its post-burn-in length, thinning
## the kept draws by 2 each time (about 9,000 are kept per chain whatever
## the length), until every parameter of every chain has `enough_ess`
## effective draws (coda's effectiveSize(), as the report) or the budget is
## spent.  Each doubling continues the chains exactly (as update() does), so
## the result equals one run with the final n_iter and thin.

first_run <- 10000L
enough_ess <- 100
max_doublings <- 9L
## gradient work (examples x parameters: one example's gradient costs about
## D multiply-adds in a GLM, a small multiple in a network) a default run may
## spend; SGLD at n = 500, D = 20 spends it in 4.6 million iterations, ~9
## minutes on this project's 2-core Xeon with reference BLAS
work_budget <- 5e10

## Grows `fit` (the first run of `chains` chains) until its chains mix or
## the budget is spent; records the stages in info$run_length and makes the
## check deferred from the stages (new_sgfit(checks = FALSE)) on the final
## draws.  The effective sample size (seconds for thousands of parameters)
## is computed only where it decides something: a stage the budget would
## not let grow keeps min_ess = NA, and the report computes it.
grow_run <- function(fit, progress, chains, budget = work_budget, doublings = max_doublings) {
    expected <- sgfit_info(fit)$n_iter
    stages <- data.frame(n_iter = expected, thin = sgfit_info(fit)$thin, min_ess = NA_real_)
    repeat {
        info <- sgfit_info(fit)
        post <- info$n_iter - info$burnin
        total <- info$burnin + 2 * post
        work <- total * info$evals_per_iter * length(info$states[[1L]]$theta)
        if (nrow(stages) > doublings || work > budget || !run_complete(info, expected, chains))
            break
        ess <- stages$min_ess[nrow(stages)] <- min_chain_ess(fit)
        if (ess >= enough_ess) break
        if (progress)
            message(sprintf("%.0f effective draws after %s iterations; continuing to %s (thin %d)",
                            ess, big_count(info$n_iter), big_count(total), 2L * info$thin))
        fit <- continue_thinned(fit, post, progress)
        expected <- total
        stages <- rbind(stages, data.frame(n_iter = total, thin = 2L * info$thin,
                                           min_ess = NA_real_))
    }
    info$run_length <- list(target = enough_ess, stages = stages)
    attr(fit, "sgfit") <- info
    check_draws(fit)
}

big_count <- function(n) format(n, big.mark = ",", scientific = FALSE, trim = TRUE)

## the smallest effective sample size over parameters and chains
min_chain_ess <- function(fit) {
    chains <- if (inherits(fit, "mcmc.list")) unclass(as_coda(fit)) else list(as_coda(fit))
    min(vapply(chains, function(ch) min(coda::effectiveSize(ch)), 0))
}

## every chain ran to the expected iteration (none was interrupted)
run_complete <- function(info, expected, chains) {
    iters <- vapply(info$states, `[[`, 0, "iter")
    is.null(info$surplus) && length(iters) == chains && all(iters == expected)
}

## keeps every other draw (those a run with twice the thin keeps) and
## continues every chain `n_iter` iterations with that thin
continue_thinned <- function(fit, n_iter, progress) {
    info <- sgfit_info(fit)
    thin <- 2L * info$thin
    draws <- lapply(chain_draws(fit), function(d) {
        iter <- info$burnin + info$thin * seq_len(nrow(d))
        d[(iter - info$burnin) %% thin == 0L, , drop = FALSE]
    })
    info$thin <- info$spec$thin <- thin
    res <- run_chains(info$spec, info$states, n_iter, progress, info$cores)
    new_sgfit(info, res, draws, info$burnin + thin, checks = FALSE)
}
