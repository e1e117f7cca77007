/*
 * model_mlp.c - feed-forward networks with one or two hidden layers and the
 * family's output layer (algorithms vignette 3.2), on a minibatch with dgemm.
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
 *         fixed log sigma or NA when it is sampled; precision of the score:
 *         0 double, 1 single).
 * Single precision (mlp(precision = "single"), where R's BLAS has sgemm):
 * the minibatch score's passes run in floats (the weights and the batch
 * rounded once per call, mlp_layers.h compiled for float), the output
 * layer's likelihood and deltas in doubles; log-likelihoods, predictions
 * and the sampler's state stay in double precision.
 * Scratch (lik->eta): h_l and delta_l of the hidden layers and z, w_L x n,
 * then in single precision the float pass's (mlp_scratch()).
 * Minus the Hessian: central differences of the score (model.c).
 */
#include "sgfs.h"

/* the GLMs whose draw_value maps an output layer's units (mlp_n_out) */
extern const sgfs_model sgfs_model_logistic, sgfs_model_gaussian, sgfs_model_poisson,
    sgfs_model_categorical;

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
    int single;                   /* the score's passes in floats           */
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
    s.single = mpar[7] == 1;
    return s;
}

static int whole_in(double x, double lo, double hi)
{
    return x >= lo && x <= hi && x == floor(x);
}

