#!/usr/bin/env python3
"""Examples per CPU-second of private training (issue 27 item 8, issue 34 item 6), run by
`make bench`.

Six trainers, each for one epoch of Fashion-MNIST (Debian's dataset-fashion-mnist; synthetic
data of the same shapes, said so in the output, when it is not installed), on three models:

  nonprivate        plain torch training (the same loop, no clipping, no noise): the baseline
                    of the ratios
  dpcorr-blt        dpcorr.torch.make_private, mech="blt" (fixed-order epochs)
  dpcorr-blt-rows   the same with ghost clipping off (engine.ghost_clipping = False: the
                    materialised per-example rows): the accuracy ghost clipping must keep
  dpcorr-dpsgd      dpcorr.torch.make_private, mech="identity" (DP-SGD, Poisson sampling)
  opacus-dpsgd      Opacus 1.4 PrivacyEngine.make_private (Poisson sampling, flat clipping,
                    hooks), from the source tree $OPACUS_SRC (skipped with a message when unset
                    or absent; a v1.4.x tag runs on torch 1.13)
  functorch-dpsgd   a plain loop: functorch vmap(grad) over the whole model, clipping, Gaussian
                    noise (torch.normal), shuffled batches of the expected size

  mlp               784-128-10, ReLU
  cnn               the torch example's CNN (python/examples/torch_fashion_mnist.py)
  transformer       a 2-layer transformer encoder over the image's 28 rows (d_model 32, 4 heads,
                    feed-forward 64, no dropout), mean-pooled, a linear head

Every trainer gets the same budget (epsilon 3, delta 1e-5, one epoch, batch 128 (--batch),
clip 0.1): the
DP-SGD trainers share the noise multiplier dpcorr calibrates for Poisson DP-SGD; BLT gets its own
calibration. Same learning rate, momentum, clip and initial weights for all.

Measurement (the machine is shared): one torch thread; the trainers of a model run their steps
interleaved, one step each in rotating order, and each step's time.process_time() (CPU seconds of
the process) is charged to its trainer. Reported: examples per CPU second over the epoch, and its
spread over 6 blocks of consecutive steps (mean +- standard deviation of the blocks'
throughputs), plus the test accuracy after the epoch. Printed per model: dpcorr-blt's
throughput over nonprivate's (issue 34's targets: mlp >= 0.35, cnn >= 0.6, transformer >= 0.5),
its accuracy against dpcorr-blt-rows's (the same run without ghost clipping: target +-0.5 pp)
and its throughput over opacus-dpsgd's (target >= 2.5), with Opacus's own ratio to nonprivate
and the target in those units (2.5 x Opacus/nonprivate: above 1 it asks for private training
faster than plain training). --memory: the peak resident memory of a few steps at
batch 1024 on the transformer, dpcorr-blt against nonprivate (target <= 1.5x), each trainer in a
subprocess of its own (the peak resident memory over the steps: VmHWM, reset after the data,
model and trainer are set up; and its rise over the resident memory at that point).

Opacus 1.4 imports opt_einsum; when it is not installed the benchmark gives it torch.einsum
(opt_einsum.contract on torch tensors is an einsum; only the contraction order may differ).
Opacus 1.4.1 imports torch.func (torch >= 2.0); on torch 1.13 the benchmark gives it
functorch's grad and vmap and torch.nn.utils.stateless.functional_call. Without scipy,
Opacus's accountants (never called by the timed steps) get stand-ins that raise if called.

    OPACUS_SRC=/work/ext/opacus DPCORR_LIB=build/libdpcorr.so PYTHONPATH=python \\
        /usr/bin/python3 python/bench/bench_torch_speed.py [--models cnn,transformer]
        [--steps S] [--batch 128] [--memory] [--json]
"""

import argparse
import json
import math
import os
import pathlib
import statistics
import sys
import time
import types

import numpy as np
import torch

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "python" / "examples"))

import dpcorr  # noqa: E402
import dpcorr.torch  # noqa: E402
import torch_fashion_mnist as example  # noqa: E402

EPSILON, DELTA, BATCH, CLIP, LR, MOMENTUM = 3.0, 1e-5, 128, 0.1, 8.0, 0.9
BLOCKS = 6


# ---- data and models ---------------------------------------------------------------------------

