## The mixed-model sampler's design (vignette("internals"), "Mixed models")
## in its plain-R reference (tests/testthat/helper-mixed-reference.R: every
## block exact, the fixed effects' too) against rstanarm's stan_glmer()
## (NUTS) with the same priors, before the engine implements it:
##   sleepstudy  Reaction ~ Days + (Days | Subject), gaussian (Days centred)
##   cbpp        incidence of size ~ period + (1 | herd), logistic, as one
##               0/1 row per animal (the periods' dummies centred, so that
##               rstanarm's centring of the predictors is the identity)
##   few         150 groups of two rows, logistic (simulated): the funnel
## Priors (both): normal priors on beta (given), an exponential prior on
## the noise sd, and rstanarm's decov(1, 1, 1, 1) on each term's covariance.  Each posterior mean's error
## in posterior sds and each sd's ratio, with both sides' effective sizes.
##
##   R_LIBS=<lib> Rscript bench/bench_mixed_reference.R [ITER]
##
## Writes bench/results/mixed-reference.md.  Needs rstanarm, lme4, coda.
suppressPackageStartupMessages({
    library(sgfs)
    library(rstanarm)
})
args <- commandArgs(TRUE)
n_iter <- if (length(args)) as.integer(args[1]) else 6000L
here <- if (dir.exists("bench")) "." else ".."
source(file.path(here, "tests", "testthat", "helper-mixed-reference.R"))
options(mc.cores = 2L)

compare <- function(name, formula, data, model, family, priors, stan_priors) {
    frame <- stats::model.frame(sgfs:::frame_formula(formula), data)
    terms <- sgfs:::random_design(sgfs:::random_bars(formula), frame)
    X <- stats::model.matrix(sgfs:::fixed_formula(formula), frame)
    y <- stats::model.response(frame)
    t0 <- proc.time()[["elapsed"]]
    chains <- lapply(1:2, function(k)
        mixed_reference_chain(y, rep(1, length(y)), X, terms, model, priors, n_iter, seed = k))
    ours_s <- proc.time()[["elapsed"]] - t0
    keep <- -seq_len(n_iter %/% 5L)
    ours <- coda::mcmc.list(lapply(chains, function(d) coda::mcmc(d[keep, , drop = FALSE])))
    t0 <- proc.time()[["elapsed"]]
    fit <- do.call(stan_glmer, c(list(formula, data = data, family = family, chains = 4,
                                      iter = 3000, seed = 1, refresh = 0), stan_priors))
    stan_s <- proc.time()[["elapsed"]] - t0
    draws <- as.matrix(fit)
    ## the same quantities: fixed effects, each term's sds and correlations, sigma
    fixed <- colnames(X)
    sds <- cors <- NULL
    for (t in terms) {
        q <- length(t$coef)
        key <- function(a, b) sprintf("Sigma[%s:%s,%s]", t$name, t$coef[a], t$coef[b])
        sds <- cbind(sds, vapply(seq_len(q), function(a) sqrt(draws[, key(a, a)]), numeric(nrow(draws))))
        if (q > 1) for (a in 2:q) for (c in 1:(a - 1))
            cors <- cbind(cors, draws[, key(a, c)] / sqrt(draws[, key(a, a)] * draws[, key(c, c)]))
    }
    ref <- cbind(draws[, fixed, drop = FALSE], sds, cors,
                 if (model == "gaussian") draws[, "sigma"])
    labels <- c(fixed, unlist(lapply(terms, function(t) {
        q <- length(t$coef)
        c(paste0("sd(", t$coef, " | ", t$name, ")"),
          if (q > 1) unlist(lapply(2:q, function(a) paste0("cor(", t$coef[seq_len(a - 1)], ", ",
                                                           t$coef[a], " | ", t$name, ")"))))
    })), if (model == "gaussian") "sigma")
    ## (ours lays a term's sds then its correlations out together; stan's
    ## columns were gathered sds first, then correlations: reorder ours)
    mine <- do.call(rbind, ours)
    cols <- seq_along(fixed)
    at <- length(fixed)
    sd_cols <- cor_cols <- integer(0)
    for (t in terms) {
        q <- length(t$coef)
        sd_cols <- c(sd_cols, at + seq_len(q))
        cor_cols <- c(cor_cols, at + q + seq_len(q * (q - 1) / 2))
        at <- at + q * (q + 1) / 2
    }
    order <- c(cols, sd_cols, cor_cols, if (model == "gaussian") ncol(mine))
    mine <- mine[, order, drop = FALSE]
    ess_ours <- coda::effectiveSize(coda::mcmc.list(lapply(ours, function(c) c[, order, drop = FALSE])))
    ess_stan <- coda::effectiveSize(coda::mcmc(ref))
    m_err <- (colMeans(mine) - colMeans(ref)) / apply(ref, 2, stats::sd)
    sd_ratio <- apply(mine, 2, stats::sd) / apply(ref, 2, stats::sd)
    c(sprintf("## %s", name), "",
      sprintf("`%s`, %s: ours 2 chains x %d iterations (a fifth burn-in) in %.0f s; stan_glmer 4 x 3,000 (NUTS) in %.0f s.",
              deparse1(formula), model, n_iter, ours_s, stan_s), "",
      "| parameter | mean (NUTS) | sd (NUTS) | mean error / sd | sd ratio | ESS ours | ESS NUTS |",
      "|---|---:|---:|---:|---:|---:|---:|",
      sprintf("| %s | %.4g | %.3g | %+.3f | %.3f | %.0f | %.0f |", labels, colMeans(ref),
              apply(ref, 2, stats::sd), m_err, sd_ratio, ess_ours, ess_stan), "")
}

