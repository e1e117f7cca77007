## Default steps from the gradient noise the chain meets: for networks,
## whose curvature at one sharp mode says little about the posterior.
##
## A stochastic-gradient chain samples the posterior while the noise it
## injects dominates the minibatch gradient's (Welling and Teh, 2011,
## section 4).  Per step and coordinate j the rules inject and meet
##
##   SGLD   theta += (eps/2) g + N(0, eps T):     (eps/2)^2 v_j against eps T
##   pSGLD  the same with eps G_j:            (eps G_j / 2)^2 v_j against eps G_j T
##   SGHMC  v += eta g + N(0, 2 eta alpha T):     eta^2 v_j against 2 eta alpha T
##   SGNHT  the same with the diffusion A for alpha
##
## v_j the variance of the minibatch estimate g_j of the log posterior's
## gradient.  Their ratio, the share the minibatch noise adds to the
## injected one and so about the variance it adds in coordinate j, is the
## step times k_j: v_j / (4 T), G_j v_j / (4 T), v_j / (2 alpha T).  The
## default step keeps it at `noise_share` in every coordinate.  v_j is
## measured on the chain itself: the mean square m_j of g_j over the second
## half of a pilot of `pilot_iter` iterations (E g_j^2 = (grad_j)^2 + v_j, at
## stationarity T h_j + v_j, so m_j over-states v_j by T h_j: by a factor
## 1 + n / N on a model whose Fisher information is its curvature).  The
## first pilot runs at the step the start's mean squares give (m_j from
## the moments of batch mean scores there, batch_score_square()); each
## next one continues the chain at the step the last measured, so that the
## step follows the chain from its start (a sharp mode, or random weights)
## to where the posterior's mass is; the chains continue from the last
## pilot (their burn-in, `burnin`, still to come).  A pilot that diverges
## is run again from where it began at a step ten times smaller.
noise_share <- 0.3

## the first pilot's mean squares m_j at theta: N^2 E[gbar_j^2] (the
## likelihood's minibatch mean score, from evenly spaced rows)
start_mean_square <- function(run, theta) {
    N <- run$spec$N
    N^2 * batch_score_square(subset_spec(run$spec), theta, N, run$spec$batch_size)
}

## The chains' step, tuned by pilots that continue each chain (its
## parameters, the rule's state and its random stream): each runs
## `pilot_iter` iterations at the step the previous one measured (the first
## at the one the start's mean squares give), until it changes by less than
## a quarter or after `max_pilots`.  `per_step(m)` gives k_j, the noise
## share per unit step, from the mean squares m_j.  With `diagonal = FALSE`
## one step for all, max_j step k_j = noise_share (at most `cap`).  With
## `diagonal = TRUE` each coordinate its own: the step is min(1, cap) in
## the coordinates z_j = s_j theta_j of a diagonal metric s (the engine's
## spec$metric), each s_j set so that step k_j(m^z) = noise_share, m^z the
## mean squares of the gradient in z (k_j linear in m_j: SGLD's, SGHMC's),
## but no step more than `max_spread` times the smallest: a coordinate whose
## gradient is quiet in the pilots (a ReLU unit inactive there) would
## otherwise take steps far too large once it wakes (UCI boston: chains
## whose weights ran off to 1e10 at a spread of 100, none in 40 fits at
## 10; its test log-likelihood -2.40 against -2.49 with one step for all,
## concrete -3.01 against -3.16).
## With `fresh_state` the rule's state starts afresh after each pilot (I-SGD,
## whose pilots run its warm-up, which measures the noise it samples with).
## Returns the states the chains continue from, the step, the metric (or
## NULL), and the pilots' record for the fit's settings: the step each
## pilot ran at (diagonal: the median over coordinates of the step they
## take in theta, step / s_j^2).
max_pilots <- 10L
max_spread <- 10
noise_metric_label <- "diagonal (from the chain's gradient noise)"
noise_step <- function(spec, states, run, per_step, cap = Inf, diagonal = FALSE,
                       fresh_state = FALSE) {
    rule <- function(m) min(cap, noise_share / max(per_step(m)))
    m0 <- start_mean_square(run, states[[1L]]$theta)
    step <- if (diagonal) min(1, cap) else rule(m0)
    ## (the scales' squares; a coordinate with no gradient noise keeps scale 1)
    ## (a coordinate's squared scale: its step is `step / scale2`, and the
    ## steps stay within max_spread of each other)
    spread <- function(s2) pmax(s2, max(s2) / max_spread)
    scale2 <- if (diagonal) spread(pmax(step * per_step(m0) / noise_share, .Machine$double.eps))
    first <- first_step(spec$schedule)
    pilot <- pilot_spec(spec, pilot_iter %/% 2L, pilot_iter - pilot_iter %/% 2L)
    pilot$record_grad_sq <- TRUE
    theta_step <- function() if (diagonal) stats::median(step / scale2) else step
    steps <- theta_step()
    retries <- 0L
    for (k in seq_len(max_pilots)) {
        pilot$schedule <- scale_schedule(spec$schedule, step / first)
        if (diagonal) pilot$metric <- sqrt(scale2)
        res <- run_chains(pilot, states, pilot_iter, FALSE, run$cores)
        if (!all(vapply(res, function(r) !is.null(r) && r$diverged == 0, NA))) {
            retries <- retries + 1L
            if (retries > 5L)
                stop(sprintf(paste("the chain diverged in every pilot down to step %.3g: give",
                                   "'stepsize', or check the data and prior"), theta_step()),
                     call. = FALSE)
            if (diagonal) scale2 <- 10 * scale2 else step <- step / 10
            next
        }
        m <- Reduce(`+`, lapply(res, `[[`, "grad_sq")) / ((pilot_iter - pilot$burnin) * length(res))
        ## (a new metric: the engine computes z from theta)
        states <- lapply(res, function(r) list(theta = r$theta, iter = 0,
                                               sstate = if (fresh_state) double(0) else r$sstate,
                                               seed = r$seed, hyper = r$hyper))
        if (diagonal) {
            change <- pmax(step * per_step(m) / noise_share, .Machine$double.eps)
            scale2 <- spread(scale2 * change)
            settled <- stats::median(abs(log(change))) < log(1.25)
        } else {
            new <- rule(m)
            settled <- new / step > 0.8 && new / step < 1.25
            step <- new
        }
        steps <- c(steps, theta_step())
        if (settled) break
    }
    list(states = states, step = step, metric = if (diagonal) sqrt(scale2),
         pilot = list(iterations = pilot_iter * (length(steps) - 1L), steps = steps,
                      noise_share = noise_share))
}

## a schedule vector with every step multiplied by f (each kind is linear in a)
scale_schedule <- function(sched, f) {
    sched[2L] <- sched[2L] * f
    sched
}

## whether a sampler's default step comes from the chain's gradient noise:
## a network's, given no step
noise_stepped <- function(run, stepsize) is.null(stepsize) && !is.null(run$design$network)
