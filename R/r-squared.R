## Bayesian R^2 and LOO R^2 (Gelman, Goodrich, Gabry and Vehtari 2019), as
## rstanarm computes them, for the training rows.

#' Bayesian and leave-one-out R-squared
#'
#' `bayes_R2()` (the generic of 'rstantools'): at each draw \eqn{s}{s}, the
#' variance of the expected responses over the rows,
#' \eqn{V_s = \mathrm{var}_i(\mu_{is})}{V_s = var_i(mu_is)}, against it plus
#' the model's residual variance at that draw, \eqn{R^2_s = V_s / (V_s +
#' \sigma^2_s)}{R2_s = V_s / (V_s + sigma2_s)} (Gelman et al. 2019): the
#' noise variance for `gaussian()`, the mean over the rows of
#' \eqn{\mu(1 - \mu)}{mu (1 - mu)} for a binary response (of \eqn{m \mu (1
#' - \mu)}{m mu (1 - mu)}, the expected counts' \eqn{m \mu}{m mu} variance
#' taken over the rows, for \eqn{m}{m} trials), of \eqn{\mu}{mu} for
#' `poisson()`, of \eqn{\mu + \mu^2/\phi}{mu + mu^2/phi} for
#' [neg_binomial_2()] and of \eqn{\mu^2/\alpha}{mu^2/alpha} for
#' `Gamma(link = "log")` (shape \eqn{\alpha}{alpha}), as 'rstanarm' computes it;
#' for [student()] the noise variance \eqn{\sigma^2\nu/(\nu - 2)}{sigma^2 nu /
#' (nu - 2)} (0 for \eqn{\nu \le 2}{nu <= 2}, whose variance is infinite).
#'
#' `loo_R2()`: \eqn{1 - \mathrm{var}(y - \hat y^{loo}) /
#' \mathrm{var}(y)}{1 - var(y - yhat_loo) / var(y)}, the leave-one-out
#' predictions \eqn{\hat y^{loo}_i}{yhat_loo_i} the PSIS-weighted means of
#' the expected responses (`loo::E_loo()`), the variances over the rows
#' weighted by Bayesian bootstrap (Dirichlet(1, ..., 1)) weights: one value
#' per bootstrap draw, clipped to \[-1, 1\], as 'rstanarm' computes it.  Both
#' work in blocks of rows, as [loo.sgfit()] does; the bootstrap weights come
#' from R's generator.
#'
#' @param object a fit of [sgfs()], [sgld()] or another sampler.
#' @param draws the number of posterior draws read (see [log_lik.sgfit()]):
#'   `NULL` for up to 4,000.
#' @param re.form for a mixed model, the group effects included (see
#'   [posterior_epred.sgfit()]).
#' @param n_boot for `loo_R2()`: the number of Bayesian bootstrap draws.
#' @param ... unused.
#' @return A vector: `bayes_R2()` one value per posterior draw, `loo_R2()`
#'   one per bootstrap draw.
#' @references Gelman, A., Goodrich, B., Gabry, J. and Vehtari, A. (2019).
#'   R-squared for Bayesian regression models. The American Statistician
#'   73(3), 307-309.
#' @name sgfit-r2
#' @examples
#' data(Pima.tr, package = "MASS")
#' fit <- sgfs(type ~ glu + bmi, data = Pima.tr, n_iter = 2000, batch_size = 50, seed = 1)
#' if (requireNamespace("rstantools", quietly = TRUE)) {
#'     r2 <- rstantools::bayes_R2(fit)
#'     c(median = median(r2), quantile(r2, c(0.05, 0.95)))
#'     if (requireNamespace("loo", quietly = TRUE)) median(rstantools::loo_R2(fit))
#' }
NULL

