/*
 * ranef_engine.c - a mixed model's random effects as a part of the engine
 * (vignette("internals"), "Mixed models"): the effects enter the fixed
 * effects' stochastic-gradient step as an offset, o_i + r_i with
 * r_i = sum_t z_ti' b_t,g_t(i), kept per row, so that every rule, metric
 * and minibatch kernel works unchanged; after each step the blocks of
 * ranef.c run:
 *
 *   - groups' effects, visited in a random order (reshuffled each sweep),
 *     until the iteration's budget of rows (the minibatch size) is spent
 *     (a large group's excess owed by the next iterations),
 *     each followed by its rows' r_i and its term's Q = sum_g b_g b_g';
 *   - each term's covariance, every iteration (O(q^3) a density);
 *   - TRANSLATIONS times a sweep of all groups, each term's translations
 *     (O(G q + N), no transcendental function) and each nested pair's move
 *     (O(G q^2), nest_move), and at each sweep's end
 *     its non-centred scale move (slice sampling, a pass over its rows a
 *     density), so that a sweep costs about an epoch.
 *
 * spec$ranef: list(terms = list(list(q, G, group (N ints, 0-based), Z (N x
 * q), start (G + 1), rows (N: the rows by group), prior (ranef_eval.c's
 * form), dir (D x q: the internal direction along which each coefficient's
 * fixed counterpart moves in a translation, a zero column when it has
 * none)), ...), nests (list(list(outer, inner, c_outer, c_inner, parent)):
 * random_nests()), df, offset (N or NULL), dispersion (the model coordinate whose exp
 * is decov()'s d, 0-based, or -1)); state$ranef: list(b = per term q x G,
 * x = per term the covariance's coordinates, sweep = the position in the
 * sweep under way and its order of groups and of their terms, 0-based,
 * credit = the rows the sweep may still spend, mode = per term the groups'
 * last modes, Newton's starts; sums = the kept draws' count and sums of b
 * and b^2, when keep_effects is 0; centre = with control variates, the
 * centre and its score sum; scale = per term the scale moves' count, sum of
 * squares and slice width; sweeps = the sweeps completed).  Until the
 * first sweep has drawn every group's effects, the covariances and the
 * translations wait.  Draws: the model's parameters, then per
 * term its q sds and the correlations below Omega's diagonal, column by
 * column; with spec$ranef$keep_effects 1, then every term's effects (q x G,
 * group by group), else only their sums over the kept draws (the state's
 * sums), which give the effects' posterior means and sds in O(G) memory.
 *
 * With control variates (SGLD-CV's first order: the minibatch estimates
 * sum_i [g_i(beta) - g_i(beta_c)] about the full-data score sum at the
 * centre beta_c), that sum depends on the offsets: it is kept exact as each
 * group's rows change (their part at the centre taken out before and put
 * back after, two passes over the rows the update reads anyway), and at
 * each sweep's end, where the translations and the scale move change every
 * row's offset, the centre moves to the chain's point and its sum is
 * recomputed in one pass.  Every step's gradient estimate stays unbiased,
 * and the centre stays within about a sweep's move of the chain.
 */
#include "sgfs.h"
#include "ranef.h"

#define TRANSLATIONS 8          /* translations a sweep                      */
#define SCALE_LEARN 20.0        /* scale moves whose sizes set the slice's width */

static double *alloc_real(SEXP keep, int *slot, R_xlen_t len)
{
    SEXP x = SET_VECTOR_ELT(keep, (*slot)++, Rf_allocVector(REALSXP, len > 0 ? len : 1));
    memset(REAL(x), 0, (size_t) Rf_xlength(x) * sizeof(double));
    return REAL(x);
}

static void *alloc_raw(SEXP keep, int *slot, size_t size)
{
    SEXP x = SET_VECTOR_ELT(keep, (*slot)++, Rf_allocVector(RAWSXP, (R_xlen_t) size));
    memset(RAW(x), 0, size);
    return RAW(x);
}

static double list_real1(SEXP list, const char *name)
{
    return REAL(sgfs_list_typed(list, name, REALSXP, 1))[0];
}

/* r_i of every row from the effects, into offset */
static void rebuild_offset(sgfs_ranef *re)
{
    for (int i = 0; i < re->N; i++) re->offset[i] = re->offset0 ? re->offset0[i] : 0.0;
    for (int k = 0; k < re->K; k++) {
        const sgfs_ranef_term *t = &re->term[k];
        for (int i = 0; i < re->N; i++) {
            const double *b = t->b + (size_t) t->group[i] * t->q;
            for (int c = 0; c < t->q; c++) re->offset[i] += t->Z[i + (size_t) c * re->N] * b[c];
        }
    }
}

