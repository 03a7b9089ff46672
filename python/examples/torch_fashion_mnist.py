#!/usr/bin/env python3
"""Private training of a small CNN on Fashion-MNIST with dpcorr.torch.

    make && PYTHONPATH=python /usr/bin/python3 python/examples/torch_fashion_mnist.py \\
        --mech blt --epsilon 3 --epochs 1 --json

The data are Debian's dataset-fashion-mnist (/usr/share/datasets/fashion-mnist; scripts/setup.sh
installs it): 60000 training and 10000 test images, pixels mapped to [-1, 1]. The model is the
tanh CNN of Papernot et al. 2021 ("Tempered sigmoid activations", 26106 parameters), with
GroupNorm after each convolution. make_private puts dpcorr's sampler (fixed-order epochs for
correlated noise, Poisson for DP-SGD), per-example clipping, correlated noise and accountant
around it; the loop is the usual PyTorch loop.

--json prints one JSON object: test_accuracy, epsilon, delta, examples_per_s (wall clock of the
training loop), examples_per_cpu_s (per CPU second of all threads: comparable on a shared
machine), mechanism, and the run's ledger and settings.
"""

import argparse
import gzip
import json
import os
import pathlib
import sys
import time

import numpy as np
import torch

import dpcorr
import dpcorr.torch

DATA_DIR = "/usr/share/datasets/fashion-mnist"
# --mech: the kinds whose parameters are numbers (--mech-param) or that the library defaults
# (blt: optimized for the run; bsr/bisr: bands; nu/antipgd: nu = 0; lcgd: lambda = 0);
# toeplitz and dense need coefficient arrays (make_private with a dpcorr.Mechanism)
MECHS = ("blt", "identity", "nu", "antipgd", "lcgd", "bsr", "bisr", "tree")


def load_idx(path):
    """An IDX file (gzip) as a numpy array (magic: 0x0000 | type 0x08 | ndim)."""
    with gzip.open(path, "rb") as f:
        raw = f.read()
    ndim = raw[3]
    shape = tuple(int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim))
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim).reshape(shape)


def load(data_dir, part):
    """(images, labels) of part "train" or "t10k" as torch tensors: (n, 1, 28, 28) float32 in
    [-1, 1] (a fixed map of the pixel range, independent of the data) and (n,) int64."""
    d = pathlib.Path(data_dir)
    x = load_idx(d / f"{part}-images-idx3-ubyte.gz").astype(np.float32) / 127.5 - 1.0
    y = load_idx(d / f"{part}-labels-idx1-ubyte.gz").astype(np.int64)
    return torch.from_numpy(x).unsqueeze(1), torch.from_numpy(y)


def cnn():
    """Papernot et al.'s tanh CNN for 28 x 28 images, GroupNorm after each convolution."""
    return torch.nn.Sequential(
        torch.nn.Conv2d(1, 16, 8, stride=2, padding=3), torch.nn.GroupNorm(4, 16),
        torch.nn.Tanh(), torch.nn.MaxPool2d(2, 1),
        torch.nn.Conv2d(16, 32, 4, stride=2), torch.nn.GroupNorm(4, 32), torch.nn.Tanh(),
        torch.nn.MaxPool2d(2, 1), torch.nn.Flatten(),
        torch.nn.Linear(32 * 4 * 4, 32), torch.nn.Tanh(), torch.nn.Linear(32, 10))


def accuracy(model, x, y, block=2000):
    model.eval()
    right = 0
    with torch.no_grad():
        for i in range(0, len(y), block):
            right += (model(x[i:i + block]).argmax(1) == y[i:i + block]).sum().item()
    model.train()
    return right / len(y)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--mech", default="blt", choices=MECHS,
                   help="blt (default), identity (DP-SGD), nu, antipgd, lcgd, bsr, bisr, tree "
                   "(dpcorr.torch.make_private; parameters the library does not default come "
                   "from --mech-param)")
    p.add_argument("--mech-param", action="append", default=[], metavar="NAME=VALUE",
                   help="a mechanism parameter, e.g. bands=16 or nu=0.01 (repeatable; "
                   "default: the library's choice for the run)")
    p.add_argument("--sampler", default="auto", help="auto (default), fixed, shuffle, poisson, "
                   "cyclic-poisson")
    p.add_argument("--epsilon", type=float, default=3.0)
    p.add_argument("--delta", type=float, default=1e-5)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--batch", type=int, default=250, help="(expected) batch size")
    p.add_argument("--lr", type=float, default=8.0)
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--clip", type=float, default=0.1)
    p.add_argument("--schedule", default="cooldown", choices=("cooldown", "linear", "constant"),
                   help="learning rate: cooldown (default: constant, then a linear decay to 5%% "
                   "over the last 25%% of the steps, as dpcorr train's), linear (to 0), constant")
    p.add_argument("--seed", type=int, default=1, help="seed (experiments); --secure for an OS "
                   "key")
    p.add_argument("--secure", action="store_true", help="secure noise and sampling (OS key)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--max-steps", type=int, default=0, help="stop after this many steps "
                   "(benchmarks; the accounting is the configured run's)")
    p.add_argument("--data-dir", default=DATA_DIR)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    return p.parse_args(argv)


