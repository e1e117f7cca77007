#' Prior distributions for the coefficients
#'
#' Independent priors on each coefficient, stated on the internal scale of the
#' fit: with `standardize = TRUE` (the default) the predictors are centred
#' and scaled to unit standard deviation (and, for `gaussian()`, the response
#' too; in a model without intercept nothing is centred and the scale is the
#' root mean square), so `normal(0, 2.5)` says that a one-standard-deviation
#' change of a predictor is unlikely to move the linear predictor by more
#' than about 5.  `student_t()` and `cauchy()` (a Student t with one degree
#' of freedom) have heavier tails: they shrink small coefficients like the
#' normal of the same scale but let the data move large ones far with little
#' resistance.
#'
#' The log prior and its gradient are computed in C (`src/prior.c`), once for
#' the samplers and for R.  The samplers that need a curvature of the log
#' posterior (Newton's mode finder, the metric at the mode, SGFS's
#' preconditioner, the mass matrices of [mala()] and [hmc()]) take the
#' prior's part as a positive precision: \eqn{1/s^2}{1/s^2} for `normal()`; for
#' `laplace()`, whose second derivative is 0 away from its kink,
#' \eqn{1/(2s^2)}{1/(2 s^2)}, the precision of the normal with the same variance; for
#' `student_t()`, whose second derivative turns negative in its tails
#' (\eqn{|\theta - m| > s\sqrt{\nu}}{|theta - m| > s sqrt(df)}), the exact
#' curvature \eqn{(\nu+1)(\nu s^2 - d^2)/(\nu s^2 + d^2)^2}{(df+1)(df s^2 -
#' d^2)/(df s^2 + d^2)^2} (\eqn{d = \theta - m}{d = theta - m}) where it exceeds the
#' Fisher information \eqn{(\nu+1)/((\nu+3)s^2)}{(df+1)/((df+3) s^2)}, and
#' that information elsewhere (SGFS's constant preconditioner uses the
#' information alone).  Newton's method then converges to the exact mode (its
#' gradient is exact; its line search guards the steps).
#'
#' **rstanarm's prior objects.**  `normal()`, `student_t()`, `cauchy()`,
#' `laplace()` and `hs()` of 'rstanarm' (which mask these functions when
#' 'rstanarm' is attached after 'sgfs') return plain lists; every sampler
#' takes them and gives them rstanarm's meaning.  For the first four: the
#' location and scale are on the scale of the coefficients as reported (the
#' original scale; an intercept's prior, as in rstanarm, is that of the
#' intercept at the predictors' means, in the response's units), and are
#' converted to this package's internal scale by the same linear map as the
#' draws (`prior_summary()` shows both).  `scale = NULL` is rstanarm's
#' default 2.5; with a probit link the scale is multiplied by
#' `dnorm(0) / dlogis(0)`, as rstanarm does; `autoscale = TRUE` divides the
#' scale of a coefficient by its predictor's standard deviation (predictors
#' with one value: by 1) and, for `gaussian()`, multiplies it by the
#' response's standard deviation, as rstanarm (2.21 and later) does.  With
#' `standardize = TRUE` and an intercept, `autoscale = TRUE` therefore gives
#' a slope exactly the same prior as this package's function of the same
#' name and numbers (`rstanarm::normal(0, 2.5, autoscale = TRUE)` is
#' `sgfs::normal(0, 2.5)` on every slope; an intercept's location moves by
#' the response's mean).  Refused, with an error naming the argument: the
#' other rstanarm priors (`hs_plus()`, `lasso()`, `product_normal()`, ...),
#' an rstanarm intercept prior when the predictors are not centred
#' (`standardize = FALSE` with an intercept: rstanarm's intercept is the one
#' at the predictors' means, a combination of this model's parameters), and
#' `autoscale = TRUE` for a network or a [custom_model()], whose parameters
#' have no predictor of their own.  As in this package (and unlike
#' rstanarm), `prior` applies to the intercept too when `prior_intercept` is
#' `NULL`.
#'
#' **The parameter beyond the mean.**  `exponential(rate)` (and `normal(0,
#' s)`, `student_t(df, 0, s)`, `cauchy(0, s)` read as half-laws, or
#' rstanarm's objects) is for `prior_aux`, the prior of `gaussian()`'s sigma,
#' [neg_binomial_2()]'s phi or `Gamma()`'s shape on its own scale (see
#' [rstanarm-arguments]); the sampler moves its log, whose density then
#' includes the Jacobian, and whose curvature is exact and positive.
#'
#' @param location prior location(s): a single number or one per coefficient
#'   the prior applies to.
#' @param scale prior scale(s), positive: the standard deviation for
#'   `normal()`, the scale \eqn{b}{b} of the density
#'   \eqn{\exp(-|\theta - m|/b) / (2b)}{exp(-|theta - m|/b) / (2b)} for
#'   `laplace()`, the scale \eqn{s}{s} of the Student t density
#'   \eqn{\Gamma((\nu+1)/2) / (\Gamma(\nu/2)\sqrt{\nu\pi} s)
#'   (1 + ((\theta - m)/s)^2/\nu)^{-(\nu+1)/2}}{Gamma((df+1)/2) /
#'   (Gamma(df/2) sqrt(df pi) s) (1 + ((theta - m)/s)^2/df)^(-(df+1)/2)}
#'   for `student_t()` and `cauchy()`.
#' @param df degrees of freedom \eqn{\nu}{df} of `student_t()`, positive
#'   and finite (a single number or one per coefficient); 1 is `cauchy()`.
#' @param rate the rate of `exponential()`, positive (its mean 1/rate).
#' @return An object of class `sgfs_prior`.
#' @examples
#' normal(0, 1)
#' laplace(0, 0.5)
#' student_t(3, 0, 2.5)
#' cauchy(0, 1)
#' exponential(1)
#' @export
normal <- function(location = 0, scale = 1) {
    new_prior("normal", location, scale)
}

