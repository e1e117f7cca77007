## Rank-normalised split R-hat and bulk/tail effective sample sizes of
## Vehtari, Gelman, Simpson, Carpenter and Buerkner (2021, Bayesian Analysis
## 16, 667-718), in base R.  `x` is an iterations x chains matrix of one
## parameter's draws: N draws in each of M chains, S = N M in all.
##
## Split: each chain is cut into its first and second halves (the middle draw
## is dropped when N is odd), so 2M chains of floor(N / 2) draws; a trend
## within a chain then shows as a difference between chains.
##
## R-hat (eq. 3-4 of the paper): with chain means m_j, their mean m, and
## within-chain variances s_j^2 (divisor N - 1),
##     B = N / (M - 1) sum_j (m_j - m)^2,   W = mean_j s_j^2,
##     var+ = (N - 1) / N W + B / N,        R-hat = sqrt(var+ / W).
## Rank normalisation (eq. 14): z = qnorm((r - 3/8) / (S + 1/4)) with r the
## fractional rank (average of ties) of a draw among all S.  Folding: the
## draws' distance to their median, |x - median(x)|.  The rank R-hat is the
## larger of R-hat of the rank-normalised split draws (bulk) and of the
## rank-normalised split folded draws (tails).
##
## ESS (eq. 10-13): with acov_j(t) chain j's autocovariance at lag t (divisor
## N, by FFT), rho_0 = 1 and rho_t = 1 - (W - mean_j acov_j(t)) / var+.
## Geyer's initial positive sequence: the pair sums P_k = rho_2k + rho_2k+1,
## k = 0, 1, ..., are looked at up to the first one that is not positive,
## K (or up to the last pair within lag N - 3, K then), the ones before K
## made non-increasing (initial monotone sequence: P_k <- min(P_k, P_k-1)):
##     tau = -1 + 2 sum_{k < K} P_k + r,   ESS = S / max(tau, 1 / log10(S)),
## with r = rho_2K if P_K >= 0 and max(rho_2K, 0) otherwise, as in Stan and
## the paper's code.
## Bulk-ESS is the ESS of the rank-normalised split draws; tail-ESS is the
## smaller ESS of the split indicators I(x <= q05) and I(x <= q95), the
## quantiles of all draws (type 7).
##
## NA, never an error or a warning, for: draws with NA values; constant
## draws (range below .Machine$double.eps, after rank normalisation for the
## rank-based R-hat and bulk-ESS, which accept infinite draws as the
## ranks do); infinite draws in rhat_basic(), ess_basic() and ess_tail();
## R-hat of a single chain or of chains of one draw; ESS of chains of fewer
## than 3 draws.  Chains of 3 to 5 draws (or whose lag-1 pair sum is not
## positive) use tau = 2, as the paper's reference code (posterior) does.

## the 2M half-chains of an iterations x chains matrix
split_chains <- function(x) {
    x <- as.matrix(x)
    n <- nrow(x)
    if (n < 2L) return(x)
    h <- n %/% 2L
    cbind(x[seq_len(h), , drop = FALSE], x[(n - h + 1L):n, , drop = FALSE])
}

## normal scores of the fractional ranks over all draws, same shape
rank_normalise <- function(x) {
    x <- as.matrix(x)
    z <- x + 0
    ok <- !is.na(x)
    z[ok] <- normal_scores(x[ok])$z
    z
}

## normal scores z = qnorm((r - 3/8) / (S + 1/4)) of a vector without NA and
## its sorted values; `grid`, if given, is the scores of ranks 1..S (used
## when there are no ties).  A radix sort gives the ranks; ties are runs of
## equal sorted values and get the average rank (first + last) / 2.
normal_scores <- function(v, grid = NULL) {
    S <- length(v)
    o <- order(v, method = "radix")
    s <- v[o]
    zs <- if (is.null(grid)) stats::qnorm((seq_len(S) - 3 / 8) / (S + 1 / 4)) else grid
    if (anyDuplicated(s)) {
        ## runs of equal values: the sorted positions first..last, from the
        ## positions of the repeats (each run's second to last)
        rep_at <- which(duplicated(s))
        new_run <- c(TRUE, diff(rep_at) != 1L)
        first <- rep_at[new_run] - 1L
        last <- rep_at[c(new_run[-1L], TRUE)]
        len <- last - first + 1L
        zs[sequence(len, first)] <- rep(stats::qnorm(((first + last) / 2 - 3 / 8) / (S + 1 / 4)), len)
    }
    z <- numeric(S)
    z[o] <- zs
    list(z = z, sorted = s)
}

## draws that give NA: missing or infinite values, or (nearly) constant
conv_degenerate <- function(x) {
    if (anyNA(x)) return(TRUE)
    r <- range(x)
    !all(is.finite(r)) || r[2L] - r[1L] < .Machine$double.eps
}

