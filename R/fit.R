## The front end shared by every sampler: formula -> design matrix, matrix ->
## engine spec, engine -> sgfit (a coda object with one bookkeeping attribute).

## The model frame of a formula fit; `offset` and `weights` (the sampler's
## arguments, unevaluated expressions, or NULL) are evaluated in `data` by
## model.frame (the offset added to the formula's offset() terms), as glm()
## does; `contrasts` goes to model.matrix
formula_frame <- function(call, env, offset = NULL, weights = NULL, contrasts = NULL,
                          bars = NULL) {
    plain <- if (is.null(bars)) numeric_frame(call, env, offset, weights, contrasts)
    if (!is.null(plain)) return(plain)
    m <- match(c("formula", "data", "subset", "na.action"), names(call), 0L)
    mf <- call[c(1L, m)]
    names(mf)[2L] <- "formula"
    ## random-effect terms: one frame of every variable (one na.action for
    ## the fixed and the random terms), the fixed terms' design from it
    if (!is.null(bars)) mf$formula <- frame_formula(eval(call$formula, env))
    mf$drop.unused.levels <- TRUE
    if (!is.null(offset)) mf$offset <- offset
    if (!is.null(weights)) mf$weights <- weights
    mf[[1L]] <- quote(stats::model.frame)
    mf <- tryCatch(eval(mf, env), error = function(e) {
        for (arg in c("offset", "weights"))
            if (grepl(sprintf("(%s)", arg), conditionMessage(e), fixed = TRUE))
                stop_arg(arg, "must have one number per row of data: ", conditionMessage(e))
        cl <- conditionCall(e)
        if (is.call(cl) && startsWith(paste(deparse(cl[[1L]]), collapse = ""), "na."))
            stop_arg("na.action", "refused the data: ", conditionMessage(e))
        vars <- tryCatch(all.vars(stats::formula(eval(mf$formula, env))),
                         error = function(e) character(0))
        missing_var <- sub("^object '(.*)' not found$", "\\1", conditionMessage(e))
        if (missing_var %in% vars)
            stop_arg("formula", sprintf("has the variable '%s', which is neither in data nor in ",
                                        missing_var), "the formula's environment")
        stop(e)
    })
    if (!nrow(mf))
        stop_arg("data", "has no rows left after 'subset' and 'na.action'")
    mt <- attr(mf, "terms")
    if (!is.null(bars)) {
        fixed <- fixed_formula(eval(call$formula, env))
        mt <- stats::terms(fixed, data = mf)
        attr(mt, ".Environment") <- environment(fixed)
    }
    offset <- stats::model.offset(mf)
    if (!is.null(offset) && (!is.numeric(offset) || NCOL(offset) != 1L))
        stop_arg("offset", "must be numeric, one number per row")
    weights <- stats::model.weights(mf)
    if (!is.null(weights) && (!is.numeric(weights) || NCOL(weights) != 1L))
        stop_arg("weights", "must be numeric, one number per row")
    if (!is.null(contrasts) && !is.list(contrasts))
        stop_arg("contrasts", "must be a list naming, for factors of the formula, a contrast ",
                 "function, its name or a matrix, as for model.matrix(); not ",
                 format_value(contrasts))
    x <- if (is.null(contrasts)) stats::model.matrix(mt, mf)
         else tryCatch(stats::model.matrix(mt, mf, contrasts.arg = contrasts),
                       error = function(e) stop_arg("contrasts", "was refused by model.matrix(): ",
                                                    conditionMessage(e)),
                       warning = function(w) stop_arg("contrasts", conditionMessage(w)))
    list(x = x, y = stats::model.response(mf, "any"), terms = mt,
         offset = if (!is.null(offset)) as.vector(offset),
         weights = if (!is.null(weights)) as.vector(weights),
         xlevels = stats::.getXlevels(mt, mf),
         contrasts = attr(x, "contrasts"), na.action = attr(mf, "na.action"),
         random = if (!is.null(bars)) random_design(bars, mf, environment(mt)),
         intercept = FALSE)            # (model.matrix() wrote its column)
}

