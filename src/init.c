/*
 * init.c - native routine registration; nothing else lives here.
 */
#include <R.h>
#include <Rinternals.h>
#include <R_ext/Rdynload.h>
#include <R_ext/Visibility.h>

SEXP sgfs_engine_new(SEXP spec, SEXP state, SEXP n_keep);
SEXP sgfs_engine_run(SEXP ptr, SEXP n_iter);
SEXP sgfs_engine_result(SEXP ptr);
SEXP sgfs_model_eval(SEXP spec, SEXP theta, SEXP idx, SEXP centre, SEXP second_order);
SEXP sgfs_model_loglik(SEXP spec, SEXP theta);
SEXP sgfs_model_curvature(SEXP spec, SEXP theta, SEXP with_cov);
SEXP sgfs_change_cov(SEXP spec, SEXP theta, SEXP centre, SEXP rows);
SEXP sgfs_prior_eval(SEXP spec, SEXP theta);
SEXP sgfs_hs_eval(SEXP spec, SEXP xi);
SEXP sgfs_row_leverage(SEXP spec, SEXP U, SEXP P1);
SEXP sgfs_bench_gradients(SEXP spec, SEXP n_iter);
SEXP sgfs_design_copy(SEXP x, SEXP center, SEXP scale, SEXP lead, SEXP position);
SEXP sgfs_design_copy32(SEXP x, SEXP center, SEXP scale, SEXP lead, SEXP position);
SEXP sgfs_first_bad_column(SEXP x, SEXP allow_na);
SEXP sgfs_ksd(SEXP spec, SEXP x, SEXP c, SEXP beta);
SEXP sgfs_draws_eval(SEXP spec, SEXP theta, SEXP x, SEXP y, SEXP what,
                     SEXP log_sigma, SEXP affine, SEXP offset);
SEXP sgfs_blas_info(void);
SEXP sgfs_parse_libsvm(SEXP lines);
SEXP sgfs_sparse_rows(SEXP x, SEXP center, SEXP scale, SEXP max_fill, SEXP lead, SEXP order);
SEXP sgfs_sparse_rows_csc(SEXP i, SEXP p, SEXP x, SEXP dim, SEXP center, SEXP scale,
                          SEXP max_fill, SEXP lead, SEXP order);
SEXP sgfs_column_stats(SEXP x);
SEXP sgfs_column_stats_csc(SEXP i, SEXP p, SEXP x, SEXP dim);
SEXP sgfs_data_xb(SEXP spec, SEXP beta);
SEXP sgfs_indicator_stats(SEXP x, SEXP y);
SEXP sgfs_indicator_stats_csc(SEXP i, SEXP p, SEXP x, SEXP dim, SEXP y);
SEXP sgfs_weakref(SEXP key, SEXP value);
SEXP sgfs_weakref_value(SEXP ref);
SEXP sgfs_data_xtr(SEXP spec, SEXP r);
SEXP sgfs_data_col_wss(SEXP spec, SEXP h);
SEXP sgfs_data_hess_times(SEXP spec, SEXP h, SEXP v);
SEXP sgfs_data_rows_of(SEXP spec, SEXP idx);
SEXP sgfs_data_slice(SEXP spec, SEXP idx);
SEXP sgfs_matrix_reorder(SEXP x, SEXP order, SEXP buffer, SEXP state, SEXP forward);
SEXP sgfs_reorderable(SEXP x);
SEXP sgfs_matrix_scratch_bytes(SEXP N, SEXP p);
SEXP sgfs_single_precision(void);
SEXP sgfs_design_file_write(SEXP path, SEXP x, SEXP names, SEXP append, SEXP bytes);
SEXP sgfs_design_file_info(SEXP path);
SEXP sgfs_design_file_map(void);
SEXP sgfs_design_file_stats(SEXP file);
SEXP sgfs_design_file_rows(SEXP file, SEXP idx);
SEXP sgfs_design_file_columns(SEXP file, SEXP cols);
SEXP sgfs_design_file_shuffle(SEXP from, SEXP to, SEXP order, SEXP bucket_rows, SEXP tmp);
SEXP sgfs_map_rows(SEXP theta, SEXP C);
SEXP sgfs_physical_memory(void);
SEXP sgfs_spec_version(void);
SEXP sgfs_gamma(SEXP N, SEXP n);
SEXP sgfs_state_parts(SEXP sampler, SEXP D, SEXP sstate);
SEXP sgfs_line_logdens(SEXP spec, SEXP theta, SEXP dir, SEXP rows, SEXP cls, SEXP t);
SEXP sgfs_row_derivs(SEXP spec, SEXP theta, SEXP shift, SEXP class_);
SEXP sgfs_rnorm_block(SEXP n);
SEXP sgfs_ranef_group_draw(SEXP spec, SEXP theta, SEXP rows, SEXP eta0, SEXP z, SEXP b,
                           SEXP prec, SEXP df);
