## n_iter = NULL: a run long enough for the chains at hand, within a time
## budget.
##
## A stochastic gradient chain's autocorrelation time is not known before it
## runs: it grows with N/n, with the posterior's condition number (unless
## the sampler runs in the metric of the mode) and, for SGLD-type samplers,
## with the inverse of the (bias-limited) step.  So the default run starts
## with `first_run` iterations and then extends its post-burn-in part, by
## the factor that the effective sample size so far projects (ESS in
## proportion to the run's length; R-hat - 1 in inverse proportion), times
## `margin`, within [`min_growth`, `max_growth`], or by 2 while the
## smallest ESS is below `min_projected` (the run is then still shorter
## than the chains' autocorrelation time and its ESS estimates say little),
## until every parameter has `enough_ess` bulk effective draws over all
## chains (rank-normalised, Vehtari et al. 2021; R/convergence.R) and, with
## several chains, split R-hat at most `enough_rhat`.  `thin` doubles as
## often as it takes to keep at most as many draws per chain as the first
## run kept (about 9,000).  A stage whose projected wall time (the time per
## iteration measured so far) would pass `max_time` is shortened to what
## the rest of the budget allows, and the run stops there (or before it,
## when that would add less than a quarter of the stage), after
## `max_stages` extensions, early when the target,
## projected at the pace so far, would be reached only after 10 times
## `max_time`, and when a run 8 times as long raised the smallest effective
## sample size by less than twice (a chain that does not mix: more of it
## will not help).  Each stage continues the chains exactly (as update()
## does), so the result equals one run with the final n_iter and thin.  The
## first run itself is shortened (to no fewer than `min_first` iterations)
## when a probe of a few iterations shows that it would take more than
## `first_share` of `max_time` (full-data MALA or HMC at N = 1e6, SGFS-f
## with many parameters), so that at least one extension fits in the
## budget.

## SGLD-CV's step in the metric of the mode, tuned to its gradient noise.
## The LM noise makes the step's own bias vanish on a Gaussian posterior, and
## what remains is the minibatch noise's: (eps / 4) V per coordinate, V the
## variance of the whitened gradient's noise.  At stationarity the whitened
## gradient's mean square is m = E[curvature] + V, about 1 + V (the
## engine's grad_sq), so the step that keeps the noise's variance
## inflation at 5 % is 0.2 / (m - 1).  Rare one-hot levels and walls make V
## large in a few directions (rare one-hot levels, wide sparse designs:
## m_j from 1 to 3,000 over 18,904 coordinates of a 2e5 x 18,903 logistic
## regression at step 0.0035, its median 26): a pilot of `pilot_iter`
## iterations per chain from the starts, on copies with the caller's RNG
## state restored after, measures each m_j, and each coordinate whose
## inflation eps (m_j - 1) / 4 would pass 5 % gets its own step 0.2 / (m_j
## - 1) by being slowed in the metric (slow_metric()); the others keep eps.
## (One step for all, min(eps, 0.2 / (max m - 1)), made the worst coordinate
## set every other's pace: on that regression 6.6e-5 for all, its chain's
## 90 % intervals covering 14 % of the true coefficients in 4,000
## iterations against 55 % now; on 150 levels of 20 rows in batches of 5,
## 2 coordinates slowed, the grown run (n_iter = NULL) 27 s instead of 40,
## as accurate against HMC.)  The same holds for sgld() (its step 0.2 / gamma
## assumes the scores' covariance is the curvature's, C = H / N; on
## overdispersed counts V is many times that) and, with `unit` = the SGLD
## step whose noise inflates the variance as much as one of its steps, for
## SGHMC: learning rate eta and friction alpha inject 2 eta alpha per step
## and the minibatch adds eta^2 V, an inflation of eta V / (2 alpha), SGLD's
## eps V / 4 at eps = 2 eta / alpha.
pilot_iter <- 1000L

## a spec for a run the fit does not keep (a pilot, a warm-up): its own
## burn-in and thinning, no predictive passes, every parameter's draws
pilot_spec <- function(spec, burnin, thin) {
    spec$burnin <- burnin
    spec$thin <- thin
    spec$pred_x <- spec$monitor <- NULL
    spec
}

