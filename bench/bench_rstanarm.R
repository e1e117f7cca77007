#!/usr/bin/env Rscript
## bench/bench_rstanarm.R - sgfs's default GLM sampler, sgldcv(), against
## rstanarm's stan_glm() (NUTS) on data shipped with R (issue 16, "What must
## be shown"): the same model and the same priors, 4 chains each.
##
##   R_LIBS=... Rscript bench/bench_rstanarm.R [--out=DIR] [--cases=a,b] [--quick]
##       [--long=FACTOR] [--other-samplers=sgfs] [--other-rows=insurance-pois]
##
## run from the package root.  Needs rstanarm (Debian: r-cran-rstanarm),
## loo and posterior.
##
## The cases (a list below: a case is a function returning the model; add an
## element to add a row, e.g. the horseshoe logistic regression of issue 16
## once student_t()/hs() priors exist):
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
## For every parameter (coefficients, and sigma for gaussian): mean and sd of
## the draws of both, |mean_sgfs - mean_stan| / sd_stan and |sd_sgfs /
## sd_stan - 1|; the table gives their maxima and the parameter attaining
## them, the smallest bulk ESS of each side (posterior::ess_bulk), and the
## largest z = |mean difference| / sqrt(mcse_sgfs^2 + mcse_stan^2) (the
## difference in units of its Monte Carlo error: |z| > 3 is not noise).
## loo(): elpd_loo and its SE of both, |difference| <= SE (the larger SE of
## the two), and the number of Pareto k > 0.7.  Wall times: system.time()
## elapsed of the whole sgldcv() call and of the whole stan_glm() call.
##
## --long=F: a row that fails the mean/sd criteria is rerun with sgfs at
## n_iter = F times the default run's final length (same chains), to tell
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
## Results: DIR/results-rstanarm.md and .csv (DIR = bench/ by default,
## tempdir() with --quick: rstanarm at 500 iterations, sgfs at n_iter =
## 4000, a smoke test).  Per-parameter details: DIR/results-rstanarm-params.csv.

suppressPackageStartupMessages({
    library(sgfs)
    library(rstanarm)
    library(loo)
    library(posterior)
})

args <- commandArgs(trailingOnly = TRUE)
flag_value <- function(name, default) {
    v <- sub(sprintf("^--%s=", name), "", grep(sprintf("^--%s=", name), args, value = TRUE))
    if (length(v)) v[[length(v)]] else default
}
quick <- "--quick" %in% args
out_dir <- flag_value("out", if (quick) tempdir() else "bench")
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
        model = "the birthwt-logit model, probit link")
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

