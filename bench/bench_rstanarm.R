#!/usr/bin/env Rscript
## bench/bench_rstanarm.R - sgfs's default GLM sampler, sgldcv(), against
## rstanarm's stan_glm() (NUTS) on data shipped with R (issue 16, "What must
## be shown"): the same model and the same priors, 4 chains each.
##
##   R_LIBS=... Rscript bench/bench_rstanarm.R [--out=DIR] [--cases=a,b] [--quick]
##       [--long=FACTOR] [--other-samplers=sgfs] [--other-rows=insurance-pois]
##       [--stan-cache=DIR] [--stan-draws=N]
##
## run from the package root.  Needs rstanarm (Debian: r-cran-rstanarm),
## loo and posterior.
##
## The cases (a list below: a case is a function returning the model; add an
## element to add a row):
##   birthwt-logit   MASS::birthwt, low ~ age + lwt + race + smoke + ptd + ht
##                   + ui + smoke:ui (race a factor, ptd = ptl > 0: Venables
##                   and Ripley's model, MASS 4th ed. section 7.2, without
##                   ftv), binomial(logit); 189 rows, 10 coefficients.
##   insurance-pois  MASS::Insurance, Claims ~ District + Group + Age +
##                   offset(log(Holders)), poisson(log); Group and Age are
##                   ordered factors (polynomial contrasts in both); 64 rows,
##                   10 coefficients.
##   states-wls      datasets::state.x77, Life Exp ~ Income + Illiteracy +
##                   Murder + HS Grad + Frost, gaussian, weights = Population
##                   / mean(Population): each row is a state's average over
##                   its residents, so its precision is proportional to the
##                   population; 50 rows, 6 coefficients and sigma.
##   birthwt-probit  the birthwt model with binomial(link = "probit").
##   hs-logit        the regularised horseshoe (Piironen and Vehtari 2017) on
##                   a simulated sparse logistic regression, bench_horseshoe.R's
##                   data: N = 2,000 rows, p = 200 independent N(0, 1)
##                   predictors x001..x200, 5 non-zero coefficients (2, -1.5,
##                   1, -1, 0.75 on x001..x005), intercept -0.5, seed 2026;
##                   y ~ . with binomial(logit), 201 coefficients.
##
## Settings.  rstanarm: stan_glm(chains = 4, cores = 2, seed = 1, refresh =
## 0) and otherwise its defaults: 2,000 iterations per chain, 1,000 of them
## warm-up, its default (autoscaled) priors; for the probit row init_r =
## 0.5 (Stan's random starts in (-2, 2) on its unconstrained scale failed
## in all four chains, "Initialization failed": with lwt in pounds the
## linear predictor starts far in Phi's tails).  sgfs: sgldcv(chains = 4,
## cores = 2, verbose = FALSE) at its defaults (n_iter = NULL: the run grows
## until 400 bulk effective draws and R-hat <= 1.01), with set.seed(1),
## given the priors rstanarm used (prior_summary() of its fit), translated
## to sgfs's internal scale, so that both sample the same posterior:
##   - rstanarm's normal(m_j, s_j) on coefficient beta_j (its adjusted_scale:
##     2.5 / sd(x_j) for a column of more than two values, 2.5 / range for a
##     two-valued one, times dnorm(0) / dlogis(0) for probit) is sgfs's
##     normal(m_j sd_j, s_j sd_j) on the standardised coefficient beta_j
##     sd_j: sgfs standardises every column of the design by its sd;
##   - rstanarm's prior_intercept normal(m0, s0) is on the intercept of the
##     centred predictors, alpha_c = alpha + xbar' beta (xbar the unweighted
##     column means), which is exactly sgfs's internal intercept: sgfs gets
##     normal(m0, s0).
## The weighted gaussian row (states-wls) is different: rstanarm 2.21's own
## weighted gaussian fit gives a wrong posterior (check_rstanarm_weights()
## below shows it: without an offset its Stan model takes the unweighted
## least-squares shortcut and ignores the weights; with one, its weighted
## likelihood puts -w_i log(sigma) / 2 where -w_i log(sigma) belongs, and
## sigma comes out too large).  Its reference is rstanarm's unweighted fit
## of the rows multiplied by sqrt(w_i): sqrt(w_i) y_i ~ N(sqrt(w_i) x_i'
## beta, sigma^2), formula y ~ 0 + x1 + ... (the intercept column times
## sqrt(w) one more predictor), exactly the likelihood of sgfs's precision
## weights, y_i ~ N(x_i' beta, sigma^2 / w_i).  There is then no centred
## intercept, so both get priors on the original scale (sgfs with
## standardize = FALSE): normal(0, 100) on the intercept, normal(0, 2.5
## sd(y) / sd(x_j)) on the coefficients (rstanarm's autoscaled values);
## sigma: rstanarm exponential(rate = 1 / sd(y)), sgfs its fixed
## normal(0, 5) on log sigma (sgfs takes no other).  The two differ in the
## gradient of the log prior of log sigma by 1 - sigma / sd(y) (about 0.4
## here) against a curvature of about 2 (N - p) = 88: a shift of ~0.005
## in log sigma, ~0.05 of its posterior sd.  Its elpd in the
## precision-weight convention: sgfs's loo(fit), rstanarm's log_lik() of the
## transformed rows plus log(w_i) / 2 (the density of sqrt(w_i) y_i is
## that of y_i over sqrt(w_i)) through loo::loo() with relative_eff().
## rstanarm's loo() refuses weighted fits, so no other row needs this.
##
## The horseshoe row (hs-logit) gives both sides the same prior objects,
## rstanarm's own: prior = rstanarm::hs(global_scale = tau0) with tau0 =
## p0 / (p - p0) * 2 / sqrt(N), p0 = 5 (Piironen and Vehtari's choice, 2
## the noise scale of a logistic model; the other settings rstanarm's
## defaults: df 1, global_df 1, slab_df 4, slab_scale 2.5), and
## prior_intercept = rstanarm::normal(0, 2.5, autoscale = FALSE).  What the
## scales mean, the same on both sides:
##   - rstanarm 2.21 centres the predictors but does not scale them, and
##     applies no autoscaling to hs() (hs() has no autoscale argument; its
##     global_scale is multiplied by the noise sd for gaussian() only, and
##     slab_scale is used as given): the horseshoe is on the coefficients
##     as reported, beta_j = z_j tau lambda~_j, with c^2 = slab_scale^2 caux;
##   - sgfs (standardize = TRUE, its default) takes an rstanarm hs() object
##     with rstanarm's meaning (R/horseshoe.R): on its internal scale
##     beta_j = w_j z_j tau lambda~_j, w_j = 1 / sd(x_j) the internal over
##     the original scale of the coefficient, i.e. the same prior on the
##     reported coefficients; tau, lambda_j and c (its hs_* columns) are
##     rstanarm's;
##   - the intercept's normal(0, 2.5) is, in both, on the intercept of the
##     centred predictors (sgfs's internal intercept with standardize =
##     TRUE); autoscale = FALSE changes nothing for a binomial model.
## The sds of the simulated columns are 1 within 0.02, so the two scales
## would nearly agree anyway; passing rstanarm's objects to sgfs makes them
## agree exactly.  rstanarm's default adapt_delta for hs() is 0.99 (and
## max_treedepth 15); every row reports its divergent transitions and the
## largest R-hat of both sides.  The horseshoe row reports, per group of
## parameters (the intercept, the 5 non-zero and the 195 zero
## coefficients), the largest and median mean and sd errors, the share
## within 0.1 sd and 10 % and the largest z, in DIR/rstanarm.md and
## DIR/rstanarm-groups.csv.  The horseshoe's own parameters (tau,
## lambda_j, c) are not compared: rstanarm does not keep its draws of them
## (bench_horseshoe.R compares them against a long hmc() run).
##
## For every parameter (coefficients, and sigma for gaussian): mean and sd of
## the draws of both, |mean_sgfs - mean_stan| / sd_stan and |sd_sgfs /
## sd_stan - 1|; the table gives their maxima and the parameter attaining
## them, the smallest bulk ESS of each side (posterior::ess_bulk), and the
## largest z = |mean difference| / sqrt(mcse_sgfs^2 + mcse_stan^2) (the
## difference in units of its Monte Carlo error: |z| > 3 is not noise).
## loo(): elpd_loo and its SE of both, |difference| <= SE (the larger SE of
## the two), and the number of Pareto k > 0.7.  Wall times: system.time()
## elapsed of the whole sgldcv() call and of the whole stan_glm() call.
## rstanarm's divergent transitions after warm-up and the largest
## rank-normalised split R-hat (posterior::rhat) of both sides' coefficients.
##
## --long=F: a row that fails the mean/sd criteria is rerun with sgfs at
## n_iter = F times the default run's final length and thin F times its
## final thin (same chains, as many draws kept), to tell
## Monte Carlo error from bias: the rerun is printed and written as a row
## "<case> (sgfs xF)".  Default 4; --long=0 turns it off.
##
## --other-samplers=a,b --other-rows=case1,case2: rows "<case>, a()" with
## sampler a() of sgfs at its defaults (chains = 4, cores = 2, the same
## priors) against the same rstanarm fit; by default sgfs() on
## insurance-pois (SGFS's preconditioner and noise follow the minibatch's
## score covariance, which on Insurance's 64 rows is far from the
## curvature).  --other-rows= (empty) turns them off.
##
## --stan-cache=DIR: keep rstanarm's fits (and their wall times) in
## DIR/stan-<case>.rds and reuse them when there (rstanarm's horseshoe fit
## takes about 20 minutes here; the same seed gives the same fit).
##
## --stan-draws=N: rstanarm with 1,000 warm-up and N kept iterations per
## chain (default: its own 2,000 iterations, half warm-up), for a reference
## whose Monte Carlo error is small enough for the horseshoe's 195 spiky
## sds (with --long=F for the sgfs side); the cache file is per N.
##
## Results: DIR/rstanarm.md and .csv (DIR = bench/results/ by default,
## tempdir() with --quick: rstanarm at 500 iterations, sgfs at n_iter =
## 4000, a smoke test).  Per-parameter details: DIR/rstanarm-params.csv
## (its column group: the horseshoe row's parameter groups, "all" elsewhere).