pilot_step <- function(spec, states, run, eps, unit = 1) {
    user <- rng_snapshot()
    on.exit(rng_restore(user))
    res <- run_chains(pilot_spec(spec, 0L, pilot_iter), states, pilot_iter, FALSE, run$cores)
    done <- Filter(function(r) !is.null(r) && length(r$grad_sq), res)
    if (!length(done)) return(list(step = eps, energy = NA_real_, iterations = 0L))
    m <- Reduce(`+`, lapply(done, `[[`, "grad_sq")) / (pilot_iter * length(done))
    energy <- max(m)
    ## each coordinate's own step: eps where it keeps that coordinate's
    ## inflation within 5 %, else 0.2 / (m_j - 1), by slowing the
    ## coordinate in the metric (slow_metric()) by a factor slow_j
    ## at temperature T the whitened gradient's mean square is T + V and the
    ## injected noise T times as large: the inflation eps V / (4 T)
    v <- m / run$temperature - 1
    slow <- pmax(1, v * eps * unit / 0.2)
    list(step = eps, energy = energy, slow = slow, slowed = sum(slow > 1),
         slowest = eps / max(slow), inflation = eps * unit * max(v / slow, 0) / 4,
         iterations = pilot_iter, first_step = eps)
}

## The metric whose coordinate j moves with a step `slow_j` times smaller:
## z_j' = sqrt(slow_j) z_j, a row of a dense factor U (z = U theta) scaled,
## or for a diagonal one (z = C S theta) the scale S_j, which equals it
## where the low-rank part C leaves coordinate j alone
slow_metric <- function(metric, slow) {
    if (NROW(metric) != length(slow))
        stop("internal error: the pilot measured ", length(slow), " coordinates of a metric of ",
             NROW(metric), call. = FALSE)
    if (all(slow == 1)) return(metric)
    metric * sqrt(slow)
}

