## Models given by R functions: custom_model() and what the engine needs to
## call them back (src/model_custom.c).

#' Models given by R functions
#'
#' A model for the samplers' `model` argument whose likelihood is written in
#' R: the per-example gradients of the log-likelihood and the per-example
#' log-likelihoods of a minibatch, as functions of the parameters and of the
#' minibatch's rows of the data.  Every sampler runs it on the same C engine
#' as the built-in models, which calls these functions back for each
#' minibatch: the speed is R's (the functions should be vectorised over the
#' rows), the generality is R's too.
#'
#' **Data.** The data are the samplers' `x`: a vector (one example per
#' element), a matrix or data frame (one example per row), or a list of
#' such objects with the same number of rows (like the datasets of the
#' sgmcmc package), `y` is left out.  For the minibatch of row numbers
#' `rows`, `data` is `x[rows]` for a vector, `x[rows, , drop = FALSE]` for a
#' matrix or data frame, and the list of each element's rows for a list.
#'
#' **Parameters** are the user's own: they are not standardised (the
#' samplers' `standardize` and `intercept` do not apply and `family` must
#' not be given).  The samplers' `prior` is one prior for every parameter,
#' or a prior with one location and scale per parameter, on this scale:
#' choose it deliberately, the default `normal(0, 2.5)` suits standardised
#' regression coefficients.  With `init = NULL` a chain starts at the
#' model's `init`; `init = "map"` starts from an [sga()] optimisation begun
#' there.  Parameters with a restricted range (a variance, a rate) are best
#' sampled on an unrestricted scale (their logarithm): the samplers take
#' steps in every direction.
#'
#' **Checks.** Both functions are checked at every call: `score` must
#' return an `n x D` numeric matrix (for `D = 1` also a vector of length
#' `n`), `loglik` `n` numbers; an error in either function stops the run
#' with a message naming it and the parameter value.  They must not draw
#' random numbers (that would disturb the sampler's stream; it is an
#' error).  When a sampler starts, both must be finite at `init` on the
#' first 20 rows, and the column sums of `score` there are compared with
#' finite differences of `loglik`, with a warning if they disagree.
#' Elsewhere non-finite values are allowed and treated as for the built-in
#' models: a stochastic-gradient chain that meets them has diverged, MALA
#' and HMC reject a proposal whose log-likelihood is not finite, and the
#' mode searches shorten their step.  So `loglik` may return `-Inf` where
#' the parameters leave the model's range (a negative rate, say).  Minus the Hessian, where a
#' sampler needs it (OSGFS, MALA, HMC, default step sizes), is computed by
#' central differences of `score`.
#'
#' **Methods.** `print`, `summary`, `coef`, `vcov`, `update` and the coda
#' functions work as for the built-in models, and so do `log_lik()` (the
#' model's `loglik` at each draw, on its data or on `newdata` in the same
#' form), hence `loo()` and `waic()` (see [sgfit-posterior], [sgfit-loo]);
#' `predict()`, `posterior_predict()` and the other predictive methods do
#' not (a custom model defines no predictive distribution): compute
#' predictions from the draws, `as.matrix(fit)`.  The check that the draws sit near the
#' posterior mode (see [sgfs()]) is made as for the GLMs, and skipped when
#' the user's functions fail at a point the mode search visits.
#'
#' @param score `function(theta, data)`: the gradients of the
#'   log-likelihood of each example of `data` with respect to `theta`, an
#'   `n x D` matrix (row `i`: example `i`), for the `n` rows of `data`.
#'   `theta` is a named numeric vector of the `D` parameters.
#' @param loglik `function(theta, data)`: the `n` log-likelihoods of the
#'   examples of `data`, a numeric vector.
#' @param init the parameters' starting value, `D` finite numbers; `D` is
#'   the number of parameters.
#' @param names the parameters' names: `D` distinct strings; by default the
#'   names of `init`, or `theta` (`D = 1`) or `theta[1]`, ..., `theta[D]`.
#' @return An object of class `sgfs_model`.
#' @examples
#' ## the mean of a normal sample with known sd 2
#' set.seed(1)
#' x <- rnorm(5000, mean = 1, sd = 2)
#' m <- custom_model(score = function(theta, data) (data - theta) / 4,
#'                   loglik = function(theta, data) dnorm(data, theta, 2, log = TRUE),
#'                   init = c(mu = 0))
#' fit <- sgld(x, model = m, prior = normal(0, 10), n_iter = 2000, batch_size = 50)
#' coef(fit)
#' @export
custom_model <- function(score, loglik, init, names = NULL) {
    if (!is.function(score))
        stop_arg("score", "must be a function(theta, data) returning the n x D matrix of ",
                 "per-example log-likelihood gradients")
    if (!is.function(loglik))
        stop_arg("loglik", "must be a function(theta, data) returning the n per-example ",
                 "log-likelihoods")
    if (!is.numeric(init) || !length(init) || any(!is.finite(init)))
        stop_arg("init", "must be finite numbers, one per parameter")
    D <- length(init)
    if (is.null(names))
        names <- if (!is.null(base::names(init))) base::names(init)
                 else if (D == 1L) "theta" else sprintf("theta[%d]", seq_len(D))
    if (!is.character(names) || length(names) != D || anyNA(names) || any(!nzchar(names)) ||
        anyDuplicated(names))
        stop_arg("names", sprintf("must be %d distinct non-empty strings, one per parameter", D))
    structure(list(type = "custom", score = score, loglik = loglik,
                   init = as.double(init), names = names),
              class = "sgfs_model")
}

