## The samplers' normal deviates (src/normal.c) against R's rnorm(), and
## their share of an SGLD iteration of a 784-400-400-10 network (D =
## 478,410; batch 100, random pixels, the step given): SGLD against SGA with
## the same minibatches and passes, whose difference is the noise's cost.
## Usage: Rscript bench/bench_normals.R [reps]   (writes bench/results/normals.md)
library(sgfs)
args <- commandArgs(trailingOnly = TRUE)
reps <- if (length(args)) as.integer(args[1]) else 3L
n <- 1e7
time_of <- function(draw) min(replicate(reps, system.time(draw(n))[["elapsed"]]))
set.seed(1)
t_r <- time_of(stats::rnorm)
t_e <- time_of(sgfs:::engine_rnorm)

set.seed(2)
N <- 2000
x <- matrix(runif(N * 784), N, 784)
y <- factor(sample(0:9, N, TRUE))
iters <- 300L
net <- function(f, ...) {
    set.seed(3)
    t0 <- proc.time()[["elapsed"]]
    f(x, y, family = categorical(), model = mlp(c(400, 400), "relu"), batch_size = 100L,
      n_iter = iters, burnin = iters - 1L, init = NULL, progress = FALSE, ...)
    (proc.time()[["elapsed"]] - t0) / iters
}
t_sgld <- min(replicate(reps, net(sgld, stepsize = 1e-6)))
t_sga <- min(replicate(reps, net(sga, stepsize = 1e-6)))
D <- 784 * 400 + 400 + 400 * 400 + 400 + 400 * 9 + 9
blas <- extSoftVersion()[["BLAS"]]
lines <- c("# Normal deviates (bench/bench_normals.R)", "",
           sprintf("BLAS: %s. Best of %d runs; one process, side by side.", basename(blas), reps), "",
           "| what | time | per deviate / iteration |", "|---|---:|---:|",
           sprintf("| rnorm(%g) | %.3f s | %.1f ns |", n, t_r, 1e9 * t_r / n),
           sprintf("| engine_rnorm(%g) (ziggurat, xoshiro256++) | %.3f s | %.1f ns |", n, t_e,
                   1e9 * t_e / n),
           sprintf("| sgld(), 784-400-400-10 relu, batch 100 (D = %d) | | %.1f ms |", D, 1e3 * t_sgld),
           sprintf("| sga(), same passes, no noise | | %.1f ms |", 1e3 * t_sga), "",
           sprintf("rnorm / engine: %.2f x. The noise's share of an SGLD iteration: %.1f ms (%.0f %%), %.1f ns a parameter (R's rnorm would take about %.1f ms).",
                   t_r / t_e, 1e3 * (t_sgld - t_sga), 100 * (t_sgld - t_sga) / t_sgld,
                   1e9 * (t_sgld - t_sga) / D, 1e3 * D * t_r / n))
writeLines(lines)
dir.create(file.path("bench", "results"), showWarnings = FALSE, recursive = TRUE)
writeLines(lines, file.path("bench", "results", "normals.md"))
