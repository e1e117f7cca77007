## Models other than the linear predictor: feed-forward networks.

#' Feed-forward neural networks
#'
#' A network with one or two hidden layers for the samplers' `model`
#' argument; its output layer is the family's: one sigmoid unit for
#' `binomial()`, a softmax over the K levels for `categorical()` (the first
#' level the reference, with logit 0, as for the GLM), one identity unit
#' with noise sd \eqn{\sigma}{sigma} (parameter `log_sigma`, unless `sigma` is
#' fixed) for `gaussian()`, one unit giving the log mean for `poisson()`
#' (counts; its output is not clipped, so a chain whose mean overflows stops
#' as diverged).  Layer \eqn{l}{l} computes
#' \eqn{h_l = \phi(W_l' h_{l-1} + b_l)}{h_l = phi(W_l' h_(l-1) + b_l)} from \eqn{h_0}{h_0} the standardised
#' predictors (without intercept column: every layer has biases): centred
#' and divided by the larger of their sd and a tenth of their range, so
#' that a rarely non-zero input (an image's border pixel) is not amplified
#' to hundreds of sds, while a continuous one keeps its sd.  A
#' constant predictor (such as MNIST's border pixels) is allowed: it is 0
#' once standardised, and the weights from it keep their prior.
#'
#' Parameters are named `W1[j,k]` (the weight from input \eqn{j}{j} to hidden
#' unit \eqn{k}{k}), `b1[k]`, `W2[j,k]`, ... up to the output layer, then
#' `log_sigma`.  The weights are those of the standardised predictors; for
#' `gaussian()` the output layer and `log_sigma` are on the response's
#' scale.  Each layer's weights and biases form one parameter block: the
#' groups of [isgd()] and the blocks of `sgfs(preconditioner = "block")`.
#'
#' **Priors.** `prior` is one prior for every weight and bias, or a list of
#' priors, one per layer (first hidden layer first, the output layer last).
#' The default is `normal_gamma(1/sqrt(w))` for the weights and biases of a
#' layer with fan-in \eqn{w}{w} (the units of the layer below): a normal of
#' scale \eqn{1/\sqrt{\tau_l w}}{1/sqrt(tau_l w)}, so that the prior of each unit's
#' input has the same spread whatever the width and the network's output
#' stays of order one as layers grow (Neal, 1996), with each layer's
#' precision \eqn{\tau_l \sim \mathrm{Gamma}(1, 1)}{tau_l ~ Gamma(1, 1)} sampled with the
#' weights ([normal_gamma()]): each layer learns how large its weights are,
#' where a fixed scale would have to be right for every data set and
#' width.  `normal(0, 1/sqrt(w))` per layer gives the fixed prior.
#'
#' **Default steps.** A network's curvature at one mode (a sharp one, where
#' `init = "map"` starts) says little about its posterior, so [sgld()],
#' [psgld()], [sghmc()], [sgnht()] and [isgd()] (its warm-up) given no
#' `stepsize` take theirs from
#' the gradient noise the chain meets, and start at random weights
#' (`init = NULL`; from the mode, the noise there kept the steps too small
#' to leave it: on 20 splits of UCI yacht and boston, test log-likelihoods
#' down to -14 from the mode against -1.8 and -3.7 from random weights):
#' pilots of 1,000 iterations continue
#' the chain from its start, each at the step the previous one measured,
#' until the step settles (at most 10 pilots, before `burnin`).  The step
#' is the one at which the minibatch gradient's noise adds at most 30 % to
#' the noise the rule injects (the condition under which these rules sample
#' the posterior; Welling and Teh, 2011, section 4), its variance measured
#' by the mean squares of the chain's gradients over each pilot's second
#' half; as these include the posterior's own curvature, the same bound
#' limits the discretisation's inflation too.  [sgld()], [sghmc()] and
#' [sgnht()] give each coordinate its own such step (a diagonal metric;
#' no step more than 10 times another, as a unit inactive in the pilots
#' would otherwise take far too large ones once it wakes); [psgld()], whose
#' preconditioner adapts all along, one step, set by the coordinate where
#' the noise is largest.  `attr(fit, "sgfit")$settings$pilot` records the
#' pilots' steps (with a metric, their median over the coordinates).
#'
#' **Initialisation.** With `init = NULL` the chain starts at random weights
#' drawn from R's random number generator (so that `set.seed()` reproduces
#' them): \eqn{N(0, g/w_{l-1})}{N(0, g/w_(l-1))} for the weights into a layer of fan-in
#' \eqn{w_{l-1}}{w_(l-1)}, \eqn{g = 2}{g = 2} for `relu` and 1 otherwise, and zero biases.
#' All-zero weights would be a fixed point of every gradient method (all
#' hidden units stay identical).  `init = "map"` starts from an [sga()]
#' optimisation begun at such random weights.
#'
#' The posterior of a network is multimodal (hidden units can be permuted,
#' and for `tanh` their signs flipped), so a chain explores the
#' neighbourhood of one mode; the check that the draws sit near the mode,
#' which assumes a near-Gaussian posterior, is not made for networks.
#'
#' @param hidden the number of units of each hidden layer: one or two
#'   whole numbers between 1 and 1e6 (at most 1e8 weights and biases in all).
#' @param activation `"tanh"`, `"logistic"` or `"relu"`.
#' @param precision `"double"`, or `"single"` to run the minibatch
#'   gradient's forward and backward passes in single precision (float32),
#'   which speeds up the matrix products (the rest of an iteration, the
#'   rule's update and its normal deviates, stays in double).  Available where R's BLAS has single-precision matrix products
#'   (OpenBLAS, MKL, ATLAS, BLIS, Accelerate; not R's own reference BLAS), which
#'   the package's configure script checks when it is installed.  The weights
#'   and the batch are rounded to float32 once per gradient; the output layer's
#'   likelihood, the sampler's state, the log-likelihoods and predictions stay
#'   in double precision.  The gradient's relative rounding error (about 1e-6)
#'   is far below a minibatch gradient's noise.
#' @return An object of class `sgfs_model`.
#' @examples
#' fit <- sgld(Species ~ ., data = iris, family = categorical(),
#'             model = mlp(5), n_iter = 2000, batch_size = 50)
#' table(predict(fit, type = "class"), iris$Species)
#' @export
mlp <- function(hidden, activation = c("tanh", "logistic", "relu"),
                precision = c("double", "single")) {
    if (!is.numeric(hidden) || !(length(hidden) %in% 1:2) || any(!is.finite(hidden)) ||
        any(hidden != round(hidden)) || any(hidden < 1) || any(hidden > 1e6))
        stop_arg("hidden", "must be one or two whole numbers between 1 and 1e6 (the units of each ",
                 "hidden layer)")
    activation <- choose_arg(activation, c("tanh", "logistic", "relu"), "activation")
    precision <- choose_arg(precision, c("double", "single"), "precision")
    if (precision == "single" && !single_precision_available())
        stop_arg("precision", "\"single\" needs single-precision matrix products (sgemm) in ",
                 "R's BLAS, and this R's BLAS (", blas_label(), ") has none: use precision = ",
                 "\"double\", or an R linked to an external BLAS such as OpenBLAS")
    structure(list(type = "mlp", hidden = as.integer(hidden), activation = activation,
                   precision = precision), class = "sgfs_model")
}

