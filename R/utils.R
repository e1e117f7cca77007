## Argument checkers: each stops with a message naming the argument.

stop_arg <- function(arg, ...) {
    stop(sprintf("'%s' %s", arg, paste0(...)), call. = FALSE)
}

check_count <- function(x, arg, min = 1L, max = .Machine$integer.max) {
    if (!is.numeric(x) || length(x) != 1L || !is.finite(x) || x != round(x) ||
        x < min || x > max)
        stop_arg(arg, "must be a whole number",
                 sprintf(" between %d and %d", min, max),
                 sprintf(", not %s", format_value(x)))
    as.integer(x)
}

check_positive <- function(x, arg, allow_inf = FALSE) {
    if (!is.numeric(x) || length(x) != 1L || is.na(x) || x <= 0 ||
        (!allow_inf && !is.finite(x)))
        stop_arg(arg, "must be a single positive number, not ", format_value(x))
    as.double(x)
}

check_nonnegative <- function(x, arg) {
    if (!is.numeric(x) || length(x) != 1L || !is.finite(x) || x < 0)
        stop_arg(arg, "must be a single non-negative number, not ",
                 format_value(x))
    as.double(x)
}

check_flag <- function(x, arg, na_ok = FALSE) {
    if (!is.logical(x) || length(x) != 1L || (is.na(x) && !na_ok))
        stop_arg(arg, if (na_ok) "must be TRUE, FALSE or NA" else "must be TRUE or FALSE")
    x
}

format_value <- function(x) {
    if (is.null(x)) return("NULL")
    if (is.function(x)) return("a function")
    if (is.list(x)) return(sprintf("a %s of length %d", class(x)[1L], length(x)))
    if (length(x) != 1L) return(sprintf("a %s of length %d", class(x)[1L], length(x)))
    if (is.character(x)) return(sprintf("\"%s\"", x))
    format(x, digits = 15L)
}

## match.arg() with an error that names the argument
choose_arg <- function(x, choices, arg) {
    if (identical(x, choices)) return(choices[1L])
    if (!is.character(x) || length(x) != 1L || !(x %in% choices))
        stop_arg(arg, "must be one of ", paste0("\"", choices, "\"", collapse = ", "),
                 ", not ", format_value(x))
    x
}
