## The regularised horseshoe (Piironen and Vehtari 2017): a prior whose
## global and local scales are sampled with the coefficients.  The engine
## (src/prior_hs.c) samples the non-centred coordinates
## xi = (model parameters with z_j for the horseshoe's coefficients,
## log lambda_1..K, log tau, log c^2); the draws report the coefficients
## beta_j = w_j z_j tau lambda~_j and lambda_j, tau, c.

#' The regularised horseshoe prior
#'
#' A hierarchical shrinkage prior for sparse regression (Piironen and
#' Vehtari, 2017): each coefficient is normal with a standard deviation
#' that is the product of a global scale \eqn{\tau}{tau}, shared by all
#' coefficients, and a local scale \eqn{\lambda_j}{lambda_j} of its own,
#' both sampled with the coefficients, and regularised by a slab of width
#' \eqn{c}{c}, also sampled, so that coefficients far from zero are shrunk as
#' by a Student t of scale `slab_scale` rather than not at all:
#' \deqn{\beta_j = z_j \tau \tilde\lambda_j, \quad
#'   \tilde\lambda_j^2 = \frac{c^2 \lambda_j^2}{c^2 + \tau^2 \lambda_j^2},
#'   \quad z_j \sim N(0, 1),}{beta_j = z_j tau lambda~_j,
#'   lambda~_j^2 = c^2 lambda_j^2 / (c^2 + tau^2 lambda_j^2), z_j ~ N(0, 1),}
#' \eqn{\lambda_j \sim t^+_{df}(0, 1)}{lambda_j ~ half-t(df, 0, 1)},
#' \eqn{\tau \sim t^+_{global\_df}(0, global\_scale)}{tau ~
#' half-t(global_df, 0, global_scale)} and \eqn{c^2 \sim
#' \mathrm{Inv\text{-}Gamma}(slab\_df/2, slab\_df\, slab\_scale^2/2)}{c^2 ~
#' Inv-Gamma(slab_df / 2, slab_df slab_scale^2 / 2)}.  The arguments and
#' defaults are those of rstanarm's `hs()` (whose objects are taken too,
#' see below).  Piironen and Vehtari suggest
#' \eqn{global\_scale = p_0 / ((D - p_0)\sqrt{N})}{global_scale = p0 /
#' ((D - p0) sqrt(N))} times the noise scale for \eqn{p_0}{p0} coefficients
#' expected to be non-zero among \eqn{D}{D}; for a logistic regression the
#' noise scale is about 2.
#'
#' The prior applies to the coefficients on the internal (standardised)
#' scale, like [normal()], but not to the intercept: with
#' `prior_intercept = NULL` the intercept has the default `normal(0, 2.5)`.
#' Its parameters are sampled: the draws have, after the model's parameters
#' (whose columns are unchanged), the columns `hs_lambda[name]` (one per
#' coefficient), `hs_tau` and `hs_c`, on the internal scale (`coef()`,
#' `vcov()` and the predictions leave them out; `summary()` reports them).
#' The samplers run in the non-centred coordinates \eqn{(z_j, \log\lambda_j,
#' \log\tau, \log c^2)}{(z_j, log lambda_j, log tau, log c^2)}, in which the
#' funnel of the centred form (a coefficient against its local scale where
#' the data say little) becomes two nearly independent parameters, except
#' for the coefficients the data pin down (more than 4 standard errors from
#' 0 at the mode under `normal(0, 2.5)` priors), which are sampled as
#' \eqn{\beta_j}{beta_j} itself with the prior \eqn{N(0, (\tau
#' \tilde\lambda_j)^2)}{N(0, (tau lambda~_j)^2)}: for them the non-centred
#' form is a curved ridge (\eqn{z_j \tau\tilde\lambda_j}{z_j tau lambda~_j}
#' fixed by the data).  The likelihood's gradient is computed in the
#' coefficients (with [sgldcv()]'s control variates there, where the draws
#' vary least) and carried over by the chain rule.  Available for GLMs
#' (`binomial()`, `poisson()`, `gaussian()`, [categorical()]) with
#' [sgld()], [sgldcv()], [mala()] and [hmc()].
#'
#' Their metric (`metric = "mode"`, the default) and mass are not a
#' curvature at a mode: the joint mode of coefficients and scales exists but
#' lies where the global scale is large and every \eqn{z_j}{z_j} near 0,
#' far from the posterior's bulk; minus the Hessian at a mode with the
#' scales held is nearly singular where the slab caps a coefficient's
#' scale; and a warm-up's covariance sees a fraction of the null
#' coefficients' spread and keeps them there.  The metric is the expected
#' information in these coordinates, \eqn{J'IJ}{J' I J} (\eqn{J}{J} the
#' coefficients' Jacobian, \eqn{I}{I} the likelihood's information in the
#' coefficients) plus the prior's (1 for a \eqn{z_j}{z_j}, \eqn{2\nu/(\nu
#' + 3)}{2 df / (df + 3)} for the log of a half-t scale, `slab_df / 2` for
#' \eqn{\log c^2}{log c^2}), averaged over 25 draws of a warm-up: 2,000
#' iterations of full-data MALA, from the coefficients' mode under
#' `normal(0, 2.5)` priors (every coefficient starting free: a chain shrinks
#' a null coefficient easily, but a large one shrunk to 0 sits at a local
#' mode), with the metric updated half-way (dense up to 500 coordinates,
#' diagonal beyond).  The warm-up's last point is the chains' start and its
#' mean of the coefficients SGLD-CV's centre; it draws random numbers from
#' the session's stream and costs 2,000 full-data gradients.
#'
#' rstanarm's `hs()` objects are taken with rstanarm's meaning, where
#' `global_scale` and `slab_scale` are on the scale of the draws: each
#' coefficient's horseshoe is then scaled by its predictor's spread
#' (\eqn{\beta_j = w_j z_j \tau\tilde\lambda_j}{beta_j = w_j z_j tau
#' lambda~_j} on the internal scale, \eqn{w_j}{w_j} the internal over the
#' original scale of the coefficient; as in rstanarm, no autoscaling and
#' no probit factor apply to it).  rstanarm's horseshoe for a
#' `gaussian()` response also multiplies the global scale by the noise sd,
#' which this implementation does not: such objects are refused (the
#' package's `hs()` on the standardised scale, where the response has sd 1,
#' is the alternative).
#'
#' @param df degrees of freedom of the local scales' half Student t.
#' @param global_df,global_scale degrees of freedom and scale of the global
#'   scale's half Student t.
#' @param slab_df,slab_scale degrees of freedom and scale of the slab.
#' @return An object of class `sgfs_prior`.
#' @references Piironen, J. and Vehtari, A. (2017). Sparsity information and
#'   regularization in the horseshoe and other shrinkage priors. Electronic
#'   Journal of Statistics 11(2), 5018-5051.
#' @examples
#' hs()
#' \donttest{
#' set.seed(1)
#' x <- matrix(rnorm(500 * 20), 500)
#' y <- rbinom(500, 1, plogis(x[, 1] - x[, 2]))
#' fit <- sgldcv(x, y, prior = hs(global_scale = 2 * 2 / (18 * sqrt(500))),
#'               n_iter = 5000)
#' coef(fit)[2:4]
#' summary(fit)$statistics["hs_tau", ]
#' }
#' @export
hs <- function(df = 1, global_df = 1, global_scale = 0.01, slab_df = 4, slab_scale = 2.5) {
    for (a in c("df", "global_df", "global_scale", "slab_df", "slab_scale")) {
        v <- get(a)
        if (!is.numeric(v) || length(v) != 1L || !is.finite(v) || v <= 0)
            stop_arg(a, "must be a finite positive number, not ", format_value(v))
    }
    structure(list(dist = "hs", df = as.double(df), global_df = as.double(global_df),
                   global_scale = as.double(global_scale), slab_df = as.double(slab_df),
                   slab_scale = as.double(slab_scale)), class = "sgfs_prior")
}

