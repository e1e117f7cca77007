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
#' Two refinements of the paper's algorithm make SGFS-f exact for Gaussian
#' posteriors at any batch fraction: the factor \eqn{\gamma = 1 + (N/n)(N-n)/(N-1)}{gamma = 1 + (N/n)(N-n)/(N-1)}
#' for minibatches drawn without replacement, and the prior precision added
#' to the preconditioner.  The update is
#' \deqn{\theta \leftarrow \theta + 2[\gamma N (1+\alpha^2)\hat I + \Lambda]^{-1}
#'   (\widehat{\nabla L}(\theta) + \eta), \quad \eta \sim N(0, \alpha^2 \gamma N \hat I),}{theta <- theta + 2[gamma N (1+alpha^2) Ihat + Lambda]^(-1) (hat(grad L)(theta) + eta), eta ~ N(0, alpha^2 gamma N Ihat),}
#' with \eqn{\hat I}{Ihat} the running mean of the minibatch score covariance
#' (restarted half-way through burn-in) and \eqn{\Lambda}{Lambda} the prior precision
#' (for `laplace()` priors, that of a normal with the same variance).
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
#' @param x a formula `y ~ predictors` (with `data`), or a numeric matrix of
#'   predictors, dense or sparse (a [Matrix::sparseMatrix()], e.g. from
#'   [read_libsvm()]: kept as compressed rows, never densified, with the
#'   same draws as its dense version); for a [custom_model()], its data (a
#'   vector, matrix, data frame or list of them, one example per element or
#'   row).  The fit refers to its data rather than carrying a copy: a fit
#'   saved with [saveRDS()] holds its draws, and read back in another
#'   session takes its data again through [update()][update.sgfit].  The
#'   engine's one copy of a dense design is standardised in double
#'   precision; with `options(sgfs.precision = "single")` in single
#'   precision, half the memory (each value rounded once: a relative error
#'   below 6e-8, far inside any posterior's spread).  When that copy would
#'   take more than a quarter of the machine's memory, the engine reads a
#'   dense double matrix in place instead, standardising each value as it
#'   reads it (the same draws; an iteration a few times slower, a row's
#'   values being scattered): `options(sgfs.in_place = TRUE or FALSE)`
#'   decides it for any size.  Data larger than memory: a [design_file()]
#'   (see [shuffle_design_file()]).  Minibatches are random rows; from
#'   10,000 rows the engine holds its copy in a random order of its own and
#'   draws each minibatch as distinct blocks of w consecutive rows of it (w
#'   about 3e-4 N, at least 8, dividing the batch size): a random sample
#'   read as a few streams, 3-6 times faster an iteration than scattered
#'   rows, whose noise covariance differs from random rows' by a relative sd
#'   of about \eqn{\sqrt{4w/(3N)}}{sqrt(4 w / (3 N))} (at most 3.3 %, 2 %
#'   from 26,667 rows).  Per-row results (fitted values, residuals,
#'   `log_lik()`) are in the data's order.  A shuffled design file is read
#'   in the same blocks (whole-batch windows once it is larger than memory).
#'   `options(sgfs.batches = "rows")` draws random rows from the data in
#'   their order; `"windows"` takes whole-batch windows of any data (whose
#'   rows must then be in random order).
#' @param y the response, for the matrix method: 0/1, logical or a two-level
#'   factor for `binomial()` (as in [stats::glm()], the second level is the
#'   event whose probability is modelled), numbers for `gaussian()`, counts
#'   (non-negative whole numbers) for `poisson()`; left out for a
#'   [custom_model()].  For `binomial()` also, as in [stats::glm()], a
#'   two-column matrix `cbind(successes, failures)` of non-negative whole
#'   numbers (the model is that of the proportion \eqn{s/(s+f)}{s/(s+f)} with
#'   weight \eqn{s + f}{s + f}, times any `weights`; rows of no trial are kept with
#'   weight 0, as [stats::glm()] keeps them: they count for nothing), or
#'   proportions between 0 and 1 with `weights` giving the trials.
#' @param formula,data,subset,na.action as in [stats::glm()].
#' @param contrasts for the formula method: a list of contrasts for
#'   factors of the formula, as [stats::glm()] and [stats::model.matrix()]
#'   take them (e.g. `list(f = "contr.sum")` or `list(f = contr.helmert)`);
#'   the fit keeps them for [predict.sgfit()], `update()` and
#'   `model.matrix()`.
#' @param family `binomial()` (logit link, or `binomial(link = "probit")`;
#'   GLMs only), `gaussian()` (identity link),
#'   `poisson()` (log link; GLMs and [mlp()] networks) or
#'   [categorical()].  Other links are refused.  A Poisson chain is not
#'   protected against \eqn{\exp(\eta)}{exp(eta)} overflowing: a chain
#'   whose linear predictor runs past about 709 stops as diverged.
#' @param model `NULL` for the linear predictor of a GLM, a network such
#'   as [mlp()]`(30)`, whose output layer is the family's, or a model given
#'   by R functions, [custom_model()] (which takes no `family`).
#' @param prior prior of the coefficients, [normal()], [laplace()],
#'   [student_t()] or [cauchy()], on the standardised scale (see
#'   `standardize`), or one of rstanarm's prior objects (on the original
#'   scale, see [normal()]); it applies to the intercept too
#'   unless `prior_intercept` is given (except [hs()], a horseshoe whose
#'   scales are sampled with the coefficients, which the intercept never
#'   gets: its default is `normal(0, 2.5)`).  For a network, one prior for every
#'   weight and bias or a list with one per layer (see [mlp()]).  `NULL`
#'   (the default): `normal(0, 2.5)` for a GLM; for a network, on each
#'   layer's weights and biases `normal(0, 1/sqrt(fan-in))`.
#' @param batch_size minibatch size \eqn{n}{n}, between 2 and the number of
#'   rows \eqn{N}{N}; by default \eqn{N/100}{N/100} clamped to \[100, 500\].
#' @param n_iter number of iterations, burn-in included.  `NULL` (the
#'   default) lets the chains set it: 10,000 iterations, then the part after
#'   burn-in is extended, by the factor the effective sample size so far
#'   projects (times 1.15, between 1.2 and 4; 2 while it is below 20), with
#'   `thin` doubled as needed to keep at most about 9,000 draws per chain,
#'   until every parameter has at least 400 bulk effective draws over all
#'   chains and, with several chains, rank-normalised split R-hat at most
#'   1.01 (Vehtari et al. 2021), or `max_time` would be passed, or a run 8
#'   times as long has not doubled the effective sample size (a chain that
#'   does not mix), at most 9 extensions.  Each extension continues the
#'   chains, so the draws equal those of a run with the final `n_iter` and
#'   `thin`; the report lists the stages.  With `keep = predictive(...)` or
#'   a cyclical `schedule` (whose cycles depend on `n_iter`), `NULL` means
#'   10,000.
#' @param burnin number of initial iterations not kept; `NULL`:
#'   `n_iter %/% 10` (1,000 with `n_iter = NULL`; then for `sgfs()` at least
#'   \eqn{10 (1 + \alpha^2) \gamma / 2}{10 (1 + alpha^2) gamma / 2} iterations,
#'   \eqn{\gamma = 1 + (N/n)(N-n)/(N-1)}{gamma = 1 + (N/n)(N-n)/(N-1)}, the run
#'   lengthened to keep as many draws: its steps are Fisher-scoring steps
#'   shrunk by about \eqn{2/((1 + \alpha^2)\gamma)}{2/((1 + alpha^2) gamma)},
#'   and that many iterations forget a start 20,000 posterior sds away).
#' @param thin keep every `thin`-th iteration after burn-in (with
#'   `n_iter = NULL`, the first stage's thin).
#' @param keep `"draws"` to keep the draws of every parameter, or
#'   [predictive()]`(newdata)` to keep a running posterior predictive on
#'   `newdata` (and the draws of a few parameters) instead, for networks too
#'   large to store all their draws.
#' @param chains number of chains (at most 100,000); several give an `mcmc.list`.
#' @param init where the chains start: `"map"` for the posterior mode found
#'   by [sga()] (with its defaults; it uses random numbers before the chain
#'   does), numbers on the original scale (one per parameter), or `NULL`
#'   for zero on the standardised scale (a network: random weights, see
#'   [mlp()]; a [custom_model()]: its `init`).  The default is `NULL` for the
#'   samplers whose own burn-in finds the posterior quickly (SGFS, except on
#'   a network) or that start at a mode they compute (SGLD-CV, OSGFS, MALA,
#'   HMC), and `"map"` for the others, whose small steps would take long to
#'   get there.
#' @param standardize centre and scale the predictors (and a gaussian
#'   response) internally; draws are reported on the original scale.
#' @param progress show a progress bar.
#' @param preconditioner `"full"` (SGFS-f), `"diagonal"` (SGFS-d) or
#'   `"block"` (SGFS-b, block diagonal; see `blocks`).
#' @param alpha noise parameter \eqn{\alpha = 2/\sqrt{\epsilon}}{alpha = 2/sqrt(epsilon)} (step
#'   \eqn{\epsilon = 4/\alpha^2}{epsilon = 4/alpha^2}); 0 injects no noise, so all randomness
#'   comes from the minibatches (it mixes about twice as fast as the default
#'   on near-Gaussian posteriors, but its chain is anti-correlated when
#'   `batch_size` is above half the rows, and it is refused when
#'   `batch_size` is all rows).
#' @param schedule `"constant"`, or a [schedule_polynomial()] or
#'   [schedule_cyclical()] that varies \eqn{\epsilon}{epsilon} from \eqn{4/\alpha^2}{4/alpha^2}.
#' @param prior_intercept optional separate prior for the intercept.
#' @param sigma for `gaussian()`: a fixed noise standard deviation on the
#'   response's scale; `NULL` samples `log_sigma` (prior `normal(0, 5)` on
#'   the standardised scale).
#' @param cores chains run in parallel on this many cores (forked workers;
#'   the draws equal those of sequential chains).  With a [future::plan()]
#'   other than sequential (another R session, a cluster of machines, a
#'   scheduler's jobs) the chains run there instead, as futures, with the
#'   same draws, and `cores` is not used.
#' @param max_time with `n_iter = NULL`: the time budget in seconds of the
#'   whole call; the run does not start an extension whose time, projected
#'   from the pace so far, would pass it (the report says so), and its first
#'   run of 10,000 iterations is shortened (to no fewer than 50) when a
#'   probe of a few iterations shows that it would take more than a
#'   quarter of the budget.
#' @param verbose with `n_iter = NULL`: a message per stage of the run
#'   (iterations, time, smallest bulk effective sample size, largest R-hat,
#'   and the time the next stage will take).
#' @param intercept matrix method: add an intercept column (with `FALSE`, a
#'   column of ones in `x`, if any, is taken as the intercept).
#' @param offset `NULL`, or a known part of the linear predictor: one
#'   number per row, \eqn{\eta_i = x_i'\beta + o_i}{eta_i = x_i' beta +
#'   o_i}, for `binomial()`, `gaussian()` and `poisson()` GLMs (e.g. the log
#'   exposure of a Poisson rate model).  The formula method also takes
#'   `offset()` terms in the formula, evaluated in `data` as by
#'   [stats::glm()]; an `offset` argument there is evaluated in `data` too,
#'   and the two are added.  [predict.sgfit()] and the draw-level methods
#'   evaluate a formula fit's offsets in `newdata`; a matrix fit's new rows
#'   need their `offset` given.  Not for networks, [categorical()] or
#'   `keep = predictive()`.
#' @param weights `NULL`, or prior weights, one non-negative finite number
#'   per row (some may be zero, not all), for `binomial()`, `gaussian()`
#'   and `poisson()` GLMs, as in [stats::glm()]: the log-likelihood is
#'   \eqn{\sum_i w_i \ell_i(\theta)}{sum_i w_i l_i(theta)} for `binomial()`
#'   (logit and probit) and `poisson()`; for `gaussian()` they are
#'   precisions, \eqn{y_i \sim N(\eta_i, \sigma^2 / w_i)}{y_i ~ N(eta_i,
#'   sigma^2 / w_i)} (which enters the likelihood of \eqn{\sigma}{sigma} too);
#'   a row of weight 0 counts for nothing.  The formula method evaluates them
#'   in `data`, as [stats::glm()] does; they apply to every minibatch score,
#'   the mode, the curvature, the rows every minibatch holds and the
#'   draw-level methods (see [sgfit-posterior]).  Integer weights \eqn{k}{k}
#'   give the posterior of the data with each row repeated \eqn{k}{k} times
#'   (`binomial()`, `poisson()`).  Not for networks, [categorical()] or a
#'   [custom_model()].
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
#' @param blocks for `preconditioner = "block"`: the sizes of the contiguous
#'   parameter blocks, in parameter order, summing to the number of
#'   parameters (e.g. `c(2, 1)`).  `NULL` takes the model's parameter groups:
#'   the coefficients as one block and `log_sigma` (a sampled noise scale of
#'   `gaussian()`) as another.
#' @param ... arguments passed to the default method.
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
sgfs.default <- function(x, y, family = binomial(), model = NULL,
                         prior = NULL,
                         batch_size = NULL, n_iter = NULL,
                         burnin = NULL, thin = 1L, keep = "draws",
                         chains = 1L,
                         init = if (identical(model$type, "mlp")) "map",
                         standardize = TRUE,
                         progress = interactive(),
                         preconditioner = c("full", "diagonal", "block"), alpha = 1,
                         schedule = "constant", prior_intercept = NULL,
                         sigma = NULL, cores = 1L, max_time = 300, verbose = TRUE, intercept = TRUE, offset = NULL, weights = NULL, blocks = NULL,
                         robust = TRUE, fisher_rows = NULL, ...) {
    no_dots(...)
    robust <- check_flag(robust, "robust")
    run <- prepare_run_here(environment())
    alpha <- check_nonnegative(alpha, "alpha")
    if (is.null(burnin)) run <- sgfs_burnin(run, alpha)
    preconditioner <- choose_arg(preconditioner, c("full", "diagonal", "block"),
                                 "preconditioner")
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
    n <- run$spec$batch_size
    fisher_rows <- if (is.null(fisher_rows)) default_fisher_rows(n, D)
                   else check_count(fisher_rows, "fisher_rows", 2L, n)
    if (alpha == 0 && run$spec$batch_size == run$spec$N)
        stop_arg("alpha", "= 0 with batch_size = N (all rows) injects no noise: the chain ",
                 "would be deterministic; use alpha > 0 or a smaller batch_size")
    setup <- function(run) {
        eps <- if (alpha > 0) 4 / alpha^2 else Inf
        restart <- if (run$spec$burnin >= 2L) run$spec$burnin %/% 2L + 1L else 0
        list(engine = paste0("sgfs_", c(full = "full", diagonal = "diag",
                                        block = "block")[[preconditioner]]),
             spec = c(if (robust) list(sgfs_robust = TRUE),
                      if (fisher_rows < n) list(fisher_rows = fisher_rows)),
             spar = if (preconditioner == "block")
                        c(restart = restart, blocks = length(sizes), sizes)
                    else c(restart = restart),
             schedule = schedule_vector(schedule, eps, run$n_iter),
             settings = list(preconditioner = preconditioner, alpha = alpha,
                             schedule = schedule, robust = robust, fisher_rows = fisher_rows,
                             blocks = if (preconditioner == "block") sizes))
    }
    sg_fit("sgfs", setup, run, match.call())
}