sleep <- lme4::sleepstudy
sleep$Days <- sleep$Days - mean(sleep$Days)
a <- compare("sleepstudy", Reaction ~ Days + (Days | Subject), sleep, "gaussian", gaussian(),
             list(beta_mean = c(300, 0), beta_sd = c(100, 50), sigma_rate = 1 / 50, zeta = 1,
                  sd = list(family = "decov", shape = 1, scale = 1, concentration = 1)),
             list(prior_intercept = normal(300, 100, autoscale = FALSE),
                  prior = normal(0, 50, autoscale = FALSE),
                  prior_aux = exponential(1 / 50, autoscale = FALSE),
                  prior_covariance = decov(1, 1, 1, 1)))
cbpp <- lme4::cbpp
rows <- rep(seq_len(nrow(cbpp)), cbpp$size)
animals <- data.frame(herd = cbpp$herd[rows],
                      y = unlist(lapply(seq_len(nrow(cbpp)), function(i)
                          rep(1:0, c(cbpp$incidence[i], cbpp$size[i] - cbpp$incidence[i])))))
## the periods' dummies, centred (rstanarm's centring then the identity)
for (k in 2:4) animals[[paste0("period", k)]] <- as.double(cbpp$period[rows] == k) -
                                                 mean(cbpp$period[rows] == k)
b <- compare("cbpp", y ~ period2 + period3 + period4 + (1 | herd), animals, "logistic", binomial(),
             list(beta_mean = rep(0, 4), beta_sd = rep(2.5, 4),
                  sd = list(family = "exponential", scale = 1), zeta = 1),
             list(prior_intercept = normal(0, 2.5, autoscale = FALSE),
                  prior = normal(0, 2.5, autoscale = FALSE),
                  prior_covariance = decov(1, 1, 1, 1)))
## many groups of two rows each: weakly identified effects, where the
## centred steps alone mix slowly along the funnel (the interweaving step)
set.seed(2)
few <- data.frame(g = factor(rep(1:150, each = 2)), x = stats::rnorm(300))
few$y <- stats::rbinom(300, 1, stats::plogis(-0.3 + 0.5 * few$x + stats::rnorm(150, sd = 0.4)[few$g]))
c3 <- compare("150 groups of two rows", y ~ x + (1 | g), few, "logistic", binomial(),
              list(beta_mean = c(0, 0), beta_sd = c(2.5, 2.5),
                   sd = list(family = "exponential", scale = 1), zeta = 1),
              list(prior_intercept = normal(0, 2.5, autoscale = FALSE),
                   prior = normal(0, 2.5, autoscale = FALSE),
                   prior_covariance = decov(1, 1, 1, 1)))
lines <- c("# The mixed-model sampler's design in plain R against stan_glmer() (bench/bench_mixed_reference.R)", "",
           "Both sides have rstanarm's decov(1, 1, 1, 1) on the group covariance: for q coefficients, sds d tau sqrt(q pi) with tau ~ Gamma(1, 1), pi ~ Dirichlet(1) and d the noise sd for a gaussian model (1 otherwise), and LKJ(1) correlations; for one coefficient an exponential(1) law on sd / d.", "",
           "Every block of the reference sampler is exact: the fixed effects and each group's effects by an independence Metropolis-Hastings step from a t(4) at their conditional's Laplace approximation (gaussian: exact normal draws), the translation along each fixed-and-varying coefficient by an exact normal draw, each term's sds also in the non-centred coordinates (interweaving), each term's covariance and the noise sd by slice sampling.  The engine's sampler will replace the fixed effects' block by its stochastic-gradient step.", "",
           sprintf("Run %s; `Rscript bench/bench_mixed_reference.R %d`; rstanarm %s.", format(Sys.time(), "%Y-%m-%d %H:%M"),
                   n_iter, utils::packageVersion("rstanarm")), "", a, b, c3)
writeLines(lines)
writeLines(lines, file.path(here, "bench", "results", "mixed-reference.md"))