static void term_stats(sgfs_ranef *re, sgfs_ranef_term *t)
{
    const int q = t->q;
    for (int i = 0; i < q * q; i++) t->Q[i] = 0.0;
    for (int g = 0; g < t->G; g++)
        for (int c = 0; c < q; c++)
            for (int k = 0; k < q; k++) t->Q[k + c * q] += t->b[k + (size_t) g * q] * t->b[c + (size_t) g * q];
    sgfs_ranef_precision(t->x, q, t->prec, re->work);
}

sgfs_ranef_prior sgfs_ranef_prior_read(SEXP prior)
{
    sgfs_ranef_prior p = {sgfs_list_int(prior, "family"), list_real1(prior, "scale"),
                          list_real1(prior, "df"), list_real1(prior, "shape"),
                          list_real1(prior, "concentration"), list_real1(prior, "zeta")};
    if (p.family < SGFS_SD_HALF_NORMAL || p.family > SGFS_SD_DECOV)
        Rf_error("internal error: unknown sd prior %d", p.family);
    return p;
}

int sgfs_ranef_outputs(const sgfs_ranef *re)
{
    double n = 0.0;
    for (int k = 0; k < re->K; k++) {
        const sgfs_ranef_term *t = &re->term[k];
        n += t->q * (t->q + 1) / 2 + (re->keep_effects ? (double) t->q * t->G : 0.0);
    }
    if (n > INT_MAX / 2) Rf_error("too many group effects to keep their draws");
    return (int) n;
}

R_xlen_t sgfs_ranef_slots(SEXP spec)
{
    return 14 + 8 * (R_xlen_t) Rf_length(sgfs_list_elt(spec, "terms"))
        + 2 * (R_xlen_t) Rf_length(sgfs_list_opt(spec, "nests"));
}