## SGFS's steps are Fisher-scoring steps shrunk by about 2 / ((1 + alpha^2)
## gamma), gamma ~ N / n: from far off (its default start is zero) a chain
## forgets its start in e-folds of (1 + alpha^2) gamma / 2 iterations, and a
## tenth of the run, the default burn-in, is too short on large data (a
## logistic regression of 500,000 rows in batches of 500: 70 posterior sds
## from the mode after 1,000 iterations, an sd of the kept draws 1.7 times
## the posterior's).  When the chains set the run's length (n_iter = NULL)
## and burnin is not given, SGFS's burn-in is at least 10 such e-folds (from
## 20,000 sds off to 1), the run lengthened to keep as many draws as
## before; a given n_iter keeps burn-in at its tenth.
sgfs_burnin <- function(run, alpha) {
    need <- ceiling(10 * (1 + alpha^2) * gamma_fpc(run$spec$N, run$spec$batch_size) / 2)
    if (!run$grow || need <= run$spec$burnin) return(run)
    kept <- run$n_iter - run$spec$burnin
    run$spec$burnin <- as.integer(need)
    run$n_iter <- as.integer(need + kept)
    run
}

## SGFS's Fisher-estimate rows per minibatch: as many as make their update
## (m D^2 / 2 multiply-adds, dsyrk's upper triangle) cost about the
## minibatch gradient's n D, m = 2 n / D, never fewer than D + 1 (I_t then
## has full rank after one iteration) nor more than n.  (It was max(2D,
## 10 n / D): SGFS-f then cost 2.1 x sgld() an iteration at Covertype's
## shape, bench/results-peers-*.md; I_t's relative error, about
## sqrt(D / (m t')) after t' iterations, stays below t'^-1/2.)
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
#'
#' @inheritParams sgfs
#' @param stepsize the step size \eqn{\epsilon}{epsilon} (the first one, with a
#'   decaying `schedule`); `NULL` derives it from the data, in the metric's
#'   coordinates.
#' @param metric `"mode"` to run the sampler in the posterior's whitened
#'   coordinates \eqn{z = U\theta}{z = U theta}, \eqn{U^\top U = H}{U' U = H} the curvature of the
#'   log posterior at its mode (found once, by Newton's method on all rows;
#'   a diagonal \eqn{U}{U} beyond 500 parameters), so that one step suits flat
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
#'   [schedule_cyclical()].
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
sgld.default <- function(x, y, family = binomial(), model = NULL,
                         prior = NULL,
                         batch_size = NULL, n_iter = NULL,
                         burnin = NULL, thin = 1L, keep = "draws",
                         chains = 1L,
                         init = "map", standardize = TRUE,
                         progress = interactive(), stepsize = NULL,
                         schedule = "constant", prior_intercept = NULL,
                         sigma = NULL, cores = 1L, max_time = 300, verbose = TRUE, intercept = TRUE, offset = NULL, weights = NULL, metric = NULL, ...) {
    no_dots(...)
    metric <- check_metric(metric)
    run <- prepare_run_here(environment())
    setup <- function(run) {
        ## gamma * lambda_max: the stiffest direction's curvature (in the
        ## metric's coordinates), inflated by the minibatch noise
        m <- sampler_metric(metric, run)
        gamma <- gamma_fpc(run$spec$N, run$spec$batch_size)
        lambda <- if (is.null(m)) posterior_stiffness(run)$lambda_max else m$lambda
        eps <- if (is.null(stepsize)) 0.2 / (gamma * lambda) else check_positive(stepsize, "stepsize")
        strata <- if (!is.null(m)) minibatch_strata(run, m$laplace, eps / 2, cv = FALSE)
        if (is.null(stepsize) && !is.null(strata)) eps <- eps * strata$shrink
        sched <- schedule_vector(schedule, eps, run$n_iter)
        first <- first_step(sched)
        list(engine = "sgld", spar = c(lm_noise = !is.null(m)), schedule = sched,
             spec = c(m$spec, if (!is.null(m)) list(drift_limit = 2 / eps),
                      if (length(strata$rows)) list(fixed = strata$rows)),
             evals_per_iter = run$spec$batch_size + length(strata$rows),
             settings = list(stepsize = first, schedule = schedule, metric = metric_type(m),
                             fixed_rows = length(strata$rows),
                             inflation = sgld_inflation(first, lambda, gamma, !is.null(m)),
                             step_5pct = sgld_step(lambda, gamma, lm = !is.null(m))))
    }
    sg_fit("sgld", setup, run, match.call())
}

