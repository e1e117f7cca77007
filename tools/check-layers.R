## Checks that src/ is layered: no two C units use each other, directly or
## through others.  A unit is a .c file with the header of the same name,
## or a header without one.  Unit A uses unit B when A names a function,
## type, macro or enum constant that B defines (a function defined in a .c
## file, a static inline function, struct, typedef, macro or enum constant
## in a header); uses form a graph that must have no cycle.  Prints each
## unit's floor (1 + the highest floor it uses; a unit using nothing is on
## floor 1) with `--floors`, and every cycle with the names that tie it;
## exits with status 1 if there is one.
##
##   Rscript tools/check-layers.R [--floors] [src]

args <- commandArgs(TRUE)
show_floors <- "--floors" %in% args
args <- setdiff(args, "--floors")
src <- if (length(args)) args[1L] else "src"
files <- list.files(src, "[.][ch]$", full.names = TRUE)
if (!length(files)) stop("no C files in ", src)

## the code without comments, strings and character constants
strip <- function(text) {
    text <- gsub("(?s)/\\*.*?\\*/", " ", text, perl = TRUE)
    text <- gsub("//[^\n]*", " ", text, perl = TRUE)
    text <- gsub("\"(\\\\.|[^\"\\\\])*\"", "\"\"", text, perl = TRUE)
    gsub("'(\\\\.|[^'\\\\])+'", "' '", text, perl = TRUE)
}
code <- vapply(files, function(f) strip(paste(readLines(f, warn = FALSE), collapse = "\n")), "")
names(code) <- basename(files)
stem <- sub("[.][ch]$", "", names(code))
unit <- ifelse(grepl("[.]h$", names(code)) & !(paste0(stem, ".c") %in% names(code)),
               names(code), paste0(stem, ".c"))
names(unit) <- names(code)

matches <- function(pattern, text) {
    m <- regmatches(text, gregexpr(pattern, text, perl = TRUE))[[1L]]
    sub(pattern, "\\1", m, perl = TRUE)
}
## the names a file defines: in a .c file its functions of external
## linkage; in a header its static inline functions, types, macros and
## enum constants (its prototypes and extern declarations define nothing)
defines <- function(file, text) {
    fun_head <- "(?m)^(?:[A-Za-z_][A-Za-z0-9_]*[ \t*]+)+([A-Za-z_][A-Za-z0-9_]*)\\s*\\([^;{]*\\)\\s*\\{"
    if (grepl("[.]c$", file)) {
        heads <- regmatches(text, gregexpr(fun_head, text, perl = TRUE))[[1L]]
        heads <- heads[!grepl("^\\s*static\\b", heads)]
        tables <- "(?m)^(?:const\\s+)?[A-Za-z_][A-Za-z0-9_]*\\s+([A-Za-z_][A-Za-z0-9_]*)\\s*(?:\\[[^]]*\\]\\s*)?=\\s*\\{"
        return(c(sub(fun_head, "\\1", heads, perl = TRUE), matches(tables, text)))
    }
    inline <- "(?m)^static\\s+inline\\b[^;{(]*?\\b([A-Za-z_][A-Za-z0-9_]*)\\s*\\([^;{]*\\)\\s*\\{"
    enums <- unlist(lapply(matches("(?s)\\benum\\s*[A-Za-z0-9_]*\\s*\\{([^}]*)\\}", text),
                           function(body) matches("(?:^|,)\\s*([A-Za-z_][A-Za-z0-9_]*)", body)))
    unique(c(matches(inline, text),
             matches("(?m)^\\s*#\\s*define\\s+([A-Za-z_][A-Za-z0-9_]*)", text),
             matches("\\bstruct\\s+([A-Za-z_][A-Za-z0-9_]*)\\s*\\{", text),
             matches("(?m)\\}\\s*([A-Za-z_][A-Za-z0-9_]*)\\s*;", text),
             matches("\\btypedef\\s+[^;{]*?\\b([A-Za-z_][A-Za-z0-9_]*)\\s*;", text),
             enums))
}
def <- do.call(rbind, lapply(names(code), function(f) {
    d <- setdiff(defines(f, code[[f]]), c("FCONE", "USE_FC_LEN_T"))
    if (length(d)) data.frame(name = d, unit = unit[[f]]) else NULL
}))
## the include guards (HEADER_H) name nothing a file uses
def <- def[!grepl("_H$", def$name), ]
dup <- def[duplicated(def$name) & !duplicated(def[c("name", "unit")]), ]
if (nrow(dup)) stop("defined in two units: ", paste(unique(dup$name), collapse = ", "))
def <- def[!duplicated(def$name), ]
owner <- stats::setNames(def$unit, def$name)

