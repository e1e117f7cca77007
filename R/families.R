## Families: which likelihood the engine uses and how the response is coded.

#' The categorical family: softmax regression for K classes
#'
#' For a factor response with K levels: multinomial logistic (softmax)
#' regression, \eqn{P(y = k) \propto \exp(x'\beta_k)}{P(y = k) propto exp(x'beta_k)}, with the first level
#' as the reference class (\eqn{\beta_1 = 0}{beta_1 = 0}), so that every parameter is
#' identified by the likelihood (a full softmax would leave one direction to
#' the prior alone, and the Fisher information used by SGFS singular).  The
#' parameters are named `level:predictor`, for levels 2 to K.  `weights`
#' are frequency (case) weights, as `nnet::multinom()`'s: a table of counts
#' fits as its rows repeated.
#'
#' @return An object of class `family` for the samplers' `family` argument.
#' @examples
#' fit <- sgfs(Species ~ ., data = iris, family = categorical(),
#'             prior = normal(0, 2.5), n_iter = 2000, batch_size = 50)
#' head(predict(fit, type = "response"))
#' ## a contingency table: one row per cell, its count as the weight
#' if (requireNamespace("MASS", quietly = TRUE)) {
#'     housing <- MASS::housing
#'     fit <- sgfs(Sat ~ Infl + Type + Cont, data = housing, weights = Freq,
#'                 family = categorical(), n_iter = 2000)
#' }
#' @export
categorical <- function() {
    structure(list(family = "categorical", link = "softmax",
                   linkinv = function(eta) {
                       e <- exp(cbind(0, eta) - pmax(0, apply(eta, 1L, max)))
                       e / rowSums(e)
                   }),
              class = "family")
}

resolve_family <- function(family) {
    if (is.character(family)) {
        env <- parent.frame(2)
        if (length(family) != 1L || is.na(family) ||
            !exists(family, envir = env, mode = "function"))
            stop_arg("family", "must be binomial(), gaussian(), poisson() or categorical(), not ",
                     format_value(family))
        family <- get(family, mode = "function", envir = env)
    }
    ## (a function that is no family, such as gamma, fails or returns no family)
    if (is.function(family)) family <- tryCatch(family(), error = function(e) NULL)
    if (!inherits(family, "family"))
        stop_arg("family", "must be binomial(), gaussian(), poisson() or categorical()")
    ok <- switch(family$family, binomial = "logit", gaussian = "identity",
                 poisson = "log", categorical = "softmax", NA)
    if (is.na(ok))
        stop_arg("family", sprintf("'%s' is not supported: use binomial(), gaussian(), poisson() or categorical()",
                                   family$family))
    if (family$family == "binomial" && family$link == "probit") return(family)
    if (family$link != ok)
        stop_arg("family", sprintf("link '%s' is not supported for %s(): use %s(link = \"%s\")%s",
                                   family$link, family$family, family$family, ok,
                                   if (family$family == "binomial") " or binomial(link = \"probit\")" else ""))
    family
}

engine_model <- function(family) {
    switch(family$family,
           binomial = if (family$link == "probit") "probit" else "logistic",
           gaussian = "gaussian", poisson = "poisson", categorical = "categorical")
}

## The response as doubles the engine reads, with its coding kept for
## predict.  A binomial response may also be a two-column matrix
## cbind(successes, failures) (kind "cbind": y the proportion s / (s + f),
## `trials` s + f, rows of no trial y = 0 with weight 0, as glm()) or, with
## `weighted` (the fit's weights are the trials, as glm()), proportions
## (kind "proportion"); else kind NULL, y 0/1 (or the other families').
code_response <- function(y, family, weighted = FALSE) {
    if (!is.null(dim(y))) {
        if (family$family == "binomial" && length(dim(y)) == 2L && ncol(y) == 2L)
            return(code_two_column(y))
        if (length(dim(y)) != 2L || ncol(y) != 1L)
            stop_arg("y", "must be a vector",
                     if (family$family == "binomial") " or, for binomial(), a two-column matrix cbind(successes, failures)")
        y <- drop(y)
    }
    if (family$family == "binomial") {
        levels <- NULL
        if (is.factor(y)) {
            if (nlevels(y) != 2L)
                stop_arg("y", sprintf("is a factor with %d levels; binomial() needs two%s",
                                      nlevels(y), if (nlevels(y) > 2L)
                                          " (for more classes use family = categorical())" else ""))
            levels <- levels(y)
            y <- as.integer(y) - 1L
        } else if (is.logical(y)) {
            y <- as.integer(y)
        }
        if (weighted && is.numeric(y) && !anyNA(y) && all(y >= 0 & y <= 1) &&
            any(y != 0 & y != 1))
            return(list(y = as.double(y), levels = NULL, kind = "proportion"))
        if (!is.numeric(y) || anyNA(y) || any(y != 0 & y != 1))
            stop_arg("y", "must be 0/1, logical, a two-level factor, a two-column matrix ",
                     "cbind(successes, failures) or, with weights (the trials), proportions ",
                     "between 0 and 1 for binomial()", binomial_hint(y))
        return(list(y = as.double(y), levels = levels))
    }
    if (family$family == "categorical") {
        if (is.character(y)) y <- factor(y)
        if (!is.factor(y) || nlevels(y) < 2L || anyNA(y))
            stop_arg("y", "must be a factor (with at least two levels, no NA) for categorical()")
        return(list(y = as.double(as.integer(y) - 1L), levels = levels(y)))
    }
    if (family$family == "poisson") {
        if (is.logical(y)) y <- as.integer(y)
        if (!is.numeric(y) || anyNA(y) || any(!is.finite(y)) || any(y < 0) || any(y != round(y)))
            stop_arg("y", "must be counts (non-negative whole numbers, no NA) for poisson()",
                     class_hint(y))
        return(list(y = as.double(y), levels = NULL))
    }
    if (!is.numeric(y) || any(!is.finite(y)))
        stop_arg("y", "must be finite numbers for gaussian()", class_hint(y))
    list(y = as.double(y), levels = NULL)
}

## what a response that binomial() (the samplers' default family) refuses
## looks like it needs instead
binomial_hint <- function(y) {
    if (is.numeric(y) && anyNA(y)) return("; it has NA (remove those rows)")
    if (is.character(y))
        return("; it is character: make it a factor, or use family = categorical() for more than two classes")
    if (!is.numeric(y)) return("")
    v <- y[is.finite(y)]
    if (length(v) && all(v >= 0 & v == round(v)))
        return("; it holds counts: use family = poisson(), or family = gaussian() for a continuous response")
    "; it is continuous: use family = gaussian()"
}

## for a response of classes given to a numeric family: which family fits it
class_hint <- function(y) {
    if (!is.factor(y) && !is.character(y)) return("")
    k <- length(unique(y[!is.na(y)]))
    sprintf("; it has %d classes: use family = %s", k,
            if (k == 2L) "binomial()" else "categorical()")
}

## cbind(successes, failures): the proportions and the trials
code_two_column <- function(y) {
    if (!is.numeric(y) || anyNA(y) || any(!is.finite(y)) || any(y < 0) || any(y != round(y)))
        stop_arg("y", "cbind(successes, failures) must be non-negative whole numbers (no NA)")
    trials <- as.double(y[, 1L] + y[, 2L])
    p <- ifelse(trials > 0, y[, 1L] / pmax(trials, 1), 0)
    list(y = as.double(p), levels = NULL, trials = trials, kind = "cbind")
}
