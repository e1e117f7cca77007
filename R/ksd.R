#' Kernel Stein discrepancy of a fit's draws
#'
#' How well the draws of a fit represent its posterior, measured by the
#' kernel Stein discrepancy (KSD) of Gorham and Mackey (2017) with the
#' inverse multiquadric (IMQ) kernel.  It needs no reference sample: only the
#' exact (full-data) gradient of the log posterior at each draw.  Smaller is
#' better; it tends to zero for draws that converge to the posterior, and
#' it penalises both bias (e.g. a step size that is too large) and poor
#' mixing, so it can compare samplers and step sizes on the same model.
#'
#' With the scores \eqn{b(x) = \nabla \log p(x \mid \mathrm{data})}{b(x) = grad log p(x | data)}, the base
#' kernel \eqn{k(x, y) = (c^2 + \|x - y\|^2)^\beta}{k(x, y) = (c^2 + ||x - y||^2)^beta} and \eqn{r = x - y}{r = x - y},
#' \eqn{u = c^2 + \|r\|^2}{u = c^2 + ||r||^2}, the Langevin-Stein kernel is
#' \deqn{k_0(x, y) = b(x)^\top b(y)\, u^\beta + 2\beta u^{\beta - 1}
#'   (b(y) - b(x))^\top r - 2\beta D u^{\beta - 1}
#'   - 4\beta(\beta - 1)\|r\|^2 u^{\beta - 2}}{k_0(x, y) = b(x)' b(y) u^beta + 2 beta u^(beta - 1) (b(y) - b(x))' r - 2 beta D u^(beta - 1) - 4 beta(beta - 1)||r||^2 u^(beta - 2)}
#' and, for the draws \eqn{x_1, \dots, x_T}{x_1, ..., x_T},
#' \deqn{\mathrm{KSD} = \Big(\frac{1}{T^2} \sum_{i=1}^T \sum_{j=1}^T
#'   k_0(x_i, x_j)\Big)^{1/2}.}{KSD = ((1/(T^2)) sum_(i=1)^T sum_(j=1)^T k_0(x_i, x_j))^(1/2).}
#'
#' **Coordinates.** The KSD is not invariant to linear maps of the
#' parameters, so the scale matters.  It is computed on the sampler's
#' internal scale: the parameters the C engine samples, for the predictors
#' as standardised by `standardize = TRUE` (the default of every sampler),
#' where the priors are defined and all coefficients are comparably
#' scaled.  The draws the fit shows (original scale) are mapped there first.
#' Fits of the same model and data with the same `standardize` share that
#' scale, so their KSDs, for instance at different step sizes or from
#' different samplers, are comparable.  With `standardize = FALSE` the
#' internal and the original scales coincide.  For large data sets the
#' posterior standard deviations are much smaller than `c = 1`; the KSD is
#' then governed mostly by the average score (the bias of the draws'
#' location) and less by their spread; a smaller `c`, of the order of the
#' posterior standard deviations, makes it more sensitive to the spread.
#'
#' **Draws used.** The chains of a multi-chain fit are pooled (the KSD
#' judges the sample as a whole), and the pooled draws are thinned to at
#' most `max_draws` evenly spaced ones: rows `round(seq(1, T, length.out =
#' max_draws))` of the draws stacked chain after chain (so each chain gives
#' about the same share).  Thinning keeps the cost bounded: the scores cost
#' one full-data gradient per draw, \eqn{O(T N D)}{O(T N D)}, and the kernel sum
#' \eqn{O(T^2 D)}{O(T^2 D)}; for large data sets the scores dominate (a full-data
#' gradient per draw), so a smaller `max_draws` is the way to cut the time.
#'
#' **Scale of the values.** Even exact independent draws have a positive
#' KSD: at the defaults its square has expectation
#' \eqn{(E\|b(x)\|^2 + D) / T}{(E||b(x)||^2 + D) / T}, about \eqn{(\mathrm{tr}(A) + D) / T}{(tr(A) + D) / T} for a
#' posterior with precision matrix \eqn{A}{A}.  Compare fits through their KSDs
#' at the same `max_draws`, `c` and `beta`, not against zero.
#'
#' @param fit a fit returned by one of the samplers ([sgld()], [sgfs()],
#'   ...), of class `sgfit`.
#' @param c the IMQ kernel's scale, a positive number (on the internal
#'   scale; see Details).
#' @param beta the IMQ kernel's exponent, a number in \eqn{(-1, 0)}{(-1, 0)}.
#' @param max_draws the largest number of draws used (at least 2); more are
#'   thinned evenly.
#' @return The kernel Stein discrepancy, a non-negative number; `Inf` when
#'   the draws' scores or distances overflow (draws far from the posterior).
#' @references Gorham, J. and Mackey, L. (2017). Measuring sample quality
#'   with kernels. *Proceedings of the 34th International Conference on
#'   Machine Learning*, PMLR 70, 1292-1301.
#' @examples
#' data(Pima.tr, package = "MASS")
#' set.seed(1)
#' fit <- sgld(type ~ glu + bmi, data = Pima.tr, n_iter = 4000, batch_size = 50,
#'             progress = FALSE)
#' ksd(fit)
#' @export
ksd <- function(fit, c = 1, beta = -0.5, max_draws = 2000L) {
    info <- if (inherits(fit, "sgfit")) sgfit_info(fit)
    if (is.null(info$spec) || is.null(info$design))
        stop_arg("fit", "must be a fit returned by one of the sgfs samplers (class 'sgfit')")
    if (!is.null(info$design$hs))
        stop_arg("fit", "has a horseshoe prior: the discrepancy of its scales' draws is not ",
                 "implemented")
    if (!is.null(info$random))         # (its score would need the group effects' part)
        stop("ksd() is not available for a fit with random-effect terms: its score would ",
             "need the group effects' part", call. = FALSE)
    if (coda::nvar(fit) != info$design$D)
        stop_arg("fit", "kept the draws of only some parameters (keep = predictive()): ",
                 "the discrepancy needs them all")
    c <- check_positive(c, "c")
    if (!is.numeric(beta) || length(beta) != 1L || !is.finite(beta) ||
        beta <= -1 || beta >= 0)
        stop_arg("beta", "must be a number between -1 and 0 (exclusive), not ",
                 format_value(beta))
    max_draws <- check_count(max_draws, "max_draws", 2L)
    d <- all_draws(fit)
    rows <- unique(round(seq(1, nrow(d), length.out = min(nrow(d), max_draws))))
    x <- to_internal(d[rows, , drop = FALSE], info$design)
    .Call(C_sgfs_ksd, fit_spec(info), t(x), c, as.double(beta))
}
