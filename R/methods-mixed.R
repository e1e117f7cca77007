## The methods lme4 and rstanarm users call on a mixed model: fixef(),
## ranef(), coef() by group and VarCorr(), from the draws (posterior
## means).  The generics are nlme's, which lme4 and rstanarm re-export;
## sgfs re-exports them too.

#' Fixed effects, group effects and variance components of a mixed model
#'
#' For a fit with random-effect terms (`(1 | g)`, `(x | g)`, ...; see
#' [sampler-arguments]), the summaries 'lme4' and 'rstanarm' users call,
#' each a posterior mean over the kept draws (of all chains; 'rstanarm'
#' gives posterior medians):
#'
#' * `fixef()`: the fixed effects, a named vector (without a gaussian
#'   model's noise sd: [sigma()][stats::sigma]'s draws are the column
#'   `log_sigma`).
#' * `ranef()`: the group effects, a list with a data frame per grouping
#'   factor (a row per level, a column per coefficient that varies by it;
#'   terms of the same factor, as `(1 | g) + (0 + x | g)`, share one), and
#'   their posterior sds in the attribute `"sd"` of each, in the same shape.
#'   When the draws do not hold the effects (`sgfs_control(group_draws =
#'   FALSE)`, or more than 10,000 effects), both come from the sums over
#'   the kept draws the chains keep of each effect.
#' * `coef()`: for each grouping factor, each level's coefficients: the
#'   fixed effect plus the level's effect where a coefficient is both
#'   (lme4's `coef()`), a data frame per factor.
#' * `VarCorr()`: each term's covariance of its effects, the posterior mean
#'   of \eqn{\Sigma = \mathrm{diag}(s)\,\Omega\,\mathrm{diag}(s)}{Sigma = diag(s) Omega diag(s)}
#'   (as 'rstanarm' reports it), with its sds and correlations as
#'   attributes `stddev` and `correlation`, and for a `gaussian()` model the
#'   posterior mean of the noise sd as attribute `sc`; it prints as lme4's
#'   table.
#'
#' @param object,x a fit with random-effect terms.
#' @param sigma unused (the argument of nlme's generic).
#' @param ... unused.
#' @return `fixef()`: a named numeric vector; `ranef()`, `coef()`: a named
#'   list of data frames; `VarCorr()`: a list of covariance matrices, one
#'   per term, of class `"sgfs_varcorr"`.
#' @seealso [sgld()], [as.matrix()][sgfit-draws] for the draws (`b[...]`
#'   columns hold the group effects), [predict.sgfit()]
#' @name sgfit-mixed
#' @examples
#' if (requireNamespace("lme4", quietly = TRUE)) {
#'     data(sleepstudy, package = "lme4")
#'     set.seed(1)
#'     fit <- sgld(Reaction ~ Days + (Days | Subject), data = sleepstudy,
#'                 family = gaussian(), n_iter = 20000)
#'     fixef(fit)
#'     head(ranef(fit)$Subject)
#'     head(coef(fit)$Subject)
#'     VarCorr(fit)
#' }
NULL

#' @importFrom nlme fixef
#' @export
nlme::fixef

#' @importFrom nlme ranef
#' @export
nlme::ranef

#' @importFrom nlme VarCorr
#' @export
nlme::VarCorr

#' @rdname sgfit-mixed
#' @export
fixef.sgfit <- function(object, ...) {
    info <- mixed_info(object, "fixef()")
    d <- all_draws(object)
    colMeans(d[, fixed_names(info), drop = FALSE])
}

#' @rdname sgfit-mixed
#' @export
ranef.sgfit <- function(object, ...) {
    info <- mixed_info(object, "ranef()")
    effects <- effect_moments(object, info)
    terms <- info$random$terms
    by <- vapply(terms, `[[`, "", "name")
    out <- lapply(unique(by), function(g) {
        k <- which(by == g)
        frame <- function(what) {
            cols <- lapply(k, function(j) {
                m <- t(effects[[j]][[what]])
                dimnames(m) <- list(terms[[j]]$levels, terms[[j]]$coef)
                as.data.frame(m, check.names = FALSE)
            })
            do.call(cbind, cols)
        }
        structure(frame("mean"), sd = frame("sd"))
    })
    stats::setNames(out, unique(by))
}

## coef() of a mixed model (coef.sgfit()): per grouping factor, each
## level's fixed effects plus its effects
coef_by_group <- function(object) {
    fixed <- fixef.sgfit(object)
    lapply(ranef.sgfit(object), function(re) {
        names <- union(names(fixed), colnames(re))
        out <- matrix(0, nrow(re), length(names), dimnames = list(rownames(re), names))
        out[, names(fixed)] <- rep(fixed, each = nrow(re))
        for (cn in colnames(re)) out[, cn] <- out[, cn] + re[[cn]]
        as.data.frame(out, check.names = FALSE)
    })
}