is_hs <- function(prior) is.list(prior) && identical(prior$dist, "hs")

## the horseshoe's part of the priors: the coordinates `which` of the model,
## the intercept(s) among them given the default normal(0, 2.5), the others
## z_j ~ normal(0, 1) and, in `hs`, the engine's settings (spec$hs) and
## the design's extension
expand_hs <- function(prior, which, arg, design, family) {
    if (!is.null(design$network) || !is.null(design$custom))
        stop_arg(arg, "is a horseshoe, which is available for GLMs (binomial, poisson, gaussian ",
                 "and categorical models), not for ",
                 if (is.null(design$custom)) "networks" else "custom models")
    if (arg != "prior")
        stop_arg(arg, "is a horseshoe, a prior for the coefficients: give the intercept a ",
                 "normal() or student_t() prior")
    rstanarm <- !inherits(prior, "sgfs_prior")
    settings <- c(df = "df", global_df = "global_df", global_scale = "global_scale",
                  slab_df = "slab_df", slab_scale = "slab_scale")
    par <- vapply(settings, function(a) {
        v <- prior[[a]]
        if (!is.numeric(v) || length(v) != 1L || !is.finite(v) || v <= 0)
            stop_arg(arg, sprintf("is a horseshoe whose %s must be a finite positive number, not %s",
                                  a, format_value(v)))
        as.double(v)
    }, 0)
    icpt <- which[which %in% design$intercept]
    coef <- setdiff(which, icpt)
    if (!length(coef)) stop_arg(arg, "is a horseshoe, but the model has no coefficients besides the intercept")
    w <- rep(1, length(coef))
    if (rstanarm) {
        if (location_scale(family))
            stop_arg(arg, "is rstanarm's hs(), whose global scale for a gaussian() response is ",
                     "multiplied by the noise sd, which sgfs's horseshoe does not do: use ",
                     "sgfs's hs(), on the standardised scale (the response's sd is 1 there)")
        a <- design$M$a[coef]
        w <- 1 / abs(a)
    }
    k <- length(which)
    is_icpt <- which %in% icpt
    list(which = which, type = ifelse(is_icpt, 0L, 3L), dist = ifelse(is_icpt, "normal", "hs"),
         loc = double(k), scale = ifelse(is_icpt, 2.5, 1), df = rep(NA_real_, k),
         prec = ifelse(is_icpt, 1 / 2.5^2, 1), rstanarm = rstanarm,
         hs = list(idx = coef, w = w, par = par, rstanarm = rstanarm,
                   default_intercept = icpt))
}