suppressPackageStartupMessages({
    library(sgfs)
    library(rstanarm)
    library(loo)
    library(posterior)
})

source(file.path(if (dir.exists("bench")) "bench" else ".", "flags.R"))   # args, flag_value(), quick
out_dir <- flag_value("out", if (quick) tempdir() else file.path("bench", "results"))
long_factor <- as.numeric(flag_value("long", "4"))
## rows of other samplers at their defaults, for the cases named
other_samplers <- strsplit(flag_value("other-samplers", "sgfs"), ",")[[1]]
other_rows <- strsplit(flag_value("other-rows", "insurance-pois"), ",")[[1]]
command <- paste(c("Rscript bench/bench_rstanarm.R", args), collapse = " ")

## ---------------------------------------------------------------- the cases
data(birthwt, Insurance, package = "MASS", envir = environment())
bwt <- within(birthwt, {
    race <- factor(race, labels = c("white", "black", "other"))
    ptd <- as.integer(ptl > 0)
})
bwt_formula <- low ~ age + lwt + race + smoke + ptd + ht + ui + smoke:ui
states <- as.data.frame(state.x77)
names(states) <- make.names(names(states))      # Life.Exp, HS.Grad
states$w <- states$Population / mean(states$Population)
source("bench/sim_sparse.R")         # sim_sparse(): the horseshoe's simulated data

