## Separated levels, updated exactly.
##
## A level of a factor (the rows of a 0/1 column, or the rows a group of
## one-hot columns leaves out: the reference level) whose rows all have the
## same binomial response (all 0 or all 1), or all zero counts in a poisson
## regression, is separated: along the direction that moves only those
## rows' linear predictor the likelihood is monotone, and on one side only
## the prior bounds the posterior.  In a categorical model, a level without
## some class is separated along the line that moves that class's
## predictor of its rows (separated_classes()).  The mode sits where the likelihood's
## soft wall meets the prior; the curvature there describes the wall, not
## the long side where the mass is.  On Covertype the soil level 7 (102
## rows, all pine) has a posterior sd 2.7 times the Laplace approximation's,
## its mean 3.4 of those sd from the mode.  A stochastic-gradient sampler in
## the metric of the mode moves along it about 7 times slower than along
## the others (it set the run's length: ESS 478 against 1,315 for the next
## parameter), and its unadjusted steps are pushed off the wall.  Widening
## the metric along such a direction (tried: a rank-one update to the exact
## conditional variance) trades one for the other: the level mixed 7 times
## faster, but the wall, 7 times stiffer in the new coordinates, pushed the
## draws out by 0.2 posterior sd, and the pilot's step fell 3 times.
##
## So the engine updates each separated level exactly instead: every
## `every` iterations a Gibbs update along its line draws the position on
## it from the exact conditional density (only the level's rows and the
## prior change along the line), by slice sampling (src/separated.c).  It
## leaves the posterior invariant whatever the rule's step does.  Its width
## is the conditional sd along the line through the mode (quadrature), and
## `every` keeps its cost near `separated_share` of the iterations'.
## Samplers in the metric of the mode (metric = "mode", the default for
## GLMs: sgld, sgldcv, psgld, sghmc, sgnht, and sgfs and osgfs with control
## variates) get it; the papers' rules (metric = "identity") run as published.
##
## Nearly separated levels get the same exact updates: a 0/1 column whose
## rows hold at most `rare_responses` responses of one kind (ones or zeros
## of a binomial response, the counts' sum of a poisson one).  Along its line
## the likelihood is that of a few events, its curvature far from the
## mode's elsewhere on the line (a binomial level of n rows and one success:
## n p (1 - p) is n / 13 at the mode's p = 1 / n, up to n / 4 where the other
## coefficients move its rows' predictors to 0), and a rule tuned to the
## mode's curvature over-disperses there at large steps: a9a's f97 (13 rows,
## one success) came out 15 % too wide from SGFS's whitened steps of 0.4
## posterior sd, where the exact updates are exact at any step.

separated_share <- 0.15
rare_responses <- 3
## at most this many iterations between a level's updates, ten in the
## first run's 10,000 (levels of more rows than that allows are left to the
## rule: on its line an update that came less often would leave it nearly
## where it started)
separated_every_max <- 1000L