## Adds the horseshoe to a prepared run: spec$hs for the engine, the
## design's extra parameters (draw columns after the model's, reported as
## they are: M the identity there) and the start in xi
with_horseshoe <- function(run, hs) {
    if (!is.null(run$spec$pred_x))
        stop_arg("keep", "must be \"draws\" with a horseshoe prior (hs()), whose scales are ",
                 "sampled with the coefficients")
    d <- run$design
    D <- d$D
    K <- length(hs$idx)
    ## partial centring (src/prior_hs.c): the coefficients the data pin down,
    ## |beta_j| above hs_centre_z standard errors at the mode under
    ## normal(0, 2.5) priors, are sampled as beta_j, the others as z_j
    ridge <- run$spec
    ridge$prior_type[hs$idx] <- 0L
    ridge$prior_scale[hs$idx] <- 2.5
    ridge$prior_prec[hs$idx] <- 1 / 2.5^2
    fit <- newton_mode(ridge, run$theta0)
    se <- sqrt(diag(chol2inv(chol(fit$curvature$H))))
    hs$ridge <- fit$mode
    hs$centred <- abs(fit$mode[hs$idx]) > hs_centre_z * se[hs$idx]
    run$spec$hs <- list(idx = as.integer(hs$idx - 1L), w = as.double(hs$w),
                        par = as.double(unname(hs$par)), centred = as.integer(hs$centred))
    names <- c(sprintf("hs_lambda[%s]", d$par_names[hs$idx]), "hs_tau", "hs_c")
    d$hs <- c(hs, list(K = K, D_model = D, names = names))
    d$D <- D + K + 2L
    d$par_names <- c(d$par_names, names)
    d$M <- map_extend(d$M, K + 2L)
    d$shift <- c(d$shift, double(K + 2L))
    run$design <- d
    run$theta0 <- hs_xi(run$theta0, d)
    run
}