cases <- list(
    "birthwt-logit" = function() list(
        formula = bwt_formula, data = bwt, family = binomial(),
        model = "low ~ age + lwt + race + smoke + ptd + ht + ui + smoke:ui, logit (MASS::birthwt, race a factor, ptd = ptl > 0)"),
    "insurance-pois" = function() list(
        formula = Claims ~ District + Group + Age + offset(log(Holders)),
        data = Insurance, family = poisson(),
        model = "Claims ~ District + Group + Age + offset(log(Holders)), poisson (MASS::Insurance)"),
    "states-wls" = function() {
        f <- Life.Exp ~ Income + Illiteracy + Murder + HS.Grad + Frost
        X <- model.matrix(f, states)
        sdy <- sd(states$Life.Exp)
        ## explicit priors on the original scale, the same in both: the
        ## coefficients rstanarm's autoscaled normal(0, 2.5 sd(y) / sd(x_j)),
        ## the (uncentred) intercept a weak normal(0, 100)
        list(formula = f, data = states, family = gaussian(), weights = "w",
             sqrt_w = TRUE,
             raw_prior = list(location = rep(0, ncol(X)),
                              scale = c(100, 2.5 * sdy / apply(X[, -1], 2, sd))),
             aux_rate = 1 / sdy,
             model = "Life Exp ~ Income + Illiteracy + Murder + HS Grad + Frost, gaussian, weights = Population / mean(Population) (state.x77)")
    },
    "birthwt-probit" = function() list(
        formula = bwt_formula, data = bwt, family = binomial(link = "probit"),
        stan_args = list(init_r = 0.5),
        model = "the birthwt-logit model, probit link"),
    "hs-logit" = function() {
        d <- sim_sparse()
        ## the same prior objects, rstanarm's, on both sides (see the header)
        pri <- list(prior = rstanarm::hs(global_scale = d$tau0),
                    prior_intercept = rstanarm::normal(0, 2.5, autoscale = FALSE))
        list(formula = y ~ ., data = data.frame(y = d$y, d$x), family = binomial(),
             priors = pri, hs = TRUE, nonzero = colnames(d$x)[1:5],
             prior_text = sprintf(paste(
                 "both given rstanarm's objects: hs(global_scale = %.4g) (df 1, global_df 1, slab_df 4,",
                 "slab_scale 2.5; on the coefficients as reported, no autoscaling, in both) and",
                 "prior_intercept normal(0, 2.5, autoscale = FALSE), on the intercept of the centred",
                 "predictors (sgfs's internal intercept); rstanarm adapt_delta %s, max_treedepth %s"),
                 d$tau0, "%s", "%s"),
             model = sprintf(paste(
                 "y ~ x001 + ... + x200, logit, simulated: N = 2,000, x_ij ~ N(0, 1), beta = (2, -1.5, 1,",
                 "-1, 0.75, 0, ..., 0), intercept -0.5 (seed 2026, bench_horseshoe.R's data); prior",
                 "rstanarm::hs(global_scale = 5 / 195 * 2 / sqrt(2000) = %.4g)"), d$tau0))
    }
)
only <- flag_value("cases", "")
if (nzchar(only)) cases <- cases[strsplit(only, ",")[[1]]]

## ------------------------------------------------------------------ helpers
## the model's weights column evaluated in data (NULL: none)
case_weights <- function(cs) if (is.null(cs$weights)) NULL else cs$data[[cs$weights]]

## the weighted gaussian model as rstanarm fits it correctly: rows times
## sqrt(w), y_i sqrt(w_i) ~ N(x_i' beta sqrt(w_i), sigma^2), no intercept
## of its own (the design's "(Intercept)" column, times sqrt(w), is one
## more predictor).  Its likelihood is sgfs's precision-weighted one.
sqrt_w_data <- function(cs) {
    X <- model.matrix(cs$formula, cs$data)
    sw <- sqrt(case_weights(cs))
    y <- model.response(model.frame(cs$formula, cs$data))
    ## columns x1, x2, ...: rstanarm takes a first column whose name holds
    ## "(Intercept" for its own (centred) intercept
    d <- data.frame(y = y * sw, X * sw)
    names(d) <- c("y", paste0("x", seq_len(ncol(X))))
    d
}

