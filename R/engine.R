## Running chains on the C engine: chunks for the progress bar and Ctrl-C,
## RNG streams for several chains, and the iteration bookkeeping.

## number of kept iterations t in (from, to]: t > burnin, (t - burnin) %% thin == 0
n_kept_between <- function(from, to, burnin, thin) {
    k <- function(t) if (t <= burnin) 0 else (t - burnin) %/% thin
    k(to) - k(from)
}

run_chain <- function(spec, state, n_iter, progress) {
    n_keep <- n_kept_between(state$iter, state$iter + n_iter, spec$burnin, spec$thin)
    if (as.double(n_keep) * length(state$theta) > .Machine$integer.max)
        stop_arg("n_iter", sprintf("= %d keeps %.3g draws per chain, more than memory allows: ",
                                   n_iter, n_keep), "run in parts or thin the chain more")
    engine <- .Call(C_sgfs_engine_new, spec, state, as.integer(n_keep))
    ## `progress`: a reporter of the iterations done (chains_on()), or as a
    ## sampler's argument (R/progress.R)
    report <- if (is.function(progress)) progress else {
        display <- progress_display(progress, n_iter)
        if (!is.null(display)) {
            on.exit(display$close(), add = TRUE)
            display$update
        }
    }
    chunk <- if (!is.null(report)) max(1L, ceiling(n_iter / 100)) else n_iter
    done <- 0L
    diverged <- 0
    interrupted <- FALSE
    start <- proc.time()[["elapsed"]]
    ## Ctrl-C inside the C loop ends the chunk at an iteration boundary
    ## (status[2]); between chunks it arrives as an R interrupt condition
    tryCatch(
        while (done < n_iter && diverged == 0 && !interrupted) {
            k <- min(chunk, n_iter - done)
            status <- .Call(C_sgfs_engine_run, engine, as.integer(k))
            diverged <- status[1L]
            interrupted <- status[2L] == 1L
            done <- done + k
            if (!is.null(report)) report(done)
        },
        interrupt = function(e) interrupted <<- TRUE)
    res <- .Call(C_sgfs_engine_result, engine)
    res$elapsed <- proc.time()[["elapsed"]] - start
    res$interrupted <- interrupted
    res
}

get_seed <- function() get(".Random.seed", envir = globalenv(), inherits = FALSE)
## Restores an RNG state, kind included: assigning .Random.seed alone leaves
## R's internal RNG kind unchanged until the next draw, so a set.seed() in
## between would seed the wrong generator; RNGkind() re-reads the state.
set_seed <- function(seed) {
    assign(".Random.seed", seed, envir = globalenv())
    invisible(RNGkind())
}

## The user's RNG state, to be put back by rng_restore() after code that
## draws on streams of its own: the seed, or (a session that has drawn
## nothing yet) the generators' kinds, which set_seed() of a chain's
## L'Ecuyer stream would otherwise leave behind.
rng_snapshot <- function() {
    list(seed = if (exists(".Random.seed", envir = globalenv(), inherits = FALSE)) get_seed(),
         kind = RNGkind())
}
rng_restore <- function(snap) {
    if (!is.null(snap$seed)) return(set_seed(snap$seed))
    suppressWarnings(RNGkind(snap$kind[1L], snap$kind[2L], snap$kind[3L]))
    if (exists(".Random.seed", envir = globalenv(), inherits = FALSE))
        rm(".Random.seed", envir = globalenv())
    invisible(snap$kind)
}

## `code` evaluated under a fixed seed of R's default generators (the same
## numbers in every session and for every user seed), the user's RNG state
## put back after
with_fixed_seed <- function(seed, code) {
    user <- rng_snapshot()
    on.exit(rng_restore(user))
    suppressWarnings(set.seed(seed, kind = "Mersenne-Twister", normal.kind = "Inversion",
                              sample.kind = "Rejection"))
    code
}

## One L'Ecuyer-CMRG stream per chain, derived from the user's RNG stream
## (one draw), so that set.seed() reproduces a multi-chain run and parallel
## and sequential chains give the same draws.
chain_seeds <- function(chains) {
    if (!exists(".Random.seed", envir = globalenv(), inherits = FALSE))
        stats::runif(1L)
    seed <- sample.int(.Machine$integer.max, 1L)
    user <- get_seed()
    on.exit(set_seed(user))
    set.seed(seed, kind = "L'Ecuyer-CMRG")
    s <- get_seed()
    lapply(seq_len(chains), function(k) {
        if (k > 1L) s <<- parallel::nextRNGStream(s)
        s
    })
}

## A chain's saved sampler state as the rule names its parts (sgfs_state_parts,
## src/engine.c; e.g. HMC's accepted and proposed counts): diagnostics are
## read by name, never by position in sstate
state_parts <- function(info, state) {
    .Call(C_sgfs_state_parts, info$spec$sampler, length(state$theta), state$sstate)
}

