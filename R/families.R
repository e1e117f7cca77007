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

#' The negative binomial family: counts with more spread than Poisson's
#'
#' Negative binomial regression with the log link, in the mean and
#' reciprocal-dispersion parametrisation of 'rstanarm''s `neg_binomial_2()`
#' and `MASS::glm.nb()` ("NB2"):
#' \deqn{P(y) = \frac{\Gamma(y + \phi)}{y!\,\Gamma(\phi)}
#'   \left(\frac{\phi}{\phi + \mu}\right)^\phi
#'   \left(\frac{\mu}{\phi + \mu}\right)^y, \qquad \log\mu = x'\beta
#'   (+ \text{offset}),}{P(y) = Gamma(y + phi) / (y! Gamma(phi)) (phi / (phi + mu))^phi (mu / (phi + mu))^y, log mu = x'beta (+ offset),}
#' whose variance is \eqn{\mu + \mu^2/\phi}{mu + mu^2 / phi}: Poisson's as
#' \eqn{\phi \to \infty}{phi -> infinity}.  \eqn{\phi}{phi} (MASS's
#' `theta`, rstanarm's `reciprocal_dispersion`) is sampled with the
#' coefficients as `log_phi`, under a `normal(0, 5)` prior (rstanarm puts an
#' `exponential(1)` on \eqn{\phi}{phi} itself).  The response must be counts;
#' `weights` are frequency weights, as for `poisson()`.  For GLMs
#' (`model = NULL`); not yet for [mlp()] networks.
#'
#' @param link the link, `"log"` (the only one).
#' @return An object of class `family` for the samplers' `family` argument.
#' @references Hilbe, J. M. (2011). Negative Binomial Regression (2nd ed.).
#'   Cambridge University Press.
#' @examples
#' if (requireNamespace("MASS", quietly = TRUE)) {
#'     fit <- sgldcv(Days ~ Sex + Age + Eth + Lrn, data = MASS::quine,
#'                   family = neg_binomial_2(), n_iter = 2000)
#'     summary(fit)
#' }
#' @export
neg_binomial_2 <- function(link = "log") {
    if (!identical(link, "log"))
        stop_arg("link", "must be \"log\" for neg_binomial_2(), not ", format_value(link))
    structure(list(family = "neg_binomial_2", link = "log", linkfun = log, linkinv = exp,
                   variance = function(mu, phi) mu + mu^2 / phi),
              class = "family")
}

#' The cumulative family: ordinal regression for ordered classes
#'
#' For a factor response whose K levels are in their order (an ordered
#' factor, or a factor whose levels are listed in order), the cumulative
#' link model of `MASS::polr()` and 'rstanarm''s `stan_polr()`:
#' \deqn{P(y \le k) = F(\zeta_k - x'\beta), \qquad k = 1, \dots, K - 1,}{P(y <= k) = F(zeta_k - x'beta), k = 1, ..., K - 1,}
#' with cutpoints \eqn{\zeta_1 < \dots < \zeta_{K-1}}{zeta_1 < ... < zeta_{K-1}}
#' and \eqn{F}{F} the logistic (proportional odds) or normal distribution
#' function.  The model has no intercept (the cutpoints take its place: a
#' formula's is dropped, as polr() drops it); the draws hold the
#' coefficients and the cutpoints, named `"1|2"`, `"2|3"`, ... after the
#' levels, as polr() names them.
#'
#' The cutpoints are sampled on an unconstrained scale: the logits of the
#' stick-breaking fractions of the K class probabilities at the predictors'
#' means (\eqn{x'\beta}{x'beta} = 0 there, the predictors centred), and
#' their prior is rstanarm's: a Dirichlet law on those K probabilities,
#' `prior_aux = dirichlet(1)` (uniform over the simplex) by default.
#' `weights` are frequency weights (a row counts `w` times).  For GLMs
#' (`model = NULL`) without offsets or random-effect terms.
#'
#' @param link `"logit"` (proportional odds) or `"probit"`.
#' @return An object of class `family` for the samplers' `family` argument.
#' @references McCullagh, P. (1980). Regression models for ordinal data.
#'   Journal of the Royal Statistical Society B 42, 109-142.
#' @seealso [dirichlet()] for the cutpoints' prior.
#' @examples
#' ## satisfaction with housing, a contingency table: its counts as weights
#' if (requireNamespace("MASS", quietly = TRUE)) {
#'     fit <- sgldcv(Sat ~ Infl + Type + Cont, data = MASS::housing,
#'                   weights = Freq, family = cumulative(), n_iter = 4000)
#'     summary(fit)
#'     head(predict(fit, type = "response"))
#' }
#' @export
cumulative <- function(link = "logit") {
    if (!(is.character(link) && length(link) == 1L && link %in% c("logit", "probit")))
        stop_arg("link", "must be \"logit\" or \"probit\" for cumulative(), not ",
                 format_value(link))
    F <- if (link == "logit") stats::plogis else stats::pnorm
    structure(list(family = "cumulative", link = link,
                   linkfun = if (link == "logit") stats::qlogis else stats::qnorm,
                   linkinv = F),
              class = "family")
}