## --stan-cache=DIR: rstanarm's fit of a case (and its wall time) read from
## DIR/stan-<case>.rds if there, else fitted and saved there (the same seed
## gives the same fit: for reruns of the sgfs side)
stan_cache <- flag_value("stan-cache", "")
stan_draws <- as.integer(flag_value("stan-draws", "0"))
stan_fit <- function(cs, name = NULL) {
    file <- if (nzchar(stan_cache) && !is.null(name))
        file.path(stan_cache, sprintf("stan-%s%s%s.rds", name, if (quick) "-quick" else "",
                                    if (stan_draws > 0) sprintf("-draws%d", stan_draws) else ""))
    if (!is.null(file) && file.exists(file)) return(readRDS(file))
    t <- system.time(sfit <- stan_fit_now(cs))[["elapsed"]]
    attr(sfit, "elapsed") <- t
    if (!is.null(file)) {
        dir.create(stan_cache, showWarnings = FALSE, recursive = TRUE)
        saveRDS(sfit, file)
    }
    sfit
}
stan_fit_now <- function(cs) {
    w <- case_weights(cs)
    a <- list(formula = cs$formula, data = cs$data, family = cs$family,
              chains = 4, cores = 2, seed = 1, refresh = 0)
    if (isTRUE(cs$sqrt_w)) {
        a$data <- sqrt_w_data(cs)
        a$formula <- stats::reformulate(c("0", names(a$data)[-1]), "y")
        a$prior <- rstanarm::normal(cs$raw_prior$location, cs$raw_prior$scale, autoscale = FALSE)
        a$prior_aux <- rstanarm::exponential(cs$aux_rate, autoscale = FALSE)
    } else if (!is.null(w)) a$weights <- w
    if (!is.null(cs$priors)) a[names(cs$priors)] <- cs$priors
    if (quick) a$iter <- 500
    if (stan_draws > 0) {
        a$warmup <- 1000L
        a$iter <- 1000L + stan_draws
    }
    a <- c(a, cs$stan_args)
    do.call(rstanarm::stan_glm, a)
}

## rstanarm's priors (prior_summary of its fit) on sgfs's internal scale
sgfs_priors <- function(cs, sfit) {
    ps <- rstanarm::prior_summary(sfit)
    if (!is.null(cs$raw_prior)) {
        ## given on the original scale: sgfs with standardize = FALSE
        k <- length(cs$raw_prior$scale)
        return(list(prior = sgfs::normal(cs$raw_prior$location[-1], cs$raw_prior$scale[-1]),
                    prior_intercept = sgfs::normal(cs$raw_prior$location[1], cs$raw_prior$scale[1]),
                    standardize = FALSE, stan = ps))
    }
    if (!is.null(cs$priors))            # the same objects as rstanarm's
        return(c(cs$priors, list(stan = ps)))
    pick <- function(p) if (!is.null(p$adjusted_scale)) p$adjusted_scale else p$scale
    stopifnot(ps$prior$dist == "normal", ps$prior_intercept$dist == "normal")
    X <- model.matrix(cs$formula, cs$data)
    X <- X[, colnames(X) != "(Intercept)", drop = FALSE]
    sds <- apply(X, 2, sd)
    gaussian <- cs$family$family == "gaussian"
    y <- model.response(model.frame(cs$formula, cs$data))
    ybar <- if (gaussian) mean(y) else 0
    sdy <- if (gaussian) sd(y) else 1
    loc <- rep_len(ps$prior$location, ncol(X))
    sc <- rep_len(pick(ps$prior), ncol(X))
    list(prior = sgfs::normal(loc * sds / sdy, sc * sds / sdy),
         prior_intercept = sgfs::normal((ps$prior_intercept$location - ybar) / sdy,
                                  pick(ps$prior_intercept) / sdy),
         stan = ps)
}

sgfs_fit <- function(cs, pri, n_iter = NULL, sampler = "sgldcv", thin = NULL) {
    w <- case_weights(cs)
    a <- list(formula = cs$formula, data = cs$data, family = cs$family,
              prior = pri$prior, prior_intercept = pri$prior_intercept,
              chains = 4, cores = 2, verbose = FALSE)
    if (!is.null(pri$standardize)) a$standardize <- pri$standardize
    if (!is.null(w)) a$weights <- w
    if (!is.null(n_iter)) a$n_iter <- n_iter
    else if (quick) a$n_iter <- 4000
    if (!is.null(thin)) a$thin <- thin
    set.seed(1)
    do.call(getExportedValue("sgfs", sampler), a)
}

## draws as a posterior draws_array, sigma (not log_sigma) for gaussian;
## without a horseshoe's scales (hs_lambda[x], hs_tau, hs_c: rstanarm does
## not keep its own)
draws_sgfs <- function(fit) {
    d <- posterior::as_draws_array(fit)     # an mcmc.list: iterations x chains x variables
    if ("log_sigma" %in% posterior::variables(d)) {
        d <- posterior::mutate_variables(d, sigma = exp(log_sigma))
        d <- posterior::subset_draws(d, variable = "log_sigma", exclude = TRUE)
    }
    hs <- grep("^hs_", posterior::variables(d), value = TRUE)
    if (length(hs)) d <- posterior::subset_draws(d, variable = hs, exclude = TRUE)
    d
}
draws_stan <- function(sfit, cs) {
    d <- posterior::as_draws_array(as.array(sfit))
    stopifnot(!isTRUE(cs$sqrt_w) || identical(posterior::variables(d),
                                              c(paste0("x", seq_len(posterior::nvariables(d) - 1)), "sigma")))
    if (isTRUE(cs$sqrt_w))     # x1, x2, ... -> the design's names
        posterior::variables(d) <- c(colnames(model.matrix(cs$formula, cs$data)), "sigma")
    d
}
## the horseshoe row's groups of parameters
hs_groups <- function(v, nonzero) {
    g <- ifelse(v %in% nonzero, "beta (non-zero)", "beta (zero)")
    g[v == "(Intercept)"] <- "intercept"
    g
}
## rstanarm's sampler diagnostics: divergent transitions after warm-up and
## the adapt_delta and max_treedepth it ran with
stan_diagnostics <- function(sfit) {
    sp <- rstan::get_sampler_params(sfit$stanfit, inc_warmup = FALSE)
    ctl <- sfit$stanfit@stan_args[[1]]$control
    list(divergent = sum(vapply(sp, function(m) sum(m[, "divergent__"]), 0)),
         treedepth_max = max(vapply(sp, function(m) max(m[, "treedepth__"]), 0)),
         adapt_delta = if (is.null(ctl$adapt_delta)) NA else ctl$adapt_delta,
         max_treedepth = if (is.null(ctl$max_treedepth)) NA else ctl$max_treedepth)
}

