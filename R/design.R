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

## per column of x (a double matrix, a dgCMatrix or a design file): the mean, the sd, the
## mean square and whether every entry is 1, in C (src/sparse_rows.c: the
## same numbers from either form; no N x P temporaries)
column_stats <- function(x) {
    if (is_design_file(x)) design_file_stats(x)[c("mean", "sd", "meansq", "ones", "checksum", "range")]
    else if (inherits(x, "dgCMatrix")) .Call(C_sgfs_column_stats_csc, x@i, x@p, x@x, x@Dim)
    else .Call(C_sgfs_column_stats, x)
}

## (lead: an implicit intercept before x's columns, src/design_copy.c)
prepare_design <- function(x, y, family, standardize, sigma, levels = NULL, lead = FALSE) {
    p <- ncol(x) + lead
    names_x <- c(if (lead) "(Intercept)", colnames(x))
    icpt <- which(names_x == "(Intercept)")
    if (length(icpt) > 1L) stop_arg("x", "has more than one intercept column")
    cols <- column_stats(x)
    if (lead) cols <- list(mean = c(1, cols$mean), sd = c(0, cols$sd),
                           meansq = c(1, cols$meansq), ones = c(TRUE, cols$ones),
                           checksum = c(0, cols$checksum))
    ## without an "(Intercept)" column, a column of ones is the intercept
    if (!length(icpt)) icpt <- utils::head(which(cols$ones), 1L)
    sds <- cols$sd
    check_spread(sds, names_x)
    const <- setdiff(which(!(sds > 0)), icpt)
    if (length(const))
        stop_arg("x", sprintf("has constant column(s) %s: remove them%s",
                              paste0("'", names_x[const], "'", collapse = ", "),
                              if (length(icpt)) " (the intercept is already in the model)" else ""))
    has_icpt <- length(icpt) == 1L
    entry <- family_entry(family)
    if (entry$ordinal && has_icpt)
        stop_arg("x", sprintf("has an intercept ('%s'), which cumulative()'s cutpoints take the ",
                              names_x[icpt]), "place of: remove it")
    aux <- entry$aux
    scaled <- isTRUE(aux$location_scale)
    center <- rep(0, p)
    scale <- rep(1, p)
    y_center <- 0
    y_scale <- 1
    if (standardize) {
        if (has_icpt || entry$ordinal) {
            center <- cols$mean
            scale <- sds
        } else {
            scale <- sqrt(cols$meansq)
        }
        center[icpt] <- 0
        scale[icpt] <- 1
        if (scaled) {
            y_center <- if (has_icpt) mean(y) else 0
            y_scale <- if (has_icpt) stats::sd(y) else sqrt(mean(y^2))
            if (!(y_scale > 0)) stop_arg("y", "is constant")
            if (!is.finite(y_scale))
                stop_arg("y", "has a spread that overflows (values near 1e154 or more): rescale it")
        }
    }
    ## the engine's data: the compressed rows or the dense copy, shared with
    ## a live fit on the same data (R/data-access.R); a design file's only
    ## with fits on that file (the same numbers in memory are another backend)
    data_key <- list(N = nrow(x), lead = lead, center = center, scale = scale, sd = sds,
                     checksum = cols$checksum, precision = data_precision(nrow(x), ncol(x)),
                     fill = sparse_fill(),
                     file = if (is_design_file(x)) x$path,
                     in_place = reads_in_place(x),
                     shuffled = shuffled_copy(nrow(x)))
    data <- shared_data(data_key)
    if (is.null(data)) data <- engine_data(x, center, scale, lead = lead)
    ys <- (y - y_center) / y_scale
    columns <- list(mean = cols$mean, sd = sds)

    sample_aux <- !is.null(aux) && is.null(sigma)
    if (sample_aux && aux$par %in% names_x)
        stop_arg("x", sprintf("has a predictor named '%s', the name of the %s model's log %s: ",
                              aux$par, family$family, aux$name),
                 "rename the predictor", if (scaled) " (or fix sigma)")
    if (entry$ordinal)
        return(c(ordinal_design(ys, p, names_x, center, scale, levels, family),
                 list(data = data, data_key = data_key, columns = columns)))
    if (entry$several)
        return(c(categorical_design(ys, p, icpt, names_x, center, scale, levels),
                 list(data = data, data_key = data_key, columns = columns,
                      separated = separated_classes(x, ys, levels, icpt, lead))))
    D <- p + sample_aux
    C <- matrix(0, has_icpt, D)
    shift <- double(D)
    if (has_icpt) {
        C[1L, seq_len(p)[-icpt]] <- -y_scale * center[-icpt] / scale[-icpt]
        shift[icpt] <- y_center
    }
    M <- linear_map(c(y_scale / scale, rep(1, sample_aux)), icpt, C)
    par_names <- names_x
    if (sample_aux) {
        shift[D] <- log(y_scale)
        par_names <- c(par_names, aux$par)
    }
    mpar <- c(if (is.null(aux)) 0 else if (sample_aux) NA_real_ else log(sigma / y_scale),
              if (!is.null(entry$settings)) entry$settings(family))
    list(data = data, data_key = data_key, columns = columns, y = as.double(ys), D = D, p = p,
         n_coef = p,
         intercept = icpt,
         separated = if (entry$separable %in% c("bounds", "zero"))
                         separated_levels(x, y, entry$separable == "bounds", icpt, lead),
         x_names = names_x, par_names = par_names, M = M, shift = shift,
         mpar = as.double(mpar), center = center, scale = scale,
         y_center = y_center, y_scale = y_scale)
}

