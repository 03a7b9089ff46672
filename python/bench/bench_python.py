#!/usr/bin/env python3
"""Overhead of the Python binding (run by `make bench` when /usr/bin/python3 has numpy and torch).

1. NoiseGenerator.next(out=...) at dim 1e6 against the C fill: the same dpc_noise_next call made
   directly on the same generator (ctypes, no Python-side work), alternated, the minimum of each
   over many calls. Raw rows (noise_multiplier=None, what dpc_noise_next emits): target within
   5%. Scaled rows (noise_multiplier x clip x column norm) cost one more multiply per value.
2. The PyTorch example's training throughput (examples/s) with mech="blt" against the same run
   with mech="identity" (DP-SGD), target within 10%. The two runs differ in two ways: the
   mechanism (BLT's noise vs independent noise: 0.2 ms of a ~45 ms step at this model size) and
   the sampler make_private picks by default (fixed-order epochs for BLT, Poisson for DP-SGD:
   variable batch sizes, an O(N) draw per step). So three configurations: identity (Poisson),
   blt (fixed order) and identity with fixed-order sampling (the same batches as blt: the
   mechanism's cost alone). Measured two ways, one torch thread each:
   a. in one process (the example's setup() and train_step()), the configurations' steps
      interleaved step by step in rotating order, so that load from other jobs on a shared
      machine hits all of them alike; warm-up steps dropped; CPU (time.process_time) and wall
      time per step; throughput ratios over all steps and as the median over paired steps
      (step s of both configurations ran back to back: robust to load that comes and goes);
   b. the example itself (subprocesses, --max-steps, each configuration once per round in
      rotating order): medians over rounds of its examples_per_s (wall) and examples_per_cpu_s
      (time.process_time), their ratio, and the median of the per-round ratios. On a loaded
      machine one run's CPU time varies by 2x (CPU time includes what contention costs:
      shared caches, a preempted virtual CPU), so (b) needs many rounds; (a) is the verdict.

    DPCORR_LIB=build/libdpcorr.so PYTHONPATH=python /usr/bin/python3 python/bench/bench_python.py
        [--quick] [--rounds R] [--steps S] [--no-noise] [--no-subprocess]
"""

import argparse
import ctypes
import json
import os
import pathlib
import subprocess
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))

import dpcorr  # noqa: E402
from dpcorr import _lib  # noqa: E402

DIM = 1_000_000


def noise_case(name, mech, pairs, noise_multiplier=None):
    """Alternates one direct C call and one NoiseGenerator.next(out=) on the same generator
    (same state, same cache conditions), timed in thread CPU time (preemption by other jobs on
    a shared machine does not count); the minimum of each over all calls."""
    gen = dpcorr.NoiseGenerator(mech, DIM, seed=1, noise_multiplier=noise_multiplier,
                                form="buffer")
    out = np.empty(DIM)
    err = _lib.Error()
    c_ptr = out.ctypes.data
    fill = _lib.lib.dpc_noise_next
    best_c = best_py = float("inf")
    for r in range(pairs):
        if r % 30 == 0:
            gen.seek(1)
        t = time.thread_time()
        fill(gen._gen, c_ptr, ctypes.byref(err))
        best_c = min(best_c, time.thread_time() - t)
        t = time.thread_time()
        gen.next(out=out)
        best_py = min(best_py, time.thread_time() - t)
    ratio = best_py / best_c
    verdict = ("within" if ratio <= 1.05 else "OUTSIDE") + " 5%" if noise_multiplier is None \
        else f"scale {gen.scale:.4g}: one multiply pass more"
    print(f"noise row d=1e6 {name:28s} C fill {1e3 * best_c:7.2f} ms   "
          f"NoiseGenerator.next(out=) {1e3 * best_py:7.2f} ms   ratio {ratio:.3f}  ({verdict})")
    return ratio


CONFIGS = (("identity", "auto"), ("blt", "auto"), ("identity", "fixed"))


def _label(mech, sampler):
    return f"{mech} ({'default' if sampler == 'auto' else sampler} sampler)"