param_table <- function(ds, dr) {
    ss <- posterior::summarise_draws(ds, mean, sd, ess_bulk, mcse_mean, mcse_sd, rhat)
    sr <- posterior::summarise_draws(dr, mean, sd, ess_bulk, mcse_mean, mcse_sd, rhat)
    m <- merge(as.data.frame(ss), as.data.frame(sr), by = "variable",
               suffixes = c("_sgfs", "_stan"), sort = FALSE)
    stopifnot(nrow(m) == nrow(ss), nrow(m) == nrow(sr))
    m$mean_err <- abs(m$mean_sgfs - m$mean_stan) / m$sd_stan
    m$sd_err <- abs(m$sd_sgfs / m$sd_stan - 1)
    m$z <- abs(m$mean_sgfs - m$mean_stan) / sqrt(m$mcse_mean_sgfs^2 + m$mcse_mean_stan^2)
    ## the sds' difference in its Monte Carlo standard errors (posterior's
    ## mcse_sd, which accounts for heavy tails): the horseshoe's zero
    ## coefficients have spiky, long-tailed marginals, whose sds a few
    ## hundred effective draws estimate to about 10 %
    m$z_sd <- abs(m$sd_sgfs - m$sd_stan) / sqrt(m$mcse_sd_sgfs^2 + m$mcse_sd_stan^2)
    m
}

loo_summary <- function(l) c(elpd = l$estimates["elpd_loo", "Estimate"],
                             se = l$estimates["elpd_loo", "SE"],
                             k_bad = sum(l$diagnostics$pareto_k > 0.7))

fmt <- function(x, d = 3) formatC(x, format = "f", digits = d)

## ------------------------------------------------------------------- a row
run_case <- function(name, cs, n_iter = NULL, sfit = NULL, t_stan = NULL, sampler = "sgldcv",
                     thin = NULL) {
    if (is.null(sfit)) {
        sfit <- stan_fit(cs, name)
        t_stan <- attr(sfit, "elapsed")
    }
    pri <- sgfs_priors(cs, sfit)
    t_sgfs <- system.time(fit <- sgfs_fit(cs, pri, n_iter, sampler, thin))[["elapsed"]]
    blas_seen <<- attr(fit, "sgfit")$blas
    info <- attr(fit, "sgfit")
    pt <- param_table(draws_sgfs(fit), draws_stan(sfit, cs))
    pt$group <- if (isTRUE(cs$hs)) hs_groups(pt$variable, cs$nonzero) else "all"
    pm <- pt
    dg <- stan_diagnostics(sfit)
    r_eff_s <- NULL
    l_sgfs <- suppressWarnings(loo::loo(fit))
    ## rstanarm's loo() refuses weighted fits: its log_lik() (each row's log
    ## density times its weight) through loo::loo() instead
    loo_matrix <- function(ll) {
        chain_id <- rep(seq_len(4), each = nrow(ll) / 4)
        suppressWarnings(loo::loo(ll, r_eff = loo::relative_eff(exp(ll), chain_id = chain_id)))
    }
    l_stan <- if (isTRUE(cs$sqrt_w)) {
        ## the density of y_i sqrt(w_i) is that of y_i over sqrt(w_i)
        ll <- rstanarm::log_lik(sfit)
        loo_matrix(ll + rep(0.5 * log(case_weights(cs)), each = nrow(ll)))
    } else if (is.null(cs$weights)) suppressWarnings(loo::loo(sfit))
    else loo_matrix(rstanarm::log_lik(sfit))
    ## the paired difference, as loo::loo_compare(): sum and sqrt(N) sd of
    ## the pointwise differences
    pw <- l_sgfs$pointwise[, "elpd_loo"] - l_stan$pointwise[, "elpd_loo"]
    ls <- loo_summary(l_sgfs)
    lr <- loo_summary(l_stan)
    im <- which.max(pm$mean_err)
    is <- which.max(pm$sd_err)
    iz <- which.max(pm$z)
    n_iter_final <- nrow(as.matrix(fit[[1]]))
    row <- data.frame(
        case = name, model = cs$model,
        n_par = nrow(pm),
        max_mean_err = pm$mean_err[im], max_mean_par = pm$variable[im],
        max_sd_err = pm$sd_err[is], max_sd_par = pm$variable[is],
        max_z = pm$z[iz], max_z_par = pm$variable[iz],
        ess_min_sgfs = min(pm$ess_bulk_sgfs), ess_min_stan = min(pm$ess_bulk_stan),
        rhat_max_sgfs = max(pm$rhat_sgfs), rhat_max_stan = max(pm$rhat_stan),
        stan_divergent = dg$divergent, stan_treedepth_max = dg$treedepth_max,
        stan_adapt_delta = dg$adapt_delta,
        draws_sgfs = 4 * n_iter_final, draws_stan = nrow(as.matrix(sfit)),
        elpd_sgfs = ls[["elpd"]], se_sgfs = ls[["se"]], kbad_sgfs = ls[["k_bad"]],
        elpd_stan = lr[["elpd"]], se_stan = lr[["se"]], kbad_stan = lr[["k_bad"]],
        elpd_diff = sum(pw), se_diff = sqrt(length(pw)) * sd(pw),
        time_sgfs = t_sgfs, time_stan = t_stan,
        stringsAsFactors = FALSE)
    row$mean_ok <- row$max_mean_err <= 0.1
    row$sd_ok <- row$max_sd_err <= 0.1
    row$elpd_ok <- abs(row$elpd_sgfs - row$elpd_stan) <= max(row$se_sgfs, row$se_stan)
    row$pass <- row$mean_ok && row$sd_ok && row$elpd_ok
    pt$case <- name
    list(row = row, params = pt, sfit = sfit, t_stan = t_stan, fit = fit,
         priors = pri, n_iter = n_iter_final, n_iter_call = info$n_iter, thin = info$spec$thin,
         groups = if (isTRUE(cs$hs)) group_table(name, pt), diagnostics = dg)
}

