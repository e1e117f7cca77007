#' Stochastic gradient Fisher scoring
#'
#' Samples the posterior of a logistic (`binomial()`), Gaussian linear
#' (`gaussian()`) or Poisson (`poisson()`) regression with SGFS (Ahn, Korattikara and Welling, 2012):
#' a Langevin sampler preconditioned by a running estimate of the Fisher
#' information built from per-example gradients of minibatches.  At a large
#' step (`alpha = 0`) it is stochastic Fisher scoring whose minibatch noise
#' alone gives draws from the Gaussian (Bernstein-von Mises) approximation of
#' the posterior; as `alpha` grows it becomes preconditioned SGLD.
#'
#' **The default for GLMs: SGFS with control variates** (`control_variates`,
#' SGFS-CV).  The minibatch gradient is estimated as [sgldcv()]'s, the
#' full-data score at the mode plus the minibatch's second-order remainders,
#' so the noise the Fisher estimate measures and compensates is theirs,
#' which vanishes at the mode.  The rule runs in the coordinates whitened by
#' the mode's curvature \eqn{H}{H}, where its preconditioner is \eqn{B = I + W}{B = I + W},
#' \eqn{W}{W} the minibatch noise estimated from the remainders of each minibatch's
#' Fisher rows during burn-in and fixed after it; on a Gaussian posterior
#' the chain \eqn{z' = z + \frac{2}{1+\alpha^2} B^{-1}(\nabla_z L + \eta)}{z' = z + 2/(1 + alpha^2) B^-1 (grad_z L + eta)},
#' \eqn{\eta \sim N(0, \alpha^2 B)}{eta ~ N(0, alpha^2 B)}, is stationary at the posterior
#' exactly, at any step.  At `alpha = 1` a step moves about one posterior
#' sd and on a near-Gaussian posterior each iterate is close to a fresh
#' draw: where the paper's rule needs about \eqn{N/n}{N/n} iterations per effective
#' draw, SGFS-CV needs about one.  As for [sgldcv()], rows whose appearance
#' in a minibatch would move the chain by more than half a posterior sd are
#' held in every minibatch (a larger `alpha` where some remain:
#' `settings$alpha`), and separated levels are updated exactly along their
#' lines.  With every row in every batch (the default `batch_size` up to
#' 10,000 rows) the gradient is exact and the step is a Metropolis-Hastings
#' proposal, accepted or rejected, so that the draws are exact; its `alpha`
#' (at least 1) adapts during burn-in towards the acceptance rate
#' `target_accept`.  It needs a GLM's mode and dense curvature (at most 500
#' parameters, no horseshoe prior); elsewhere, or with `control_variates =
#' FALSE`, `sgfs()` runs the rule below.
#'
#' Three refinements of the paper's algorithm make SGFS-f exact for Gaussian
#' posteriors at any batch fraction: the factor \eqn{\gamma = 1 + (N/n)(N-n)/(N-1)}{gamma = 1 + (N/n)(N-n)/(N-1)}
#' for minibatches drawn without replacement, the prior precision added
#' to the preconditioner, and (`curvature = TRUE`, GLMs) the posterior's
#' curvature at the mode where the paper relies on the information equality
#' (below).  The paper's update is
#' \deqn{\theta \leftarrow \theta + 2[\gamma N (1+\alpha^2)\hat I + \Lambda]^{-1}
#'   (\widehat{\nabla L}(\theta) + \eta), \quad \eta \sim N(0, \alpha^2 \gamma N \hat I),}{theta <- theta + 2[gamma N (1+alpha^2) Ihat + Lambda]^(-1) (hat(grad L)(theta) + eta), eta ~ N(0, alpha^2 gamma N Ihat),}
#' with \eqn{\hat I}{Ihat} the running mean of the minibatch score covariance
#' (restarted half-way through burn-in) and \eqn{\Lambda}{Lambda} the prior precision
#' (for `laplace()` priors, that of a normal with the same variance).
#' Its \eqn{\gamma N \hat I + \Lambda}{gamma N Ihat + Lambda} stands for two things: the
#' posterior's curvature \eqn{H}{H}, as \eqn{N \hat I + \Lambda}{N Ihat + Lambda}, and the
#' minibatch noise, \eqn{(\gamma - 1) N \hat I}{(gamma - 1) N Ihat}.  The first holds
#' only where the model's Fisher information equals the data's score
#' covariance (Bernstein-von Mises for a well-specified model); on real data
#' it often does not (overdispersed counts, heteroscedastic or heavy-tailed
#' residuals, rare factor levels), and the chain then samples a covariance off
#' by their ratio, most at large batch fractions: 0.75 to 2 times the
#' posterior sds on R's `warpbreaks`, `quine`, `CO2` and `airquality` data.
#' With `curvature = TRUE` (the default for GLMs) \eqn{H}{H}, the curvature at the
#' posterior's mode, takes the place of \eqn{N \hat I + \Lambda}{N Ihat + Lambda}:
#' \eqn{A = H + (\gamma(1 + \alpha^2) - 1) N \hat I}{A = H + (gamma (1 + alpha^2) - 1) N Ihat},
#' the only preconditioner with which this chain is stationary at
#' \eqn{N(\mu, H^{-1})}{N(mu, H^-1)} whatever \eqn{\hat I}{Ihat} is; the noise is unchanged.
#' It costs a mode's search once, on a subset of the rows for large data,
#' where \eqn{\gamma}{gamma} is large and it changes little.
#' `preconditioner = "diagonal"` (SGFS-d) keeps only the diagonals: it costs
#' \eqn{O(nD)}{O(nD)} instead of \eqn{O(nD^2 + D^3)}{O(nD^2 + D^3)} per iteration but
#' under-estimates posterior variances at large steps; diagonals below
#' \eqn{\Lambda_j / N}{Lambda_j / N} are floored there.
#' `preconditioner = "block"` (SGFS-b; Ahn et al., section 4) keeps the
#' diagonal blocks of \eqn{\hat I}{Ihat} over contiguous parameter blocks of sizes
#' \eqn{b_1, \dots, b_K}{b_1, ..., b_K} (`blocks`): it costs \eqn{O(n \sum_k b_k^2 +
#' \sum_k b_k^3)}{O(n sum_k b_k^2 + sum_k b_k^3)} per iteration and \eqn{O(\sum_k b_k^2)}{O(sum_k b_k^2)} memory, never
#' \eqn{D^2}{D^2}, which makes SGFS usable with thousands of parameters.  With one
#' block it is SGFS-f, draw for draw.  It samples the posterior exactly at any
#' step only when the posterior is (nearly) uncorrelated across blocks; between
#' correlated blocks it under-estimates variances at large steps, like SGFS-d.
#'
#' @inheritParams sampler-arguments
#' @param preconditioner `"full"` (SGFS-f), `"diagonal"` (SGFS-d) or
#'   `"block"` (SGFS-b, block diagonal; see `blocks`).
#' @param alpha noise parameter \eqn{\alpha = 2/\sqrt{\epsilon}}{alpha = 2/sqrt(epsilon)} (step
#'   \eqn{\epsilon = 4/\alpha^2}{epsilon = 4/alpha^2}); 0 injects no noise, so all randomness
#'   comes from the minibatches (it mixes about twice as fast as the default
#'   on near-Gaussian posteriors, but its chain is anti-correlated when
#'   `batch_size` is above half the rows, and it is refused when
#'   `batch_size` is all rows).
#' @param schedule `"constant"`, or a [schedule_polynomial()] or
#'   [schedule_cyclical()] (or [schedule_step()]) that varies \eqn{\epsilon}{epsilon} from \eqn{4/\alpha^2}{4/alpha^2}.
#' @param robust `TRUE` for SGFS's robust rule: the prior's precision
#'   \eqn{\Lambda}{Lambda} is scaled with the data's Fisher information,
#'   \eqn{B = \gamma N I_t + \Lambda}{B = gamma N I_t + Lambda}, \eqn{A = (1 + \alpha^2)B}{A = (1 + alpha^2)B},
#'   \eqn{\eta \sim N(0, \alpha^2 B)}{eta ~ N(0, alpha^2 B)} (the paper's rule adds \eqn{\Lambda}{Lambda}
#'   to \eqn{A}{A} unscaled, which maps \eqn{\theta}{theta} to \eqn{-\theta}{-theta}, never
#'   mixing, in directions only the prior informs, such as a one-hot
#'   factor's levels against the intercept, when \eqn{\alpha > 0}{alpha > 0}).  Both
#'   are exact on a Gaussian posterior.  `FALSE` gives the rule of the
#'   paper with the corrections above, draw for draw.  (Unlike the other
#'   samplers, SGFS holds no rows in every minibatch: its Fisher estimate
#'   stands for the curvature only when the minibatch is drawn from all
#'   rows, and the rows such a rule would hold are those of large
#'   residuals.)
#' @param fisher_rows how many of each minibatch's rows (its first ones, a
#'   uniformly random subset) update the Fisher estimate \eqn{I_t}{I_t}:
#'   \eqn{V_t}{V_t}, their scores' covariance, is as expected from any number of
#'   rows, only noisier, and \eqn{I_t}{I_t} averages it over every iteration since
#'   its restart.  It costs \eqn{m D^2}{m D^2} for \eqn{m}{m} rows, the bulk of SGFS-f's work
#'   when \eqn{D}{D} is not small.  `NULL`: \eqn{\max(D + 1, \lceil 2n/D
#'   \rceil)}{max(D + 1, ceiling(2n/D))} of them, at most \eqn{n}{n} (as much
#'   work as the minibatch gradient's \eqn{nD}{n D}, and never fewer rows than
#'   make \eqn{I_t}{I_t} of full rank in one iteration); `batch_size` gives the
#'   paper's rule, draw for draw.
#' @param curvature `TRUE` (the default): for a GLM, the curvature of the
#'   log posterior at its mode (its diagonal for SGFS-d, its blocks for SGFS-b)
#'   in place of \eqn{N \hat I + \Lambda}{N Ihat + Lambda} (see Details); beyond
#'   100,000 rows the curvature at the mode of 50,000 evenly spaced rows,
#'   weighted \eqn{N/50000}{N/50000} (there \eqn{\gamma}{gamma} is large and the term
#'   matters little).  For networks, custom models, horseshoe priors and
#'   models of more than 500 parameters there is none, and the paper's rule
#'   is used.
#'   `FALSE`: the paper's rule (with the other corrections), draw for draw.
#' @param control_variates `NULL` (the default): SGFS with control variates
#'   at the mode (see Details) where the model allows it (a GLM of at most
#'   500 parameters without a horseshoe prior, with `robust` and `curvature`
#'   at their defaults), else the rule without them.  `FALSE`: the rule
#'   without control variates (the paper's, with `robust` and `curvature`
#'   as given), draw for draw as in earlier versions; `TRUE` insists.
#' @param target_accept with control variates and every row in every batch:
#'   the acceptance rate the Metropolis-adjusted step adapts to during
#'   burn-in (its `alpha` never falls below 1).
#' @param blocks for `preconditioner = "block"`: the sizes of the contiguous
#'   parameter blocks, in parameter order, summing to the number of
#'   parameters (e.g. `c(2, 1)`).  `NULL` takes the model's parameter groups:
#'   the coefficients as one block and `log_sigma` (a sampled noise scale of
#'   `gaussian()`) as another.
#' @return An object of class `c("sgfit", "mcmc")` (one chain) or
#'   `c("sgfit", "mcmc.list")`: the draws, one column per parameter, usable
#'   with every 'coda' function; the settings, timings and chain states are
#'   in `attr(fit, "sgfit")` (`elapsed`: seconds of sampling, which ESS per
#'   second and ATUC use; `setup_seconds`: the set-up before it, such as
#'   finding the mode for `init = "map"` and the default step).  See
#'   [sgfit-methods].
#' @references Ahn, S., Korattikara, A. and Welling, M. (2012). Bayesian
#'   posterior sampling via stochastic gradient Fisher scoring. ICML.
#' @examples
#' data(Pima.tr, package = "MASS")
#' fit <- sgfs(type ~ ., data = Pima.tr, n_iter = 2000, batch_size = 50)
#' summary(fit)
#' @export
sgfs <- function(x, ...) UseMethod("sgfs")