## The model frame's short way for a formula of plain numeric columns of a
## data frame (y ~ ., y ~ a + b - 1) without subset, weights, offsets,
## contrasts or missing values: the design is the data's columns
## themselves, where model.frame() would copy the data and model.matrix()
## the frame (at N = 2e6 and 50 columns, 2.1 GB over the data's 0.76 GB),
## and the intercept stays implicit.  The same design, terms and draws;
## NULL where it does not apply.
numeric_frame <- function(call, env, offset, weights, contrasts) {
    if (!is.null(offset) || !is.null(weights) || !is.null(contrasts) || is.null(call$data) ||
        !is.null(call$subset) || !is.null(call$na.action))
        return(NULL)
    data <- tryCatch(eval(call$data, env), error = function(e) NULL)
    if (!is.data.frame(data) || !nrow(data)) return(NULL)
    mf0 <- tryCatch(stats::model.frame(eval(call$formula, env), data[0L, , drop = FALSE]),
                    error = function(e) NULL)
    if (is.null(mf0)) return(NULL)
    mt <- attr(mf0, "terms")
    vars <- attr(mt, "term.labels")
    response <- if (attr(mt, "response") == 1L) deparse(attr(mt, "variables")[[2L]])
    plain <- function(v) is.numeric(v) && !is.object(v) && is.null(dim(v)) && !anyNA(v)
    if (is.null(response) || !is.null(attr(mt, "offset")) || !length(vars) ||
        !all(c(response, vars) %in% names(data)) ||
        !all(vapply(vars, function(v) plain(data[[v]]), NA)) || anyNA(data[[response]]) ||
        !is.null(dim(data[[response]])))
        return(NULL)
    ## the columns themselves (whole numbers made doubles): the design
    ## routines read them where they are
    x <- plain_frame(data[vars])
    for (v in vars) if (!is.double(x[[v]])) x[[v]] <- as.double(x[[v]])
    list(x = x, y = data[[response]], terms = mt, offset = NULL, weights = NULL,
         xlevels = stats::.getXlevels(mt, mf0), contrasts = NULL, na.action = NULL,
         intercept = attr(mt, "intercept") == 1L)
}

## A sampler's formula method: the model frame, then its default method
## (`default`, called lazily so that the method is defined after it) on the
## model matrix, then the formula bookkeeping predict() and update() need.
## `offset` and `weights` are formal arguments so that they stay
## unevaluated until the model frame evaluates them in `data`.
formula_method <- function(default) {
    function(formula, data, ..., weights, offset, subset, na.action, contrasts = NULL,
             prior_covariance = NULL)
        fit_formula(default, match.call(expand.dots = FALSE), parent.frame(),
                    list(...), match.call(), contrasts, prior_covariance)
}

fit_formula <- function(default, call, env, dots, full_call, contrasts = NULL,
                        prior_covariance = NULL) {
    given <- names(call$...)
    if ("intercept" %in% given)
        stop_arg("intercept", "is for the matrix method; in a formula write y ~ x - 1 ",
                 "for a model without intercept")
    if (is_custom_model(dots$model))
        stop_arg("model", "is a custom_model(), whose data are given as x (a vector, matrix, ",
                 "data frame or list), not through a formula")
    if (is_design_file(eval(call$data, env)))
        stop_arg("data", "is a design file: give it as x, with the response as y ",
                 "(e.g. sgld(x = design_file(path), y = y))")
    formula <- eval(call$formula, env)
    bars <- if (inherits(formula, "formula")) random_bars(formula)
    if (length(bars)) check_random_fit(full_call, dots)
    else if (!is.null(prior_covariance))
        stop_arg("prior_covariance", "is the prior of random-effect terms' covariances, and ",
                 "the formula has no such term, (1 | g) or (x | g)")
    frame <- formula_frame(call, env, call$offset, call$weights, contrasts, bars)
    dots$offset <- frame$offset
    dots$weights <- frame$weights
    if (!is.null(dots$keep)) dots$keep <- keep_model_matrix(dots$keep, frame)
    ## (the random effects reach fit_chains() past the matrix method's
    ## arguments, as the$data_only does)
    the$random <- frame$random
    if (!is.null(the$random)) attr(the$random, "prior") <- check_prior_covariance(prior_covariance)
    on.exit(the$random <- NULL, add = TRUE)
    fit <- do.call(default, c(list(frame$x, frame$y), dots, list(intercept = frame$intercept)))
    if (inherits(fit, "sgfs_data_only")) return(fit)         # (reattach_data())
    info <- attr(fit, "sgfit")
    info$call <- generic_call(full_call)
    info$formula <- stats::formula(frame$terms)
    info[c("terms", "xlevels", "contrasts", "na.action")] <-
        frame[c("terms", "xlevels", "contrasts", "na.action")]
    attr(fit, "sgfit") <- info
    fit
}