## per group of parameters: the largest and median mean and sd errors, the
## share within the criteria, the largest z, the smallest bulk ESS of both
group_table <- function(name, pt) {
    do.call(rbind, lapply(unique(pt$group), function(g) {
        k <- pt$group == g
        data.frame(case = name, group = g, n = sum(k),
                   mean_err_max = max(pt$mean_err[k]), mean_err_median = stats::median(pt$mean_err[k]),
                   mean_within = mean(pt$mean_err[k] <= 0.1),
                   sd_err_max = max(pt$sd_err[k]), sd_err_median = stats::median(pt$sd_err[k]),
                   sd_within = mean(pt$sd_err[k] <= 0.1),
                   z_max = max(pt$z[k]), z_sd_max = max(pt$z_sd[k]),
                   z_sd_over_3 = sum(pt$z_sd[k] > 3), ess_min_sgfs = min(pt$ess_bulk_sgfs[k]),
                   ess_min_stan = min(pt$ess_bulk_stan[k]),
                   rhat_max_sgfs = max(pt$rhat_sgfs[k]), rhat_max_stan = max(pt$rhat_stan[k]),
                   stringsAsFactors = FALSE)
    }))
}

print_row <- function(r) {
    cat(sprintf(paste0("%-22s mean %.3f (%s)  sd %.3f (%s)  z %.1f (%s)  ESS %0.f/%0.f  ",
                       "R-hat %.3f/%.3f  divergent %d  ",
                       "elpd %.2f (%.2f) vs %.2f (%.2f) %s  time %.1f s vs %.1f s  %s\n"),
                r$case, r$max_mean_err, r$max_mean_par, r$max_sd_err, r$max_sd_par,
                r$max_z, r$max_z_par, r$ess_min_sgfs, r$ess_min_stan,
                r$rhat_max_sgfs, r$rhat_max_stan, as.integer(r$stan_divergent),
                r$elpd_sgfs, r$se_sgfs, r$elpd_stan, r$se_stan,
                if (r$elpd_ok) "ok" else "DIFFER", r$time_sgfs, r$time_stan,
                if (r$pass) "PASS" else "FAIL"))
}

## the priors of a row, as both sides were given them
prior_text <- function(name, pri, cs = list(), dg = NULL) {
    if (!is.null(cs$prior_text))
        return(sprintf("- %s: %s", name, sprintf(cs$prior_text, dg$adapt_delta, dg$max_treedepth)))
    ps <- pri$stan
    num <- function(x) paste(signif(x, 3), collapse = ", ")
    pscale <- function(p) if (!is.null(p$adjusted_scale)) p$adjusted_scale else p$scale
    stan <- sprintf("coefficients normal(%s; %s)", num(unique(ps$prior$location)), num(pscale(ps$prior)))
    if (!is.null(ps$prior_intercept))
        stan <- sprintf("%s, intercept of the centred predictors normal(%s, %s)", stan,
                        num(ps$prior_intercept$location), num(pscale(ps$prior_intercept)))
    if (!is.null(ps$prior_aux))
        stan <- sprintf("%s, sigma exponential(rate %s)", stan,
                        num(if (!is.null(ps$prior_aux$adjusted_scale)) 1 / ps$prior_aux$adjusted_scale
                            else ps$prior_aux$rate))
    sg <- sprintf("%s coefficients normal(%s; %s), intercept normal(%s, %s)",
                  if (isFALSE(pri$standardize)) "standardize = FALSE:" else "internal scale:",
                  num(unique(pri$prior$location)), num(pri$prior$scale),
                  num(pri$prior_intercept$location), num(pri$prior_intercept$scale))
    sprintf("- %s: rstanarm %s; sgfs %s", name, stan, sg)
}

