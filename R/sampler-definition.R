## A sampler is defined once, in its own file (R/samplers-*.R): its user
## function's default method is made here, by sampler_method(), from the
## sampler's own arguments and its body (their checks, then the set-up that
## sg_fit() runs: the engine's rule, its settings, the default step); its
## kind, kind_<method> beside it (label, hints; R/sampler-kinds.R), and its
## help page's own arguments complete it.  The arguments every sampler
## shares are defined once, below, with their defaults, and documented once
## (?`sampler-arguments`, which every sampler's page inherits).  Every
## sampler's usage reads the same way: the shared head (data, model, prior,
## run), the sampler's own arguments, the shared tail, `...`.

#' Arguments shared by the samplers
#'
#' Every sampler, [sgfs()], [sgld()], [sgldcv()], [psgld()], [sghmc()],
#' [sgnht()], [isgd()], [osgfs()], [mala()] and [hmc()], takes these
#' arguments with these meanings and defaults besides its own, and so does
#' the optimiser [sga()] but for `keep`, `chains`, `cores`, `max_time`,
#' `verbose` and `temperature`.  Each sampler's page gives its usage and says where a default
#' differs (`init`, and the run length of [sga()]).
#'
#' @param x a formula `y ~ predictors` (with `data`), or a numeric matrix of
#'   predictors, dense or sparse (a [Matrix::sparseMatrix()], e.g. from
#'   [read_libsvm()]: kept as compressed rows, never densified, with the
#'   same draws as its dense version); for a [custom_model()], its data (a
#'   vector, matrix, data frame or list of them, one example per element or
#'   row).  The fit refers to its data rather than carrying a copy: a fit
#'   saved with [saveRDS()] holds its draws, and read back in another
#'   session takes its data again through [update()][update.sgfit].  A
#'   dense double matrix of 10,000 rows or more whose copy would take more
#'   than 1/64 of the machine's memory (`sgfs_control(memory =)` bytes
#'   instead) is not copied: while the
#'   fit (or [update()][update.sgfit]) runs, its values are moved, where
#'   they are, into the engine's layout (its rows in a random order of the
#'   engine's, each row's values together), and put back exactly, bit for
#'   bit, before the call returns, also when it stops with an error or
#'   Ctrl-C (so do not read `x` from a condition handler during the call).
#'   This takes a few passes over `x` (about 1.5 s at 2e6 x 50) and gives
#'   the draws of a copy, an iteration costing 1.1-1.6 times a copy's.
#'   Otherwise (a smaller matrix, a data frame, or values R does not hold
#'   itself, such as a memory-mapped ALTREP vector) the engine makes one
#'   standardised copy, in double precision, or in single precision, half
#'   the memory (each value rounded once: a relative error below 6e-8, far
#'   inside any posterior's spread), when the double copy would take more
#'   than a quarter of the machine's memory or with
#'   `control = sgfs_control(precision = "single")`
#'   (`"double"` forbids it).  `sgfs_control(in_place = FALSE)` asks for
#'   the copy whatever the matrix, `TRUE` for reading any dense double
#'   matrix in place; one that cannot be laid out is then read with a
#'   row's values scattered (an iteration about 12 times slower at 2e6 x
#'   50, where a shuffled [design_file()] is faster), by default only when
#'   even a single-precision copy would take more than a quarter of the
#'   memory.
#'   Data larger than memory: a [design_file()]
#'   (see [shuffle_design_file()]).  Minibatches are random rows; from
#'   10,000 rows the engine holds its rows in a random order of its own and
#'   draws each minibatch as distinct blocks of w consecutive rows of it (w
#'   about 3e-4 N, at least 8, dividing the batch size): a random sample
#'   read as a few streams, 3-6 times faster an iteration than scattered
#'   rows, whose noise covariance differs from random rows' by a relative sd
#'   of about \eqn{\sqrt{4w/(3N)}}{sqrt(4 w / (3 N))} (at most 3.3 %, 2 %
#'   from 26,667 rows).  Per-row results (fitted values, residuals,
#'   `log_lik()`) are in the data's order.  A shuffled design file is read
#'   in the same blocks (whole-batch windows once it is larger than memory).
#'   `sgfs_control(batches = "rows")` draws random rows from the data in
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
#' @param formula,data,subset,na.action as in [stats::glm()].  For [sgld()],
#'   [sgldcv()] (first-order control variates that follow the effects; the
#'   fastest on large data), [psgld()], [sghmc()] and [sgnht()] the formula may have lme4's
#'   random-effect terms, `(1 | g)`, `(x | g)`, `(x || g)`, crossed `(1 | g1)
#'   + (1 | g2)` and nested `(1 | g1/g2)` (gaussian, binomial and poisson
#'   models; see `vignette("internals")`, "Mixed models"): the draws then
#'   hold each term's sds `sd[x | g]` and correlations `cor[x1,x2 | g]` after
#'   the fixed effects, under rstanarm's `decov(1, 1, 1, 1)` (a gaussian
#'   model's sds scaled by its sigma, as rstanarm does), then the group
#'   effects `b[x g:level]` (up to 10,000 of them by default, see
#'   [sgfs_control()]); [ranef()][sgfit-mixed], [fixef()][sgfit-mixed],
#'   [VarCorr()][sgfit-mixed] and `coef()` summarise them, and
#'   [predict.sgfit()] and the draw-level methods add them (`re.form`,
#'   `allow_new_levels`); the other samplers refuse such terms.
#' @param prior_covariance for the formula method with random-effect terms:
#'   the prior of each term's covariance, [decov()] (the default, `NULL`: its
#'   defaults, as 'rstanarm''s `stan_glmer()`) or [lkj()]; see
#'   [prior_covariance].
#' @param contrasts for the formula method: a list of contrasts for
#'   factors of the formula, as [stats::glm()] and [stats::model.matrix()]
#'   take them (e.g. `list(f = "contr.sum")` or `list(f = contr.helmert)`);
#'   the fit keeps them for [predict.sgfit()], `update()` and
#'   `model.matrix()`.
#' @param family `binomial()` (logit link, or `binomial(link = "probit")`;
#'   GLMs only), `gaussian()` (identity link),
#'   `poisson()` (log link; GLMs and [mlp()] networks), [neg_binomial_2()]
#'   and `Gamma(link = "log")` (a positive response whose sd is
#'   proportional to its mean; its shape sampled as `log_shape`, prior
#'   `normal(0, 5)`; GLMs only), [student()] (linear regression with t
#'   noise of fixed degrees of freedom; GLMs only), [cumulative()] (an
#'   ordinal response, logit or probit link; GLMs only), or [categorical()].
#'   Other links are
#'   refused.  A Poisson chain is not
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
#'   weight and bias or a list with one per layer (see [mlp()]).  Left
#'   out: `normal(0, 2.5)` for a GLM; for a network, on each layer's
#'   weights and biases `normal_gamma(1/sqrt(fan-in))` (a learned scale).
#'   (`prior = NULL` given is refused: in 'rstanarm' it means a flat prior,
#'   which the samplers do not have.)
#' @param batch_size minibatch size \eqn{n}{n}, between 2 and the number of
#'   rows \eqn{N}{N}; by default \eqn{N/100}{N/100} clamped to \[100, 500\], all rows
#'   when there are at most 100 (for [psgld()] a quarter of them then: its
#'   preconditioner follows the minibatch noise).
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
#'   `thin`; the report lists the stages.  A run stopped short of its
#'   target warns when its draws are not usable as they are: some
#'   parameter's bulk effective sample size below 100 or R-hat above 1.05.
#'   For a network (`model = mlp()`), whose weights are not identifiable
#'   (relabelled hidden units give the same function), the criterion is
#'   applied to each layer's log mean square weight and to `log_sigma`;
#'   the whole run doubles at each extension with half of it burn-in (a
#'   chain from random weights may take most of a short run to arrive), and
#'   it spends `max_time` rather than stop on a projection or a stalled
#'   effective sample size.
#'   With `keep = predictive(...)` or
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
#'   samplers that start at a mode they compute (SGLD-CV, OSGFS, MALA, HMC;
#'   SGFS on a GLM, at the mode its `curvature` is taken at, that of 50,000
#'   of the rows beyond 100,000) or whose own burn-in finds the posterior
#'   quickly (SGFS on a custom model), and `"map"` for the others (and SGFS
#'   on a network), whose small steps would take long to get there; but SGLD,
#'   pSGLD, SGHMC and SGNHT start a network at random weights (`NULL`): from
#'   a sharp mode their steps, set by the gradient noise there, stay too small
#'   to leave it (see [mlp()], "Default steps").
#' @param standardize centre and scale the predictors (and a gaussian
#'   response) internally; draws are reported on the original scale.
#' @param progress the run's progress over all its chains (forked or
#'   futures on this machine included): in an interactive session a bar with
#'   the time spent and left; elsewhere (Rscript, a log) lines, with `TRUE`
#'   one each tenth of the run, with `NA` (the default) one every 10
#'   seconds of a run that takes longer; `FALSE`: nothing.
#' @param prior_intercept optional separate prior for the intercept.
#' @param sigma for `gaussian()`: a fixed noise standard deviation on the
#'   response's scale; `NULL` samples `log_sigma` (prior `normal(0, 5)` on
#'   the standardised scale).
#' @param cores chains run in parallel on this many cores (forked workers;
#'   the draws equal those of sequential chains); by default the option
#'   `mc.cores`, as in 'rstanarm', else 1.  With a [future::plan()]
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
#'   per row (some may be zero, not all), for `binomial()`, `gaussian()`,
#'   `poisson()` and [categorical()] models, as in [stats::glm()] (and
#'   `nnet::multinom()`): the log-likelihood is
#'   \eqn{\sum_i w_i \ell_i(\theta)}{sum_i w_i l_i(theta)} for `binomial()`
#'   (logit and probit), `poisson()` and `categorical()` (a table's
#'   frequencies); for `gaussian()` they are
#'   precisions, \eqn{y_i \sim N(\eta_i, \sigma^2 / w_i)}{y_i ~ N(eta_i,
#'   sigma^2 / w_i)} (which enters the likelihood of \eqn{\sigma}{sigma} too);
#'   a row of weight 0 counts for nothing.  The formula method evaluates them
#'   in `data`, as [stats::glm()] does; they apply to every minibatch score,
#'   the mode, the curvature, the rows every minibatch holds and the
#'   draw-level methods (see [sgfit-posterior]).  Integer weights \eqn{k}{k}
#'   give the posterior of the data with each row repeated \eqn{k}{k} times
#'   (`binomial()`, `poisson()`, `categorical()`).  Not for networks or a
#'   [custom_model()].
#' @param temperature \eqn{T > 0}{T > 0}: the chains sample the tempered
#'   posterior \eqn{p(\theta \mid y)^{1/T}}{p(theta | y)^(1/T)} (prior and
#'   likelihood both tempered).  `1`, the default, is the Bayesian
#'   posterior; any other value is not: \eqn{T < 1}{T < 1} (the "cold
#'   posteriors" of many network papers, e.g. \eqn{T = 1/N}{T = 1/N} in the
#'   released code of pSGLD) concentrates the draws near the modes, by a
#'   factor \eqn{\sqrt T}{sqrt(T)} in every sd of a Gaussian posterior, and
#'   its intervals are not posterior intervals.  The Langevin rules inject
#'   \eqn{\sqrt T}{sqrt(T)} times their noise at the same step (a given
#'   `stepsize` keeps its meaning; the default step allows for the
#'   minibatch noise, which is not tempered, relative to the smaller target:
#'   its \eqn{\gamma}{gamma} becomes \eqn{1 + (\gamma - 1)/T}{1 + (gamma - 1)/T});
#'   [sghmc()] and [sgnht()] keep the momentum at temperature \eqn{T}{T};
#'   [isgd()] samples the tempered log posterior \eqn{\log p / T}{log p / T};
#'   [mala()] and [hmc()] accept by it; [sgfs()] and [osgfs()], whose
#'   noise is partly the minibatches' own (which is not tempered), take
#'   \eqn{\gamma_T}{gamma_T} for \eqn{\gamma}{gamma} in their preconditioner and noise
#'   and inject \eqn{\sqrt T}{sqrt(T)} times their noise, which keeps them exact
#'   on a Gaussian posterior at any \eqn{T}{T}.
#' @param control the numerical settings of how the fit holds and reads its
#'   data and shapes its metric, [sgfs_control()] (or a list of its arguments);
#'   `NULL`: `sgfs_control()`, whose defaults the options `sgfs.*` set (in
#'   a refit by [update()][update.sgfit], the fit's own).  The fit records them and
#'   [summary()][summary.sgfit] prints them.
#' @param ... arguments passed to the default method.
#' @name sampler-arguments
NULL