is_custom_model <- function(model) !is.null(model) && identical(model$type, "custom")

## The design of a custom model: xt holds the row numbers (1 x N), the
## parameters are the user's (identity map), one parameter block.
custom_design <- function(model, x, y, family_given, sigma) {
    if (!is.null(y))
        stop_arg("y", "must be left out for a custom_model(): its data are all in x")
    if (family_given)
        stop_arg("family", "does not apply to a custom_model(): its likelihood is the model's loglik")
    if (!is.null(sigma))
        stop_arg("sigma", "does not apply to a custom_model(): make it a parameter or fix it in the model's functions")
    N <- data_rows(x)
    if (N < 2L) stop_arg("x", "needs at least two examples")
    D <- length(model$init)
    callback <- custom_callback(model, x)
    check_at_init(callback, model$init, seq_len(min(N, 20L)), model$names)
    list(data = list(N = N, P = 1L, xt = matrix(as.double(seq_len(N)), 1L)),
         y = double(N), D = D, p = 0L,
         n_coef = D, intercept = integer(0), x_names = character(0),
         par_names = model$names, M = linear_map(rep(1, D)), shift = double(D),
         mpar = as.double(D), groups = rep(1L, D), custom = model,
         start = model$init, callback = callback)
}

## the number of examples in custom-model data (validated)
data_rows <- function(x) {
    one <- function(v) {
        if (is.matrix(v) || is.data.frame(v)) return(nrow(v))
        if (is.atomic(v) && is.null(dim(v))) return(length(v))
        stop_arg("x", "must be a vector, a matrix, a data frame or a list of them ",
                 "(one example per element or row) for a custom_model()")
    }
    if (!is.list(x) || is.data.frame(x)) return(one(x))
    if (!length(x)) stop_arg("x", "is an empty list")
    n <- vapply(x, one, 0L)
    if (length(unique(n)) > 1L)
        stop_arg("x", sprintf("is a list whose elements have different numbers of rows (%s)",
                              paste(n, collapse = ", ")))
    n[[1L]]
}

## the examples `rows` of custom-model data
data_subset <- function(x, rows) {
    if (is.matrix(x) || is.data.frame(x)) return(x[rows, , drop = FALSE])
    if (is.list(x)) return(lapply(x, data_subset, rows))
    x[rows]
}

