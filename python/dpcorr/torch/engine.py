"""``make_private``: DP training of a PyTorch model with dpcorr's sampler, correlated noise and
accountant.

One optimizer step t does what the library's trainer does (include/dpcorr/train.h):

    I_t  = the sampler's batch of step t          (the loader yields exactly it)
    g_i  = per-example gradients                  (functorch, _per_sample.py)
    g_t  = sum_i min(1, clip / ||g_i||) g_i
    p.grad = (g_t + noise_scale (B Z)_t) / B      (B = expected batch size; (B Z)_t from the
                                                   plan's dpcorr.NoiseGenerator)
    the wrapped optimizer's step                  (post-processing)

The run's decisions and its privacy ledger come from :class:`dpcorr.TrainingPlan`, i.e. from the
library, so the same configuration reports the same epsilon as ``dpcorr train``.
"""

import hashlib
import numbers

import numpy as np
import torch

from .. import _check
from ..plan import TrainingPlan
from ._per_sample import PerSampleGradients

_STATE_FORMAT = "dpcorr-torch"


def make_private(model, optimizer, dataset, *, batch_size, epsilon=None, delta=None, epochs=1,
                 clip=1.0, mech="blt", sampler="auto", seed=None, noise_multiplier=None,
                 mech_params=None, groups=0, accountant="pld", workload=None,
                 allow_large_delta=False, loss_reduction="mean", collate_fn=None,
                 noise_form="auto"):
    """Makes a model, its optimizer and its data private. Returns ``(model, optimizer, loader,
    engine)``; train with the usual loop::

        model, optimizer, loader, engine = dpcorr.torch.make_private(
            model, torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.9), train_set,
            epsilon=3, delta=1e-5, epochs=2, batch_size=250, clip=1.0, mech="blt", seed=1)
        for epoch in range(engine.epoch, 2):
            for x, y in loader:
                optimizer.zero_grad()
                loss = torch.nn.functional.cross_entropy(model(x), y)
                loss.backward()
                optimizer.step()
        print(engine.epsilon(), engine.ledger())

    model           a torch.nn.Module; every module with trainable parameters of its own must
                    treat the examples of a batch independently (Linear, Conv, GroupNorm,
                    LayerNorm, Embedding; activations and pooling need nothing; BatchNorm is
                    refused). The same object is returned, with hooks installed.
    optimizer       a torch optimizer over (a subset of) the model's parameters; lr, momentum
                    and weight_decay of its first group define the workload of BSR / BISR / the
                    default BLT. Returned wrapped (a torch.optim.Optimizer sharing its state).
    dataset         a map-style dataset of N examples (TensorDataset is fastest), or a
                    DataLoader (its dataset and collate_fn are used)
    epsilon, delta  the budget; the noise is calibrated to it (delta None: derived from N by
                    the library, recorded in the ledger). Or give ``noise_multiplier`` instead of epsilon: the engine reports the epsilon it spends.
    epochs, batch_size
                    n = epochs x floor(N / batch_size) steps; batch_size is the (expected)
                    batch size
    clip            per-example L2 clip norm
    mech            "blt" (default; optimized for the run's n, see dpcorr.default_blt),
                    "identity" (DP-SGD), "nu", "bsr", "bisr", "antipgd", "lcgd", "tree",
                    "toeplitz", "dense", with parameters in ``mech_params`` (e.g.
                    ``{"bands": 16}``), or a :class:`dpcorr.Mechanism`
    sampler         "auto" (Poisson for identity, fixed-order epochs otherwise), "fixed",
                    "shuffle", "poisson", "cyclic-poisson" (``groups``), "balls-in-bins"; the
                    library accounts each with the tightest route that applies (ledger "route")
    seed            int: reproducible (sampler, noise); None: secure (OS key, ChaCha20)
    accountant      "pld" or "rdp" for amplified runs (unamplified runs use exact GDP unless
                    "zcdp" is asked for)
    workload        (momentum, decay) of BSR / BISR / the default BLT instead of the optimizer's
    loss_reduction  "mean" (the loss is averaged over the batch; default) or "sum"
    noise_form      "auto", "buffer" or "replay" (the noise generator's form)

    Library errors raise :class:`dpcorr.DpcorrValueError` with the library's message (e.g. an
    unreachable budget, or the gdp accountant for a Poisson-amplified run).
    """
    if isinstance(dataset, torch.utils.data.DataLoader):
        collate_fn = collate_fn or dataset.collate_fn
        dataset = dataset.dataset
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"model: expected a torch.nn.Module, got {type(model).__name__}")
    if not isinstance(optimizer, torch.optim.Optimizer):
        raise TypeError(f"optimizer: expected a torch.optim.Optimizer, got "
                        f"{type(optimizer).__name__}")
    _check.choice("loss_reduction", loss_reduction, ("mean", "sum"))
    group = optimizer.param_groups[0]
    plan_kwargs = dict(batch_size=batch_size, epochs=epochs, epsilon=epsilon, delta=delta,
                       noise_multiplier=noise_multiplier, mech=mech, mech_params=mech_params,
                       sampler=sampler, groups=groups, clip=clip, accountant=accountant,
                       lr=float(group.get("lr", 0.1)), momentum=float(group.get("momentum", 0.0)),
                       weight_decay=float(group.get("weight_decay", 0.0)), workload=workload,
                       allow_large_delta=allow_large_delta)
    engine = PrivacyEngine(model, optimizer, dataset, plan_kwargs, seed=seed,
                           loss_reduction=loss_reduction, collate_fn=collate_fn,
                           noise_form=noise_form)
    return model, engine.optimizer, engine.loader, engine


