## prior_summary(): every prior a fit used, per parameter, on the engine's
## internal scale and on the scale of the reported draws.

#' Summary of the priors a fit used
#'
#' The method for the 'rstantools' generic `prior_summary()` (registered when
#' 'rstantools' loads; call `rstantools::prior_summary(fit)`): the prior of
#' every parameter, as the sampler used it.  The samplers apply the priors
#' on their internal scale: with `standardize = TRUE` (the default) the
#' predictors are centred and scaled to unit standard deviation, and for
#' `gaussian()` the response too (see [normal()]).  The draws are reported on
#' the original scale, where the same prior is (an rstanarm prior object,
#' whose numbers are on this scale, is converted to the internal one: see
#' [normal()]), for a coefficient
#' \eqn{\beta_j = a_j \beta^*_j}{beta_j = a_j beta*_j} (\eqn{a_j}{a_j} the
#' response's sd over the predictor's, or 1 over the predictor's sd), the
#' same distribution with location and scale multiplied by \eqn{a_j}{a_j}.
#' An intercept's prior on that scale is that of the intercept at the
#' predictors' means (the internal intercept, shifted and scaled to the
#' response's units), which the sampler's prior constrains; the reported
#' intercept, at predictors 0, also moves with the slopes.
#'
#' Rows: the intercept(s), the coefficients, a network's weights and biases
#' layer by layer (for which the scale of the draws differs from the
#' internal one only in the output layer of a `gaussian()` network, on the
#' response's scale), `log_sigma` (the `gaussian()` noise sd's log, prior
#' `normal(0, 5)` on the internal scale, i.e. centred at the log of the
#' response's sd), or a [custom_model()]'s parameters (not standardised);
#' with a horseshoe, [hs()], its coefficients' rows show `hs(df, global
#' scale, slab scale)` with both scales times the coefficient's factor on
#' each scale (a prior `hs(df, g, s)` on the internal scale is, for the draws
#' of a coefficient \eqn{a_j}{a_j} times the internal one, `hs(df, a_j g,
#' a_j s)`), and rows for its scales follow (group `"horseshoe"`): the
#' `half_student_t` priors of each `hs_lambda[name]` and `hs_tau`, and
#' `slab(slab_df, slab_scale)`, the Inv-Gamma(slab_df / 2, slab_df
#' slab_scale^2 / 2) prior of `hs_c`'s square.
#' Whether a parameter's prior is the package's default (`prior = NULL`:
#' `normal(0, 2.5)`, or `normal_gamma(1/sqrt(fan-in))` per layer of a network;
#' `log_sigma`'s) is recorded in the column `default`.
#'
#' @param object a fit of [sgfs()], [sgld()] or another sampler.
#' @param x a `sgfs_prior_summary`.
#' @param digits significant digits to print.
#' @param ... unused.
#' @return An object of class `sgfs_prior_summary`: a list with `table`, a
#'   data frame with one row per parameter and the columns `parameter`,
#'   `group`, `prior` (`"normal"`, `"laplace"`, `"student_t"`,
#'   `"cauchy"`, or with a horseshoe `"hs"`, `"half_student_t"` and
#'   `"slab"`), `df` (a Student t's degrees of freedom, else `NA`),
#'   `location`, `scale` (the internal scale), `location_original`,
#'   `scale_original` (the scale of the draws), `slab_scale`,
#'   `slab_scale_original` (a horseshoe coefficient's, else `NA`) and
#'   `default`; `covariance` (a mixed model's prior on each term's
#'   covariance, [decov()] or [lkj()], and the terms' labels);
#'   `standardized` (whether the fit standardised its data);
#'   `sigma` (a fixed `gaussian()` noise sd, or `NULL`); and `hs` (a
#'   horseshoe's settings, or `NULL`).
#' @examples
#' data(Pima.tr, package = "MASS")
#' fit <- sgfs(type ~ glu + bmi, data = Pima.tr, n_iter = 1000, batch_size = 50,
#'             prior_intercept = normal(0, 10))
#' if (requireNamespace("rstantools", quietly = TRUE))
#'     rstantools::prior_summary(fit)
#' @exportS3Method rstantools::prior_summary
prior_summary.sgfit <- function(object, ...) {
    info <- sgfit_info(object)
    d <- info$design
    spec <- info$spec
    a <- d$M$a
    group <- prior_groups(d)
    given <- info$prior
    hs <- d$hs
    Dm <- length(spec$prior_loc)                      # the model's parameters
    model <- seq_len(Dm)
    coef_default <- identical(unclass(given$coef), unclass(default_prior(d)))
    aux <- family_entry(info$family)$aux
    default <- ifelse(group %in% aux$par, is.null(given$aux),
                      (coef_default | (!is.null(hs) & group == "(Intercept)")) &
                          (group != "(Intercept)" | is.null(given$intercept)))
    if (!is.null(d$cutpoints)) default[group == "cutpoints"] <- is.null(given$aux)
    dist <- c(prior_dists(spec), rep(NA_character_, d$D - Dm))
    df <- c(if (is.null(spec$prior_df)) rep(NA_real_, Dm) else spec$prior_df,
            rep(NA_real_, d$D - Dm))
    loc <- c(spec$prior_loc, double(d$D - Dm))
    sc <- c(spec$prior_scale, rep(NA_real_, d$D - Dm))
    slab <- rep(NA_real_, d$D)
    if (!is.null(hs)) {
        ## a coefficient under the horseshoe: hs(df, global scale, slab scale),
        ## both scales times w_j (internal) and a_j w_j (draws); its scales:
        ## half Student t's and the slab, c^2 ~ Inv-Gamma(slab_df/2, slab_df slab_scale^2/2)
        p <- hs$par
        dist[hs$idx] <- "hs"
        df[hs$idx] <- p[["df"]]
        sc[hs$idx] <- hs$w * p[["global_scale"]]
        slab[hs$idx] <- hs$w * p[["slab_scale"]]
        extra <- Dm + seq_len(hs$K + 2L)
        dist[extra] <- c(rep("half_student_t", hs$K + 1L), "slab")
        df[extra] <- c(rep(p[["df"]], hs$K), p[["global_df"]], p[["slab_df"]])
        sc[extra] <- c(rep(1, hs$K), p[["global_scale"]], p[["slab_scale"]])
    }
    shift <- d$shift
    ## (a law of the parameter beyond the mean itself, prior_aux: on the
    ## draws' scale its scale times the response's, a noise sd's)
    of_scale <- dist %in% c("half_student_t", "half_cauchy", "half_normal", "exponential")
    if (any(of_scale)) {
        a[of_scale] <- if (isTRUE(aux$location_scale)) d$y_scale else 1
        shift[of_scale] <- 0
    }
    table <- data.frame(parameter = d$par_names, group = group,
                        prior = dist, df = df,
                        location = loc, scale = sc,
                        location_original = a * loc + shift,
                        scale_original = abs(a) * sc,
                        slab_scale = slab, slab_scale_original = abs(a) * slab,
                        default = default, stringsAsFactors = FALSE)
    standardized <- is.null(d$custom) &&
        (any(d$center != 0) || any(d$scale != 1) || d$y_center != 0 || d$y_scale != 1)
    fixed <- isTRUE(aux$location_scale) && !(aux$par %in% d$par_names)
    structure(list(table = table, standardized = standardized,
                   dirichlet = if (!is.null(d$cutpoints))
                       if (is.null(given$aux)) 1 else given$aux$concentration,
                   sigma = if (fixed) exp(spec$mpar[length(spec$mpar)]) * d$y_scale,
                   hs = if (!is.null(hs)) c(as.list(hs$par), rstanarm = hs$rstanarm),
                   covariance = if (!is.null(info$random))
                       list(prior = info$random$prior,
                            terms = vapply(info$random$terms, `[[`, "", "label"),
                            gaussian = isTRUE(aux$location_scale))),
              class = "sgfs_prior_summary")
}