#' The Student t family: linear regression with heavy-tailed noise
#'
#' \deqn{y = x'\beta (+ \text{offset}) + \sigma\,\epsilon, \qquad \epsilon
#'   \sim t_\nu,}{y = x'beta (+ offset) + sigma e, e ~ t_nu,}
#' the robust alternative to `gaussian()` (Lange, Little and Taylor 1989):
#' rows far from the fit pull it less, with weight \eqn{(\nu + 1) / (\nu +
#' z^2)}{(nu + 1) / (nu + z^2)} at standardised residual \eqn{z}{z} where a
#' gaussian's is 1.  The degrees of freedom \eqn{\nu}{nu} are fixed
#' (`df`, 4 by default: tails heavy enough for outliers, a finite
#' variance); they are not sampled.  \eqn{\sigma}{sigma} is sampled as
#' `log_sigma` with gaussian()'s treatment: the response standardised,
#' `normal(0, 5)` on log sigma unless `prior_aux` says otherwise, or fixed
#' with `sigma =`.  `weights` are frequency weights (a row counts
#' `w` times, as in 'brms'), not gaussian()'s precisions.  For GLMs
#' (`model = NULL`) without random-effect terms.
#'
#' @param link the link, `"identity"` (the only one).
#' @param df the degrees of freedom \eqn{\nu > 0}{nu > 0}, fixed.
#' @return An object of class `family` for the samplers' `family` argument.
#' @references Lange, K. L., Little, R. J. A. and Taylor, J. M. G. (1989).
#'   Robust statistical modeling using the t distribution. Journal of the
#'   American Statistical Association 84, 881-896.
#' @examples
#' ## stack loss with its outlying runs
#' fit <- sgldcv(stack.loss ~ ., data = stackloss, family = student(df = 4),
#'               n_iter = 4000)
#' summary(fit)
#' @export
student <- function(link = "identity", df = 4) {
    if (!identical(link, "identity"))
        stop_arg("link", "must be \"identity\" for student(), not ", format_value(link))
    if (!is.numeric(df) || length(df) != 1L || !is.finite(df) || !(df > 0))
        stop_arg("df", "must be one positive finite number (the t's degrees of freedom), not ",
                 format_value(df))
    structure(list(family = "student", link = "identity", df = as.double(df),
                   linkfun = function(mu) mu, linkinv = function(eta) eta,
                   variance = function(mu) rep.int(1, length(mu))),
              class = "family")
}