class PrivacyEngine:
    """The state of a private run: its :class:`dpcorr.TrainingPlan` (sampler, mechanism, ledger),
    its noise generator, the per-example gradient hooks and the step counter. Made by
    :func:`make_private`."""

    def __init__(self, model, optimizer, dataset, plan_kwargs, *, seed=None,
                 loss_reduction="mean", collate_fn=None, noise_form="auto"):
        self.model = model
        self._grads = PerSampleGradients(model)
        self.params = self._grads.params
        trainable = {id(p) for p in self.params}
        for g in optimizer.param_groups:
            for p in g["params"]:
                if id(p) not in trainable:
                    raise ValueError("optimizer: updates a parameter that is not a trainable "
                                     "parameter of the model (it would get no noise)")
        self.dim = sum(p.numel() for p in self.params)
        self.n_examples = len(dataset)
        # one pass over the data: refuse a non-finite value (one example would decide every
        # weight) and hash the content for the checkpoint fingerprint, as the CLI does
        self._data_hash = _data_digest(dataset)
        self._plan_kwargs = plan_kwargs
        self._noise_form = noise_form
        self.loss_reduction = loss_reduction
        self.plan = TrainingPlan(self.n_examples, seed=seed, **plan_kwargs)
        self.noise = self.plan.noise_generator(self.dim, form=noise_form, scaled=False)
        self._noise_buf = np.empty(self.dim, dtype=np.float64)
        self._noise_t = torch.from_numpy(self._noise_buf)
        self.steps_done = 0
        self._pending = None  # (step, batch size) handed out by the loader
        self.last_clip_fraction = float("nan")
        self.optimizer = DPOptimizer(optimizer, self)
        self.loader = DPDataLoader(dataset, self, collate_fn)

    # ---- the run ---------------------------------------------------------------------------

    @property
    def steps(self):
        """n: the number of steps of the run."""
        return self.plan.steps

    @property
    def steps_per_epoch(self):
        """floor(N / batch_size)."""
        return self.plan.steps_per_epoch

    @property
    def epoch(self):
        """The epoch the next step belongs to (0-based; = epochs when the run is done)."""
        return self.steps_done // self.plan.steps_per_epoch

    def epsilon(self, step=None):
        """The epsilon of the whole configured run (default: the guarantee, as ``dpcorr train``
        reports it), or of what the first ``step`` steps release
        (``engine.epsilon(engine.steps_done)``: spent so far)."""
        return self.plan.epsilon(step)

    def ledger(self):
        """The privacy ledger: the fields of the C trainer's report (see
        :meth:`dpcorr.TrainingPlan.ledger`)."""
        return self.plan.ledger()

    def detach(self):
        """Removes the hooks from the model."""
        self._grads.remove()

    # ---- one step --------------------------------------------------------------------------

    def _begin(self, step, batch_size):
        self._pending = (step, batch_size)

    def _privatize(self):
        """Sets p.grad = (clipped sum + noise) / expected batch for every trainable parameter."""
        if self.steps_done >= self.plan.steps:
            raise RuntimeError(f"dpcorr: all {self.plan.steps} steps of the run are done")
        b = self._grads.batch_size()
        if self._pending is not None:
            t, want = self._pending
            if t != self.steps_done:
                raise RuntimeError(f"dpcorr: the loader's batch is for step {t}, the run is at "
                                   f"step {self.steps_done}")
            if b is None and want == 0:
                b = 0
            if b != want:
                raise RuntimeError(f"dpcorr: the model saw a batch of {b} examples, the "
                                   f"loader's batch of step {t} has {want}")
        elif b is None:
            raise RuntimeError("dpcorr: no forward pass with gradients was recorded since the "
                               "last step")
        clip = self.plan.clip
        if b > 0:
            per = self._grads.compute(b, float(b) if self.loss_reduction == "mean" else 1.0)
            flats = [g.reshape(b, -1) for g in per]  # views: (b, numel(p))
            norms = torch.linalg.vector_norm(torch.stack(
                [torch.linalg.vector_norm(g, dim=1).to(flats[0].dtype) for g in flats], 1),
                dim=1)  # (b,): ||g_i|| over all parameters
            bad = ~torch.isfinite(norms)
            if bool(bad.any()):
                # one example would decide the released model (NaN/inf parameters): refuse
                i = int(bad.nonzero()[0])
                where = f"example {i} of the batch of step {self.steps_done}"
                if self._pending is not None:
                    try:
                        where += f" (training record {int(self.plan.batch(self.steps_done)[i])})"
                    except (IndexError, TypeError, ValueError):
                        pass
                raise ValueError(f"dpcorr: {where} has a non-finite per-example gradient (a NaN "
                                 f"or inf in its inputs or loss?); refusing the step")
            factor = (clip / norms).clamp(max=1.0)  # (b,): min(1, clip / ||g_i||)
            sums = [factor.to(g.dtype) @ g for g in flats]  # sum_i factor_i g_i: one GEMV each
            self.last_clip_fraction = float((norms > clip).float().mean())
        else:
            sums = None
            self.last_clip_fraction = float("nan")
        flat = self._noise_t  # (dim,) float64, a view of the generator's output buffer
        self.noise.next(out=self._noise_buf)  # raw (B Z)_t: one library call, no allocation
        flat.mul_(self.plan.noise_scale)  # noise_scale (B Z)_t
        if sums is not None:
            off = 0
            for s in sums:
                n = s.numel()
                flat[off:off + n].add_(s.cpu())  # in float64
                off += n
        flat.mul_(1.0 / self.plan.expected_batch)  # (g_t + noise_scale (B Z)_t) / B
        off = 0
        for p in self.params:
            n = p.numel()
            h = flat[off:off + n].view(p.shape)
            if p.grad is not None and p.grad.shape == p.shape and p.grad.dtype == p.dtype \
                    and p.grad.device == p.device:
                p.grad.copy_(h)  # in place: rounded to p's dtype, moved to p's device
            else:
                p.grad = h.to(device=p.device, dtype=p.dtype, copy=True)
            off += n

    def _advance(self):
        self.steps_done += 1
        self._pending = None
        self._grads.clear()

    # ---- checkpoints -----------------------------------------------------------------------

    def state_dict(self):
        """Everything needed to resume the run bit for bit: the step, the RNG (seed, or the
        secure key: store the checkpoint like a secret), the noise generator's state, the
        ledger (to refuse a checkpoint of another run), the model's and the optimizer's
        state_dicts. Save it with ``torch.save``."""
        return {"format": _STATE_FORMAT, "version": 2, "steps_done": self.steps_done,
                "rng": self.plan.rng, "ledger": self.plan.ledger(), "dim": self.dim,
                "fingerprint": self._fingerprint(),
                "noise": self.noise.state_dict(), "model": self.model.state_dict(),
                "optimizer": self.optimizer.original.state_dict()}

    def load_state_dict(self, state):
        """Resumes a run saved by :meth:`state_dict`: same model architecture, data size and
        make_private arguments (the seed excepted: the saved run's RNG is adopted). Refuses a
        checkpoint of another run with ValueError naming what differs."""
        if not isinstance(state, dict) or state.get("format") != _STATE_FORMAT:
            raise ValueError("state: not a dpcorr.torch checkpoint")
        if state.get("version") != 2:
            # version 1 had no fingerprint of clip and data: it cannot be checked, so refused
            raise ValueError(f"state: unsupported version {state.get('version')!r} (version 1 "
                             f"checkpoints carry no fingerprint of clip and data; restart the "
                             f"run)")
        if state["dim"] != self.dim:
            raise ValueError(f"state: the checkpoint's model has {state['dim']} trainable "
                             f"parameters, this one {self.dim}")
        mine, saved = self._fingerprint(), state.get("fingerprint")
        if not isinstance(saved, dict):
            raise ValueError("state: the checkpoint has no fingerprint")
        diff = [k for k in mine if saved.get(k) != mine[k]] + \
            [k for k in saved if k not in mine]
        if diff:
            raise ValueError("state: a checkpoint of another run (" + "; ".join(
                f"{k} differs: {saved.get(k)!r} in the checkpoint, {mine.get(k)!r} here"
                for k in diff) + ")")
        plan = TrainingPlan(self.n_examples, rng_state=state["rng"], **self._plan_kwargs)
        mine, saved = plan.ledger(), state["ledger"]
        diff = sorted(k for k in set(mine) | set(saved) if mine.get(k) != saved.get(k))
        if diff:
            raise ValueError(f"state: a checkpoint of another run ({', '.join(diff)} differ: "
                             + "; ".join(f"{k} {saved.get(k)!r} vs {mine.get(k)!r}"
                                         for k in diff[:3]) + ")")
        step = _check.size("steps_done", state["steps_done"])
        if step > plan.steps:
            raise ValueError(f"state: steps_done {step} > the run's {plan.steps} steps")
        noise = plan.noise_generator(self.dim, form=self._noise_form, scaled=False)
        noise.load_state_dict(state["noise"])
        self.model.load_state_dict(state["model"])
        self.optimizer.original.load_state_dict(state["optimizer"])
        self.plan, self.noise, self.steps_done, self._pending = plan, noise, step, None
        self._grads.clear()


    def _fingerprint(self):
        """What a resumed run must share with the saved one (the CLI's checkpoint items:
        configuration, clip, model, data size and content)."""
        k = self._plan_kwargs
        mech = k["mech"]
        out = {name: _plain(k[name]) for name in sorted(k) if name != "mech"}
        out.update(mech=mech if isinstance(mech, str) else self.plan.ledger().get("mechanism"),
                   loss_reduction=self.loss_reduction, noise_form=self._noise_form,
                   model=[[n, list(p.shape), str(p.dtype)]
                          for n, p in self.model.named_parameters() if p.requires_grad],
                   n_examples=self.n_examples, data=self._data_hash)
        return out


