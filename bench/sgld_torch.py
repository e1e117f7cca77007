#!/usr/bin/python3
"""bench/sgld_torch.py - hand-written SGLD for logistic regression in
PyTorch (CPU), the peer that bench/bench_peers.R times the package against.

    OMP_NUM_THREADS=1 python3 bench/sgld_torch.py \
        DATA N D BATCH N_ITER [--draw=randperm|epoch] [--seed=1]

Same data files, prior, step and update as bench/sgld_numpy.py, in float64
tensors, single thread (torch.set_num_threads(1), and the caller sets
OMP_NUM_THREADS=1), no autograd (the closed-form gradient: what a competent
user writes for a GLM; autograd only adds to it).  Minibatch without
replacement: --draw=randperm takes torch.randperm(N)[:n] each iteration (an
independent uniform subset, O(N) per draw); --draw=epoch takes consecutive
slices of one torch.randperm(N) per pass over the data, as
torch.utils.data.DataLoader(shuffle=True) does.  Only the loop is timed
(time.perf_counter, after 50 warm-up iterations); prints "us_per_iter <value>".
"""
import sys
import time
import numpy as np
import torch


def main(argv):
    torch.set_num_threads(1)
    path, N, D, n, n_iter = argv[0], int(float(argv[1])), int(argv[2]), int(argv[3]), int(argv[4])
    opts = dict(a[2:].split("=", 1) for a in argv[5:])
    draw = opts.get("draw", "epoch")
    torch.manual_seed(int(opts.get("seed", "1")))
    X = torch.from_numpy(np.fromfile(path + ".x", dtype=np.float64).reshape(N, D))
    y = torch.from_numpy(np.fromfile(path + ".y", dtype=np.float64))
    eps, prec, scale = 1e-6, 1.0 / 2.5 ** 2, N / n
    sd = eps ** 0.5
    theta = torch.zeros(D, dtype=torch.float64)
    state = {"perm": None, "pos": N}

    def batch():
        if draw == "randperm":
            return torch.randperm(N)[:n]
        if state["pos"] + n > N:
            state["perm"], state["pos"] = torch.randperm(N), 0
        state["pos"] += n
        return state["perm"][state["pos"] - n:state["pos"]]

    def step(theta):
        idx = batch()
        Xb = X.index_select(0, idx)
        r = y.index_select(0, idx) - torch.sigmoid(Xb @ theta)
        grad = scale * (Xb.T @ r) - prec * theta
        return theta + 0.5 * eps * grad + sd * torch.randn(D, dtype=torch.float64)

    with torch.no_grad():
        for _ in range(50):
            theta = step(theta)
        t0 = time.perf_counter()
        for _ in range(n_iter):
            theta = step(theta)
        t1 = time.perf_counter()
    assert bool(torch.isfinite(theta).all())
    print("us_per_iter %.3f" % (1e6 * (t1 - t0) / n_iter))


if __name__ == "__main__":
    main(sys.argv[1:])