def load_data():
    """(x_train, y_train, x_test, y_test, source)."""
    d = pathlib.Path(example.DATA_DIR)
    if (d / "train-images-idx3-ubyte.gz").exists():
        return (*example.load(d, "train"), *example.load(d, "t10k"), "Fashion-MNIST")
    g = torch.Generator().manual_seed(0)
    protos = torch.randn(10, 1, 28, 28, generator=g)

    def make(n):
        y = torch.randint(0, 10, (n,), generator=g)
        x = (protos[y] + 1.5 * torch.randn(n, 1, 28, 28, generator=g)).clamp(-1, 1)
        return x, y
    return (*make(60000), *make(10000), "SYNTHETIC (dataset-fashion-mnist not installed)")


class EncoderLayer(torch.nn.Module):
    """nn.TransformerEncoderLayer's post-norm layer (ReLU, no dropout). seq_first: (L, N, E)
    throughout, for Opacus: its DPMultiheadAttention (what ModuleValidator.fix puts in place of
    nn.MultiheadAttention) takes only that layout, and its hooks then need every layer's input
    batched along dimension 1 (make_private(batch_first=False)). The same parameters either
    way."""

    def __init__(self, d, heads, ff, seq_first):
        super().__init__()
        self.self_attn = torch.nn.MultiheadAttention(d, heads, dropout=0.0,
                                                     batch_first=not seq_first)
        self.linear1, self.linear2 = torch.nn.Linear(d, ff), torch.nn.Linear(ff, d)
        self.norm1, self.norm2 = torch.nn.LayerNorm(d), torch.nn.LayerNorm(d)

    def forward(self, x):
        x = self.norm1(x + self.self_attn(x, x, x, need_weights=False)[0])
        return self.norm2(x + self.linear2(torch.relu(self.linear1(x))))


class RowTransformer(torch.nn.Module):
    """A 2-layer transformer encoder over the 28 rows of an image (tokens of 28 pixels), fixed
    sinusoidal positions, mean pooling, a linear head; (N, 1, 28, 28) in, (N, 10) out.
    Batch-first (as nn.TransformerEncoder(batch_first=True)) unless seq_first (Opacus)."""

    def __init__(self, d=32, heads=4, ff=64, layers=2, seq_first=False):
        super().__init__()
        self.seq_first = seq_first
        self.embed = torch.nn.Linear(28, d)
        pos = torch.arange(28, dtype=torch.float32)[:, None] / \
            10000 ** (torch.arange(0, d, 2, dtype=torch.float32) / d)
        pe = torch.zeros(28, d)
        pe[:, 0::2], pe[:, 1::2] = torch.sin(pos), torch.cos(pos)
        self.register_buffer("pe", pe)
        self.layers = torch.nn.Sequential(*[EncoderLayer(d, heads, ff, seq_first)
                                            for _ in range(layers)])
        self.head = torch.nn.Linear(d, 10)

    def forward(self, x):
        x = x.reshape(-1, 28, 28)  # x.reshape(x.shape[0], 28, 28) is proven too (_sizes.py)
        if self.seq_first:  # the head sees (1, N, d): batched along dimension 1 as the rest
            h = self.embed(x.transpose(0, 1)) + self.pe[:, None]
            return self.head(self.layers(h).mean(0, keepdim=True))[0]
        h = self.embed(x) + self.pe
        return self.head(self.layers(h).mean(1))


def mlp(**_):
    return torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(784, 128), torch.nn.ReLU(),
                               torch.nn.Linear(128, 10))


MODELS = {"mlp": mlp, "cnn": example.cnn, "transformer": RowTransformer}
MODEL_LR = {"mlp": 2.0, "cnn": LR, "transformer": 2.0}
NONPRIVATE_LR = 0.05  # unclipped gradients: the private runs' rates would diverge
# issue 34 item 6: dpcorr-blt's examples per CPU-second over nonprivate's
TARGET_NONPRIVATE = {"mlp": 0.35, "cnn": 0.6, "transformer": 0.5}
TARGET_OPACUS = 2.5


# ---- trainers -------------------------------------------------------------------------------------

def dpcorr_backward(engine, logits, y):
    """The private loop's loss and backward pass (the one place the bench spells the user's
    call, so that a change of dpcorr.torch's loss API is one edit)."""
    engine.backward(torch.nn.functional.cross_entropy(logits, y, reduction="none"))