def _plain(v):
    """A configuration value as plain Python (for comparison and for torch.save)."""
    if isinstance(v, dict):
        return {str(a): _plain(b) for a, b in sorted(v.items())}
    if isinstance(v, (list, tuple, np.ndarray)):
        return [_plain(x) for x in v]
    if isinstance(v, (bool, str)) or v is None:
        return v
    if isinstance(v, numbers.Integral):
        return int(v)
    if isinstance(v, numbers.Real):
        return float(v)
    return repr(v)


def _data_digest(dataset):
    """The SHA-256 of the dataset's content (every tensor, array and number of every example,
    with dtypes and shapes). Refuses, with the example's index, a non-finite value."""
    h = hashlib.sha256()
    if isinstance(dataset, torch.utils.data.TensorDataset):
        for j, x in enumerate(dataset.tensors):
            x = x.detach().cpu().contiguous()
            if x.is_floating_point() or x.is_complex():
                rows = x.reshape(x.shape[0], -1) if x.dim() else x.reshape(1, 1)
                bad = torch.nonzero(~torch.isfinite(rows).all(dim=1)).flatten()
                if bad.numel():
                    raise ValueError(f"dataset: example {int(bad[0])} has a non-finite value "
                                     f"(tensor {j}); clean or drop it")
            h.update(f"{x.dtype}{tuple(x.shape)}".encode())
            h.update(x.numpy().tobytes() if x.dtype != torch.bfloat16 else
                     x.view(torch.int16).numpy().tobytes())
        return h.hexdigest()
    for i in range(len(dataset)):
        try:
            _digest_item(h, dataset[i])
        except _NonFinite:
            raise ValueError(f"dataset: example {i} has a non-finite value; clean or drop "
                             f"it") from None
    return h.hexdigest()