stan_fit <- function(cs) {
    w <- case_weights(cs)
    a <- list(formula = cs$formula, data = cs$data, family = cs$family,
              chains = 4, cores = 2, seed = 1, refresh = 0)
    if (isTRUE(cs$sqrt_w)) {
        a$data <- sqrt_w_data(cs)
        a$formula <- stats::reformulate(c("0", names(a$data)[-1]), "y")
        a$prior <- rstanarm::normal(cs$raw_prior$location, cs$raw_prior$scale, autoscale = FALSE)
        a$prior_aux <- rstanarm::exponential(cs$aux_rate, autoscale = FALSE)
    } else if (!is.null(w)) a$weights <- w
    if (quick) a$iter <- 500
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

sgfs_fit <- function(cs, pri, n_iter = NULL, sampler = "sgldcv") {
    w <- case_weights(cs)
    a <- list(formula = cs$formula, data = cs$data, family = cs$family,
              prior = pri$prior, prior_intercept = pri$prior_intercept,
              chains = 4, cores = 2, verbose = FALSE)
    if (!is.null(pri$standardize)) a$standardize <- pri$standardize
    if (!is.null(w)) a$weights <- w
    if (!is.null(n_iter)) a$n_iter <- n_iter
    else if (quick) a$n_iter <- 4000
    set.seed(1)
    do.call(getExportedValue("sgfs", sampler), a)
}

## draws as a posterior draws_array, sigma (not log_sigma) for gaussian
draws_sgfs <- function(fit) {
    d <- posterior::as_draws_array(fit)     # an mcmc.list: iterations x chains x variables
    if ("log_sigma" %in% posterior::variables(d)) {
        d <- posterior::mutate_variables(d, sigma = exp(log_sigma))
        d <- posterior::subset_draws(d, variable = "log_sigma", exclude = TRUE)
    }
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

param_table <- function(ds, dr) {
    ss <- posterior::summarise_draws(ds, mean, sd, ess_bulk, mcse_mean)
    sr <- posterior::summarise_draws(dr, mean, sd, ess_bulk, mcse_mean)
    m <- merge(as.data.frame(ss), as.data.frame(sr), by = "variable",
               suffixes = c("_sgfs", "_stan"), sort = FALSE)
    stopifnot(nrow(m) == nrow(ss), nrow(m) == nrow(sr))
    m$mean_err <- abs(m$mean_sgfs - m$mean_stan) / m$sd_stan
    m$sd_err <- abs(m$sd_sgfs / m$sd_stan - 1)
    m$z <- abs(m$mean_sgfs - m$mean_stan) / sqrt(m$mcse_mean_sgfs^2 + m$mcse_mean_stan^2)
    m
}

loo_summary <- function(l) c(elpd = l$estimates["elpd_loo", "Estimate"],
                             se = l$estimates["elpd_loo", "SE"],
                             k_bad = sum(l$diagnostics$pareto_k > 0.7))

fmt <- function(x, d = 3) formatC(x, format = "f", digits = d)

## ------------------------------------------------------------------- a row
run_case <- function(name, cs, n_iter = NULL, sfit = NULL, t_stan = NULL, sampler = "sgldcv") {
    if (is.null(sfit)) {
        t_stan <- system.time(sfit <- stan_fit(cs))[["elapsed"]]
    }
    pri <- sgfs_priors(cs, sfit)
    t_sgfs <- system.time(fit <- sgfs_fit(cs, pri, n_iter, sampler))[["elapsed"]]
    blas_seen <<- attr(fit, "sgfit")$blas
    info <- attr(fit, "sgfit")
    pt <- param_table(draws_sgfs(fit), draws_stan(sfit, cs))
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
    im <- which.max(pt$mean_err)
    is <- which.max(pt$sd_err)
    iz <- which.max(pt$z)
    n_iter_final <- nrow(as.matrix(fit[[1]]))
    row <- data.frame(
        case = name, model = cs$model,
        n_par = nrow(pt),
        max_mean_err = pt$mean_err[im], max_mean_par = pt$variable[im],
        max_sd_err = pt$sd_err[is], max_sd_par = pt$variable[is],
        max_z = pt$z[iz], max_z_par = pt$variable[iz],
        ess_min_sgfs = min(pt$ess_bulk_sgfs), ess_min_stan = min(pt$ess_bulk_stan),
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
         priors = pri, n_iter = n_iter_final, n_iter_call = info$n_iter)
}

print_row <- function(r) {
    cat(sprintf(paste0("%-22s mean %.3f (%s)  sd %.3f (%s)  z %.1f (%s)  ESS %0.f/%0.f  ",
                       "elpd %.2f (%.2f) vs %.2f (%.2f) %s  time %.1f s vs %.1f s  %s\n"),
                r$case, r$max_mean_err, r$max_mean_par, r$max_sd_err, r$max_sd_par,
                r$max_z, r$max_z_par, r$ess_min_sgfs, r$ess_min_stan,
                r$elpd_sgfs, r$se_sgfs, r$elpd_stan, r$se_stan,
                if (r$elpd_ok) "ok" else "DIFFER", r$time_sgfs, r$time_stan,
                if (r$pass) "PASS" else "FAIL"))
}

## the priors of a row, as both sides were given them
prior_text <- function(name, pri) {
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
priors_txt <- character()
for (name in names(cases)) {
    cs <- cases[[name]]()
    cat(sprintf("== %s: %s\n", name, cs$model))
    res <- run_case(name, cs)
    print_row(res$row)
    rows[[name]] <- res$row
    params[[name]] <- res$params
    ps <- res$priors
    priors_txt <- c(priors_txt, prior_text(name, res$priors))
    if (!(res$row$mean_ok && res$row$sd_ok) && long_factor > 0) {
        n_long <- as.integer(ceiling(long_factor * res$n_iter_call))
        cat(sprintf("   rerun sgfs with n_iter = %d (%g x the default run's %d)\n",
                    n_long, long_factor, res$n_iter_call))
        res2 <- run_case(sprintf("%s (sgfs x%g)", name, long_factor), cs, n_iter = n_long,
                         sfit = res$sfit, t_stan = res$t_stan)
        print_row(res2$row)
        rows[[res2$row$case]] <- res2$row
        params[[res2$row$case]] <- res2$params
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
utils::write.csv(tab, file.path(out_dir, "results-rstanarm.csv"), row.names = FALSE)
utils::write.csv(par_tab[, c("case", "variable", "mean_sgfs", "mean_stan", "sd_sgfs", "sd_stan",
                             "ess_bulk_sgfs", "ess_bulk_stan", "mcse_mean_sgfs", "mcse_mean_stan",
                             "mean_err", "sd_err", "z")],
                 file.path(out_dir, "results-rstanarm-params.csv"), row.names = FALSE)

md_tab <- c(
    "| case | max mean err / sd (param) | max sd err (param) | max z (param) | min bulk ESS sgfs / stan | elpd_loo sgfs (SE) | elpd_loo rstanarm (SE) | within 1 SE | difference (paired SE) | time sgfs / stan (s) | pass |",
    "|---|---|---|---|---|---|---|---|---|---|---|",
    sprintf("| %s | %s (%s) | %s (%s) | %s (%s) | %0.f / %0.f | %s (%s) | %s (%s) | %s | %s (%s) | %s / %s | %s |",
            tab$case, fmt(tab$max_mean_err), tab$max_mean_par, fmt(tab$max_sd_err), tab$max_sd_par,
            fmt(tab$max_z, 1), tab$max_z_par, tab$ess_min_sgfs, tab$ess_min_stan,
            fmt(tab$elpd_sgfs, 2), fmt(tab$se_sgfs, 2), fmt(tab$elpd_stan, 2), fmt(tab$se_stan, 2),
            ifelse(tab$elpd_ok, "yes", "NO"), fmt(tab$elpd_diff, 2), fmt(tab$se_diff, 2),
            fmt(tab$time_sgfs, 1), fmt(tab$time_stan, 1),
            ifelse(tab$pass, "yes", "**no**")))
cat("\n", md_tab, sep = "\n")

versions <- sprintf("R %s, sgfs %s, rstanarm %s, rstan %s, loo %s, posterior %s; BLAS %s (as sgfs reports it)",
                    getRversion(), packageVersion("sgfs"), packageVersion("rstanarm"),
                    packageVersion("rstan"), packageVersion("loo"), packageVersion("posterior"),
                    blas_seen)
md <- c("# sgfs's sgldcv() against rstanarm's stan_glm()", "",
        sprintf("%s; %s; %d cores (shared machine).", format(Sys.time(), "%Y-%m-%d %H:%M"), versions,
                parallel::detectCores()), "",
        "Command (from the package root):", "", paste0("    ", command), "",
        "Both with 4 chains on 2 cores; rstanarm at its defaults (2,000 iterations per chain, half warm-up, autoscaled priors), seed 1 (for birthwt-probit `init_r = 0.5`: with Stan's default random starts all four chains failed to initialise); sgfs's `sgldcv()` at its defaults (the run grows until 400 bulk ESS and R-hat <= 1.01) with `set.seed(1)` and rstanarm's priors translated to its internal (standardised) scale (see the script's header for the translation); states-wls: explicit priors on the original scale for both (below), and the one mismatch, sigma's prior (rstanarm exponential, sgfs normal(0, 5) on log sigma), which moves sigma's mean by about 0.004, 0.06 of its sd. Criteria: every posterior mean within 0.1 rstanarm sd, every sd within 10 %, loo elpd within one SE (the larger of the two). z: the largest mean difference in units of its Monte Carlo standard error, sqrt(mcse_sgfs^2 + mcse_stan^2).",
        "", md_tab, "",
        "Models:", "", sprintf("- %s: %s", tab$case[!grepl(" \\(sgfs x", tab$case)],
                                 tab$model[!grepl(" \\(sgfs x", tab$case)]), "",
        "Priors (rstanarm's prior_summary(); what sgfs was given):", "", priors_txt, "",
        weights_note, "",
        "Per-parameter means, sds, ESS and MCSEs: results-rstanarm-params.csv.  What the rows show and why: bench/README.md (\"Against rstanarm\").")
writeLines(md, file.path(out_dir, "results-rstanarm.md"))
cat(sprintf("\nwritten: %s\n", file.path(out_dir, c("results-rstanarm.md", "results-rstanarm.csv"))))