## whether this build has single-precision matrix products (./configure)
single_precision_available <- function() .Call(C_sgfs_single_precision)

#' @export
print.sgfs_model <- function(x, ...) {
    cat(model_label(x), "\n", sep = "")
    invisible(x)
}

model_label <- function(model) {
    if (is.null(model)) return("linear predictor")
    if (is_custom_model(model))
        return(sprintf("custom_model(parameters %s)", paste(model$names, collapse = ", ")))
    sprintf("mlp(hidden = %s, activation = \"%s\"%s)",
            paste(model$hidden, collapse = "-"), model$activation,
            if (identical(model$precision, "single")) ", precision = \"single\"" else "")
}

resolve_model <- function(model) {
    if (is.null(model) || inherits(model, "sgfs_model")) return(model)
    stop_arg("model", "must be NULL (the linear predictor of a GLM), a network such as mlp(30) ",
             "or a custom_model()")
}

## The network's design: the predictors standardised (no intercept column),
## the layer widths, parameter names and blocks, the engine's settings and
## the (diagonal) map between internal and original parameters.
mlp_design <- function(model, x, y, family, standardize, sigma, levels) {
    if ("(Intercept)" %in% colnames(x)) x <- x[, colnames(x) != "(Intercept)", drop = FALSE]
    if (ncol(x) == 0L) stop_arg("x", "has no predictors besides the intercept")
    cols <- column_stats(x)
    sds <- cols$sd
    check_spread(sds, colnames(x))
    P <- ncol(x)
    center <- if (standardize) cols$mean else rep(0, P)
    ## each input divided by the larger of its sd and a tenth of its range: a
    ## rarely non-zero one (an image's border pixel, on in a few of 60,000
    ## MNIST digits) would otherwise reach hundreds of sds, and the first
    ## layer's units would follow those few rows (MNIST 400-400, 3 epochs of
    ## Adam: test error 2.5 % divided by the sd, 1.9 % so); a continuous
    ## input spans 4 to 8 sds and keeps its sd.  A constant input is kept:
    ## standardised it is 0, and its weights are the prior's
    scale <- if (standardize) ifelse(sds > 0, pmax(sds, cols$range / 10), 1) else rep(1, P)
    entry <- family_entry(family)
    gaussian <- location_scale(family)
    y_center <- if (gaussian && standardize) mean(y) else 0
    y_scale <- if (gaussian && standardize) stats::sd(y) else 1
    if (!(y_scale > 0)) stop_arg("y", "is constant")
    out <- if (entry$several) length(levels) - 1L else 1L
    widths <- c(P, model$hidden, out)
    L <- length(widths) - 1L
    n_par <- sum(as.double(widths[-1L]) * (widths[-length(widths)] + 1))
    if (n_par > 1e8)
        stop_arg("model", sprintf("%s has %.3g weights and biases for %d predictors, more than ",
                                  model_label(model), n_par, P),
                 "the 1e8 a network here may have: use fewer hidden units")
    layer_names <- lapply(seq_len(L), function(l) {
        w <- sprintf("W%d[%d,%d]", l, rep(seq_len(widths[l]), widths[l + 1L]),
                     rep(seq_len(widths[l + 1L]), each = widths[l]))
        c(w, sprintf("b%d[%d]", l, seq_len(widths[l + 1L])))
    })
    layer <- rep(seq_len(L), lengths(layer_names))
    sample_sigma <- gaussian && is.null(sigma)
    D <- length(layer) + sample_sigma
    ## internal -> original: the gaussian output layer and log sigma rescaled
    M <- rep(1, D)
    shift <- double(D)
    if (gaussian) {
        M[layer == L] <- y_scale
        shift[length(layer)] <- y_center
        if (sample_sigma) shift[D] <- log(y_scale)
    }
    gain <- if (model$activation == "relu") 2 else 1
    list(data = engine_data(x, center, scale, rows = FALSE),
         y = as.double((y - y_center) / y_scale), D = D, p = P,
         n_coef = length(layer), intercept = integer(0), x_names = colnames(x),
         par_names = c(unlist(layer_names), if (sample_sigma) "log_sigma"),
         M = linear_map(M), shift = shift,
         mpar = as.double(c(entry$network_output, out,
                            match(model$activation, c("tanh", "logistic", "relu")) - 1,
                            L - 1L, model$hidden, if (L == 2L) 0,
                            if (!gaussian) 0 else if (sample_sigma) NA else log(sigma / y_scale),
                            identical(model$precision, "single"))),
         center = center, scale = scale, y_center = y_center, y_scale = y_scale,
         network = model, widths = widths, layer = layer,
         groups = c(layer, if (sample_sigma) L + 1L),
         random_init = function() {
             th <- double(D)
             for (l in seq_len(L)) {
                 w <- which(layer == l)[seq_len(widths[l] * widths[l + 1L])]
                 th[w] <- stats::rnorm(length(w), sd = sqrt(gain / widths[l]))
             }
             th
         })
}

## the default prior: normal(0, 2.5) for a GLM; for a network, per layer a
## normal of scale 1/sqrt(fan-in) whose scale is learned (normal_gamma())
default_prior <- function(design) {
    if (is.null(design$network)) return(normal(0, 2.5))
    w <- design$widths
    lapply(w[-length(w)], function(fan_in) normal_gamma(1 / sqrt(fan_in)))
}

## coefficient prior(s) of a network: one prior, or a list with one per layer
network_prior_parts <- function(prior, design) {
    L <- length(design$widths) - 1L
    if (is_prior(prior)) prior <- rep(list(prior), L)
    if (!is.list(prior) || length(prior) != L)
        stop_arg("prior", sprintf("must be a prior or a list of %d priors, one per layer", L))
    lapply(seq_len(L), function(l)
        expand_prior(prior[[l]], which(design$layer == l), "prior", design))
}

## the model's parameter blocks, an integer per parameter: a network's
## layers, or a GLM's coefficients (and log sigma)
model_groups <- function(design, D = design$D) {
    if (!is.null(design$groups)) return(design$groups)
    c(rep(1L, design$n_coef), rep(2L, D - design$n_coef))
}