#' @rdname sgfs
#' @export
sgfs.formula <- formula_method(function(...) sgfs.default(...))

#' @rdname sgfs
#' @export
sgfs.default <- sampler_method(
    alist(preconditioner = c("full", "diagonal", "block"), alpha = 1, schedule = "constant",
          blocks = NULL, robust = TRUE, fisher_rows = NULL, curvature = TRUE,
          control_variates = NULL, target_accept = 0.7),
    defaults = alist(init = if (is.list(model) && identical(model$type, "mlp")) "map"), {
    robust <- check_flag(robust, "robust")
    curvature <- check_flag(curvature, "curvature")
    run <- prepare_run_here(environment())
    alpha <- check_nonnegative(alpha, "alpha")
    preconditioner <- choose_arg(preconditioner, c("full", "diagonal", "block"),
                                 "preconditioner")
    cv <- mode_cv_available(control_variates, run,
                            without = c(if (!robust) "robust = FALSE",
                                        if (!curvature) "curvature = FALSE"))
    if (cv && is.null(batch_size)) run <- sgfs_cv_batch(run)
    n <- run$spec$batch_size
    if (alpha == 0 && n == run$spec$N)
        stop_arg("alpha", "= 0 with batch_size = N (all rows) injects no noise: the chain ",
                 "would be deterministic; use alpha > 0 or a smaller batch_size")
    D <- length(run$theta0)
    if (!is.null(blocks) && preconditioner != "block")
        stop_arg("blocks", "is only used with preconditioner = \"block\"")
    sizes <- switch(preconditioner, full = D, diagonal = NULL,
                    block = sgfs_block_sizes(blocks, run$design, D))
    ## the state and scratch hold four (block-diagonal) D x D matrices
    if (4 * 8 * sum(sizes^2) > 4e9)
        stop_arg("preconditioner", sprintf(
            "= \"%s\" needs four %s matrices (%.3g GB) for this model: use %s",
            preconditioner,
            if (preconditioner == "full") sprintf("%d x %d", D, D) else "block-diagonal",
            4 * 8 * sum(sizes^2) / 1e9,
            if (preconditioner == "full") "\"block\" or \"diagonal\""
            else "smaller blocks or \"diagonal\""))
    if (!is.null(fisher_rows)) fisher_rows <- check_count(fisher_rows, "fisher_rows", 2L, n)
    if (cv)
        return(sgfs_cv(run, preconditioner, sizes, alpha, schedule, fisher_rows,
                       target_accept, match.call()))
    ## the curvature at the mode, and the mode as the start (unless given):
    ## from the mode of m of the N rows a chain starts about sqrt(N / m)
    ## posterior sds off, from zero up to thousands
    cur <- if (curvature) sgfs_curvature(run, preconditioner)
    if (!is.null(cur) && !run$user_init) run$theta0 <- cur$mode
    if (is.null(burnin))
        run <- sgfs_burnin(run, alpha, if (is.null(cur) || run$user_init) 20000
                                       else 5 * sqrt(run$spec$N / cur$rows))
    if (is.null(fisher_rows)) fisher_rows <- default_fisher_rows(n, D)
    setup <- function(run) {
        eps <- if (alpha > 0) 4 / alpha^2 else Inf
        H <- cur$H
        c(sgfs_rule(preconditioner, sizes, run$spec$burnin),
          list(spec = c(if (robust) list(sgfs_robust = TRUE),
                        if (fisher_rows < n) list(fisher_rows = fisher_rows),
                        if (!is.null(H)) list(sgfs_curvature = H)),
             schedule = schedule_vector(schedule, eps, run$n_iter, epoch_length(run)),
             settings = list(preconditioner = preconditioner, alpha = alpha,
                             schedule = schedule, robust = robust, fisher_rows = fisher_rows,
                             curvature = !is.null(H),
                             blocks = if (preconditioner == "block") sizes)))
    }
    sg_fit("sgfs", setup, run, match.call())
})