#' @rdname normal
#' @export
laplace <- function(location = 0, scale = 1) {
    new_prior("laplace", location, scale)
}

#' @rdname normal
#' @export
student_t <- function(df = 1, location = 0, scale = 1) {
    new_prior("student_t", location, scale, df)
}

#' @rdname normal
#' @export
cauchy <- function(location = 0, scale = 1) {
    new_prior("cauchy", location, scale, 1)
}

#' @rdname normal
#' @export
exponential <- function(rate = 1) {
    rate <- check_positive(rate, "rate")
    new_prior("exponential", 0, 1 / rate)
}

#' A Dirichlet prior on the class probabilities of an ordinal model
#'
#' The prior of [cumulative()]'s cutpoints (`prior_aux`), as 'rstanarm''s
#' `prior_counts` for `stan_polr()`: a Dirichlet law with the given
#' concentration on the K class probabilities at the predictors' means
#' (where the linear predictor is 0), \eqn{p_k = F(\zeta_k) -
#' F(\zeta_{k-1})}{p_k = F(zeta_k) - F(zeta_{k-1})}.  `dirichlet(1)`, the
#' default, is uniform over the probabilities; larger values shrink them
#' towards `concentration / sum(concentration)`, as prior counts of each
#' class would.  'rstanarm''s `dirichlet()` objects are taken too.
#'
#' @param concentration one positive number for every class, or K of them.
#' @return A prior object for `prior_aux`.
#' @examples
#' if (requireNamespace("MASS", quietly = TRUE))
#'     fit <- sgldcv(Sat ~ Infl + Type + Cont, data = MASS::housing, weights = Freq,
#'                   family = cumulative(), prior_aux = dirichlet(2), n_iter = 2000)
#' @export
dirichlet <- function(concentration = 1) {
    if (!is.numeric(concentration) || !length(concentration) || anyNA(concentration) ||
        any(!is.finite(concentration)) || any(concentration <= 0))
        stop_arg("concentration", "must be positive finite numbers, not ",
                 format_value(concentration))
    structure(list(dist = "dirichlet", concentration = as.double(concentration)),
              class = "sgfs_dirichlet")
}