## The design matrix: the user's matrix itself when it is already a double
## matrix with column names (the intercept stays implicit, see
## predictor_design()), else one copy; no N x P temporaries (the finiteness
## check runs in C)
design_matrix <- function(x, intercept, arg = "x", allow_na = FALSE, empty_ok = FALSE) {
    if (is_design_file(x)) {
        if (intercept)
            stop_arg(arg, "is a design file: give its rows in memory instead (e.g. ", arg,
                     " = <file>[rows, ])")
        return(file_design(x, arg, allow_na))
    }
    if (is.data.frame(x) && !intercept && length(x) &&
        all(vapply(x, function(v) is.double(v) && !is.object(v) && is.null(dim(v)), NA)))
        return(frame_design(x, arg, allow_na))
    if (is.data.frame(x)) x <- as.matrix(x)
    if (inherits(x, "sparseMatrix"))
        return(sparse_design_matrix(x, intercept, arg, allow_na, empty_ok))
    if (inherits(x, "Matrix")) x <- dense_copy(x, arg)
    if (!is.matrix(x) || !is.numeric(x))
        stop_arg(arg, "must be a numeric matrix (or use the formula interface)")
    ## (in C for a double matrix: no N-vector per column)
    bad <- if (is.double(x)) .Call(C_sgfs_first_bad_column, x, allow_na) > 0L
           else if (allow_na) any(is.infinite(x)) else anyNA(x)
    if (bad) stop_arg(arg, "has missing or non-finite values (the formula interface applies na.action)")
    names_x <- design_names(x)
    if (intercept) {
        x <- cbind(1, x)
        names_x <- c("(Intercept)", names_x)
    } else if (!is.double(x)) storage.mode(x) <- "double"
    if (length(names_x) && !identical(colnames(x), names_x)) colnames(x) <- names_x
    if (ncol(x) == 0L && !empty_ok) stop_arg("x", "has no columns")
    x
}

## a data frame of double columns as a design, as it is: the engine's C
## routines read its columns where they are (src/design_copy.c), never
## bound into a matrix
frame_design <- function(x, arg, allow_na) {
    x <- plain_frame(x)
    if (.Call(C_sgfs_first_bad_column, x, allow_na) > 0L)
        stop_arg(arg, "has missing or non-finite values (the formula interface applies na.action)")
    names(x) <- design_names(x)
    x
}

## a plain data.frame of the columns of x (a data frame, a tibble or a
## list), the columns themselves, not copies
plain_frame <- function(x)
    structure(as.list(x), class = "data.frame", row.names = .set_row_names(length(x[[1L]])))

## the column names of a design, x1, x2, ... where it has none
design_names <- function(x) {
    names_x <- colnames(x)
    if (is.null(names_x))              # (paste0("x", integer(0)) is "x")
        names_x <- if (ncol(x)) paste0("x", seq_len(ncol(x))) else character(0)
    names_x
}

## a sparse Matrix (e.g. from read_libsvm()) as a double dgCMatrix, which
## the engine keeps as compressed rows without densifying it
sparse_design_matrix <- function(x, intercept, arg, allow_na, empty_ok = FALSE) {
    x <- tryCatch(methods::as(methods::as(methods::as(x, "CsparseMatrix"), "generalMatrix"),
                              "dMatrix"),
                  error = function(e) stop_arg(arg, "is a sparse matrix that could not be made a ",
                                               "dgCMatrix: ", conditionMessage(e)))
    bad <- if (allow_na) any(is.infinite(x@x)) else !all(is.finite(x@x))
    if (bad) stop_arg(arg, "has missing or non-finite values")
    names_x <- design_names(x)
    if (intercept) {
        x <- cbind(1, x)
        names_x <- c("(Intercept)", names_x)
    }
    if (ncol(x) == 0L && !empty_ok) stop_arg("x", "has no columns")
    dimnames(x) <- list(NULL, names_x)
    x
}