## What the package knows of each family it supports, in one place (as a
## stats::family object carries its linkinv and variance): every part of
## the fitting, prediction and checking code asks a family's entry rather
## than its name.  Adding a family is an entry here and a model of the
## engine (src/model_*.c, listed in src/registry.c).
##   links       each supported link -> the engine's model (src/registry.c)
##   network     each link a network's output layer takes -> its code in
##               mlp()'s settings (src/model_mlp.c); a link without one is
##               for GLMs only
##   aux         the likelihood's parameter beyond the linear predictor, or
##               NULL: `par` its name in the draws (sampled on the log
##               scale), `name` the parameter; `location_scale` TRUE for a
##               noise sd, which `sigma` can fix, the response standardised
##               with the predictors and the sd with it; `precision_weights`
##               TRUE when a row's weight w divides its variance (gaussian:
##               sd sigma / sqrt(w)), else weights count rows
##   settings    the family's own numbers the engine reads after the aux's
##               in mpar (student(): df), or NULL
##   several     K - 1 linear predictors a row (the levels of a factor)
##   ordinal     one linear predictor and K - 1 cutpoints a row (the
##               ordered levels of a factor; no intercept)
##   classes     predict(type = "class") applies
##   offset      one linear predictor a row, to which an offset adds
##   separable   which levels can be separated (R/separation.R): "bounds"
##               (all the rows' responses at 0 or all at their trials'
##               count), "zero" (all zero counts), "classes" (with several
##               predictors: a level's rows lack a class) or "none"
##   prior_scale each link's factor on rstanarm's default scales
##   code        the response as the engine reads it (y, levels, ...)
##   ppc         pp_check()'s default bayesplot plot
##   simulate    responses drawn at the posterior draws' means
##               (posterior_predict(), R/posterior-draws.R)
family_table <- list(
    binomial = list(links = c(logit = "logistic", probit = "probit"), network = c(logit = 0),
                    aux = NULL, several = FALSE, ordinal = FALSE, classes = TRUE, offset = TRUE,
                    separable = "bounds",
                    prior_scale = c(logit = 1, probit = stats::dnorm(0) / stats::dlogis(0)),
                    code = function(y, weighted) code_binomial(y, weighted), ppc = "bars",
                    simulate = function(...) simulate_binomial(...),
                    settings = NULL),
    gaussian = list(links = c(identity = "gaussian"), network = c(identity = 1),
                    aux = list(par = "log_sigma", name = "sigma", location_scale = TRUE,
                               precision_weights = TRUE),
                    several = FALSE, ordinal = FALSE, classes = FALSE, offset = TRUE,
                    separable = "none", prior_scale = c(identity = 1),
                    code = function(y, weighted) code_gaussian(y), ppc = "dens_overlay",
                    simulate = function(...) simulate_gaussian(...),
                    settings = NULL),
    student = list(links = c(identity = "student"), network = integer(0),
                   aux = list(par = "log_sigma", name = "sigma", location_scale = TRUE,
                              precision_weights = FALSE),
                   several = FALSE, ordinal = FALSE, classes = FALSE, offset = TRUE,
                   separable = "none", prior_scale = c(identity = 1),
                   code = function(y, weighted) code_gaussian(y), ppc = "dens_overlay",
                   simulate = function(...) simulate_student(...),
                   settings = function(family) family$df),
    poisson = list(links = c(log = "poisson"), network = c(log = 3),
                   aux = NULL, several = FALSE, ordinal = FALSE, classes = FALSE, offset = TRUE,
                   separable = "zero", prior_scale = c(log = 1),
                   code = function(y, weighted) code_counts(y, "poisson()"), ppc = "bars",
                   simulate = function(...) simulate_poisson(...),
                   settings = NULL),
    neg_binomial_2 = list(links = c(log = "negbin"), network = integer(0),
                          aux = list(par = "log_phi", name = "phi", location_scale = FALSE),
                          several = FALSE, ordinal = FALSE, classes = FALSE, offset = TRUE, separable = "none",
                          prior_scale = c(log = 1),
                          code = function(y, weighted) code_counts(y, "neg_binomial_2()"),
                          ppc = "bars", simulate = function(...) simulate_negbin(...),
                          settings = NULL),
    Gamma = list(links = c(log = "gamma"), network = integer(0),
                 aux = list(par = "log_shape", name = "shape", location_scale = FALSE),
                 several = FALSE, ordinal = FALSE, classes = FALSE, offset = TRUE, separable = "none",
                 prior_scale = c(log = 1),
                 code = function(y, weighted) code_positive(y, "Gamma()"),
                 ppc = "dens_overlay", simulate = function(...) simulate_gamma(...),
                 settings = NULL),
    cumulative = list(links = c(logit = "cumulative", probit = "cumulative"),
                      network = integer(0), aux = NULL, several = FALSE, ordinal = TRUE,
                      classes = TRUE, offset = FALSE, separable = "none",
                      prior_scale = c(logit = 1, probit = 1),
                      code = function(y, weighted) code_ordinal(y), ppc = "bars",
                      simulate = function(...) simulate_categorical(...),
                      settings = function(family) match(family$link, c("logit", "probit")) - 1),
    categorical = list(links = c(softmax = "categorical"), network = c(softmax = 2),
                       aux = NULL, several = TRUE, ordinal = FALSE, classes = TRUE, offset = FALSE,
                       separable = "classes", prior_scale = c(softmax = 1),
                       code = function(y, weighted) code_categorical(y), ppc = "bars",
                       simulate = function(...) simulate_categorical(...),
                       settings = NULL))