sgfs_ranef *sgfs_ranef_setup(SEXP keep, SEXP spec, SEXP state, sgfs_data *data, int D)
{
    SEXP terms = sgfs_list_elt(spec, "terms");
    const int K = Rf_length(terms), N = data->N;
    if (TYPEOF(terms) != VECSXP || K < 1) Rf_error("internal error: 'ranef$terms' must be a list");
    SEXP nests = sgfs_list_opt(spec, "nests");
    const int n_nest = Rf_length(nests);
    if (Rf_xlength(keep) < sgfs_ranef_slots(spec)) Rf_error("internal error: too few ranef slots");
    SEXP sb = sgfs_list_opt(state, "b"), sx = sgfs_list_opt(state, "x"),
         sm = sgfs_list_opt(state, "mode"), ss = sgfs_list_opt(state, "sums"),
         sc = sgfs_list_opt(state, "scale");
    if (sc != R_NilValue && (TYPEOF(sc) != REALSXP || Rf_xlength(sc) != 3 * (R_xlen_t) K))
        Rf_error("internal error: the state's scale moves do not match the terms");
    if ((sb != R_NilValue && (TYPEOF(sb) != VECSXP || Rf_length(sb) != K)) ||
        (sx != R_NilValue && (TYPEOF(sx) != VECSXP || Rf_length(sx) != K)) ||
        (sm != R_NilValue && (TYPEOF(sm) != VECSXP || Rf_length(sm) != K)) ||
        ((sb == R_NilValue) != (sx == R_NilValue)))
        Rf_error("internal error: the state's 'ranef' must hold one 'b' and 'x' a term");
    int slot = 0;
    sgfs_ranef *re = alloc_raw(keep, &slot, sizeof(sgfs_ranef));
    re->K = K;
    re->N = N;
    re->D = D;
    re->term = alloc_raw(keep, &slot, (size_t) K * sizeof(sgfs_ranef_term));
    re->keep_effects = sgfs_list_int(spec, "keep_effects");
    if (re->keep_effects != 0 && re->keep_effects != 1)
        Rf_error("internal error: 'ranef$keep_effects' must be 0 or 1");
    SEXP s_sum = R_NilValue, s_sq = R_NilValue;
    if (ss != R_NilValue) {
        re->n_summed = list_real1(ss, "n");
        s_sum = sgfs_list_elt(ss, "sum");
        s_sq = sgfs_list_elt(ss, "sum_sq");
        if (!(re->n_summed >= 0.0) || TYPEOF(s_sum) != VECSXP || Rf_length(s_sum) != K ||
            TYPEOF(s_sq) != VECSXP || Rf_length(s_sq) != K)
            Rf_error("internal error: the state's sums of the effects are malformed");
    }
    re->df = list_real1(spec, "df");
    if (!(re->df > 0.0) || !R_FINITE(re->df)) Rf_error("internal error: 'ranef$df' must be positive");
    re->dispersion = sgfs_list_int(spec, "dispersion");
    if (re->dispersion == NA_INTEGER || re->dispersion < -1 || re->dispersion >= D)
        Rf_error("internal error: 'ranef$dispersion' out of range");
    SEXP o = sgfs_list_opt(spec, "offset");
    re->offset0 = o == R_NilValue ? NULL : REAL(sgfs_list_typed(spec, "offset", REALSXP, N));
    int q_max = 1, n_max = 1, n_order = 0;
    for (int k = 0; k < K; k++) {
        SEXP ts = VECTOR_ELT(terms, k);
        sgfs_ranef_term *t = &re->term[k];
        t->q = sgfs_list_int(ts, "q");
        t->G = sgfs_list_int(ts, "G");
        if (t->q == NA_INTEGER || t->q < 1 || t->q > 100 || t->G == NA_INTEGER || t->G < 1)
            Rf_error("internal error: a term needs 1 to 100 coefficients and groups");
        const int q = t->q, G = t->G;
        t->group = INTEGER(sgfs_list_typed(ts, "group", INTSXP, N));
        t->start = INTEGER(sgfs_list_typed(ts, "start", INTSXP, (R_xlen_t) G + 1));
        t->rows = INTEGER(sgfs_list_typed(ts, "rows", INTSXP, N));
        t->Z = REAL(sgfs_list_typed(ts, "Z", REALSXP, (R_xlen_t) N * q));
        t->dir = REAL(sgfs_list_typed(ts, "dir", REALSXP, (R_xlen_t) D * q));
        t->prior = sgfs_ranef_prior_read(sgfs_list_elt(ts, "prior"));
        for (int i = 0; i < N; i++)
            if (t->group[i] < 0 || t->group[i] >= G)
                Rf_error("internal error: a row's group out of range");
        if (t->start[0] != 0 || t->start[G] != N) Rf_error("internal error: malformed 'start'");
        for (int g = 0; g < G; g++) {
            if (t->start[g + 1] < t->start[g]) Rf_error("internal error: malformed 'start'");
            if (t->start[g + 1] - t->start[g] > n_max) n_max = t->start[g + 1] - t->start[g];
            for (int j = t->start[g]; j < t->start[g + 1]; j++)
                if (t->rows[j] < 0 || t->rows[j] >= N || t->group[t->rows[j]] != g)
                    Rf_error("internal error: 'rows' does not list the groups' rows");
        }
        t->b = alloc_real(keep, &slot, (R_xlen_t) q * G);
        t->mode = alloc_real(keep, &slot, (R_xlen_t) q * G);
        t->x = alloc_real(keep, &slot, q * (q + 1) / 2);
        t->prec = alloc_real(keep, &slot, q * q);
        t->Q = alloc_real(keep, &slot, q * q);
        if (sb != R_NilValue) {
            SEXP bk = VECTOR_ELT(sb, k), xk = VECTOR_ELT(sx, k);
            if (TYPEOF(bk) != REALSXP || Rf_xlength(bk) != (R_xlen_t) q * G ||
                TYPEOF(xk) != REALSXP || Rf_length(xk) != q * (q + 1) / 2)
                Rf_error("internal error: the state's effects do not match the terms");
            memcpy(t->b, REAL(bk), (size_t) q * G * sizeof(double));
            memcpy(t->x, REAL(xk), (size_t) (q * (q + 1) / 2) * sizeof(double));
            if (!sgfs_all_finite(t->b, q * G) || !sgfs_all_finite(t->x, q * (q + 1) / 2))
                Rf_error("internal error: the state's effects are not finite");
        }
        t->scale = alloc_real(keep, &slot, 3);
        t->scale[2] = 1.0;
        t->sum = alloc_real(keep, &slot, re->keep_effects ? 0 : (R_xlen_t) q * G);
        t->sum_sq = alloc_real(keep, &slot, re->keep_effects ? 0 : (R_xlen_t) q * G);
        if (s_sum != R_NilValue && !re->keep_effects) {
            SEXP a = VECTOR_ELT(s_sum, k), a2 = VECTOR_ELT(s_sq, k);
            if (TYPEOF(a) != REALSXP || Rf_xlength(a) != (R_xlen_t) q * G ||
                TYPEOF(a2) != REALSXP || Rf_xlength(a2) != (R_xlen_t) q * G)
                Rf_error("internal error: the state's sums do not match the terms");
            memcpy(t->sum, REAL(a), (size_t) q * G * sizeof(double));
            memcpy(t->sum_sq, REAL(a2), (size_t) q * G * sizeof(double));
        }
        if (sc != R_NilValue) {
            memcpy(t->scale, REAL(sc) + 3 * k, 3 * sizeof(double));
            if (!(t->scale[0] >= 0.0 && t->scale[1] >= 0.0 && t->scale[2] > 0.0))
                Rf_error("internal error: the state's scale moves are malformed");
        }
        if (sm != R_NilValue) {
            SEXP mk = VECTOR_ELT(sm, k);
            if (TYPEOF(mk) != REALSXP || Rf_xlength(mk) != (R_xlen_t) q * G ||
                !sgfs_all_finite(REAL(mk), q * G))
                Rf_error("internal error: the state's modes do not match the terms");
            memcpy(t->mode, REAL(mk), (size_t) q * G * sizeof(double));
        }
        if (q > q_max) q_max = q;
        n_order += G;
    }
    re->n_nest = n_nest;
    re->nest = alloc_raw(keep, &slot, (size_t) (n_nest > 0 ? n_nest : 1) * sizeof(sgfs_ranef_nest));
    for (int h = 0; h < n_nest; h++) {
        SEXP ns = VECTOR_ELT(nests, h);
        sgfs_ranef_nest *n = &re->nest[h];
        n->outer = sgfs_list_int(ns, "outer");
        n->inner = sgfs_list_int(ns, "inner");
        n->c_outer = sgfs_list_int(ns, "c_outer");
        n->c_inner = sgfs_list_int(ns, "c_inner");
        if (n->outer < 0 || n->outer >= K || n->inner < 0 || n->inner >= K || n->outer == n->inner ||
            n->c_outer < 0 || n->c_outer >= re->term[n->outer].q || n->c_inner < 0 ||
            n->c_inner >= re->term[n->inner].q)
            Rf_error("internal error: a nest's terms or coefficients out of range");
        const int Go = re->term[n->outer].G, Gi = re->term[n->inner].G;
        n->parent = INTEGER(sgfs_list_typed(ns, "parent", INTSXP, Gi));
        n->count = alloc_real(keep, &slot, Go);
        n->sum = alloc_real(keep, &slot, Go);
        for (int j = 0; j < Gi; j++) {
            if (n->parent[j] < 0 || n->parent[j] >= Go)
                Rf_error("internal error: a nest's parent out of range");
            n->count[n->parent[j]] += 1.0;
        }
    }
    re->n_order = n_order;
    re->pos = n_order;                  /* (a sweep begins with a shuffle) */
    re->fresh = 1;
    re->order = (int *) alloc_raw(keep, &slot, (size_t) n_order * sizeof(int));
    re->order_term = (int *) alloc_raw(keep, &slot, (size_t) n_order * sizeof(int));
    for (int k = 0, o = 0; k < K; k++)
        for (int g = 0; g < re->term[k].G; g++, o++) {
            re->order[o] = g;
            re->order_term[o] = k;
        }
    SEXP sw = sgfs_list_opt(state, "sweep");
    if (sw != R_NilValue) {             /* the sweep under way: its position and order */
        const int *v = INTEGER(sgfs_list_typed(state, "sweep", INTSXP, 1 + 2 * (R_xlen_t) n_order));
        if (v[0] < 0 || v[0] > n_order) Rf_error("internal error: the state's sweep is malformed");
        for (int o = 0; o < n_order; o++) {
            const int g = v[1 + o], k = v[1 + n_order + o];
            if (k < 0 || k >= K || g < 0 || g >= re->term[k].G)
                Rf_error("internal error: the state's sweep is malformed");
            re->order[o] = g;
            re->order_term[o] = k;
        }
        re->pos = v[0];
        re->fresh = 0;
        SEXP done = sgfs_list_opt(state, "sweeps");
        re->sweeps = done == R_NilValue ? 1.0 : REAL(sgfs_list_typed(state, "sweeps", REALSXP, 1))[0];
        if (!(re->sweeps >= 0.0)) Rf_error("internal error: the state's sweeps are malformed");
        re->credit = REAL(sgfs_list_typed(state, "credit", REALSXP, 1))[0];
        if (!R_FINITE(re->credit) || re->credit > 1e9 || re->credit < -(double) N)
            Rf_error("internal error: the state's credit is malformed");
    }
    re->every_row = (int *) alloc_raw(keep, &slot, (size_t) N * sizeof(int));
    for (int i = 0; i < N; i++) re->every_row[i] = i;
    re->eta = alloc_real(keep, &slot, n_max);
    re->z = alloc_real(keep, &slot, (R_xlen_t) n_max * q_max);
    re->work = alloc_real(keep, &slot, 10 * q_max + 4 * q_max * q_max + q_max * (q_max + 1) / 2);
    re->zero = alloc_real(keep, &slot, q_max * q_max);
    re->base = alloc_real(keep, &slot, N);
    re->own = alloc_real(keep, &slot, N);
    re->offset = alloc_real(keep, &slot, N);
    re->cv_store = alloc_real(keep, &slot, 3 * (R_xlen_t) D);   /* (for control variates) */
    for (int k = 0; k < K; k++) term_stats(re, &re->term[k]);
    rebuild_offset(re);
    data->offset = re->offset;
    return re;
}

