## Random-effect terms of a formula, as lme4 writes them: (z | g) for
## coefficients z (a model formula's right-hand side: 1, x, 1 + x, 0 + x)
## varying by the levels of the grouping factor g, (z || g) for the same
## with independent coefficients, (z | g1/g2) for g1 and g2 nested in it
## (the terms (z | g1) and (z | g2:g1)), and any number of such terms
## (crossed factors: (1 | g1) + (1 | g2)).  The design of a term, for the
## N rows of a model frame, is its grouping factor (each row's level, one
## of G) and its N x q matrix Z of the coefficients' covariates: row i's
## linear predictor gains z_i' b_g(i), the q effects of its level.

## The samplers that fit random-effect terms (the minibatch rules; SGLD-CV
## with first-order control variates, whose centre's score follows the
## effects: src/ranef_engine.c), and the refusal of the others and of
## networks, naming what works
random_samplers <- c("sgld", "sgldcv", "psgld", "sghmc", "sgnht")
check_random_fit <- function(full_call, dots) {
    method <- sub("[.]formula$", "", sub("^.*:::?", "", deparse1(full_call[[1L]])))
    if (!(method %in% random_samplers))
        stop_arg("formula", sprintf("has random-effect terms, which %s() does not fit yet: use %s",
                                    method, paste0(random_samplers, "()", collapse = ", ")))
    if (!is.null(dots$model))
        stop_arg("model", "must be NULL (a GLM) with random-effect terms in the formula")
}

## the random-effect terms of a formula, each a `|` call (slashes and
## double bars expanded), or NULL for none
random_bars <- function(formula) {
    rhs <- formula[[length(formula)]]
    bars <- find_bars(rhs)
    if (!length(bars)) return(NULL)
    unlist(lapply(bars, expand_bar))
}

find_bars <- function(term) {
    if (!is.call(term)) return(NULL)
    head <- call_name(term)
    if (head %in% c("|", "||")) return(list(term))
    if (head == "(") return(find_bars(term[[2L]]))
    if (head %in% c("+", "-") && length(term) == 3L) return(c(find_bars(term[[2L]]), find_bars(term[[3L]])))
    if (head == "+" && length(term) == 2L) return(find_bars(term[[2L]]))
    ## (a bar anywhere else, as in x * (1 | g), is not a term lme4 knows)
    inner <- unlist(lapply(as.list(term)[-1L], find_bars))
    if (length(inner))
        stop_arg("formula", sprintf("has the random-effect term (%s) inside %s: write each ",
                                    deparse1(inner[[1L]]), deparse1(term)),
                 "random-effect term as a term of its own, (z | g)")
    NULL
}

## (z | a/b) -> (z | a) and (z | b:a) (lme4's order, whose levels read
## "b's level:a's level"); (z || g) -> a term per column of z
## ((1 | g) and (0 + x | g) for (1 + x || g))
expand_bar <- function(bar) {
    lhs <- bar[[2L]]
    groups <- expand_slash(bar[[3L]])
    out <- list()
    for (g in groups) {
        if (as.character(bar[[1L]]) == "|") {
            out[[length(out) + 1L]] <- call("|", lhs, g)
            next
        }
        tt <- stats::terms(stats::as.formula(call("~", lhs)))
        if (attr(tt, "intercept") == 1L) out[[length(out) + 1L]] <- call("|", 1, g)
        for (label in attr(tt, "term.labels"))
            out[[length(out) + 1L]] <- call("|", call("+", 0, str2lang(label)), g)
    }
    out
}

expand_slash <- function(g) {
    if (is.call(g) && identical(g[[1L]], as.name("/"))) {
        outer <- expand_slash(g[[2L]])
        inner <- g[[3L]]
        deepest <- outer[[length(outer)]]
        return(c(outer, list(call(":", inner, deepest))))
    }
    list(g)
}

## the formula without its random-effect terms (lme4's nobars): y ~ x for
## y ~ x + (1 | g); y ~ 1 when no other term is left
fixed_formula <- function(formula) {
    drop_bars <- function(term) {
        if (!is.call(term)) return(term)
        head <- call_name(term)
        if (head %in% c("|", "||")) return(NULL)
        if (head == "(" && !is.null(find_bars(term))) return(NULL)
        if (head %in% c("+", "-") && length(term) == 3L) {
            a <- drop_bars(term[[2L]])
            b <- drop_bars(term[[3L]])
            if (is.null(a)) return(if (head == "-" && !is.null(b)) call("-", b) else b)
            if (is.null(b)) return(a)
            return(call(head, a, b))
        }
        term
    }
    rhs <- drop_bars(formula[[length(formula)]])
    if (is.null(rhs)) rhs <- 1
    out <- formula
    out[[length(out)]] <- rhs
    out
}