class Nonprivate:
    """Plain torch: shuffled batches of BATCH, mean cross-entropy, the same SGD."""

    def __init__(self, model, data, lr):
        self.model = model
        self.opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=MOMENTUM)
        self.x, self.y = data
        self.order = torch.randperm(len(self.y), generator=torch.Generator().manual_seed(1))
        self.pos = 0

    def step(self):
        idx = self.order[self.pos:self.pos + BATCH]
        self.pos += BATCH
        x, y = self.x[idx], self.y[idx]
        self.opt.zero_grad()
        torch.nn.functional.cross_entropy(self.model(x), y).backward()
        self.opt.step()
        return len(y)

    def close(self):
        pass


class Dpcorr:
    def __init__(self, mech, model, data, lr, ghost=True):
        self.model = model
        opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=MOMENTUM)
        _, self.opt, self.loader, self.engine = dpcorr.torch.make_private(
            model, opt, torch.utils.data.TensorDataset(*data), epsilon=EPSILON, delta=DELTA,
            epochs=1, batch_size=BATCH, clip=CLIP, mech=mech, seed=1)
        self.engine.ghost_clipping = ghost  # False: the materialised per-example rows
        self.it = iter(self.loader)
        self.noise_multiplier = self.engine.plan.noise_multiplier

    def step(self):
        x, y = next(self.it)
        self.opt.zero_grad()
        dpcorr_backward(self.engine, self.model(x), y)
        self.opt.step()
        return len(y)

    def close(self):
        if hasattr(self.engine, "close"):
            self.engine.close()


def import_opacus():
    src = os.environ.get("OPACUS_SRC")
    if not src or not (pathlib.Path(src) / "opacus" / "__init__.py").exists():
        return None, ("OPACUS_SRC is not set" if not src else
                      f"OPACUS_SRC={src} has no opacus/__init__.py")
    try:
        import opt_einsum  # noqa: F401
    except ImportError:  # opt_einsum.contract on torch tensors: an einsum
        m = types.ModuleType("opt_einsum")
        m.__path__ = []
        m.contract = torch.einsum
        c = types.ModuleType("opt_einsum.contract")
        c.contract = torch.einsum
        sys.modules["opt_einsum"], sys.modules["opt_einsum.contract"] = m, c
    if not hasattr(torch, "func"):
        # Opacus 1.4.1 imports torch.func (torch 2.0); on torch 1.13 the same functions are
        # functorch's grad and vmap and torch.nn.utils.stateless's functional_call (used only
        # for layers without a per-sample rule of Opacus's own: none in these models)
        import functorch
        f = types.ModuleType("torch.func")
        f.grad, f.vmap = functorch.grad, functorch.vmap
        f.functional_call = torch.nn.utils.stateless.functional_call
        torch.func = sys.modules["torch.func"] = f
    try:
        import scipy  # noqa: F401
    except ImportError:  # Opacus's accountants import scipy; the steps timed here never call it
        def absent(name):
            def call(*a, **k):
                raise RuntimeError(f"scipy is not installed ({name})")
            return call
        for name in ("scipy", "scipy.optimize", "scipy.stats", "scipy.special",
                     "scipy.integrate", "scipy.fft", "scipy.signal"):
            m = types.ModuleType(name)
            m.__path__ = []
            m.__getattr__ = lambda attr, n=name: absent(f"{n}.{attr}")
            sys.modules[name] = m
    sys.path.insert(0, src)
    import warnings
    warnings.filterwarnings("ignore")
    import opacus
    return opacus, None


class Opacus:
    def __init__(self, opacus, model, data, lr, noise_multiplier, steps, batch_first=True):
        from opacus.validators import ModuleValidator
        if not ModuleValidator.is_valid(model):
            sd = model.state_dict()
            model = ModuleValidator.fix(model)
            _load_mha(model, sd)
        self.model = model
        opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=MOMENTUM)
        loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(*data),
                                             batch_size=BATCH)
        self.engine = opacus.PrivacyEngine(accountant="rdp")
        self.model, self.opt, loader = self.engine.make_private(
            module=model, optimizer=opt, data_loader=loader,
            noise_multiplier=noise_multiplier, max_grad_norm=CLIP, poisson_sampling=True,
            batch_first=batch_first)
        self.it = iter(loader)
        self.steps = steps

    def step(self):
        x, y = next(self.it)
        self.opt.zero_grad()
        torch.nn.functional.cross_entropy(self.model(x), y).backward()
        self.opt.step()
        return len(y)

    def close(self):
        pass