## categorical(): one coefficient vector per non-reference class, each
## mapped between scales like a GLM's; parameters named level:predictor
categorical_design <- function(y, p, icpt, names_x, center, scale, levels) {
    K1 <- length(levels) - 1L
    D <- p * K1
    ## one block per class: its intercept's row holds its slopes' centring
    at <- if (length(icpt)) icpt + p * (seq_len(K1) - 1L) else integer(0)
    C <- matrix(0, length(at), D)
    for (k in seq_along(at))
        C[k, p * (k - 1L) + seq_len(p)[-icpt]] <- -center[-icpt] / scale[-icpt]
    list(y = as.double(y), D = D, p = p, n_coef = D,
         intercept = if (length(icpt)) icpt + p * (seq_len(K1) - 1L) else integer(0),
         x_names = names_x,
         par_names = paste0(rep(levels[-1L], each = p), ":", names_x),
         M = linear_map(rep(1 / scale, K1), at, C), shift = double(D),
         mpar = as.double(K1 + 1L),
         center = center, scale = scale, y_center = 0, y_scale = 1)
}

## cumulative(): the coefficients, then K - 1 cutpoints sampled as the
## stick-breaking logits v of the class probabilities at the predictors'
## means (src/model_cumulative.c), the cutpoints zeta_k = F^-1(1 - s_k) of
## the centred predictors.  The linear map acts on (beta, zeta) once the
## v are mapped to zeta (cutpoints_of_v()): the slopes are a GLM's, the
## cutpoints of the original predictors zeta_k + sum_j (m_j / s_j) beta_j
## (eta's centring moves to them); parameters named "1|2", ... (polr's)
ordinal_design <- function(y, p, names_x, center, scale, levels, family) {
    K <- length(levels)
    D <- p + K - 1L
    at <- p + seq_len(K - 1L)
    C <- matrix(0, K - 1L, D)
    C[, seq_len(p)] <- rep(center / scale, each = K - 1L)
    ## the start: the cutpoints of the classes' frequencies
    freq <- tabulate(as.integer(y) + 1L, K) + 0.5
    list(y = as.double(y), D = D, p = p, n_coef = p, intercept = integer(0),
         x_names = names_x,
         par_names = c(names_x, paste(levels[-K], levels[-1L], sep = "|")),
         M = linear_map(c(1 / scale, rep(1, K - 1L)), at, C), shift = double(D),
         cutpoints = list(which = at, link = family$link),
         start = c(double(p), v_of_probabilities(freq / sum(freq))),
         mpar = as.double(c(family_entry(family)$settings(family), K)),
         center = center, scale = scale, y_center = 0, y_scale = 1)
}

## the stick-breaking logits of class probabilities p (K, summing to 1)
v_of_probabilities <- function(p) {
    K <- length(p)
    left <- rev(cumsum(rev(p)))                       # 1, 1 - p_1, ...
    stats::qlogis(p[-K] / left[-K])
}

