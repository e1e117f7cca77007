## From chain results to the value: a coda mcmc / mcmc.list of class sgfit
## whose bookkeeping lives in attr(, "sgfit").
##
## res[[k]] is chain k's result, or NULL if it did not run (interrupted
## before it started).  previous[[k]] holds chain k's earlier draws (original
## scale) when continuing.  Chains of unequal length (after an interrupt) are
## shown up to their common length; the rest is kept in info$surplus, so that
## every chain's draws stay aligned with its saved state.  `checks = FALSE`
## leaves the check of where the draws sit to the caller (a run still
## growing, see grow_run()).
new_sgfit <- function(info, res, previous = NULL, first = NULL, checks = TRUE) {
    K <- length(res)
    ran <- !vapply(res, is.null, NA)
    if (is.null(previous)) previous <- vector("list", K)
    kept <- monitored_design(info$design, info$spec$monitor)
    draws <- lapply(seq_len(K), function(k) {
        if (!ran[k]) return(previous[[k]])
        n_par <- length(kept$par_names)
        d <- to_original(res[[k]]$draws[, seq_len(n_par), drop = FALSE], kept)
        colnames(d) <- kept$par_names
        if (!is.null(info$random)) {   # (the groups' sds and correlations, and effects if kept)
            extra <- res[[k]]$draws[, -seq_len(n_par), drop = FALSE] *
                rep(info$random$scale, each = nrow(d))
            colnames(extra) <- info$random$names
            d <- cbind(d, extra)
        }
        rbind(previous[[k]], d)
    })
    info <- add_predictive(info, res)
    ## (a chain that did not run keeps its state: its start in a new fit)
    before <- if (is.null(info$states)) info$starts else info$states
    states <- lapply(seq_len(K), function(k)
        if (ran[k]) res[[k]][c("theta", "iter", "sstate", "seed", if (!is.null(res[[k]]$z)) "z",
                               if (!is.null(res[[k]]$starts)) "starts",
                               if (!is.null(res[[k]]$hyper)) "hyper",
                               if (!is.null(res[[k]]$ranef)) "ranef")]
        else before[[k]])
    div <- vapply(seq_len(K), function(k) if (ran[k]) res[[k]]$diverged else 0, 0)
    ## an interrupt stopped a chain, or kept one without draws from starting
    interrupted <- any(vapply(res[ran], function(r) isTRUE(r$interrupted), NA)) ||
        any(!ran & vapply(previous, is.null, NA))
    info$elapsed <- info$elapsed + sum(vapply(res[ran], `[[`, 0, "elapsed"))
    info$eps <- vapply(seq_len(K), function(k) if (ran[k]) res[[k]]$eps else NA_real_, 0)
    info$clipped <- sum(info$clipped, vapply(res[ran], function(r) sum(r$clipped), 0))
    for (r in res[ran]) if (length(r$grad_sq))
        info$grad_sq <- if (is.null(info$grad_sq)) r$grad_sq else info$grad_sq + r$grad_sq

    keep <- vapply(draws, NROW, 0L) > 0L
    ## chains without draws (an interrupt came before they started or kept
    ## one) wait in info$waiting, with their states, for update() to run
    info$waiting <- if (!all(keep)) states[!keep]
    value <- if (any(keep)) coda_value(info, draws[keep], states[keep], first)
    if (any(div > 0)) stop(divergence_error(info, res, div, value))
    if (is.null(value))
        stop("no draws were kept", if (interrupted) " before the interrupt", call. = FALSE)
    if (interrupted)
        warning(sprintf("interrupted: returning the %d draws per chain kept so far%s",
                        coda::niter(value), if (sum(keep) < K)
                            sprintf(paste0(" from %d of %d chains; update(fit, n_iter = ) first ",
                                           "runs the other %d up to them, then continues all"),
                                    sum(keep), K, K - sum(keep)) else ""),
                call. = FALSE)
    if (checks) value <- check_draws(value)
    value
}

## the post-fit check of where the draws sit, its time recorded
## (info$check_seconds)
check_draws <- function(value) {
    t0 <- proc.time()[["elapsed"]]
    info <- sgfit_info(value)
    ## (a mixed model's fixed effects have no mode of their own to compare)
    far <- is.null(info$random) && warn_far_draws(info, value)
    if (!far) warn_unmixed(info)
    warn_stuck_chains(info)
    info$check_seconds <- proc.time()[["elapsed"]] - t0
    attr(value, "sgfit") <- info
    value
}