## the engine's SGFS rule for a preconditioner and its settings: the Fisher
## estimate's restart half-way through burn-in, SGFS-b's blocks
sgfs_rule <- function(preconditioner, sizes, burnin) {
    restart <- if (burnin >= 2L) burnin %/% 2L + 1L else 0
    list(engine = paste0("sgfs_", c(full = "full", diagonal = "diag",
                                    block = "block")[[preconditioner]]),
         spar = if (preconditioner == "block") c(restart = restart, blocks = length(sizes), sizes)
                else c(restart = restart))
}

## Whether sgfs() or osgfs() runs with control variates at the mode
## (src/fisher.c, R/samplers-osgfs.R): the argument `control_variates`, NULL
## for "where it can": a GLM with a dense mode's curvature (at most
## dense_limit parameters), no horseshoe, and none of the arguments named in
## `without` (such as robust = FALSE) that ask for the rule without them
mode_cv_available <- function(control_variates, run, without = NULL) {
    can <- laplace_available(run$design) && is.null(run$design$hs) &&
        length(run$theta0) <= dense_limit
    if (is.null(control_variates)) return(can && !length(without))
    control_variates <- check_flag(control_variates, "control_variates")
    if (!control_variates) return(FALSE)
    if (!can)
        stop_arg("control_variates", "= TRUE needs a GLM's mode and its dense curvature ",
                 sprintf("(no network, custom model or horseshoe prior; at most %d parameters): ",
                         dense_limit), "use control_variates = FALSE")
    if (length(without))
        stop_arg("control_variates", "= TRUE runs the rule in the curvature of the mode found ",
                 "here: ", paste(without, collapse = " and "), " are for control_variates = FALSE")
    TRUE
}