hs_centre_z <- 4

## the start in xi from the model's parameters beta (internal scale):
## tau = global_scale, c = slab_scale, lambda_j = max(1, |beta_j| / (w_j tau))
## (at most 1e6), so that z_j = beta_j / s_j is about +-1 unless the slab
## caps s_j (z_j = 0 for beta = 0, the default start)
hs_xi <- function(beta, design) {
    h <- design$hs
    v <- log(h$par[["global_scale"]])
    omega <- 2 * log(h$par[["slab_scale"]])
    b <- beta[h$idx]
    u <- log(pmin(pmax(1, abs(b) / (h$w * exp(v))), 1e6))
    r <- 1 / (1 + exp(2 * (v + u) - omega))
    s <- h$w * exp(v + u) * sqrt(r)
    xi <- beta
    xi[h$idx] <- ifelse(h$centred, b, b / s)
    c(xi, u, v, omega)
}

## the kept values (internal scale: model parameters, then lambda, tau, c)
## at xi
hs_report <- function(run, xi) hs_log_posterior(run$spec, xi)$report

## the kept values of a fit (model parameters then lambda, tau, c; internal
## scale) back to xi, for the checks that evaluate the posterior at draws
hs_report_to_xi <- function(report, design) {
    h <- design$hs
    D <- h$D_model
    K <- h$K
    lambda <- report[D + seq_len(K)]
    tau <- report[D + K + 1L]
    cc <- report[D + K + 2L]
    r <- cc^2 / (cc^2 + tau^2 * lambda^2)
    s <- h$w * tau * lambda * sqrt(r)
    xi <- report[seq_len(D)]
    xi[h$idx] <- ifelse(h$centred, xi[h$idx], xi[h$idx] / s)
    c(xi, log(lambda), log(tau), 2 * log(cc))
}

## the full-data log posterior and its gradient in xi (src/prior_hs.c)
hs_log_posterior <- function(spec, xi) .Call(C_sgfs_hs_eval, spec, as.double(xi))