## rstanarm 2.21's weighted gaussian likelihood, against the same data with
## rows repeated: weights = 2 on every row (alone: its Stan model then takes
## the unweighted least-squares shortcut and ignores the weights; with a
## 1e-10 offset, which sends it to the weighted likelihood) and the data
## twice.  Means and sds of Murder and sigma.
check_rstanarm_weights <- function() {
    f <- Life.Exp ~ Income + Illiteracy + Murder + HS.Grad + Frost
    n <- nrow(states)
    run <- function(...) {       # stan_glm() evaluates weights and offset in data
        s <- do.call(rstanarm::stan_glm, list(f, family = gaussian(), chains = 4, cores = 2, seed = 1,
                                              refresh = 0, iter = if (quick) 500 else 2000, ...))
        m <- as.matrix(s)[, c("Murder", "sigma")]
        sprintf("Murder %s (sd %s), sigma %s (sd %s)", fmt(mean(m[, 1]), 4), fmt(sd(m[, 1]), 4),
                fmt(mean(m[, 2]), 3), fmt(sd(m[, 2]), 3))
    }
    c(twice = run(data = rbind(states, states)),
      weights2 = run(data = states, weights = rep(2, n)),
      weights2_offset = run(data = states, weights = rep(2, n), offset = rep(1e-10, n)),
      lm_twice = {
          l <- lm(f, rbind(states, states))
          sprintf("Murder %s (se %s), sigma %s", fmt(coef(l)[["Murder"]], 4),
                  fmt(sqrt(vcov(l)["Murder", "Murder"]), 4), fmt(summary(l)$sigma, 3))
      })
}

## ------------------------------------------------------------------- run
blas_seen <- NA_character_
rows <- list()
params <- list()
groups <- list()
priors_txt <- character()
for (name in names(cases)) {
    cs <- cases[[name]]()
    cat(sprintf("== %s: %s\n", name, cs$model))
    res <- run_case(name, cs)
    print_row(res$row)
    rows[[name]] <- res$row
    params[[name]] <- res$params
    ps <- res$priors
    priors_txt <- c(priors_txt, prior_text(name, res$priors, cs, res$diagnostics))
    if (!is.null(res$groups)) {
        groups[[name]] <- res$groups
        print(res$groups, digits = 3, row.names = FALSE)
    }
    if (!(res$row$mean_ok && res$row$sd_ok) && long_factor > 0) {
        n_long <- as.integer(ceiling(long_factor * res$n_iter_call))
        ## thin x F too: as many draws as the default run kept (the
        ## horseshoe row's 292,000 iterations unthinned would keep 4.7e8
        ## numbers, and loo() a 1.2e6 x 2,000 matrix)
        thin_long <- as.integer(max(1, round(long_factor * res$thin)))
        cat(sprintf("   rerun sgfs with n_iter = %d, thin = %d (%g x the default run's %d, %d)\n",
                    n_long, thin_long, long_factor, res$n_iter_call, res$thin))
        res2 <- run_case(sprintf("%s (sgfs x%g)", name, long_factor), cs, n_iter = n_long,
                         sfit = res$sfit, t_stan = res$t_stan, thin = thin_long)
        print_row(res2$row)
        rows[[res2$row$case]] <- res2$row
        params[[res2$row$case]] <- res2$params
        if (!is.null(res2$groups)) {
            groups[[res2$row$case]] <- res2$groups
            print(res2$groups, digits = 3, row.names = FALSE)
        }
    }
    if (name %in% other_rows) {
        for (smp in other_samplers) {
            res3 <- run_case(sprintf("%s, %s()", name, smp), cs, sfit = res$sfit,
                             t_stan = res$t_stan, sampler = smp)
            print_row(res3$row)
            rows[[res3$row$case]] <- res3$row
            params[[res3$row$case]] <- res3$params
        }
    }
}
weights_note <- character()
if ("states-wls" %in% names(cases)) {
    cat("== rstanarm's weighted gaussian likelihood: weights = 2 against the rows twice\n")
    chk <- check_rstanarm_weights()
    print(chk)
    weights_note <- c(
        "rstanarm's own weighted gaussian fit is not the reference for states-wls: its weights give the wrong posterior.",
        "The same model with every weight 2 against the 50 rows twice (stan_glm, 4 chains, seed 1; rows repeated k times must equal weight k):", "",
        sprintf("- rows twice: %s", chk[["twice"]]),
        sprintf("- weights = 2: %s (the weights ignored: its Stan model takes the unweighted least-squares shortcut whenever there is no offset)", chk[["weights2"]]),
        sprintf("- weights = 2, offset = 1e-10: %s (the weighted likelihood: sigma too large)", chk[["weights2_offset"]]),
        sprintf("- lm() of the rows twice: %s", chk[["lm_twice"]]), "",
        "So the reference for states-wls is rstanarm's unweighted fit of the rows multiplied by sqrt(w): sqrt(w_i) y_i ~ N(sqrt(w_i) x_i' beta, sigma^2), formula y ~ 0 + x1 + ... + x6 (x1 the intercept column times sqrt(w), whose prior is the first of rstanarm's coefficient priors above), the likelihood of sgfs's precision weights; priors given on the original scale to both (sgfs with standardize = FALSE), and both elpds in the precision-weight convention (rstanarm's log_lik() of the transformed rows plus log(w_i) / 2).")
}
tab <- do.call(rbind, rows)
rownames(tab) <- NULL
par_tab <- do.call(rbind, params)
rownames(par_tab) <- NULL

## ------------------------------------------------------------------ write
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
utils::write.csv(tab, file.path(out_dir, "rstanarm.csv"), row.names = FALSE)
utils::write.csv(par_tab[, c("case", "group", "variable", "mean_sgfs", "mean_stan", "sd_sgfs", "sd_stan",
                             "ess_bulk_sgfs", "ess_bulk_stan", "mcse_mean_sgfs", "mcse_mean_stan",
                             "rhat_sgfs", "rhat_stan", "mean_err", "sd_err", "z")],
                 file.path(out_dir, "rstanarm-params.csv"), row.names = FALSE)
