#!/usr/bin/python3
"""bench/mlp_torch.py - hand-written stochastic-gradient samplers for a
784-400-400-10 ReLU network on MNIST in PyTorch (CPU): the loop a user
would otherwise write, timed per epoch against the package by
bench/bench_mnist_speed.R.

    python3 bench/mlp_torch.py MNIST_DIR RULE DTYPE ITERATIONS [THREADS]

RULE: sgld, psgld, sghmc or isgd (their sampling phase: the step of
src/sampler_*.c with a given step); DTYPE: float64 or float32.  Inputs
standardised per pixel (constant pixels kept, scale 1), as mlp() does;
batch 100 drawn as consecutive slices of one torch.randperm(N) per epoch
(torch.utils.data.DataLoader(shuffle=True)'s way); gradients by autograd of
(N / n) times the batch's log-likelihood plus the normal(0, 1/sqrt(fan-in))
log prior; updates under torch.no_grad().  THREADS (default 1) intra-op
threads, as the package's engine runs its BLAS while sampling.  Only the
loop is timed (time.perf_counter, after 20 warm-up iterations); prints
"s_per_epoch <value>" for an epoch of 600 iterations.
"""
import gzip
import sys
import time
import numpy as np
import torch


def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    dims = data[3]
    shape = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


def main(argv):
    path, rule, dtype_name, n_iter = argv[0], argv[1], argv[2], int(argv[3])
    threads = int(argv[4]) if len(argv) > 4 else 1
    torch.set_num_threads(threads)
    torch.manual_seed(1)
    dtype = {"float64": torch.float64, "float32": torch.float32}[dtype_name]
    x = read_idx(path + "/train-images-idx3-ubyte.gz").reshape(60000, 784).astype(np.float64)
    y = read_idx(path + "/train-labels-idx1-ubyte.gz").astype(np.int64)
    sd = x.std(axis=0, ddof=1)
    x = (x - x.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    X = torch.from_numpy(x).to(dtype)
    Y = torch.from_numpy(y)
    N, n = X.shape[0], 100
    widths = [784, 400, 400, 10]
    params, precs = [], []
    for a, b in zip(widths[:-1], widths[1:]):
        params.append((torch.randn(a, b, dtype=dtype) * (2.0 / a) ** 0.5).requires_grad_())
        params.append(torch.zeros(b, dtype=dtype, requires_grad=True))
        precs += [float(a), float(a)]
    eps, alpha, lam, decay = 1e-9, 0.01, 1e-5, 0.99
    state = {"perm": None, "pos": N}
    V = [torch.zeros_like(p) for p in params]
    v = [torch.zeros_like(p) for p in params]
    tau = [torch.tensor(1e6, dtype=dtype) for p in params]

    def batch():
        if state["pos"] + n > N:
            state["perm"], state["pos"] = torch.randperm(N), 0
        state["pos"] += n
        return state["perm"][state["pos"] - n:state["pos"]]

    def gradient():
        idx = batch()
        h = X.index_select(0, idx)
        W1, b1, W2, b2, W3, b3 = params
        h = torch.relu(h @ W1 + b1)
        h = torch.relu(h @ W2 + b2)
        z = h @ W3 + b3
        loglik = -torch.nn.functional.cross_entropy(z, Y.index_select(0, idx), reduction="sum")
        logprior = sum(-0.5 * c * (p * p).sum() for p, c in zip(params, precs))
        logpost = (N / n) * loglik + logprior
        for p in params:
            p.grad = None
        logpost.backward()
        return [p.grad for p in params]

    def step():
        grads = gradient()
        with torch.no_grad():
            for k, (p, g) in enumerate(zip(params, grads)):
                if rule == "sgld":
                    p.add_(0.5 * eps * g + eps ** 0.5 * torch.randn_like(p))
                elif rule == "psgld":
                    gbar = g / N
                    V[k].mul_(decay).add_((1 - decay) * gbar * gbar)
                    G = 1.0 / (lam + V[k].sqrt())
                    p.add_(0.5 * eps * G * g + (eps * G).sqrt() * torch.randn_like(p))
                elif rule == "sghmc":
                    v[k].mul_(1 - alpha).add_(eps * g + (2 * eps * alpha) ** 0.5 * torch.randn_like(p))
                    p.add_(v[k])
                elif rule == "isgd":
                    w = (tau[k] - g * g).clamp(min=0).sqrt() * torch.randn_like(p)
                    p.add_((2.0 / tau[k]) * (g + w))
                else:
                    raise SystemExit("unknown rule " + rule)

    for _ in range(20):
        step()
    t0 = time.perf_counter()
    for _ in range(n_iter):
        step()
    t1 = time.perf_counter()
    assert all(bool(torch.isfinite(p).all()) for p in params)
    print("s_per_epoch %.4f" % (600 * (t1 - t0) / n_iter))


if __name__ == "__main__":
    main(sys.argv[1:])