## a Matrix package matrix that is not sparse as a dense one
dense_copy <- function(x, arg) {
    gb <- 8 * as.double(nrow(x)) * ncol(x) / 2^30
    tryCatch(as.matrix(x), error = function(e)
        stop_arg(arg, sprintf("is a %s x %s Matrix whose dense copy (%.3g GB) could not be made: %s",
                              format(nrow(x), big.mark = ","), format(ncol(x), big.mark = ","),
                              gb, conditionMessage(e))))
}

default_batch_size <- function(N) {
    as.integer(min(N, max(100, min(500, ceiling(N / 100)))))
}

## The design of a GLM or a network: the model matrix, the coded response,
## the predictors (and a gaussian response) standardised.
predictor_design <- function(x, y, family, model, standardize, sigma, intercept,
                             weights = NULL) {
    ## the intercept stays implicit (lead): bound to x it would copy the data
    ## (cumulative(): the cutpoints take the intercept's place, as in polr())
    lead <- check_flag(intercept, "intercept") && !family_entry(family)$ordinal
    x <- design_matrix(x, FALSE, empty_ok = lead)
    if (family_entry(family)$ordinal && !is_design_file(x))        # (a formula's)
        x <- without_absent_intercept(x, character(0))
    N <- nrow(x)
    if (N < 2L) stop_arg("x", "needs at least two rows")
    if (is.null(y)) stop_arg("y", "is missing: give the response")
    if (NROW(y) != N)
        stop_arg("y", sprintf("has %d values but x has %d rows", NROW(y), N))
    weights <- check_weights(weights, N, family, model)
    if (is.ordered(y) && family_entry(family)$several)
        warning("the response is an ordered factor, whose order categorical() does not use: ",
                "it treats the ", nlevels(y), " levels as unordered classes (family = ",
                "cumulative() is the ordinal model)", call. = FALSE)
    response <- code_response(y, family, weighted = !is.null(weights))
    entry <- family_entry(family)
    if (!is.null(sigma)) {
        if (!isTRUE(entry$aux$location_scale))
            stop_arg("sigma", "can only be fixed for a family with a noise sd: gaussian() or student()")
        sigma <- check_positive(sigma, "sigma")
    }
    if (!is.null(model) && is.na(entry$network_output))
        stop_arg("family", sprintf("%s(link = \"%s\") is available for GLMs (model = NULL), not ",
                                   family$family, family$link),
                 "yet for networks: give mlp() ",
                 families_where(function(f) length(f$network) > 0L))
    standardize <- check_flag(standardize, "standardize")
    if (!is.null(model) && inherits(x, "Matrix")) x <- dense_copy(x, "x")   # (a network's layers are dense)
    if (!is.null(model) && is_design_file(x))
        stop_arg("x", "is a design file, which GLMs (model = NULL) sample from; a network ",
                 "(model = mlp()) needs its data in memory: x = as.matrix(<file>)")
    design <- if (is.null(model))
        prepare_design(x, response$y, family, standardize, sigma, response$levels, lead)
    else mlp_design(model, x, response$y, family, standardize, sigma, response$levels)
    ## the rows' prior weights (NULL: all 1), a binomial response's trials
    ## (NULL: one each) and its kind, for the draw-level methods; the engine
    ## weighs row i by their product
    design$weights <- weights
    design$trials <- response$trials
    design$response_kind <- response$kind
    list(design = design, levels = response$levels,
         x_names = c(if (lead) "(Intercept)", colnames(x)),
         weights = engine_weights(weights, response$trials))
}

## The engine's per-row weights (spec$weights): the prior weights times a
## binomial response's trials, or NULL when every row weighs 1 (the engine
## then runs its unweighted code, draw for draw)
engine_weights <- function(weights, trials) {
    w <- if (is.null(weights)) trials else if (is.null(trials)) weights else weights * trials
    if (is.null(w) || all(w == 1)) NULL else as.double(w)
}

