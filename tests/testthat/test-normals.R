## The engine's normal deviates (src/normal.c): a ziggurat on xoshiro256++,
## one block per noise vector, seeded from two of R's uniforms.

test_that("a block is reproduced by set.seed() and takes two of R's uniforms", {
    set.seed(1)
    a <- engine_rnorm(1000)
    after <- runif(1)
    set.seed(1)
    b <- engine_rnorm(1000)
    expect_identical(a, b)
    set.seed(1)
    runif(2)
    expect_identical(runif(1), after)
    ## another length takes the same two uniforms; its first deviates are the same
    set.seed(1)
    expect_identical(engine_rnorm(10), a[1:10])
    expect_length(engine_rnorm(0), 0L)
    expect_error(engine_rnorm(-1), "'n'")
})

test_that("the deviates are standard normal: quantiles, moments and tails", {
    set.seed(2)
    z <- unlist(lapply(1:40, function(k) engine_rnorm(25000)))   # 10^6 in 40 blocks
    n <- length(z)
    ## Kolmogorov-Smirnov against pnorm; at 10^6 draws it detects a
    ## departure of 0.002 in the distribution function
    expect_gt(suppressWarnings(ks.test(z, "pnorm"))$p.value, 0.001)
    ## mean, variance, skewness and excess kurtosis within 4.5 standard errors
    expect_lt(abs(mean(z)) / sqrt(1 / n), 4.5)
    expect_lt(abs(var(z) - 1) / sqrt(2 / n), 4.5)
    expect_lt(abs(mean(z^3)) / sqrt(15 / n), 4.5)
    expect_lt(abs(mean(z^4) - 3) / sqrt(96 / n), 4.5)
    ## the tail beyond the ziggurat's base (r = 3.654) and far out, and the
    ## counts in 100 equiprobable cells (chi-squared, 99 df)
    for (cut in c(3.6541528853610088, 4.5)) {
        p <- 2 * pnorm(-cut)
        expect_lt(abs(mean(abs(z) > cut) - p) / sqrt(p * (1 - p) / n), 4.5)
    }
    cells <- tabulate(findInterval(pnorm(z), seq(0, 1, by = 0.01)), 100)
    expect_gt(pchisq(sum((cells - n / 100)^2 / (n / 100)), 99, lower.tail = FALSE), 0.001)
    ## both signs equally often at every size
    expect_lt(abs(mean(z > 0) - 0.5) / sqrt(0.25 / n), 4.5)
})

test_that("blocks and neighbours within a block are uncorrelated", {
    set.seed(3)
    blocks <- vapply(1:2000, function(k) engine_rnorm(50), double(50))
    ## consecutive blocks (each seeded from R's next two uniforms)
    r <- cor(as.vector(blocks[, -1]), as.vector(blocks[, -2000]))
    expect_lt(abs(r) * sqrt(length(blocks)), 4.5)
    ## consecutive deviates within a block
    r <- cor(as.vector(blocks[-1, ]), as.vector(blocks[-50, ]))
    expect_lt(abs(r) * sqrt(length(blocks)), 4.5)
    ## a block's first deviates across blocks: normal too
    expect_gt(suppressWarnings(ks.test(blocks[1, ], "pnorm"))$p.value, 0.001)
})