## The metric of the horseshoe's coordinates xi (posterior_laplace()'s
## horseshoe branch).  Neither the curvature at a mode nor a warm-up's
## covariance will do:
##   - the joint mode of coefficients and scales exists (the scales'
##     log-densities are bounded) but lies where tau is large and every z_j
##     near 0, where the null coefficients' z_j look a hundred times more
##     certain than they are in the posterior's bulk;
##   - minus the Hessian at a mode with tau and c held is nearly singular
##     where the slab caps a large coefficient's scale (its lambda_j, and
##     tau through it, then move the likelihood little), and a metric that
##     lets log tau jump by 15 forces tiny steps on everything else;
##   - a warm-up's covariance sees a tenth of the null coefficients' spread
##     (their local scales move slowly), and a metric learnt from it keeps
##     them there (HMC's R-hat stayed near 2 over 600,000 iterations).
## So the metric is the expected (Fisher) information in xi at a typical
## point: J' I J + the prior's information, J the Jacobian of the
## coefficients in xi (prior_hs.c's pull-back) and I minus the Hessian of
## the likelihood in the coefficients (the Fisher information of a GLM with
## canonical link); the prior's part is 1 for z_j, 2 nu / (nu + 3) for
## the log of a half-t(nu) scale (the information of a t's log scale), slab_df
## / 2 for log c^2 (a Gamma's log scale), the curvature of the other
## parameters' priors.  It is positive definite and, where the likelihood
## says nothing (a null coefficient's log lambda_j), the prior's spread.
## The information varies over the posterior (a large coefficient's
## lambda_j moves its coefficient more where the slab does not cap it), so
## it is averaged over the posterior's bulk, reached by a warm-up:
##   1. the start: unless given, the coefficients' mode under normal(0, 2.5)
##      priors (with_horseshoe()'s), in xi with tau = global_scale,
##      c = slab_scale and lambda_j = |beta_j| / tau (at least 1: hs_xi()).
##      Every coefficient starts free: a chain shrinks a null coefficient
##      easily, but a large one shrunk to 0 sits at a local mode of xi (at
##      z_j = 0 the likelihood does not move lambda_j, and z_j alone moves
##      beta_j by tau lambda~_j, little), which it leaves only when tau grows;
##   2. the information there, then `length(hs_warmup)` warm-ups of full-data
##      MALA in the current metric (the engine's hmc rule, one leapfrog
##      step, its step adapted to acceptance 0.574 during the first half),
##      each ending with the metric set to the mean of the information at
##      `hs_metric_draws` draws evenly spaced over its second half (dense up
##      to dense_limit coordinates, else its diagonal).
## Returns the fields of posterior_laplace() (mode: the warm-up's last
## point, a start in the posterior's bulk; H: the metric; U or scales) and
## beta (the last warm-up's mean of the model's parameters: SGLD-CV's
## centre), its full-data score and minus its likelihood's Hessian (the
## second-order control variates).  Uses the random-number stream.
hs_warmup <- c(1000L, 1000L)
hs_metric_draws <- 25L

hs_laplace <- function(run, start = run$theta0) {
    t0 <- proc.time()[["elapsed"]]
    spec <- run$spec
    design <- run$design
    h <- design$hs
    Ds <- length(start)
    dense <- Ds <= dense_limit
    metric_at <- function(points) {
        H <- Reduce(`+`, lapply(points, hs_information, spec = spec, design = design)) /
            length(points)
        H <- floor_eigen(H)
        list(H = H, U = if (dense) chol(H) else diag(sqrt(diag(H))))
    }
    steps <- 0L
    if (all(start[h$idx] == 0))              # the default start: the coefficients' ridge mode
        start <- hs_xi(h$ridge, design)
    at <- hs_log_posterior(spec, start)
    if (!is.finite(at$value) || !all(is.finite(at$grad)))
        stop("the log posterior is not finite at the start: check the data and init", call. = FALSE)
    m <- metric_at(list(start))
    xi <- start
    X <- NULL
    eps <- 0.1
    for (W in hs_warmup) {
        wspec <- c(spec, list(sampler = "hmc", spar = c(target_accept = 0.574, n_leapfrog = 1,
                                                        adapt = 1, trajectory_length = 0, m$U),
                              schedule = c(0, eps, 0, 0)))
        wspec$burnin <- W %/% 2L
        wspec$thin <- 1L
        wspec$pred_x <- wspec$monitor <- NULL
        res <- run_chain(wspec, list(theta = xi, iter = 0, sstate = double(0)), W, FALSE)
        if (res$diverged > 0 || res$interrupted || nrow(res$draws) < 10L) break
        xi <- res$theta
        eps <- res$eps
        X <- t(apply(res$draws, 1L, hs_report_to_xi, design = design))
        rows <- unique(round(seq(1, nrow(X), length.out = min(nrow(X), hs_metric_draws))))
        m <- metric_at(lapply(rows, function(k) X[k, ]))
    }
    beta <- if (!is.null(X)) colMeans(t(vapply(seq_len(nrow(X)), function(k)
        hs_log_posterior(spec, X[k, ])$beta, double(h$D_model))))
            else hs_log_posterior(spec, xi)$beta
    cur <- .Call(C_sgfs_model_curvature, spec, beta, FALSE)
    lap <- list(mode = xi, H = m$H, U = if (dense) m$U, scales = sqrt(diag(m$H)),
                log_post = hs_log_posterior(spec, xi)$value, lik_grad = NULL,
                steps = steps, seconds = proc.time()[["elapsed"]] - t0,
                beta = beta, beta_lik_grad = cur$grad, beta_lik_H = cur$neg_hessian)
    if (!is.null(run$cache)) run$cache$laplace <- lap
    lap
}