def mech_params(items):
    out = {}
    for item in items:
        name, _, value = item.partition("=")
        try:
            out[name] = int(value)
        except ValueError:
            out[name] = float(value)
    return out


def setup(args, x_train, y_train):
    """The private run of ``args``: (model, optimizer, loader, engine, schedule)."""
    model = cnn()
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum)
    model, optimizer, loader, engine = dpcorr.torch.make_private(
        model, optimizer, torch.utils.data.TensorDataset(x_train, y_train),
        epsilon=args.epsilon, delta=args.delta, epochs=args.epochs, batch_size=args.batch,
        clip=args.clip, mech=args.mech, mech_params=mech_params(args.mech_param),
        sampler=args.sampler, seed=None if args.secure else args.seed)
    # the learning-rate schedule (post-processing)
    n = engine.steps
    factor = {"linear": lambda t: max(0.0, 1.0 - t / n),
              "cooldown": lambda t: 1.0 - 0.95 * max(0.0, (t - 0.75 * n) / (0.25 * n)),
              "constant": lambda t: 1.0}[args.schedule]
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, factor)
    return model, optimizer, loader, engine, schedule


def train_step(model, optimizer, schedule, x, y):
    """One private step on the loader's batch (x, y); returns the (non-private) loss."""
    optimizer.zero_grad()
    # one loss per example (reduction="none"): the engine clips each example's gradient and
    # proves that each loss depends on its own example only
    losses = torch.nn.functional.cross_entropy(model(x), y, reduction="none")
    dpcorr.torch.backward(losses)
    optimizer.step()
    schedule.step()
    return losses.mean().item()  # read after backward: no batch value enters the step


def main(argv=None):
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    t_start = time.perf_counter()
    x_train, y_train = load(args.data_dir, "train")
    x_test, y_test = load(args.data_dir, "t10k")
    model, optimizer, loader, engine, schedule = setup(args, x_train, y_train)
    examples, train_time, train_cpu, losses = 0, 0.0, 0.0, []
    for epoch in range(engine.epoch, args.epochs):
        t0 = time.perf_counter()  # the whole loop: sampling, gradients, clipping, noise, update
        c0 = time.process_time()
        for x, y in loader:
            losses.append(train_step(model, optimizer, schedule, x, y))
            examples += len(y)
            if args.max_steps and engine.steps_done >= args.max_steps:
                break
        train_time += time.perf_counter() - t0
        train_cpu += time.process_time() - c0
        if not args.json:
            print(f"epoch {epoch + 1}: train loss {np.mean(losses[-len(loader):]):.4f} "
                  f"(not private), epsilon so far {engine.epsilon(engine.steps_done):.3f}",
                  file=sys.stderr)
        if args.max_steps and engine.steps_done >= args.max_steps:
            break
    acc = accuracy(model, x_test, y_test)
    ledger = engine.ledger()
    out = {"test_accuracy": acc, "epsilon": engine.epsilon_total(), "delta": args.delta,
           "examples_per_s": examples / train_time if train_time > 0 else None,
           "examples_per_cpu_s": examples / train_cpu if train_cpu > 0 else None,
           "mechanism": ledger["mechanism"], "mech": args.mech, "sampler": ledger["sampler"],
           "epochs": args.epochs, "batch": args.batch, "lr": args.lr,
           "schedule": args.schedule,
           "momentum": args.momentum, "clip": args.clip, "steps_done": engine.steps_done,
           "steps": engine.steps, "parameters": engine.dim, "threads": args.threads,
           "train_time_s": train_time, "train_cpu_s": train_cpu, "wall_time_s": time.perf_counter() - t_start,
           "library": dpcorr.library_version, "ledger": ledger}
    if args.json:
        print(json.dumps(out))
    else:
        print(f"test accuracy {100 * acc:.2f}% at epsilon {out['epsilon']:.4g}, delta "
              f"{args.delta:g} ({ledger['mechanism']}, {ledger['sampler']} sampling, "
              f"{out['examples_per_s']:.0f} examples/s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
