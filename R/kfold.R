## K-fold cross-validation: the fit's call refitted without each fold's
## rows, which are then predicted (rstanarm's kfold()).

#' K-fold cross-validation
#'
#' `kfold()` (the generic of 'loo') refits the model `K` times, each time
#' without the rows of one fold, by evaluating the fit's call again with
#' `data` cut to the other rows (its other arguments as they were, run
#' silently), and scores each left-out row by its log predictive density
#' under the fit that did not see it, \eqn{\log \frac{1}{S} \sum_s p(y_i \mid
#' \theta_s)}{log mean_s p(y_i | theta_s)} over up to 4,000 draws
#' ([log_lik.sgfit()]).  The value is the object 'rstanarm''s `kfold()`
#' returns: `elpd_kfold`, `p_kfold` (the full fit's log predictive
#' density minus `elpd_kfold`) and `kfoldic` per row and in all, which
#' [loo::loo_compare()] compares with other fits' `loo()` or `kfold()`.  A
#' mixed model's left-out rows of a group no refit saw get that group's
#' effects drawn from the groups' distribution (`allow_new_levels`).
#'
#' @param x a fit of a formula with `data`.
#' @param K the number of folds (ignored when `folds` is given).
#' @param folds `NULL` for `K` folds drawn at random, as many rows in each
#'   as can be (`loo::kfold_split_random()`, R's generator), or each row's
#'   fold, integers 1 to K (e.g. `loo::kfold_split_grouped()`), for the rows
#'   the fit used.
#' @param save_fits whether to return the `K` fits (element `fits`, a list of
#'   lists with the fit and the left-out rows).
#' @param cores the folds are refitted on this many cores (forked workers).
#' @param ... unused.
#' @return An object of class `kfold` ('loo').
#' @examples
#' \donttest{
#' data(Pima.tr, package = "MASS")
#' fit <- sgfs(type ~ glu + bmi, data = Pima.tr, n_iter = 2000, batch_size = 50, seed = 1)
#' if (requireNamespace("loo", quietly = TRUE)) {
#'     set.seed(1)
#'     loo::kfold(fit, K = 5)
#' }
#' }
#' @exportS3Method loo::kfold
kfold.sgfit <- function(x, K = 10, folds = NULL, save_fits = FALSE,
                        cores = getOption("mc.cores", 1L), ...) {
    no_dots(...)
    info <- sgfit_info(x)
    save_fits <- check_flag(save_fits, "save_fits")
    cores <- check_count(cores, "cores", 1L)
    env <- if (!is.null(info$terms)) environment(info$terms)
    data <- if (!is.null(env) && !is.null(info$call$data)) eval(info$call$data, env)
    if (!is.data.frame(data))
        stop("kfold() refits the model's call on each fold's rows: it needs a fit of a ",
             "formula with a data frame `data` (a matrix fit: cut x and y yourself and compare ",
             "log_lik(fit_k, newdata = , y = ) on the rows left out)", call. = FALSE)
    used <- setdiff(seq_len(nrow(data)), as.integer(info$na.action))
    N <- length(used)
    if (N != info$spec$N)
        stop("kfold(): the fit's data have changed since the fit (", N, " rows used now, ",
             info$spec$N, " then)", call. = FALSE)
    if (is.null(folds)) {
        K <- check_count(K, "K", 2L, N)
        folds <- loo::kfold_split_random(K, N)
    } else {
        if (!is.numeric(folds) || length(folds) != N || anyNA(folds) || any(folds != round(folds)) ||
            any(folds < 1))
            stop_arg("folds", sprintf("must give each of the fit's %d rows a fold, 1 to K", N))
        K <- length(unique(folds))
        if (!setequal(folds, seq_len(K))) stop_arg("folds", "must use every fold 1 to K")
    }
    call <- info$call
    for (a in c("progress", "verbose"))
        if (is.null(call[[a]]) && is.null(call$refresh)) call[[a]] <- FALSE
    mixed <- !is.null(info$random)
    one_fold <- function(k) {
        out <- which(folds == k)
        call$data <- data[used[-out], , drop = FALSE]
        fit_k <- eval(call, env)
        ll <- log_lik.sgfit(fit_k, newdata = data[used[out], , drop = FALSE],
                            allow_new_levels = mixed)
        list(elpd = apply(ll, 2L, log_mean_exp), rows = out, S = nrow(ll),
             fit = if (save_fits) fit_k)
    }
    parts <- if (cores > 1L) parallel::mclapply(seq_len(K), one_fold, mc.cores = cores,
                                                mc.set.seed = FALSE)
             else lapply(seq_len(K), one_fold)
    failed <- vapply(parts, inherits, NA, what = "try-error")
    if (any(failed)) stop("kfold(): the refit of fold ", which(failed)[1L], " failed: ",
                          parts[[which(failed)[1L]]], call. = FALSE)
    elpd <- double(N)
    for (p in parts) elpd[p$rows] <- p$elpd
    lpd <- apply(log_lik.sgfit(x), 2L, log_mean_exp)
    pointwise <- cbind(elpd_kfold = elpd, p_kfold = lpd - elpd, kfoldic = -2 * elpd)
    est <- colSums(pointwise)
    se <- sqrt(N * apply(pointwise, 2L, stats::var))
    out <- list(estimates = cbind(Estimate = est, SE = se), pointwise = pointwise,
                elpd_kfold = est[["elpd_kfold"]], se_elpd_kfold = se[["elpd_kfold"]],
                p_kfold = est[["p_kfold"]], se_p_kfold = se[["p_kfold"]])
    rownames(out$estimates) <- colnames(pointwise)
    if (save_fits) out$fits <- lapply(parts, function(p) list(fit = p$fit, omitted = p$rows))
    structure(out, class = c("kfold", "loo"), K = K, dims = c(parts[[1L]]$S, N),
              model_name = deparse1(substitute(x)))
}

## log(mean(exp(v))) without overflow
log_mean_exp <- function(v) {
    m <- max(v)
    m + log(mean(exp(v - m)))
}