## the formula with every bar made a `+` (lme4's subbars): its model frame
## holds every variable of the fixed and the random terms, with one
## na.action for both
frame_formula <- function(formula) {
    sub <- function(term) {
        if (!is.call(term)) return(term)
        if (call_name(term) %in% c("|", "||")) term[[1L]] <- as.name("+")
        for (k in seq_along(term)[-1L]) term[[k]] <- sub(term[[k]])
        term
    }
    formula[[length(formula)]] <- sub(formula[[length(formula)]])
    formula
}

## The design of the terms `bars` in the model frame `frame` (from
## frame_formula(); `env` the formula's environment): a list of terms, each list(term (as lme4 labels it,
## "1 + x | g"), name (the grouping factor's), group (the rows' levels,
## 1..G), levels, Z (N x q, its columns the coefficients' covariates),
## coef (their names)).  As lme4: the grouping factor is
## factor() of the bar's right-hand side (a:b the levels of a and b that
## occur together), and Z the model matrix of its left-hand side.
random_design <- function(bars, frame, env = parent.frame()) {
    lapply(bars, function(bar) {
        g <- factor(eval(bar[[3L]], frame, env))
        if (anyNA(g))
            stop_arg("formula", sprintf("has the grouping factor %s with missing values",
                                        deparse1(bar[[3L]])))
        Z <- stats::model.matrix(stats::as.formula(call("~", bar[[2L]])), frame)
        if (!ncol(Z))
            stop_arg("formula", sprintf("has the random-effect term (%s) with no coefficient",
                                        deparse1(bar)))
        list(term = deparse1(bar), name = deparse1(bar[[3L]]), group = as.integer(g),
             levels = levels(g), Z = unname(Z), coef = colnames(Z), bar = bar,
             xlev = stats::.getXlevels(stats::terms(stats::as.formula(call("~", bar[[2L]]))), frame))
    })
}

## the grouping factor's levels (1..G, NA for a level the fit has not seen)
## and Z of a term of the fit (random_info()'s terms) for new rows, as
## random_design() builds them for the fit's
random_newdata <- function(term, newdata, env) {
    g <- eval(term$bar[[3L]], newdata, env)
    if (anyNA(g))
        stop_arg("newdata", sprintf("has missing values in the grouping factor %s", term$name))
    rhs <- stats::as.formula(call("~", term$bar[[2L]]), env = env)
    frame <- stats::model.frame(rhs, newdata, xlev = term$xlev, na.action = stats::na.pass)
    Z <- stats::model.matrix(rhs, frame)
    if (!identical(colnames(Z), term$coef))
        stop_arg("newdata", sprintf("gives the term (%s) the coefficients %s, not the fit's %s",
                                    term$label, paste(colnames(Z), collapse = ", "),
                                    paste(term$coef, collapse = ", ")))
    if (anyNA(Z)) stop_arg("newdata", sprintf("has missing values in the term (%s)", term$label))
    list(group = match(as.character(g), term$levels), level = as.character(g), Z = unname(Z))
}

## The first run's thin for a mixed model whose draws hold its group
## effects (`extra` columns after the D parameters): with the run grown
## and thin not given, doubled until its kept draws hold at most
## effect_draws_values numbers, so that every stage keeps as few (the
## later stages keep no more draws than the first)
effect_draws_values <- 2.5e7
effect_draws_thin <- function(spec, run, extra) {
    thin <- spec$thin
    if (!run$grow || run$user_thin) return(thin)
    width <- length(run$design$par_names) + extra
    while ((run$n_iter - spec$burnin) %/% thin * width > effect_draws_values &&
           2L * thin <= run$n_iter - spec$burnin) thin <- 2L * thin
    thin
}

## whether the draws hold the group effects: sgfs_control(group_draws), by
## default when the terms have at most group_draws_limit effects
group_draws_limit <- 10000
keep_group_draws <- function(terms) {
    flag <- current_control()$group_draws
    if (!is.na(flag)) return(flag)
    sum(vapply(terms, function(t) length(t$coef) * length(t$levels), 0)) <= group_draws_limit
}

