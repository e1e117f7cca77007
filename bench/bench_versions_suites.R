## bench_peers.R and bench_sparse.R with two installed versions of sgfs in
## one run: ROUNDS rounds, each running both suites with the version before
## and then the version after (each suite its own R process, R_LIBS set to
## the version's library), so that a refactor's speed is compared on a
## shared machine pair by pair: for every timing, the median (range) over
## the rounds of after / before, and for bench_peers the within-run ratios
## to the NumPy and PyTorch loops, which the machine's load moves less.
##
##   Rscript bench/bench_versions_suites.R LIB_BEFORE LIB_AFTER [ROUNDS] [LABEL] [REPS]
##
## LIB_*: library folders each holding an installed sgfs (R CMD INSTALL -l);
## ROUNDS 2, LABEL "suites", REPS 3 (each suite's own repetitions).  Writes
## bench/results/versions-LABEL.md (SUITES_QUICK=1: short suites, a smoke
## test of this script).  Needs what the two suites need
## (python3-numpy, python3-torch, ../shared/datasets/a9a.xz).
args <- commandArgs(TRUE)
if (length(args) < 2L) stop("usage: bench_versions_suites.R LIB_BEFORE LIB_AFTER [ROUNDS] [LABEL] [REPS]")
libs <- c(before = normalizePath(args[1]), after = normalizePath(args[2]))
rounds <- if (length(args) > 2L) as.integer(args[3]) else 2L
label <- if (length(args) > 3L) args[4] else "suites"
reps <- if (length(args) > 4L) as.integer(args[5]) else 3L
here <- if (dir.exists("bench")) "bench" else "."
rscript <- file.path(R.home("bin"), "Rscript")
## (each run's own tables are kept there, for a summary that fails)
work <- file.path(dirname(tempdir()), sprintf("sgfs-suites-%s", label))
quick <- identical(Sys.getenv("SUITES_QUICK"), "1")     # (a smoke test of this script)

suite <- function(script, lib, out) {
    dir.create(out, recursive = TRUE, showWarnings = FALSE)
    extra <- if (!quick) character(0)
             else if (script == "bench_peers.R") c("--quick", "--shapes=1") else "--iter=2000"
    status <- system2(rscript, c(file.path(here, script), sprintf("--reps=%d", reps),
                                 sprintf("--out=%s", out), extra),
                      env = c(sprintf("R_LIBS=%s", lib), "OPENBLAS_NUM_THREADS=1"),
                      stdout = file.path(out, "log"), stderr = file.path(out, "log"))
    if (status != 0) stop(script, " failed with ", lib, ": see ", out, "/log")
}
peers <- sparse <- list()
for (r in seq_len(rounds)) for (v in names(libs)) {
    out <- file.path(work, sprintf("%s-%d", v, r))
    cat(sprintf("round %d, %s: bench_peers.R ...\n", r, v))
    suite("bench_peers.R", libs[[v]], file.path(out, "peers"))
    cat(sprintf("round %d, %s: bench_sparse.R ...\n", r, v))
    suite("bench_sparse.R", libs[[v]], file.path(out, "sparse"))
    p <- utils::read.csv(file.path(out, "peers", "peers.csv"))
    s <- utils::read.csv(file.path(out, "sparse", "sparse.csv"))
    peers[[length(peers) + 1L]] <- cbind(p, version = v, round = r)
    sparse[[length(sparse) + 1L]] <- cbind(s, version = v, round = r)
}
peers <- do.call(rbind, peers)
sparse <- do.call(rbind, sparse)

fmt <- function(v) formatC(v, digits = 3, format = "g")
spread <- function(x) sprintf("%s (%s-%s)", fmt(stats::median(x)), fmt(min(x)), fmt(max(x)))
## after / before of `value` for each key, paired by round
paired <- function(d, keys, value) {
    b <- d[d$version == "before", ]
    a <- d[d$version == "after", ]
    m <- merge(b, a, by = c(keys, "round"), suffixes = c(".b", ".a"))
    ratio <- m[[paste0(value, ".a")]] / m[[paste0(value, ".b")]]
    key <- do.call(paste, c(m[keys], sep = "\r"))
    lapply(split(seq_along(ratio), factor(key, unique(key))), function(i)
        list(row = m[i[1], keys, drop = FALSE], before = stats::median(m[[paste0(value, ".b")]][i]),
             after = stats::median(m[[paste0(value, ".a")]][i]), ratio = spread(ratio[i])))
}
package <- c("bare", "sgld_rows", "sgld_id", "sgld_windows", "sgld", "sgfs_full")
peer_rows <- vapply(paired(peers[peers$method %in% package, ], c("shape", "method"), "us_per_iter"),
                    function(p) sprintf("| %s | %s | %s | %s | %s |", p$row$shape, p$row$method,
                                        fmt(p$before), fmt(p$after), p$ratio), "")
## the Python loops' time over sgld(metric = "identity")'s in the same run:
## above 1 the package is faster; after / before of it below 1 means the
## package lost ground to the same peer
torch <- peers[peers$method %in% c("numpy_epoch", "torch_epoch"), ]
vs_rows <- vapply(paired(torch, c("shape", "method"), "vs_sgld_id"),
                  function(p) sprintf("| %s | %s | %s | %s | %s |", p$row$shape, p$row$method,
                                      fmt(p$before), fmt(p$after), p$ratio), "")
sparse_rows <- c(
    vapply(paired(sparse, c("batch", "measure"), "sparse"), function(p)
        sprintf("| %d | %s, compressed rows | %s | %s | %s |", p$row$batch, p$row$measure,
                fmt(p$before), fmt(p$after), p$ratio), ""),
    vapply(paired(sparse, c("batch", "measure"), "dense"), function(p)
        sprintf("| %d | %s, dense copy | %s | %s | %s |", p$row$batch, p$row$measure,
                fmt(p$before), fmt(p$after), p$ratio), ""))
cmd <- paste(c("Rscript bench/bench_versions_suites.R", args), collapse = " ")
lines <- c(sprintf("# Two versions side by side: bench_peers.R and bench_sparse.R (%s)", label), "",
           sprintf("`%s`: %d rounds, each running both suites with the version before and then the version after (%d repetitions each); OpenBLAS on one thread (%s); run %s. Medians over the rounds, and the median (range) of each round's after / before.",
                   cmd, rounds, reps, sessionInfo()$BLAS, format(Sys.time(), "%Y-%m-%d %H:%M")),
           "", "## bench_peers.R: the package's loops, microseconds per iteration", "",
           "| shape | method | before | after | after / before |", "|---|---|---:|---:|---:|",
           peer_rows, "",
           "## bench_peers.R: the Python loops' time over sgld(metric = \"identity\")'s, within each run", "",
           "| shape | loop | before | after | after / before |", "|---|---|---:|---:|---:|",
           vs_rows, "",
           "## bench_sparse.R (a9a): microseconds per iteration (the whole call: seconds)", "",
           "| batch | measure | before | after | after / before |", "|---:|---|---:|---:|---:|",
           sparse_rows)
writeLines(lines)
writeLines(lines, file.path(here, "results", sprintf("versions-%s.md", label)))