## the `weights` argument: NULL or N non-negative finite numbers, not all
## zero (rows of weight 0 are kept and contribute nothing, as in glm()), for
## a GLM (every family of family_table); `model` a network or
## NULL (prepare_run() refuses a custom_model()'s weights itself)
check_weights <- function(weights, N, family, model) {
    if (is.null(weights)) return(NULL)
    if (!is.null(model))
        stop_arg("weights", "are for GLMs (model = NULL) with ",
                 families_where(function(f) TRUE), "; not for networks")
    if (!is.numeric(weights) || !is.null(dim(weights)) && NCOL(weights) != 1L ||
        length(weights) != N || anyNA(weights) || any(!is.finite(weights)) ||
        any(weights < 0))
        stop_arg("weights", sprintf(paste("must be %d non-negative finite numbers, one per row",
                                          "of the data, not %s"), N, format_value(weights)))
    if (!any(weights > 0)) stop_arg("weights", "are all zero: no row would count")
    as.double(weights)
}

## The common arguments, validated; returns the spec the engine reads and
## the pieces the fit keeps.  `family_given`: whether the user gave `family`
## (a custom model refuses it).
prepare_run <- function(x, y, family, prior, prior_intercept, batch_size,
                        n_iter, burnin, thin, chains, cores, init,
                        standardize, progress, sigma, intercept, model = NULL,
                        keep = "draws", family_given = TRUE, max_time = Inf, verbose = FALSE,
                        offset = NULL, weights = NULL, temperature = 1, thin_given = TRUE,
                        prior_aux = NULL) {
    model <- resolve_model(model)
    temperature <- check_positive(temperature, "temperature")
    custom <- is_custom_model(model)
    network <- !is.null(model) && !custom
    engine_w <- NULL
    if (custom) {
        if (!is.null(weights))
            stop_arg("weights", "are for GLMs (model = NULL) with ",
                     families_where(function(f) TRUE), "; not for a custom_model(), whose ",
                     "loglik can weigh its rows itself")
        design <- custom_design(model, x, y, family_given, sigma)
        family <- levels <- NULL
        if (!identical(keep, "draws"))
            stop_arg("keep", "must be \"draws\" for a custom_model(), which has no predictive")
    } else {
        family <- resolve_family(family)
        built <- predictor_design(x, y, family, model, standardize, sigma, intercept, weights)
        design <- built$design
        levels <- built$levels
        x <- NULL                       # (the engine's data are design$data)
        x_names <- built$x_names
        engine_w <- built$weights
    }
    N <- design$data$N
    offset <- check_offset(offset, N, family, model, keep)
    design$has_offset <- !is.null(offset)
    if (is.null(batch_size)) batch_size <- default_batch_size(N)
    batch_size <- check_count(batch_size, "batch_size", 2L, N)
    grow <- is.null(n_iter) && identical(keep, "draws")
    if (is.null(n_iter)) n_iter <- first_run
    n_iter <- check_count(n_iter, "n_iter", 1L)
    user_burnin <- !is.null(burnin)
    if (is.null(burnin)) burnin <- n_iter %/% 10L
    burnin <- check_count(burnin, "burnin", 0L, n_iter - 1L)
    thin <- check_count(thin, "thin", 1L, n_iter - burnin)
    n_keep <- (n_iter - burnin) %/% thin
    if (as.double(n_keep) * design$D > .Machine$integer.max)
        stop_arg("thin", sprintf("= %d keeps %.3g draws per chain, more than memory allows: ",
                                 thin, n_keep), "thin the chain more")
    chains <- check_count(chains, "chains", 1L, 100000L)   # (each made before any runs)
    cores <- check_count(cores, "cores", 1L)
    check_flag(progress, "progress", na_ok = TRUE)
    verbose <- check_flag(verbose, "verbose")
    if (!is.numeric(max_time) || length(max_time) != 1L || is.na(max_time) || max_time <= 0)
        stop_arg("max_time", "must be a positive number of seconds (Inf for no limit), not ",
                 format_value(max_time))

    D <- design$D
    coef_idx <- seq_len(design$n_coef)
    parts <- list()
    if (is.null(prior)) prior <- default_prior(design)
    if (network) {
        if (!is.null(prior_intercept))
            stop_arg("prior_intercept", "is for GLMs: give a network a list of priors, one per layer")
        parts <- network_prior_parts(prior, design)
    } else if (!is.null(prior_intercept)) {
        if (!is.null(design$cutpoints))
            stop_arg("prior_intercept", "is given, but cumulative() has no intercept: its ",
                     "cutpoints' prior is prior_aux = dirichlet()")
        if (!length(design$intercept))
            stop_arg("prior_intercept", "is given but the model has no intercept")
        parts$intercept <- expand_prior(prior_intercept, design$intercept,
                                        "prior_intercept", design, family)
        coef_idx <- setdiff(coef_idx, design$intercept)
    }
    if (!network) parts$coef <- expand_prior(prior, coef_idx, "prior", design, family)
    if (!is.null(design$cutpoints)) {
        parts$cutpoints <- cutpoint_prior(prior_aux, design)
    } else if (!is.null(prior_aux) && !(D > design$n_coef))
        stop_arg("prior_aux", if (is.null(family_entry(family)$aux))
                     "is the prior of a family's parameter beyond the mean (gaussian()'s sigma, neg_binomial_2()'s phi, Gamma()'s shape), which this family has not"
                 else "is the prior of a sampled parameter, and `sigma` fixes it")
    else if (D > design$n_coef) parts$sigma <- aux_prior(prior_aux, D, design, family)

    find_map <- identical(init, "map")
    if (is.null(init) || find_map) {
        theta0 <- if (!is.null(design$start)) design$start
                  else if (!is.null(design$random_init)) design$random_init() else double(D)
    } else {
        if (!is.numeric(init) || length(init) != D || any(!is.finite(init)))
            stop_arg("init", sprintf("must be \"map\" or %d finite numbers (%s), on the original scale",
                                     D, paste(design$par_names, collapse = ", ")))
        theta0 <- to_internal(as.double(init), design)
    }
    design$random_init <- NULL
    ## the engine's per-row values in its copy's order (a shuffled copy,
    ## R/data-access.R); the prior weights and trials, for the draw-level
    ## methods, stay in the user's
    o <- design$data$order
    y_engine <- if (is.null(o)) design$y else if (is.matrix(design$y)) design$y[o, , drop = FALSE]
                else design$y[o]
    if (!is.null(o) && !is.null(offset)) offset <- offset[o]
    if (!is.null(o) && !is.null(engine_w)) engine_w <- engine_w[o]
    spec <- c(list(version = .Call(C_sgfs_spec_version)), data_fields(design$data),
              list(y = y_engine,
                   model = if (custom) "custom" else if (network) "mlp" else engine_model(family),
                   mpar = design$mpar),
              ## on the internal scale: a gaussian response's is divided by its scale
              if (!is.null(offset)) list(offset = offset / design$y_scale),
              if (!is.null(engine_w)) list(weights = engine_w),
              prior_arrays(D, parts),
              list(batch_size = batch_size, burnin = burnin, thin = thin,
                   windows = batch_windows(design$data),
                   window_rows = window_rows(design$data, batch_size)),
              if (custom) list(callback = design$callback) else keep_spec(keep, x_names, design),
              ## (for the draw-level methods; the engine reads neither)
              list(prior_weights = design$weights, trials = design$trials))
    design$weighted <- !is.null(design$weights)
    ## (in the spec, whose data the fit's handle holds)
    design$data <- design$y <- design$callback <- design$weights <- design$trials <- NULL
    run <- list(spec = spec, design = design, family = family, levels = levels,
                theta0 = theta0, n_iter = n_iter, chains = chains, cores = cores,
                progress = progress, grow = grow, max_time = as.double(max_time),
                verbose = verbose, temperature = temperature,
                prior = list(coef = prior, intercept = prior_intercept, aux = prior_aux),
                find_map = find_map, user_init = !is.null(init) && !find_map,
                user_burnin = user_burnin, user_thin = thin_given,
                cache = new.env(parent = emptyenv()))
    if (!is.null(parts$coef$hs)) with_horseshoe(run, parts$coef$hs) else run
}