## SGFS-CV's default batch: every row up to sgfs_full_batch_rows (the chain
## is then Metropolis adjusted and exact, at one pass over at most that many
## rows an iteration), else the shared default
sgfs_full_batch_rows <- 10000L
sgfs_cv_batch <- function(run) {
    N <- run$spec$N
    if (N > sgfs_full_batch_rows || run$spec$batch_size == N) return(run)
    run$spec$batch_size <- as.integer(N)
    run$spec$window_rows <- as.integer(N)      # (one window: the whole batch)
    run
}

## sgfs() with control variates (src/fisher.c): the rule in the metric of the
## mode, the gradient centred there as sgldcv()'s, rows of high leverage in
## every minibatch, separated levels updated exactly (R/fit.R); with every
## row in every batch, the Metropolis-adjusted rule (src/sampler_sgfs_mh.c)
sgfs_cv <- function(run, preconditioner, sizes, alpha, schedule, fisher_rows,
                    target_accept, call) {
    check_target_accept(target_accept)
    N <- run$spec$N
    n <- run$spec$batch_size
    full <- n == N
    if (!full) run <- fast_mixing_run(run)
    if (alpha == 0)
        stop_arg("alpha", "= 0 leaves all the noise to the minibatches, which the control ",
                 "variates make nearly noiseless (the chain would only flip about the mode): ",
                 "use alpha > 0, or control_variates = FALSE for the paper's rule at alpha = 0")
    ## (with every row in every batch the gradient is exact: no Fisher rows)
    fisher_rows <- if (full) NULL
                   else if (is.null(fisher_rows)) default_fisher_rows(n, length(run$theta0))
                   else fisher_rows
    setup <- function(run) {
        m <- sampler_metric("mode", run)
        lap <- m$laplace
        h <- 2 / (1 + alpha^2)                # the step in posterior sds (fisher.c)
        if (full) {
            out <- sgfs_mh_setup(run, m, 2 / (1 + max(alpha, 1)^2), target_accept)
            out$settings <- c(out$settings, list(preconditioner = "full", alpha = max(alpha, 1),
                                                 schedule = "constant", control_variates = TRUE))
            return(out)
        }
        ## rows whose appearance would move the chain by more than half a
        ## posterior sd go into every minibatch (a step moves h sds per unit
        ## of whitened gradient); where some remain, a smaller step
        strata <- minibatch_strata(run, lap, h, cv = TRUE)
        h <- h * strata$shrink
        alpha_run <- sqrt(2 / h - 1)
        eps <- 4 / alpha_run^2
        c(sgfs_rule(preconditioner, sizes, run$spec$burnin),
          list(spec = c(mode_control_variates(run, lap), m$spec,
                      list(drift_limit = sgfs_drift_limit / h, sgfs_robust = TRUE),
                      if (fisher_rows < n) list(fisher_rows = fisher_rows),
                      if (length(strata$rows)) list(fixed = strata$rows)),
             schedule = schedule_vector(schedule, eps, run$n_iter, epoch_length(run)),
             start = if (!run$user_init) lap$mode,
             evals_per_iter = cv_evals(n, strata$rows),
             settings = list(preconditioner = preconditioner, alpha = alpha_run,
                             schedule = schedule, robust = TRUE, fisher_rows = fisher_rows,
                             curvature = TRUE, control_variates = TRUE,
                             fixed_rows = length(strata$rows), metric = metric_type(m),
                             blocks = if (preconditioner == "block") sizes)))
    }
    sg_fit("sgfs", setup, run, call)
}

