## The command line the bench scripts share (sourced by bench_negbin.R,
## bench_real_data.R and bench_rstanarm.R): `--name=value` flags, the last
## one given winning, and `--quick`.
args <- commandArgs(trailingOnly = TRUE)
flag_value <- function(name, default) {
    v <- sub(sprintf("^--%s=", name), "", grep(sprintf("^--%s=", name), args, value = TRUE))
    if (length(v)) v[[length(v)]] else default
}
quick <- "--quick" %in% args