## the `offset` argument: NULL or N finite numbers, for a GLM with a
## linear predictor (the families whose entry says `offset`)
check_offset <- function(offset, N, family, model, keep) {
    if (is.null(offset)) return(NULL)
    if (!is.null(model) || !family_entry(family)$offset)
        stop_arg("offset", "is for GLMs (model = NULL) with ",
                 families_where(function(f) f$offset), ": it is added to the linear predictor")
    if (!identical(keep, "draws"))
        stop_arg("offset", "cannot be combined with keep = predictive(): keep the draws ",
                 "and use predict(fit, newdata)")
    if (!is.numeric(offset) || !is.null(dim(offset)) && NCOL(offset) != 1L ||
        length(offset) != N || any(!is.finite(offset)))
        stop_arg("offset", sprintf("must be %d finite numbers, one per row of the data, not %s",
                                   N, format_value(offset)))
    as.double(offset)
}

## init = "map": the start, once every argument is checked: the posterior
## mode (posterior_mode(): a GLM's exact one, a network's or custom model's
## by SGA)
resolve_start <- function(run) {
    if (isTRUE(run$find_map)) {
        run$theta0 <- posterior_mode(run, check = list(
            what = "the start (init = \"map\", found by SGA)",
            remedy = "a longer burnin to absorb it"))
        run$find_map <- FALSE
    }
    run
}