## The cutpoints' prior of a cumulative() model (prior_aux: NULL for
## dirichlet(1), this package's dirichlet() or rstanarm's) as logit-Beta
## laws of their stick-breaking coordinates v_k: the Dirichlet(alpha) law
## of the K class probabilities is the independent Beta(alpha_k, alpha_{k+1}
## + ... + alpha_K) laws of the fractions logistic(v_k) (src/prior.c's
## logit_beta: a in the df array, b in scale)
cutpoint_prior <- function(prior_aux, design) {
    K <- length(design$cutpoints$which) + 1L
    alpha <- if (is.null(prior_aux)) 1 else {
        if (!is.list(prior_aux) || !identical(prior_aux$dist, "dirichlet") ||
            is.null(prior_aux$concentration))
            stop_arg("prior_aux", "must be dirichlet(concentration) for cumulative(), the prior ",
                     "of the class probabilities at the predictors' means, not ",
                     format_value(prior_aux))
        prior_aux$concentration
    }
    if (!is.numeric(alpha) || !(length(alpha) %in% c(1L, K)) || any(!is.finite(alpha)) ||
        any(alpha <= 0))
        stop_arg("prior_aux", sprintf("is dirichlet() whose concentration must be one or %d ", K),
                 "positive numbers (one per class), not ", format_value(alpha))
    alpha <- rep_len(as.double(alpha), K)
    a <- alpha[-K]
    b <- rev(cumsum(rev(alpha)))[-1L]
    list(which = design$cutpoints$which, type = 6L, dist = "dirichlet", loc = 0, scale = b,
         df = a, prec = a * b / (a + b), hyper = NULL, rstanarm = FALSE)
}

## The prior of a family's parameter beyond the mean (`prior_aux`, on the
## response's scale: gaussian()'s sigma, neg_binomial_2()'s phi, Gamma()'s
## shape), for its internal coordinate u = log(v / c) (c the response's
## scale for a noise sd, else 1): NULL, the default, normal(0, 5) on u;
## else exponential(rate) (rstanarm's default law), or normal(0, s),
## student_t(df, 0, s), cauchy(0, s) as half-laws of v (src/prior.c's
## scale_t and scale_exp, Jacobian included), this package's or rstanarm's
## (whose autoscale multiplies a noise sd's scale by sd(y), as rstanarm
## does).  `which`: the coordinate.
aux_prior <- function(prior_aux, which, design, family) {
    if (is.null(prior_aux)) return(expand_prior(normal(0, 5), which, "prior"))
    location_scale <- isTRUE(family_entry(family)$aux$location_scale)
    p <- if (is.list(prior_aux) && !inherits(prior_aux, "sgfs_prior") &&
             identical(prior_aux$dist, "exponential")) {
        q <- new_prior("exponential", 0, if (is.null(prior_aux$scale)) 1 else prior_aux$scale,
                       arg = "prior_aux")
        q$autoscale <- isTRUE(prior_aux$autoscale)
        q
    } else as_sgfs_prior(prior_aux, "prior_aux")
    if (!(p$dist %in% c("normal", "student_t", "cauchy", "exponential")))
        stop_arg("prior_aux", "must be exponential(rate), or normal(0, s), student_t(df, 0, s) ",
                 "or cauchy(0, s) as a half-law, not ", p$dist, "()")
    if (length(p$location) != 1L || length(p$scale) != 1L || length(p$df) > 1L)
        stop_arg("prior_aux", "must be one law (single numbers)")
    if (p$dist != "exponential" && p$location != 0)
        stop_arg("prior_aux", sprintf("must have location 0, a half-%s law of the parameter, not %g",
                                      p$dist, p$location))
    s <- p$scale
    if (isTRUE(p$default_scale)) s <- 2.5
    if (isTRUE(p$autoscale) && location_scale) s <- s * stats::sd(design$y) * design$y_scale
    s <- s / if (location_scale) design$y_scale else 1
    df <- switch(p$dist, exponential = NA_real_, normal = Inf, p$df)
    list(which = which, type = if (p$dist == "exponential") 5L else 4L,
         dist = p$dist, loc = 0, scale = s, df = df,
         ## (the curvature at the prior's mode, for the SGFS preconditioners)
         prec = if (p$dist == "exponential") 1 else if (is.infinite(df)) 2 else 2 * df / (df + 1),
         hyper = NULL, rstanarm = isTRUE(p$rstanarm))
}