## a header's prototypes and extern declarations name what it declares, not
## what it uses
declarations <- "(?m)^(?:extern\\s+)?(?:[A-Za-z_][A-Za-z0-9_]*[ \t*]+)+[A-Za-z_][A-Za-z0-9_]*\\s*(?:\\([^;{]*\\))?\\s*;"
used_text <- function(f) {
    if (grepl("[.]h$", f)) gsub(declarations, " ", code[[f]], perl = TRUE) else code[[f]]
}

## the edges: unit -> unit it uses, with the names that tie them
edges <- do.call(rbind, lapply(names(code), function(f) {
    words <- unique(matches("\\b([A-Za-z_][A-Za-z0-9_]*)\\b", used_text(f)))
    words <- words[words %in% names(owner)]
    to <- owner[words]
    keep <- to != unit[[f]]
    if (any(keep)) data.frame(from = unit[[f]], to = unname(to[keep]), name = words[keep])
    else NULL
}))
units <- sort(unique(unit))
adj <- lapply(stats::setNames(units, units), function(u) unique(edges$to[edges$from == u]))

## strongly connected components (Tarjan)
index <- stats::setNames(rep(NA_integer_, length(units)), units)
low <- index
on_stack <- stats::setNames(rep(FALSE, length(units)), units)
stack <- character(0)
counter <- 0L
cycles <- list()
visit <- function(v) {
    counter <<- counter + 1L
    index[[v]] <<- counter
    low[[v]] <<- counter
    stack <<- c(stack, v)
    on_stack[[v]] <<- TRUE
    for (w in adj[[v]]) {
        if (is.na(index[[w]])) {
            visit(w)
            low[[v]] <<- min(low[[v]], low[[w]])
        } else if (on_stack[[w]]) low[[v]] <<- min(low[[v]], index[[w]])
    }
    if (low[[v]] == index[[v]]) {
        k <- match(v, stack)
        comp <- stack[k:length(stack)]
        stack <<- stack[seq_len(k - 1L)]
        on_stack[comp] <<- FALSE
        if (length(comp) > 1L) cycles[[length(cycles) + 1L]] <<- sort(comp)
    }
}
for (u in units) if (is.na(index[[u]])) visit(u)

if (length(cycles)) {
    for (comp in cycles) {
        cat(sprintf("cycle of %d units: %s\n", length(comp), paste(comp, collapse = ", ")))
        e <- edges[edges$from %in% comp & edges$to %in% comp, ]
        for (pair in split(e, paste(e$from, e$to)))
            cat(sprintf("  %s -> %s: %s\n", pair$from[1L], pair$to[1L],
                        paste(utils::head(pair$name, 6L), collapse = ", ")))
    }
    quit(status = 1L)
}

floor_of <- stats::setNames(rep(NA_integer_, length(units)), units)
floor_at <- function(u) {
    if (is.na(floor_of[[u]]))
        floor_of[[u]] <<- 1L + max(0L, vapply(adj[[u]], floor_at, 0L))
    floor_of[[u]]
}
for (u in units) floor_at(u)
if (show_floors)
    for (f in sort(unique(floor_of), decreasing = TRUE))
        cat(sprintf("floor %2d: %s\n", f, paste(names(floor_of)[floor_of == f], collapse = " ")))
cat(sprintf("src/ layered: %d units on %d floors, no cycle\n", length(units), max(floor_of)))