## MALA and HMC: warns when no proposal after burn-in was accepted (the
## draws are all the same point), or when some chain accepted fewer than a
## fifth of its target rate (the step adapted during burn-in is too large
## where the chain is now: its draws are nearly stuck)
warn_stuck_chains <- function(info) {
    if (!sampler_kind(info$method)$metropolis) return(invisible())
    hint <- if (isFALSE(info$settings$adapt)) " or adapt = TRUE" else " or a longer burnin"
    rate <- acceptance_rate(info)
    if (identical(rate, 0)) {
        warning(sprintf(paste0("%s accepted no proposal after burn-in: every draw is the same point; ",
                               "try a smaller stepsize%s"), toupper(info$method), hint),
                call. = FALSE)
        return(invisible())
    }
    target <- info$settings$target_accept
    rates <- chain_acceptance_rates(info)
    low <- which(rates < target / 5)
    if (length(low) && !is.null(target))
        warning(sprintf(paste0("%s accepted %s of its proposals after burn-in (chain%s %s; the ",
                               "target is %g): its draws are nearly stuck; try a smaller stepsize%s"),
                        toupper(info$method),
                        paste(sprintf("%.1f %%", 100 * rates[low]), collapse = ", "),
                        if (length(low) > 1L) "s" else "", paste(low, collapse = ", "), target, hint),
                call. = FALSE)
    invisible()
}

## A run whose length the chains set (n_iter = NULL) and that stopped
## short of its target (the time budget, a projection past it, a stalled
## effective sample size, the most extensions) warns when its draws are
## not usable as they are: some parameter's bulk effective sample size
## below 100 or R-hat above 1.05 (the limits at which rstan warns), as the
## last stage measured them.  (A fixed n_iter gets what was asked for; its
## print() says how well it mixed.)
warn_unmixed <- function(info) {
    rl <- info$run_length
    if (is.null(rl) || !(rl$stop %in% c("time", "projected", "stalled", "stages")))
        return(invisible(FALSE))
    last <- rl$stages[nrow(rl$stages), ]
    ess <- last$min_ess
    rhat <- last$max_rhat
    if (!is.finite(ess) || !(ess < 100 || isTRUE(rhat > 1.05))) return(invisible(FALSE))
    why <- switch(rl$stop,
                  time = sprintf("the time budget (max_time = %.3g s) ran out", rl$max_time),
                  projected = sprintf("at this pace %g effective draws would take about %.3g s, far more than max_time = %.3g s",
                                      rl$target, last$needed, rl$max_time),
                  stalled = "the effective sample size stopped growing",
                  stages = "the run reached its most extensions")
    D <- length(info$states[[1L]]$theta)
    warning(sprintf(paste0(
        "the chains have not mixed: after %s iterations the smallest bulk effective sample size ",
        "%sis %.0f and the largest R-hat %.3g (%g and %.2f were aimed for; %s): means, sds and ",
        "intervals from these draws are unreliable; give the run more time (max_time =)%s"),
        big_count(last$n_iter),
        if (!is.null(info$design$network)) sprintf("(of %s) ", judged_label(info)) else "",
        ess, rhat, rl$target, rl$target_rhat, why,
        faster_samplers_hint(info, D, ", or use ")), call. = FALSE)
    invisible(TRUE)
}

## warns when the draws sit far below the posterior's mode, or far closer
## to it than draws of the posterior would (mode_gap()); returns whether it
## warned
warn_far_draws <- function(info, value) {
    gap <- draws_mode_gap(info, value)
    if (is.null(gap) || !is.finite(gap$gap)) return(invisible(FALSE))
    if (gap$gap > gap$limit)
        warning(sprintf(paste0(
            "the draws are far from the posterior's mass: log density %.3g below the mode ",
            "on average (about %.3g expected): the chain has not converged or the sampler is ",
            "biased here; %s"), gap$gap, gap$expected,
            remedy_hint(info)), call. = FALSE)
    else if (gap$gap < gap$lower)
        warning(sprintf(paste0(
            "the draws are bunched near the posterior's mode: log density %.3g below it on ",
            "average, where draws of the posterior (%d parameters) would be about %.3g below: ",
            "the chain%s not explored the posterior yet (on large problems %s at the mode), and ",
            "the intervals are too narrow; %s"),
            gap$gap, gap$D, gap$expected,
            if (isTRUE(info$chains > 1L)) "s have" else " has",
            if (isTRUE(info$chains > 1L)) "they start" else "it starts", bunched_hint(info, gap$D)),
            call. = FALSE)
    else return(invisible(FALSE))
    invisible(TRUE)
}