def _load_mha(model, sd):
    """Opacus's fix() swaps nn.MultiheadAttention for DPMultiheadAttention (separate q, k, v
    linears): give it the original's weights so every trainer starts from the same model."""
    own = model.state_dict()
    for k, v in sd.items():
        if k in own and own[k].shape == v.shape:
            own[k] = v
        elif k.endswith("self_attn.in_proj_weight") or k.endswith("self_attn.in_proj_bias"):
            base, kind = k.rsplit(".", 1)
            kind = kind.replace("in_proj_", "")
            for name, part in zip(("qlinear", "klinear", "vlinear"), v.chunk(3)):
                own[f"{base}.{name}.{kind}"] = part
    model.load_state_dict(own)


class Functorch:
    """Plain DP-SGD with functorch: shuffled batches of BATCH, vmap(grad) over the whole model,
    flat clipping, Gaussian noise of std noise_multiplier * clip, averaged over BATCH."""

    def __init__(self, model, data, lr, noise_multiplier):
        from functorch import grad, make_functional_with_buffers, vmap
        self.model = model
        self.fmodel, _, self.buffers = make_functional_with_buffers(model)
        self.params = list(model.parameters())
        self.opt = torch.optim.SGD(self.params, lr=lr, momentum=MOMENTUM)
        self.x, self.y = data
        self.order = torch.randperm(len(self.y), generator=torch.Generator().manual_seed(1))
        self.pos = 0
        self.sigma = noise_multiplier * CLIP
        self.gen = torch.Generator().manual_seed(2)

        def loss(params, buffers, x, y):
            out = self.fmodel(params, buffers, x.unsqueeze(0))
            return torch.nn.functional.cross_entropy(out, y.unsqueeze(0))
        self.vg = vmap(grad(loss), in_dims=(None, None, 0, 0))

    def step(self):
        idx = self.order[self.pos:self.pos + BATCH]
        self.pos += BATCH
        x, y = self.x[idx], self.y[idx]
        per = self.vg(tuple(p.detach() for p in self.params), self.buffers, x, y)
        norms = torch.stack([g.reshape(len(y), -1).norm(dim=1) for g in per], 1).norm(dim=1)
        factor = (CLIP / (norms + 1e-12)).clamp(max=1.0)
        for p, g in zip(self.params, per):
            s = torch.einsum("i,i...->...", factor, g)
            p.grad = (s + torch.normal(0.0, self.sigma, s.shape, generator=self.gen)) / BATCH
        self.opt.step()
        return len(y)

    def close(self):
        pass


# ---- the measurement ----------------------------------------------------------------------------