## The separated and nearly separated levels of a design whose responses
## are counts, y >= 0: all zero separates a level, and with `bounded` (a
## binomial response, y <= 1) so does all one.  Each level is
## list(name, column, reference, rows, minority): a 0/1 column
## of x (reference FALSE),
## or, with an intercept, the rows a group of 0/1 columns with disjoint rows
## leaves out (reference TRUE: a factor's reference level); rows are the
## level's (1-based), minority the rarer response's count (0: separated;
## a reference level only when separated).  x is a dense matrix, a dgCMatrix or a design file, read a column's
## non-zeros at a time.  A wrong grouping only proposes a direction that is
## then measured (the update along any line is exact), never a wrong one.
separated_levels <- function(x, y, bounded, icpt, lead = FALSE) {
    if (nrow(x) < 2L) return(NULL)
    ## (the scan runs on x's columns; with an implicit intercept before them,
    ## lead = TRUE, a level's column in the design is one further)
    has_icpt <- length(icpt) > 0L
    icpt <- icpt[icpt > lead] - lead
    ## a level of n1 rows whose responses sum to ys is separated when they
    ## are all 0, or (bounded) all 1 (up to `slack` in ys, for a sum known
    ## only up to rounding)
    separated <- function(n1, ys, slack = 0)
        n1 > 0 & (abs(ys) <= slack | bounded & abs(ys - n1) <= slack)
    ## the rarer response's count: ones or zeros (bounded), the counts' sum
    ## (otherwise); nearly separated up to rare_responses
    minority <- function(n1, ys) if (bounded) pmin(ys, n1 - ys) else ys
    ## which columns are 0/1, their ones and responses' sums: one scan in C
    ## (src/sparse_rows.c), a column's rows (its non-zeros) read only for the
    ## separated ones
    st <- indicator_stats(x, y)
    ## (a design file's 0/1 columns read in one pass per opened file, the
    ## rest never)
    if (is_design_file(x)) x <- file_indicator_columns(x)
    indicator <- st$indicator
    indicator[icpt] <- FALSE
    out <- list()
    rare <- st$ones > 0 & minority(st$ones, st$ysum) <= rare_responses + 1e-9
    for (j in which(indicator & (separated(st$ones, st$ysum) | rare)))
        out[[length(out) + 1L]] <- list(name = colnames(x)[j], column = j + lead,
                                        reference = FALSE, rows = column_nonzeros(x, j)$i,
                                        minority = minority(st$ones[j], st$ysum[j]))
    ## a group's reference level: the rows none of its (disjoint) columns
    ## holds, whose count and responses' sum follow from the columns', up to
    ## rounding (its rows are found and checked only when that sum is
    ## within rounding of separated: a wide design's runs of rare columns
    ## with disjoint rows are many, and their reference levels almost every
    ## row)
    total <- sum(y)                           # (y >= 0: its own absolute sum)
    if (has_icpt) for (g in indicator_groups(x, indicator)) {
        if (!separated(nrow(x) - sum(st$ones[g]), total - sum(st$ysum[g]), 1e-9 * (total + 1)))
            next
        rows <- which(level_count(x, g) == 0L)
        if (separated(length(rows), sum(y[rows])))
            out[[length(out) + 1L]] <- list(name = reference_name(colnames(x)[g]), column = g + lead,
                                            reference = TRUE, rows = rows, minority = 0)
    }
    if (length(out)) out
}

## which columns of x are 0/1, their counts of ones and the sums of y over
## their rows: one scan in C (src/sparse_rows.c)
indicator_stats <- function(x, y) {
    if (inherits(x, "dgCMatrix"))
        .Call(C_sgfs_indicator_stats_csc, x@i, x@p, x@x, x@Dim, as.double(y))
    else if (is_design_file(x)) file_indicator_stats(x, y)
    else .Call(C_sgfs_indicator_stats, x, as.double(y))
}

## The separated levels of a categorical() design (`classes` the response's
## K levels, y their codes 0..K-1, the first the reference), each a list(name, column,
## reference = FALSE, rows, class, coords): a 0/1 column of x (not an
## intercept) whose rows hold no row of some class c.  Along the line that
## moves only class c's linear predictor on those rows (its coefficient
## beta_jc; c > 0: class = c) the likelihood falls monotonically; with no
## row of the reference class, along the line that moves every class's
## predictor (all of beta_j.; class = 0) it rises; and with every row of
## one class c > 0, along class c's own.  coords: the line's coefficients
## in theta (P of them a class, P = ncol(x) + lead).  Factors' reference
## levels are not sought (a level none of a group's columns holds): their
## lines move every other level's coefficients.
separated_classes <- function(x, y, classes, icpt, lead = FALSE) {
    K <- length(classes)
    if (nrow(x) < 2L) return(NULL)
    icpt <- icpt[icpt > lead] - lead
    P <- ncol(x) + lead
    ## the 0/1 columns: one scan; then each one's rows, its classes counted
    ## (a design file's 0/1 columns read in one pass, as separated_levels()
    ## reads them)
    st <- indicator_stats(x, y)
    indicator <- st$indicator & st$ones > 0
    indicator[icpt] <- FALSE
    names_x <- colnames(x)
    if (is_design_file(x)) x <- file_indicator_columns(x)
    code <- as.integer(y) + 1L
    out <- list()
    for (j in which(indicator)) {
        rows <- column_nonzeros(x, j)$i
        n <- tabulate(code[rows], K)
        lines <- which(n == 0) - 1L                       # absent classes
        held <- which(n > 0)
        if (length(held) == 1L && held > 1L) lines <- c(lines, held - 1L)
        if (!length(lines)) next
        col <- j + lead
        for (cl in sort(lines))
            out[[length(out) + 1L]] <- list(
                name = if (cl == 0L) sprintf("%s (every class against %s)", names_x[j], classes[1L])
                       else paste0(classes[cl + 1L], ":", names_x[j]),
                column = col, reference = FALSE, rows = rows, class = cl,
                coords = if (cl == 0L) col + P * (seq_len(K - 1L) - 1L) else col + P * (cl - 1L))
    }
    if (length(out)) out
}

