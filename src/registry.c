/*
 * registry.c - the tables of models and update rules the driver can plug in.
 * A new model or sampler is one file plus one line here.
 */
#include "sgfs.h"

extern const sgfs_model sgfs_model_logistic, sgfs_model_gaussian,
    sgfs_model_categorical, sgfs_model_mlp, sgfs_model_custom,
    sgfs_model_poisson, sgfs_model_probit, sgfs_model_negbin, sgfs_model_gamma,
    sgfs_model_student, sgfs_model_cumulative;
extern const sgfs_sampler sgfs_sampler_sgld, sgfs_sampler_sgfs_full,
    sgfs_sampler_sgfs_diag, sgfs_sampler_psgld, sgfs_sampler_sghmc,
    sgfs_sampler_sghmc_noise, sgfs_sampler_sgnht, sgfs_sampler_sga,
    sgfs_sampler_hmc, sgfs_sampler_osgfs, sgfs_sampler_isgd,
    sgfs_sampler_sgfs_block, sgfs_sampler_adam, sgfs_sampler_sgfs_mh;

static const sgfs_model *const models[] = {
    &sgfs_model_logistic, &sgfs_model_gaussian, &sgfs_model_categorical,
    &sgfs_model_mlp, &sgfs_model_custom, &sgfs_model_poisson,
    &sgfs_model_probit, &sgfs_model_negbin, &sgfs_model_gamma, &sgfs_model_student,
    &sgfs_model_cumulative
};

static const sgfs_sampler *const samplers[] = {
    &sgfs_sampler_sgld, &sgfs_sampler_sgfs_full, &sgfs_sampler_sgfs_diag,
    &sgfs_sampler_psgld, &sgfs_sampler_sghmc, &sgfs_sampler_sghmc_noise,
    &sgfs_sampler_sgnht, &sgfs_sampler_sga, &sgfs_sampler_hmc,
    &sgfs_sampler_osgfs, &sgfs_sampler_isgd, &sgfs_sampler_sgfs_block,
    &sgfs_sampler_adam, &sgfs_sampler_sgfs_mh
};

const sgfs_model *sgfs_find_model(const char *name)
{
    for (size_t k = 0; k < sizeof(models) / sizeof(models[0]); k++)
        if (strcmp(models[k]->name, name) == 0) return models[k];
    Rf_error("internal error: unknown model '%s'", name);
    return NULL;
}

const sgfs_sampler *sgfs_find_sampler(const char *name)
{
    for (size_t k = 0; k < sizeof(samplers) / sizeof(samplers[0]); k++)
        if (strcmp(samplers[k]->name, name) == 0) return samplers[k];
    Rf_error("internal error: unknown sampler '%s'", name);
    return NULL;
}
