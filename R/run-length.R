## n_iter = NULL: a run long enough for the chains at hand, within a time
## budget.
##
## A stochastic gradient chain's autocorrelation time is not known before it
## runs: it grows with N/n, with the posterior's condition number (unless
## the sampler runs in the metric of the mode) and, for SGLD-type samplers,
## with the inverse of the (bias-limited) step.  So the default run starts
## with `first_run` iterations and doubles its post-burn-in length, thinning
## the kept draws by 2 each time (about 9,000 are kept per chain whatever
## the length), until every parameter has `enough_ess` bulk effective draws
## over all chains (rank-normalised, Vehtari et al. 2021; R/convergence.R)
## and, with several chains, split R-hat at most `enough_rhat`.  It stops
## before a doubling whose projected wall time (the time per iteration
## measured so far) would pass `max_time`, after `max_doublings`, early when
## the target, projected at the pace so far (ESS in proportion to the run
## length), would be reached only after 10 times `max_time`, and when three doublings
## raised the smallest effective sample size by less than twice (a chain
## that does not mix: more of it will not help).  Each
## doubling continues the chains exactly (as update() does), so the result
## equals one run with the final n_iter and thin.  The first run itself is
## shortened (to no fewer than `min_first` iterations) when a probe of
## a few iterations shows that it would take more than `first_share`
## of `max_time` (full-data MALA or HMC at N = 1e6, SGFS-f with many
## parameters), so that at least one doubling fits in the budget.

## SGLD-CV's step in the metric of the mode, tuned to its gradient noise.
## The LM noise makes the step's own bias vanish on a Gaussian posterior, and
## what remains is the minibatch noise's: (eps / 4) V per coordinate, V the
## variance of the whitened gradient's noise.  At stationarity the whitened
## gradient's mean square is m = E[curvature] + V, about 1 + V (the
## engine's grad_sq), so the step that keeps the noise's variance
## inflation at 5 % is 0.2 / (m - 1).  Rare one-hot levels and walls make V
## large in a few directions (Covertype's soil factor: m = 5 at step 0.2):
## a pilot of `pilot_iter` iterations per chain from the starts, on copies
## with the caller's RNG state restored after (the run then equals one with
## the chosen step), measures m, and the step becomes
## min(eps, 0.2 / (max m - 1)).
pilot_iter <- 1000L
pilot_step <- function(spec, states, run, eps) {
    user <- if (exists(".Random.seed", envir = globalenv(), inherits = FALSE)) get_seed()
    on.exit(if (is.null(user)) rm(".Random.seed", envir = globalenv()) else set_seed(user))
    pilot <- spec
    pilot$burnin <- 0L
    pilot$thin <- pilot_iter
    res <- run_chains(pilot, states, pilot_iter, FALSE, run$cores)
    done <- Filter(function(r) !is.null(r) && length(r$grad_sq), res)
    if (!length(done)) return(list(step = eps, energy = NA_real_, iterations = 0L))
    m <- Reduce(`+`, lapply(done, `[[`, "grad_sq")) / (pilot_iter * length(done))
    energy <- max(m)
    list(step = min(eps, 0.2 / max(energy - 1, 1e-12)), energy = energy,
         iterations = pilot_iter, first_step = eps)
}

## The first run's length: run$n_iter, or fewer when one chain's probe
## (`probe_iter` iterations from the first start, 4 times more until they
## take `probe_seconds`, on a copy, with the caller's RNG state restored
## after) projects the chains' first run, at
## min(chains, cores) at a time, past `first_share` of run$max_time.
first_stage_length <- function(spec, states, run) {
    if (!is.finite(run$max_time)) return(run$n_iter)
    user <- if (exists(".Random.seed", envir = globalenv(), inherits = FALSE)) get_seed()
    on.exit(if (is.null(user)) rm(".Random.seed", envir = globalenv()) else set_seed(user))
    ## 10, 40, 160, ... iterations until they take a measurable time
    k <- probe_iter
    repeat {
        if (!is.null(states[[1L]]$seed)) set_seed(states[[1L]]$seed)
        probe <- run_chain(spec, states[[1L]], k, FALSE)
        if (probe$elapsed >= probe_seconds || 4L * k > run$n_iter %/% 10L) break
        k <- 4L * k
    }
    waves <- ceiling(run$chains / min(run$cores, run$chains))
    pace <- waves * probe$elapsed / k
    budget <- first_share * run$max_time
    if (pace * run$n_iter <= budget) return(run$n_iter)
    as.integer(max(min_first, min(run$n_iter, floor(budget / pace))))
}

first_run <- 10000L
probe_iter <- 10L
probe_seconds <- 0.02
first_share <- 0.25
min_first <- 50L
enough_ess <- 400
enough_rhat <- 1.01
max_doublings <- 9L
hopeless <- 10