/* adds sign times the score sum at the centre of the rows rows[0..m-1], at
   their current offsets, to the centre's score (in chunks a score call can
   take) */
static void centre_score_add(sgfs_ranef *re, sgfs_lik *lik, const int *rows, int m, double sign)
{
    for (int from = 0; from < m; from += re->chunk) {
        const int mc = m - from < re->chunk ? m - from : re->chunk;
        lik->model->score(lik, re->centre, rows + from, mc, re->score_rows, NULL, NULL);
        for (int j = 0; j < re->D; j++) re->centre_score[j] += sign * re->score_rows[j];
    }
}

/* the centre moved to par, its score sum over every row recomputed */
static void recentre(sgfs_ranef *re, sgfs_lik *lik, const double *par)
{
    memcpy(re->centre, par, (size_t) re->D * sizeof(double));
    for (int j = 0; j < re->D; j++) re->centre_score[j] = 0.0;
    centre_score_add(re, lik, re->every_row, re->N, 1.0);
}

double *sgfs_ranef_centre(sgfs_ranef *re, sgfs_lik *lik, const double *centre, SEXP state,
                          int chunk)
{
    re->chunk = chunk > 0 ? chunk : 1;
    re->centre = re->cv_store;
    re->centre_score = re->cv_store + re->D;
    re->score_rows = re->cv_store + 2 * re->D;
    SEXP sc = sgfs_list_opt(state, "centre");
    if (sc != R_NilValue) {            /* continuing: the centre and its sum as they were */
        const double *v = REAL(sgfs_list_typed(state, "centre", REALSXP, 2 * (R_xlen_t) re->D));
        memcpy(re->centre, v, (size_t) re->D * sizeof(double));
        memcpy(re->centre_score, v + re->D, (size_t) re->D * sizeof(double));
        if (!sgfs_all_finite(re->centre, 2 * re->D))
            Rf_error("internal error: the state's centre is not finite");
    } else recentre(re, lik, centre);
    return re->centre;
}