#' @rdname sgfit-mixed
#' @export
VarCorr.sgfit <- function(x, sigma = 1, ...) {
    info <- mixed_info(x, "VarCorr()")
    d <- all_draws(x)
    terms <- info$random$terms
    columns <- random_columns(info)$terms
    out <- lapply(seq_along(terms), function(k) {
        t <- terms[[k]]
        q <- length(t$coef)
        hyper <- d[, columns[[k]]$hyper, drop = FALSE]
        sds <- hyper[, seq_len(q), drop = FALSE]
        cors <- hyper[, -seq_len(q), drop = FALSE]
        pairs <- cor_pairs(q)
        S <- diag(colMeans(sds^2), q)
        for (p in seq_len(nrow(pairs))) {
            i <- pairs[p, 1L]
            j <- pairs[p, 2L]
            S[i, j] <- S[j, i] <- mean(sds[, i] * sds[, j] * cors[, p])
        }
        dimnames(S) <- list(t$coef, t$coef)
        structure(S, stddev = sqrt(diag(S)), correlation = stats::cov2cor(S))
    })
    names(out) <- make.unique(vapply(terms, `[[`, "", "name"))
    aux <- family_entry(info$family)$aux
    sc <- if (!is.null(aux) && aux$par == "log_sigma")
        mean(draw_sigmas(info, internal_draws(d, info$design)))
    structure(out, sc = sc, class = "sgfs_varcorr")
}

#' @export
print.sgfs_varcorr <- function(x, digits = 3, ...) {
    rows <- list()
    for (g in names(x)) {
        S <- x[[g]]
        R <- attr(S, "correlation")
        q <- nrow(S)
        for (i in seq_len(q))
            rows[[length(rows) + 1L]] <- c(Groups = if (i == 1L) g else "", Name = rownames(S)[i],
                                           Std.Dev. = formatC(unname(attr(S, "stddev")[i]), digits = digits,
                                                              format = "fg", flag = "#"),
                                           Corr = if (i > 1L) paste(formatC(R[i, seq_len(i - 1L)], digits = 2,
                                                                           format = "f"), collapse = " ")
                                                  else "")
    }
    if (!is.null(attr(x, "sc")))
        rows[[length(rows) + 1L]] <- c(Groups = "Residual", Name = "",
                                       Std.Dev. = formatC(attr(x, "sc"), digits = digits,
                                                          format = "fg", flag = "#"), Corr = "")
    tab <- as.data.frame(do.call(rbind, rows), stringsAsFactors = FALSE)
    if (all(tab$Corr == "")) tab$Corr <- NULL
    cat("Posterior means of the groups' covariances:\n")
    print(tab, right = FALSE, row.names = FALSE)
    invisible(x)
}

## the fit's info, or a refusal naming the method for a fit without
## random-effect terms
mixed_info <- function(object, what) {
    info <- sgfit_info(object)
    if (is.null(info$random))
        stop(what, " is for fits with random-effect terms, (1 | g) or (x | g); this fit has none: ",
             "coef() gives its coefficients", call. = FALSE)
    info
}

## the fixed effects' names: the model's parameters but a noise parameter
fixed_names <- function(info) {
    aux <- family_entry(info$family)$aux
    setdiff(info$design$par_names, if (!is.null(aux)) aux$par)
}

## each term's effects' posterior means and sds (q x G matrices, the
## response's scale): from the draws' b[...] columns when kept, else from
## the chains' sums over their kept draws
effect_moments <- function(object, info) {
    terms <- info$random$terms
    if (info$random$keep_effects) {
        d <- all_draws(object)
        columns <- random_columns(info)$terms
        return(lapply(seq_along(terms), function(k) {
            cols <- d[, columns[[k]]$effects, drop = FALSE]
            q <- length(terms[[k]]$coef)
            list(mean = matrix(colMeans(cols), q), sd = matrix(apply(cols, 2L, stats::sd), q))
        }))
    }
    sums <- lapply(info$states, function(s) s$ranef$sums)
    n <- sum(vapply(sums, `[[`, 0, "n"))
    if (!(n > 1)) stop("the chains kept fewer than 2 draws of the group effects", call. = FALSE)
    ys <- info$random$y_scale
    lapply(seq_along(terms), function(k) {
        s1 <- Reduce(`+`, lapply(sums, function(s) s$sum[[k]]))
        s2 <- Reduce(`+`, lapply(sums, function(s) s$sum_sq[[k]]))
        m <- s1 / n
        list(mean = ys * m, sd = ys * sqrt(pmax(s2 / n - m^2, 0) * n / (n - 1)))
    })
}

## ---- predictions with the group effects --------------------------------
## A mixed model's linear predictor for row i at draw s adds to the fixed
## part sum_t z_ti' b_t,g(i),s, for the terms re.form keeps; a level the fit
## has not seen (allow_new_levels = TRUE) gets, at each draw, an effect
## drawn from N(0, Sigma_s) of that draw (one per new level, shared by its
## rows), as rstanarm and brms predict new groups.

