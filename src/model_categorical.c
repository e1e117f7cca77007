/*
 * model_categorical.c - multinomial logistic (softmax) regression for K
 * classes, the first class the reference (its coefficients fixed at 0, so
 * that the likelihood identifies every parameter):
 *
 *   eta_ik = u_i' beta_k (k = 1..K-1),  eta_i0 = 0,
 *   p_ik   = exp(eta_ik) / sum_l exp(eta_il),
 *   l_i    = eta_{i y_i} - log sum_l exp(eta_il),
 *   dl_i / dbeta_k = (1{y_i = k} - p_ik) u_i,
 *   -d^2 l_i / dbeta_k dbeta_l' = p_ik (1{k = l} - p_il) u_i u_i'.
 *
 * theta = vec(B), B = (beta_1, ..., beta_{K-1}) (P x (K-1)); y_i in
 * 0..K-1; mpar[0] = K.  With prior weights w_i (lik->data->weights; 1 without:
 * frequency or case weights, as nnet::multinom's) row i contributes w_i l_i,
 * w_i times its score and w_i times its curvature.  The linear predictors of the minibatch are one
 * dgemm, E = xb' B (n x (K-1), in lik->eta), and the score sum another,
 * xb R with R the residuals.
 */
#include "sgfs.h"

static int n_class(const double *mpar)
{
    return (int) mpar[0];
}

/* row idx's prior weight (1 without weights) */
static double row_weight(const sgfs_lik *lik, int idx)
{
    return lik->data->weights ? lik->data->weights[idx] : 1.0;
}

static int categorical_n_par(int P, const double *mpar, int n_mpar)
{
    if (n_mpar < 1 || !(mpar[0] >= 2 && mpar[0] <= 1e6) || mpar[0] != floor(mpar[0]) ||
        (double) P * (mpar[0] - 1) > INT_MAX)
        return -1;
    return P * (n_class(mpar) - 1);
}

/* E = xb' B into lik->eta (n x (K-1)); returns the columns xb */
static const double *predictors(sgfs_lik *lik, const double *theta,
                                const int *idx, int n)
{
    const int P = lik->data->P, K1 = n_class(lik->mpar) - 1;
    const double *xb = sgfs_batch_columns(lik, NULL, idx, n, NULL);
    sgfs_gemm('T', 'N', n, K1, P, xb, P, theta, P, 0.0, lik->eta, n);
    return xb;
}

static void categorical_score(sgfs_lik *lik, const double *theta,
                              const int *idx, int n, double *sum, double *G,
                              double *loglik)
{
    const int P = lik->data->P, D = lik->D, K1 = n_class(lik->mpar) - 1;
    double *E = lik->eta, ll = 0.0;
    const double *xb = predictors(lik, theta, idx, n);
    for (int i = 0; i < n; i++) {
        const int y = (int) lik->data->y[idx[i]];
        const double w = row_weight(lik, idx[i]);
        const double eta_y = y > 0 ? E[i + (size_t) (y - 1) * n] : 0.0;
        ll += w * (eta_y - sgfs_softmax_ref(E + i, n, K1));
        for (int k = 0; k < K1; k++)               /* residuals w (1{y = k} - p_k) */
            E[i + (size_t) k * n] = w * ((y == k + 1) - E[i + (size_t) k * n]);
    }
    if (loglik) *loglik = ll;
    sgfs_gemm('N', 'N', P, K1, n, xb, P, E, n, 0.0, sum, P);   /* xb R */
    if (G)
        for (int i = 0; i < n; i++) {
            const double *restrict u = xb + (size_t) i * P;
            double *restrict g = G + (size_t) i * D;
            for (int k = 0; k < K1; k++) {
                const double r = E[i + (size_t) k * n];
                for (int j = 0; j < P; j++) g[j + (size_t) k * P] = r * u[j];
            }
        }
}

/* sum_i [g_i(B) - g_i(Bc)]: column k is sum_i (pc_ik - p_ik) u_i, p and pc
   the class probabilities at B and at the centre Bc, from one gather.
   Second order: plus sum_i (W_i m_i)_k u_i, m_i = eta_i - eta_i(Bc) and
   (W_i m)_k = pc_ik (m_k - sum_l pc_il m_l) (the header's Hessian at Bc) */