def run_model(name, data, opacus, only, max_steps):
    x_train, y_train, x_test, y_test = data
    torch.manual_seed(0)
    init = MODELS[name]()
    lr = MODEL_LR[name]

    def fresh(**kw):
        m = MODELS[name](**kw)
        m.load_state_dict(init.state_dict())
        return m
    trainers = {"nonprivate": Nonprivate(fresh(), (x_train, y_train), NONPRIVATE_LR)}
    calib = {}
    for key in ("dpcorr-blt", "dpcorr-dpsgd"):
        c0 = time.process_time()
        trainers[key] = Dpcorr("blt" if key == "dpcorr-blt" else "identity", fresh(),
                               (x_train, y_train), lr)
        calib[key] = time.process_time() - c0
    trainers["dpcorr-blt-rows"] = Dpcorr("blt", fresh(), (x_train, y_train), lr, ghost=False)
    z = trainers["dpcorr-dpsgd"].noise_multiplier
    steps = trainers["dpcorr-blt"].engine.steps
    if opacus is not None:
        seq = {"seq_first": True} if name == "transformer" else {}
        trainers["opacus-dpsgd"] = Opacus(opacus, fresh(**seq), (x_train, y_train), lr, z, steps,
                                         batch_first=name != "transformer")
    trainers["functorch-dpsgd"] = Functorch(fresh(), (x_train, y_train), lr, z)
    if only:
        trainers = {k: v for k, v in trainers.items() if k in only}
    steps = min(steps, max_steps) if max_steps else steps
    cpu = {k: [] for k in trainers}
    count = {k: [] for k in trainers}
    keys = list(trainers)
    for s in range(steps):
        order = keys[s % len(keys):] + keys[:s % len(keys)]  # rotating order
        for k in order:
            c0 = time.process_time()
            n = trainers[k].step()
            cpu[k].append(time.process_time() - c0)
            count[k].append(n)
    out = {}
    for k, tr in trainers.items():
        acc = example.accuracy(tr.model, x_test, y_test)
        blocks = []
        edges = np.linspace(0, steps, BLOCKS + 1).astype(int)
        for a, b in zip(edges[:-1], edges[1:]):
            c = sum(cpu[k][a:b])
            if c > 0:
                blocks.append(sum(count[k][a:b]) / c)
        out[k] = {"examples_per_cpu_s": sum(count[k]) / sum(cpu[k]),
                  "block_mean": statistics.mean(blocks),
                  "block_sd": statistics.stdev(blocks) if len(blocks) > 1 else 0.0,
                  "median_step_cpu_ms": 1e3 * statistics.median(cpu[k]),
                  "test_accuracy": acc, "steps": steps, "examples": sum(count[k])}
        if k in calib:
            out[k]["setup_cpu_s"] = calib[k]
        tr.close()
    out["_noise_multiplier_dpsgd"] = z
    return out