## The set-up of the Metropolis-adjusted SGFS step with every row in every
## batch (src/sampler_sgfs_mh.c), in the metric `m` of the mode, from the
## step h (in posterior sds, h = 2 eps / (eps + 4) for the schedule's eps =
## 4 / alpha^2) that adapts to `target_accept` during burn-in.  (No
## separated levels' updates: the Metropolis-Hastings test makes every
## move exact, and the engine evaluates the full posterior itself.)
sgfs_mh_setup <- function(run, m, h, target_accept) {
    list(engine = "sgfs_mh",
         spar = c(target_accept = target_accept, m$laplace$U),
         schedule = schedule_vector("constant", 4 * h / (2 - h), run$n_iter),
         start = if (!run$user_init) m$laplace$mode,
         evals_per_iter = run$spec$N,
         settings = list(metropolis = TRUE, target_accept = target_accept))
}

## the clip of SGFS-CV's whitened gradient, in posterior sds of one step's
## drift: in the bulk of a near-Gaussian posterior (whitened gradient about
## N(0, 1) a coordinate) it never binds, far out it keeps one step from
## throwing the chain further than this
sgfs_drift_limit <- 6

## SGFS's curvature for the engine (spec$sgfs_curvature; src/sgfs_blockdiag.c)
## and the mode it is taken at: list(H = the log posterior's curvature at
## the mode, internal scale, D x D or its diagonal for SGFS-d, mode, rows =
## the rows the mode was found on).  The run's Laplace approximation where
## it has one or it is cheap (at most 2 warm_rows rows); beyond, the mode of
## warm_rows evenly spaced rows (weighted N / m, as posterior_laplace()'s
## warm start) and the curvature there: gamma >= N / n is large there, H's
## share of the preconditioner about 1 / gamma, and the subset's relative
## error (about sqrt(D / m)) matters less still, while the full mode's
## search costs more passes over the data than the burn-in it saves.  NULL
## where there is none (a network, a custom model, a horseshoe) or beyond
## dense_limit parameters.
sgfs_curvature <- function(run, preconditioner) {
    if (!laplace_available(run$design) || !is.null(run$design$hs) ||
        length(run$theta0) > dense_limit) return(NULL)
    N <- run$spec$N
    out <- if (!is.null(run$cache$laplace) || N <= 2L * warm_rows) {
        lap <- posterior_laplace(run)
        list(H = lap$H, mode = lap$mode, rows = N)
    } else {
        fit <- newton_mode(subset_spec(run$spec, warm_rows), run$theta0, N = N, tol = 1e-3)
        list(H = fit$curvature$H, mode = fit$mode, rows = warm_rows)
    }
    if (preconditioner == "diagonal") out$H <- diag(out$H)
    out
}