## The first run's length: run$n_iter, or fewer when one chain's probe
## (`probe_iter` iterations from the first start, 4 times more until they
## take `probe_seconds`, on a copy, with the caller's RNG state restored
## after) projects the chains' first run, at
## min(chains, cores) at a time, past `first_share` of run$max_time.
first_stage_length <- function(spec, states, run) {
    if (!is.finite(run$max_time)) return(run$n_iter)
    user <- rng_snapshot()
    on.exit(rng_restore(user))
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

## The first run of chains whose iterates are nearly fresh draws (sgfs() and
## osgfs() with control variates in minibatches, whose steps move about a
## posterior sd: 0.2 to 0.9 effective draws per iteration on a9a and Pima):
## fast_first_run iterations rather than first_run, a tenth of them burn-in
## unless `burnin` is given, so that the default run costs what such chains
## need, and grows from there as any other.
fast_first_run <- 2500L
fast_mixing_run <- function(run) {
    kept <- fast_first_run - fast_first_run %/% 10L
    if (!run$grow || run$spec$thin > kept) return(run)
    if (!run$user_burnin) run$spec$burnin <- fast_first_run %/% 10L
    run$n_iter <- as.integer(run$spec$burnin + kept)
    run
}
probe_iter <- 10L
probe_seconds <- 0.02
first_share <- 0.25
min_first <- 50L
enough_ess <- 400
enough_rhat <- 1.01
max_stages <- 9L
hopeless <- 10
margin <- 1.15
min_growth <- 1.2
max_growth <- 4
min_projected <- 20

## the factor by which the next stage multiplies the post-burn-in length
growth_factor <- function(min_ess, max_rhat) {
    if (!isTRUE(min_ess >= min_projected)) return(2)
    need <- margin * enough_ess / min_ess
    if (is.finite(max_rhat) && max_rhat > enough_rhat)
        need <- max(need, margin * (max_rhat - 1) / (enough_rhat - 1))
    min(max_growth, max(min_growth, need))
}

## the next stage's post-burn-in length and thin: `post` times the growth
## factor, with thin doubled until at most `kept` draws per chain are kept,
## rounded up to a multiple of that thin
next_stage <- function(post, thin, kept, factor) {
    total <- ceiling(post * factor)
    while (total / thin > kept) thin <- 2L * thin
    list(post = thin * ceiling(total / thin), thin = thin)
}

## Grows `fit` (the first run of run$chains chains, begun at `started`,
## proc.time()'s elapsed seconds) until its chains mix, the time budget
## run$max_time is spent or the effective sample size stops growing;
## records the stages in info$run_length and makes the check deferred from
## the stages (new_sgfit(checks = FALSE)) on the final draws.
grow_run <- function(fit, run, started, stages_max = max_stages) {
    first <- sgfit_info(fit)
    expected <- first$n_iter
    kept <- max(1, (first$n_iter - first$spec$burnin) %/% first$spec$thin)   # draws per chain, at most
    say <- function(...) if (run$verbose) message(sprintf(...))
    stages <- data.frame(n_iter = expected, thin = first$spec$thin, min_ess = NA_real_,
                         max_rhat = NA_real_, seconds = NA_real_, needed = NA_real_)
    stop_reason <- "stages"
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
        warming <- arriving(info)
        ## (a chain still arriving may yet be on its way: it spends the budget)
        if (!warming && stalled(stages$min_ess[seq_len(k)], stages$n_iter[seq_len(k)] - info$spec$burnin)) {
            stop_reason <- "stalled"
            say("%s: the effective sample size stopped growing; stopping", label)
            break
        }
        factor <- growth_factor(conv$min_ess, conv$max_rhat)
        if (warming) {                  # the whole run grows, half of it burn-in
            nxt <- next_stage(info$n_iter, info$spec$thin, 2 * kept, factor)
            total <- nxt$post
            more <- total - info$n_iter
        } else {
            post <- info$n_iter - info$spec$burnin
            nxt <- next_stage(post, info$spec$thin, kept, factor)
            more <- nxt$post - post
            total <- info$spec$burnin + nxt$post
        }
        ## the next stage runs `more` iterations per chain, at the pace of
        ## the stages so far
        pace <- (spent - info$setup_seconds) / info$n_iter
        projected <- spent + pace * more
        ## the time to the target if the ESS grows in proportion to the run;
        ## while the run is shorter than the chains' autocorrelation time the
        ## ESS estimates stay at a few and then grow faster than that, so the
        ## run stops on it only when even this is `hopeless` times the budget
        ## (else it spends the budget: more draws are better than fewer).  A
        ## network's chain may still be on its way from its random start,
        ## which its ESS does not project, and so may a mixed model's, whose
        ## group effects start at zero and are each visited once a sweep
        ## (about an epoch): they spend the budget (nor does a stalled ESS
        ## stop them).
        needed <- info$setup_seconds + pace * info$n_iter * enough_ess / max(conv$min_ess, 1)
        stages$needed[k] <- needed
        if (k > stages_max) break
        if (!warming && needed > hopeless * run$max_time && conv$min_ess < enough_ess) {
            stop_reason <- "projected"
            say("%s: at this pace %g bulk effective draws would take about %.3g s, far more than max_time = %.3g s; stopping",
                label, enough_ess, needed, run$max_time)
            break
        }
        if (projected > run$max_time) {
            ## the stage the rest of the budget allows, when it adds at
            ## least a quarter of the one planned (more draws are better
            ## than fewer); else the run stops here
            room <- nxt$thin * floor(0.95 * (run$max_time - spent) / pace / nxt$thin)
            if (!is.finite(room) || room < more / 4) {
                stop_reason <- "time"
                say("%s: %s more iterations would take about %.3g s, past max_time = %.3g s; stopping",
                    label, big_count(more), pace * more, run$max_time)
                break
            }
            total <- total - more + room
            more <- room
        }
        burnin <- grown_burnin(info, total, nxt$thin)
        say("%s; continuing to %s iterations (thin %d%s), about %.3g s more",
            label, big_count(total), nxt$thin,
            if (burnin > info$spec$burnin) sprintf(", burn-in %s", big_count(burnin)) else "",
            pace * more)
        fit <- continue_thinned(fit, more, nxt$thin, run$progress, burnin)
        expected <- total
        stages <- rbind(stages, data.frame(n_iter = total, thin = nxt$thin,
                                           min_ess = NA_real_, max_rhat = NA_real_,
                                           seconds = NA_real_, needed = NA_real_))
    }
    info <- sgfit_info(fit)
    info$run_length <- list(target = enough_ess, target_rhat = enough_rhat, stages = stages,
                            stop = stop_reason, max_time = run$max_time)
    attr(fit, "sgfit") <- info
    check_draws(fit)
}

## A chain that does not mix: a run at least 8 times as long as an earlier
## stage's (post-burn-in lengths `post`) gave less than twice that stage's
## smallest effective sample size, which was already large enough (20) to
## be estimated.  (Small ESS estimates are noisy: one stage can lower them
## by chance; and below a few, the run is shorter than the chains'
## autocorrelation time, where the projection to the target, not this
## rule, decides.)
stalled <- function(ess, post) {
    k <- length(ess)
    if (k < 2L || !(ess[k] < enough_ess)) return(FALSE)
    j <- which(post[-k] * 8 <= post[k])
    if (!length(j)) return(FALSE)
    j <- max(j)
    ess[j] >= 20 && ess[k] < 2 * ess[j]
}