def load_example():
    """The example as a module (its load, setup and train_step)."""
    import importlib.util
    path = ROOT / "python" / "examples" / "torch_fashion_mnist.py"
    spec = importlib.util.spec_from_file_location("torch_fashion_mnist", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def torch_interleaved(steps, warmup):
    """2a: the three configurations' steps interleaved in one process (one torch thread)."""
    import torch
    ex = load_example()
    torch.set_num_threads(1)
    x_train, y_train = ex.load(ex.DATA_DIR, "train")
    runs = []
    for mech, sampler in CONFIGS:
        args = ex.parse_args(["--mech", mech, "--sampler", sampler, "--threads", "1"])
        torch.manual_seed(args.seed)
        model, opt, loader, eng, sched = ex.setup(args, x_train, y_train)
        runs.append({"label": _label(mech, sampler), "sampler": eng.plan.sampler,
                     "mechanism": eng.ledger()["mechanism"], "run": (model, opt, sched),
                     "it": iter(loader), "cpu": [], "wall": [], "n": []})
    steps = min(steps, eng.steps_per_epoch - warmup)  # one epoch: the loaders' iterators
    for s in range(warmup + steps):
        for k in range(len(runs)):
            r = runs[(s + k) % len(runs)]
            c0, w0 = time.process_time(), time.perf_counter()
            x, y = next(r["it"])  # the sampler's batch: part of the step
            ex.train_step(*r["run"], x, y)
            c1, w1 = time.process_time(), time.perf_counter()
            if s >= warmup:
                r["cpu"].append(c1 - c0)
                r["wall"].append(w1 - w0)
                r["n"].append(len(y))
    for r in runs:
        for key in ("cpu", "wall", "n"):
            r[key] = np.array(r[key], dtype=np.float64)
        print(f"torch in-process {r['label']:30s} {r['n'].sum():6.0f} examples  "
              f"{r['n'].sum() / r['cpu'].sum():7.1f} per CPU s  "
              f"{r['n'].sum() / r['wall'].sum():7.1f} per wall s  "
              f"median step {1e3 * np.median(r['cpu']):6.2f} ms CPU  ({r['mechanism']}, "
              f"{r['sampler']} sampling)")
    ident, blt, ident_fixed = runs

    def ratio(a, b, key):
        """a's throughput over b's (examples per `key` second): over all steps, and the median
        and quartiles over the paired steps (step s of a and of b ran back to back)."""
        overall = (a["n"].sum() / a[key].sum()) / (b["n"].sum() / b[key].sum())
        paired = (b[key] / b["n"]) / (a[key] / a["n"])
        q1, med, q3 = np.percentile(paired, [25, 50, 75])
        return overall, float(med), float(q1), float(q3)

    out = {}
    for name, a, b in (("blt / identity", blt, ident),
                       ("blt / identity, same fixed-order sampler", blt, ident_fixed),
                       ("identity fixed-order / identity Poisson", ident_fixed, ident)):
        cpu, wall = ratio(a, b, "cpu"), ratio(a, b, "wall")
        out[name] = (cpu, wall)
        print(f"torch in-process {name:42s} per CPU s {cpu[0]:.3f} (paired steps: median "
              f"{cpu[1]:.3f}, quartiles {cpu[2]:.3f}-{cpu[3]:.3f}); wall {wall[0]:.3f} "
              f"(median {wall[1]:.3f})")
    return out


def example_run(mech, sampler, steps, batch):
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    cmd = [sys.executable, str(ROOT / "python" / "examples" / "torch_fashion_mnist.py"),
           "--mech", mech, "--sampler", sampler, "--epsilon", "3", "--epochs", "1",
           "--batch", str(batch), "--max-steps", str(steps), "--threads", "1", "--json"]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True)
    return json.loads(out.stdout)