def _status_mib(field):
    """A field of /proc/self/status (VmRSS, VmHWM) in MiB; None where there is none."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def memory_child(trainer, batch, steps=4):
    """In a subprocess of its own: the transformer trained for a few steps at ``batch`` by
    ``trainer``; prints JSON: the resident memory before the first step (data, model and
    trainer set up) and its peak over the steps, in MiB. The peak (VmHWM) is reset before the
    steps (Linux: 5 written to /proc/self/clear_refs), so loading the data does not count;
    without that, ru_maxrss (the whole process's peak)."""
    import gc
    import resource
    global BATCH
    BATCH = batch
    torch.set_num_threads(1)
    x_train, y_train, _, _, _ = load_data()
    torch.manual_seed(0)
    model = RowTransformer()
    if trainer == "nonprivate":
        tr = Nonprivate(model, (x_train, y_train), NONPRIVATE_LR)
    else:
        tr = Dpcorr("blt", model, (x_train, y_train), MODEL_LR["transformer"])
    gc.collect()
    how = "VmHWM"
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        how = "ru_maxrss"
    before = _status_mib("VmRSS")
    for _ in range(steps):
        tr.step()
    peak = _status_mib("VmHWM") if how == "VmHWM" else None
    if peak is None:
        how, peak = "ru_maxrss", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    tr.close()
    print(json.dumps({"before_mib": before or 0.0, "peak_mib": peak, "how": how}))


def memory_report(batch=1024):
    """Peak memory of nonprivate and dpcorr-blt on the transformer at ``batch``, each in a
    subprocess (a fresh process: one peak per trainer)."""
    import subprocess
    out = {}
    for trainer in ("nonprivate", "dpcorr-blt"):
        r = subprocess.run([sys.executable, __file__, "--memory-child", trainer,
                            "--batch", str(batch)], capture_output=True, text=True, check=True)
        out[trainer] = json.loads(r.stdout.strip().splitlines()[-1])
    np_, dp = out["nonprivate"], out["dpcorr-blt"]
    ratio = dp["peak_mib"] / np_["peak_mib"]
    rise = (dp["peak_mib"] - dp["before_mib"]) / max(np_["peak_mib"] - np_["before_mib"], 1e-9)
    print(f"== memory: transformer, batch {batch}, a process of its own per trainer, 4 steps "
          f"({np_['how']}: the peak resident memory over the steps)")
    for k, r in out.items():
        print(f"  {k:16s} peak {r['peak_mib']:7.1f} MiB  (before the first step "
              f"{r['before_mib']:7.1f} MiB, rise {r['peak_mib'] - r['before_mib']:6.1f} MiB)")
    print(f"  dpcorr-blt / nonprivate peak: {ratio:.3f} ({'meets' if ratio <= 1.5 else 'MISSES'} "
          f"the target <= 1.5); rise over the loaded process: {rise:.3f}")
    return {"batch": batch, "trainers": out, "peak_ratio": ratio, "rise_ratio": rise}


def print_ratios(name, res):
    blt = res.get("dpcorr-blt", {}).get("examples_per_cpu_s")
    if blt is None:
        return
    if "nonprivate" in res:
        r = blt / res["nonprivate"]["examples_per_cpu_s"]
        t = TARGET_NONPRIVATE[name]
        print(f"  dpcorr-blt / nonprivate: {r:.3f} ({'meets' if r >= t else 'MISSES'} the target "
              f">= {t})")
    if "dpcorr-blt-rows" in res:
        d = 100 * (res["dpcorr-blt"]["test_accuracy"] - res["dpcorr-blt-rows"]["test_accuracy"])
        r = blt / res["dpcorr-blt-rows"]["examples_per_cpu_s"]
        print(f"  dpcorr-blt / dpcorr-blt-rows: {r:.3f}; accuracy {d:+.2f} pp "
              f"({'meets' if abs(d) <= 0.5 else 'MISSES'} the target +-0.5 pp)")
    if "opacus-dpsgd" in res:
        op = res["opacus-dpsgd"]["examples_per_cpu_s"]
        r = blt / op
        print(f"  dpcorr-blt / opacus-dpsgd: {r:.3f} ({'meets' if r >= TARGET_OPACUS else 'MISSES'}"
              f" the target >= {TARGET_OPACUS})")
        if "nonprivate" in res:
            # the target in units of plain training: TARGET_OPACUS times Opacus's own ratio
            o = op / res["nonprivate"]["examples_per_cpu_s"]
            need = TARGET_OPACUS * o
            print(f"    opacus-dpsgd / nonprivate: {o:.3f}, so {TARGET_OPACUS} x Opacus = "
                  f"{TARGET_OPACUS} x {o:.3f} = {need:.3f} x nonprivate"
                  + (" (faster than training without privacy: out of reach for any private "
                     "trainer that also runs the plain forward and backward)" if need > 1.0
                     else ""))


def main(argv=None):
    global BATCH
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--models", default="mlp,cnn,transformer")
    p.add_argument("--only", default="", help="comma-separated trainers (default: all)")
    p.add_argument("--steps", type=int, default=0, help="at most this many steps (default: "
                   "one epoch; accuracies then are not comparable)")
    p.add_argument("--batch", type=int, default=BATCH, help="the batch size (default 128)")
    p.add_argument("--memory", action="store_true", help="also the peak memory at batch 1024 "
                   "(transformer, nonprivate vs dpcorr-blt)")
    p.add_argument("--memory-child", default=None, help=argparse.SUPPRESS)
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    BATCH = args.batch
    if args.memory_child:
        memory_child(args.memory_child, args.batch)
        return 0
    torch.set_num_threads(1)
    *data, source = load_data()
    print(f"data: {source}; one torch thread; epsilon {EPSILON}, delta {DELTA}, batch {BATCH}, "
          f"clip {CLIP}, one epoch")
    opacus, why = import_opacus()
    if opacus is None:
        print(f"opacus-dpsgd skipped: {why} (fetch github:pytorch/opacus, check out v1.4.0, "
              f"set OPACUS_SRC)")
    only = [s for s in args.only.split(",") if s]
    results = {}
    for name in args.models.split(","):
        res = run_model(name, data, opacus, only, args.steps)
        results[name] = res
        print(f"== {name} (DP-SGD noise multiplier {res['_noise_multiplier_dpsgd']:.4f})")
        for k, r in res.items():
            if k.startswith("_"):
                continue
            print(f"  {k:16s} {r['examples_per_cpu_s']:8.1f} examples/CPU-s  (blocks "
                  f"{r['block_mean']:.1f} +- {r['block_sd']:.1f}; median step "
                  f"{r['median_step_cpu_ms']:.1f} ms)  test accuracy "
                  f"{100 * r['test_accuracy']:.2f}%")
        print_ratios(name, res)
        sys.stdout.flush()
    if args.memory:
        results["_memory"] = memory_report()
    if args.json:
        print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
