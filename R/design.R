## The design as the engine sees it: predictors centred and scaled (and a
## gaussian response too) when standardize = TRUE, and the linear map between
## internal and original parameters, theta_orig = M theta_int + shift.

## refuses predictors whose standard deviations `sds` overflow
check_spread <- function(sds, names) {
    huge <- which(!is.finite(sds))
    if (length(huge))
        stop_arg("x", sprintf("has column(s) %s whose spread overflows (values near 1e154 or more): rescale them",
                              paste0("'", names[huge], "'", collapse = ", ")))
}

## the compressed-row copy is made when it stores at most this fraction of
## the N x P entries (the option sgfs.sparse_fill, for the tests: 0 turns
## it off)
sparse_fill <- function() getOption("sgfs.sparse_fill", 0.5)

prepare_design <- function(x, y, family, standardize, sigma, levels = NULL) {
    p <- ncol(x)
    names_x <- colnames(x)
    icpt <- which(names_x == "(Intercept)")
    if (length(icpt) > 1L) stop_arg("x", "has more than one intercept column")
    ## column summaries one column at a time: no N x P temporaries (apply()
    ## copies x whole)
    column <- function(f, type = 0) vapply(seq_len(p), function(j) f(x[, j]), type)
    ## without an "(Intercept)" column, a column of ones is the intercept
    if (!length(icpt)) icpt <- utils::head(which(column(function(v) all(v == 1), FALSE)), 1L)
    sds <- column(stats::sd)
    check_spread(sds, names_x)
    const <- setdiff(which(!(sds > 0)), icpt)
    if (length(const))
        stop_arg("x", sprintf("has constant column(s) %s: remove them%s",
                              paste0("'", names_x[const], "'", collapse = ", "),
                              if (length(icpt)) " (the intercept is already in the model)" else ""))
    has_icpt <- length(icpt) == 1L
    gaussian <- family$family == "gaussian"
    center <- rep(0, p)
    scale <- rep(1, p)
    y_center <- 0
    y_scale <- 1
    if (standardize) {
        if (has_icpt) {
            center <- colMeans(x)
            scale <- sds
        } else {
            scale <- sqrt(column(function(v) mean(v^2)))
        }
        center[icpt] <- 0
        scale[icpt] <- 1
        if (gaussian) {
            y_center <- if (has_icpt) mean(y) else 0
            y_scale <- if (has_icpt) stats::sd(y) else sqrt(mean(y^2))
            if (!(y_scale > 0)) stop_arg("y", "is constant")
            if (!is.finite(y_scale))
                stop_arg("y", "has a spread that overflows (values near 1e154 or more): rescale it")
        }
    }
    ## the engine's copy: P x N, one example per column
    xt <- .Call(C_sgfs_design_copy, x, as.double(center), as.double(scale))
    ys <- (y - y_center) / y_scale

    sample_sigma <- gaussian && is.null(sigma)
    if (sample_sigma && "log_sigma" %in% names_x)
        stop_arg("x", "has a predictor named 'log_sigma', the name of the gaussian model's ",
                 "log noise sd: rename the predictor (or fix sigma)")
    if (family$family == "categorical")
        return(categorical_design(xt, ys, p, icpt, names_x, center, scale, levels))
    D <- p + sample_sigma
    M <- diag(c(y_scale / scale, rep(1, sample_sigma)), D)
    shift <- double(D)
    if (has_icpt) {
        M[icpt, seq_len(p)[-icpt]] <- -y_scale * center[-icpt] / scale[-icpt]
        shift[icpt] <- y_center
    }
    par_names <- names_x
    if (sample_sigma) {
        shift[D] <- log(y_scale)
        par_names <- c(par_names, "log_sigma")
    }
    mpar <- if (!gaussian) 0 else if (sample_sigma) NA_real_ else log(sigma / y_scale)
    ## the one-pass minibatch score's compressed rows (src/sparse_rows.c),
    ## where they keep at most half the entries (binomial and poisson GLMs)
    rows <- if (family$family %in% c("binomial", "poisson"))
        .Call(C_sgfs_sparse_rows, x, as.double(center), as.double(scale), sparse_fill())
    list(xt = xt, rows = rows, y = as.double(ys), D = D, p = p, n_coef = p, intercept = icpt,
         separated = separated_levels(x, y, family$family, icpt),
         x_names = names_x, par_names = par_names, M = M, shift = shift,
         mpar = as.double(mpar), center = center, scale = scale,
         y_center = y_center, y_scale = y_scale)
}

## categorical(): one coefficient vector per non-reference class, each
## mapped between scales like a GLM's; parameters named level:predictor
categorical_design <- function(xt, y, p, icpt, names_x, center, scale, levels) {
    K1 <- length(levels) - 1L
    Mp <- diag(1 / scale, p)
    if (length(icpt)) Mp[icpt, seq_len(p)[-icpt]] <- -center[-icpt] / scale[-icpt]
    D <- p * K1
    list(xt = xt, y = as.double(y), D = D, p = p, n_coef = D,
         intercept = if (length(icpt)) icpt + p * (seq_len(K1) - 1L) else integer(0),
         x_names = names_x,
         par_names = paste0(rep(levels[-1L], each = p), ":", names_x),
         M = kronecker(diag(K1), Mp), shift = double(D), mpar = as.double(K1 + 1L),
         center = center, scale = scale, y_center = 0, y_scale = 1)
}

## (a network's M is a vector: the diagonal)
to_original <- function(theta, design) {
    M <- design$M
    if (is.matrix(theta))
        return((if (is.matrix(M)) theta %*% t(M) else theta * rep(M, each = nrow(theta))) +
               rep(design$shift, each = nrow(theta)))
    (if (is.matrix(M)) drop(M %*% theta) else M * theta) + design$shift
}

## (M is triangular with a non-zero diagonal: it is solved whatever its
## condition number, which predictors on scales far from 1 make tiny)
to_internal <- function(theta, design) {
    M <- design$M
    if (is.matrix(theta)) {
        centred <- theta - rep(design$shift, each = nrow(theta))
        return(if (is.matrix(M)) t(solve(M, t(centred), tol = 0)) else centred / rep(M, each = nrow(theta)))
    }
    if (is.matrix(M)) drop(solve(M, theta - design$shift, tol = 0)) else (theta - design$shift) / M
}
