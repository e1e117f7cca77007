/*
 * model_mlp.c - feed-forward networks with one or two hidden layers and the
 * family's output layer (ALGORITHMS.md 3.2), on a minibatch with dgemm.
 *
 * Layer l = 1..L maps h_{l-1} (width w_{l-1}; h_0 = u, the P inputs) to
 *   a_l = W_l' h_{l-1} + b_l,   h_l = phi(a_l)  (hidden layers),
 *   z   = a_L                                    (output layer),
 * with W_l a w_{l-1} x w_l matrix (column k: the weights into unit k) and
 * phi = tanh, logistic or relu.  The output z (w_L units) enters
 *   binomial:    l = y z - softplus(z),            delta_L = y - sigmoid(z);
 *   gaussian:    l = -log s - log(2 pi)/2 - r^2 / (2 s^2), r = y - z,
 *                delta_L = r / s^2,  dl/dlog s = r^2 / s^2 - 1;
 *   categorical: softmax with class 0 the reference (logit 0),
 *                delta_L = e_y - p;
 *   poisson:     l = y z - exp(z) - log y!  (z the log mean),
 *                delta_L = y - exp(z).
 * Back-propagation: delta_{l-1} = (W_l delta_l) .* phi'(a_{l-1}), with
 * phi' from h: 1 - h^2 (tanh), h (1 - h) (logistic), 1{h > 0} (relu), and
 *   dl/dW_l = h_{l-1} delta_l',   dl/db_l = delta_l.
 * For a minibatch (one example per column) every product is one dgemm; the
 * per-example scores are the outer products h_{l-1,i} delta_{l,i}'.
 *
 * theta = (vec W_1, b_1, ..., vec W_L, b_L, [log_sigma]).
 * mpar = (output: 0 binomial, 1 gaussian, 2 categorical, 3 poisson; w_L; activation:
 *         0 tanh, 1 logistic, 2 relu; hidden layers L - 1; w_1; w_2;
 *         fixed log sigma or NA when it is sampled).
 * Scratch (e->eta): h_l and delta_l of the hidden layers and z, w_L x n.
 * Minus the Hessian: central differences of the score (model.c).
 */
#include "sgfs.h"

#define HALF_LOG_2PI 0.918938533204672741780329736406
#define MAX_LAYERS 3

enum { OUT_BINOMIAL = 0, OUT_GAUSSIAN = 1, OUT_CATEGORICAL = 2, OUT_POISSON = 3 };
enum { ACT_TANH = 0, ACT_LOGISTIC = 1, ACT_RELU = 2 };

typedef struct mlp_shape {
    int out, act, L;              /* output kind, activation, layers        */
    int w[MAX_LAYERS + 1];        /* widths: w[0] = P, ..., w[L] outputs    */
    size_t W[MAX_LAYERS + 1], b[MAX_LAYERS + 1];   /* offsets in theta      */
    int D;                        /* parameters, log sigma included         */
    int sigma_sampled;
} mlp_shape;

static mlp_shape shape_of(int P, const double *mpar)
{
    mlp_shape s;
    s.out = (int) mpar[0];
    s.act = (int) mpar[2];
    s.L = (int) mpar[3] + 1;
    s.w[0] = P;
    for (int l = 1; l < s.L; l++) s.w[l] = (int) mpar[3 + l];
    s.w[s.L] = (int) mpar[1];
    size_t off = 0;
    for (int l = 1; l <= s.L; l++) {
        s.W[l] = off;
        off += (size_t) s.w[l - 1] * s.w[l];
        s.b[l] = off;
        off += s.w[l];
    }
    s.sigma_sampled = s.out == OUT_GAUSSIAN && ISNAN(mpar[6]);
    s.D = (int) off + s.sigma_sampled;
    return s;
}

static int whole_in(double x, double lo, double hi)
{
    return x >= lo && x <= hi && x == floor(x);
}

/* the settings are read by shape_of() everywhere else: checked here, once */
static int mlp_n_par(int P, const double *mpar, int n_mpar)
{
    if (n_mpar < 7 || !whole_in(mpar[0], 0, OUT_POISSON) || !whole_in(mpar[2], 0, 2) ||
        !whole_in(mpar[3], 1, MAX_LAYERS - 1) || !whole_in(mpar[1], 1, 1e6))
        return -1;
    double widths[MAX_LAYERS + 1], D = 0.0;
    const int L = (int) mpar[3] + 1;
    widths[0] = P;
    for (int l = 1; l < L; l++) {
        if (!whole_in(mpar[3 + l], 1, 1e6)) return -1;
        widths[l] = mpar[3 + l];
    }
    widths[L] = mpar[1];
    for (int l = 1; l <= L; l++) D += widths[l] * (widths[l - 1] + 1.0);
    if (D + 1.0 > INT_MAX) return -1;
    return shape_of(P, mpar).D;
}