#' @rdname sgfit-r2
#' @exportS3Method rstantools::bayes_R2
bayes_R2.sgfit <- function(object, draws = NULL, re.form = NULL, ...) {
    no_dots(...)
    info <- sgfit_info(object)
    check_r2_family(info, "bayes_R2()")
    B <- chosen_draws(object, draws, default_draws)
    trials <- training_trials(info)
    S <- nrow(B)
    sum_mu <- sum_mu2 <- sum_var <- double(S)
    N <- info$spec$N
    for (r in row_blocks(object, S)) {
        mu <- draw_level(object, NULL, NULL, 1L, NULL, "bayes_R2()", rows = r, B = B,
                         re.form = re.form)
        sigma <- attr(mu, "sigma")
        m <- if (is.null(trials)) 1 else rep(trials[r], each = S)
        mean_count <- m * mu
        sum_mu <- sum_mu + rowSums(mean_count)
        sum_mu2 <- sum_mu2 + rowSums(mean_count^2)
        sum_var <- sum_var + switch(r2_kind(info),
                                    gaussian = 0,
                                    binomial = rowSums(m * mu * (1 - mu)),
                                    poisson = rowSums(mu),
                                    negbin = rowSums(mu + mu^2 / sigma),
                                    gamma = rowSums(mu^2 / sigma))
    }
    var_mu <- (sum_mu2 - sum_mu^2 / N) / (N - 1)
    sigma2 <- if (r2_kind(info) == "gaussian")
                  draw_sigmas(info, internal_draws(B, info$design))^2 * noise_variance_factor(info$family)
              else sum_var / N
    var_mu / (var_mu + sigma2)
}

#' @rdname sgfit-r2
#' @exportS3Method rstantools::loo_R2
loo_R2.sgfit <- function(object, draws = NULL, n_boot = 4000L, ...) {
    no_dots(...)
    info <- sgfit_info(object)
    check_r2_family(info, "loo_R2()")
    n_boot <- check_count(n_boot, "n_boot", 1L)
    B <- loo_draws(object, draws)
    chain <- attr(B, "chain")
    y <- training_response(info)
    N <- length(y)
    ## the leave-one-out expected responses, block by block
    y_loo <- unlist(lapply(row_blocks(object, nrow(B)), function(r) {
        mu <- without_sigma(draw_level(object, NULL, NULL, 1L, NULL, "loo_R2()", rows = r, B = B))
        ll <- training_log_lik(object, B, r)
        w <- loo::psis(-ll, r_eff = loo::relative_eff(exp(ll), chain_id = chain))
        ## (its Pareto k diagnostics of the weighted means are not used)
        suppressWarnings(loo::E_loo(mu, w, log_ratios = -ll))$value
    }), use.names = FALSE)
    e <- y - y_loo
    ## Bayesian bootstrap weights (exponentials normalised), block by block
    tot <- sy <- syy <- se <- see <- double(n_boot)
    size <- max(1L, floor(block_values / n_boot))
    for (r in split(seq_len(N), ceiling(seq_len(N) / size))) {
        g <- matrix(stats::rexp(n_boot * length(r)), n_boot)
        tot <- tot + rowSums(g)
        sy <- sy + drop(g %*% y[r])
        syy <- syy + drop(g %*% y[r]^2)
        se <- se + drop(g %*% e[r])
        see <- see + drop(g %*% e[r]^2)
    }
    var_y <- syy / tot - (sy / tot)^2
    var_e <- see / tot - (se / tot)^2
    pmin(1, pmax(-1, 1 - var_e / var_y))
}

## the residual variance's form in bayes_R2()
r2_kind <- function(info) {
    if (location_scale(info$family)) return("gaussian")
    if (identical(info$family$family, "poisson")) return("poisson")
    if (identical(info$family$family, "binomial")) return("binomial")
    if (identical(info$family$family, "Gamma")) return("gamma")
    "negbin"
}

check_r2_family <- function(info, caller) {
    if (!is.null(info$design$custom) || class_response(info$family))
        stop(caller, " is for a gaussian(), student(), binomial(), poisson(), neg_binomial_2() or Gamma() fit: ",
             "R-squared needs one expected response per row", call. = FALSE)
}