## Runs (or continues) every chain.  states[[k]] carries theta, iter, sstate
## and the RNG seed the chain continues from (NULL: the current stream).
## Chains on streams of their own (`own_streams`: several chains, or one
## taken from a fit of several, see keep_chains()) leave the user's RNG
## state as it was; one chain otherwise continues the user's stream.
## Returns one result per chain, NULL for a chain an interrupt kept from
## starting.
run_chains <- function(spec, states, n_iter, progress, cores,
                       own_streams = length(states) > 1L) {
    with_engine_order(spec, chains_on(spec, states, n_iter, progress, cores, own_streams))
}
## ... with a matrix read in place in the engine's layout (with_engine_order())
chains_on <- function(spec, states, n_iter, progress, cores, own_streams) {
    chains <- length(states)
    ## one display of every chain's iterations (R/progress.R)
    display <- progress_display(progress, chains * n_iter, spec$sampler)
    if (!is.null(display)) on.exit(display$close(), add = TRUE)
    here <- function(k) if (!is.null(display)) function(done) display$update((k - 1) * n_iter + done)
    one <- function(k, report) {
        if (!is.null(states[[k]]$seed)) set_seed(states[[k]]$seed)
        res <- run_chain(spec, states[[k]], n_iter, report)
        res$seed <- get_seed()
        res
    }
    if (!own_streams) return(list(one(1L, here(1L))))
    user <- rng_snapshot()
    on.exit(rng_restore(user), add = TRUE)
    if (chains == 1L) return(list(one(1L, here(1L))))
    if (future_plan_set()) return(run_futures(spec, states, n_iter, display))
    if (cores > 1L && .Platform$OS.type != "windows")
        return(run_parallel(one, chains, min(cores, chains), display))
    res <- vector("list", chains)
    for (k in seq_len(chains)) {
        res[[k]] <- one(k, here(k))
        if (res[[k]]$interrupted) break
    }
    res
}

## TRUE when the user has chosen where futures run (future::plan() other
## than sequential), the future package being installed
future_plan_set <- function() {
    requireNamespace("future", quietly = TRUE) &&
        !inherits(future::plan("next"), "sequential")
}

## Chains as futures, wherever future::plan() runs them (other R sessions,
## machines of a cluster, jobs of a scheduler): each worker gets the spec
## and its chain's state, with that chain's own random-number stream (the
## state's seed: the same draws as forked or sequential chains).  The
## future's own L'Ecuyer stream (seed = TRUE) is replaced by the chain's.
run_futures <- function(spec, states, n_iter, display = NULL) {
    expr <- quote(run(spec, state, n_iter, path))
    ready <- custom_for_futures(spec)
    spec <- ready$spec
    files <- if (!is.null(display)) progress_files(length(states))
    on.exit(unlink(files), add = TRUE)
    futures <- lapply(seq_along(states), function(k)
        future::future(expr, substitute = FALSE,
                       globals = list(run = run_future_chain, spec = spec, state = states[[k]],
                                      n_iter = n_iter, path = files[k]),
                       packages = c("sgfs", ready$packages), seed = TRUE))
    if (!is.null(display)) {
        done <- double(length(states))
        while (!all(vapply(futures, future::resolved, NA))) {
            done <- files_done(files, done)
            display$update(sum(done))
            Sys.sleep(0.2)
        }
        display$update(length(states) * n_iter)
    }
    future::value(futures)
}

## a chain in a future's worker (run_futures()), reporting its iterations
## to the file `path` (NULL or NA: none; on another machine, where the file
## is not, the reports are lost)
run_future_chain <- function(spec, state, n_iter, path = NULL) {
    if (!is.null(state$seed)) set_seed(state$seed)
    report <- if (length(path) && !is.na(path)) file_reporter(path)
    res <- run_chain(spec, state, n_iter, report)
    res$seed <- get_seed()
    res
}

## Chains in forked workers, at most `cores` at a time.  Ctrl-C in the
## parent is passed on to the workers (unless they saw it themselves), whose
## C loops then stop at an iteration boundary and return their draws.
run_parallel <- function(one, chains, cores, display = NULL) {
    res <- vector("list", chains)
    jobs <- list()
    started <- 0L
    interrupted <- FALSE
    files <- if (!is.null(display)) progress_files(chains)
    on.exit(unlink(files), add = TRUE)
    done <- double(chains)
    collect <- function(timeout) {
        done <- parallel::mccollect(jobs, wait = FALSE, timeout = timeout)
        for (name in names(done)) {
            res[as.integer(name)] <<- list(done[[name]])    # NULL: the worker died
            jobs[[name]] <<- NULL
        }
    }
    while (length(jobs) > 0L || (!interrupted && started < chains)) {
        while (!interrupted && length(jobs) < cores && started < chains) {
            started <- started + 1L
            jobs[[as.character(started)]] <- parallel::mcparallel(
                one(started, if (!is.null(files)) file_reporter(files[started])),
                name = as.character(started), mc.set.seed = FALSE)
        }
        if (!is.null(display)) {
            done <- files_done(files, done)
            display$update(sum(done))
        }
        tryCatch(collect(0.1), interrupt = function(e) {
            interrupted <<- TRUE
            collect(0.5)
            for (job in jobs) tools::pskill(job$pid, tools::SIGINT)
        })
    }
    if (!is.null(display)) display$update(sum(files_done(files, done)))
    failed <- vapply(res, inherits, NA, what = "try-error")
    if (any(failed) && !interrupted) stop(attr(res[[which(failed)[1L]]], "condition"))
    died <- vapply(res[seq_len(started)], is.null, NA)
    if (any(died) && !interrupted)
        stop(sprintf("the worker running chain %d died (out of memory?)", which(died)[1L]),
             call. = FALSE)
    res[failed] <- list(NULL)
    res
}

## n standard normals drawn as the engine draws a step's noise vector
## (src/normal.c: one block, seeded from two of R's uniforms); the tests'
## replays of the chains call it wherever the engine draws one
engine_rnorm <- function(n) .Call(C_sgfs_rnorm_block, n)