## R-hat of a matrix of chains as they are (no splitting)
rhat_basic <- function(x) {
    x <- as.matrix(x)
    n <- nrow(x)
    m <- ncol(x)
    if (n < 2L || m < 2L || conv_degenerate(x)) return(NA_real_)
    means <- colMeans(x)
    W <- mean(colSums((x - rep(means, each = n))^2) / (n - 1))
    B_n <- stats::var(means)               # B / N
    sqrt(((n - 1) / n * W + B_n) / W)
}

## the autocovariances (divisor N) at lags 0..N-1 of the columns of `y`,
## averaged over each block of k consecutive columns (the chains of one
## series): an N x (ncol(y) / k) matrix.  By FFT, padded with zeros to at
## least 2N - 1 (no wrap-around).  Two real columns a, b of a block share
## one complex FFT: c = a + ib has autocovariance acov_a + acov_b + i (...),
## so the real part of the inverse FFT of |F(c)|^2, summed over the block,
## is the block's summed autocovariance.
block_autocovariances <- function(y, k = ncol(y)) {
    n <- nrow(y)
    nb <- ncol(y) %/% k
    L <- stats::nextn(2L * n - 1L)
    y <- y - rep(colMeans(y), each = n)
    if (k %% 2L) {                              # a zero column for each block
        padded <- matrix(0, n, nb * (k + 1L))
        padded[, rep((seq_len(nb) - 1L) * (k + 1L), each = k) + seq_len(k)] <- y
        y <- padded
    }
    h <- ncol(y) %/% 2L                          # complex columns
    odd <- seq.int(1L, 2L * h, 2L)
    zp <- matrix(0i, L, h)
    zp[seq_len(n), ] <- complex(real = y[, odd], imaginary = y[, odd + 1L])
    f <- stats::mvfft(zp)
    power <- Re(f)^2 + Im(f)^2
    per <- h %/% nb                             # complex columns per block
    in_block <- matrix(rep(seq_len(nb), each = per) == rep(seq_len(nb), each = h), h)
    spec <- power %*% in_block                  # L x nb
    ac <- stats::mvfft(matrix(as.complex(spec), L), inverse = TRUE)
    Re(ac[seq_len(n), , drop = FALSE]) / (as.double(L) * n * k)     # (integers overflow)
}

## ESS from the chains' mean autocovariances `acov_mean` (lags 0..N-1) and
## chain means, by the initial monotone sequence (see the header)
ess_from_acov <- function(acov_mean, means, n) {
    m <- length(means)
    S <- n * m
    W <- acov_mean[1L] * n / (n - 1)
    var_plus <- acov_mean[1L] + if (m > 1L) stats::var(means) else 0
    kmax <- (n - 4L) %/% 2L                     # last pair: lag 2k + 1 <= N - 3
    tau <- 2
    if (kmax >= 1L) {
        rho <- 1 - (W - acov_mean[seq_len(2L * kmax + 2L)]) / var_plus
        rho[1L] <- 1                            # lag 0 by definition
        P <- rho[c(TRUE, FALSE)] + rho[c(FALSE, TRUE)]   # P_0 .. P_kmax
        stop_at <- which(!(P > 0))
        K <- if (length(stop_at)) stop_at[1L] - 1L else kmax
        K <- min(K, kmax)
        if (K >= 1L) {
            even <- rho[2L * K + 1L]
            last <- if (P[K + 1L] >= 0 || even > 0) even else 0
            tau <- -1 + 2 * sum(cummin(P[seq_len(K)])) + last
        }
    }
    S / max(tau, 1 / log10(S))
}

## ESS of a matrix of chains as they are (no splitting or ranking)
ess_basic <- function(x) {
    x <- as.matrix(x)
    n <- nrow(x)
    if (n < 3L || conv_degenerate(x)) return(NA_real_)
    ess_from_acov(block_autocovariances(x)[, 1L], colMeans(x), n)
}

## rank-normalised split R-hat: the larger of bulk and folded (tail) R-hat
rhat_rank <- function(x) {
    x <- as.matrix(x)
    folded <- abs(x - stats::median(x))
    max(rhat_basic(rank_normalise(split_chains(x))),
        rhat_basic(rank_normalise(split_chains(folded))))
}

## bulk-ESS: ESS of the rank-normalised split chains
ess_bulk <- function(x) {
    x <- as.matrix(x)
    ess_basic(rank_normalise(split_chains(x)))
}

## tail-ESS: the smaller ESS of the split indicators of the 5% and 95% tails
ess_tail <- function(x) {
    x <- as.matrix(x)
    if (conv_degenerate(x)) return(NA_real_)
    q <- stats::quantile(x, c(0.05, 0.95), names = FALSE)
    min(ess_basic(split_chains(x <= q[1L]) + 0),
        ess_basic(split_chains(x <= q[2L]) + 0))
}