SEXP sgfs_ranef_cov_draw(SEXP x, SEXP Q, SEXP G, SEXP prior, SEXP dispersion, SEXP density);
SEXP sgfs_ranef_translation_draw(SEXP b, SEXP c, SEXP x, SEXP beta_j, SEXP mean, SEXP sd);

#define CALLDEF(name, n) { #name, (DL_FUNC) &name, n }

static const R_CallMethodDef call_entries[] = {
    CALLDEF(sgfs_engine_new, 3),
    CALLDEF(sgfs_engine_run, 2),
    CALLDEF(sgfs_engine_result, 1),
    CALLDEF(sgfs_model_eval, 5),
    CALLDEF(sgfs_model_loglik, 2),
    CALLDEF(sgfs_model_curvature, 3),
    CALLDEF(sgfs_change_cov, 4),
    CALLDEF(sgfs_prior_eval, 2),
    CALLDEF(sgfs_hs_eval, 2),
    CALLDEF(sgfs_row_leverage, 3),
    CALLDEF(sgfs_bench_gradients, 2),
    CALLDEF(sgfs_design_copy, 5),
    CALLDEF(sgfs_design_copy32, 5),
    CALLDEF(sgfs_first_bad_column, 2),
    CALLDEF(sgfs_ksd, 4),
    CALLDEF(sgfs_draws_eval, 8),
    CALLDEF(sgfs_blas_info, 0),
    CALLDEF(sgfs_parse_libsvm, 1),
    CALLDEF(sgfs_sparse_rows, 6),
    CALLDEF(sgfs_sparse_rows_csc, 9),
    CALLDEF(sgfs_column_stats, 1),
    CALLDEF(sgfs_column_stats_csc, 4),
    CALLDEF(sgfs_data_xb, 2),
    CALLDEF(sgfs_indicator_stats, 2),
    CALLDEF(sgfs_indicator_stats_csc, 5),
    CALLDEF(sgfs_weakref, 2),
    CALLDEF(sgfs_weakref_value, 1),
    CALLDEF(sgfs_data_xtr, 2),
    CALLDEF(sgfs_data_col_wss, 2),
    CALLDEF(sgfs_data_hess_times, 3),
    CALLDEF(sgfs_data_rows_of, 2),
    CALLDEF(sgfs_data_slice, 2),
    CALLDEF(sgfs_matrix_reorder, 5),
    CALLDEF(sgfs_reorderable, 1),
    CALLDEF(sgfs_matrix_scratch_bytes, 2),
    CALLDEF(sgfs_single_precision, 0),
    CALLDEF(sgfs_design_file_write, 5),
    CALLDEF(sgfs_design_file_info, 1),
    CALLDEF(sgfs_design_file_map, 0),
    CALLDEF(sgfs_design_file_stats, 1),
    CALLDEF(sgfs_design_file_rows, 2),
    CALLDEF(sgfs_design_file_columns, 2),
    CALLDEF(sgfs_design_file_shuffle, 5),
    CALLDEF(sgfs_map_rows, 2),
    CALLDEF(sgfs_physical_memory, 0),
    CALLDEF(sgfs_spec_version, 0),
    CALLDEF(sgfs_gamma, 2),
    CALLDEF(sgfs_state_parts, 3),
    CALLDEF(sgfs_line_logdens, 6),
    CALLDEF(sgfs_row_derivs, 4),
    CALLDEF(sgfs_rnorm_block, 1),
    CALLDEF(sgfs_ranef_group_draw, 8),
    CALLDEF(sgfs_ranef_cov_draw, 6),
    CALLDEF(sgfs_ranef_translation_draw, 6),
    { NULL, NULL, 0 }
};

void attribute_visible R_init_sgfs(DllInfo *dll)
{
    R_registerRoutines(dll, NULL, call_entries, NULL, NULL);
    R_useDynamicSymbols(dll, FALSE);
    R_forceSymbols(dll, TRUE);
}