## whether two custom models' callbacks (custom_callback()) evaluate the
## same model on the same data
same_custom_data <- function(a, b) {
    if (is.null(a) || is.null(b)) return(is.null(a) && is.null(b))
    ea <- environment(a$score)
    eb <- environment(b$score)
    identical(ea$x, eb$x) && identical(ea$model, eb$model, ignore.environment = TRUE)
}

## The engine's callbacks: list(score, loglik) of functions of (theta,
## rows) returning the n x D score matrix and the log-likelihood sum, their
## type and size validated (src/model_custom.c relies on them).  Non-finite
## values are passed on: the engine treats them as for the built-in models
## (a diverged chain, a rejected proposal, a shorter step of a mode search).
custom_callback <- function(model, x) {
    D <- length(model$init)
    par_names <- model$names
    evaluate <- function(what, theta, rows) {
        seed <- rng_state()
        value <- tryCatch(model[[what]](theta, data_subset(x, rows)), error = function(err)
            custom_error(what, theta, paste("failed:", conditionMessage(err))))
        if (!identical(seed, rng_state()))
            custom_error(what, theta, "drew random numbers, which would disturb the ",
                         "sampler's random-number stream: it must be deterministic")
        value
    }
    list(score = function(theta, rows) {
             names(theta) <- par_names
             g <- evaluate("score", theta, rows)
             n <- length(rows)
             if (D == 1L && is.numeric(g) && is.null(dim(g)) && length(g) == n)
                 g <- matrix(g, n, 1L)
             if (!is.numeric(g) || length(dim(g)) != 2L || any(dim(g) != c(n, D)))
                 custom_error("score", theta, sprintf(
                     "returned %s for %d rows; it must return an n x D = %d x %d numeric matrix (one row per example, one column per parameter)",
                     describe_value(g), n, n, D))
             storage.mode(g) <- "double"
             g
         },
         loglik = function(theta, rows) {
             names(theta) <- par_names
             l <- evaluate("loglik", theta, rows)
             n <- length(rows)
             if (!is.numeric(l) || length(l) != n || length(dim(l)) > 2L ||
                 (length(dim(l)) == 2L && ncol(l) != 1L))
                 custom_error("loglik", theta, sprintf(
                     "returned %s for %d rows; it must return %d numbers, the per-example log-likelihoods",
                     describe_value(l), n, n))
             sum(as.double(l))
         })
}

rng_state <- function() get0(".Random.seed", envir = globalenv(), inherits = FALSE)

custom_error <- function(what, theta, ...) {
    stop(sprintf("custom_model(): %s(theta, data) at theta = (%s) %s", what,
                 paste(sprintf("%s = %.6g", names(theta), theta), collapse = ", "),
                 paste0(...)), call. = FALSE)
}

describe_value <- function(v) {
    if (is.null(v)) return("NULL")
    if (length(dim(v)) == 2L) return(sprintf("a %d x %d %s", nrow(v), ncol(v), class(v)[1L]))
    sprintf("a %s of length %d", class(v)[1L], length(v))
}

## The model's functions at its init for the examples `rows`: an error
## unless both are finite there, a warning when the score is not the
## gradient of the log-likelihood (column sums against central differences,
## step h_j = 1e-5 max(1, |theta_j|), up to their truncation and rounding
## errors).
check_at_init <- function(callback, theta, rows, par_names) {
    names(theta) <- par_names
    G <- callback$score(theta, rows)
    if (!all(is.finite(G))) custom_error("score", theta, "returned non-finite values at init")
    g <- colSums(G)
    ll <- callback$loglik(theta, rows)
    if (!is.finite(ll)) custom_error("loglik", theta, "returned non-finite values at init")
    h <- 1e-5 * pmax(1, abs(theta))
    fd <- vapply(seq_along(theta), function(j) {
        step <- replace(double(length(theta)), j, h[j])
        (callback$loglik(theta + step, rows) - callback$loglik(theta - step, rows)) / (2 * h[j])
    }, 0)
    tol <- 1e-4 * (1 + abs(g) + abs(fd)) + 1e-8 * abs(ll) / h
    if (any(abs(g - fd) > tol))
        warning(sprintf(paste0(
            "custom_model(): at init, the score does not look like the gradient of loglik ",
            "(first %d rows): score column sums (%s), finite differences of loglik (%s)"),
            length(rows), paste(signif(g, 4), collapse = ", "),
            paste(signif(fd, 4), collapse = ", ")), call. = FALSE)
    invisible(NULL)
}