static void categorical_score_change(sgfs_lik *lik, const double *theta,
                                     const double *centre, int second,
                                     const int *idx, int n, double *sum)
{
    const int P = lik->data->P, K1 = n_class(lik->mpar) - 1;
    const size_t len = (size_t) n * K1;
    double *E = lik->eta, *Ec = lik->eta_centre, *M = lik->eta_centre + len;
    const double *xb = predictors(lik, theta, idx, n);
    sgfs_gemm('T', 'N', n, K1, P, xb, P, centre, P, 0.0, Ec, n);
    if (second)
        for (size_t k = 0; k < len; k++) M[k] = E[k] - Ec[k];
    for (int i = 0; i < n; i++) {
        sgfs_softmax_ref(E + i, n, K1);
        sgfs_softmax_ref(Ec + i, n, K1);
        double pm = 0.0;
        if (second)
            for (int k = 0; k < K1; k++) pm += Ec[i + (size_t) k * n] * M[i + (size_t) k * n];
        const double w = row_weight(lik, idx[i]);
        for (int k = 0; k < K1; k++) {
            const size_t o = i + (size_t) k * n;
            E[o] = w * (Ec[o] - E[o] + (second ? Ec[o] * (M[o] - pm) : 0.0));
        }
    }
    sgfs_gemm('N', 'N', P, K1, n, xb, P, E, n, 0.0, sum, P);
}

static double categorical_loglik(sgfs_lik *lik, const double *theta,
                                 const int *idx, int n)
{
    const int K1 = n_class(lik->mpar) - 1;
    double *E = lik->eta, ll = 0.0;
    predictors(lik, theta, idx, n);
    for (int i = 0; i < n; i++) {
        const int y = (int) lik->data->y[idx[i]];
        ll += row_weight(lik, idx[i]) *
              ((y > 0 ? E[i + (size_t) (y - 1) * n] : 0.0) - sgfs_softmax_ref(E + i, n, K1));
    }
    return ll;
}

/* block (k, l) of H += sum_i w_i p_ik (1{k = l} - p_il) u_i u_i', from
   the columns scaled by that weight (in lik->G) times the columns */
static void categorical_neg_hessian(sgfs_lik *lik, const double *theta,
                                    const int *idx, int n, double *H)
{
    const int P = lik->data->P, D = lik->D, K1 = n_class(lik->mpar) - 1;
    double *E = lik->eta, *A = lik->G;
    const double *xb = predictors(lik, theta, idx, n);
    for (int i = 0; i < n; i++) sgfs_softmax_ref(E + i, n, K1);
    for (int k = 0; k < K1; k++)
        for (int l = k; l < K1; l++) {
            for (int i = 0; i < n; i++) {
                const double pk = E[i + (size_t) k * n], pl = E[i + (size_t) l * n];
                const double w = row_weight(lik, idx[i]) * pk * ((k == l) - pl);
                const double *restrict u = xb + (size_t) i * P;
                double *restrict a = A + (size_t) i * P;
                for (int j = 0; j < P; j++) a[j] = w * u[j];
            }
            double *block = H + (size_t) k * P + (size_t) l * P * D;
            sgfs_gemm('N', 'T', P, P, n, A, P, xb, P, 1.0, block, D);
        }
}

/* class k + 1's linear predictor on a line that adds t to class cls's
   (cls >= 1) or to every class's but the reference's (cls = 0) */
static double line_predictor(const double *eta, size_t stride, int k, int cls, double t)
{
    return eta[(size_t) k * stride] + (cls == 0 || cls == k + 1 ? t : 0.0);
}

/* w_i l_i on that line, the row's K - 1 predictors stride apart in eta: a
   separated level's line (separated.c) */
static double categorical_line_loglik(const sgfs_lik *lik, int row, const double *eta,
                                      size_t stride, int cls, double t)
{
    const int K1 = n_class(lik->mpar) - 1, y = (int) lik->data->y[row];
    double top = 0.0, sum = 0.0;                     /* (the reference class's 0) */
    for (int k = 0; k < K1; k++) {
        const double z = line_predictor(eta, stride, k, cls, t);
        if (z > top) top = z;
    }
    for (int k = 0; k < K1; k++) sum += exp(line_predictor(eta, stride, k, cls, t) - top);
    const double own = y > 0 ? line_predictor(eta, stride, y - 1, cls, t) : 0.0;
    return row_weight(lik, row) * (own - top - log(exp(-top) + sum));
}

