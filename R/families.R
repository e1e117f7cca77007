## Families: which likelihood the engine uses and how the response is coded.

resolve_family <- function(family) {
    if (is.character(family))
        family <- get(family, mode = "function", envir = parent.frame(2))
    if (is.function(family)) family <- family()
    if (!inherits(family, "family"))
        stop_arg("family", "must be binomial() or gaussian()")
    ok <- switch(family$family, binomial = "logit", gaussian = "identity", NA)
    if (is.na(ok))
        stop_arg("family", sprintf("'%s' is not supported: use binomial() or gaussian()",
                                   family$family))
    if (family$link != ok)
        stop_arg("family", sprintf("link '%s' is not supported for %s(): use %s(link = \"%s\")",
                                   family$link, family$family, family$family, ok))
    family
}

engine_model <- function(family) {
    switch(family$family, binomial = "logistic", gaussian = "gaussian")
}

## The response as doubles the engine reads, with its coding kept for predict.
code_response <- function(y, family) {
    if (!is.null(dim(y))) {
        if (length(dim(y)) != 2L || ncol(y) != 1L)
            stop_arg("y", "must be a vector (a two-column cbind(successes, failures) ",
                     "response is not supported)")
        y <- drop(y)
    }
    if (family$family == "binomial") {
        levels <- NULL
        if (is.factor(y)) {
            if (nlevels(y) != 2L)
                stop_arg("y", sprintf("is a factor with %d levels; binomial() needs two",
                                      nlevels(y)))
            levels <- levels(y)
            y <- as.integer(y) - 1L
        } else if (is.logical(y)) {
            y <- as.integer(y)
        }
        if (!is.numeric(y) || anyNA(y) || any(y != 0 & y != 1))
            stop_arg("y", "must be 0/1, logical or a two-level factor for binomial()")
        return(list(y = as.double(y), levels = levels))
    }
    if (!is.numeric(y) || any(!is.finite(y)))
        stop_arg("y", "must be finite numbers for gaussian()")
    list(y = as.double(y), levels = NULL)
}