grp_tab <- do.call(rbind, groups)
rownames(grp_tab) <- NULL
md_groups <- character()
if (length(groups)) {
    md_groups <- c(
        "Per group of parameters (errors in rstanarm posterior sds and relative sds):", "",
        "| case | group | n | max mean err | median | share <= 0.1 | max sd err | median | share <= 10 % | max z | max sd z (number > 3) | min bulk ESS sgfs / stan | max R-hat sgfs / stan |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
        sprintf("| %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s (%d) | %0.f / %0.f | %s / %s |",
                grp_tab$case, grp_tab$group, grp_tab$n, fmt(grp_tab$mean_err_max), fmt(grp_tab$mean_err_median),
                fmt(grp_tab$mean_within, 2), fmt(grp_tab$sd_err_max), fmt(grp_tab$sd_err_median),
                fmt(grp_tab$sd_within, 2), fmt(grp_tab$z_max, 1), fmt(grp_tab$z_sd_max, 1),
                as.integer(grp_tab$z_sd_over_3), grp_tab$ess_min_sgfs,
                grp_tab$ess_min_stan, fmt(grp_tab$rhat_max_sgfs), fmt(grp_tab$rhat_max_stan)), "")
    utils::write.csv(grp_tab, file.path(out_dir, "rstanarm-groups.csv"), row.names = FALSE)
}

md_tab <- c(
    "| case | max mean err / sd (param) | max sd err (param) | max z (param) | min bulk ESS sgfs / stan | max R-hat sgfs / stan | rstanarm divergent | elpd_loo sgfs (SE) | elpd_loo rstanarm (SE) | within 1 SE | difference (paired SE) | time sgfs / stan (s) | pass |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    sprintf("| %s | %s (%s) | %s (%s) | %s (%s) | %0.f / %0.f | %s / %s | %d | %s (%s) | %s (%s) | %s | %s (%s) | %s / %s | %s |",
            tab$case, fmt(tab$max_mean_err), tab$max_mean_par, fmt(tab$max_sd_err), tab$max_sd_par,
            fmt(tab$max_z, 1), tab$max_z_par, tab$ess_min_sgfs, tab$ess_min_stan,
            fmt(tab$rhat_max_sgfs), fmt(tab$rhat_max_stan), as.integer(tab$stan_divergent),
            fmt(tab$elpd_sgfs, 2), fmt(tab$se_sgfs, 2), fmt(tab$elpd_stan, 2), fmt(tab$se_stan, 2),
            ifelse(tab$elpd_ok, "yes", "NO"), fmt(tab$elpd_diff, 2), fmt(tab$se_diff, 2),
            fmt(tab$time_sgfs, 1), fmt(tab$time_stan, 1),
            ifelse(tab$pass, "yes", "**no**")))
cat("\n", md_tab, "", md_groups, sep = "\n")

versions <- sprintf("R %s, sgfs %s, rstanarm %s, rstan %s, loo %s, posterior %s; BLAS %s (as sgfs reports it)",
                    getRversion(), packageVersion("sgfs"), packageVersion("rstanarm"),
                    packageVersion("rstan"), packageVersion("loo"), packageVersion("posterior"),
                    blas_seen)
md <- c("# sgfs's sgldcv() against rstanarm's stan_glm()", "",
        sprintf("%s; %s; %d cores (shared machine).", format(Sys.time(), "%Y-%m-%d %H:%M"), versions,
                parallel::detectCores()), "",
        "Command (from the package root):", "", paste0("    ", command), "",
        "Both with 4 chains on 2 cores; rstanarm at its defaults (2,000 iterations per chain, half warm-up, autoscaled priors), seed 1 (for birthwt-probit `init_r = 0.5`: with Stan's default random starts all four chains failed to initialise); sgfs's `sgldcv()` at its defaults (the run grows until 400 bulk ESS and R-hat <= 1.01) with `set.seed(1)` and rstanarm's priors translated to its internal (standardised) scale (see the script's header for the translation); states-wls: explicit priors on the original scale for both (below), and the one mismatch, sigma's prior (rstanarm exponential, sgfs normal(0, 5) on log sigma), which moves sigma's mean by about 0.004, 0.06 of its sd; hs-logit: both given the same rstanarm prior objects, the horseshoe on the coefficients as reported (below; rstanarm's default adapt_delta for hs() is 0.99). Criteria: every posterior mean within 0.1 rstanarm sd, every sd within 10 %, loo elpd within one SE (the larger of the two). z: the largest mean difference in units of its Monte Carlo standard error, sqrt(mcse_sgfs^2 + mcse_stan^2).",
        if (stan_draws > 0) c("", sprintf("rstanarm here: 1,000 warm-up and %d kept iterations per chain (--stan-draws), not its default 2,000 with half warm-up.", stan_draws)),
        "", md_tab, "", md_groups,
        "Models:", "", sprintf("- %s: %s", tab$case[!grepl(" \\(sgfs x", tab$case)],
                                 tab$model[!grepl(" \\(sgfs x", tab$case)]), "",
        "Priors (rstanarm's prior_summary(); what sgfs was given):", "", priors_txt, "",
        weights_note, "",
        "Per-parameter means, sds, ESS and MCSEs: rstanarm-params.csv.  What the rows show and why: bench/README.md (\"Against rstanarm\").")
writeLines(md, file.path(out_dir, "rstanarm.md"))
cat(sprintf("\nwritten: %s\n", file.path(out_dir, c("rstanarm.md", "rstanarm.csv"))))
