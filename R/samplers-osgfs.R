#' "Optimal" stochastic gradient Fisher scoring
#'
#' Samples the posterior with OSGFS (as used in El Hanchi's 2018 report):
#' a Langevin rule whose preconditioner and injected noise are fixed at the
#' posterior mode \eqn{\hat\theta}{thetahat},
#' \deqn{\theta \leftarrow \theta + \epsilon D\,\widehat{\nabla L}(\theta) + Q^{1/2}\xi,
#'   \quad D = \frac{2}{\gamma}H^{-1}, \quad
#'   Q = 2\epsilon D - \epsilon^2 N(\gamma - 1) DCD - \epsilon^2 DHD,}{theta <- theta + epsilon D hat(grad L)(theta) + Q^(1/2) xi, D = 2/gamma H^(-1), Q = 2 epsilon D - epsilon^2 N(gamma - 1) DCD - epsilon^2 DHD,}
#' where \eqn{H}{H} is minus the Hessian of the log posterior at the mode
#' (exact for the built-in models), \eqn{C}{C} the per-example score
#' covariance there, and \eqn{\gamma = 1 + (N/n)(N-n)/(N-1)}{gamma = 1 + (N/n)(N-n)/(N-1)}, so that
#' \eqn{N(\gamma-1)C}{N(gamma-1)C} is the covariance of the minibatch gradient.  For a
#' Gaussian posterior the chain's stationary covariance is exactly
#' \eqn{H^{-1}}{H^(-1)}; at \eqn{\epsilon = 1}{epsilon = 1} (the default but for batches of more than about half the rows) nothing is injected
#' when \eqn{C = H/N}{C = H/N}, and the minibatch noise alone does the sampling.
#' Where \eqn{Q}{Q} is not positive semi-definite (the minibatch noise alone
#' exceeds the Langevin noise \eqn{2\epsilon D}{2 epsilon D} in some direction, which
#' inflates the variance there) its negative eigenvalues are set to 0 and
#' the excess is reported; `stepsize = "max"` takes the largest
#' \eqn{\epsilon \le 1}{epsilon <= 1} for which it is, in closed form
#' \eqn{\epsilon = 2/\lambda_{max}(D^{-1}M)}{epsilon = 2/lambda_max(D^(-1)M)}, \eqn{M = N(\gamma-1)DCD + DHD}{M = N(gamma-1)DCD + DHD},
#' but at most \eqn{\gamma/2}{gamma/2}, beyond which the chain is anti-correlated (for
#' a Gaussian posterior, \eqn{\epsilon = \gamma/2}{epsilon = gamma/2} gives independent draws).
#' The mode is a GLM's exact one (Newton's method on all rows, shared with
#' the other uses of the mode in the call) or, for other models, found by
#' [sga()] and refined by full-data Newton steps; the chain starts there.
#'
#' Rare one-hot levels and rows of high leverage (GLMs; `stratify = TRUE`):
#' rows whose appearance in a minibatch would move the chain by more than
#' half a posterior sd (see [sgldcv()]) are put into every minibatch with
#' weight 1 and the other \eqn{n}{n} rows drawn from the rest with weight
#' \eqn{(N - |F|)/n}{(N - |F|)/n}; \eqn{C}{C}, \eqn{N}{N} and \eqn{\gamma}{gamma} above are then
#' those of the rest, whose scores alone make the minibatch noise.
#' `stratify = FALSE` gives the report's rule.
#'
#' Known behaviour: the noise of small minibatches depends on \eqn{\theta}{theta}
#' while the drift uses a fixed \eqn{D}{D}, and with batches below about 1 %
#' of the rows the chain's mean is shifted (its covariance stays right);
#' see the package tests for a measurement.
#'
#' @inheritParams sampler-arguments
#' @param stepsize \eqn{\epsilon}{epsilon} in (0, 1], `"max"`, or `NULL` (the
#'   default): 1, or \eqn{\gamma/2}{gamma/2} where that is smaller (batches of more
#'   than about half the rows; at all rows 1/2, where 1 would step a Gaussian
#'   posterior's chain from \eqn{\theta}{theta} to its mirror image and back,
#'   and 1/2 gives independent draws).
#' @param mode the mode on the original scale, or `NULL` to find it.
#' @param opt_iter iterations of [sga()] for the mode.
#' @param stratify put the rows whose draw would jump the chain into every
#'   minibatch (GLMs, when the mode is not given).
#' @return As [sgfs()].
#' @references El Hanchi, A. (2018). Experiments with stochastic gradient
#'   descent MCMC. Technical report, 25 October 2018.
#' @examples
#' data(Pima.tr, package = "MASS")
#' fit <- osgfs(type ~ ., data = Pima.tr, n_iter = 2000, batch_size = 50)
#' coef(fit)
#' @export
osgfs <- function(x, ...) UseMethod("osgfs")

#' @rdname osgfs
#' @export
osgfs.formula <- formula_method(function(...) osgfs.default(...))