## SGFS's steps are Fisher-scoring steps shrunk by about 2 / ((1 + alpha^2)
## gamma), gamma ~ N / n: from far off (a start at zero) a chain
## forgets its start in e-folds of (1 + alpha^2) gamma / 2 iterations, and a
## tenth of the run, the default burn-in, is too short on large data (a
## logistic regression of 500,000 rows in batches of 500: 70 posterior sds
## from the mode after 1,000 iterations, an sd of the kept draws 1.7 times
## the posterior's).  When the chains set the run's length (n_iter = NULL)
## and burnin is not given, SGFS's burn-in is at least log(far) such
## e-folds, from `far` posterior sds off to 1 (20,000, 10 e-folds, from a
## start far away; a GLM starts at the mode, or at a subset's, about
## sqrt(N / m) sds off: sgfs_curvature()), the run lengthened to keep as
## many draws as before; a given n_iter keeps burn-in at its tenth.
sgfs_burnin <- function(run, alpha, far = 20000) {
    need <- ceiling(log(far) * (1 + alpha^2) * gamma_fpc(run$spec$N, run$spec$batch_size) / 2)
    if (!run$grow || need <= run$spec$burnin) return(run)
    kept <- run$n_iter - run$spec$burnin
    run$spec$burnin <- as.integer(need)
    run$n_iter <- as.integer(need + kept)
    run
}

## SGFS's Fisher-estimate rows per minibatch: as many as make their update
## (m D^2 / 2 multiply-adds, dsyrk's upper triangle) cost about the
## minibatch gradient's n D, m = 2 n / D, never fewer than D + 1 (I_t then
## has full rank after one iteration) nor more than n: SGFS-f's iteration
## then costs a small multiple of sgld()'s (bench/results/peers-*.md),
## and I_t's relative error, about sqrt(D / (m t')) after t' iterations,
## stays below t'^-1/2.
default_fisher_rows <- function(n, D) as.integer(min(n, max(D + 1, ceiling(2 * n / D))))