#' A normal prior whose scale is learned
#'
#' \deqn{\theta_j \mid \tau \sim N(0, s_j^2 / \tau), \qquad \tau \sim
#'   \mathrm{Gamma}(a, b),}{theta_j | tau ~ N(0, s_j^2 / tau), tau ~ Gamma(a, b),}
#' one precision multiplier \eqn{\tau}{tau} (shape \eqn{a}{a}, rate \eqn{b}{b},
#' mean \eqn{a/b}{a/b}) shared by every parameter the prior covers, sampled
#' with them: after every step of the rule \eqn{\tau}{tau} is drawn from its
#' exact conditional law \eqn{\mathrm{Gamma}(a + n/2, b + \sum_j
#' \theta_j^2 / (2 s_j^2))}{Gamma(a + n/2, b + sum_j theta_j^2 / (2 s_j^2))}
#' over the \eqn{n}{n} parameters (a Gibbs update; Neal, 1996).  For the
#' layers of an [mlp()] network, where each layer given its own
#' `normal_gamma()` learns how large its weights are (the default, with
#' \eqn{s_j = 1/\sqrt{w}}{s_j = 1/sqrt(w)} for a layer of fan-in \eqn{w}{w}).
#' Every sampler takes it ([hmc()] and [mala()] recompute the log posterior
#' after each draw of \eqn{\tau}{tau}); [sga()] and the mode a chain starts
#' from (`init = "map"`) use \eqn{\tau = 1}{tau = 1}.  The precisions' last values are in each chain's
#' state, `attr(fit, "sgfit")$states[[k]]$hyper`, one per prior.
#'
#' @param scale the base scale(s) \eqn{s_j}{s_j}, positive: one number or one
#'   per parameter the prior covers.
#' @param shape,rate the Gamma hyperprior of \eqn{\tau}{tau}, positive.
#' @return An object of class `sgfs_prior`.
#' @references Neal, R. M. (1996). Bayesian Learning for Neural Networks.
#'   Springer.
#' @examples
#' normal_gamma(scale = 0.1)
#' @export
normal_gamma <- function(scale = 1, shape = 1, rate = 1) {
    p <- new_prior("normal_gamma", 0, scale)
    p$shape <- check_positive(shape, "shape")
    p$rate <- check_positive(rate, "rate")
    p
}

new_prior <- function(dist, location, scale, df = NULL, arg = NULL) {
    bad <- function(name, ...) stop_arg(if (is.null(arg)) name else arg, ...)
    if (!is.numeric(location) || length(location) < 1L || any(!is.finite(location)))
        bad("location", "must be finite numbers", if (!is.null(arg)) " (its location)")
    if (!is.numeric(scale) || length(scale) < 1L || any(!is.finite(scale)) ||
        any(scale <= 0) || any(!is.finite(1 / scale^2)))
        bad("scale", "must be finite positive numbers (and not so small that ",
            "1/scale^2 overflows)", if (!is.null(arg)) " (its scale)")
    if (!is.null(df) && (!is.numeric(df) || length(df) < 1L || any(!is.finite(df)) ||
                         any(df <= 0)))
        bad("df", "must be finite positive numbers (a normal() is the limit df = Inf)",
            if (!is.null(arg)) " (its df)")
    structure(list(dist = dist, location = as.double(location),
                   scale = as.double(scale), df = if (!is.null(df)) as.double(df)),
              class = "sgfs_prior")
}

#' @export
print.sgfs_prior <- function(x, ...) {
    num <- function(v) paste(format(v), collapse = ", ")
    if (x$dist == "normal_gamma") {
        cat(sprintf("normal_gamma(scale = %s, shape = %g, rate = %g): N(0, scale^2 / tau), tau ~ Gamma(shape, rate)\n",
                    num(x$scale), x$shape, x$rate))
        return(invisible(x))
    }
    cat(sprintf("%s(%slocation = %s, scale = %s)%s\n", x$dist,
                if (x$dist == "student_t") sprintf("df = %s, ", num(x$df)) else "",
                num(x$location), num(x$scale),
                if (isTRUE(x$rstanarm)) sprintf(" from rstanarm, on the original scale%s",
                                                if (isTRUE(x$autoscale)) ", autoscaled" else "")
                else ""))
    invisible(x)
}

## the engine's codes of the per-coordinate priors (src/prior.c)
prior_codes <- c(normal = 0L, laplace = 1L, student_t = 2L, cauchy = 2L, hs = 3L,
                 normal_gamma = 0L)

## whether `p` is a prior: this package's, or one of rstanarm's plain lists
is_prior <- function(p) {
    inherits(p, "sgfs_prior") ||
        (is.list(p) && is.character(p$dist) && length(p$dist) == 1L)
}

