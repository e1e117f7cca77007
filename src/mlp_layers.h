/*
 * mlp_layers.h - a network's forward and backward passes (model_mlp.c), in
 * one precision: included by model_mlp.c once with real = double and once
 * with real = float (mlp(precision = "single")), so that both precisions
 * run the same code.  The including file defines
 *   real          the element type,
 *   GEMM          C = op(A) op(B) + beta C in that type,
 *   TANH, EXP     the element functions,
 *   LAYERS(name)  the name of each function in that precision,
 * and mlp_shape / MAX_LAYERS / ACT_*.  The equations are model_mlp.c's.
 */

/* the layer buffers, carved from p: h[l], delta[l] (w_l x n), l = 1..L-1,
   and z = delta[L] (w_L x n) */
static void LAYERS(buffers)(real *p, const mlp_shape *s, int n, real **h, real **delta)
{
    for (int l = 1; l < s->L; l++) {
        h[l] = p;
        p += (size_t) s->w[l] * n;
        delta[l] = p;
        p += (size_t) s->w[l] * n;
    }
    delta[s->L] = p;
}

static void LAYERS(activate)(int act, real *a, size_t len)
{
    switch (act) {
    case ACT_TANH:
        for (size_t k = 0; k < len; k++) a[k] = TANH(a[k]);
        break;
    case ACT_LOGISTIC:
        for (size_t k = 0; k < len; k++) a[k] = 1 / (1 + EXP(-a[k]));
        break;
    default:
        for (size_t k = 0; k < len; k++) a[k] = a[k] > 0 ? a[k] : 0;
    }
}

/* d *= phi'(a), phi' written through h = phi(a) */
static void LAYERS(times_derivative)(int act, const real *h, real *d, size_t len)
{
    switch (act) {
    case ACT_TANH:
        for (size_t k = 0; k < len; k++) d[k] *= 1 - h[k] * h[k];
        break;
    case ACT_LOGISTIC:
        for (size_t k = 0; k < len; k++) d[k] *= h[k] * (1 - h[k]);
        break;
    default:
        for (size_t k = 0; k < len; k++) if (!(h[k] > 0)) d[k] = 0;
    }
}

/* forward pass for the examples in the columns of x (P x n) at the weights
   w (theta's layout): the hidden h[l] and the outputs z = delta[L] */
static void LAYERS(forward)(const mlp_shape *s, const real *w, const real *x, int n,
                            real **h, real **delta)
{
    const real *in = x;
    for (int l = 1; l <= s->L; l++) {
        const int wi = s->w[l - 1], wo = s->w[l];
        real *a = l < s->L ? h[l] : delta[s->L];
        const real *bias = w + s->b[l];
        for (int i = 0; i < n; i++)
            memcpy(a + (size_t) i * wo, bias, (size_t) wo * sizeof(real));
        GEMM('T', 'N', wo, n, wi, w + s->W[l], wi, in, wi, 1, a, wo);
        if (l < s->L) LAYERS(activate)(s->act, a, (size_t) wo * n);
        in = a;
    }
}

/* backward pass from the output deltas delta[L]: the weights' and biases'
   score sums into sum (theta's layout), with G (D x n, doubles) each
   example's */
static void LAYERS(backward)(const mlp_shape *s, const real *w, const real *x, int n,
                             real **h, real **delta, real *sum, double *G)
{
    for (int l = s->L; l >= 1; l--) {
        const int wi = s->w[l - 1], wo = s->w[l];
        const real *in = l > 1 ? h[l - 1] : x, *d = delta[l];
        GEMM('N', 'T', wi, wo, n, in, wi, d, wo, 0, sum + s->W[l], wi);
        real *gb = sum + s->b[l];
        for (int k = 0; k < wo; k++) gb[k] = 0;
        for (int i = 0; i < n; i++)
            for (int k = 0; k < wo; k++) gb[k] += d[k + (size_t) i * wo];
        if (G)
            for (int i = 0; i < n; i++) {
                double *restrict g = G + (size_t) i * s->D;
                const real *restrict u = in + (size_t) i * wi;
                const real *restrict di = d + (size_t) i * wo;
                for (int k = 0; k < wo; k++) {
                    double *restrict gw = g + s->W[l] + (size_t) k * wi;
                    for (int j = 0; j < wi; j++) gw[j] = (double) di[k] * u[j];
                    g[s->b[l] + k] = di[k];
                }
            }
        if (l > 1) {
            GEMM('N', 'N', wi, n, wo, w + s->W[l], wi, d, wo, 0, delta[l - 1], wi);
            LAYERS(times_derivative)(s->act, h[l - 1], delta[l - 1], (size_t) wi * n);
        }
    }
}