## the information metric in xi at xi (see hs_laplace())
hs_information <- function(spec, design, xi) {
    h <- design$hs
    D <- h$D_model
    K <- h$K
    Ds <- D + K + 2L
    at <- hs_log_posterior(spec, xi)
    beta <- at$beta
    rep <- at$report
    lambda <- rep[D + seq_len(K)]
    tau <- rep[D + K + 1L]
    cc <- rep[D + K + 2L]
    r <- cc^2 / (cc^2 + tau^2 * lambda^2)
    s <- h$w * tau * lambda * sqrt(r)
    J <- matrix(0, D, Ds)
    J[cbind(seq_len(D), seq_len(D))] <- 1
    nc <- !h$centred                         # z_j: beta_j = s_j z_j
    j <- h$idx[nc]
    b <- beta[j]
    J[cbind(j, j)] <- s[nc]
    J[cbind(j, D + which(nc))] <- b * r[nc]
    J[j, D + K + 1L] <- b * r[nc]
    J[j, D + K + 2L] <- b * (1 - r[nc]) / 2
    I <- .Call(C_sgfs_model_curvature, spec, beta, FALSE)$neg_hessian
    p <- h$par
    prior <- c(log_prior(xi[seq_len(D)], spec)$curvature,
               rep(2 * p[["df"]] / (p[["df"]] + 3), K),
               2 * p[["global_df"]] / (p[["global_df"]] + 3), p[["slab_df"]] / 2)
    prior[h$idx[h$centred]] <- 1 / s[h$centred]^2   # a centred beta_j's N(0, s_j^2)
    G <- crossprod(J, I %*% J)
    G[cbind(seq_len(Ds), seq_len(Ds))] <- diag(G) + prior
    ## ... whose information about log s_j (2) reaches u_k, v, omega
    for (k in which(h$centred)) {
        a <- c(r[k], r[k], (1 - r[k]) / 2)
        at <- c(D + k, D + K + 1L, D + K + 2L)
        G[at, at] <- G[at, at] + 2 * outer(a, a)
    }
    (G + t(G)) / 2
}

## a symmetric matrix with its eigenvalues floored at 1e-6 of the largest
floor_eigen <- function(H) {
    ev <- eigen(H, symmetric = TRUE)
    floor <- 1e-6 * max(abs(ev$values))
    if (min(ev$values) >= floor) return(H)
    H <- ev$vectors %*% (pmax(ev$values, floor) * t(ev$vectors))
    (H + t(H)) / 2
}

## stops unless the sampler samples a horseshoe (its kind says so)
check_hs_sampler <- function(method, run) {
    if (is.null(run$design$hs) || isTRUE(sampler_kind(method)$horseshoe)) return(invisible())
    stop_arg("prior", sprintf("is a horseshoe, whose scales are sampled with the coefficients by %s; ",
                              paste0(horseshoe_samplers(), "()", collapse = ", ")),
             sprintf("%s() does not sample it", method))
}

## the model's parameters of draws (rows) or of one point, without the
## horseshoe's (coef(), vcov(), the draw-level methods)
model_columns <- function(design) {
    if (is.null(design$hs)) seq_len(design$D) else seq_len(design$hs$D_model)
}