## whether a family's response is one of K classes, a factor's levels
## (categorical(), cumulative()): K class probabilities a row
class_response <- function(family) {
    entry <- family_entry(family)
    entry$several || entry$ordinal
}

## a family object's entry (a resolved family), with its link's engine
## model, network output code (NA: GLMs only) and prior scale; for a
## custom_model() (no family: NULL) none of the family's properties
family_entry <- function(family) {
    if (is.null(family))
        return(list(aux = NULL, several = FALSE, ordinal = FALSE, classes = FALSE, offset = FALSE,
                    separable = "none", prior_scale = 1, network_output = NA, engine = NA))
    entry <- family_table[[family$family]]
    if (is.null(entry) || !(family$link %in% names(entry$links)))
        stop("internal error: family ", family$family, "(", family$link, ") has no entry")
    entry$engine <- entry$links[[family$link]]
    entry$network_output <- if (family$link %in% names(entry$network)) entry$network[[family$link]]
                            else NA
    entry$prior_scale <- entry$prior_scale[[family$link]]
    entry
}

## the entry of the family whose link the engine's model `model` is
engine_entry <- function(model) {
    for (name in names(family_table)) {
        links <- family_table[[name]]$links
        if (model %in% links)
            return(family_entry(list(family = name, link = names(links)[links == model][1L])))
    }
    NULL
}

## whether the engine's model (a GLM's or a network's spec) has a parameter
## beyond its linear predictor (a noise sd, a negative binomial's phi)
has_aux <- function(spec) !is.null(engine_entry(spec$model)$aux)

## whether a family's response is a location and a noise sd (gaussian(),
## student())
location_scale <- function(family) isTRUE(family_entry(family)$aux$location_scale)

## the noise's variance over sigma^2 for a location-scale family: 1 for
## gaussian(), df / (df - 2) for student() (Inf for df <= 2)
noise_variance_factor <- function(family) {
    if (!identical(family$family, "student")) return(1)
    if (family$df > 2) family$df / (family$df - 2) else Inf
}

## whether a row's weight is its precision (gaussian()), not a count
precision_weights <- function(family) isTRUE(family_entry(family)$aux$precision_weights)

supported_families <- function() paste0(names(family_table), "()", collapse = ", ")

## the families whose entry has `keep(entry)` TRUE, for messages:
## "binomial(), gaussian() or poisson()"
families_where <- function(keep) {
    names <- paste0(names(family_table)[vapply(family_table, keep, NA)], "()")
    if (length(names) < 2L) return(names)
    paste(paste(utils::head(names, -1L), collapse = ", "), "or", utils::tail(names, 1L))
}