/* the settings are read by shape_of() everywhere else: checked here, once */
static int mlp_n_par(int P, const double *mpar, int n_mpar)
{
    if (n_mpar != 8 || !whole_in(mpar[0], 0, OUT_POISSON) || !whole_in(mpar[2], 0, 2) ||
        !whole_in(mpar[3], 1, MAX_LAYERS - 1) || !whole_in(mpar[1], 1, 1e6) ||
        !whole_in(mpar[7], 0, sgfs_has_sgemm()))
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

/* the weights and biases (theta without log sigma) */
static size_t n_weights(const mlp_shape *s)
{
    return (size_t) s->D - s->sigma_sampled;
}

/* the layer buffers' rows: h_l and delta_l of the hidden layers, and z */
static size_t units_of(const mlp_shape *s)
{
    size_t units = s->w[s->L];
    for (int l = 1; l < s->L; l++) units += 2 * (size_t) s->w[l];
    return units;
}

/* lik->eta: the double pass's layer buffers (units x n), then, in single
   precision, the single pass's floats: the weights, their score sums, the
   batch's inputs (P x n) and the layer buffers */
static R_xlen_t mlp_scratch(int P, int n, const double *mpar)
{
    mlp_shape s = shape_of(P, mpar);
    const size_t units = units_of(&s);
    const size_t floats = s.single ? 2 * n_weights(&s) + ((size_t) P + units) * n : 0;
    return (R_xlen_t) (units * n + (floats + 1) / 2);
}

/* the passes in double precision, and (where R's BLAS has sgemm) in single */
#define real double
#define GEMM sgfs_gemm
#define TANH tanh
#define EXP exp
#define LAYERS(name) name##_double
#include "mlp_layers.h"
#undef real
#undef GEMM
#undef TANH
#undef EXP
#undef LAYERS
#ifdef SGFS_HAVE_SGEMM
#define real float
#define GEMM sgfs_sgemm
#define TANH tanhf
#define EXP expf
#define LAYERS(name) name##_single
#include "mlp_layers.h"
#undef real
#undef GEMM
#undef TANH
#undef EXP
#undef LAYERS
#endif

/* forward pass in double precision for the columns of x (P x n) */
static void forward(const sgfs_lik *lik, const mlp_shape *s,
                    const double *theta, const double *x, int n,
                    double **h, double **delta)
{
    buffers_double(lik->eta, s, n, h, delta);
    forward_double(s, theta, x, n, h, delta);
}

static double log_sigma_of(const mlp_shape *s, const double *theta,
                           const double *mpar)
{
    return s->sigma_sampled ? theta[s->D - 1] : mpar[6];
}

/* the outputs z (w_L x n) to the output deltas in place; returns the
   log-likelihood sum; with sigma_score != NULL also the sum of
   dl/dlog sigma and, with G, each example's into G[D - 1, i] */
static double output_delta(const sgfs_lik *lik, const mlp_shape *s,
                           const double *theta, const int *idx, int n,
                           double *z, double *G, double *sigma_score)
{
    const int K = s->w[s->L];
    double ll = 0.0;
    if (s->out == OUT_BINOMIAL) {
        for (int i = 0; i < n; i++) z[i] = sgfs_binomial_residual(lik->data->y[idx[i]], z[i], &ll);
    } else if (s->out == OUT_POISSON) {
        for (int i = 0; i < n; i++) {
            const double y = lik->data->y[idx[i]], mu = exp(z[i]);
            ll += y * z[i] - mu - lgamma(y + 1.0);
            z[i] = y - mu;
        }
    } else if (s->out == OUT_CATEGORICAL) {
        for (int i = 0; i < n; i++) {
            double *zi = z + (size_t) i * K;
            const int y = (int) lik->data->y[idx[i]];
            ll += (y > 0 ? zi[y - 1] : 0.0) - sgfs_softmax_ref(zi, 1, K);
            for (int k = 0; k < K; k++) zi[k] = (y == k + 1) - zi[k];
        }
    } else {
        const double log_sigma = log_sigma_of(s, theta, lik->mpar);
        const double prec = exp(-2.0 * log_sigma);
        double rss = 0.0;
        for (int i = 0; i < n; i++) {
            const double r = lik->data->y[idx[i]] - z[i];
            rss += r * r;
            if (G && s->sigma_sampled) G[s->D - 1 + (size_t) i * s->D] = r * r * prec - 1.0;
            z[i] = r * prec;
        }
        ll = -n * (log_sigma + HALF_LOG_2PI) - 0.5 * rss * prec;
        if (sigma_score) *sigma_score = rss * prec - n;
    }
    return ll;
}

#ifdef SGFS_HAVE_SGEMM
/* the score in single precision: theta and the batch rounded to floats,
   the passes in floats, the output layer's likelihood in doubles */
static double score_single(sgfs_lik *lik, const mlp_shape *s, const double *theta,
                           const double *x, const int *idx, int n, double *sum,
                           double *G, double *sigma_score)
{
    const size_t Dw = n_weights(s), Px = (size_t) s->w[0] * n, K = s->w[s->L];
    double *z = lik->eta;                         /* the double pass's room */
    float *w = (float *) (lik->eta + units_of(s) * n);
    float *gw = w + Dw, *xf = gw + Dw, *h[MAX_LAYERS + 1], *delta[MAX_LAYERS + 1];
    for (size_t j = 0; j < Dw; j++) w[j] = (float) theta[j];
    for (size_t j = 0; j < Px; j++) xf[j] = (float) x[j];
    buffers_single(xf + Px, s, n, h, delta);
    forward_single(s, w, xf, n, h, delta);
    float *zf = delta[s->L];
    for (size_t j = 0; j < K * n; j++) z[j] = zf[j];
    const double ll = output_delta(lik, s, theta, idx, n, z, G, sigma_score);
    for (size_t j = 0; j < K * n; j++) zf[j] = (float) z[j];
    backward_single(s, w, xf, n, h, delta, gw, G);
    for (size_t j = 0; j < Dw; j++) sum[j] = gw[j];
    return ll;
}
#endif

static void mlp_score(sgfs_lik *lik, const double *theta, const int *idx,
                      int n, double *sum, double *G, double *loglik)
{
    const mlp_shape s = shape_of(lik->data->P, lik->mpar);
    double sigma_score = 0.0, ll;
    const double *x = sgfs_batch_columns(lik, NULL, idx, n, NULL);
#ifdef SGFS_HAVE_SGEMM
    if (s.single) ll = score_single(lik, &s, theta, x, idx, n, sum, G, &sigma_score);
    else
#endif
    {
        double *h[MAX_LAYERS + 1], *delta[MAX_LAYERS + 1];
        forward(lik, &s, theta, x, n, h, delta);
        ll = output_delta(lik, &s, theta, idx, n, delta[s.L], G, &sigma_score);
        backward_double(&s, theta, x, n, h, delta, sum, G);
    }
    if (loglik) *loglik = ll;
    if (s.sigma_sampled) sum[s.D - 1] = sigma_score;
}

static double mlp_loglik(sgfs_lik *lik, const double *theta, const int *idx,
                         int n)
{
    const mlp_shape s = shape_of(lik->data->P, lik->mpar);
    double *h[MAX_LAYERS + 1], *delta[MAX_LAYERS + 1];
    forward(lik, &s, theta, sgfs_batch_columns(lik, NULL, idx, n, NULL), n, h, delta);
    return output_delta(lik, &s, theta, idx, n, delta[s.L], NULL, NULL);
}

static int mlp_n_pred(const double *mpar)
{
    const int out = (int) mpar[0];
    return out == OUT_CATEGORICAL ? (int) mpar[1] + 1 : out == OUT_GAUSSIAN ? 2 : 1;
}

static void mlp_predict(sgfs_lik *lik, const double *theta, const double *x,
                        int m, double *out)
{
    const mlp_shape s = shape_of(lik->data->P, lik->mpar);
    double *h[MAX_LAYERS + 1], *delta[MAX_LAYERS + 1];
    forward(lik, &s, theta, x, m, h, delta);
    double *z = delta[s.L];
    if (s.out == OUT_BINOMIAL) sgfs_add_binomial_pred(z, 1, m, out);
    else if (s.out == OUT_POISSON)
        for (int i = 0; i < m; i++) out[i] += exp(z[i]);
    else if (s.out == OUT_GAUSSIAN)
        sgfs_add_gaussian_pred(z, 1, m, log_sigma_of(&s, theta, lik->mpar), out);
    else sgfs_add_class_pred(z, 1, (size_t) s.w[s.L], m, s.w[s.L], out);
}

/* the output layer's units, mapped as its GLM's outputs */
static int mlp_n_out(const double *mpar, const sgfs_model **out)
{
    const int layer = (int) mpar[0];
    *out = layer == OUT_CATEGORICAL ? &sgfs_model_categorical
         : layer == OUT_GAUSSIAN ? &sgfs_model_gaussian
         : layer == OUT_POISSON ? &sgfs_model_poisson : &sgfs_model_logistic;
    return (int) mpar[1];
}

/* one forward pass per draw (each draw has its own weights), its output
   layer z (w_L x m) copied to the draw's slots */
static void mlp_outputs(sgfs_lik *lik, const double *theta, int S,
                        const double *x, int m, double *z, size_t ldz, size_t ldk)
{
    const mlp_shape s = shape_of(lik->data->P, lik->mpar);
    const int K = s.w[s.L];
    double *h[MAX_LAYERS + 1], *delta[MAX_LAYERS + 1];
    for (int d = 0; d < S; d++) {
        forward(lik, &s, theta + (size_t) d * lik->D, x, m, h, delta);
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
