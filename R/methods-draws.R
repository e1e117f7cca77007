## Reshaping the draws of a fit: a data frame of draws, chains combined with
## c(), and window() and [ that cut a fit and keep it a fit.

#' The draws of a fit as a data frame; combining and cutting fits
#'
#' `as.data.frame()` gives the draws of every chain, one row per draw: a
#' column per parameter, then `.chain`, `.iteration` (the draw's index
#' within its chain, 1, 2, ...; its sampler iteration is `start(fit) +
#' (.iteration - 1) * thin(fit)`) and `.draw` (1 to the number of rows),
#' the convention of the 'posterior' package's `draws_df`.  `as.matrix()`
#' gives the draws with the chains stacked (coda's), `as.array()` an array
#' iterations x chains x parameters, the layout of 'rstanarm' that
#' 'bayesplot''s `mcmc_*()` functions read.  All three take 'rstanarm''s
#' `pars` (names or indices) and `regex_pars` (regular expressions): the
#' parameters named, then those whose names match.
#'
#' `c()` combines fits of the same model and sampler, e.g. chains run in
#' separate sessions, into one fit with all their chains (an `mcmc.list`).
#' The fits must have the same data, model, prior, sampler settings and
#' kept iterations (the same engine specification); otherwise it stops,
#' saying in what they differ.  Each chain keeps its own state and random
#' number stream, so `update(c(a, b), n_iter = k)` continues every chain as
#' `update(a, n_iter = k)` and `update(b, n_iter = k)` would.  Chains of
#' separate runs are independent only if the runs' seeds differ.  The
#' value's call, settings and report are those of the first fit; sampling
#' times and gradient evaluations add up.
#'
#' `window()` (as coda's, arguments `start`, `end`, `thin`) and `[`
#' keep a fit a fit, whose print, summary, `coef()`, `predict()` and
#' `update()` work:
#' * `window(fit, start = s)` drops the draws before iteration `s`, as a
#'   longer burn-in would have; `thin = t` keeps every `t`-th iteration.
#'   `update(n_iter = )` continues such a fit exactly: its new draws carry
#'   on the window's iterations (`start`, `start + t`, ...), as
#'   `window(update(fit, n_iter = ), start = s, thin = t)` would give.
#' * `window(fit, end = e)` before the chains' last draw cannot be continued
#'   with the draws appended (there would be a gap): `update(n_iter = ,
#'   append = TRUE)` stops and says so; `append = FALSE` gives the new draws
#'   alone.
#' * `fit[k]` of a fit with several chains keeps the chains `k` (one chain
#'   is a one-chain fit, an `mcmc` object, as the samplers return for
#'   `chains = 1`); the sampling time and the count of clipped gradient
#'   coordinates, recorded over all chains, are shared equally among them.
#'   `update()` continues a chain so taken as it would continue among the
#'   others, on its own random-number stream, leaving the user's
#'   random-number state untouched (as for several chains).
#' * Other subsets are not fits, and are coda's: `fit[, j]` of some of the
#'   parameters is an `mcmc` (or `mcmc.list`) of those parameters' draws,
#'   and `fit[i, ]` of one chain's rows a matrix.
#'
#' A fit that kept its predictive on given rows (`keep = predictive()`)
#' keeps it only over all its draws: after `window()` or `fit[k]`,
#' `predict()` without `newdata` and appending continuations stop.
#'
#' @param x a fit of [sgfs()], [sgld()] or another sampler.
#' @param row.names,optional as for [base::as.data.frame()].
#' @param pars,regex_pars the parameters kept: names or indices, and
#'   regular expressions their names match (`NULL`, both: every one).
#' @param i,j,drop as for coda's `[` methods: `i` selects chains of a fit
#'   with several chains (`fit[i]`), or rows (`fit[i, ]`); `j` parameters.
#' @param ... for `c()`, the fits; for `window()`, `start`, `end` and `thin`
#'   (see [coda::window.mcmc()]); for `as.matrix()`, coda's `iters` and
#'   `chains`; for `as.data.frame()` and `as.array()`, unused.
#' @return `as.data.frame()`: a data frame; `as.matrix()`: a matrix draws x
#'   parameters; `as.array()`: an array iterations x chains x parameters;
#'   `c()`, `window()`, `fit[k]`: a fit.
#' @name sgfit-draws
#' @examples
#' data(Pima.tr, package = "MASS")
#' set.seed(1)
#' a <- sgld(type ~ glu + bmi, data = Pima.tr, n_iter = 1000, batch_size = 50)
#' set.seed(2)
#' b <- sgld(type ~ glu + bmi, data = Pima.tr, n_iter = 1000, batch_size = 50)
#' both <- c(a, b)
#' head(as.data.frame(both))
#' later <- window(both, start = 501)
#' summary(later)
#' first <- both[1]
#' update(later, n_iter = 500)
NULL

