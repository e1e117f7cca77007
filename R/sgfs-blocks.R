## The parameter blocks of sgfs(preconditioner = "block"): contiguous runs
## of parameters, given by their sizes.

## the block sizes for `blocks` (NULL: the model's own blocks), validated
sgfs_block_sizes <- function(blocks, design, D) {
    if (is.null(blocks)) return(default_blocks(design, D))
    if (!is.numeric(blocks) || !length(blocks) || any(!is.finite(blocks)) ||
        any(blocks != round(blocks)) || any(blocks < 1) || sum(blocks) != D)
        stop_arg("blocks", sprintf(paste0(
            "must be the sizes of contiguous parameter blocks: whole numbers >= 1 ",
            "summing to %d, the number of parameters (%s)"),
            D, paste(design$par_names, collapse = ", ")))
    as.integer(blocks)
}

## the model's parameter blocks (runs of equal group labels)
default_blocks <- function(design, D) {
    rle(as.vector(model_groups(design, D)))$lengths
}

## "2 + 1", or a summary when there are many blocks
blocks_label <- function(sizes) {
    if (length(sizes) <= 6L) return(paste(sizes, collapse = " + "))
    sprintf("%d blocks of %d to %d", length(sizes), min(sizes), max(sizes))
}