## type 7 quantiles of a sorted vector (quantile()'s arithmetic)
sorted_quantile <- function(s, p) {
    index <- 1 + (length(s) - 1) * p
    lo <- floor(index)
    h <- index - lo
    (1 - h) * s[lo] + h * s[ceiling(index)]
}

## median of a sorted vector (median()'s arithmetic)
sorted_median <- function(s) {
    n <- length(s)
    half <- (n + 1L) %/% 2L
    if (n %% 2L == 1L) s[half] else mean(s[half + 0:1])
}

## R-hat, bulk-ESS and tail-ESS of every parameter: `chains` is a list of
## iterations x parameters matrices (one per chain, the same dimensions and
## column names), or an mcmc.list.  One data frame row per parameter.
## The same numbers as rhat_rank(), ess_bulk() and ess_tail() column by
## column, sharing the sorting and doing the three ESS' FFTs at once.
convergence_table <- function(chains) {
    if (inherits(chains, "mcmc")) chains <- list(chains)
    if (!is.list(chains) || !length(chains))
        stop_arg("chains", "must be a list of iterations x parameters matrices")
    chains <- lapply(chains, function(ch) {
        if (is.data.frame(ch)) ch <- as.matrix(ch)
        if (inherits(ch, "mcmc")) ch <- matrix(unclass(ch), nrow(ch), dimnames = dimnames(ch))
        if (is.null(dim(ch))) ch <- matrix(ch, ncol = 1L)
        if (!is.numeric(ch) || length(dim(ch)) != 2L)
            stop_arg("chains", "must be a list of numeric iterations x parameters matrices")
        ch
    })
    d <- dim(chains[[1L]])
    nm <- colnames(chains[[1L]])
    for (ch in chains[-1L]) {
        if (!identical(dim(ch), d))
            stop_arg("chains", "must all have the same dimensions")
        if (!identical(colnames(ch), nm))
            stop_arg("chains", "must all have the same column names")
    }
    n <- d[1L]
    p <- d[2L]
    m <- length(chains)
    if (is.null(nm)) nm <- paste0("V", seq_len(p))
    ns <- if (n >= 2L) n %/% 2L else n          # draws per split chain
    k <- if (n >= 2L) 2L * m else m             # split chains
    S <- ns * k
    grid <- stats::qnorm((seq_len(S) - 3 / 8) / (S + 1 / 4))
    out <- matrix(NA_real_, p, 3L, dimnames = list(nm, c("rhat", "ess_bulk", "ess_tail")))
    for (j in seq_len(p)) {
        x <- vapply(chains, function(ch) as.double(ch[, j]), numeric(n))
        dim(x) <- c(n, m)
        if (anyNA(x)) next
        xs <- split_chains(x)
        bulk <- normal_scores(as.vector(xs), grid)
        zb <- bulk$z
        dim(zb) <- dim(xs)
        ## all draws, sorted (the split ones lack the middle draws for odd n)
        s <- if (n %% 2L == 0L) bulk$sorted else sort.int(as.vector(x), method = "radix")
        med <- sorted_median(s)
        if (is.finite(med)) {                   # else Inf - Inf folds to NaN: NA
            folded <- split_chains(abs(x - med))
            zf <- normal_scores(as.vector(folded), grid)$z
            dim(zf) <- dim(xs)
            out[j, "rhat"] <- max(rhat_basic(zb), rhat_basic(zf))
        }
        if (ns < 3L) next
        ## the ESS of the bulk and of the two tail indicators, from one FFT
        ## (the rank-normalised draws are constant only when all draws are
        ## equal, an indicator when its mean is 0 or 1)
        if (bulk$sorted[1L] == bulk$sorted[S]) next
        blocks <- zb
        tails <- !is.infinite(s[1L]) && !is.infinite(s[length(s)]) &&
            s[length(s)] - s[1L] >= .Machine$double.eps
        if (tails) {
            q <- sorted_quantile(s, c(0.05, 0.95))
            blocks <- cbind(zb, (xs <= q[1L]) + 0, (xs <= q[2L]) + 0)
        }
        ac <- block_autocovariances(blocks, k)
        means <- matrix(colMeans(blocks), k)
        ess <- vapply(seq_len(ncol(ac)), function(b) {
            if (b > 1L && mean(means[, b]) %in% c(0, 1)) return(NA_real_)
            ess_from_acov(ac[, b], means[, b], ns)
        }, 0)
        out[j, "ess_bulk"] <- ess[1L]
        if (tails) out[j, "ess_tail"] <- min(ess[2:3])
    }
    as.data.frame(out)
}