static R_xlen_t mlp_scratch(int P, int n, const double *mpar)
{
    mlp_shape s = shape_of(P, mpar);
    R_xlen_t units = s.w[s.L];
    for (int l = 1; l < s.L; l++) units += 2 * (R_xlen_t) s.w[l];
    return units * n;
}

/* the layer buffers in e->eta: h[l], delta[l] (w_l x n), l = 1..L-1, and
   z = delta[L] (w_L x n) */
static void buffers(const sgfs_engine *e, const mlp_shape *s, int n,
                    double **h, double **delta)
{
    double *p = e->eta;
    for (int l = 1; l < s->L; l++) {
        h[l] = p;
        p += (size_t) s->w[l] * n;
        delta[l] = p;
        p += (size_t) s->w[l] * n;
    }
    delta[s->L] = p;
}

static void activate(int act, double *a, size_t len)
{
    switch (act) {
    case ACT_TANH:
        for (size_t k = 0; k < len; k++) a[k] = tanh(a[k]);
        break;
    case ACT_LOGISTIC:
        for (size_t k = 0; k < len; k++) a[k] = 1.0 / (1.0 + exp(-a[k]));
        break;
    default:
        for (size_t k = 0; k < len; k++) a[k] = a[k] > 0.0 ? a[k] : 0.0;
    }
}

/* d *= phi'(a), phi' written through h = phi(a) */
static void times_derivative(int act, const double *h, double *d, size_t len)
{
    switch (act) {
    case ACT_TANH:
        for (size_t k = 0; k < len; k++) d[k] *= 1.0 - h[k] * h[k];
        break;
    case ACT_LOGISTIC:
        for (size_t k = 0; k < len; k++) d[k] *= h[k] * (1.0 - h[k]);
        break;
    default:
        for (size_t k = 0; k < len; k++) if (!(h[k] > 0.0)) d[k] = 0.0;
    }
}

/* forward pass for the examples in the columns of x (P x n): the hidden
   h[l] and the outputs z = delta[L] */
static void forward(const sgfs_engine *e, const mlp_shape *s,
                    const double *theta, const double *x, int n,
                    double **h, double **delta)
{
    const double *in = x;
    buffers(e, s, n, h, delta);
    for (int l = 1; l <= s->L; l++) {
        const int wi = s->w[l - 1], wo = s->w[l];
        double *a = l < s->L ? h[l] : delta[s->L];
        const double *bias = theta + s->b[l];
        for (int i = 0; i < n; i++)
            memcpy(a + (size_t) i * wo, bias, (size_t) wo * sizeof(double));
        sgfs_gemm('T', 'N', wo, n, wi, theta + s->W[l], wi, in, wi, 1.0, a, wo);
        if (l < s->L) activate(s->act, a, (size_t) wo * n);
        in = a;
    }
}

static double log_sigma_of(const mlp_shape *s, const double *theta,
                           const double *mpar)
{
    return s->sigma_sampled ? theta[s->D - 1] : mpar[6];
}

/* the outputs z (w_L x n) to the output deltas in place; returns the
   log-likelihood sum; with sigma_score != NULL also the sum of
   dl/dlog sigma and, with G, each example's into G[D - 1, i] */
static double output_delta(const sgfs_engine *e, const mlp_shape *s,
                           const double *theta, const int *idx, int n,
                           double *z, double *G, double *sigma_score)
{
    const int K = s->w[s->L];
    double ll = 0.0;
    if (s->out == OUT_BINOMIAL) {
        for (int i = 0; i < n; i++) z[i] = sgfs_binomial_residual(e->y[idx[i]], z[i], &ll);
    } else if (s->out == OUT_POISSON) {
        for (int i = 0; i < n; i++) {
            const double y = e->y[idx[i]], mu = exp(z[i]);
            ll += y * z[i] - mu - lgamma(y + 1.0);
            z[i] = y - mu;
        }
    } else if (s->out == OUT_CATEGORICAL) {
        for (int i = 0; i < n; i++) {
            double *zi = z + (size_t) i * K;
            const int y = (int) e->y[idx[i]];
            ll += (y > 0 ? zi[y - 1] : 0.0) - sgfs_softmax_ref(zi, 1, K);
            for (int k = 0; k < K; k++) zi[k] = (y == k + 1) - zi[k];
        }
    } else {
        const double log_sigma = log_sigma_of(s, theta, e->mpar);
        const double prec = exp(-2.0 * log_sigma);
        double rss = 0.0;
        for (int i = 0; i < n; i++) {
            const double r = e->y[idx[i]] - z[i];
            rss += r * r;
            if (G && s->sigma_sampled) G[s->D - 1 + (size_t) i * s->D] = r * r * prec - 1.0;
            z[i] = r * prec;
        }
        ll = -n * (log_sigma + HALF_LOG_2PI) - 0.5 * rss * prec;
        if (sigma_score) *sigma_score = rss * prec - n;
    }
    return ll;
}

