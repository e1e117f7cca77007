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
#' \eqn{c}, also sampled, so that coefficients far from zero are shrunk as
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
#' expected to be non-zero among \eqn{D}; for a logistic regression the
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
#' the data say little) becomes two nearly independent parameters; the
#' likelihood's gradient is computed in the coefficients (with
#' [sgldcv()]'s control variates there, where the draws vary least) and
#' carried over by the chain rule.  Available for GLMs (`binomial()`,
#' `poisson()`, `gaussian()`, [categorical()]) with [sgld()], [sgldcv()],
#' [mala()] and [hmc()].  Their metric (`metric = "mode"`, the default) and
#' mass are learnt in those coordinates, not at a mode: the joint mode of
#' coefficients and scales exists but lies where the global scale is large
#' and every \eqn{z_j}{z_j} near 0, far from the posterior's bulk.  Instead,
#' the mode with \eqn{	au}{tau} and \eqn{c} held at `global_scale` and
#' `slab_scale` gives a first metric (minus the Hessian there, whose
#' off-diagonal terms carry the ridge between \eqn{	au}{tau} and the large
#' coefficients' \eqn{z_j}{z_j}; a diagonal metric leaves \eqn{	au}{tau}
#' stuck), and a warm-up of 6,200 iterations of full-data MALA in doubling
#' windows replaces it by the inverse covariance of each window's draws
#' (dense up to 500 coordinates, diagonal beyond), as Stan adapts its
#' metric.  The warm-up's last point is the chains' start and its mean of
#' the coefficients SGLD-CV's centre.  The warm-up draws random numbers from
#' the session's stream and costs about 6,200 full-data gradients.
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
        if (identical(family$family, "gaussian"))
            stop_arg(arg, "is rstanarm's hs(), whose global scale for a gaussian() response is ",
                     "multiplied by the noise sd, which sgfs's horseshoe does not do: use ",
                     "sgfs's hs(), on the standardised scale (the response's sd is 1 there)")
        a <- if (is.matrix(design$M)) diag(design$M)[coef] else design$M[coef]
        w <- 1 / abs(a)
    }
    k <- length(which)
    is_icpt <- which %in% icpt
    list(which = which, type = rep(0L, k), dist = ifelse(is_icpt, "normal", "hs"),
         loc = double(k), scale = ifelse(is_icpt, 2.5, 1), df = rep(NA_real_, k),
         prec = ifelse(is_icpt, 1 / 2.5^2, 1), rstanarm = rstanarm,
         hs = list(idx = coef, w = w, par = par, rstanarm = rstanarm,
                   default_intercept = icpt))
}

## Adds the horseshoe to a prepared run: spec$hs for the engine, the
## design's extra parameters (draw columns after the model's, reported as
## they are: M the identity there) and the start in xi
with_horseshoe <- function(run, hs) {
    d <- run$design
    D <- d$D
    K <- length(hs$idx)
    run$spec$hs <- list(idx = as.integer(hs$idx - 1L), w = as.double(hs$w),
                        par = as.double(unname(hs$par)))
    names <- c(sprintf("hs_lambda[%s]", d$par_names[hs$idx]), "hs_tau", "hs_c")
    d$hs <- c(hs, list(K = K, D_model = D, names = names))
    d$D <- D + K + 2L
    d$par_names <- c(d$par_names, names)
    d$M <- if (is.matrix(d$M)) {
        M <- diag(d$D)
        M[seq_len(D), seq_len(D)] <- d$M
        M
    } else c(d$M, rep(1, K + 2L))
    d$shift <- c(d$shift, double(K + 2L))
    run$design <- d
    run$theta0 <- hs_xi(run$theta0, d)
    run
}

## the start in xi from the model's parameters beta (internal scale):
## lambda = 1, tau = global_scale, c = slab_scale, z = beta / s
hs_xi <- function(beta, design) {
    h <- design$hs
    K <- h$K
    u <- double(K)
    v <- log(h$par[["global_scale"]])
    omega <- 2 * log(h$par[["slab_scale"]])
    r <- 1 / (1 + exp(2 * (v + u) - omega))
    s <- h$w * exp(v + u) * sqrt(r)
    xi <- beta
    xi[h$idx] <- beta[h$idx] / s
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
    xi[h$idx] <- xi[h$idx] / s
    c(xi, log(lambda), log(tau), 2 * log(cc))
}

## the full-data log posterior and its gradient in xi (src/prior_hs.c)
hs_log_posterior <- function(spec, xi) .Call(C_sgfs_hs_eval, spec, as.double(xi))

## The metric of the horseshoe's coordinates xi (posterior_laplace()'s
## horseshoe branch).  The joint mode of coefficients and scales exists (the
## scales' log-densities are bounded) but is no place to learn a metric:
## there tau is large and every z_j near 0, where the z_j of the null
## coefficients look a hundred times more certain than they are in the
## posterior's bulk.  So:
##   1. the mode with tau and c held at their prior scales (global_scale,
##      slab_scale), by BFGS with the exact gradient: the shrunk
##      coefficients' z_j near 0 and lambda_j near 1, the large ones with
##      large lambda_j;
##   2. minus the Hessian there (central differences of the gradient),
##      eigenvalues floored at 1e-6 of the largest: a first metric, whose
##      off-diagonal terms carry the ridge between tau and the large
##      coefficients' z_j (a diagonal one leaves tau stuck);
##   3. a warm-up of full-data MALA (the engine's hmc rule, one leapfrog
##      step, its step adapted to acceptance 0.574 in each window's first
##      half) in windows of 200, 400, ..., 3200 iterations, each ending with
##      the metric set to the inverse of the covariance of the window's
##      second half (shrunk towards 1e-3 I as Stan does), dense up to
##      dense_limit coordinates, diagonal beyond.
## Returns the fields of posterior_laplace() (mode: the warm-up's last
## point, a start in the posterior's bulk; H: the metric; U or scales) and
## beta (the warm-up's posterior mean of the model's parameters: SGLD-CV's
## centre), its full-data score and minus its likelihood's Hessian (the
## second-order control variates).  Uses the random-number stream.
hs_warmup_windows <- c(200L, 400L, 800L, 1600L, 3200L)

