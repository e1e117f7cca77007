## Priors on the covariance of a random-effect term's effects, as rstanarm's
## stan_glmer() states them (its prior_covariance argument): decov() and
## lkj(), in the engine's form of ranef_sd_prior().

#' Priors on the covariance of a mixed model's group effects
#'
#' The `prior_covariance` of a fit with random-effect terms (see
#' [sampler-arguments]), one prior for every term's covariance
#' \eqn{\Sigma = \mathrm{diag}(s)\,\Omega\,\mathrm{diag}(s)}{Sigma = diag(s) Omega diag(s)}
#' of its \eqn{q}{q} effects, as 'rstanarm''s `stan_glmer()` takes them:
#'
#' * `decov()` (the default, with its defaults): 'rstanarm''s
#'   decomposition of covariance.  The trace \eqn{\mathrm{tr}\,\Sigma = q
#'   \tau^2}{tr Sigma = q tau^2} with \eqn{\tau \sim}{tau ~}
#'   Gamma(`shape`, rate 1 / `scale`), its split over the \eqn{q}{q}
#'   variances \eqn{\pi \sim}{pi ~} Dirichlet(`concentration`), and
#'   \eqn{\Omega \sim}{Omega ~} LKJ(`regularization`).  For `gaussian()` the
#'   sds are in units of the noise sd \eqn{\sigma}{sigma} (\eqn{s_k = \sigma
#'   \tau \sqrt{q \pi_k}}{s_k = sigma tau sqrt(q pi_k)}), as in 'rstanarm'.
#' * `lkj()`: independent half Student t priors on the sds, with `df`
#'   degrees of freedom and scale `scale` (half-normal for `df = Inf`), and
#'   \eqn{\Omega \sim}{Omega ~} LKJ(`regularization`).  For `gaussian()`
#'   the scale is in units of the response's sd (the samplers' internal
#'   scale; 'rstanarm''s `autoscale = TRUE`).
#'
#' LKJ(\eqn{\zeta}{zeta}) has density proportional to
#' \eqn{\det(\Omega)^{\zeta - 1}}{det(Omega)^(zeta - 1)}: 1 is uniform over
#' correlation matrices, larger values favour weaker correlations.  The
#' samplers draw every covariance exactly from its conditional (slice
#' sampling, `vignette("internals")`, "Mixed models"), so heavy-tailed sd
#' priors are safe.  'rstanarm''s own `decov()` and `lkj()` objects are
#' taken too, with the same meaning.
#'
#' @param regularization LKJ's \eqn{\zeta > 0}{zeta > 0} on the
#'   correlations.
#' @param concentration the Dirichlet's concentration on the split of the
#'   trace over the variances, positive.
#' @param shape,scale the Gamma's shape and scale for \eqn{\tau}{tau}
#'   (`decov()`); the half Student t's scale (`lkj()`), positive.
#' @param df the half Student t's degrees of freedom, positive (`Inf`:
#'   half-normal).
#' @return An object of class `"sgfs_covariance_prior"`.
#' @seealso [prior_summary.sgfit()], [sgld()]
#' @examples
#' decov()
#' lkj(regularization = 2, scale = 1, df = 3)
#' if (requireNamespace("lme4", quietly = TRUE)) {
#'     data(sleepstudy, package = "lme4")
#'     set.seed(1)
#'     fit <- sgld(Reaction ~ Days + (Days | Subject), data = sleepstudy,
#'                 family = gaussian(), n_iter = 20000,
#'                 prior_covariance = lkj(2, scale = 1, df = 3))
#'     VarCorr(fit)
#' }
#' @name prior_covariance
NULL

#' @rdname prior_covariance
#' @export
decov <- function(regularization = 1, concentration = 1, shape = 1, scale = 1) {
    structure(list(family = "decov", zeta = positive_number(regularization, "regularization"),
                   concentration = positive_number(concentration, "concentration"),
                   shape = positive_number(shape, "shape"), scale = positive_number(scale, "scale")),
              class = "sgfs_covariance_prior")
}

#' @rdname prior_covariance
#' @export
lkj <- function(regularization = 1, scale = 10, df = 1) {
    df <- positive_number(df, "df", infinite = TRUE)
    structure(list(family = if (is.finite(df)) "half_t" else "half_normal",
                   zeta = positive_number(regularization, "regularization"),
                   scale = positive_number(scale, "scale"), df = df),
              class = "sgfs_covariance_prior")
}

positive_number <- function(x, arg, infinite = FALSE) {
    if (!is.numeric(x) || length(x) != 1L || is.na(x) || !(x > 0) || (!infinite && !is.finite(x)))
        stop_arg(arg, "must be a positive number", if (infinite) " (or Inf)", ", not ",
                 format_value(x))
    as.double(x)
}

#' @export
print.sgfs_covariance_prior <- function(x, ...) {
    cat(covariance_prior_label(x), "\n")
    invisible(x)
}

## the prior as a call: decov(1, 1, 1, 1), lkj(1, 10, 1)
covariance_prior_label <- function(p) {
    f <- function(v) format(v, digits = 4)
    if (p$family == "decov")
        sprintf("decov(regularization = %s, concentration = %s, shape = %s, scale = %s)",
                f(p$zeta), f(p$concentration), f(p$shape), f(p$scale))
    else sprintf("lkj(regularization = %s, scale = %s, df = %s)", f(p$zeta), f(p$scale),
                 f(if (p$family == "half_normal") Inf else p$df))
}

## the prior_covariance argument checked: NULL for decov()'s defaults
check_prior_covariance <- function(p) {
    if (is.null(p)) return(decov())
    ## (rstanarm's decov() and lkj() are plain lists, their numbers on the
    ## same scales)
    if (is.list(p) && !inherits(p, "sgfs_covariance_prior") && identical(p$dist, "decov"))
        return(decov(p$regularization, p$concentration, p$shape, p$scale))
    if (is.list(p) && !inherits(p, "sgfs_covariance_prior") && identical(p$dist, "lkj"))
        return(lkj(p$regularization, p$scale, p$df))
    if (!inherits(p, "sgfs_covariance_prior"))
        stop_arg("prior_covariance", "must be decov() or lkj() (or NULL for decov()), not ",
                 format_value(p))
    p
}
