## broom's tidy() of a fit: one row per parameter, as broom.mixed tidies an
## rstanarm fit.

#' A fit's parameters as a data frame, for 'broom'
#'
#' `tidy()` (the generic of 'generics', which 'broom' re-exports): one row
#' per parameter with its posterior median (`estimate`) and median
#' absolute deviation (`std.error`, `stats::mad()`), as 'broom.mixed'
#' tidies an 'rstanarm' fit, and with `conf.int = TRUE` the central
#' posterior interval of mass `conf.level` (`conf.low`, `conf.high`).  A
#' mixed model's group effects are left out unless `effects` asks for them.
#'
#' @param x a fit of [sgfs()], [sgld()] or another sampler.
#' @param conf.int whether to add the central posterior intervals.
#' @param conf.level their probability mass.
#' @param effects for a mixed model, which rows: `"fixed"` (the fixed
#'   effects and the model's own parameters), `"ran_pars"` (the groups' sds
#'   and correlations), `"ran_vals"` (the group effects, when the fit kept
#'   their draws); several may be given.  Other fits have only `"fixed"`.
#' @param pars,regex_pars the parameters, as [as.matrix.sgfit()] chooses
#'   them (then `effects` is not used).
#' @param ... unused.
#' @return A data frame (a tibble when 'tibble' is installed) with columns
#'   `term`, `estimate`, `std.error` and, with `conf.int`, `conf.low` and
#'   `conf.high`.
#' @examples
#' data(Pima.tr, package = "MASS")
#' fit <- sgfs(type ~ glu + bmi, data = Pima.tr, n_iter = 2000, batch_size = 50, seed = 1)
#' if (requireNamespace("generics", quietly = TRUE))
#'     generics::tidy(fit, conf.int = TRUE)
#' @exportS3Method generics::tidy
tidy.sgfit <- function(x, conf.int = FALSE, conf.level = 0.95,
                       effects = c("fixed", "ran_pars"), pars = NULL, regex_pars = NULL, ...) {
    no_dots(...)
    conf.int <- check_flag(conf.int, "conf.int")
    probs <- interval_probs(conf.level)
    B <- all_draws(x)
    info <- sgfit_info(x)
    cols <- chosen_pars(colnames(B), pars, regex_pars)
    if (is.null(cols)) {
        if (!is.character(effects) || !length(effects) ||
            !all(effects %in% c("fixed", "ran_pars", "ran_vals")))
            stop_arg("effects", "must be some of \"fixed\", \"ran_pars\" and \"ran_vals\", not ",
                     format_value(effects))
        cols <- if (is.null(info$random)) seq_len(ncol(B)) else {
            terms <- random_columns(info)$terms
            vals <- unlist(lapply(terms, `[[`, "effects"))
            if ("ran_vals" %in% effects && !length(vals))
                stop_arg("effects", "\"ran_vals\" needs the group effects' draws, which this fit ",
                         "did not keep (sgfs_control(group_draws = TRUE) keeps them)")
            c(if ("fixed" %in% effects) seq_along(info$design$par_names),
              if ("ran_pars" %in% effects) unlist(lapply(terms, `[[`, "hyper")),
              if ("ran_vals" %in% effects) vals)
        }
        cols <- colnames(B)[cols]
    }
    B <- B[, cols, drop = FALSE]
    out <- data.frame(term = cols, estimate = apply(B, 2L, stats::median),
                      std.error = apply(B, 2L, stats::mad), row.names = NULL,
                      stringsAsFactors = FALSE)
    if (conf.int) {
        q <- apply(B, 2L, stats::quantile, probs, names = FALSE)
        out$conf.low <- q[1L, ]
        out$conf.high <- q[2L, ]
    }
    if (requireNamespace("tibble", quietly = TRUE)) tibble::as_tibble(out) else out
}
