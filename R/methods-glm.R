## The model-fit accessors of stats that glm() fits answer: fitted values,
## residuals, the formula bookkeeping, the family, sigma and credible
## intervals.

#' Model-fit accessors, as for glm fits
#'
#' The accessors of 'stats' that answer for [stats::glm()] fits, answered from the
#' posterior draws.
#'
#' * `fitted()`: the posterior mean of the expected response on the
#'   training rows (the response scale: a probability for `binomial()`, a
#'   matrix of class probabilities for `categorical()`), as
#'   `predict(fit, type = "response")` without `newdata`; rows that
#'   `na.action = na.exclude` left out are `NA`.
#' * `residuals()`: `type = "response"`, the response minus `fitted()` (for
#'   `binomial()` the response coded 0/1; for `categorical()` a matrix, the
#'   class indicators minus the fitted probabilities); `type = "pearson"`,
#'   that divided by the square root of the family's variance function at
#'   the fitted value, as [stats::residuals.glm()] does: \eqn{(y - \mu) /
#'   \sqrt{\mu (1 - \mu)}}{(y - mu) / sqrt(mu (1 - mu))} for `binomial()`,
#'   \eqn{(y - \mu) / \sqrt{\mu}}{(y - mu) / sqrt(mu)} for `poisson()`,
#'   \eqn{(y - \mu) / \sqrt{\mu + \mu^2/\phi}}{(y - mu) / sqrt(mu + mu^2 / phi)}
#'   for [neg_binomial_2()] (\eqn{\phi}{phi} its posterior mean, as
#'   `MASS::glm.nb()` takes its estimate),
#'   and \eqn{y - \mu}{y - mu} for `gaussian()` (not divided by sigma);
#'   with prior weights \eqn{w_i}{w_i}, multiplied by \eqn{\sqrt{w_i}}{sqrt(w_i)}, as
#'   glm's weighted Pearson residuals (for a `cbind(successes, failures)`
#'   response, \eqn{y}{y} is the proportion of successes and \eqn{w_i}{w_i} the
#'   trials times the prior weight).
#' * `weights()`: the prior weights as [stats::glm()] keeps them
#'   (`prior.weights`): the `weights` given (1 without), times the trials
#'   of a `cbind(successes, failures)` response.
#' * `terms()`, `model.frame()`, `model.matrix()`: those of the model
#'   formula, as for [stats::glm()].  The fit keeps only the engine's standardised
#'   copy of the data, so `model.frame()` (and with it `model.matrix()`)
#'   re-evaluates the fit's call for its data, as [stats::model.frame.lm()] does
#'   for a fit made with `model = FALSE`; it stops if those data have
#'   changed.  `model.matrix()` of a fit given a matrix `x` is that matrix
#'   (with the intercept column the fit added).
#' * `family()`: the family object the fit was made with, e.g. `binomial()`.
#' * `sigma()`: for `gaussian()`, the posterior mean of the residual
#'   standard deviation (the fixed value when `sigma` was given); for
#'   `binomial()` and `categorical()`, whose dispersion is fixed, 1.
#'   (`sigma()` of a binomial [stats::glm()] fit estimates it instead, as
#'   \eqn{\sqrt{D / (n - p)}}{sqrt(deviance / (n - p))}.)
#' * `confint()`: equal-tailed posterior credible intervals, the
#'   \eqn{(1 - level)/2}{(1 - level)/2} and \eqn{(1 + level)/2}{(1 + level)/2} quantiles of the draws (all
#'   chains pooled; [stats::quantile()], type 7).  These are posterior
#'   quantiles, not the normal approximation mean \eqn{\pm}{+-} 1.96 sd that
#'   [stats::confint.default()] would give.
#'
#' Fits of a [custom_model()] have no design, family or mean function: these
#' methods (but `confint()`) stop for them, saying so.  Networks ([mlp()])
#' have fitted values and residuals, but not when they kept only some
#' parameters' draws (`keep = predictive()`).
#'
#' @param object,x,formula a fit of [sgfs()], [sgld()] or another sampler.
#' @param type the type of residuals, `"response"` or `"pearson"`.
#' @param parm the parameters: names, or indices into the columns of
#'   `as.matrix(fit)`; all of them when missing.
#' @param level the credible level.
#' @param ... for `model.frame()`, `data`, `subset` or `na.action` to use
#'   instead of the fit's; otherwise unused.
#' @return `fitted()`, `residuals()`: a vector with one value per training
#'   row (a matrix, one column per class, for `categorical()`);
#'   `confint()`: a matrix with one row per parameter and columns named
#'   like `"2.5 %"` and `"97.5 %"`; the others as their 'stats' generics.
#' @name sgfit-glm-methods
#' @seealso [predict.sgfit()], [sgfit-methods]
#' @examples
#' data(Pima.tr, package = "MASS")
#' fit <- sgfs(type ~ glu + bmi, data = Pima.tr, n_iter = 2000, batch_size = 50)
#' head(fitted(fit))
#' head(residuals(fit, type = "pearson"))
#' confint(fit, level = 0.9)
#' family(fit)
#' g <- sgfs(mpg ~ wt + hp, data = mtcars, family = gaussian(), n_iter = 2000,
#'           batch_size = 16)
#' sigma(g)
#' head(model.matrix(g))
NULL