/* one group's update: its rows' predictors without its effects, the
   draw, then its rows' offsets and the term's Q */
static void update_group(sgfs_ranef *re, sgfs_lik *lik, const double *par, int k, int g)
{
    sgfs_ranef_term *t = &re->term[k];
    const int q = t->q, from = t->start[g], m = t->start[g + 1] - from;
    if (m == 0) return;          /* (a level without rows: its effects' prior draw) */
    const int *rows = t->rows + from;
    double *b = t->b + (size_t) g * q, *old = re->work + 8 * q + 4 * q * q;
    sgfs_data_dots(lik->data, rows, m, par, re->eta);
    for (int i = 0; i < m; i++) {
        double own = 0.0;
        for (int c = 0; c < q; c++) {
            const double zc = t->Z[rows[i] + (size_t) c * re->N];
            re->z[i + (size_t) c * m] = zc;
            own += zc * b[c];
        }
        re->eta[i] += re->offset[rows[i]] - own;
    }
    memcpy(old, b, (size_t) q * sizeof(double));
    sgfs_ranef_group g_ = {lik, par, q, m, rows, re->eta, re->z, t->prec,
                           t->mode + (size_t) g * q, re->work};
    const int moved = sgfs_ranef_group_update(&g_, b, re->df);
    re->proposed += 1.0;
    if (moved <= 0) return;
    re->accepted += 1.0;
    if (re->centre) centre_score_add(re, lik, rows, m, -1.0);
    for (int i = 0; i < m; i++)
        for (int c = 0; c < q; c++)
            re->offset[rows[i]] += re->z[i + (size_t) c * m] * (b[c] - old[c]);
    if (re->centre) centre_score_add(re, lik, rows, m, 1.0);
    for (int c = 0; c < q; c++)
        for (int l = 0; l < q; l++) t->Q[l + c * q] += b[l] * b[c] - old[l] * old[c];
}

/* the translations of a term's coefficients that have a fixed counterpart:
   par + delta v_c (v_c the internal direction of that coefficient, where
   the parameters' priors are normal) with every group's coefficient c
   minus delta; the fixed part's prior along the line is normal in delta
   with precision sum_j p_j v_j^2 and linear term -sum_j p_j v_j (par_j -
   m_j) */
static void translate(sgfs_ranef *re, sgfs_ranef_term *t, const sgfs_prior *prior, double *par)
{
    const int q = t->q, D = re->D;
    for (int c = 0; c < q; c++) {
        const double *v = t->dir + (size_t) c * D;
        double a = 0.0, lin = 0.0;
        int normal = 1;
        for (int j = 0; j < D; j++) {
            if (v[j] == 0.0) continue;
            normal = normal && prior->type[j] == SGFS_PRIOR_NORMAL;
            a += prior->prec[j] * v[j] * v[j];
            lin -= prior->prec[j] * v[j] * (par[j] - prior->loc[j]);
        }
        if (!normal || !(a > 0.0)) continue;
        const double delta = sgfs_ranef_translation(t->b, q, t->G, c, t->prec, a, lin);
        for (int j = 0; j < D; j++) par[j] += delta * v[j];
        /* (the centre moves with the fixed effects: its rows' predictors,
           and so its score sum, stay as they were; the groups' modes move
           with their effects) */
        if (re->centre)
            for (int j = 0; j < D; j++) re->centre[j] += delta * v[j];
        for (int g = 0; g < t->G; g++) {
            t->b[c + (size_t) g * q] -= delta;
            t->mode[c + (size_t) g * q] -= delta;
        }
        for (int i = 0; i < re->N; i++) re->offset[i] -= delta * t->Z[i + (size_t) c * re->N];
        term_stats(re, t);                          /* (Q moved with the effects) */
    }
}