## A prior argument as this package's prior: an rstanarm list becomes an
## sgfs_prior flagged `rstanarm` (its location and scale on the original
## scale, converted by expand_prior(); scale NULL for rstanarm's default)
as_sgfs_prior <- function(prior, arg) {
    if (inherits(prior, "sgfs_prior")) return(prior)
    if (!is_prior(prior))
        stop_arg(arg, "must be a prior such as normal(0, 1), laplace(0, 1), student_t(3, 0, 1) ",
                 "or cauchy(0, 1) (or one of rstanarm's), not ", format_value(prior))
    from_rstanarm(prior, arg)
}

## rstanarm's normal(), student_t() (dist "t"), cauchy() (a "t" with df 1)
## and laplace(): list(dist, df, location, scale, autoscale)
from_rstanarm <- function(prior, arg) {
    dist <- prior$dist
    known <- c(normal = "normal", t = "student_t", laplace = "laplace")
    if (!(dist %in% names(known)))
        stop_arg(arg, sprintf(paste0(
            "is rstanarm's %s prior, which sgfs does not provide: it takes rstanarm's ",
            "normal(), student_t(), cauchy() and laplace() (and sgfs's own normal(), ",
            "laplace(), student_t(), cauchy())"), dQuote(dist, FALSE)))
    loc <- prior$location
    if (is.null(loc)) loc <- 0
    if (is.numeric(loc)) loc[is.na(loc)] <- 0                 # as rstanarm
    df <- if (dist == "t") { d <- prior$df; if (is.numeric(d)) d[is.na(d)] <- 1; d }
    scale <- prior$scale
    if (is.null(scale)) scale <- 1                  # checked here; the default is set later
    p <- new_prior(if (dist == "t" && identical(as.double(df), 1)) "cauchy" else known[[dist]],
                   loc, scale, df, arg = arg)
    p$rstanarm <- TRUE
    p$default_scale <- is.null(prior$scale)
    p$autoscale <- isTRUE(prior$autoscale)
    p
}

## The per-coordinate arrays the engine reads.  `which` are the coordinates
## the prior covers; a vector prior must have one value per coordinate.
## An rstanarm prior is converted to the internal scale with the design's
## map (design$M, design$shift) and rstanarm's scale rules (family: for
## the probit link and a gaussian response's scale).
expand_prior <- function(prior, which, arg, design = NULL, family = NULL) {
    if (is_hs(prior)) return(expand_hs(prior, which, arg, design, family))
    prior <- as_sgfs_prior(prior, arg)
    k <- length(which)
    fit_len <- function(v, what) {
        if (length(v) == 1L) return(rep(v, k))
        if (length(v) != k)
            stop_arg(arg, sprintf("has %d %s values, but it applies to %d coefficients",
                                  length(v), what, k))
        v
    }
    loc <- fit_len(prior$location, "location")
    sc <- fit_len(prior$scale, "scale")
    df <- if (!is.null(prior$df)) fit_len(prior$df, "df") else rep(NA_real_, k)
    if (isTRUE(prior$rstanarm)) {
        internal <- rstanarm_to_internal(prior, which, arg, loc, sc, design, family)
        loc <- internal$loc
        sc <- internal$scale
    }
    dist <- prior$dist
    if (dist == "exponential")
        stop_arg(arg, "is exponential(), a law of a positive scale: it is for prior_aux (the ",
                 "noise sd's, dispersion's or shape's prior)")
    if (dist == "normal_gamma" && !is.null(design) && is.null(design$network))
        stop_arg(arg, "is normal_gamma(), a learned scale for the layers of a network ",
                 "(model = mlp()); give a GLM normal(), student_t() or hs()")
    list(which = which, type = rep(prior_codes[[dist]], k), dist = rep(dist, k),
         loc = loc, scale = sc, df = df,
         prec = switch(dist, normal = , normal_gamma = 1 / sc^2, laplace = 1 / (2 * sc^2),
                       (df + 1) / ((df + 3) * sc^2)),
         hyper = if (dist == "normal_gamma") c(shape = prior$shape, rate = prior$rate),
         rstanarm = isTRUE(prior$rstanarm))
}

