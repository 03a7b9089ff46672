#!/usr/bin/env python3
"""The torch example (python/examples/torch_fashion_mnist.py: its CNN, data and settings) on
CUDA when one is present, else on the CPU (and it says so): throughput and the share of each
step spent waiting for the noise.

The model and each batch are moved to the device; dpcorr.torch makes the noise on the CPU in
its background thread (started when the loader issues the batch, so it overlaps the forward
and backward passes), stages it in pinned memory and copies it with non_blocking=True. Prints,
for prefetch on and off (interleaved in rounds): examples per second (wall, with the device
synchronized at the end of each step), the median and the mean share of a step that
optimizer.step() spent waiting for noise (engine.last_noise_wait_s / step time), and the noise
thread's busy time per step.

    DPCORR_LIB=build/libdpcorr.so PYTHONPATH=python /usr/bin/python3 python/bench/device_check.py
        [--steps 60] [--rounds 2] [--mech blt] [--device cuda|cpu] [--json]
"""

import argparse
import json
import pathlib
import statistics
import sys
import time

import torch

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "python" / "examples"))

import dpcorr.torch  # noqa: E402
import torch_fashion_mnist as example  # noqa: E402


def data():
    d = pathlib.Path(example.DATA_DIR)
    if (d / "train-images-idx3-ubyte.gz").exists():
        x, y = example.load(d, "train")
        return x, y, "Fashion-MNIST"
    g = torch.Generator().manual_seed(0)
    return (torch.randn(60000, 1, 28, 28, generator=g).clamp(-1, 1),
            torch.randint(0, 10, (60000,), generator=g), "SYNTHETIC (no dataset-fashion-mnist)")


def sync(dev):
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)


def run(args, dev, x, y, prefetch):
    torch.manual_seed(1)
    model = example.cnn().to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    model, opt, loader, eng = dpcorr.torch.make_private(
        model, opt, torch.utils.data.TensorDataset(x, y), epsilon=3.0, delta=1e-5, epochs=1,
        batch_size=args.batch, clip=0.1, mech=args.mech, seed=1, prefetch_noise=prefetch)
    steps, shares, examples = [], [], 0
    it = iter(loader)
    for s in range(args.steps):
        xb, yb = next(it)
        sync(dev)
        t0 = time.perf_counter()
        opt.zero_grad()
        losses = torch.nn.functional.cross_entropy(model(xb.to(dev, non_blocking=True)),
                                                   yb.to(dev, non_blocking=True),
                                                   reduction="none")
        eng.backward(losses)
        opt.step()
        sync(dev)
        dt = time.perf_counter() - t0
        if s >= 3:  # warm-up (first-batch checks, allocator) dropped
            steps.append(dt)
            shares.append(eng.last_noise_wait_s / dt)
            examples += len(yb)
    eng.close()
    return {"examples_per_s": examples / sum(steps), "median_step_ms": 1e3 *
            statistics.median(steps), "wait_share_median": statistics.median(shares),
            "wait_share_mean": statistics.mean(shares), "steps": len(steps),
            "update_device": str(eng.device), "pinned": bool(eng._noise_t.is_pinned())}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--mech", default="blt")
    p.add_argument("--batch", type=int, default=250)
    p.add_argument("--lr", type=float, default=8.0)
    p.add_argument("--device", default=None, help="default: cuda when available, else cpu")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    name = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    dev = torch.device(name)
    where = torch.cuda.get_device_name(dev) if dev.type == "cuda" else \
        "CPU (no CUDA device: the device path is not exercised)"
    x, y, source = data()
    print(f"device: {where}; data: {source}; mech {args.mech}, batch {args.batch}")
    res = {True: [], False: []}
    for r in range(args.rounds):
        for pre in ((True, False) if r % 2 == 0 else (False, True)):
            res[pre].append(run(args, dev, x, y, pre))
    out = {}
    for pre, runs in res.items():
        key = "prefetch" if pre else "inline"
        out[key] = {k: statistics.median([r[k] for r in runs]) if isinstance(runs[0][k], float)
                    else runs[0][k] for k in runs[0]}
        o = out[key]
        print(f"  noise {key:8s}: {o['examples_per_s']:8.1f} examples/s, median step "
              f"{o['median_step_ms']:.2f} ms, waiting for noise: median "
              f"{100 * o['wait_share_median']:.2f}% / mean {100 * o['wait_share_mean']:.2f}% "
              f"of a step (update on {o['update_device']}, staging pinned: {o['pinned']})")
    out["device"] = where
    if args.json:
        print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