hs_laplace <- function(run, start = run$theta0) {
    t0 <- proc.time()[["elapsed"]]
    spec <- run$spec
    design <- run$design
    Ds <- length(start)
    cond <- hs_conditional_mode(spec, start)
    dense <- Ds <= dense_limit
    H <- floor_eigen(hs_hessian(spec, cond$xi))
    metric <- if (dense) chol(H) else diag(sqrt(diag(H)))
    xi <- cond$xi
    h <- 0.1
    X <- NULL
    for (W in hs_warmup_windows) {
        wspec <- c(spec, list(sampler = "hmc", spar = c(0.574, 1, 1, 0, metric),
                              schedule = c(0, h, 0, 0)))
        wspec$burnin <- W %/% 2L
        wspec$thin <- 1L
        wspec$pred_x <- wspec$monitor <- NULL
        res <- run_chain(wspec, list(theta = xi, iter = 0, sstate = double(0)), W, FALSE)
        if (res$diverged > 0 || res$interrupted || nrow(res$draws) < 10L) break
        X <- t(apply(res$draws, 1L, hs_report_to_xi, design = design))
        n <- nrow(X)
        S <- if (dense) stats::cov(X) else diag(apply(X, 2L, stats::var))
        S <- (n / (n + 5)) * S + 1e-3 * (5 / (n + 5)) * diag(Ds)
        H <- floor_eigen(solve(S))
        metric <- if (dense) chol(H) else diag(sqrt(diag(H)))
        xi <- res$theta
        h <- res$eps
    }
    beta <- if (!is.null(X)) colMeans(t(vapply(seq_len(nrow(X)), function(k)
        hs_log_posterior(spec, X[k, ])$beta, double(design$hs$D_model))))
            else hs_log_posterior(spec, xi)$beta
    cur <- .Call(C_sgfs_model_curvature, spec, beta, FALSE)
    lap <- list(mode = xi, H = H, U = if (dense) metric, scales = sqrt(diag(H)),
                log_post = hs_log_posterior(spec, xi)$value, lik_grad = NULL,
                steps = cond$steps, seconds = proc.time()[["elapsed"]] - t0,
                beta = beta, beta_lik_grad = cur$grad, beta_lik_H = cur$neg_hessian,
                warmup = sum(hs_warmup_windows), warmup_step = h)
    if (!is.null(run$cache)) run$cache$laplace <- lap
    lap
}

## the mode of the log posterior in xi with tau and c held where `start`
## has them (BFGS, exact gradient; limited memory beyond 1000 coordinates)
hs_conditional_mode <- function(spec, start) {
    Ds <- length(start)
    free <- seq_len(Ds - 2L)
    at <- hs_log_posterior(spec, start)
    if (!is.finite(at$value) || !all(is.finite(at$grad)))
        stop("the log posterior is not finite at the start: check the data and init", call. = FALSE)
    point <- function(p) replace(start, free, p)
    f <- function(p) {
        v <- hs_log_posterior(spec, point(p))$value
        if (is.finite(v)) -v else 1e300
    }
    g <- function(p) -hs_log_posterior(spec, point(p))$grad[free]
    big <- Ds > 1000L
    opt <- stats::optim(start[free], f, g, method = if (big) "L-BFGS-B" else "BFGS",
                        control = if (big) list(maxit = 2000L, factr = 1e2)
                                  else list(maxit = 2000L, reltol = 1e-12))
    list(xi = point(opt$par), steps = opt$counts[["gradient"]])
}

## a symmetric matrix with its eigenvalues floored at 1e-6 of the largest
floor_eigen <- function(H) {
    ev <- eigen(H, symmetric = TRUE)
    floor <- 1e-6 * max(abs(ev$values))
    if (min(ev$values) >= floor) return(H)
    H <- ev$vectors %*% (pmax(ev$values, floor) * t(ev$vectors))
    (H + t(H)) / 2
}

## minus the Hessian of the log posterior in xi by central differences of
## the exact gradient (steps 1e-5 max(1, |xi_j|)), symmetrised
hs_hessian <- function(spec, xi) {
    Ds <- length(xi)
    H <- vapply(seq_len(Ds), function(j) {
        h <- 1e-5 * max(1, abs(xi[j]))
        e <- replace(double(Ds), j, h)
        -(hs_log_posterior(spec, xi + e)$grad - hs_log_posterior(spec, xi - e)$grad) / (2 * h)
    }, double(Ds))
    (H + t(H)) / 2
}

## the samplers that sample a horseshoe
hs_samplers <- c("sgld", "sgldcv", "mala", "hmc")

check_hs_sampler <- function(method, run) {
    if (is.null(run$design$hs) || method %in% hs_samplers) return(invisible())
    stop_arg("prior", sprintf("is a horseshoe, whose scales are sampled with the coefficients by %s; ",
                              paste0(hs_samplers, "()", collapse = ", ")),
             sprintf("%s() does not sample it", method))
}

## the model's parameters of draws (rows) or of one point, without the
## horseshoe's (coef(), vcov(), the draw-level methods)
model_columns <- function(design) {
    if (is.null(design$hs)) seq_len(design$D) else seq_len(design$hs$D_model)
}