## Grows `fit` (the first run of run$chains chains, begun at `started`,
## proc.time()'s elapsed seconds) until its chains mix, the time budget
## run$max_time is spent or the effective sample size stops growing;
## records the stages in info$run_length and makes the check deferred from
## the stages (new_sgfit(checks = FALSE)) on the final draws.
grow_run <- function(fit, run, started, doublings = max_doublings) {
    expected <- sgfit_info(fit)$n_iter
    say <- function(...) if (run$verbose) message(sprintf(...))
    stages <- data.frame(n_iter = expected, thin = sgfit_info(fit)$thin, min_ess = NA_real_,
                         max_rhat = NA_real_, seconds = NA_real_, needed = NA_real_)
    stop_reason <- "doublings"
    repeat {
        info <- sgfit_info(fit)
        k <- nrow(stages)
        spent <- proc.time()[["elapsed"]] - started
        stages$seconds[k] <- spent
        if (!run_complete(info, expected, run$chains)) {
            stop_reason <- "interrupted"
            break
        }
        conv <- convergence_summary(fit)
        stages$min_ess[k] <- conv$min_ess
        stages$max_rhat[k] <- conv$max_rhat
        label <- sprintf("%s: %s iterations x %d chain%s, %.3g s: bulk ESS >= %.0f, R-hat <= %.3f",
                         info$method, big_count(info$n_iter), run$chains,
                         if (run$chains > 1L) "s" else "", spent, conv$min_ess, conv$max_rhat)
        if (conv$min_ess >= enough_ess && !(conv$max_rhat > enough_rhat)) {
            stop_reason <- "mixed"
            say("%s: done", label)
            break
        }
        if (stalled(stages$min_ess[seq_len(k)])) {
            stop_reason <- "stalled"
            say("%s: the effective sample size stopped growing; stopping", label)
            break
        }
        post <- info$n_iter - info$burnin
        total <- info$burnin + 2 * post
        ## the next stage runs `post` more iterations per chain, at the pace
        ## of the stages so far
        pace <- (spent - info$setup_seconds) / info$n_iter
        projected <- spent + pace * post
        ## the time to the target if the ESS grows in proportion to the run;
        ## while the run is shorter than the chains' autocorrelation time the
        ## ESS estimates stay at a few and then grow faster than that, so the
        ## run stops on it only when even this is `hopeless` times the budget
        ## (else it spends the budget: more draws are better than fewer)
        needed <- info$setup_seconds + pace * info$n_iter * enough_ess / max(conv$min_ess, 1)
        stages$needed[k] <- needed
        if (k > doublings) break
        if (needed > hopeless * run$max_time && conv$min_ess < enough_ess) {
            stop_reason <- "projected"
            say("%s: at this pace %g bulk effective draws would take about %.3g s, far more than max_time = %.3g s; stopping",
                label, enough_ess, needed, run$max_time)
            break
        }
        if (projected > run$max_time) {
            stop_reason <- "time"
            say("%s: %s more iterations would take about %.3g s, past max_time = %.3g s; stopping",
                label, big_count(post), pace * post, run$max_time)
            break
        }
        say("%s; continuing to %s iterations (thin %d), about %.3g s more",
            label, big_count(total), 2L * info$thin, pace * post)
        fit <- continue_thinned(fit, post, run$progress)
        expected <- total
        stages <- rbind(stages, data.frame(n_iter = total, thin = 2L * info$thin,
                                           min_ess = NA_real_, max_rhat = NA_real_,
                                           seconds = NA_real_, needed = NA_real_))
    }
    info <- sgfit_info(fit)
    info$run_length <- list(target = enough_ess, target_rhat = enough_rhat, stages = stages,
                            stop = stop_reason, max_time = run$max_time)
    attr(fit, "sgfit") <- info
    check_draws(fit)
}

## A chain that does not mix: three doublings (8 times the run) gave less
## than twice the smallest effective sample size, which was already large
## enough (20) to be estimated.  (Small ESS estimates are noisy: one
## doubling can lower them by chance; and below a few, the run is shorter
## than the chains' autocorrelation time, where the projection to the
## target, not this rule, decides.)
stalled <- function(ess) {
    k <- length(ess)
    k >= 4L && ess[k] < enough_ess && ess[k - 3L] >= 20 && ess[k] < 2 * ess[k - 3L]
}

## the smallest bulk effective sample size (over all chains) and the
## largest split R-hat over the parameters
convergence_summary <- function(fit) {
    tab <- convergence_table(chain_draws(fit))
    list(min_ess = min(tab$ess_bulk, na.rm = TRUE), max_rhat = max(tab$rhat, na.rm = TRUE),
         table = tab)
}

big_count <- function(n) format(n, big.mark = ",", scientific = FALSE, trim = TRUE)

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