class _NonFinite(Exception):
    pass


def _digest_item(h, v):
    if isinstance(v, torch.Tensor):
        v = v.detach().cpu().contiguous()
        if (v.is_floating_point() or v.is_complex()) and not bool(torch.isfinite(v).all()):
            raise _NonFinite
        h.update(f"T{v.dtype}{tuple(v.shape)}".encode())
        h.update((v.view(torch.int16) if v.dtype == torch.bfloat16 else v).numpy().tobytes())
    elif isinstance(v, np.ndarray):
        if v.dtype.kind in "fc" and not np.isfinite(v).all():
            raise _NonFinite
        h.update(f"A{v.dtype}{v.shape}".encode())
        h.update(np.ascontiguousarray(v).tobytes())
    elif isinstance(v, (list, tuple)):
        h.update(f"L{len(v)}".encode())
        for x in v:
            _digest_item(h, x)
    elif isinstance(v, dict):
        h.update(f"D{len(v)}".encode())
        for key in sorted(v, key=str):
            h.update(str(key).encode())
            _digest_item(h, v[key])
    elif isinstance(v, numbers.Real) and not isinstance(v, bool) and \
            not isinstance(v, numbers.Integral):
        if not np.isfinite(float(v)):
            raise _NonFinite
        h.update(f"F{float(v)!r}".encode())
    elif hasattr(v, "__array__"):  # e.g. a PIL image: its pixels, not its repr (an address)
        _digest_item(h, np.asarray(v))
    elif v is None or isinstance(v, (numbers.Number, str, bytes)):
        h.update(f"O{type(v).__name__}{v!r}".encode())
    else:  # an object without a stable content: only its type is part of the fingerprint
        h.update(f"O{type(v).__name__}".encode())


