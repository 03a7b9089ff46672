#!/usr/bin/python3
"""bench/anchors.py — reference figures that `make bench` prints next to dpcorr's own.

Run with Debian's /usr/bin/python3 (numpy, torch 1.13 with functorch). dpcorr never needs it:
the benchmarks call this script when it runs and say so when it does not. Output: key=value
lines on stdout.

  anchors.py numpy-normal [--n N] [--reps R]
      NumPy Generator.standard_normal into a preallocated array (one core): samples_per_s, from
      the best of R process-CPU-time measurements (as bench_core times dpcorr's fill).

  anchors.py torch-dpsgd --sigma Z [--steps S] [--batch B] [--lr L] [--momentum M] [--clip C]
                         [--threads T] [--dtype float64|float32] [--seed K] [--data DIR]
      Plain PyTorch DP-SGD on Fashion-MNIST with per-example gradients from functorch
      (make_functional + vmap(grad)), the set-up of dpcorr's benchmark: MLP 784-256-10 tanh,
      pixels / 255, Glorot-normal weights and zero biases, Poisson sampling with rate B / N,
      per-example clipping to C, Gaussian noise of std Z C on the sum, division by the expected
      batch B, heavy-ball momentum. S = 0 trains one epoch (N / B steps) and reports the test
      accuracy; otherwise S timed steps after one warm-up step. Prints examples_per_s,
      steps, and test_accuracy (one epoch only).
"""
import argparse
import gzip
import os
import sys
import time


def numpy_normal(args):
    import numpy as np

    g = np.random.default_rng(1)
    out = np.empty(args.n)
    best = float("inf")
    for _ in range(args.reps):
        t = time.process_time()
        g.standard_normal(out=out)
        best = min(best, time.process_time() - t)
    print("samples_per_s=%.6g" % (args.n / best))
    print("numpy=%s" % np.__version__)


def read_idx(path, images):
    import numpy as np

    with gzip.open(path, "rb") as f:
        raw = f.read()
    if images:
        n, rows, cols = (int.from_bytes(raw[4 * k:4 * k + 4], "big") for k in (1, 2, 3))
        return np.frombuffer(raw, dtype=np.uint8, offset=16).reshape(n, rows * cols)
    n = int.from_bytes(raw[4:8], "big")
    return np.frombuffer(raw, dtype=np.uint8, offset=8)[:n]


def torch_dpsgd(args):
    import numpy as np
    import torch
    import torch.nn.functional as F
    from functorch import grad, make_functional, vmap

    torch.set_num_threads(args.threads)
    dtype = torch.float64 if args.dtype == "float64" else torch.float32
    torch.manual_seed(args.seed)
    d = args.data
    Xtr = torch.tensor(read_idx(os.path.join(d, "train-images-idx3-ubyte.gz"), True), dtype=dtype) / 255.0
    ytr = torch.tensor(read_idx(os.path.join(d, "train-labels-idx1-ubyte.gz"), False), dtype=torch.long)
    Xte = torch.tensor(read_idx(os.path.join(d, "t10k-images-idx3-ubyte.gz"), True), dtype=dtype) / 255.0
    yte = torch.tensor(read_idx(os.path.join(d, "t10k-labels-idx1-ubyte.gz"), False), dtype=torch.long)
    N = Xtr.shape[0]
    model = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.Tanh(), torch.nn.Linear(256, 10))
    model = model.to(dtype)
    with torch.no_grad():
        for layer in (model[0], model[2]):
            fan_out, fan_in = layer.weight.shape
            layer.weight.normal_(0.0, (2.0 / (fan_in + fan_out)) ** 0.5)
            layer.bias.zero_()
    fmodel, params = make_functional(model)

    def loss_one(p, x, y):
        return F.cross_entropy(fmodel(p, x.unsqueeze(0)), y.unsqueeze(0))

    per_example = vmap(grad(loss_one), in_dims=(None, 0, 0))
    q = args.batch / N
    velocity = [torch.zeros_like(p) for p in params]

    def step():
        mask = torch.rand(N) < q
        xb, yb = Xtr[mask], ytr[mask]
        g = per_example(params, xb, yb)
        flat = torch.cat([t.reshape(t.shape[0], -1) for t in g], dim=1)
        scale = (args.clip / (flat.norm(dim=1) + 1e-12)).clamp(max=1.0)
        with torch.no_grad():
            for k, t in enumerate(g):
                s = torch.einsum("i,i...->...", scale, t)
                s += torch.randn_like(s) * (args.sigma * args.clip)
                velocity[k].mul_(args.momentum).add_(s / args.batch)
                params[k].sub_(args.lr * velocity[k])
        return int(mask.sum())

    steps = args.steps if args.steps > 0 else N // args.batch
    if args.steps > 0:
        step()  # warm-up
    t = time.perf_counter()
    ex = sum(step() for _ in range(steps))
    dt = time.perf_counter() - t
    print("examples_per_s=%.6g" % (ex / dt))
    print("steps=%d" % steps)
    if args.steps == 0:
        with torch.no_grad():
            acc = (fmodel(params, Xte).argmax(dim=1) == yte).double().mean().item()
        print("test_accuracy=%.6f" % acc)
    print("torch=%s" % torch.__version__)


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("numpy-normal")
    a.add_argument("--n", type=int, default=1 << 23)
    a.add_argument("--reps", type=int, default=7)
    b = sub.add_parser("torch-dpsgd")
    b.add_argument("--sigma", type=float, required=True)
    b.add_argument("--steps", type=int, default=10)
    b.add_argument("--batch", type=int, default=500)
    b.add_argument("--lr", type=float, default=0.5)
    b.add_argument("--momentum", type=float, default=0.9)
    b.add_argument("--clip", type=float, default=1.0)
    b.add_argument("--threads", type=int, default=2)
    b.add_argument("--dtype", default="float64", choices=["float64", "float32"])
    b.add_argument("--seed", type=int, default=1)
    b.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    args = ap.parse_args()
    if args.cmd == "numpy-normal":
        numpy_normal(args)
    else:
        torch_dpsgd(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