#' @rdname osgfs
#' @export
osgfs.default <- sampler_method(
    alist(stepsize = NULL, mode = NULL, opt_iter = 10000L, stratify = TRUE), {
    stratify <- check_flag(stratify, "stratify")
    run <- prepare_run_here(environment())
    if (!is.null(stepsize) && !identical(stepsize, "max") &&
        (!is.numeric(stepsize) || length(stepsize) != 1L || !(stepsize > 0 && stepsize <= 1)))
        stop_arg("stepsize", "must be a number in (0, 1], \"max\" or NULL, not ", format_value(stepsize))
    opt_iter <- check_count(opt_iter, "opt_iter", 2L)
    mode <- check_point(mode, run$design, "mode")
    N <- run$spec$N
    n <- run$spec$batch_size
    if (n == N && is.numeric(stepsize) && stepsize == 1)
        stop_arg("stepsize", "= 1 with batch_size = N (all rows) gives a deterministic ",
                 "chain: use stepsize < 1 or a smaller batch_size")
    setup <- function(run) {
        lap <- if (is.null(mode) && laplace_available(run$design)) posterior_laplace(run)
        if (!is.null(lap)) {
            mode <- lap$mode
            H <- dense_curvature(lap, "osgfs()")
        } else {
            if (is.null(mode)) mode <- run_sga(run, opt_iter, opt_iter %/% 2L)$estimate
            fit <- tryCatch(newton_mode(run$spec, mode, max_steps = 10L), error = function(e)
                stop("osgfs() needs a local mode where the curvature is positive definite, and ",
                     "Newton's method from the starting estimate did not reach one (a network ",
                     "has saddle points): give mode = a better estimate, or use sgld() or sghmc()",
                     call. = FALSE))
            mode <- fit$mode
            H <- fit$curvature$H
        }
        ## the drift in the whitened coordinates is (2 eps / gamma) times
        ## the whitened gradient, eps <= 1
        fixed <- if (stratify && !is.null(lap))
            minibatch_strata(run, lap, 2 / gamma_fpc(N, n), cv = FALSE)$rows
        pool <- pool_score_cov(run$spec, mode, fixed)
        rule <- osgfs_rule(H, pool$C, pool$N, n, stepsize, run$temperature)
        list(engine = "osgfs", spar = c(rule$A, rule$R),
             schedule = schedule_vector("constant", rule$eps, run$n_iter),
             start = if (is.null(init)) mode,
             spec = if (length(fixed)) list(fixed = fixed),
             evals_per_iter = n + length(fixed),
             settings = list(stepsize = rule$eps, max_stepsize = rule$eps_max,
                             excess = rule$excess, fixed_rows = length(fixed),
                             mode = stats::setNames(to_original(mode, run$design),
                                                    run$design$par_names)))
    }
    sg_fit("osgfs", setup, run, match.call())
})

## The per-example score covariance C at `theta` of the rows outside `fixed`
## (0-based; the rows every minibatch holds, whose part of the gradient is
## exact), and their number: from the sums over all rows and over the fixed
## rows, C = (sum g g' - N_pool gbar gbar') / N_pool over the pool.
pool_score_cov <- function(spec, theta, fixed) {
    N <- spec$N
    all <- .Call(C_sgfs_model_curvature, spec, theta, TRUE)
    if (!length(fixed)) return(list(C = all$score_cov, N = N))
    rows <- fixed + 1L
    part <- slice_rows(spec, rows)
    part$batch_size <- min(length(rows), spec$batch_size)
    fx <- .Call(C_sgfs_model_curvature, part, theta, TRUE)
    n_fixed <- length(rows)
    sum_sq <- (N * all$score_cov + tcrossprod(all$grad) / N) -
        (n_fixed * fx$score_cov + tcrossprod(fx$grad) / n_fixed)
    n_pool <- N - n_fixed
    list(C = (sum_sq - tcrossprod(all$grad - fx$grad) / n_pool) / n_pool, N = n_pool)
}

## A = eps D and R with R R' = Q (negative eigenvalues of Q set to 0);
## `excess` is how much the minibatch noise exceeds the Langevin noise
## 2 eps D in the worst direction (0 when Q is positive semi-definite): the
## chain's variance there is inflated by about that much.
## At temperature T (stationary at N(theta_hat, T H^-1)): gamma_T = 1 +
## (gamma - 1) / T in place of gamma, M = N (gamma - 1) DCD / T + DHD, and
## the noise T Q.
osgfs_rule <- function(H, C, N, n, stepsize, temperature = 1) {
    gamma <- tempered_gamma(N, n, temperature)
    Dm <- (2 / gamma) * solve(H)
    Dm <- (Dm + t(Dm)) / 2
    M <- N * (gamma - 1) * Dm %*% C %*% Dm + Dm %*% H %*% Dm
    M <- (M + t(M)) / 2
    root <- chol(Dm)                             # Dm = root' root
    inv <- backsolve(root, diag(nrow(Dm)))       # root^{-1}
    lam <- eigen(t(inv) %*% M %*% inv, symmetric = TRUE, only.values = TRUE)$values[1L]
    ## beyond gamma / 2 the chain is anti-correlated (at n = N, eps = 1 has Q = 0)
    eps_max <- min(1, 2 / lam, gamma / 2)
    eps <- if (identical(stepsize, "max")) eps_max
           else if (is.null(stepsize)) min(1, gamma / 2)
           else as.double(stepsize)
    Q <- 2 * eps * Dm - eps^2 * M
    eq <- eigen((Q + t(Q)) / 2, symmetric = TRUE)
    list(A = eps * Dm, R = sqrt(temperature) * eq$vectors %*% diag(sqrt(pmax(eq$values, 0)), nrow(Q)),
         eps = eps, eps_max = eps_max, excess = max(0, eps * lam / 2 - 1))
}

kind_osgfs <- kind(
    label = function(info) {
        s <- info$settings
        sprintf("OSGFS (stepsize = %.3g, largest with PSD noise %.3g%s)", s$stepsize, s$max_stepsize,
                if (s$excess > 0) sprintf("; minibatch noise %.2g%% above target", 100 * s$excess)
                else "")
    },
    divergence = function(info, eps)
        "the posterior is far from Gaussian: try stepsize = \"max\" or a larger batch_size",
    remedy = function(info)
        "try a larger batch_size (OSGFS shifts the mean below about 1% of the rows)")
