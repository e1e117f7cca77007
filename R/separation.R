## Separated levels, where the curvature at the mode misdescribes the
## posterior, and the metric widened along them.
##
## A level of a factor (the rows of a 0/1 column, or the rows a group of
## one-hot columns leaves out: the reference level) whose rows all have the
## same binomial response (all 0 or all 1), or all zero counts in a poisson
## regression, is separated: along the direction that moves only those
## rows' linear predictor the likelihood is monotone, and on one side only
## the prior bounds the posterior.  The mode sits where the likelihood's
## soft wall meets the prior; the curvature there describes the wall, not
## the long side where the mass is.  On Covertype the soil level 7 (102
## rows, all pine) has a posterior sd 2.7 times the Laplace approximation's,
## its mean 3.4 of those sd from the mode, and the reference soil level
## (2,980 rows, none pine) moves the 39 other soil coefficients 1.2-1.6
## times further than the approximation allows.  A sampler in the metric
## of the mode moves along such a direction 2.7^2 = 7 times slower than
## along the others, and they set the length of the run.
##
## For each separated direction v (internal coordinates), the exact
## posterior along the line through the mode (only the level's rows and the
## prior change along it) gives by quadrature the conditional variance s^2.
## Where s^2 exceeds the Laplace approximation's 1 / (v'Hv) by more than
## 10 %, the metric's curvature is lowered along v by the rank-one update
##     H' = H - (v'Hv - 1 / s^2) (Hv)(Hv)' / (v'Hv)^2,
## which sets v'H'v = 1 / s^2, keeps H' positive definite (in H's own
## coordinates it scales the direction H^(1/2) v by 1 / (v'Hv s^2) and no
## other) and leaves every direction H-conjugate to v as it was.  Only the
## metric changes: the mode, the curvature of the control variates (SGLD-CV)
## and of OSGFS, and the dispersed starts keep H.  Dense metrics only
## (D <= dense_limit): beyond, the metric stays diagonal.

## The separated levels of a binomial or poisson design, each
## list(name, column, reference): a 0/1 column of x (reference FALSE), or,
## with an intercept, the rows a group of 0/1 columns with disjoint rows
## leaves out (reference TRUE: a factor's reference level).  A wrong
## grouping only proposes a direction that is then measured
## (widened_metric), never a wrong metric.
separated_levels <- function(x, y, family, icpt) {
    if (!(family %in% c("binomial", "poisson")) || nrow(x) < 2L) return(NULL)
    p <- ncol(x)
    indicator <- vapply(seq_len(p), function(j) {
        v <- x[, j]
        r <- range(v)
        r[1L] >= 0 && r[2L] <= 1 && all(v == 0 | v == 1)
    }, FALSE)
    indicator[icpt] <- FALSE
    separated <- function(rows) {
        if (!length(rows)) return(FALSE)
        r <- range(y[rows])
        r[2L] == 0 || family == "binomial" && r[1L] == 1
    }
    out <- list()
    for (j in which(indicator)) {
        if (separated(which(x[, j] == 1)))
            out[[length(out) + 1L]] <- list(name = colnames(x)[j], column = j, reference = FALSE)
    }
    if (length(icpt)) for (g in indicator_groups(x, indicator)) {
        if (separated(which(level_count(x, g) == 0)))
            out[[length(out) + 1L]] <- list(name = reference_name(colnames(x)[g]), column = g,
                                            reference = TRUE)
    }
    if (length(out)) out
}