#' Stochastic gradient Langevin dynamics
#'
#' Samples the posterior with SGLD (Welling and Teh, 2011):
#' \deqn{\theta \leftarrow \theta + \frac{\epsilon_t}{2}\widehat{\nabla L}(\theta)
#'   + N(0, \epsilon_t I),}{theta <- theta + epsilon_t/2 hat(grad L)(theta) + N(0, epsilon_t I),}
#' where \eqn{\widehat{\nabla L} = \nabla\log p(\theta) + (N/n)\sum_{i \in S_t}
#' \nabla \log p(y_i \mid \theta)}{hat(grad L) = grad log p(theta) + (N/n) sum_(i in S_t) grad log p(y_i | theta)} is the minibatch estimate of the gradient
#' of the log posterior.  SGLD's draws are biased by the step size: the
#' default step is derived from the data so that this bias stays near 5 %
#' in the stiffest direction: \eqn{\epsilon = 0.2 / (\gamma \lambda_{max})}{epsilon = 0.2 / (gamma lambda_max)}
#' with \eqn{\lambda_{max}}{lambda_max} the largest eigenvalue of the negative Hessian
#' of the log posterior at its mode (both estimated from up to 5000 evenly
#' spaced examples, without random numbers) and
#' \eqn{\gamma = 1 + (N/n)(N-n)/(N-1)}{gamma = 1 + (N/n)(N-n)/(N-1)}).
#' That \eqn{\gamma}{gamma} assumes the scores' covariance is the curvature's; on
#' overdispersed data (counts, heteroscedastic residuals) the minibatch
#' noise is several times larger, so in the metric of the mode a pilot of
#' 1,000 iterations per chain measures it, as for [sgldcv()], and slows the
#' coordinates it would inflate by more than 5 % (`settings$pilot`).
#'
#' @inheritParams sampler-arguments
#' @param stepsize the step size \eqn{\epsilon}{epsilon} (the first one, with a
#'   decaying `schedule`); `NULL` derives it from the data, in the metric's
#'   coordinates; for a network,
#'   from the gradient noise the chain meets (see [mlp()], "Default steps").
#' @param metric `"mode"` to run the sampler in the posterior's whitened
#'   coordinates \eqn{z = U\theta}{z = U theta}, \eqn{U^\top U = H}{U' U = H} the curvature of the
#'   log posterior at its mode (found once, by Newton's method on all rows;
#'   beyond 500 parameters \eqn{U = CS}{U = C S}, \eqn{S}{S} the diagonal's square
#'   root, corrected by \eqn{C}{C} along the up to 16 eigenvectors of
#'   \eqn{S^{-1}HS^{-1}}{S^-1 H S^-1} whose eigenvalues are above 3 or below
#'   1/3, found by Lanczos iteration (`sgfs_control(metric_rank = k)` sets
#'   the most, 0 for the diagonal alone): wide designs whose rows hold about
#'   the same number of features have such outliers), so that one step suits flat
#'   and stiff directions alike and the default step is chosen where the
#'   posterior is near \eqn{N(\cdot, I)}{N(*, I)}; `"identity"` for the paper's
#'   algorithm, unpreconditioned.  `NULL` (the default): `"mode"` for a GLM,
#'   `"identity"` for a network or a [custom_model()], which have no single
#'   mode.  The update in \eqn{z}{z} is the rule above with
#'   \eqn{\widehat{\nabla L}}{hat(grad L)} replaced by \eqn{U^{-\top}\widehat{\nabla L}}{U'^-1 hat(grad L)}.
#'   For SGLD and SGLD-CV the metric also brings the injected noise of
#'   Leimkuhler and Matthews (2013), the mean of two consecutive draws,
#'   \eqn{\sqrt{\epsilon}(\xi_t + \xi_{t+1})/2}{sqrt(epsilon)(xi_t + xi_(t+1))/2}: at the same cost, its
#'   stationary law is exact for a Gaussian posterior at any stable step
#'   (only the minibatch noise's \eqn{O(\epsilon)}{O(epsilon)} bias is left) and
#'   within \eqn{O(\epsilon^2)}{O(epsilon^2)} of a skewed one, against \eqn{O(\epsilon)}{O(epsilon)}
#'   for the paper's noise.
#' @param schedule `"constant"`, or a [schedule_polynomial()] or
#'   [schedule_cyclical()] (or [schedule_step()]).
#' @return As [sgfs()].
#' @references Welling, M. and Teh, Y. W. (2011). Bayesian learning via
#'   stochastic gradient Langevin dynamics. ICML.
#'
#'   Leimkuhler, B. and Matthews, C. (2013). Rational construction of
#'   stochastic numerical methods for molecular sampling. Applied
#'   Mathematics Research eXpress 2013(1), 34-56.
#' @examples
#' data(Pima.tr, package = "MASS")
#' fit <- sgld(type ~ ., data = Pima.tr, n_iter = 2000, batch_size = 50)
#' coef(fit)
#' @export
sgld <- function(x, ...) UseMethod("sgld")

#' @rdname sgld
#' @export
sgld.formula <- formula_method(function(...) sgld.default(...))

