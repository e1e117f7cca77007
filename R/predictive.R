## keep = predictive(newdata): a running posterior predictive on new data,
## accumulated in C at each kept draw, instead of every parameter's draws.

#' Keep a running posterior predictive instead of all draws
#'
#' For the samplers' `keep` argument: rather than storing every parameter at
#' every kept iteration (`n_keep x D` numbers, too many for a network with
#' \eqn{10^5}{10^5} weights), each kept draw adds its predictive distribution on
#' `newdata` to a running average, in C, and only the parameters in
#' `monitor` are stored (for traceplots and effective sample sizes).  The
#' memory a run needs then does not grow with `n_iter`.  `predict(fit)`
#' without `newdata` returns the posterior predictive on these rows:
#' class probabilities (`binomial()`: of the second class; `categorical()`:
#' one column per level), the expected counts for `poisson()`, or for
#' `gaussian()` the predictive mean and
#' (`type = "response"`, `interval = "prediction"`) its standard deviation.
#' Each kept draw costs one pass of the model over `newdata`; thin
#' accordingly.
#'
#' @param newdata the rows to predict: a data frame for a formula fit, a
#'   matrix of predictors (as `x`, dense or sparse) for a matrix fit.  No
#'   missing values.
#' @param monitor the parameters whose draws are kept (names or numbers),
#'   for a network; `NULL` keeps the output layer's biases (and
#'   `log_sigma`).  A GLM keeps all its (few) parameters.
#' @return An object of class `sgfs_keep` for the samplers' `keep` argument.
#' @examples
#' data(Pima.tr, Pima.te, package = "MASS")
#' fit <- sgld(type ~ ., data = Pima.tr, model = mlp(5), n_iter = 3000,
#'             batch_size = 50, keep = predictive(Pima.te))
#' p <- predict(fit, type = "response")
#' mean((p > 0.5) == (Pima.te$type == "Yes"))
#' @export
predictive <- function(newdata, monitor = NULL) {
    if (missing(newdata) ||
        !(is.data.frame(newdata) || is.matrix(newdata) || inherits(newdata, "Matrix")))
        stop_arg("newdata", "must be a data frame or a matrix (dense or sparse) of the rows ",
                 "to predict")
    if (!nrow(newdata)) stop_arg("newdata", "has no rows to predict")
    if (!is.null(monitor) && !(is.character(monitor) || is.numeric(monitor)))
        stop_arg("monitor", "must be parameter names or numbers")
    structure(list(newdata = newdata, monitor = monitor), class = "sgfs_keep")
}

## For a formula fit: newdata as the model matrix of the fit's terms.
keep_model_matrix <- function(keep, frame) {
    if (!inherits(keep, "sgfs_keep") || !is.data.frame(keep$newdata)) return(keep)
    tt <- stats::delete.response(frame$terms)
    keep$newdata <- tryCatch({
        m <- stats::model.frame(tt, keep$newdata, na.action = stats::na.pass,
                                xlev = frame$xlevels)
        stats::model.matrix(tt, m, contrasts.arg = frame$contrasts)
    }, error = function(e)
        stop_arg("keep", "has newdata without the model's predictors: ", conditionMessage(e)))
    keep
}

## The engine's elements for `keep`: pred_x (P x M, on the engine's scale)
## and monitor (0-based), or nothing for keep = "draws".
keep_spec <- function(keep, names_x, design) {
    if (identical(keep, "draws")) return(list())
    if (!inherits(keep, "sgfs_keep"))
        stop_arg("keep", "must be \"draws\" or predictive(newdata)")
    newx <- keep$newdata
    if (is.data.frame(newx) || inherits(newx, "Matrix")) newx <- as.matrix(newx)
    if (!is.numeric(newx) || anyNA(newx) || any(!is.finite(newx)))
        stop_arg("keep", "has newdata with missing or non-numeric values")
    newx <- without_absent_intercept(newx, names_x)
    if (ncol(newx) == length(names_x) - ("(Intercept)" %in% names_x) &&
        "(Intercept)" %in% names_x && !("(Intercept)" %in% colnames(newx)))
        newx <- cbind(`(Intercept)` = 1, newx)
    if (ncol(newx) != length(names_x))
        stop_arg("keep", sprintf("has newdata with %d columns; the model's design has %d",
                                 ncol(newx), length(names_x)))
    colnames(newx) <- names_x
    if (!is.null(design$network)) newx <- newx[, colnames(newx) != "(Intercept)", drop = FALSE]
    monitor <- monitored(keep$monitor, design)
    list(pred_x = .Call(C_sgfs_design_copy, newx, as.double(design$center),
                        as.double(design$scale), FALSE, NULL),
         monitor = as.integer(monitor - 1L))
}