## Groups of 0/1 columns with disjoint rows, a factor's dummies: the
## columns of one term of a model matrix (its "assign" attribute) when
## their rows are disjoint, or without it (the matrix interface) runs of
## adjacent columns with disjoint rows, as one-hot encodings lay them out
indicator_groups <- function(x, indicator) {
    assign <- attr(x, "assign")
    if (!is.null(assign) && length(assign) == ncol(x)) {
        groups <- split(which(indicator), assign[indicator])
        return(Filter(function(g) length(g) >= 2L && max(level_count(x, g)) <= 1, groups))
    }
    groups <- list()
    current <- integer(0)
    covered <- NULL
    for (j in seq_len(ncol(x))) {
        v <- indicator[j]
        rows <- if (v) x[, j] == 1
        if (v && length(current) && !any(covered & rows)) {
            current <- c(current, j)
            covered <- covered | rows
            next
        }
        if (length(current) >= 2L) groups[[length(groups) + 1L]] <- current
        current <- if (v) j else integer(0)
        covered <- rows
    }
    if (length(current) >= 2L) groups[[length(groups) + 1L]] <- current
    groups
}

## the number of the columns g that are 1 in each row
level_count <- function(x, g) {
    s <- 0
    for (j in g) s <- s + x[, j]
    s
}

## "the reference level of soil2, ..., soil40"
reference_name <- function(names) {
    shown <- if (length(names) > 3L) c(names[1L], "...", names[length(names)]) else names
    paste("the reference level of", paste(shown, collapse = ", "))
}

## the rows of a level (1-based) from the engine's internal design: a 0/1
## column's internal value is (x - center) / scale, scale > 0
level_rows <- function(level, design, xt) {
    mid <- (0.5 - design$center[level$column]) / design$scale[level$column]
    if (!level$reference) return(which(xt[level$column, ] > mid))
    hit <- logical(ncol(xt))
    for (k in seq_along(mid)) hit <- hit | xt[level$column[k], ] > mid[k]
    which(!hit)
}

## the level's direction in internal coordinates: the change of theta that
## moves the level's rows' linear predictor by 1 and no other row's
level_direction <- function(level, design) {
    dir <- double(nrow(design$M))
    if (level$reference) {
        dir[design$intercept] <- 1
        dir[level$column] <- -1
    } else dir[level$column] <- 1
    solve(design$M, dir)
}

## The variance of the density exp(f(t)) on the line, f's maximum at t = 0
## (the mode), `sd0` the Laplace approximation's sd there: the bracket where
## f is within 40 of f(0), found by doubling, then a grid of 801 points
line_variance <- function(f, sd0) {
    f0 <- f(0)
    edge <- function(sign) {
        t <- sign * sd0
        for (k in seq_len(60L)) {
            v <- f(t)
            if (!is.finite(v) || v < f0 - 40) return(t)
            t <- 2 * t
        }
        t
    }
    t <- seq(edge(-1), edge(1), length.out = 801L)
    lw <- vapply(t, f, 0) - f0
    w <- exp(ifelse(is.finite(lw), lw, -Inf))
    w <- w / sum(w)
    m <- sum(w * t)
    sum(w * (t - m)^2)
}

## The metric's Cholesky factor widened along the run's separated levels,
## and the levels widened (name, rows, sd ratio: the exact conditional sd
## over the Laplace approximation's); NULL when none is
widened_metric <- function(run, lap) {
    design <- run$design
    levels <- design$separated
    if (!length(levels) || is.null(lap$U)) return(NULL)
    spec <- run$spec
    theta <- lap$mode
    H <- lap$H
    done <- list()
    for (level in levels) {
        rows <- level_rows(level, design, spec$xt)
        if (!length(rows)) next
        v <- level_direction(level, design)
        sub <- slice_rows(spec, rows)
        sub$batch_size <- length(rows)
        f <- function(t) {
            th <- theta + t * v
            .Call(C_sgfs_model_loglik, sub, th)$loglik + log_prior(th, spec)$value
        }
        Hv <- drop(H %*% v)
        a <- sum(v * Hv)
        s2 <- line_variance(f, 1 / sqrt(a))
        if (!is.finite(s2) || s2 * a <= 1.21) next       # under 10 % wider: as it is
        H <- H - (a - 1 / s2) * tcrossprod(Hv) / a^2
        done[[length(done) + 1L]] <- data.frame(level = level$name, rows = length(rows),
                                                sd_ratio = sqrt(s2 * a))
    }
    if (!length(done)) return(NULL)
    list(U = chol(H), levels = do.call(rbind, done))
}
