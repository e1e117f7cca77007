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
#' **The default for GLMs: OSGFS with control variates** (`control_variates`,
#' OSGFS-CV).  The minibatch gradient is [sgldcv()]'s second-order
#' control-variate estimate at the mode, and the rule runs in the coordinates
#' \eqn{z = U\theta}{z = U theta} whitened by the mode's curvature \eqn{H = U'U}{H = U'U}:
#' \deqn{z \leftarrow z + h\,\widetilde{\nabla_z L}(z) + R\xi, \quad
#'   RR' = T[(2h - h^2) I - h^2 S/T],}{z <- z + h grad_z L(z) + R xi, R R' = T [(2h - h^2) I - h^2 S / T],}
#' \eqn{T}{T} the temperature and \eqn{S}{S} the whitened covariance of the minibatch
#' gradient, that of the rows' remainders from their first-order expansion
#' at the mode (which vanishes there), averaged over 8 draws from the
#' Laplace approximation.  On a Gaussian posterior the chain is stationary
#' at the posterior exactly, for any \eqn{h}{h} with \eqn{RR' \ge 0}{R R' >= 0}; the default
#' `stepsize` is the largest such \eqn{h \le 1}{h <= 1}, \eqn{2/(1 + \lambda_{max}(S/T))}{2 / (1 + lambda_max(S / T))}:
#' where the minibatch noise is small, \eqn{h = 1}{h = 1} and each iterate is nearly a
#' fresh draw, where the report's rule moves about \eqn{2n/N}{2n/N} of the way to
#' the mode.  Rows that would move the chain by more than half a posterior
#' sd are held in every minibatch, and separated levels are updated exactly
#' along their lines, as for [sgldcv()].  With every row in every batch (the
#' default `batch_size` up to 10,000 rows) the step is [sgfs()]'s
#' Metropolis-adjusted one, its \eqn{h}{h} adapted during burn-in towards
#' `target_accept`, so that the draws are exact.  `control_variates = FALSE`,
#' a given `mode`, and models without a GLM's mode (networks, custom models,
#' horseshoe priors, more than 500 parameters) run the report's rule above.
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
#'   and 1/2 gives independent draws).  With control variates, the step
#'   \eqn{h}{h} in (0, 1] itself, `NULL` and `"max"` the largest with
#'   positive semi-definite noise.
#' @param mode the mode on the original scale, or `NULL` to find it.
#' @param opt_iter iterations of [sga()] for the mode.
#' @param stratify put the rows whose draw would jump the chain into every
#'   minibatch (GLMs, when the mode is not given).
#' @param control_variates `NULL` (the default): OSGFS with control variates
#'   at the mode (see Details) where the model allows it (a GLM of at most
#'   500 parameters without a horseshoe prior, `mode` not given), else the
#'   report's rule.  `FALSE`: the report's rule, draw for draw as in earlier
#'   versions; `TRUE` insists.
#' @param target_accept with control variates and every row in every batch:
#'   the acceptance rate the Metropolis-adjusted step adapts to during burn-in.
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
    alist(stepsize = NULL, mode = NULL, opt_iter = 10000L, stratify = TRUE,
          control_variates = NULL, target_accept = 0.7), {
    stratify <- check_flag(stratify, "stratify")
    run <- prepare_run_here(environment())
    if (!is.null(stepsize) && !identical(stepsize, "max") &&
        (!is.numeric(stepsize) || length(stepsize) != 1L || !(stepsize > 0 && stepsize <= 1)))
        stop_arg("stepsize", "must be a number in (0, 1], \"max\" or NULL, not ", format_value(stepsize))
    opt_iter <- check_count(opt_iter, "opt_iter", 2L)
    mode <- check_point(mode, run$design, "mode")
    cv <- mode_cv_available(control_variates, run,
                            without = if (!is.null(mode)) "a given mode")
    if (cv) {
        if (is.null(batch_size)) run <- sgfs_cv_batch(run)
        return(osgfs_cv(run, stepsize, stratify, target_accept, match.call()))
    }
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
            if (is.null(mode)) mode <- posterior_mode(run, opt_iter)
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

## osgfs() with control variates (R/samplers-cv.R), in the coordinates z = U
## theta whitened by the mode's curvature H = U'U: the drift h grad_z with
## the minibatch noise of the control-variate remainders, whose whitened
## covariance S (osgfs_cv_noise()) the injected noise leaves out; with
## every row in every batch the Metropolis-adjusted step of sgfs()
osgfs_cv <- function(run, stepsize, stratify, target_accept, call) {
    check_target_accept(target_accept)
    N <- run$spec$N
    n <- run$spec$batch_size
    if (n < N) run <- fast_mixing_run(run)
    setup <- function(run) {
        m <- sampler_metric("mode", run)
        lap <- m$laplace
        if (n == N) {
            h <- if (is.numeric(stepsize)) stepsize else 1
            return(sgfs_mh_setup(run, m, h, target_accept))
        }
        ## rows whose appearance would move the chain by more than half a
        ## posterior sd at the largest step (h = 1) go into every minibatch
        strata <- if (stratify) minibatch_strata(run, lap, 1, cv = TRUE)
        fixed <- strata$rows
        ## (the separated levels fit_chains() will update exactly)
        sep <- separated_spec(run, lap, length(fixed))
        S <- osgfs_cv_noise(run, lap, fixed, sep$spec$separated_dir)
        rule <- osgfs_cv_rule(S, stepsize, run$temperature, if (stratify) strata$shrink else 1)
        list(engine = "osgfs", spar = c(rule$A, rule$R),
             schedule = schedule_vector("constant", rule$eps, run$n_iter),
             spec = c(mode_control_variates(run, lap), m$spec,
                      list(drift_limit = sgfs_drift_limit / rule$eps),
                      if (length(fixed)) list(fixed = fixed)),
             start = if (!run$user_init) lap$mode,
             evals_per_iter = cv_evals(n, fixed),
             settings = list(stepsize = rule$eps, max_stepsize = rule$eps_max,
                             excess = rule$excess, fixed_rows = length(fixed),
                             control_variates = TRUE, metric = metric_type(m),
                             mode = stats::setNames(to_original(lap$mode, run$design),
                                                    run$design$par_names)))
    }
    sg_fit("osgfs", setup, run, call)
}

## The whitened covariance S of OSGFS-CV's minibatch gradient, N'(gamma' -
## 1) U'^-1 C U^-1 over the N' rows outside `fixed` drawn n at a time, C the
## covariance of their control-variate remainders (src/eval.c,
## sgfs_change_cov), which vanishes at the mode and grows away from it: its
## average over osgfs_cv_points draws from the Laplace approximation
## N(mode, T H^-1), on a uniform subset of the pool of at most
## osgfs_cv_rows rows (fewer beyond D = 22, for a cost of about 1e8 flops).
## Projected off the separated levels' lines (`directions`, D x K, or
## NULL), along which the rule does not move (src/separated.c).  The draws and rows come from a fixed seed (the
## same estimate for every chain and seed), the user's random numbers left
## as they were.
osgfs_cv_points <- 8L
osgfs_cv_rows <- 20000L
osgfs_cv_noise <- function(run, lap, fixed, directions) with_fixed_seed(20261202L, {
    spec <- run$spec
    N <- spec$N
    D <- length(lap$mode)
    pool <- if (length(fixed)) setdiff(seq_len(N) - 1L, fixed) else seq_len(N) - 1L
    m <- min(length(pool), max(2000L, osgfs_cv_rows %/% max(1, D^2 / 500)))
    rows <- if (m < length(pool)) sort(pool[sample.int(length(pool), m)]) else pool
    U <- lap$U
    C <- matrix(0, D, D)
    for (k in seq_len(osgfs_cv_points)) {
        theta <- lap$mode + backsolve(U, sqrt(run$temperature) * stats::rnorm(D))
        C <- C + .Call(C_sgfs_change_cov, spec, theta, lap$mode, rows)
    }
    n_pool <- length(pool)
    Ui <- backsolve(U, diag(D))                   # U^-1
    S <- n_pool * (gamma_fpc(n_pool, spec$batch_size) - 1) / osgfs_cv_points *
        crossprod(Ui, C %*% Ui)
    if (!is.null(directions)) {
        B <- qr.Q(qr(U %*% matrix(directions, D)))
        P <- diag(D) - tcrossprod(B)
        S <- P %*% S %*% P
    }
    (S + t(S)) / 2
})

## OSGFS-CV's rule in the whitened coordinates, where the posterior's
## covariance is T I: z' = z + h grad_z + R xi with R R' = T Q,
## Q = (2h - h^2) I - h^2 S / T, so that on a Gaussian posterior (1 - h)^2 T
## + h^2 S + T Q = T.  The largest h with Q >= 0 is 2 / (1 + lambda_max(S /
## T)), and beyond h = 1 the chain is anti-correlated (at S = 0, h = 1 draws
## afresh); `limit` caps it further (the held rows' step).  stepsize: h
## itself, NULL or "max" the largest; a larger one clips Q's negative
## eigenvalues and reports the `excess`, as osgfs_rule().
osgfs_cv_rule <- function(S, stepsize, temperature, limit = 1) {
    D <- nrow(S)
    lam <- max(0, eigen(S / temperature, symmetric = TRUE, only.values = TRUE)$values[1L])
    eps_max <- min(1, limit, 2 / (1 + lam))
    h <- if (is.numeric(stepsize)) as.double(stepsize) else eps_max
    list(A = h * diag(D),
         R = sqrt(temperature) * psd_root((2 * h - h^2) * diag(D) - h^2 * S / temperature),
         eps = h, eps_max = eps_max, excess = max(0, h * (1 + lam) / 2 - 1))
}

## R with R R' = Q, Q's negative eigenvalues (a minibatch noise above the
## Langevin noise) set to 0: V diag(sqrt(max(lambda, 0)))
psd_root <- function(Q) {
    eq <- eigen((Q + t(Q)) / 2, symmetric = TRUE)
    eq$vectors %*% diag(sqrt(pmax(eq$values, 0)), nrow(Q))
}

## The per-example score covariance C at `theta` of the rows outside `fixed`
## (0-based; the rows every minibatch holds, whose part of the gradient is
## exact), and their number: from the sums over all rows and over the fixed
## rows, C = (sum g g' - N_pool gbar gbar') / N_pool over the pool.
pool_score_cov <- function(spec, theta, fixed) {
    N <- spec$N
    all <- .Call(C_sgfs_model_curvature, spec, theta, TRUE)
    if (!length(fixed)) return(list(C = all$score_cov, N = N))
    rows <- fixed + 1L
    fx <- .Call(C_sgfs_model_curvature, slice_rows(spec, rows), theta, TRUE)
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
    list(A = eps * Dm, R = sqrt(temperature) * psd_root(2 * eps * Dm - eps^2 * M),
         eps = eps, eps_max = eps_max, excess = max(0, eps * lam / 2 - 1))
}

kind_osgfs <- kind(
    label = function(info) {
        s <- info$settings
        if (isTRUE(s$metropolis))
            return(sprintf(paste("OSGFS, every row in every batch, Metropolis adjusted (step %s",
                                 "posterior sd, adapted to acceptance %g; acceptance rate %.3f)"),
                           paste(sprintf("%.3g", unique(signif(2 * info$eps / (info$eps + 4), 3))),
                                 collapse = "/"),
                           s$target_accept, acceptance_rate(info)))
        sprintf("OSGFS%s (stepsize = %.3g, largest with PSD noise %.3g%s)",
                if (isTRUE(s$control_variates)) " with control variates at the mode" else "",
                s$stepsize, s$max_stepsize,
                if (s$excess > 0) sprintf("; minibatch noise %.2g%% above target", 100 * s$excess)
                else "")
    },
    divergence = function(info, eps)
        "the posterior is far from Gaussian: try stepsize = \"max\" or a larger batch_size",
    remedy = function(info)
        "try a larger batch_size (OSGFS shifts the mean below about 1% of the rows)")