## a call's function name, or "" where the function is itself a call
## (splines::ns(x, 3))
call_name <- function(term) if (is.name(term[[1L]])) as.character(term[[1L]]) else ""

## a term's sds' prior in the engine's form (src/ranef_eval.c): the family's
## number, and 1 for the settings it does not have
ranef_sd_prior <- function(sd_prior) {
    num <- function(v) if (is.null(v)) 1 else as.double(v)
    prior <- list(family = match(sd_prior$family, c("half_normal", "half_t", "exponential", "decov")),
                  scale = num(sd_prior$scale), df = num(sd_prior$df), shape = num(sd_prior$shape),
                  concentration = num(sd_prior$concentration), zeta = num(sd_prior$zeta))
    if (is.na(prior$family)) stop("internal error: unknown sd prior ", sd_prior$family)
    prior
}

## The engine's form of a mixed model's terms (src/ranef_engine.c's
## spec$ranef) from random_design()'s: per term its groups' rows (0-based,
## by group), its covariates, its sds' prior and, for each coefficient also
## fixed, the internal direction along which that fixed coefficient moves
## (`dirs`: a D x q matrix per term, zero columns for the others).
## sd_prior: list(family = "half_normal" / "half_t" / "exponential" /
## "decov", scale, df, shape, concentration, zeta); dispersion: the
## internal coordinate (1-based) whose exp scales decov()'s sds (a gaussian
## model's log sigma), or 0; order: the engine's copy's row order
## (spec$order: engine row i is the user's row order[i]), or NULL;
## keep_effects: whether the draws hold every group's effects (else their
## sums over the kept draws, in the state).
ranef_engine_spec <- function(terms, D, sd_prior, dirs = NULL, offset = NULL, dispersion = 0L,
                              df = 4, order = NULL, keep_effects = TRUE) {
    if (!is.null(order)) {
        terms <- lapply(terms, function(t) {
            t$group <- t$group[order]
            t$Z <- t$Z[order, , drop = FALSE]
            t
        })
        if (!is.null(offset)) offset <- offset[order]
    }
    prior <- ranef_sd_prior(sd_prior)
    list(terms = lapply(seq_along(terms), function(k) {
        t <- terms[[k]]
        G <- length(t$levels)
        rows <- order(t$group) - 1L
        list(q = ncol(t$Z), G = G, group = t$group - 1L, Z = as.double(t$Z),
             start = c(0L, cumsum(tabulate(t$group, G))), rows = as.integer(rows),
             prior = prior,
             dir = if (is.null(dirs[[k]])) double(D * ncol(t$Z)) else as.double(dirs[[k]]))
    }), df = as.double(df), offset = if (!is.null(offset)) as.double(offset),
    dispersion = as.integer(dispersion) - 1L, keep_effects = as.integer(keep_effects),
    nests = random_nests(terms))
}

## The pairs of terms whose groups nest (each group of the inner term has
## its rows in one group of the outer, as (1 | g1/g2)'s g2:g1 in g1) and
## that share a coefficient: for each, the engine moves each outer group's
## coefficient against its inner groups' (src/ranef_engine.c), 0-based
random_nests <- function(terms) {
    out <- list()
    for (a in seq_along(terms)) for (b in seq_along(terms)) {
        outer <- terms[[a]]
        inner <- terms[[b]]
        common <- intersect(outer$coef, inner$coef)
        if (a == b || !length(common) || length(outer$levels) >= length(inner$levels)) next
        parent <- outer$group[match(seq_along(inner$levels), inner$group)]
        if (anyNA(parent) || any(outer$group != parent[inner$group])) next
        for (cn in common)
            out[[length(out) + 1L]] <- list(outer = a - 1L, inner = b - 1L,
                                            c_outer = match(cn, outer$coef) - 1L,
                                            c_inner = match(cn, inner$coef) - 1L,
                                            parent = as.integer(parent - 1L))
    }
    out
}