/* the move along nested terms' shared coefficient: for each outer group k,
   delta_k added to its coefficient c and taken from the same coefficient of
   each of its inner groups leaves every row's predictor unchanged, so its
   conditional involves the two normal priors alone: precision P_o,cc +
   n_k P_i,cc, mean ((sum_j P_i b_j)_c - (P_o b_k)_c) / precision, drawn
   exactly; O(G) for both terms, no pass over the rows (nor a change to the
   control variates' centre) */
static void nest_move(sgfs_ranef *re, const sgfs_ranef_nest *n)
{
    sgfs_ranef_term *o = &re->term[n->outer], *in = &re->term[n->inner];
    const int qo = o->q, qi = in->q, co = n->c_outer, ci = n->c_inner;
    for (int k = 0; k < o->G; k++) n->sum[k] = 0.0;
    for (int j = 0; j < in->G; j++)
        n->sum[n->parent[j]] += sgfs_ranef_prec_dot(in->prec, qi, ci, in->b + (size_t) j * qi);
    for (int k = 0; k < o->G; k++) {
        if (n->count[k] == 0.0) {
            n->sum[k] = 0.0;
            continue;
        }
        const double pb = sgfs_ranef_prec_dot(o->prec, qo, co, o->b + (size_t) k * qo);
        const double prec = o->prec[co + co * qo] + n->count[k] * in->prec[ci + ci * qi];
        const double delta = (n->sum[k] - pb) / prec + norm_rand() / sqrt(prec);
        o->b[co + (size_t) k * qo] += delta;
        o->mode[co + (size_t) k * qo] += delta;
        n->sum[k] = delta;
    }
    for (int j = 0; j < in->G; j++) {
        in->b[ci + (size_t) j * qi] -= n->sum[n->parent[j]];
        in->mode[ci + (size_t) j * qi] -= n->sum[n->parent[j]];
    }
    term_stats(re, o);
    term_stats(re, in);
}

/* every translation and nested move */
static void translate_all(sgfs_ranef *re, const sgfs_prior *prior, double *par)
{
    for (int k = 0; k < re->K; k++) translate(re, &re->term[k], prior, par);
    for (int h = 0; h < re->n_nest; h++) nest_move(re, &re->nest[h]);
}

/* the scale move's log density in v: the rows' likelihood at the effects
   times exp(v), and the sds' prior at the log sds plus v */
typedef struct {
    sgfs_ranef *re;
    const sgfs_ranef_term *t;
    const sgfs_lik *lik;
    const double *par;
    double dispersion;
} scale_line;

static double scale_logdens(const void *ctx, double v)
{
    const scale_line *l = ctx;
    const sgfs_ranef *re = l->re;
    const double s = exp(v);
    double f = 0.0;
    for (int i = 0; i < re->N; i++)
        f += l->lik->model->row_loglik(l->lik, l->par, i, re->base[i] + s * re->own[i]);
    const int q = l->t->q;
    double *x = re->work + q;
    memcpy(x, l->t->x, (size_t) (q * (q + 1) / 2) * sizeof(double));
    for (int c = 0; c < q; c++) x[c] += v;
    /* (G = 0, Q = 0: the effects' density cancels with the move's Jacobian) */
    sgfs_ranef_cov cv = {q, 0, re->zero, &l->t->prior, l->dispersion,
                         re->work + q + q * (q + 1) / 2};
    return f + sgfs_ranef_cov_logdens(&cv, x);
}