shared_head <- alist(x = , y = , family = binomial(), model = NULL, prior = NULL,
                     batch_size = NULL, n_iter = NULL, burnin = NULL, thin = 1L,
                     keep = "draws", chains = 1L, init = NULL, standardize = TRUE,
                     progress = NA)
shared_tail <- alist(prior_intercept = NULL, sigma = NULL, cores = getOption("mc.cores", 1L),
                     max_time = 300,
                     verbose = TRUE, intercept = TRUE, offset = NULL, weights = NULL,
                     temperature = 1, control = NULL)

## The default method of a sampler: function(<shared head>, <own>, <shared
## tail>, ...) whose body translates rstanarm's arguments and refuses
## unknown ones (rstanarm_arguments()), makes
## `control` the call's (local_control()), then runs `body` (a braced
## expression, unevaluated).  `own`: the sampler's own
## arguments (an alist, in usage order); `defaults`: shared arguments whose
## default differs for this sampler (an alist); `drop`: shared arguments it
## does not take.
sampler_method <- function(own, body, defaults = list(), drop = character()) {
    shared <- c(shared_head, shared_tail)
    stopifnot(!anyDuplicated(c(names(shared), names(own))), all(names(defaults) %in% names(shared)),
              all(drop %in% names(shared)), !any(c("x", "y") %in% drop))
    for (a in names(defaults)) {
        if (a %in% names(shared_head)) shared_head[a] <- defaults[a]
        else shared_tail[a] <- defaults[a]
    }
    keep <- function(args) args[setdiff(names(args), drop)]
    body <- substitute(body)
    stopifnot(is.call(body), identical(body[[1L]], as.name("{")))
    f <- function() NULL
    formals(f) <- c(keep(shared_head), own, keep(shared_tail), alist(... = ))
    body(f) <- as.call(c(as.name("{"), quote(rstanarm_arguments(environment(), ...)),
                         quote(local_control(control)),
                         as.list(body)[-1L]))
    environment(f) <- environment(sampler_method)       # the namespace
    f
}

## prepare_run() on the shared arguments of the calling sampler (a custom
## model takes no `y`; whether `family` was given matters to it)
prepare_run_here <- function(frame) {
    args <- mget(intersect(setdiff(names(formals(prepare_run)), "family_given"), ls(frame)),
                 envir = frame)
    if (eval(quote(missing(y)), frame)) args["y"] <- list(NULL)
    args$family_given <- !eval(quote(missing(family)), frame)
    args$thin_given <- !eval(quote(missing(thin)), frame)
    do.call(prepare_run, args)
}

## refuses the arguments a sampler does not take (named or not)
no_dots <- function(...) {
    extra <- names(list(...))
    if (is.null(extra)) extra <- character(...length())
    if ("contrasts" %in% extra)
        stop_arg("contrasts", "is for the formula method: a matrix x is already coded")
    if (length(extra))
        stop(sprintf("unknown argument(s): %s",
                     paste(ifelse(nzchar(extra), extra, "<unnamed>"), collapse = ", ")),
             call. = FALSE)
}
