#!/usr/bin/python3
"""bench/sgld_numpy.py - hand-written SGLD for logistic regression in NumPy,
the peer that bench/bench_peers.R times the package against.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python3 bench/sgld_numpy.py \
        DATA N D BATCH N_ITER [--draw=choice|epoch] [--seed=1]

DATA.x: N x D float64, row-major (the intercept a column of ones); DATA.y:
N float64 in {0, 1} (written by bench_peers.R).  Written as a competent user
would: float64, minibatch drawn without replacement from numpy's Generator
(--draw=choice: rng.choice(N, n, replace=False) each iteration, an
independent uniform subset, as the package draws; --draw=epoch: one
rng.permutation(N) per pass over the data, consecutive slices of it, as a
data loader does), closed-form gradient, prior N(0, 2.5^2) on every
coefficient, the paper's update (Welling and Teh 2011):

    theta <- theta + (eps/2) [ -theta/s^2 + (N/n) X_S' (y_S - sigmoid(X_S theta)) ]
             + sqrt(eps) xi,   xi ~ N(0, I_D).

Only the loop is timed (time.perf_counter, after 50 warm-up iterations);
prints one line: "us_per_iter <value>".  Single thread: the caller sets
OMP_NUM_THREADS=1 and OPENBLAS_NUM_THREADS=1 (NumPy's BLAS) before start.
"""
import sys
import time
import numpy as np


def main(argv):
    path, N, D, n, n_iter = argv[0], int(float(argv[1])), int(argv[2]), int(argv[3]), int(argv[4])
    opts = dict(a[2:].split("=", 1) for a in argv[5:])
    draw = opts.get("draw", "choice")
    rng = np.random.default_rng(int(opts.get("seed", "1")))
    X = np.fromfile(path + ".x", dtype=np.float64).reshape(N, D)
    y = np.fromfile(path + ".y", dtype=np.float64)
    eps, prec, scale = 1e-6, 1.0 / 2.5 ** 2, N / n
    theta = np.zeros(D)
    perm, pos = None, N

    def batch():
        nonlocal perm, pos
        if draw == "choice":
            return rng.choice(N, n, replace=False)
        if pos + n > N:
            perm, pos = rng.permutation(N), 0
        pos += n
        return perm[pos - n:pos]

    def step(theta):
        idx = batch()
        Xb = X[idx]
        r = y[idx] - 1.0 / (1.0 + np.exp(-(Xb @ theta)))
        grad = scale * (Xb.T @ r) - prec * theta
        return theta + 0.5 * eps * grad + np.sqrt(eps) * rng.standard_normal(D)

    for _ in range(50):
        theta = step(theta)
    t0 = time.perf_counter()
    for _ in range(n_iter):
        theta = step(theta)
    t1 = time.perf_counter()
    assert np.all(np.isfinite(theta))
    print("us_per_iter %.3f" % (1e6 * (t1 - t0) / n_iter))


if __name__ == "__main__":
    main(sys.argv[1:])
