## What printouts and checks need to know of a sampler, defined once per
## sampler, in its own file, as `kind_<method>` (see kind()): its label,
## what to try when a chain diverges at step eps or its draws look wrong,
## and three facts: whether it is a Metropolis rule (every row each
## iteration; acceptance counted), whether it mixes slowly on large data
## (print() then suggests sgldcv() or osgfs()) and whether it samples a
## horseshoe prior's scales with the coefficients (its engine rule's
## capability, src/prior_hs.c; the others refuse hs()).
kind <- function(label, divergence, remedy, metropolis = FALSE, slow_mixing = FALSE,
                 horseshoe = FALSE) {
    list(label = label, divergence = divergence, remedy = remedy, metropolis = metropolis,
         slow_mixing = slow_mixing, horseshoe = horseshoe)
}

## the kind of a fit's sampler (`info$method`), or a generic one
sampler_kind <- function(method) {
    k <- get0(paste0("kind_", method), envir = topenv(), inherits = FALSE)
    if (!is.null(k)) return(k)
    kind(label = function(info) method, divergence = function(info, eps) "the step is too large",
         remedy = function(info) "try a longer run")
}

## the label of the SGLD family's samplers: the step, its schedule, the
## rule's own setting and the variance inflation its step was chosen for
step_label <- function(name) {
    function(info) {
        s <- info$settings
        ## (a metric from the pilots: each coordinate its own step)
        step <- if (identical(s$metric, noise_metric_label))
                    sprintf("per-coordinate steps from the gradient noise, median %.3g",
                            s$pilot$steps[length(s$pilot$steps)])
                else sprintf("stepsize = %.3g", s$stepsize)
        sprintf("%s (%s%s%s%s)", name, step,
                if (identical(s$schedule, "constant")) "" else ", decaying",
                if (!is.null(s$friction)) sprintf(", friction = %g", s$friction)
                else if (!is.null(s$diffusion)) sprintf(", diffusion = %g", s$diffusion)
                else "",
                ## (none where a given step made measuring the curvature needless)
                if (is.null(s$inflation) || is.na(s$inflation)) ""
                else sprintf("; variance inflation ~%.2g%%", 100 * s$inflation))
    }
}

## ... and their hints: a smaller step
step_divergence <- function(info, eps)
    sprintf("the step size %.3g is too large: try stepsize = %.3g", eps, eps / 10)
step_remedy <- function(info) "try a longer run, a longer burnin or a smaller stepsize"

## the kind of the samplers of this family
step_kind <- function(name, slow_mixing = TRUE, horseshoe = FALSE)
    kind(label = step_label(name), divergence = step_divergence, remedy = step_remedy,
         slow_mixing = slow_mixing, horseshoe = horseshoe)

## the samplers whose kind samples a horseshoe, by name
horseshoe_samplers <- function() {
    kinds <- ls(topenv(), pattern = "^kind_")
    sub("^kind_", "", Filter(function(k) isTRUE(get(k, topenv())$horseshoe), kinds))
}