## stops unless the fit has a mean function and every parameter's draws
check_has_mean <- function(object, info, what) {
    if (!is.null(info$design$custom))
        stop(what, " needs the model's mean, and a custom_model() defines only its ",
             "likelihood: compute it from the draws, as.matrix(fit)", call. = FALSE)
    if (!every_parameter_kept(object, info))
        stop(what, " needs every parameter's draws, and this fit kept only those of ",
             "the monitored ones (keep = predictive())", call. = FALSE)
}

## stops unless the fit was made with a formula
check_has_formula <- function(info, what) {
    if (is.null(info$terms))
        stop(what, " needs a fit made with a formula; this one was given ",
             if (is.null(info$design$custom)) "a matrix x and a response y" else
                 "the data of a custom_model()", call. = FALSE)
}

## the training response as the fit used it: 0/1 for binomial(), the
## original scale for a standardised one (gaussian()), class indicators
## (rows x K) for a factor's levels (categorical())
training_response <- function(info) {
    spec <- fit_spec(info)
    y <- user_order(spec, spec$y)
    if (location_scale(info$family)) return(info$design$y_center + info$design$y_scale * y)
    if (!class_response(info$family)) return(y)
    out <- matrix(0, length(y), length(info$levels), dimnames = list(NULL, info$levels))
    out[cbind(seq_along(y), y + 1)] <- 1
    out
}

#' @rdname sgfit-glm-methods
#' @export
fitted.sgfit <- function(object, ...) {
    info <- sgfit_info(object)
    check_has_mean(object, info, "fitted()")
    predict_rows(object, info, NULL, NULL, "response", "none", 0.95, NULL)
}

#' @rdname sgfit-glm-methods
#' @export
residuals.sgfit <- function(object, type = c("response", "pearson"), ...) {
    type <- choose_arg(type, c("response", "pearson"), "type")
    info <- sgfit_info(object)
    check_has_mean(object, info, "residuals()")
    if (type == "pearson" && class_response(info$family))
        stop_arg("type", "\"pearson\" is for a numeric response; a ", info$family$family,
                 "() fit's residuals are the class indicators minus the fitted probabilities ",
                 "(type = \"response\")")
    mu <- fitted(object)
    r <- stats::naresid(info$na.action, training_response(info)) - mu
    if (type == "pearson") {
        ## (the negative binomial's variance at the posterior mean of phi)
        aux <- family_entry(info$family)$aux
        r <- r / sqrt(if (is.null(aux) || aux$location_scale) info$family$variance(mu)
                      else info$family$variance(mu, mean(draw_sigmas(info, internal_draws(
                          all_draws(object), info$design)))))
        w <- fit_spec(info)$weights
        if (!is.null(w)) r <- r * sqrt(stats::naresid(info$na.action, w))
    }
    r
}

#' @rdname sgfit-glm-methods
#' @export
weights.sgfit <- function(object, ...) {
    info <- sgfit_info(object)
    check_has_mean(object, info, "weights()")
    w <- fit_spec(info)$weights
    if (is.null(w)) w <- rep(1, info$spec$N)
    stats::naresid(info$na.action, w)
}

#' @rdname sgfit-glm-methods
#' @export
terms.sgfit <- function(x, ...) {
    info <- sgfit_info(x)
    check_has_formula(info, "terms()")
    info$terms
}

#' @rdname sgfit-glm-methods
#' @export
model.frame.sgfit <- function(formula, ...) {
    info <- sgfit_info(formula)
    check_has_formula(info, "model.frame()")
    call <- info$call
    mf <- call[c(1L, match(c("data", "subset", "na.action"), names(call), 0L))]
    mf$formula <- info$terms
    mf$drop.unused.levels <- TRUE
    mf[[1L]] <- quote(stats::model.frame)
    given <- list(...)[c("data", "subset", "na.action")]
    given <- given[!vapply(given, is.null, NA)]
    for (a in names(given)) mf[[a]] <- given[[a]]
    env <- environment(info$terms)
    if (is.null(env)) env <- parent.frame()
    frame <- tryCatch(eval(mf, env), error = function(e)
        stop("model.frame() re-evaluates the fit's call for its data (the fit keeps only ",
             "the engine's standardised copy), and that failed: ", conditionMessage(e),
             call. = FALSE))
    if (!length(given) && nrow(frame) != info$spec$N)
        stop(sprintf(paste0("model.frame() re-evaluates the fit's call for its data, which have ",
                            "changed since the fit: %d rows are used now, %d were then"),
                     nrow(frame), info$spec$N), call. = FALSE)
    frame
}