resolve_family <- function(family) {
    if (is.character(family)) {
        env <- parent.frame(2)
        if (length(family) != 1L || is.na(family) ||
            !exists(family, envir = env, mode = "function"))
            stop_arg("family", "must be one of ", supported_families(), ", not ",
                     format_value(family))
        family <- get(family, mode = "function", envir = env)
    }
    ## (a function that is no family, such as gamma, fails or returns no family)
    if (is.function(family)) family <- tryCatch(family(), error = function(e) NULL)
    if (!inherits(family, "family"))
        stop_arg("family", "must be one of ", supported_families())
    entry <- family_table[[family$family]]
    if (is.null(entry))
        stop_arg("family", sprintf("'%s' is not supported: use one of %s", family$family,
                                   supported_families()))
    links <- names(entry$links)
    if (!(family$link %in% links))
        stop_arg("family", sprintf("link '%s' is not supported for %s(): use %s", family$link,
                                   family$family,
                                   paste(sprintf("%s(link = \"%s\")", family$family, links),
                                         collapse = " or ")))
    ## (stats' Gamma variance leaves out the dispersion: here mu^2 / shape)
    if (identical(family$family, "Gamma")) family$variance <- function(mu, shape) mu^2 / shape
    family
}

engine_model <- function(family) family_entry(family)$engine

## The response as doubles the engine reads, with its coding kept for
## predict.  A binomial response may also be a two-column matrix
## cbind(successes, failures) (kind "cbind": y the proportion s / (s + f),
## `trials` s + f, rows of no trial y = 0 with weight 0, as glm()) or, with
## `weighted` (the fit's weights are the trials, as glm()), proportions
## (kind "proportion"); else kind NULL, y 0/1 (or the other families').
code_response <- function(y, family, weighted = FALSE) {
    family_entry(family)$code(y, weighted)
}

## a response given as a one-column matrix: its vector
response_vector <- function(y, also = "") {
    if (is.null(dim(y))) return(y)
    if (length(dim(y)) != 2L || ncol(y) != 1L) stop_arg("y", "must be a vector", also)
    drop(y)
}

code_binomial <- function(y, weighted) {
    if (length(dim(y)) == 2L && ncol(y) == 2L) return(code_two_column(y))
    y <- response_vector(y, " or, for binomial(), a two-column matrix cbind(successes, failures)")
    levels <- NULL
    if (is.factor(y)) {
        if (nlevels(y) != 2L)
            stop_arg("y", sprintf("is %s with %d levels; binomial() needs two%s",
                                  if (is.ordered(y)) "an ordered factor" else "a factor",
                                  nlevels(y), if (nlevels(y) <= 2L) ""
                                  else if (is.ordered(y))
                                      " (for ordered classes use family = cumulative())"
                                  else " (for more classes use family = categorical(), or cumulative() if they are ordered)"))
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
    list(y = as.double(y), levels = levels)
}

code_ordinal <- function(y) {
    y <- response_vector(y)
    if (!is.factor(y) || nlevels(y) < 2L || anyNA(y))
        stop_arg("y", "must be a factor whose levels are in their order (with at least two ",
                 "levels, no NA) for cumulative(): factor(y, levels = <in order>, ordered = TRUE)",
                 class_hint(y))
    list(y = as.double(as.integer(y) - 1L), levels = levels(y))
}

code_categorical <- function(y) {
    y <- response_vector(y)
    if (is.character(y)) y <- factor(y)
    if (!is.factor(y) || nlevels(y) < 2L || anyNA(y))
        stop_arg("y", "must be a factor (with at least two levels, no NA) for categorical()")
    list(y = as.double(as.integer(y) - 1L), levels = levels(y))
}

code_counts <- function(y, family_name) {
    y <- response_vector(y)
    if (is.logical(y)) y <- as.integer(y)
    if (!is.numeric(y) || anyNA(y) || any(!is.finite(y)) || any(y < 0) || any(y != round(y)))
        stop_arg("y", "must be counts (non-negative whole numbers, no NA) for ", family_name,
                 class_hint(y))
    list(y = as.double(y), levels = NULL)
}

code_positive <- function(y, family_name) {
    y <- response_vector(y)
    if (!is.numeric(y) || anyNA(y) || any(!is.finite(y)) || any(y <= 0))
        stop_arg("y", "must be positive finite numbers (no NA, no 0) for ", family_name,
                 class_hint(y))
    list(y = as.double(y), levels = NULL)
}

code_gaussian <- function(y) {
    y <- response_vector(y)
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