class DPOptimizer(torch.optim.Optimizer):
    """Wraps an optimizer: ``step()`` replaces every trainable parameter's gradient by the
    clipped, noised and averaged one of the current step, then runs the wrapped optimizer's
    step. Shares ``param_groups`` and ``state`` with it (LR schedulers work)."""

    def __init__(self, optimizer, engine):  # pylint: disable=super-init-not-called
        self.original = optimizer
        self.engine = engine

    # the wrapped optimizer's own attributes (load_state_dict replaces its param_groups list)
    param_groups = property(lambda self: self.original.param_groups,
                            lambda self, v: setattr(self.original, "param_groups", v))
    state = property(lambda self: self.original.state,
                     lambda self, v: setattr(self.original, "state", v))
    defaults = property(lambda self: self.original.defaults,
                        lambda self, v: setattr(self.original, "defaults", v))

    def zero_grad(self, set_to_none=False):
        """Clears the gradients and the captured activations (call it before the forward
        pass)."""
        self.original.zero_grad(set_to_none=set_to_none)
        self.engine._grads.clear()

    def step(self, closure=None):
        """One private step (closure, if given, runs the forward and backward passes)."""
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        self.engine._privatize()
        self.original.step()
        self.engine._advance()
        return loss

    def state_dict(self):
        return self.original.state_dict()

    def load_state_dict(self, state_dict):
        self.original.load_state_dict(state_dict)

    def add_param_group(self, param_group):
        raise RuntimeError("dpcorr: parameters cannot be added to a private optimizer")

    def __repr__(self):
        return f"DPOptimizer({self.original!r})"


class DPDataLoader:
    """Yields the batches of dpcorr's sampler: iterating it runs the steps from the engine's
    current step to the end of that epoch (``len(loader)`` = steps per epoch). Call
    ``optimizer.step()`` once per batch."""

    def __init__(self, dataset, engine, collate_fn=None):
        self.dataset = dataset
        self.engine = engine
        self.collate_fn = collate_fn or torch.utils.data.default_collate
        self._tensors = dataset.tensors if isinstance(dataset, torch.utils.data.TensorDataset) \
            else None

    def __len__(self):
        return self.engine.steps_per_epoch

    def __iter__(self):
        eng = self.engine
        spe = eng.steps_per_epoch
        start = eng.steps_done
        end = min(eng.steps, (start // spe + 1) * spe)
        for t in range(start, end):
            if eng.steps_done != t:
                raise RuntimeError(f"dpcorr: optimizer.step() must be called once per batch "
                                   f"(the loader is at step {t}, the run at {eng.steps_done})")
            idx = eng.plan.batch(t)
            eng._begin(t, int(idx.size))
            yield self.fetch(idx)

    def fetch(self, idx):
        """The batch of the example indices ``idx`` (an int64 numpy array)."""
        if self._tensors is not None:
            it = torch.from_numpy(idx)
            return tuple(x[it] for x in self._tensors)
        if idx.size == 0:
            one = self.collate_fn([self.dataset[0]])
            return _empty_like(one)
        return self.collate_fn([self.dataset[int(i)] for i in idx])


def _empty_like(batch):
    if isinstance(batch, torch.Tensor):
        return batch[:0]
    if isinstance(batch, (list, tuple)):
        return type(batch)(_empty_like(b) for b in batch)
    if isinstance(batch, dict):
        return {k: _empty_like(v) for k, v in batch.items()}
    return batch


__all__ = ["make_private", "PrivacyEngine", "DPOptimizer", "DPDataLoader"]