## The draws a run's length is judged on: a GLM's parameters; for a
## network, whose weights are not identifiable (hidden units permuted, or
## for tanh sign-flipped, give the same function, so that chains settle in
## different modes and one weight's effective sample size says nothing
## about the posterior's), the quantities that do not depend on the units'
## labels: each layer's log mean square weight and bias (which its learned
## scale follows) and log_sigma.  A chain still fitting the data moves
## them all, so the run grows until it has stopped doing so.
convergence_draws <- function(fit) judged_chains(chain_draws(fit), sgfit_info(fit))

## ... from a list of the chains' draws (iterations x the kept parameters)
judged_chains <- function(chains, info) {
    d <- info$design
    if (!is.null(info$random)) return(lapply(chains, without_effects, info = info))
    if (is.null(d$network)) return(chains)
    kept <- if (is.null(info$spec$monitor)) seq_len(d$D) else info$spec$monitor + 1L
    lapply(chains, network_invariants, layer = d$layer[kept])    # (NA: log_sigma)
}

## whether a fit's chain may take much of a short run to reach the
## posterior's mass (grow_run()): a network's, from random weights, and a
## mixed model's, whose group effects start at zero
arriving <- function(info) !is.null(info$design$network) || !is.null(info$random)

## what judged_chains() keeps, in words
judged_label <- function(info) {
    if (!is.null(info$random) && info$random$keep_effects)
        return("the fixed effects and the groups' sds and correlations")
    if (is.null(info$design$network)) "every parameter" else "the layers' mean squares and log_sigma"
}

## a mixed model's draws (columns: the model's parameters, the groups' sds
## and correlations, then the group effects) without the group effects
without_effects <- function(draws, info) draws[, random_columns(info)$model, drop = FALSE]

## a network's label-free quantities from its draws, `layer` the layer of
## each column (NA for log_sigma)
network_invariants <- function(draws, layer) {
    layers <- sort(unique(stats::na.omit(layer)))
    out <- vapply(layers, function(l)
        log(rowMeans(draws[, which(layer == l), drop = FALSE]^2)), double(nrow(draws)))
    out <- matrix(out, nrow(draws), dimnames = list(NULL, sprintf("layer %s log mean square", layers)))
    out <- cbind(out, draws[, colnames(draws) == "log_sigma", drop = FALSE])
    if (ncol(out)) out else draws
}

## the smallest bulk effective sample size (over all chains) and the
## largest split R-hat over the quantities a run is judged on
convergence_summary <- function(fit) {
    tab <- convergence_table(convergence_draws(fit))
    list(min_ess = min(tab$ess_bulk, na.rm = TRUE), max_rhat = max(tab$rhat, na.rm = TRUE),
         table = tab)
}

big_count <- function(n) format(n, big.mark = ",", scientific = FALSE, trim = TRUE)

## every chain ran to the expected iteration (none was interrupted)
run_complete <- function(info, expected, chains) {
    iters <- vapply(info$states, `[[`, 0, "iter")
    is.null(info$surplus) && length(iters) == chains && all(iters == expected)
}

## The burn-in of a grown run of `total` iterations kept every `thin`: the
## fit's, but for a chain still arriving half the run (as Stan's warm-up), rounded
## down to the fit's burn-in plus a multiple of `thin` (so that the draws
## kept are those a single run with that burn-in and thin keeps).  A
## network starts at random weights, and its chain may take most of a
## short run to reach where the posterior's mass is; a mixed model's group
## effects start at zero and each moves once a sweep of the groups: draws
## from that transient would stay in the fit however long it grew.
grown_burnin <- function(info, total, thin) {
    if (!arriving(info)) return(info$spec$burnin)
    info$spec$burnin + thin * max(0, (total %/% 2L - info$spec$burnin) %/% thin)
}

## keeps the draws a run with thin `thin` (a multiple of the fit's) and
## burn-in `burnin` (the fit's plus a multiple of `thin`) keeps, and
## continues every chain `n_iter` iterations with that thin
continue_thinned <- function(fit, n_iter, thin, progress, burnin = sgfit_info(fit)$spec$burnin) {
    info <- sgfit_info(fit)
    draws <- lapply(chain_draws(fit), function(d) {
        iter <- info$spec$burnin + info$spec$thin * seq_len(nrow(d))
        d[(iter - info$spec$burnin) %% thin == 0L & iter > burnin, , drop = FALSE]
    })
    ## (a running predictive restarts when the burn-in grows past its draws)
    if (burnin > info$spec$burnin) info$pred <- NULL
    info$spec$burnin <- as.integer(burnin)
    info$spec$thin <- thin
    res <- run_chains(fit_spec(info), info$states, n_iter, progress, info$cores)
    new_sgfit(info, res, draws, info$spec$burnin + thin, checks = FALSE)
}