static void scale_move(sgfs_ranef *re, sgfs_ranef_term *t, const sgfs_lik *lik, const double *par,
                       double dispersion)
{
    const int N = re->N, q = t->q;
    sgfs_data_dots(lik->data, re->every_row, N, par, re->base);
    for (int i = 0; i < N; i++) {
        const double *b = t->b + (size_t) t->group[i] * q;
        double own = 0.0;
        for (int c = 0; c < q; c++) own += t->Z[i + (size_t) c * N] * b[c];
        re->own[i] = own;
        re->base[i] += re->offset[i] - own;
    }
    scale_line l = {re, t, lik, par, dispersion};
    const double v = sgfs_slice(0.0, scale_logdens, &l, t->scale[2]), s = exp(v);
    /* the slice's width: 1 for the first 2 SCALE_LEARN moves, then three
       times the root mean square of the second SCALE_LEARN of them (the
       first, while the effects grow from zero, move far more), fixed:
       each phase's kernel exact; an interval about the conditional's width
       takes about half the density evaluations of a width of 1 on a
       conditional a hundred times narrower */
    if (t->scale[0] < 2.0 * SCALE_LEARN) {
        t->scale[0] += 1.0;
        if (t->scale[0] > SCALE_LEARN) t->scale[1] += v * v;
        if (t->scale[0] == 2.0 * SCALE_LEARN)
            t->scale[2] = fmin(1.0, fmax(1e-4, 3.0 * sqrt(t->scale[1] / SCALE_LEARN)));
    }
    for (R_xlen_t j = 0; j < (R_xlen_t) q * t->G; j++) t->b[j] *= s;
    for (int c = 0; c < q; c++) t->x[c] += v;
    for (int j = 0; j < q * q; j++) t->Q[j] *= s * s;
    for (int i = 0; i < N; i++) re->offset[i] += (s - 1.0) * re->own[i];
}

void sgfs_ranef_update(sgfs_ranef *re, sgfs_lik *lik, const sgfs_prior *prior,
                       double *par, int budget)
{
    const double dispersion = re->dispersion >= 0 ? exp(par[re->dispersion]) : 1.0;
    /* the rows a group update spends beyond the iteration's budget are
       owed by the next iterations, so that every iteration spends the
       budget on average however large the groups */
    re->credit += budget;
    while (re->credit > 0.0) {
        if (re->pos == re->n_order) {
            if (!re->fresh) {                       /* a sweep's end */
                translate_all(re, prior, par);
                for (int k = 0; k < re->K; k++) {
                    scale_move(re, &re->term[k], lik, par, dispersion);
                    sgfs_ranef_precision(re->term[k].x, re->term[k].q, re->term[k].prec, re->work);
                }
                if (re->centre) recentre(re, lik, par);
                re->sweeps += 1.0;
            }
            for (int o = re->n_order - 1; o > 0; o--) {      /* Fisher-Yates */
                const int j = (int) floor(unif_rand() * (o + 1));
                const int g = re->order[o], k = re->order_term[o];
                re->order[o] = re->order[j];
                re->order_term[o] = re->order_term[j];
                re->order[j] = g;
                re->order_term[j] = k;
            }
            re->pos = 0;
            re->fresh = 0;
        }
        const int k = re->order_term[re->pos], g = re->order[re->pos];
        re->pos++;
        const sgfs_ranef_term *t = &re->term[k];
        update_group(re, lik, par, k, g);
        const int m = t->start[g + 1] - t->start[g];
        re->credit -= m > 0 ? m : 1;
        /* the translations TRANSLATIONS times a sweep (O(G q + N) each, no
           transcendental function): the fixed coefficients and the mean of
           their groups' effects trade off along them */
        const int every = re->n_order / TRANSLATIONS;
        if (re->sweeps > 0.0 && every > 0 && re->pos % every == 0 && re->pos < re->n_order)
            translate_all(re, prior, par);
    }
    /* (not before every group has been drawn once: with most effects
       still at their start, 0, a covariance's conditional would collapse
       towards 0, and the groups' draws with it) */
    if (re->sweeps == 0.0) return;
    for (int k = 0; k < re->K; k++) {
        sgfs_ranef_term *t = &re->term[k];
        sgfs_ranef_cov cv = {t->q, t->G, t->Q, &t->prior, dispersion, re->work};
        sgfs_ranef_cov_update(&cv, t->x);
        sgfs_ranef_precision(t->x, t->q, t->prec, re->work);
    }
}

/* decov()'s sds scale with the model coordinate d = exp(par[dispersion])
   (a gaussian model's sigma, as in rstanarm): s = d tau sqrt(q pi), so the
   sds' prior adds to d's gradient, in log d, tau / scale - shape a term
   (tau = |s| / (d sqrt(q)); the Gamma's and the Jacobians' terms in d) */
void sgfs_ranef_prior_grad(const sgfs_ranef *re, const double *par, double *grad)
{
    if (re->dispersion < 0) return;
    const double d = exp(par[re->dispersion]);
    for (int k = 0; k < re->K; k++) {
        const sgfs_ranef_term *t = &re->term[k];
        if (t->prior.family != SGFS_SD_DECOV) continue;
        double ss = 0.0;
        for (int c = 0; c < t->q; c++) ss += exp(2.0 * t->x[c]);
        const double tau = sqrt(ss / t->q) / d;
        grad[re->dispersion] += tau / t->prior.scale - t->prior.shape;
    }
}