## what to do about chains that have hardly moved: more iterations, and on
## large data a sampler that mixes faster
bunched_hint <- function(info, D) {
    longer <- if (is.null(info$run_length))
        "continue the chains with update(fit, n_iter =), or leave n_iter unset to let their effective sample size set the run length"
    else sprintf("give the run more time than max_time = %.3g s", info$run_length$max_time)
    paste0(longer, faster_samplers_hint(info, D, "; or use "))
}

## for a sampler that mixes slowly on large data (its kind's slow_mixing),
## `lead` and the samplers that mix faster there, for D parameters (OSGFS
## keeps D x D matrices: only up to dense_limit); else ""
faster_samplers_hint <- function(info, D, lead) {
    ## (control variates and a mode's metric do not carry over to networks;
    ## of the control-variate samplers only sgldcv() fits random effects)
    if (!sampler_kind(info$method)$slow_mixing || !is.null(info$design$network) ||
        isTRUE(info$settings$control_variates)) return("")
    paste0(lead, if (D <= dense_limit && is.null(info$random)) "sgldcv() or osgfs(), which mix"
                 else "sgldcv(), which mixes", " far faster on large data")
}

## mode_gap() where it is meaningful: not for networks (multimodal); for a
## custom model only if its functions can be evaluated wherever the mode
## search goes (an error there skips the check, which is advisory)
draws_mode_gap <- function(info, value) {
    ## (a horseshoe's posterior in its coordinates is far from Gaussian)
    if (!is.null(info$design$network) || !is.null(info$design$hs)) return(list(gap = NA))
    if (is.null(info$design$custom)) return(mode_gap(value))
    tryCatch(mode_gap(value), error = function(e) list(gap = NA))
}

coda_value <- function(info, draws, states, first) {
    n_rows <- min(vapply(draws, nrow, 0L))
    surplus <- lapply(draws, function(d) d[-seq_len(n_rows), , drop = FALSE])
    info$surplus <- if (any(vapply(surplus, nrow, 0L) > 0L)) surplus
    info$states <- states
    info$chains <- length(draws)
    iters <- vapply(states, `[[`, 0, "iter")
    info$n_iter <- max(iters)
    counter <- info$evals_counter
    info$grad_evals <- if (is.null(counter)) sum(iters) * info$evals_per_iter
                       else counter$per * sum(vapply(states, function(s)
                           state_parts(info, s)[[counter$part]], 0))
    if (is.null(first)) first <- info$spec$burnin + info$spec$thin
    chains <- lapply(draws, function(d)
        coda::mcmc(d[seq_len(n_rows), , drop = FALSE], start = first, thin = info$spec$thin))
    if (length(chains) == 1L) {
        out <- chains[[1L]]
        class(out) <- c("sgfit", "mcmc")
    } else {
        out <- coda::mcmc.list(chains)
        class(out) <- c("sgfit", "mcmc.list")
    }
    attr(out, "sgfit") <- info
    out
}

## every chain's draws (original scale), including those beyond the common
## length shown by the value
chain_draws <- function(object) {
    view <- if (inherits(object, "mcmc.list")) lapply(unclass(object), all_draws)
            else list(all_draws(object))
    surplus <- sgfit_info(object)$surplus
    if (is.null(surplus)) view else Map(rbind, view, surplus)
}

divergence_error <- function(info, res, div, partial) {
    k <- which(div > 0)[1L]
    structure(class = c("sgfs_divergence", "error", "condition"), list(
        message = sprintf(
            "chain %d diverged at iteration %.0f (non-finite parameters, parameters 1e12 prior scales from the prior's location, or a failed update): %s%s",
            k, div[k], paste0(divergence_hint(info, res[[k]]$eps),
                              if (!is.null(info$design$custom))
                                  ", or the custom model's score is not finite there"),
            if (is.null(partial)) "" else "; the draws kept before it are in the condition's $partial"),
        call = NULL, iteration = div[k], chain = k, partial = partial))
}