## v (draws in rows, K - 1 columns) to the cutpoints zeta (and back): log
## s_k = -sum_{j <= k} log(1 + e^v_j), zeta_k = F^-1(1 - s_k)
cutpoints_of_v <- function(V, link) {
    V <- as.matrix(V)
    sp <- ifelse(V > 0, V + log1p(exp(-V)), log1p(exp(V)))
    log_s <- -t(apply(sp, 1L, cumsum))
    if (ncol(V) == 1L) log_s <- t(log_s)
    q <- if (link == "logit") stats::qlogis else stats::qnorm
    matrix(q(log_s, lower.tail = FALSE, log.p = TRUE), nrow(V))
}

v_of_cutpoints <- function(Z, link) {
    Z <- as.matrix(Z)
    F <- if (link == "logit") stats::plogis else stats::pnorm
    log_s <- F(Z, lower.tail = FALSE, log.p = TRUE)
    step <- log_s - cbind(0, log_s[, -ncol(Z), drop = FALSE])   # log(1 - phi_k) < 0
    if (any(!(step < 0)))
        stop_arg("init", "has cutpoints that are not increasing")
    log_phi <- log(-expm1(step))
    matrix(log_phi - step, nrow(Z))
}

## theta (a vector, or draws in rows) with an ordinal model's v replaced by
## its cutpoints; other models' as they are
with_cutpoints <- function(theta, design) {
    cp <- design$cutpoints
    if (is.null(cp)) return(theta)
    if (is.matrix(theta))
        theta[, cp$which] <- cutpoints_of_v(theta[, cp$which, drop = FALSE], cp$link)
    else theta[cp$which] <- cutpoints_of_v(matrix(theta[cp$which], 1L), cp$link)
    theta
}

## The linear map between the internal and the original parameters,
## theta_orig = M theta_int + shift, with M = diag(a) + sum_r e_at[r] C[r, ]:
## the diagonal a (the predictors' and the response's scales) and, for each
## intercept at[r] (one per class of a categorical model; none for a
## network), the row C[r, ] of its slopes' centring, zero at every
## intercept.  Never a D x D matrix: D can be 10^5 (a wide sparse design).
linear_map <- function(a, at = integer(0), C = matrix(0, length(at), length(a)))
    list(a = as.double(a), at = as.integer(at), C = C)

## M with `extra` identity coordinates appended (a horseshoe's scales)
map_extend <- function(M, extra)
    linear_map(c(M$a, rep(1, extra)), M$at, cbind(M$C, matrix(0, nrow(M$C), extra)))

## M of the coordinates k (a map without intercept rows: a network's)
map_subset <- function(M, k) {
    if (length(M$at)) stop("internal error: only a diagonal map restricts")
    linear_map(M$a[k])
}

## M^-1 Z for the columns of Z (D x S): the intercepts' rows are solved last
map_solve <- function(M, Z) {
    X <- Z / M$a
    if (length(M$at)) X[M$at, ] <- (Z[M$at, , drop = FALSE] - M$C %*% X) / M$a[M$at]
    X
}

## theta (a vector, or draws in the rows of a matrix) to the original scale
to_original <- function(theta, design) {
    M <- design$M
    theta <- with_cutpoints(theta, design)
    if (is.matrix(theta)) {
        S <- nrow(theta)
        out <- theta * rep(M$a, each = S)
        if (length(M$at)) out[, M$at] <- out[, M$at] + .Call(C_sgfs_map_rows, theta, M$C)
        return(out + rep(design$shift, each = S))
    }
    out <- M$a * theta
    if (length(M$at)) out[M$at] <- out[M$at] + .Call(C_sgfs_map_rows, matrix(theta, 1L), M$C)
    out + design$shift
}

## (M is triangular up to a permutation with a non-zero diagonal: it is
## solved whatever its condition number, which predictors on scales far
## from 1 make tiny)
to_internal <- function(theta, design) {
    if (is.matrix(theta)) return(t(solve_draws(t(theta) - design$shift, design)))
    drop(solve_draws(matrix(theta - design$shift), design))
}

## the internal coordinates of Z (D x S: draws in columns, on the original
## scale less the shift): M^-1 Z, and an ordinal model's cutpoints back to
## their v
solve_draws <- function(Z, design) {
    X <- map_solve(design$M, Z)
    cp <- design$cutpoints
    if (!is.null(cp))
        X[cp$which, ] <- t(v_of_cutpoints(t(X[cp$which, , drop = FALSE]), cp$link))
    X
}