## spec$ranef for a fit's run (fit_chains()): the formula's terms in the
## engine's form, the prior attr(terms, "prior") on each term's covariance
## (prior_covariance: decov(), whose sds a gaussian model's sigma scales, as
## rstanarm's do, or lkj(); both on the internal scale, the response divided
## by its sd), and each coefficient that is also fixed translated along its
## internal direction; with the names and scales of the draws it adds
## (random_info()).
random_effects_spec <- function(spec, run, terms, keep_effects) {
    if (!(spec$model %in% c("logistic", "probit", "poisson", "gaussian")))
        stop_arg("family", "must be gaussian(), binomial() or poisson() with random-effect terms")
    if (!is.null(spec$hs)) stop_arg("prior", "hs() is not available with random-effect terms yet")
    design <- run$design
    D <- design$D
    ys <- if (is.null(design$y_scale)) 1 else design$y_scale
    origin <- to_internal(double(D), design)
    dirs <- lapply(terms, function(t) vapply(t$coef, function(cn) {
        j <- match(cn, design$par_names)
        if (is.na(j)) return(double(D))
        e <- double(D)
        ## (the internal change that moves every internal linear predictor
        ## by the coefficient's covariate, as the effects are on that scale)
        e[j] <- ys
        to_internal(e, design) - origin
    }, double(D)))
    ## (a fixed sigma, sigma = , leaves decov()'s d at 1 on the internal scale)
    sigma_at <- if (spec$model == "gaussian" && is.na(spec$mpar[1L])) D else 0L
    ranef <- ranef_engine_spec(terms, D, attr(terms, "prior"), dirs,
                               dispersion = if (attr(terms, "prior")$family == "decov") sigma_at else 0L,
                               order = spec$order,
                               keep_effects = keep_effects)
    ranef$offset <- spec$offset
    ranef
}

## What a fit records of its random effects (info$random): the names of
## the draws they add (per term its sds, then its correlations below the
## diagonal, column by column; then, when kept, every term's effects, group
## by group, named as rstanarm names them: "b[(Intercept) g:level]"), the
## scale of each (a gaussian model's response sd for the sds and effects, 1
## otherwise), whether the effects' draws are kept, and the terms (label,
## grouping factor's name, coefficients, levels, the bar and its factors'
## levels, to build new rows' terms)
random_info <- function(terms, design) {
    ys <- if (is.null(design$y_scale)) 1 else design$y_scale
    hyper <- unlist(lapply(terms, function(t) {
        label <- sprintf(" | %s]", t$name)
        q <- length(t$coef)
        pairs <- cor_pairs(q)
        c(paste0("sd[", t$coef, label),
          if (q > 1L) paste0("cor[", t$coef[pairs[, 2L]], ",", t$coef[pairs[, 1L]], label))
    }))
    keep <- keep_group_draws(terms)
    effects <- if (keep) unlist(lapply(terms, effect_names))
    list(names = c(hyper, effects),
         scale = c(ifelse(startsWith(hyper, "sd["), ys, 1), rep(ys, length(effects))),
         keep_effects = keep, y_scale = ys, prior = attr(terms, "prior"),
         terms = lapply(terms, function(t)
             list(label = t$term, name = t$name, coef = t$coef, levels = t$levels, bar = t$bar,
                  xlev = t$xlev)))
}

## the (row, column) of each correlation below the diagonal of a q x q
## matrix, column by column: the order of a term's cor[...] draws (and of
## src/ranef.c's sgfs_ranef_sds_cors)
cor_pairs <- function(q) {
    pairs <- which(lower.tri(diag(q)), arr.ind = TRUE)
    pairs[order(pairs[, 2L], pairs[, 1L]), , drop = FALSE]
}

## the columns of a mixed fit's draws that each term adds: its sds and
## correlations (`hyper`), and its effects (`effects`, q x G group by group,
## or none when not kept); `model` the model's parameters' and the hypers'
## (what print() and plot() show)
random_columns <- function(info) {
    q <- vapply(info$random$terms, function(t) length(t$coef), 0L)
    G <- vapply(info$random$terms, function(t) length(t$levels), 0L)
    D <- length(info$design$par_names)
    n_hyper <- q + q * (q - 1L) / 2L
    hyper_at <- D + c(0L, cumsum(n_hyper))
    effect_at <- D + sum(n_hyper) + c(0L, cumsum(q * G))
    list(model = seq_len(D + sum(n_hyper)),
         terms = lapply(seq_along(q), function(k)
             list(hyper = hyper_at[k] + seq_len(n_hyper[k]),
                  effects = if (info$random$keep_effects) effect_at[k] + seq_len(q[k] * G[k]))))
}

## a term's effects' names, group by group: "b[(Intercept) g:level]"
effect_names <- function(t)
    sprintf("b[%s %s:%s]", rep(t$coef, length(t$levels)), t$name,
            rep(t$levels, each = length(t$coef)))