## log_lik() of a custom_model() fit: the model's loglik at each draw, on
## its data (or newdata in the same form)
custom_log_lik <- function(object, info, newdata, draws, y) {
    if (!is.null(y))
        stop_arg("y", "does not apply to a custom_model() fit: its data (x, or newdata) hold ",
                 "the responses")
    model <- info$design$custom
    if (!identical(coda::varnames(object), info$design$par_names))
        stop("log_lik() needs every parameter's draws", call. = FALSE)
    data <- if (!is.null(newdata)) newdata else {
        spec <- fit_spec(info)
        env <- environment(spec$callback$score)
        data_subset(env$x, as.integer(spec$xt[1L, ]))
    }
    n <- tryCatch(data_rows(data), error = function(e)
        stop_arg("newdata", "must be data in the custom model's form: a vector, a matrix, a ",
                 "data frame or a list of them"))
    B <- chosen_draws(object, draws, default_draws)
    ## the user's function takes one parameter vector: one R call per draw
    out <- vapply(seq_len(nrow(B)), function(s) {
        theta <- stats::setNames(B[s, ], model$names)
        l <- tryCatch(model$loglik(theta, data), error = function(e)
            custom_error("loglik", theta, paste("failed:", conditionMessage(e))))
        if (!is.numeric(l) || length(l) != n)
            custom_error("loglik", theta, sprintf("returned %s for %d rows; it must return %d numbers",
                                                  describe_value(l), n, n))
        as.double(l)
    }, double(n))
    matrix(out, nrow(B), n, byrow = TRUE)
}

## A custom model's spec for chains on futures (run_futures()): the user's
## functions serialised to another R session take their environments along
## except the global one (and the packages'), so a function that reads a
## global variable, or calls a helper that does, would fail there.  Every
## variable the functions read (globals::globalsOf(), recursively through
## the functions they call) that does not come from a package is copied
## into one environment, the functions among them and the model's own are
## moved into it, and its parent is the global environment (the worker's,
## there); the packages the variables come from are returned for the
## futures to attach.
custom_for_futures <- function(spec) {
    cb <- spec$callback
    if (is.null(cb) || !requireNamespace("globals", quietly = TRUE))
        return(list(spec = spec, packages = character()))
    env <- environment(cb$score)
    model <- env$model
    found <- list()
    packages <- character()
    for (f in c("score", "loglik")) {
        probe <- new.env(parent = environment(model[[f]]))
        assign(".f", model[[f]], envir = probe)
        g <- globals::cleanup(globals::globalsOf(quote(.f), envir = probe, mustExist = FALSE,
                                                 recursive = TRUE))
        packages <- c(packages, globals::packagesOf(g))
        from_package <- vapply(attr(g, "where"), function(e)
            isNamespace(e) || startsWith(environmentName(e), "package:") ||
                identical(e, baseenv()), NA)
        keep <- setdiff(names(g)[!from_package], ".f")
        found[keep] <- as.list(g)[keep]
    }
    home <- new.env(parent = globalenv())
    rehome <- function(v) {
        if (is.function(v) && !is.primitive(v) && !isNamespace(environment(v))) environment(v) <- home
        v
    }
    for (name in names(found)) assign(name, rehome(found[[name]]), envir = home)
    model$score <- rehome(model$score)
    model$loglik <- rehome(model$loglik)
    spec$callback <- custom_callback(model, env$x)
    list(spec = spec, packages = unique(packages))
}