/* its derivatives: with S the classes the line moves (cls alone, or every
   class but the reference) and P_S their probability, dl/dt = 1[y in S] -
   P_S and -d^2 l/dt^2 = P_S (1 - P_S), weighted */
static void categorical_line_derivs(const sgfs_lik *lik, int row, const double *eta,
                                    size_t stride, int cls, double t, double *d)
{
    const int K1 = n_class(lik->mpar) - 1, y = (int) lik->data->y[row];
    double top = 0.0, sum, moved = 0.0;
    for (int k = 0; k < K1; k++) {
        const double z = line_predictor(eta, stride, k, cls, t);
        if (z > top) top = z;
    }
    sum = exp(-top);                                 /* (the reference class) */
    for (int k = 0; k < K1; k++) {
        const double p = exp(line_predictor(eta, stride, k, cls, t) - top);
        sum += p;
        if (cls == 0 || cls == k + 1) moved += p;
    }
    const double ps = moved / sum, w = row_weight(lik, row);
    const int in = cls == 0 ? y > 0 : y == cls;
    d[0] = w * ((double) in - ps);
    d[1] = w * ps * (1.0 - ps);
}

static int categorical_n_pred(const double *mpar)
{
    return n_class(mpar);
}

static void categorical_predict(sgfs_lik *lik, const double *theta,
                                const double *x, int m, double *out)
{
    const int P = lik->data->P, K1 = n_class(lik->mpar) - 1;
    sgfs_gemm('T', 'N', m, K1, P, x, P, theta, P, 0.0, lik->eta, m);
    sgfs_add_class_pred(lik->eta, m, 1, m, K1, out);
}

/* the K - 1 logits, which draws.c maps (no draw_value) */
static int categorical_n_out(const double *mpar, const sgfs_model **out)
{
    (void) out;
    return n_class(mpar) - 1;
}

static void categorical_outputs(sgfs_lik *lik, const double *theta, int S,
                                const double *x, int m, double *z, size_t ldz, size_t ldk)
{
    sgfs_linear_outputs(theta, lik->D, lik->data->P, n_class(lik->mpar) - 1, S, x, m, z, ldz, ldk);
}

static int categorical_n_class(int n_out)
{
    return n_out + 1;
}

/* the K - 1 logits zk (class 0 the reference, logit 0) to the link (0, z_1,
   ..., z_{K-1}), the probabilities exp(z_k) / (1 + sum_l exp(z_l)) or the
   log probability z_y - log(1 + sum_l exp(z_l)); zk is scratch (overwritten) */
static void categorical_class_value(int what, const double *zk, size_t ldk, int n_out, int y,
                                    const double *mpar, double *dest, size_t plane)
{
    (void) mpar;
    double *z = (double *) zk;
    if (what == SGFS_DRAW_LINK) {
        dest[0] = 0.0;
        for (int k = 0; k < n_out; k++) dest[(k + 1) * plane] = z[k * ldk];
        return;
    }
    if (what == SGFS_DRAW_LOGLIK) {
        const double zy = y > 0 ? z[(y - 1) * ldk] : 0.0;
        dest[0] = zy - sgfs_softmax_ref(z, ldk, n_out);
        return;
    }
    sgfs_softmax_sum(z, ldk, n_out, NULL, dest);           /* dest: the reference class */
    for (int k = 0; k < n_out; k++) dest[(k + 1) * plane] = z[k * ldk];
}

const sgfs_model sgfs_model_categorical = {
    .name = "categorical", .weighted = 1,
    .n_par = categorical_n_par, .score = categorical_score,
    .loglik = categorical_loglik, .neg_hessian = categorical_neg_hessian,
    .n_pred = categorical_n_pred, .predict = categorical_predict,
    .score_change = categorical_score_change, .line_loglik = categorical_line_loglik,
    .line_derivs = categorical_line_derivs,
    .n_out = categorical_n_out, .outputs = categorical_outputs,
    .n_class = categorical_n_class, .class_value = categorical_class_value
};