static void mlp_score(sgfs_engine *e, const double *theta, const int *idx,
                      int n, double *sum, double *G, double *loglik)
{
    const mlp_shape s = shape_of(e->P, e->mpar);
    double *h[MAX_LAYERS + 1], *delta[MAX_LAYERS + 1], sigma_score = 0.0;
    const double *x = sgfs_batch_columns(e, NULL, idx, n, NULL);
    forward(e, &s, theta, x, n, h, delta);
    const double ll = output_delta(e, &s, theta, idx, n, delta[s.L], G, &sigma_score);
    if (loglik) *loglik = ll;
    if (s.sigma_sampled) sum[s.D - 1] = sigma_score;
    for (int l = s.L; l >= 1; l--) {
        const int wi = s.w[l - 1], wo = s.w[l];
        const double *in = l > 1 ? h[l - 1] : x, *d = delta[l];
        sgfs_gemm('N', 'T', wi, wo, n, in, wi, d, wo, 0.0, sum + s.W[l], wi);
        double *gb = sum + s.b[l];
        for (int k = 0; k < wo; k++) gb[k] = 0.0;
        for (int i = 0; i < n; i++)
            for (int k = 0; k < wo; k++) gb[k] += d[k + (size_t) i * wo];
        if (G)
            for (int i = 0; i < n; i++) {
                double *restrict g = G + (size_t) i * s.D;
                const double *restrict u = in + (size_t) i * wi;
                const double *restrict di = d + (size_t) i * wo;
                for (int k = 0; k < wo; k++) {
                    double *restrict gw = g + s.W[l] + (size_t) k * wi;
                    for (int j = 0; j < wi; j++) gw[j] = di[k] * u[j];
                    g[s.b[l] + k] = di[k];
                }
            }
        if (l > 1) {
            sgfs_gemm('N', 'N', wi, n, wo, theta + s.W[l], wi, d, wo, 0.0,
                      delta[l - 1], wi);
            times_derivative(s.act, h[l - 1], delta[l - 1], (size_t) wi * n);
        }
    }
}

static double mlp_loglik(sgfs_engine *e, const double *theta, const int *idx,
                         int n)
{
    const mlp_shape s = shape_of(e->P, e->mpar);
    double *h[MAX_LAYERS + 1], *delta[MAX_LAYERS + 1];
    forward(e, &s, theta, sgfs_batch_columns(e, NULL, idx, n, NULL), n, h, delta);
    return output_delta(e, &s, theta, idx, n, delta[s.L], NULL, NULL);
}

static int mlp_n_pred(const double *mpar)
{
    const int out = (int) mpar[0];
    return out == OUT_CATEGORICAL ? (int) mpar[1] + 1 : out == OUT_GAUSSIAN ? 2 : 1;
}

static void mlp_predict(sgfs_engine *e, const double *theta, const double *x,
                        int m, double *out)
{
    const mlp_shape s = shape_of(e->P, e->mpar);
    double *h[MAX_LAYERS + 1], *delta[MAX_LAYERS + 1];
    forward(e, &s, theta, x, m, h, delta);
    double *z = delta[s.L];
    if (s.out == OUT_BINOMIAL) sgfs_add_binomial_pred(z, 1, m, out);
    else if (s.out == OUT_POISSON)
        for (int i = 0; i < m; i++) out[i] += exp(z[i]);
    else if (s.out == OUT_GAUSSIAN)
        sgfs_add_gaussian_pred(z, 1, m, log_sigma_of(&s, theta, e->mpar), out);
    else sgfs_add_class_pred(z, 1, (size_t) s.w[s.L], m, s.w[s.L], out);
}

static int mlp_n_out(const double *mpar, int *kind)
{
    const int out = (int) mpar[0];
    *kind = out == OUT_CATEGORICAL ? SGFS_OUT_CATEGORICAL
          : out == OUT_GAUSSIAN ? SGFS_OUT_GAUSSIAN
          : out == OUT_POISSON ? SGFS_OUT_POISSON : SGFS_OUT_BINOMIAL;
    return (int) mpar[1];
}

/* one forward pass per draw (each draw has its own weights), its output
   layer z (w_L x m) copied to the draw's slots */
static void mlp_outputs(sgfs_engine *e, const double *theta, int S,
                        const double *x, int m, double *z, size_t ldz, size_t ldk)
{
    const mlp_shape s = shape_of(e->P, e->mpar);
    const int K = s.w[s.L];
    double *h[MAX_LAYERS + 1], *delta[MAX_LAYERS + 1];
    for (int d = 0; d < S; d++) {
        forward(e, &s, theta + (size_t) d * e->D, x, m, h, delta);
        const double *out = delta[s.L];
        for (int i = 0; i < m; i++)
            for (int k = 0; k < K; k++)
                z[d + i * ldz + k * ldk] = out[k + (size_t) i * K];
    }
}

const sgfs_model sgfs_model_mlp = {
    .name = "mlp", .n_par = mlp_n_par, .score = mlp_score, .loglik = mlp_loglik,
    .scratch = mlp_scratch, .n_pred = mlp_n_pred, .predict = mlp_predict,
    .n_out = mlp_n_out, .outputs = mlp_outputs
};