## column j's non-zero entries: their rows (1-based) i and values v (of a
## dense matrix or a dgCMatrix)
column_nonzeros <- function(x, j) {
    if (inherits(x, "dgCMatrix")) {
        k <- seq.int(x@p[j] + 1L, length.out = x@p[j + 1L] - x@p[j])
        v <- x@x[k]
        keep <- v != 0
        return(list(i = x@i[k][keep] + 1L, v = v[keep]))
    }
    v <- if (is.data.frame(x)) x[[j]] else x[, j]
    i <- unname(which(v != 0))
    list(i = i, v = v[i])
}

## Groups of 0/1 columns with disjoint rows, a factor's dummies: the
## columns of one term of a model matrix (its "assign" attribute) when
## their rows are disjoint, or without it (the matrix interface) runs of
## adjacent columns with disjoint rows, as one-hot encodings lay them out
indicator_groups <- function(x, indicator) {
    assign <- attr(x, "assign")
    if (!is.null(assign) && length(assign) == ncol(x)) {
        groups <- split(which(indicator), assign[indicator])
        return(Filter(function(g) length(g) >= 2L && max(level_count(x, g)) <= 1L, groups))
    }
    groups <- list()
    current <- integer(0)
    covered <- logical(nrow(x))     # (the current run's rows; cleared row by row,
    covered_rows <- list()          # not whole: a wide design has 10^5 columns)
    for (j in seq_len(ncol(x))) {
        rows <- if (indicator[j]) column_nonzeros(x, j)$i
        if (indicator[j] && length(current) && !any(covered[rows])) {
            current <- c(current, j)
            covered[rows] <- TRUE
            covered_rows[[length(covered_rows) + 1L]] <- rows
            next
        }
        if (length(current) >= 2L) groups[[length(groups) + 1L]] <- current
        current <- if (indicator[j]) j else integer(0)
        for (r in covered_rows) covered[r] <- FALSE
        covered[rows] <- TRUE
        covered_rows <- list(rows)
    }
    if (length(current) >= 2L) groups[[length(groups) + 1L]] <- current
    groups
}

## the number of the 0/1 columns g that are 1 in each row
level_count <- function(x, g)
    tabulate(unlist(lapply(g, function(j) column_nonzeros(x, j)$i)), nrow(x))

## "the reference level of soil2, ..., soil40"
reference_name <- function(names) {
    shown <- if (length(names) > 3L) c(names[1L], "...", names[length(names)]) else names
    paste("the reference level of", paste(shown, collapse = ", "))
}

## the levels' directions in internal coordinates (D x K): the changes of
## theta that move a level's rows' linear predictor by 1 and no other
## row's, M^-1 e (e: the level's column, or the intercept less a factor's
## columns for its reference level), all solved with one factorisation of M
level_directions <- function(levels, design) {
    D <- length(design$M$a)
    E <- vapply(levels, function(level) {
        dir <- double(D)
        if (!is.null(level$coords)) dir[level$coords] <- 1
        else if (level$reference) {
            dir[design$intercept] <- 1
            dir[level$column] <- -1
        } else dir[level$column] <- 1
        dir
    }, double(D))
    map_solve(design$M, matrix(E, D))
}

## The variance of the density exp(f(t)) on the line (f vectorised in t), its maximum at t = 0
## (the mode), `sd0` the Laplace approximation's sd there: the bracket where
## f is within 40 of f(0), found by doubling, then a grid of 201 points (the
## width only sets the slice sampler's efficiency, not its correctness)
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
    t <- seq(edge(-1), edge(1), length.out = 201L)
    lw <- f(t) - f0
    w <- exp(ifelse(is.finite(lw), lw, -Inf))
    w <- w / sum(w)
    m <- sum(w * t)
    sum(w * (t - m)^2)
}

