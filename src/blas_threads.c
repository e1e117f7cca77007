/*
 * blas_threads.c - the BLAS's threads around the engine's loop, and which
 * BLAS R runs.
 *
 * The engine's BLAS calls work on small matrices (D x D and D x n, D of
 * tens to hundreds), where a threaded BLAS spends more time waking and
 * synchronising threads than it saves, and chains already run in parallel
 * (`cores =`): k forked chains with t BLAS threads each would put k t
 * threads on the cores.  So sgfs_engine_run() sets a threaded BLAS to one
 * thread for its chunk of iterations and restores the count afterwards;
 * the full-data passes of the set-up (the mode's Hessians, O(N D^2)) keep
 * all of them.  The thread setters of OpenBLAS and FlexiBLAS are looked up
 * in the running process (dlsym), so whichever BLAS R was linked with or
 * switched to (Debian's alternatives) is found without linking to it; with
 * none found (reference BLAS, or a platform without dlsym) nothing is done.
 *
 *   sgfs_blas_single_begin() -> the previous thread count (0: none known)
 *   sgfs_blas_single_end(n)     restores it
 *   sgfs_blas_info()          -> list(config = OpenBLAS's build string or "",
 *                                     threads = its thread count or NA)
 */
#ifndef _WIN32
#define _GNU_SOURCE                     /* RTLD_DEFAULT */
#include <dlfcn.h>
#endif
#include "sgfs.h"

typedef void (*set_threads_fn)(int);
typedef int (*get_threads_fn)(void);
typedef char *(*get_config_fn)(void);

static void *process_symbol(const char *name)
{
#ifndef _WIN32
    return dlsym(RTLD_DEFAULT, name);
#else
    (void) name;
    return NULL;
#endif
}

/* the library's getter and setter, OpenBLAS's first (FlexiBLAS forwards to
   the backend it loaded but has names of its own) */
static int thread_control(get_threads_fn *get, set_threads_fn *set)
{
    static const char *names[][2] = {
        {"openblas_get_num_threads", "openblas_set_num_threads"},
        {"flexiblas_get_num_threads", "flexiblas_set_num_threads"}
    };
    for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
        void *g = process_symbol(names[k][0]), *s = process_symbol(names[k][1]);
        if (g != NULL && s != NULL) {
            *(void **) get = g;
            *(void **) set = s;
            return 1;
        }
    }
    return 0;
}

int sgfs_blas_single_begin(void)
{
    get_threads_fn get;
    set_threads_fn set;
    if (!thread_control(&get, &set)) return 0;
    const int n = get();
    if (n > 1) set(1);
    return n;
}

void sgfs_blas_single_end(int previous)
{
    get_threads_fn get;
    set_threads_fn set;
    if (previous > 1 && thread_control(&get, &set)) set(previous);
}

SEXP sgfs_blas_info(void)
{
    const char *names[] = {"config", "threads", ""};
    SEXP out = PROTECT(Rf_mkNamed(VECSXP, names));
    get_config_fn config;
    *(void **) &config = process_symbol("openblas_get_config");
    SET_VECTOR_ELT(out, 0, Rf_mkString(config != NULL ? config() : ""));
    get_threads_fn get;
    set_threads_fn set;
    SET_VECTOR_ELT(out, 1, Rf_ScalarInteger(thread_control(&get, &set) ? get() : NA_INTEGER));
    UNPROTECT(1);
    return out;
}