#' @rdname sgfit-draws
#' @export
as.matrix.sgfit <- function(x, ..., pars = NULL, regex_pars = NULL) {
    m <- as.matrix(as_coda(x), ...)
    cols <- chosen_pars(coda::varnames(x), pars, regex_pars)
    if (is.null(cols)) m else m[, cols, drop = FALSE]
}

#' @rdname sgfit-draws
#' @export
as.array.sgfit <- function(x, ..., pars = NULL, regex_pars = NULL) {
    no_dots(...)
    chains <- chain_draws_shown(x)
    cols <- chosen_pars(coda::varnames(x), pars, regex_pars)
    if (is.null(cols)) cols <- coda::varnames(x)
    out <- array(NA_real_, c(nrow(chains[[1L]]), length(chains), length(cols)),
                 dimnames = list(iterations = NULL, chains = paste0("chain:", seq_along(chains)),
                                 parameters = cols))
    for (k in seq_along(chains)) out[, k, ] <- chains[[k]][, cols, drop = FALSE]
    out
}

#' @rdname sgfit-draws
#' @export
as.data.frame.sgfit <- function(x, row.names = NULL, optional = FALSE, ..., pars = NULL,
                                regex_pars = NULL) {
    no_dots(...)
    chains <- chain_draws_shown(x)
    cols <- chosen_pars(coda::varnames(x), pars, regex_pars)
    if (!is.null(cols)) chains <- lapply(chains, function(m) m[, cols, drop = FALSE])
    n <- vapply(chains, nrow, 0L)
    out <- as.data.frame(do.call(rbind, chains), row.names = row.names)
    out$.chain <- rep(seq_along(n), n)
    out$.iteration <- sequence(n)
    out$.draw <- seq_len(sum(n))
    out
}

#' @rdname sgfit-draws
#' @export
c.sgfit <- function(...) {
    fits <- list(...)
    bad <- which(!vapply(fits, inherits, NA, what = "sgfit"))
    if (length(bad))
        stop(sprintf("c() combines fits of the samplers of sgfs, and argument %d is %s",
                     bad[1L], if (is.null(fits[[bad[1L]]])) "NULL"
                              else paste("of class", class(fits[[bad[1L]]])[1L])), call. = FALSE)
    if (length(fits) == 1L) return(fits[[1L]])
    infos <- lapply(fits, sgfit_info)
    for (k in seq_along(fits)[-1L]) {
        why <- fit_difference(fits[[1L]], fits[[k]])
        if (!is.null(why))
            stop(sprintf("c() combines chains of one model and sampler, and fit %d differs from fit 1 in %s",
                         k, why), call. = FALSE)
    }
    total <- function(name) sum(unlist(lapply(infos, `[[`, name)))
    info <- infos[[1L]]
    info$elapsed <- total("elapsed")
    info$setup_seconds <- total("setup_seconds")
    info$check_seconds <- total("check_seconds")
    info$clipped <- total("clipped")
    info$eps <- unlist(lapply(infos, `[[`, "eps"))
    info$starts <- do.call(c, lapply(infos, `[[`, "starts"))
    sq <- lapply(infos, `[[`, "grad_sq")
    info$grad_sq <- if (!any(vapply(sq, is.null, NA))) Reduce(`+`, sq)
    info$run_length <- NULL                   # each run's growth is its own
    info$waiting <- NULL
    if (!is.null(info$spec$pred_x)) {          # the predictives kept add up
        stale <- any(vapply(infos, function(i) isTRUE(i$pred_stale), NA))
        info$pred <- if (!stale)
            list(sum = Reduce(`+`, lapply(infos, function(i) i$pred$sum)),
                 count = sum(vapply(infos, function(i) i$pred$count, 0)))
        info$pred_stale <- if (stale) TRUE
    }
    states <- do.call(c, lapply(infos, `[[`, "states"))
    if (anyDuplicated(lapply(states, `[[`, "seed")))
        stop("c() combines distinct chains, and some of these are the same chain ",
             "(the same fit twice, or runs from the same seed)", call. = FALSE)
    draws <- do.call(c, lapply(fits, chain_draws))
    coda_value(info, draws, states, coda::mcpar(first_chain(fits[[1L]]))[1L])
}