## The engine's spec fields for the exact updates along the run's separated
## levels (src/separated.c), or NULL: their rows, directions, widths (the
## conditional sd along each line through the mode) and the iterations
## between updates, set so that they cost about `separated_share` of the
## iterations' gradients (batch_size plus `n_fixed` held rows), at most
## separated_every_max (the levels of fewest rows that allow it; `skipped`
## counts the others); and a data frame for the fit's settings (level,
## rows, sd_ratio: the conditional sd over the Laplace approximation's)
separated_spec <- function(run, lap, n_fixed = 0L) {
    design <- run$design
    spec <- run$spec
    if (!length(design$separated) || !is.null(design$hs) ||
        !(engine_entry(spec$model)$separable %in% c("bounds", "zero", "classes")) ||
        is.null(lap$H))
        return(NULL)
    rows <- lapply(design$separated, function(l) sort(engine_rows(spec, l$rows)))
    levels <- design$separated[lengths(rows) > 0L]
    rows <- rows[lengths(rows) > 0L]
    if (!length(levels)) return(NULL)
    D <- length(lap$mode)
    n_lp <- linear_predictors(spec)
    ## an update of the levels of m rows in all, k of them
    update_cost <- function(m, k) m * (spec$P * n_lp + 16) + 16 * k * D
    ## the levels whose updates come often enough: the fewest rows first,
    ## while every <= separated_every_max (an update costs its rows: a
    ## level of many rows as much as passes over the data; those are left
    ## to the rule, as without exact updates, not frozen on their lines)
    by_rows <- order(lengths(rows))
    fits <- separated_every(update_cost(cumsum(lengths(rows)[by_rows]), seq_along(by_rows)),
                            spec, n_fixed) <= separated_every_max
    keep <- sort(by_rows[seq_len(sum(cumprod(fits)))])
    skipped <- length(levels) - length(keep)
    levels <- levels[keep]
    rows <- rows[keep]
    if (!length(levels)) return(NULL)
    dirs <- level_directions(levels, design)
    ## (a categorical model's: the class whose predictor each line moves)
    classes <- vapply(levels, function(l) if (is.null(l$class)) 0L else as.integer(l$class), 0L)
    sd_ratio <- width <- double(length(levels))
    for (k in seq_along(levels)) {
        v <- dirs[, k]
        ## the log density along the line at the points t (vectorised: one
        ## .Call for the grid), the one the engine's updates sample
        f <- function(t) .Call(C_sgfs_line_logdens, spec, as.double(lap$mode), as.double(v),
                               as.integer(rows[[k]] - 1L), classes[k], as.double(t))
        a <- sum(v * (lap$H %*% v))
        width[k] <- sqrt(line_variance(f, 1 / sqrt(a)))
        sd_ratio[k] <- width[k] * sqrt(a)
    }
    cost <- update_cost(sum(lengths(rows)), length(rows))
    every <- separated_every(cost, spec, n_fixed)
    list(spec = c(list(separated_rows = as.integer(unlist(rows) - 1L),
                       separated_ptr = as.integer(c(0L, cumsum(lengths(rows)))),
                       separated_dir = as.double(dirs), separated_width = width,
                       separated_every = every),
                  if (n_lp > 1) list(separated_class = classes)),
         levels = data.frame(level = vapply(levels, `[[`, "", "name"), rows = lengths(rows),
                             minority = vapply(levels, function(l)
                                 if (is.null(l$minority)) 0 else l$minority, 0),
                             sd_ratio = sd_ratio, stringsAsFactors = FALSE),
         every = every, cost = cost, skipped = skipped)
}

## the iterations between the exact updates, whose flops `cost` then take
## about `separated_share` of an iteration's gradient ((batch_size + n_fixed)
## rows of P): a function of the rows held in every minibatch, so recomputed
## when a pilot's step changes them (the run then equals one at that step)
separated_every <- function(cost, spec, n_fixed) {
    per_iter <- (spec$batch_size + n_fixed) * spec$P * linear_predictors(spec)
    pmax(1L, as.integer(ceiling(cost / (separated_share * per_iter))))
}

## a row's linear predictors: a categorical model's K - 1 (mpar[1] = K), else 1
linear_predictors <- function(spec)
    if (isTRUE(engine_entry(spec$model)$several)) spec$mpar[1L] - 1 else 1