#' @rdname sgfit-glm-methods
#' @export
model.matrix.sgfit <- function(object, ...) {
    info <- sgfit_info(object)
    if (!is.null(info$design$custom))
        stop("model.matrix() needs a design, and a custom_model() fit has none: its data are ",
             "the model's own", call. = FALSE)
    if (is.null(info$terms)) return(training_design(info))
    stats::model.matrix(info$terms, stats::model.frame(object),
                        contrasts.arg = info$contrasts)
}

#' @rdname sgfit-glm-methods
#' @export
family.sgfit <- function(object, ...) fit_family(sgfit_info(object), "family()")

#' @rdname sgfit-glm-methods
#' @export
sigma.sgfit <- function(object, ...) {
    info <- sgfit_info(object)
    if (!location_scale(fit_family(info, "sigma()"))) return(1)
    mean(draw_sigmas(info, internal_draws(all_draws(object), info$design)))
}

## the fit's family; `what` is not defined for a custom model
fit_family <- function(info, what) {
    if (is.null(info$family))
        stop(what, " is not defined for a custom_model() fit: its likelihood is the ",
             "model's own (", model_label(info$design$custom), ")", call. = FALSE)
    info$family
}

#' @rdname sgfit-glm-methods
#' @export
confint.sgfit <- function(object, parm, level = 0.95, ...) {
    B <- all_draws(object)
    names <- colnames(B)
    parm <- if (missing(parm)) names else chosen_parameters(parm, names)
    if (!is.numeric(level) || length(level) != 1L || is.na(level) || level <= 0 || level >= 1)
        stop_arg("level", "must be a single number between 0 and 1, not ", format_value(level))
    probs <- c((1 - level) / 2, (1 + level) / 2)
    out <- vapply(parm, function(j) stats::quantile(B[, j], probs, names = FALSE), double(2L))
    out <- t(matrix(out, 2L))
    dimnames(out) <- list(parm, paste(format(100 * probs, trim = TRUE, scientific = FALSE,
                                             digits = 3), "%"))
    out
}

## `parm` of confint() (`pars` of posterior_interval()): parameter names, or
## column indices, as names
chosen_parameters <- function(parm, names, arg = "parm") {
    if (is.numeric(parm)) {
        if (!length(parm) || anyNA(parm) || any(parm != round(parm)) ||
            any(parm < 1 | parm > length(names)))
            stop_arg(arg, sprintf("must be parameter names or indices between 1 and %d, not %s",
                                  length(names), paste(format(parm), collapse = ", ")))
        return(names[parm])
    }
    if (!is.character(parm) || !length(parm))
        stop_arg(arg, "must be parameter names or indices, not ", format_value(parm))
    unknown <- setdiff(parm, names)
    if (length(unknown))
        stop_arg(arg, "names no parameter of the fit: ", paste(unknown, collapse = ", "),
                 " (the parameters are ", paste(utils::head(names, 20L), collapse = ", "),
                 if (length(names) > 20L) sprintf(", ... %d in all", length(names)), ")")
    parm
}

## rstanarm's selection of parameters: `pars` (names or indices, as
## chosen_parameters() reads them) and those whose names match one of the
## regular expressions `regex_pars`, in that order; NULL when both are NULL
chosen_pars <- function(names, pars = NULL, regex_pars = NULL) {
    if (is.null(pars) && is.null(regex_pars)) return(NULL)
    picked <- if (!is.null(pars)) chosen_parameters(pars, names, "pars")
    if (!is.null(regex_pars)) {
        if (!is.character(regex_pars) || !length(regex_pars) || anyNA(regex_pars))
            stop_arg("regex_pars", "must be regular expressions (a character vector), not ",
                     format_value(regex_pars))
        hit <- Reduce(`|`, lapply(regex_pars, grepl, x = names))
        if (!any(hit))
            stop_arg("regex_pars", "matches no parameter of the fit: ",
                     paste(regex_pars, collapse = ", "))
        picked <- unique(c(picked, names[hit]))
    }
    picked
}