## each parameter's prior group: (Intercept), coefficients, layer l, the
## family's parameter beyond the mean (log_sigma, log_phi), horseshoe (its
## scales), or a custom model's parameters
prior_groups <- function(d) {
    if (!is.null(d$custom)) return(rep("parameters", d$D))
    Dm <- if (is.null(d$hs)) d$D else d$hs$D_model
    group <- if (!is.null(d$network)) paste("layer", d$layer) else
        replace(rep("coefficients", d$n_coef), d$intercept, "(Intercept)")
    beyond <- d$par_names[d$n_coef + seq_len(Dm - d$n_coef)]
    if (!is.null(d$cutpoints)) beyond[] <- "cutpoints"
    c(group, beyond, rep("horseshoe", d$D - Dm))
}

#' @rdname prior_summary.sgfit
#' @export
print.sgfs_prior_summary <- function(x, digits = 3, ...) {
    tab <- x$table
    fmt <- function(v) trimws(formatC(v, digits = digits, format = "g"))
    law <- function(dist, loc, sc, slab)
        ifelse(dist == "hs", sprintf("hs(%s, %s, %s)", fmt(tab$df), fmt(sc), fmt(slab)),
               ifelse(dist == "slab", sprintf("slab(%s, %s)", fmt(tab$df), fmt(sc)),
               ifelse(dist == "exponential", sprintf("exponential(rate = %s)", fmt(1 / sc)),
               ifelse(dist == "logit_beta", sprintf("logit_beta(%s, %s)", fmt(tab$df), fmt(sc)),
                      sprintf("%s(%s%s, %s)", dist,
                              ifelse(dist %in% c("student_t", "half_student_t"),
                                     paste0(fmt(tab$df), ", "), ""), fmt(loc), fmt(sc))))))
    cat("Priors used by the sampler, as prior(location, scale) (student_t(df, location, scale))",
        if (x$standardized) ": on the internal scale (predictors centred and scaled to unit sd, a gaussian response too) and on the scale of the draws\n"
        else " (the data were not standardised: one scale)\n", sep = "")
    if (nrow(tab) <= 40L) {
        show <- data.frame(internal = law(tab$prior, tab$location, tab$scale, tab$slab_scale),
                           row.names = make.unique(tab$parameter))
        if (x$standardized)
            show$draws <- law(tab$prior, tab$location_original, tab$scale_original,
                              tab$slab_scale_original)
        show$default <- ifelse(tab$default, "default", "")
        print(show, right = FALSE)
    } else {
        groups <- unique(tab$group)
        show <- do.call(rbind, lapply(groups, function(g) {
            t <- tab[tab$group == g, ]
            range_of <- function(v) if (length(unique(v)) == 1L) fmt(v[1L])
                                    else paste(fmt(min(v)), "to", fmt(max(v)))
            data.frame(parameters = nrow(t), prior = paste(unique(t$prior), collapse = "/"),
                       df = if (all(is.na(t$df))) "" else range_of(t$df[!is.na(t$df)]),
                       location = range_of(t$location), scale = range_of(t$scale),
                       default = if (all(t$default)) "default" else "", row.names = g)
        }))
        print(show, right = FALSE)
    }
    if (any(tab$prior == "normal_gamma", na.rm = TRUE))
        cat("normal_gamma(0, s): N(0, s^2 / tau), each prior's tau ~ Gamma(shape, rate) sampled with the chain (s the base scale).\n")
    if (any(tab$group == "(Intercept)") && x$standardized)
        cat("The intercept's prior on the draws' scale is that of the intercept at the predictors' means.\n")
    if (!is.null(x$sigma)) cat(sprintf("sigma fixed at %s (no prior)\n", fmt(x$sigma)))
    if (!is.null(x$dirichlet))
        cat(sprintf(paste0("Cutpoints: dirichlet(%s) on the class probabilities at the predictors' ",
                           "means (prior_aux), sampled as the logits of its stick-breaking ",
                           "fractions, whose laws are Beta(a, b) (logit_beta(a, b): of the logit)\n"),
                    paste(fmt(x$dirichlet), collapse = ", ")))
    scale_laws <- tab$prior %in% c("half_student_t", "half_cauchy", "half_normal", "exponential")
    if (any(scale_laws))
        cat(sprintf("%s: the law is of exp(%s) itself (prior_aux), its log's density with the Jacobian\n",
                    paste(tab$parameter[scale_laws], collapse = ", "),
                    paste(tab$parameter[scale_laws], collapse = ", ")))
    if (!is.null(x$hs))
        cat(sprintf(paste0("Horseshoe%s: beta_j = z_j tau lambda~_j, z_j ~ normal(0, 1), ",
                           "lambda~_j^2 = c^2 lambda_j^2 / (c^2 + tau^2 lambda_j^2); hs(df, global scale, ",
                           "slab scale) per coefficient; lambda_j ~ half_student_t(%s, 0, 1), ",
                           "tau ~ half_student_t(%s, 0, %s), slab(df, s): c^2 ~ Inv-Gamma(df/2, df s^2/2); ",
                           "the scales' draws (hs_*) are on the internal scale\n"),
                    if (isTRUE(x$hs$rstanarm)) " (rstanarm's hs(): scales on the scale of the draws)" else "",
                    fmt(x$hs$df), fmt(x$hs$global_df), fmt(x$hs$global_scale)))
    if (!is.null(x$covariance)) {
        cv <- x$covariance
        cat(sprintf("Covariance of each random-effect term's effects (%s): %s%s\n",
                    paste0("(", cv$terms, ")", collapse = ", "), covariance_prior_label(cv$prior),
                    if (!cv$gaussian) ""
                    else if (cv$prior$family == "decov") "; the sds in units of sigma, as in rstanarm"
                    else "; the sds' scale in units of the response's sd"))
    }
    invisible(x)
}