def torch_subprocess(rounds, steps):
    """2b: the example itself, rounds interleaved (rotating order), medians over rounds."""
    res = {c: [] for c in CONFIGS}
    for r in range(rounds):
        for k in range(len(CONFIGS)):
            c = CONFIGS[(r + k) % len(CONFIGS)]
            res[c].append(example_run(*c, steps, 250))
    med = {}
    for c in CONFIGS:
        rs = res[c]
        med[c] = {key: float(np.median([x[key] for x in rs]))
                  for key in ("examples_per_s", "examples_per_cpu_s")}
        print(f"torch example    {_label(*c):30s} {rs[0]['steps_done']} steps, "
              f"{np.median([x['train_time_s'] * x['examples_per_s'] for x in rs]):6.0f} "
              f"examples  median {med[c]['examples_per_cpu_s']:7.1f} per CPU s "
              f"({min(x['examples_per_cpu_s'] for x in rs):.0f}-"
              f"{max(x['examples_per_cpu_s'] for x in rs):.0f}), "
              f"{med[c]['examples_per_s']:7.1f} per wall s  ({rs[0]['mechanism']}, "
              f"{rs[0]['sampler']} sampling; {rounds} runs)")
    ident, blt, ident_fixed = (res[c] for c in CONFIGS)
    for name, a, b in (("blt / identity", blt, ident),
                       ("blt / identity, same fixed-order sampler", blt, ident_fixed)):
        parts = []
        for key, unit in (("examples_per_cpu_s", "per CPU s"), ("examples_per_s", "wall")):
            of_medians = float(np.median([x[key] for x in a]) / np.median([x[key] for x in b]))
            per_round = [x[key] / y[key] for x, y in zip(a, b)]  # the runs of one round
            parts.append(f"{unit} {of_medians:.3f} (rounds: median {np.median(per_round):.3f}, "
                         f"{min(per_round):.3f}-{max(per_round):.3f})")
        print(f"torch example    {name:42s} " + "; ".join(parts))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--quick", action="store_true", help="fewer rounds (also DPC_BENCH_QUICK=1)")
    p.add_argument("--rounds", type=int, default=0)
    p.add_argument("--steps", type=int, default=0, help="training steps per example run")
    p.add_argument("--warmup", type=int, default=5, help="in-process: steps dropped")
    p.add_argument("--no-noise", action="store_true", help="skip the noise-row cases")
    p.add_argument("--no-subprocess", action="store_true", help="skip the example runs (2b)")
    args = p.parse_args()
    quick = args.quick or os.environ.get("DPC_BENCH_QUICK") == "1"
    rounds = args.rounds or (2 if quick else 5)
    steps = args.steps or (10 if quick else 40)
    print(f"library {dpcorr.library_path} ({dpcorr.library_version}); python {sys.version.split()[0]}")
    if not args.no_noise:
        ident = dpcorr.Mechanism("identity", 64)
        blt = dpcorr.Mechanism("blt", 64, theta=[0.9999, 0.999, 0.99, 0.9],
                               omega=[0.01, 0.05, 0.1, 0.2])
        noise_case("identity, raw rows", ident, 40 * rounds)
        noise_case("blt k=4, raw rows", blt, 40 * rounds)
        noise_case("identity, z=1.1 (scaled)", ident, 40 * rounds, 1.1)
        noise_case("blt k=4, z=1 (scaled)", blt, 40 * rounds, 1.0)

    if not (pathlib.Path("/usr/share/datasets/fashion-mnist") / "train-images-idx3-ubyte.gz").is_file():
        print("torch example: skipped (dataset-fashion-mnist is not installed)")
        return 0
    inproc = torch_interleaved(steps * rounds, args.warmup)
    cpu = inproc["blt / identity"][0][1]
    same = inproc["blt / identity, same fixed-order sampler"][0][1]
    print(f"torch blt / identity throughput per CPU second (median of paired steps): {cpu:.3f} "
          f"with the default samplers "
          f"({'within' if cpu >= 0.9 else 'OUTSIDE'} 10%), {same:.3f} with the same sampler "
          f"({'within' if same >= 0.9 else 'OUTSIDE'} 10%)")
    if not args.no_subprocess:
        torch_subprocess(rounds, steps)
    return 0


if __name__ == "__main__":
    sys.exit(main())