## the kept parameters (1-based)
monitored <- function(monitor, design) {
    if (is.null(design$network)) {
        if (!is.null(monitor))
            stop_arg("monitor", "is for networks: a GLM keeps every parameter")
        return(seq_len(design$D))
    }
    if (is.null(monitor)) {
        L <- length(design$widths) - 1L
        out <- which(design$layer == L)
        return(c(out[-seq_len(design$widths[L] * design$widths[L + 1L])],
                 if (design$D > design$n_coef) design$D))
    }
    idx <- if (is.character(monitor)) match(monitor, design$par_names) else monitor
    if (anyNA(idx) || any(idx < 1 | idx > design$D) || any(idx != round(idx)) ||
        anyDuplicated(idx))
        stop_arg("monitor", "must name distinct parameters of the model, e.g. ",
                 paste(utils::head(design$par_names, 3L), collapse = ", "))
    as.integer(idx)
}

## the design restricted to the monitored parameters (a network's map is
## diagonal, so it restricts)
monitored_design <- function(design, monitor) {
    if (is.null(monitor)) return(design)
    k <- monitor + 1L
    if (length(k) == design$D && all(k == seq_len(design$D))) return(design)
    design$M <- map_subset(design$M, k)
    design$shift <- design$shift[k]
    design$par_names <- design$par_names[k]
    design
}

## Adds the chains' predictive sums to the fit's: info$pred holds the sum
## and the number of draws in it.
add_predictive <- function(info, res) {
    ran <- Filter(Negate(is.null), res)
    if (is.null(info$spec$pred_x) || !length(ran)) return(info)
    sum <- Reduce(`+`, lapply(ran, `[[`, "pred"))
    count <- sum(vapply(ran, `[[`, 0, "pred_count"))
    if (!is.null(info$pred)) {
        sum <- sum + info$pred$sum
        count <- count + info$pred$count
    }
    info$pred <- list(sum = sum, count = count)
    info
}

## predict() from the running predictive
predict_kept <- function(info, type, interval) {
    if (isTRUE(info$pred_stale))
        stop("predict() without newdata reads the predictive the chains kept (keep = predictive()), ",
             "which averages draws this fit no longer holds (it was cut by window() or [): ",
             "predict from the whole fit", call. = FALSE)
    if (is.null(info$pred) || info$pred$count == 0)
        stop("no draw has been kept yet: the predictive is empty", call. = FALSE)
    mean <- info$pred$sum / info$pred$count
    d <- info$design
    entry <- family_entry(info$family)
    if (location_scale(info$family)) {
        if (type == "class") stop_arg("type", "\"class\" needs a binomial() or categorical() fit")
        fit <- d$y_center + d$y_scale * mean[1L, ]
        if (interval == "none") return(fit)
        if (interval != "prediction")
            stop_arg("interval", "must be \"none\" or \"prediction\" for a fit that kept its predictive")
        return(cbind(fit = fit, sd = d$y_scale * sqrt(pmax(mean[2L, ] - mean[1L, ]^2, 0))))
    }
    if (type == "link" || interval != "none")
        stop_arg("type", "must be \"response\" or \"class\" for a fit that kept its predictive")
    if (!entry$classes) {                                      # counts: their means
        if (type == "class") stop_arg("type", "\"class\" needs a binomial() or categorical() fit")
        return(mean[1L, ])
    }
    if (!class_response(info$family)) {                        # binomial
        p <- mean[1L, ]
        if (type == "response") return(p)
        cls <- as.integer(p > 0.5)
        return(if (is.null(info$levels)) cls else factor(info$levels[cls + 1L], info$levels))
    }
    p <- t(mean)
    colnames(p) <- info$levels
    if (type == "response") return(p)
    factor(info$levels[max.col(p, ties.method = "first")], info$levels)
}