## rstanarm's location and scale (on the original scale, its rules applied)
## on the internal scale: coordinate j of the draws is a_j theta_j + shift_j
## (a_j the diagonal of design$M; an intercept's row also holds the slopes,
## but rstanarm's intercept is the one at the predictors' means, which is
## a_j theta_j + shift_j when the design centres the predictors)
rstanarm_to_internal <- function(prior, which, arg, loc, sc, design, family) {
    if (is.null(design)) return(list(loc = loc, scale = sc))
    glm <- is.null(design$network) && is.null(design$custom)
    if (prior$default_scale) sc[] <- 2.5
    sc <- sc * family_entry(family)$prior_scale
    icpt <- which %in% design$intercept
    if (prior$autoscale) {
        if (!glm)
            stop_arg(arg, "is an rstanarm prior with autoscale = TRUE, which scales a coefficient ",
                     "by its predictor's spread: a ", if (is.null(design$custom)) "network" else
                     "custom_model()", "'s parameters have none; give autoscale = FALSE ",
                     "(the scale of the draws) or this package's prior (the internal scale)")
        if (location_scale(family)) sc <- sc * stats::sd(design$y) * design$y_scale
        slope <- which(!icpt)
        if (length(slope)) {
            col <- (which[slope] - 1L) %% design$p + 1L
            spread <- design$columns$sd[col]
            spread[!(spread > 0)] <- 1
            sc[slope] <- sc[slope] / spread
        }
    }
    if (any(icpt) && glm && all(design$center == 0)) {
        ## the predictors' means and root mean squares (on the engine's scale)
        slopes <- -design$intercept[1L]
        means <- (design$columns$mean / design$scale)[slopes]
        rms <- (sqrt(design$columns$sd^2 + design$columns$mean^2) / design$scale)[slopes]
        if (any(abs(means) > 1e-8 * (1 + rms)))
            stop_arg(arg, "is an rstanarm prior, whose intercept is the one at the predictors' ",
                     "means; with standardize = FALSE this model's intercept is the one at ",
                     "predictors 0: use standardize = TRUE (which centres the predictors, as ",
                     "rstanarm does), or this package's prior for the intercept")
    }
    a <- design$M$a[which]
    list(loc = (loc - design$shift[which]) / a, scale = sc / abs(a))
}

prior_arrays <- function(D, parts) {
    out <- list(prior_type = integer(D), prior_loc = double(D),
                prior_scale = double(D), prior_prec = double(D),
                prior_df = rep(NA_real_, D))
    hyper <- list(hyper_group = integer(D), hyper_base = rep(1, D), hyper_shape = double(0),
                  hyper_rate = double(0))
    for (p in parts) {
        out$prior_type[p$which] <- p$type
        out$prior_loc[p$which] <- p$loc
        out$prior_scale[p$which] <- p$scale
        out$prior_prec[p$which] <- p$prec
        out$prior_df[p$which] <- p$df
        if (!is.null(p$hyper)) {              # a learned scale: one more group
            hyper$hyper_group[p$which] <- length(hyper$hyper_shape) + 1L
            hyper$hyper_base[p$which] <- p$prec
            hyper$hyper_shape <- c(hyper$hyper_shape, p$hyper[["shape"]])
            hyper$hyper_rate <- c(hyper$hyper_rate, p$hyper[["rate"]])
        }
    }
    if (length(hyper$hyper_shape)) c(out, hyper) else out
}

## the spec without its learned prior scales: the base prior (tau = 1), for
## optimisers and the other fixed-prior computations
without_hyper <- function(spec) {
    spec[c("hyper_group", "hyper_base", "hyper_shape", "hyper_rate")] <- NULL
    spec
}

## the per-coordinate names of the priors in a spec (a student_t with one
## degree of freedom is a cauchy)
prior_dists <- function(spec) {
    dist <- c("normal", "laplace", "student_t", "hs", "half_student_t",
              "exponential", "logit_beta")[spec$prior_type + 1L]
    if (!is.null(spec$prior_df)) {
        dist[dist == "student_t" & spec$prior_df == 1] <- "cauchy"
        dist[dist == "half_student_t" & spec$prior_df == 1] <- "half_cauchy"
        dist[dist == "half_student_t" & is.infinite(spec$prior_df)] <- "half_normal"
    }
    if (!is.null(spec$hyper_group)) dist[spec$hyper_group > 0L] <- "normal_gamma"
    dist
}

## log prior, its gradient and positive curvature at theta (internal scale),
## computed by the engine's code (src/prior.c)
log_prior <- function(theta, spec) .Call(C_sgfs_prior_eval, spec, as.double(theta))