#' @rdname sgld
#' @export
sgld.default <- sampler_method(
    alist(stepsize = NULL, schedule = "constant", metric = NULL),
    defaults = alist(init = if (!is.list(model) || !identical(model$type, "mlp")) "map"), {
    metric <- check_metric(metric)
    run <- prepare_run_here(environment())
    setup <- function(run) {
        ## gamma * lambda_max: the stiffest direction's curvature (in the
        ## metric's coordinates), inflated by the minibatch noise
        m <- sampler_metric(metric, run)
        gamma <- noise_gamma(run)
        noise <- is.null(m) && noise_stepped(run, stepsize)
        lambda <- if (!is.null(m)) m$lambda else if (noise) NA_real_
                  else stiffness_if_needed(run, stepsize)
        eps <- if (noise) 1 else if (is.null(stepsize)) 0.2 / (gamma * lambda)
               else check_positive(stepsize, "stepsize")
        strata <- if (!is.null(m)) minibatch_strata(run, m$laplace, eps / 2, cv = FALSE)
        if (is.null(stepsize) && !is.null(strata)) eps <- eps * strata$shrink
        sched <- schedule_vector(schedule, eps, run$n_iter, epoch_length(run))
        first <- first_step(sched)
        list(engine = "sgld", spar = c(lm_noise = !is.null(m)), schedule = sched,
             spec = c(m$spec, if (!is.null(m)) list(drift_limit = 2 / eps),
                      if (length(strata$rows)) list(fixed = strata$rows)),
             evals_per_iter = run$spec$batch_size + length(strata$rows),
             noise_rule = if (noise) list(per_step = function(ms) ms / (4 * run$temperature),
                                          diagonal = TRUE),
             ## in the metric, a pilot slows the coordinates whose gradient
             ## noise exceeds what gamma assumes (overdispersed data)
             pilot = if (is.null(stepsize) && !is.null(m) && sched[1L] == 0) eps,
             settings = list(stepsize = first, schedule = schedule, metric = metric_type(m),
                             fixed_rows = length(strata$rows),
                             inflation = sgld_inflation(first, lambda, gamma, !is.null(m)),
                             step_5pct = sgld_step(lambda, gamma, lm = !is.null(m))))
    }
    sg_fit("sgld", setup, run, match.call())
})

## SGLD's stationary variance inflation in the stiffest direction (curvature
## lambda, minibatch-noise factor gamma), exact for the linearised chain
## z' = (1 - eps lambda / 2) z + N(0, eps + eps^2 (gamma - 1) lambda / 4):
## Var z = (1 + eps (gamma - 1) lambda / 4) / (lambda (1 - eps lambda / 4)),
## i.e. an inflation of (eps gamma lambda / 4) / (1 - eps lambda / 4);
## infinite from eps lambda = 4, where the chain becomes unstable.  With the
## Leimkuhler-Matthews noise (lm = TRUE; src/sampler_sgld.c) the
## discretisation's part vanishes and only the minibatch noise's is left:
## Var z = 1 / lambda + eps (gamma - 1) / (4 (1 - eps lambda / 4)), an
## inflation of (eps (gamma - 1) lambda / 4) / (1 - eps lambda / 4).
sgld_inflation <- function(eps, lambda, gamma = 1, lm = FALSE) {
    if (is.na(lambda)) return(NA_real_)             # (no curvature measured)
    if (eps * lambda >= 4) return(Inf)
    (eps * (gamma - lm) * lambda / 4) / (1 - eps * lambda / 4)
}

## the step with `inflation` (5 %) by that formula, for the report's advice
## (NULL where every stable step inflates less: LM noise without minibatch
## noise)
sgld_step <- function(lambda, gamma = 1, inflation = 0.05, lm = FALSE) {
    if (is.na(lambda)) return(NULL)
    eps <- 4 * inflation / (lambda * (gamma - lm + inflation))
    if (eps * lambda < 2) eps
}

kind_sgfs <- kind(
    label = function(info) {
        s <- info$settings
        if (isTRUE(s$metropolis))
            return(sprintf(paste("SGFS, every row in every batch, Metropolis adjusted (alpha %s,",
                                 "adapted to acceptance %g; acceptance rate %.3f)"),
                           paste(sprintf("%.3g", unique(signif(2 / sqrt(info$eps), 3))),
                                 collapse = "/"),
                           s$target_accept, acceptance_rate(info)))
        sprintf("SGFS-%s%s (alpha = %.3g%s)", substr(s$preconditioner, 1L, 1L),
                if (isTRUE(s$control_variates)) " with control variates at the mode" else "",
                s$alpha,
                if (identical(s$preconditioner, "block"))
                    paste0("; blocks ", blocks_label(s$blocks)) else "")
    },
    divergence = function(info, eps)
        sprintf(paste("the step is too large for this posterior: try a larger alpha (now %g),",
                      "e.g. alpha = %g, or a larger batch_size"),
                info$settings$alpha, max(2, 3 * info$settings$alpha)),
    remedy = function(info)
        fisher_hint(info, sprintf("try a longer burnin, a larger alpha (now %g) or a larger batch_size",
                                  info$settings$alpha)),
    slow_mixing = TRUE)

kind_sgld <- step_kind("SGLD", horseshoe = TRUE)