## the fit's terms re.form keeps (indices): NULL every term, NA or ~0 none,
## else a formula of some of the fit's terms, (1 | g)
used_terms <- function(info, re.form) {
    if (is.null(info$random)) {
        if (!is.null(re.form)) stop_arg("re.form", "is for fits with random-effect terms")
        return(integer(0))
    }
    K <- length(info$random$terms)
    if (is.null(re.form)) return(seq_len(K))
    if (identical(re.form, NA) || identical(re.form, NA_real_)) return(integer(0))
    if (!inherits(re.form, "formula"))
        stop_arg("re.form", "must be NULL (every random-effect term), NA or ~0 (none), or a ",
                 "formula of some of the fit's terms, such as ~ (1 | g)")
    bars <- random_bars(re.form)
    labels <- vapply(info$random$terms, `[[`, "", "label")
    k <- match(vapply(bars, deparse1, ""), labels)
    if (anyNA(k))
        stop_arg("re.form", sprintf("has the term(s) (%s), which the fit does not have: its terms are %s",
                                    paste(vapply(bars[is.na(k)], deparse1, ""), collapse = "), ("),
                                    paste0("(", labels, ")", collapse = ", ")))
    unique(k)
}

## The rows' group effects for the chosen draws B (rows: draws, all
## columns), the terms re.form keeps (used_terms()): per term the rows'
## group (1..G, G + j for the j-th new level), Z, and per coefficient an S x
## (G + new levels) matrix of the effects (the response's scale); NULL for
## no term
random_rows <- function(info, B, newdata, re.form, allow_new_levels, caller) {
    used <- used_terms(info, re.form)
    if (!length(used)) return(NULL)
    if (!info$random$keep_effects)
        stop(caller, " needs the group effects' draws, which this fit did not keep (",
             "sgfs_control(group_draws = TRUE) keeps them): re.form = NA predicts from the ",
             "fixed effects alone", call. = FALSE)
    check_flag(allow_new_levels, "allow_new_levels")
    terms <- info$random$terms
    columns <- random_columns(info)$terms
    spec <- if (is.null(newdata)) fit_spec(info)
    lapply(used, function(k) {
        t <- terms[[k]]
        q <- length(t$coef)
        G <- length(t$levels)
        rows <- if (is.null(newdata)) {
            et <- spec$ranef$terms[[k]]
            pos <- engine_rows(spec)
            list(group = et$group[pos] + 1L, Z = matrix(et$Z, ncol = q)[pos, , drop = FALSE])
        } else random_newdata(t, as.data.frame(newdata), environment(info$terms))
        new <- unique(rows$level[is.na(rows$group)])
        if (length(new) && !allow_new_levels)
            stop_arg("newdata", sprintf("has levels of %s the fit has not seen (%s): ", t$name,
                                        paste(utils::head(new, 5L), collapse = ", ")),
                     "allow_new_levels = TRUE draws their effects from the groups' distribution")
        if (length(new)) rows$group[is.na(rows$group)] <- G + match(rows$level[is.na(rows$group)], new)
        effects <- matrix(columns[[k]]$effects, q)       # (coefficient x group)
        b <- lapply(seq_len(q), function(c) B[, effects[c, ], drop = FALSE])
        if (length(new)) {
            fresh <- new_level_effects(B[, columns[[k]]$hyper, drop = FALSE], q, length(new))
            b <- lapply(seq_len(q), function(c) cbind(b[[c]], fresh[[c]]))
        }
        list(group = rows$group, Z = rows$Z, b = b)
    })
}

## effects of `n` new levels at each draw (rows of `hyper`: the draw's sds,
## then its correlations below the diagonal, column by column): per
## coefficient an S x n matrix, drawn from N(0, Sigma_s) with R's generator
new_level_effects <- function(hyper, q, n) {
    S <- nrow(hyper)
    e <- array(stats::rnorm(S * n * q), c(S, n, q))
    if (q == 1L) return(list(matrix(hyper[, 1L] * as.vector(e[, , 1L]), S, n)))
    pairs <- cor_pairs(q)
    out <- lapply(seq_len(q), function(c) matrix(0, S, n))
    for (s in seq_len(S)) {
        Omega <- diag(q)
        Omega[pairs] <- Omega[pairs[, 2:1, drop = FALSE]] <- hyper[s, q + seq_len(nrow(pairs))]
        L <- t(chol(Omega)) * hyper[s, seq_len(q)]      # diag(sd) chol factor of Omega
        b <- L %*% t(matrix(e[s, , ], n, q))           # q x n
        for (c in seq_len(q)) out[[c]][s, ] <- b[c, ]
    }
    out
}

## the rows r's offsets at every draw: the fixed offsets (a vector of all
## rows, or NULL) plus the terms' effects (random_rows()), an S x length(r)
## matrix, or offset[r] without random part
rows_offset <- function(random, r, offset, S) {
    if (is.null(random)) return(offset[r])
    out <- if (is.null(offset)) matrix(0, S, length(r)) else matrix(rep(offset[r], each = S), S)
    for (t in random)
        for (c in seq_along(t$b))
            out <- out + t$b[[c]][, t$group[r], drop = FALSE] * rep(t$Z[r, c], each = S)
    out
}