## why fits a and b cannot be chains of one fit (NULL if they can)
fit_difference <- function(a, b) {
    ia <- sgfit_info(a)
    ib <- sgfit_info(b)
    if (!identical(ia$method, ib$method))
        return(sprintf("the sampler (%s, not %s)", ib$method, ia$method))
    if (!identical(coda::varnames(a), coda::varnames(b)))
        return("the parameters")
    if (!identical(ia$levels, ib$levels)) return("the response's levels")
    ## (the data through the handles, unless both fits share one)
    shared <- identical(ia$handle$key, ib$handle$key)
    sa <- c(ia$spec, if (!shared) handle_data(ia))
    sb <- c(ib$spec, if (!shared) handle_data(ib))
    parts <- union(names(sa), names(sb))
    same <- vapply(parts, function(p)
        if (p == "callback") same_custom_data(sa$callback, sb$callback)
        else identical(sa[[p]], sb[[p]]), NA)
    differ <- parts[!same]
    if (any(c("N", "P", backend_fields, "y", "callback") %in% differ)) return("the data")
    if (any(c("burnin", "thin") %in% differ))
        return(sprintf("the kept iterations (burnin %d, thin %d, not burnin %d, thin %d)",
                       sb$burnin, sb$thin, sa$burnin, sa$thin))
    if (any(c("model", "mpar") %in% differ) || any(startsWith(differ, "prior_")))
        return("the model or its prior")
    if (length(differ))
        return(sprintf("the sampler's settings (the engine's %s)", paste(differ, collapse = ", ")))
    ma <- coda::mcpar(first_chain(a))
    mb <- coda::mcpar(first_chain(b))
    if (!identical(ma, mb))
        return(sprintf("its draws' iterations (%s, not %s): window() them alike, or continue the shorter with update()",
                       paste(mb, collapse = ":"), paste(ma, collapse = ":")))
    NULL
}

#' @rdname sgfit-draws
#' @export
window.sgfit <- function(x, ...) {
    ## coda's window() finds the iterations kept; its errors do not name the
    ## argument, and it takes a thin that is no whole number
    args <- list(...)
    mc <- coda::mcpar(first_chain(x))
    for (a in intersect(c("start", "end"), names(args))) {
        v <- args[[a]]
        if (!is.numeric(v) || length(v) != 1L || !is.finite(v) ||
            (if (a == "start") v > mc[2L] else v < mc[1L]))
            stop_arg(a, sprintf("must be an iteration %s the draws' %s, %d, not %s",
                                if (a == "start") "up to" else "from",
                                if (a == "start") "last" else "first",
                                as.integer(mc[if (a == "start") 2L else 1L]), format_value(v)))
    }
    if (!is.null(args$start) && !is.null(args$end) && args$end < args$start)
        stop_arg("end", "must not be before 'start'")
    if (!is.null(args$thin) && check_count(args$thin, "thin", 1L) %% mc[3L] != 0)
        stop_arg("thin", sprintf("must be a multiple of the fit's thin, %d", as.integer(mc[3L])))
    w <- stats::window(as_coda(x), ...)
    mc <- coda::mcpar(first_chain(w))
    keep_iterations(x, mc[1L], mc[3L], mc[1L] + mc[3L] * (coda::niter(w) - 1))
}

