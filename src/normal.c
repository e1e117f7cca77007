/*
 * normal.c - the samplers' standard normal deviates, drawn in blocks.
 *
 * Each block of n deviates (one noise vector of a step) is seeded from two
 * of R's uniforms, u1 and u2, taken as the 64-bit seed
 *
 *   s = floor(2^32 u1) 2^32 + floor(2^32 u2)
 *
 * (all the bits of R's default Mersenne-Twister uniforms), expanded by
 * splitmix64 into the state of xoshiro256++ (Blackman and Vigna 2021,
 * ACM Transactions on Mathematical Software 47(4), 36), whose 64-bit words
 * drive a 256-layer ziggurat (Marsaglia and Tsang 2000, Journal of
 * Statistical Software 5(8)).  So R's stream alone decides every deviate:
 * set.seed() reproduces a run, a run continued after another equals the
 * longer run, and a block costs two of R's uniforms whatever its length,
 * where R's norm_rand() (inversion) costs one uniform and a quantile
 * evaluation per deviate, several times the time of a whole ziggurat draw.
 *
 * The ziggurat covers the half-normal f(x) = exp(-x^2 / 2) with 256 layers
 * of equal area v: the base layer [0, x_0) x [0, f(r)) with x_0 = v / f(r),
 * standing for the tail beyond r = x_1 too, and layers i = 1..255, the
 * rectangles [0, x_i) x [f(x_i), f(x_{i+1})) with
 *
 *   x_{i+1} = sqrt(-2 log(f(x_i) + v / x_i)),   x_256 = 0.
 *
 * A word w gives the layer i (its low 8 bits), the sign (bit 8) and a
 * uniform U (its top 53 bits); x = U x_i is returned at once when below
 * x_{i+1} (about 99 % of draws); otherwise the base layer draws from the
 * tail (Marsaglia 1964: a = -log(U1) / r, b = -log(U2) until 2b > a^2,
 * x = r + a) and the other layers accept x when a uniform height in
 * [f(x_i), f(x_{i+1})] falls below f(x).  The bits for layer, sign and U
 * are disjoint (Doornik 2005 showed the original's shared bits bias the
 * draws).
 */
#include "sgfs.h"
#include <stdint.h>

#define ZIG_LAYERS 256
#define ZIG_R 3.6541528853610088
#define ZIG_V 4.92867323399e-3

static double zig_x[ZIG_LAYERS + 1], zig_f[ZIG_LAYERS + 1];
static int zig_ready = 0;

static void zig_tables(void)
{
    zig_x[0] = ZIG_V / exp(-0.5 * ZIG_R * ZIG_R);
    zig_x[1] = ZIG_R;
    zig_f[0] = zig_f[1] = exp(-0.5 * ZIG_R * ZIG_R);
    for (int i = 1; i < ZIG_LAYERS - 1; i++) {
        zig_x[i + 1] = sqrt(-2.0 * log(zig_f[i] + ZIG_V / zig_x[i]));
        zig_f[i + 1] = exp(-0.5 * zig_x[i + 1] * zig_x[i + 1]);
    }
    zig_x[ZIG_LAYERS] = 0.0;
    zig_f[ZIG_LAYERS] = 1.0;
    zig_ready = 1;
}

static inline uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static inline uint64_t xoshiro_next(uint64_t *s)
{
    const uint64_t out = rotl(s[0] + s[3], 23) + s[0], t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return out;
}

static inline uint64_t splitmix_next(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* a uniform in (0, 1) from a word's top 53 bits */
static inline double open_uniform(uint64_t *s)
{
    return ((double) (xoshiro_next(s) >> 11) + 0.5) * 0x1.0p-53;
}

static double zig_normal(uint64_t *s)
{
    for (;;) {
        const uint64_t w = xoshiro_next(s);
        const int i = (int) (w & 0xff);
        const double sign = (w & 0x100) ? -1.0 : 1.0;
        const double x = (double) (w >> 11) * 0x1.0p-53 * zig_x[i];
        if (x < zig_x[i + 1]) return sign * x;
        if (i == 0) {
            double a, b;
            do {
                a = -log(open_uniform(s)) / ZIG_R;
                b = -log(open_uniform(s));
            } while (b + b < a * a);
            return sign * (ZIG_R + a);
        }
        const double y = zig_f[i] + (zig_f[i + 1] - zig_f[i]) * open_uniform(s);
        if (y < exp(-0.5 * x * x)) return sign * x;
    }
}

/* 32 bits of a uniform of R's stream (all of them for Mersenne-Twister's,
   which are multiples of 2^-32) */
static uint64_t r_bits32(void)
{
    double u = unif_rand() * 4294967296.0;
    return (uint64_t) (u >= 4294967295.0 ? 4294967295.0 : u);
}

void sgfs_rnorm(double *out, R_xlen_t n)
{
    if (!zig_ready) zig_tables();
    uint64_t seed = (r_bits32() << 32) | r_bits32(), s[4];
    for (int k = 0; k < 4; k++) s[k] = splitmix_next(&seed);
    for (R_xlen_t k = 0; k < n; k++) out[k] = zig_normal(s);
}

/* .Call: n deviates as one block, for the tests' replays of the chains */
SEXP sgfs_rnorm_block(SEXP n)
{
    const double len = Rf_asReal(n);
    if (!(len >= 0 && len <= R_XLEN_T_MAX) || len != floor(len))
        Rf_error("'n' must be a whole number >= 0");
    SEXP out = PROTECT(Rf_allocVector(REALSXP, (R_xlen_t) len));
    GetRNGstate();
    sgfs_rnorm(REAL(out), (R_xlen_t) len);
    PutRNGstate();
    UNPROTECT(1);
    return out;
}