void sgfs_ranef_report(const sgfs_ranef *re, double *out)
{
    int o = 0;
    for (int k = 0; k < re->K; k++) {
        const sgfs_ranef_term *t = &re->term[k];
        sgfs_ranef_sds_cors(t->x, t->q, out + o, re->work);
        o += t->q * (t->q + 1) / 2;
    }
    if (!re->keep_effects) return;
    for (int k = 0; k < re->K; k++) {
        const sgfs_ranef_term *t = &re->term[k];
        memcpy(out + o, t->b, (size_t) t->q * t->G * sizeof(double));
        o += t->q * t->G;
    }
}

void sgfs_ranef_keep(sgfs_ranef *re, double *out)
{
    sgfs_ranef_report(re, out);
    if (re->keep_effects) return;
    for (int k = 0; k < re->K; k++) {
        const sgfs_ranef_term *t = &re->term[k];
        for (R_xlen_t j = 0; j < (R_xlen_t) t->q * t->G; j++) {
            t->sum[j] += t->b[j];
            t->sum_sq[j] += t->b[j] * t->b[j];
        }
    }
    re->n_summed += 1.0;
}

/* a list of each term's q x G matrix of one of its per-group fields */
enum { FIELD_B, FIELD_MODE, FIELD_SUM, FIELD_SUM_SQ };
static SEXP term_matrices(const sgfs_ranef *re, int field)
{
    SEXP out = PROTECT(Rf_allocVector(VECSXP, re->K));
    for (int k = 0; k < re->K; k++) {
        const sgfs_ranef_term *t = &re->term[k];
        const double *v = field == FIELD_B ? t->b : field == FIELD_MODE ? t->mode
                        : field == FIELD_SUM ? t->sum : t->sum_sq;
        SEXP m = SET_VECTOR_ELT(out, k, Rf_allocMatrix(REALSXP, t->q, t->G));
        memcpy(REAL(m), v, (size_t) t->q * t->G * sizeof(double));
    }
    UNPROTECT(1);
    return out;
}

SEXP sgfs_ranef_state(const sgfs_ranef *re)
{
    const char *names[] = {"b", "x", "sweep", "acceptance", "mode", "credit", "sums", "centre",
                           "scale", "sweeps", ""};
    SEXP out = PROTECT(Rf_mkNamed(VECSXP, names));
    SET_VECTOR_ELT(out, 0, term_matrices(re, FIELD_B));
    SEXP x = SET_VECTOR_ELT(out, 1, Rf_allocVector(VECSXP, re->K));
    for (int k = 0; k < re->K; k++) {
        const sgfs_ranef_term *t = &re->term[k];
        SEXP xk = SET_VECTOR_ELT(x, k, Rf_allocVector(REALSXP, t->q * (t->q + 1) / 2));
        memcpy(REAL(xk), t->x, (size_t) (t->q * (t->q + 1) / 2) * sizeof(double));
    }
    int *sw = INTEGER(SET_VECTOR_ELT(out, 2, Rf_allocVector(INTSXP, 1 + 2 * (R_xlen_t) re->n_order)));
    sw[0] = re->pos;
    for (int o = 0; o < re->n_order; o++) {
        sw[1 + o] = re->order[o];
        sw[1 + re->n_order + o] = re->order_term[o];
    }
    SET_VECTOR_ELT(out, 3, Rf_ScalarReal(re->proposed > 0 ? re->accepted / re->proposed : NA_REAL));
    SET_VECTOR_ELT(out, 4, term_matrices(re, FIELD_MODE));
    SET_VECTOR_ELT(out, 5, Rf_ScalarReal(re->credit));
    if (!re->keep_effects) {
        const char *snames[] = {"n", "sum", "sum_sq", ""};
        SEXP sums = SET_VECTOR_ELT(out, 6, Rf_mkNamed(VECSXP, snames));
        SET_VECTOR_ELT(sums, 0, Rf_ScalarReal(re->n_summed));
        SET_VECTOR_ELT(sums, 1, term_matrices(re, FIELD_SUM));
        SET_VECTOR_ELT(sums, 2, term_matrices(re, FIELD_SUM_SQ));
    }
    SET_VECTOR_ELT(out, 9, Rf_ScalarReal(re->sweeps));
    double *sc = REAL(SET_VECTOR_ELT(out, 8, Rf_allocVector(REALSXP, 3 * (R_xlen_t) re->K)));
    for (int k = 0; k < re->K; k++) memcpy(sc + 3 * k, re->term[k].scale, 3 * sizeof(double));
    if (re->centre) {
        double *c = REAL(SET_VECTOR_ELT(out, 7, Rf_allocVector(REALSXP, 2 * (R_xlen_t) re->D)));
        memcpy(c, re->centre, (size_t) re->D * sizeof(double));
        memcpy(c + re->D, re->centre_score, (size_t) re->D * sizeof(double));
    }
    UNPROTECT(1);
    return out;
}