## The fit restricted to iterations start, start + thin, ..., up to `end`
## if that cuts the draws shown (else draws after them, kept beyond the
## common length, are kept too on the same grid).  The fit's burnin
## becomes start - thin (the kept iterations t are then those with
## t > burnin and (t - burnin) %% thin == 0, as the engine keeps them), so
## that update() continues the window's iterations; the engine's
## continuation is unchanged, as every chain is past both burn-ins.
keep_iterations <- function(x, start, thin, end) {
    shown <- coda::mcpar(first_chain(x))
    cut <- end + thin <= shown[2L]
    if (start == shown[1L] && thin == shown[3L] && !cut) return(x)
    draws <- lapply(chain_draws(x), function(d) {
        iter <- shown[1L] + shown[3L] * (seq_len(nrow(d)) - 1)
        d[iter >= start & (iter - start) %% thin == 0 & (!cut | iter <= end), , drop = FALSE]
    })
    info <- sgfit_info(x)
    info$spec$burnin <- as.integer(start - thin)
    info$spec$thin <- as.integer(thin)
    coda_value(forget_predictive(info), draws, info$states, start)
}

#' @rdname sgfit-draws
#' @export
`[.sgfit` <- function(x, i, j, drop) {
    if (inherits(x, "mcmc.list") && !missing(i) && nargs() < 3L + !missing(drop))
        return(keep_chains(x, i))
    if (!missing(j)) {
        pars <- coda::varnames(x)
        if (anyNA(tryCatch(stats::setNames(seq_along(pars), pars)[j], error = function(e) NA)))
            stop_arg("j", "selects parameters the fit does not have: it has ",
                     paste(utils::head(pars, 20L), collapse = ", "),
                     if (length(pars) > 20L) sprintf(", ... (%d in all)", length(pars)))
    }
    out <- NextMethod()
    if (inherits(out, "sgfit") || same_draws(out, x)) x else out
}

## whether coda's subset `out` of fit x is all of x: the same chains, draws
## and parameters, in the same order (a copy of x would be costlier to compare)
same_draws <- function(out, x) {
    if (inherits(x, "mcmc.list"))
        return(coda::is.mcmc.list(out) && length(out) == length(unclass(x)) &&
               all(vapply(out, same_draws, NA, x = first_chain(x))))
    coda::is.mcmc(out) && identical(dim(out), dim(x)) &&
        identical(colnames(out), colnames(x)) && identical(coda::mcpar(out), coda::mcpar(x))
}

## the fit of the chains i (indices into the chains, as for a list)
keep_chains <- function(x, i) {
    K <- length(unclass(x))
    k <- seq_len(K)[i]
    if (anyNA(k)) stop_arg("i", sprintf("selects chains the fit does not have: it has %d", K))
    if (!length(k)) stop_arg("i", "selects no chain")
    if (anyDuplicated(k))
        stop_arg("i", sprintf("selects chain %d twice: a fit's chains are distinct",
                              k[anyDuplicated(k)]))
    if (identical(k, seq_len(K))) return(x)
    info <- sgfit_info(x)
    info$elapsed <- info$elapsed * length(k) / K
    info$clipped <- sum(info$clipped) * length(k) / K
    info$eps <- info$eps[k]
    info$starts <- info$starts[k]
    info$waiting <- NULL                       # chains an interrupt kept from starting
    ## a chain among several continues on its own stream, as among them,
    ## leaving the user's random numbers untouched
    if (length(k) == 1L) info$own_stream <- TRUE
    coda_value(forget_predictive(info), chain_draws(x)[k], info$states[k],
               coda::mcpar(first_chain(x))[1L])
}

## the predictive kept on given rows covers every draw: once draws are cut,
## predict() from it and appending continuations stop (predict_kept(),
## update.sgfit())
forget_predictive <- function(info) {
    if (is.null(info$pred)) return(info)
    info$pred <- NULL
    info$pred_stale <- TRUE
    info
}

first_chain <- function(x) if (inherits(x, "mcmc.list")) x[[1L]] else x