## prepare_run() on the shared arguments of the calling sampler (a custom
## model takes no `y`; whether `family` was given matters to it)
prepare_run_here <- function(frame) {
    args <- mget(intersect(setdiff(names(formals(prepare_run)), "family_given"), ls(frame)),
                 envir = frame)
    if (eval(quote(missing(y)), frame)) args["y"] <- list(NULL)
    args$family_given <- !eval(quote(missing(family)), frame)
    do.call(prepare_run, args)
}

no_dots <- function(...) {
    extra <- names(list(...))
    if ("contrasts" %in% extra)
        stop_arg("contrasts", "is for the formula method: a matrix x is already coded")
    if (length(extra))
        stop(sprintf("unknown argument(s): %s",
                     paste(ifelse(nzchar(extra), extra, "<unnamed>"), collapse = ", ")),
             call. = FALSE)
}

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
    if (eps * lambda >= 4) return(Inf)
    (eps * (gamma - lm) * lambda / 4) / (1 - eps * lambda / 4)
}

## the step with `inflation` (5 %) by that formula, for the report's advice
## (NULL where every stable step inflates less: LM noise without minibatch
## noise)
sgld_step <- function(lambda, gamma = 1, inflation = 0.05, lm = FALSE) {
    eps <- 4 * inflation / (lambda * (gamma - lm + inflation))
    if (eps * lambda < 2) eps
}

kind_sgfs <- kind(
    label = function(info) {
        s <- info$settings
        sprintf("SGFS-%s (alpha = %g%s)", substr(s$preconditioner, 1L, 1L), s$alpha,
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

kind_sgld <- step_kind("SGLD")