## Every chain's start: several chains of a GLM started by default (init
## NULL or "map") start from dispersed points, the mode plus draws from the
## Laplace approximation widened twice (from the user's RNG stream); else
## all at `theta0`.
chain_starts <- function(run, theta0) {
    if (run$chains == 1L || run$user_init || !laplace_available(run$design))
        return(rep(list(theta0), run$chains))
    dispersed_starts(posterior_laplace(run), run$chains, lowrank = cached_value(run, "lowrank"))
}

## Fits with the sampler `method`; `setup(run)` returns the engine's update
## rule (`engine`, `spar`), the `schedule`, the `settings` to report, and
## optionally further `spec` elements, a `start` replacing run$theta0 and
## the gradient evaluations per iteration (`evals_per_iter`), or where a
## chain's saved state counts them (`evals_counter`: its part `part` times per);
## with `pilot` (the first step) a pilot slows the coordinates whose
## gradient noise that step would let inflate them (pilot_step(), with
## `pilot_unit` the SGLD step per unit of it).
sg_fit <- function(method, setup, run, call) {
    if (the$data_only)
        return(structure(list(spec = run$spec, design = run$design), class = "sgfs_data_only"))
    ## (a matrix read in place in the engine's layout for the set-up's
    ## passes, the chains and the checks: with_engine_order())
    with_engine_order(run$spec, fit_chains(method, setup, run, call))
}
## ... with a matrix read in place in the engine's layout
fit_chains <- function(method, setup, run, call) {
    check_hs_sampler(method, run)
    t0 <- proc.time()[["elapsed"]]
    run <- resolve_start(run)
    s <- setup(run)
    if (!is.null(s$start)) run$theta0 <- s$start
    starts <- chain_starts(run, run$theta0)
    lap <- run$cache$laplace
    spar <- s$spar
    storage.mode(spar) <- "double"                   # (its names kept: the engine checks them)
    spec <- c(run$spec, list(sampler = s$engine, spar = spar,
                             schedule = s$schedule), s$spec,
              if (run$temperature != 1) list(temperature = run$temperature))
    random <- if (!is.null(the$random)) random_info(the$random, run$design)
    if (!is.null(random)) {
        spec$ranef <- random_effects_spec(spec, run, the$random, random$keep_effects)
        spec$thin <- effect_draws_thin(spec, run, length(random$names))
        ## (control variates of the first order, and no rows held in every
        ## minibatch: their centre parts would move with the effects)
        if (length(spec$fixed)) {
            s$evals_per_iter <- cv_evals(spec$batch_size, NULL)
            s$settings$fixed_rows <- 0L
        }
        spec$centre_hessian <- spec$fixed <- NULL
    }
    ## separated levels updated exactly, in the metric of the mode (R/separation.R)
    sep <- if (!is.null(lap) && !is.null(s$settings$metric) && s$settings$metric != "identity" &&
               is.null(random))
        separated_spec(run, lap, length(spec$fixed))
    if (!is.null(sep)) {
        spec <- c(spec, sep$spec)
        s$settings$separated <- sep$levels
        s$settings$separated_every <- sep$every
        if (sep$skipped > 0L) s$settings$separated_skipped <- sep$skipped
    }
    ## a cyclical schedule's cycles are fixed by n_iter: such runs do not grow
    grow <- run$grow && s$schedule[1L] != 2
    seeds <- if (run$chains > 1L) chain_seeds(run$chains) else list(NULL)
    states <- Map(function(theta, sd) list(theta = theta, iter = 0, sstate = double(0), seed = sd),
                  starts, seeds)
    if (!is.null(s$pilot)) {
        tuned <- pilot_step(spec, states, run, s$pilot,
                            if (is.null(s$pilot_unit)) 1 else s$pilot_unit)
        spec$metric <- slow_metric(spec$metric, tuned$slow)
        ## (the SGLD rules report the inflation the pilot measured; SGHMC
        ## keeps its linearised chain's, which includes the resampling)
        if (is.null(s$pilot_unit)) {
            s$settings$inflation <- tuned$inflation
            s$settings$step_5pct <- NULL
        }
        tuned$slow <- NULL
        s$settings$pilot <- tuned
    }
    if (!is.null(s$noise_rule)) {             # a network's step from its gradient noise
        tuned <- noise_step(spec, states, run, s$noise_rule$per_step,
                            if (is.null(s$noise_rule$cap)) Inf else s$noise_rule$cap,
                            isTRUE(s$noise_rule$diagonal), isTRUE(s$noise_rule$fresh_state))
        spec$schedule <- scale_schedule(spec$schedule, tuned$step / first_step(spec$schedule))
        s$settings[[if (is.null(s$noise_rule$setting)) "stepsize" else s$noise_rule$setting]] <-
            first_step(spec$schedule)
        if (!is.null(tuned$metric)) {
            spec$metric <- tuned$metric
            s$settings$metric <- noise_metric_label
        }
        s$settings$inflation <- noise_share
        s$settings$step_5pct <- tuned$step
        s$settings$pilot <- tuned$pilot
        states <- tuned$states
    }
    if (grow) {
        first <- first_stage_length(spec, states, run)
        if (first < run$n_iter) {
            if (run$verbose)
                message(sprintf("%s: %s iterations would take more than a quarter of max_time = %.3g s; the first run is shortened to %s",
                                method, big_count(run$n_iter), run$max_time, big_count(first)))
            run$n_iter <- first
            spec$burnin <- first %/% 10L
        }
    }
    setup_seconds <- proc.time()[["elapsed"]] - t0
    if (grow && run$verbose)
        message(sprintf(paste0("%s: set-up %.3g s%s; %d chain%s of %s iterations to start, growing to %g ",
                               "bulk effective draws%s within max_time = %.3g s"),
                        method, setup_seconds,
                        if (is.null(lap)) "" else sprintf(" (the mode %.3g s)", lap$seconds),
                        run$chains, if (run$chains > 1L) "s" else "", big_count(run$n_iter),
                        enough_ess, if (run$chains > 1L) sprintf(" and R-hat <= %g", enough_rhat) else "",
                        run$max_time))
    res <- run_chains(spec, states, run$n_iter, run$progress, run$cores)
    held <- detach_data(spec)
    share_data(run$design$data_key, held$handle, spec)
    info <- list(call = generic_call(call), method = method, settings = s$settings,
                 family = run$family, levels = run$levels,
                 prior = run$prior, design = run$design, spec = held$spec, handle = held$handle,
                 data_signature = data_signature(spec), precision = run$design$data_key$precision,
                 evals_per_iter = if (is.null(s$evals_per_iter)) spec$batch_size
                                  else s$evals_per_iter,
                 evals_counter = s$evals_counter,
                 chains = run$chains,
                 cores = run$cores, n_iter = 0, elapsed = 0, setup_seconds = setup_seconds,
                 laplace = if (!is.null(lap)) lap[c("mode", "log_post", "steps", "seconds")],
                 starts = states, blas = blas_label(), control = recorded_control(),
                 random = random)
    fit <- new_sgfit(info, res, checks = !grow)
    if (grow) grow_run(fit, run, started = t0) else fit
}

## the call as the user wrote it: sgfs(...) rather than sgfs.formula(...)
generic_call <- function(call) {
    call[[1L]] <- as.name(sub("\\.(formula|default)$", "", deparse(call[[1L]])))
    call
}
