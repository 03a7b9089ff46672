"""``make_private``: DP training of a PyTorch model with dpcorr's sampler, correlated noise and
accountant.

One optimizer step t does what the library's trainer does (include/dpcorr/train.h):

    I_t  = the sampler's batch of step t          (the loader yields exactly it)
    l_i  = the per-example losses                 (engine.backward(losses): one per example,
                                                   proven to depend on example i alone, _proof.py)
    g_i  = grad l_i                               (per-layer hooks where proven, _per_sample.py;
                                                   else each example alone, _whole.py)
    g_t  = sum_i min(1, clip / ||g_i||) g_i
    p.grad = (g_t + noise_scale (B Z)_t) / B      (B = expected batch size; (B Z)_t from the
                                                   plan's dpcorr.NoiseGenerator; no / B when
                                                   loss_reduction="sum")
    the wrapped optimizer's step                  (post-processing)

The run's decisions and its privacy ledger come from :class:`dpcorr.TrainingPlan`, i.e. from the
library, so the same configuration reports the same epsilon as ``dpcorr train``.
"""

import hashlib
import numbers
import random
import time
import weakref

import numpy as np
import torch

from .. import _check, _lib
from .._errors import DpcorrRuntimeError
from ..plan import TrainingPlan
from . import _prefetch
from ._ghost import ghost_clip
from ._per_sample import PerSampleGradients
from ._proof import ANCHOR, NotPerExampleError, Tracker
from ._whole import WholeModelGradients, _tensors
from .validate import validate

_STATE_FORMAT = "dpcorr-torch"


def make_private(model, optimizer, dataset, *, batch_size=None, epsilon=None, delta=None,
                 epochs=None, clip=None, mech="blt", sampler=None, seed=None,
                 noise_multiplier=None, mech_params=None, groups=None, accountant=None,
                 workload=None, allow_large_delta=None, loss_reduction="mean", collate_fn=None,
                 noise_form=None, max_physical_batch_size=None, prefetch_noise=True):
    """Makes a model, its optimizer and its data private. Returns ``(model, optimizer, loader,
    engine)``; train with the usual loop::

        model, optimizer, loader, engine = dpcorr.torch.make_private(
            model, torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.9), train_set,
            epsilon=3, delta=1e-5, epochs=2, batch_size=250, clip=1.0, mech="blt", seed=1)
        for epoch in range(engine.epoch, 2):
            for x, y in loader:
                optimizer.zero_grad()
                losses = torch.nn.functional.cross_entropy(model(x), y, reduction="none")
                engine.backward(losses)  # one loss per example, not loss.backward()
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
                    "zcdp" is asked for); None: the library's default
    workload        (momentum, decay) of BSR / BISR / the default BLT instead of the optimizer's
    loss_reduction  how the per-example losses given to ``engine.backward(losses)`` combine
                    into the update: "mean" (default): (clipped sum + noise) / expected batch
                    size; "sum": clipped sum + noise. The losses are one per example (shape
                    (B,)); a scalar, or a loss vector whose computation couples the examples
                    (batch-centred, in-batch contrastive), is refused (NotPerExampleError; see
                    python/README.md, "Privacy model of dpcorr.torch")
    noise_form      "auto", "buffer" or "replay" (the noise generator's form; the same noise)
    (torch.distributed: when a process group of several processes is initialized, every rank
    takes its share of every batch and all ranks take the same step; see python/README.md)
    max_physical_batch_size
                    virtual steps: the loader yields each step's batch in physical batches of
                    at most this many examples; call ``optimizer.step()`` after each: the
                    examples are clipped per physical batch, summed in the same order, and the
                    step's noise is added and the wrapped optimizer runs once, on the last one
                    (``engine.step_done`` is False before it). Bit-identical to the whole batch;
                    memory bounded by the physical batch.
    prefetch_noise  True (default): step t's noise is generated on the CPU by a background
                    thread from the moment the loader issues step t's batch, overlapping the
                    forward and backward passes (the same bits as generating it in
                    ``optimizer.step()``, which False does); ``engine.close()`` stops the thread

    Every keyword of a library field left None is the library's default (dpc_train_config's
    field table; generated here): {defaults}. So are lr, momentum and weight_decay when the
    optimizer's group has none (Adam has no momentum).

    Parameters may be on any device (all trainable parameters on one device is fastest) and of
    any floating dtype: per-example gradients are clipped, summed and noised in float64 on the
    parameters' device (clip factors in float64 from norms raised above their rounding error:
    no clipped gradient exceeds clip in any dtype), the noise is made on the CPU,
    staged in pinned memory (CUDA) and copied with ``non_blocking=True``, and the averaged,
    noised gradient is rounded once to each parameter's dtype (float32, bfloat16, ...).

    Library errors raise :class:`dpcorr.DpcorrValueError` with the library's message (e.g. an
    unreachable budget, or the gdp accountant for a Poisson-amplified run).
    """
    if isinstance(dataset, torch.utils.data.DataLoader):
        batch_size = _adopt_loader(dataset, batch_size)
        collate_fn = collate_fn or dataset.collate_fn
        dataset = dataset.dataset
    if batch_size is None:
        raise ValueError("batch_size: required (or pass a DataLoader with a batch_size)")
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"model: expected a torch.nn.Module, got {type(model).__name__}")
    if not isinstance(optimizer, torch.optim.Optimizer):
        raise TypeError(f"optimizer: expected a torch.optim.Optimizer, got "
                        f"{type(optimizer).__name__}")
    _check.choice("loss_reduction", loss_reduction, ("mean", "sum"))
    group = optimizer.param_groups[0]
    # a keyword left None (and an optimizer value its group lacks: Adam has no momentum) is the
    # library's default, read from dpc_train_config's field table; the plan's keywords record
    # the values (the checkpoint fingerprint compares them), not None
    given = dict(epochs=epochs, clip=clip, sampler=sampler, groups=groups, accountant=accountant,
                 allow_large_delta=allow_large_delta, noise_form=noise_form,
                 lr=group.get("lr"), momentum=group.get("momentum"),
                 weight_decay=group.get("weight_decay"))
    v = {name: _library_default(name) if value is None else value
         for name, value in given.items()}
    plan_kwargs = dict(batch_size=batch_size, epochs=v["epochs"], epsilon=epsilon, delta=delta,
                       noise_multiplier=noise_multiplier, mech=mech, mech_params=mech_params,
                       sampler=v["sampler"], groups=v["groups"], clip=v["clip"],
                       accountant=v["accountant"], lr=float(v["lr"]),
                       momentum=float(v["momentum"]), weight_decay=float(v["weight_decay"]),
                       workload=workload, allow_large_delta=v["allow_large_delta"])
    engine = PrivacyEngine(model, optimizer, dataset, plan_kwargs, seed=seed,
                           loss_reduction=loss_reduction, collate_fn=collate_fn,
                           noise_form=v["noise_form"],
                           max_physical_batch_size=max_physical_batch_size,
                           prefetch_noise=prefetch_noise)
    return model, engine.optimizer, engine.loader, engine


make_private.__doc__ = make_private.__doc__.replace("{defaults}", _lib.defaults_doc(
    _lib.TrainConfig, ("epochs", "clip", "sampler", "groups", "accountant", "allow_large_delta",
                       "noise_form", "lr", "momentum", "weight_decay")))


def _library_default(name):
    """The library's default of dpc_train_config's field `name` (its table's): the sampler's
    by its name ("auto"), an enum's by its name, a number as its type."""
    if name == "sampler":  # an int field whose default (DPC_SAMPLER_AUTO) has a name
        return _lib.default_text(_lib.TrainConfig, name)
    return _lib.default(_lib.TrainConfig, name)


def _adopt_loader(loader, batch_size):
    """A DataLoader's batch size is adopted; its sampler is not: dpcorr's sampler decides which
    examples each step sees (the ledger accounts for it), so a sampler of the user's own
    (WeightedRandomSampler, a custom batch_sampler, ...) is refused rather than replaced."""
    data = torch.utils.data
    bs = loader.batch_sampler
    if bs is not None and type(bs) is not data.BatchSampler:
        raise ValueError(f"dataset: the DataLoader's batch_sampler ({type(bs).__name__}) would "
                         f"be replaced by dpcorr's sampler (sampler=...); pass the dataset")
    if type(loader.sampler) not in (data.SequentialSampler, data.RandomSampler):
        raise ValueError(f"dataset: the DataLoader's sampler ({type(loader.sampler).__name__}) "
                         f"would be replaced by dpcorr's sampler (sampler=...); pass the dataset")
    if loader.batch_size is not None:
        if batch_size is not None and batch_size != loader.batch_size:
            raise ValueError(f"batch_size: {batch_size} differs from the DataLoader's "
                             f"batch_size {loader.batch_size}")
        batch_size = loader.batch_size
    return batch_size


class PrivacyEngine:
    """The state of a private run: its :class:`dpcorr.TrainingPlan` (sampler, mechanism, ledger),
    its noise generator, the per-example gradient hooks and the step counter. Made by
    :func:`make_private`."""

    def __init__(self, model, optimizer, dataset, plan_kwargs, *, seed=None,
                 loss_reduction="mean", collate_fn=None, noise_form=None,
                 max_physical_batch_size=None, prefetch_noise=True):
        self.model = model
        if hasattr(dataset, "__len__") and len(dataset) == 0:
            raise ValueError("dataset: is empty (0 examples): a private run needs at least one "
                             "batch of examples")
        dist = torch.distributed
        self.world, self.rank = 1, 0
        if dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1:
            # each rank takes a contiguous share of every batch; the clipped sum is passed from
            # rank to rank (the one-process order); the key is rank 0's; the noise is the same
            # on every rank, so is every update
            self.world, self.rank = dist.get_world_size(), dist.get_rank()
            if max_physical_batch_size is not None:
                raise ValueError("max_physical_batch_size: not supported with torch.distributed")
        validate(model, strict=True)
        # the isolated path is always there (and sees every batch: the token check); the
        # per-layer path is used only where the step's proof holds and its layers apply; on its
        # first step it is also compared with autograd (evidence: weights used outside their
        # module fail it, and the run takes the isolated path)
        self._whole = WholeModelGradients(model)
        self._whole.on_forward = self._seen
        try:
            self._layers = PerSampleGradients(model)
        except ValueError:
            self._layers = None
        self.params = self._whole.params
        self.path = "layers" if self._layers is not None else "isolated"
        self._tracker = None  # the proof of the step in progress (_proof.Tracker)
        self.proof = None  # None: the last step's model was proven per example; else why not
        self._backward_done = False  # engine.backward(losses) ran on the pending batch
        # tests and sensitivity probes only: with keep_clipped_sum = True, last_clipped_sum is
        # the last step's clipped sum before noise (float64, CPU): NOT private, never publish
        self.keep_clipped_sum = False
        self.last_clipped_sum = None
        self._state_before = None
        self._hooks = [model.register_forward_pre_hook(self._model_pre),
                       model.register_forward_hook(self._model_post)]
        for name, m in model.named_modules():  # where an operation ran, for the messages
            label = f"{name} ({type(m).__name__})" if name else \
                f"the model's own forward ({type(m).__name__})"
            self._hooks += [m.register_forward_pre_hook(
                lambda mod, i, label=label: self._enter_module(label)),
                m.register_forward_hook(lambda mod, i, o: self._leave_module())]
        self._layers_agree = False  # the per-layer path gave autograd's gradient on a batch
        self.ghost_clipping = True  # ghost norms + book-keeping where they apply (_ghost.py)
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
        # None: the library's (recorded as its name, as make_private records it)
        self._noise_form = _library_default("noise_form") if noise_form is None else noise_form
        self.loss_reduction = loss_reduction
        self.plan = TrainingPlan(self.n_examples, seed=seed, **plan_kwargs)
        # a new private run: dpcorr.torch.backward() no longer reaches an earlier engine's
        # pending batch (one private run at a time; engine.backward is explicit)
        _ACTIVE[0] = None
        if self.world > 1:
            self._join_ranks()
        self.noise = self.plan.noise_generator(self.dim, form=noise_form, scaled=False)
        # the update is computed on the first trainable parameter's device; the noise on the
        # CPU, staged (pinned when CUDA is there: a page-locked buffer makes the copy to the
        # device asynchronous) and copied with non_blocking=True
        self.device = self.params[0].device
        self._staged = self.device.type != "cpu"
        pin = self._staged and self.device.type == "cuda" and torch.cuda.is_available()
        self._noise_t = torch.empty(self.dim, dtype=torch.float64, pin_memory=pin)
        self._noise_buf = self._noise_t.numpy()  # the generator writes into the tensor's memory
        self._copied = None  # a CUDA event: the last copy out of the staging buffer is done
        self.prefetch_noise = bool(prefetch_noise)
        self._worker = None  # the noise thread (started by the first batch the loader issues)
        self._job = None  # the noise job of the step in progress (its step, in the job)
        self.noise_wait_s = 0.0  # seconds optimizer.step() waited for noise, in all
        self.last_noise_wait_s = 0.0  # ... in the last step
        self.steps_done = 0
        self._high = 0  # the most steps this engine has released (a load never goes below)
        self._pending = None  # (step, batch size, batch tensors, last, their content) issued
        self._foreign = None  # why a forward pass since the last step ran on another batch
        self.last_clip_fraction = float("nan")
        self.physical = None if max_physical_batch_size is None else \
            _check.size("max_physical_batch_size", max_physical_batch_size)
        if self.physical == 0:
            raise ValueError("max_physical_batch_size: must be at least 1")
        self._rows = []  # distributed: this rank's clipped rows, (offset, (b, n) float64)
        self._acc = None  # float64 clipped sum of the step's physical batches so far
        self._work = None  # the float64 scratch of the clipped sum (CPU)
        self._clipped = 0  # examples clipped so far in this step, and how many of them clipped
        self._over = 0
        self.step_done = True  # False between the physical batches of a step
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
        """The epsilon spent so far: what the ``steps_done`` steps run so far release (as
        Opacus's get_epsilon), or what the first ``step`` steps release. 0 before the first
        step. The whole run's guarantee: :meth:`epsilon_total`."""
        step = self.steps_done if step is None else step
        if step == 0:
            return 0.0
        if step >= self.plan.steps:
            return self.plan.epsilon()
        return self.plan.epsilon(step)

    def epsilon_total(self):
        """The epsilon of the whole configured run (the guarantee, as ``dpcorr train`` reports
        it)."""
        return self.plan.epsilon()

    def ledger(self):
        """The privacy ledger: the fields of the C trainer's report (see
        :meth:`dpcorr.TrainingPlan.ledger`)."""
        return self.plan.ledger()

    def detach(self):
        """Removes the hooks from the model (and stops the noise thread)."""
        if _ACTIVE[0] is not None and _ACTIVE[0]() is self:
            _ACTIVE[0] = None
        self._stop_worker()
        self._stop_tracker()
        for h in self._hooks:
            h.remove()
        self._whole.remove()
        if self._layers is not None:
            self._layers.remove()

    def close(self):
        """Ends the run's use of resources: stops the noise thread (waiting for its job) and
        removes the hooks. The state (steps_done, ledger, state_dict) stays readable."""
        self.detach()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    # ---- the noise -------------------------------------------------------------------------

    def _noise_fill(self):
        """Step t's raw noise (B Z)_t into the staging buffer (what the thread runs, and the
        inline path): one library call, in place; scaled by the release (_release)."""
        if self._copied is not None:  # the last step's copy to the device has left the buffer
            self._copied.synchronize()
        self.noise.next(out=self._noise_buf)  # raw (B Z)_t: one library call, no allocation

    def _prefetch(self, step):
        """Starts generating step ``step``'s noise in the background (once per step)."""
        if not self.prefetch_noise or (self._job is not None and self._job.step == step):
            return
        if self._job is not None:  # a step that never ran: not possible in step order
            self._drain()
            raise RuntimeError(f"dpcorr: noise of step {self._job.step} pending at step {step}")
        if self.noise.step != step:
            return  # the generator is elsewhere (e.g. all steps done): inline path decides
        if self._worker is None:
            self._worker = _prefetch.NoiseWorker()
            self._finalizer = weakref.finalize(self, self._worker.close)
        self._job = self._worker.submit(step, self._noise_fill)

    def _take_noise(self, step):
        """Step ``step``'s scaled noise (the staging buffer), waiting for the thread if it made
        it; records the wait."""
        job, self._job = self._job, None
        if job is not None and job.step == step:
            self.last_noise_wait_s = _prefetch.wait(job)
        else:
            if job is not None:
                _prefetch.wait(job)
                raise RuntimeError(f"dpcorr: noise of step {job.step} made for step {step}")
            t0 = time.perf_counter()
            self._noise_fill()
            self.last_noise_wait_s = time.perf_counter() - t0
        self.noise_wait_s += self.last_noise_wait_s
        return self._noise_t

    def _drain(self):
        """Waits for the noise thread's job (its result stays pending)."""
        if self._job is not None:
            try:
                _prefetch.wait(self._job)
            except BaseException:
                self._job = None
                raise

    def _stop_worker(self):
        try:
            self._drain()
        finally:
            if self._worker is not None:
                self._finalizer.detach()
                self._worker.close()
                self._worker = None
            self.prefetch_noise = False

    def _join_ranks(self):
        """Rank 0's RNG (seed or secure key) for every rank; every rank's configuration (ledger,
        trainable parameters, data size) must be rank 0's, else ValueError naming the rank."""
        dist = torch.distributed
        box = [self.plan.rng if self.rank == 0 else None]
        dist.broadcast_object_list(box, src=0)
        self.plan = TrainingPlan(self.n_examples, rng_state=box[0], **self._plan_kwargs)
        # the initial parameters too (before step 1): ranks that start from different models
        # would apply the same update to different points and diverge
        mine = (self.plan.ledger(), self.dim, self.n_examples,
                _state_digest([p.detach() for p in self.params]))
        every = [None] * self.world
        dist.all_gather_object(every, mine)
        for r, other in enumerate(every):
            if other != every[0]:
                what = [k for k, a, b in zip(("ledger", "trainable parameters", "examples",
                                              "initial parameters"), every[0], other) if a != b]
                raise ValueError(f"torch.distributed: rank {r}'s {', '.join(what)} differ from "
                                 f"rank 0's (every rank needs the same model, data and "
                                 f"make_private arguments; initialise the model identically on "
                                 f"every rank: the same torch.manual_seed before building it, "
                                 f"or load rank 0's state_dict)")

    def _share(self, idx):
        """This rank's contiguous share of a batch's example indices."""
        if self.world == 1:
            return idx
        return np.array_split(idx, self.world)[self.rank]

    def _pass_sum(self):
        """Distributed: continues the clipped sum rank after rank (0, 1, ...: the one-process
        order of the batch's examples, row by row) and gives every rank the total."""
        dist = torch.distributed
        acc = torch.zeros(self.dim, dtype=torch.float64)
        if self.rank > 0:
            dist.recv(acc, src=self.rank - 1)
        for off, clipped in self._rows:
            part = acc[off:off + clipped.shape[1]]
            for row in clipped:
                part.add_(row)
        self._rows = []
        if self.rank < self.world - 1:
            dist.send(acc, dst=self.rank + 1)
        dist.broadcast(acc, src=self.world - 1)
        return acc

    # ---- one step --------------------------------------------------------------------------

    def _begin(self, step, batch_size, batch=None, last=True):
        self._prefetch(step)
        issued = _tensors(batch) if batch is not None else []
        # the token is the batch's content (inputs and labels), not the tensor objects: a copy
        # of each, compared at the forward pass and again at optimizer.step(), so an in-place
        # overwrite of an issued tensor (x.copy_(other), y[:] = ...) is caught
        self._pending = (step, batch_size, issued, last,
                         [t.detach().clone() for t in issued])
        self._foreign = None
        self._start_tracker()

    def _start_tracker(self):
        """From here to engine.backward(losses), every operation on the pending batch is
        followed (_proof.py): the proof that each loss depends on its own example. Started when
        the loader issues the batch, and again by zero_grad() (a new attempt on it)."""
        self._backward_done = False
        self._stop_tracker()
        _close_stale_trackers()
        batch_size, issued = self._pending[1], self._pending[2]
        self._tracker = Tracker(batch_size)
        self._tracker.owner = weakref.ref(self)
        if self._layers is not None:
            self._layers.tag_of = self._tracker.tag_of
        for t in issued:
            if t.dim() > 0 and t.shape[0] == batch_size:
                self._tracker.tag(t, 0)
        self._tracker.__enter__()
        _ACTIVE[0] = weakref.ref(self)

    def _stop_tracker(self):
        tr, self._tracker = self._tracker, None
        if tr is not None and getattr(tr, "_saved_index", None) is not None:
            tr.close()
        return tr

    def backward(self, losses):
        """Runs the backward pass of a step from its per-example losses: ``losses`` is a 1-d
        tensor of the batch's B losses (e.g. ``F.cross_entropy(out, y, reduction="none")``).
        Refuses (NotPerExampleError) a scalar or a vector of another length, and a loss vector
        whose computation mixes the examples of the batch (a mean over the batch, z @ z.T, an
        index of one example, a Python value read out of the batch), naming the operation."""
        live = self._tracker is not None and not self._tracker.closed
        tr = self._stop_tracker()
        if self._pending is None:
            raise RuntimeError("dpcorr: engine.backward() without a batch of the engine's "
                               "loader (iterate the loader make_private returned)")
        if not live and not self._backward_done:
            raise RuntimeError("dpcorr: the operations on this batch were not followed to the "
                               "loss (a refused forward pass, or another engine's loader "
                               "issued a batch in between); call optimizer.zero_grad() and "
                               "run the forward pass again")
        b = self._pending[1]
        if not isinstance(losses, torch.Tensor) or losses.dim() != 1 or losses.shape[0] != b:
            got = (f"a tensor of shape {list(losses.shape)}" if isinstance(losses, torch.Tensor)
                   else type(losses).__name__)
            raise NotPerExampleError(
                f"loss: engine.backward needs one loss per example (a 1-d tensor of the batch's "
                f"{b} losses), got {got}: compute it per example, e.g. "
                f"F.cross_entropy(out, y, reduction=\"none\") or a per-example sum over the "
                f"other dimensions (l.sum(dim=1)); the mean or sum over the batch is the "
                f"engine's (loss_reduction). See {ANCHOR}")
        if self._backward_done:
            raise RuntimeError("dpcorr: engine.backward() called twice on one batch")
        if tr is not None and b > 1:
            why = tr.loss_why
            if why is None:
                tag = tr.tag_of(losses)
                if tag is None:
                    why = ("the losses were not computed from the loader's batch since it was "
                           "issued (or since the last zero_grad())")
                elif isinstance(tag, str):
                    why = tag
                elif tag not in (None, 0):
                    why = f"the examples are along dimension {tag} of the loss, not 0"
            if why is not None:
                raise NotPerExampleError(
                    f"loss: mixes the examples of a batch ({why}): each example's loss must "
                    f"depend on that example alone (a batch-centred loss, an in-batch "
                    f"contrastive loss such as InfoNCE, a statistic of the batch); make it "
                    f"per example (e.g. contrast against a fixed or public set of negatives, "
                    f"or centre with a constant). See {ANCHOR}")
            self.proof = tr.model_why
        elif tr is not None:
            self.proof = tr.model_why
        if losses.requires_grad:
            if self._ghost_ready():
                self._backward_to_captures(losses)
            else:
                losses.backward(torch.ones_like(losses))
        self._backward_done = True

    def _backward_to_captures(self, losses):
        """The backward pass as far as the captured tensors (the layers' outputs, the model's
        outputs, the attention's parts): torch.autograd.grad to those tensors prunes the
        parameters' own gradients (a convolution's weight gradient, ...), which the clipped
        sum never reads once the per-layer path is proven (p.grad is the engine's at
        optimizer.step()); each capture's callback gets its gradient as its tensor hook would
        (a hook that also ran sets the same value again). The first batch's checks compare with
        autograd's p.grad: they run before _ghost_ready() holds, on a full backward."""
        watched = list(self._layers.watched)
        for use in self._whole.uses:
            for k, o in enumerate(use[1]):
                watched.append((o, lambda g, k=k, d=use[2]: d.__setitem__(k, g.detach())))
        self._layers.watched = []
        if not watched:
            return
        grads = torch.autograd.grad(losses, [t for t, _ in watched], torch.ones_like(losses),
                                    allow_unused=True)
        for (_, callback), g in zip(watched, grads):
            if g is not None:
                callback(g)

    def _enter_module(self, label):
        if self._tracker is not None:
            self._tracker.where.append(label)

    def _leave_module(self):
        if self._tracker is not None and self._tracker.where:
            self._tracker.where.pop()

    def _model_pre(self, module, inputs):
        tr = self._tracker
        if tr is not None:
            tr.in_model += 1
            tr.paused += 1
        try:
            self._state_before = _module_state(self.model)
        finally:
            if tr is not None:
                tr.paused -= 1

    def _model_post(self, module, inputs, output):
        before, self._state_before = self._state_before, None
        if before is not None:
            if self._tracker is not None:
                self._tracker.paused += 1
            try:
                after = _module_state(self.model)
            finally:
                if self._tracker is not None:
                    self._tracker.paused -= 1
            for key in sorted(set(before) | set(after)):
                if before.get(key) != after.get(key):
                    self._stop_tracker()  # the forward is refused: nothing of it is followed
                    raise NotPerExampleError(
                        f"model: cross-step state: {key} changed during the forward pass (a "
                        f"tensor or value kept in a module and read at a later step carries "
                        f"this batch's examples into the next steps' gradients, outside the "
                        f"clipped rows); keep no state across steps in a module (compute it "
                        f"from the example, or keep it outside the model and out of the "
                        f"forward). See {ANCHOR}")
        tr = self._tracker
        if tr is None:
            return
        tr.in_model = max(0, tr.in_model - 1)
        if tr.in_model:
            return
        b = tr.batch
        tr.paused += 1  # the engine's own reading of the outputs' shapes is not the model's
        try:
            for k, o in enumerate(_tensors(output)):
                if o.dim() == 0 or o.shape[0] != b:
                    continue  # refused at the step (examples along dimension 0 of every output)
                tag = tr.tag_of(o)
                if tag not in (None, 0):
                    tr.model_why = tr.model_why or (
                        tag if isinstance(tag, str) else
                        f"output {k} carries the examples along dimension {tag}")
                # the loss is proven from here on its own: the model's outputs as given
                tr.tag(o, 0)
        finally:
            tr.paused -= 1

    def _seen(self, inputs):
        """The model's forward hook: its tensor arguments must be the batch the loader issued for
        this step (the same tensors, or equal ones on another device): the token that ties the
        step to the ledger."""
        if self._tracker is not None:  # the engine's own comparisons are not the model's
            self._tracker.paused += 1
        try:
            self._seen_batch(inputs)
        finally:
            if self._tracker is not None:
                self._tracker.paused -= 1

    def _seen_batch(self, inputs):
        if self._pending is None:
            self._foreign = "no batch of the engine's loader is pending"
            return
        issued = self._pending[4]  # the content issued (copies), not the tensors handed out
        for a in inputs:
            if not isinstance(a, torch.Tensor):
                continue
            for t in issued:
                if a.shape == t.shape and a.dtype == t.dtype and \
                        torch.equal(a.detach().to(t.device), t):
                    return
        self._foreign = (f"the model ran on tensors that are not the batch the loader issued "
                         f"for step {self._pending[0]}")

    def _clear_all(self):
        self._foreign = None
        self._whole.clear()
        if self._layers is not None:
            self._layers.clear()

    def _per_example(self, b, scale):
        """Per-example gradients of the current step: by the per-layer path where the step's
        proof (_proof.py) showed that the model's outputs hold each example along dimension 0
        with nothing mixed in and the layers are of the per-layer kinds; else by the isolated
        path (each example alone, functorch), whose outputs must equal the batch's."""
        if self.proof is None and self._layers is not None and self._layers.unusable is None:
            per = self._layers.compute(b, scale)
            if per is not None and (self._layers_agree or self._agrees(per, scale)):
                self._layers_agree = True
                self.path = "layers"
                return per
        if self._layers is not None and self.proof is None:
            # proven, but the layers' reading disagrees with autograd (tied weights, a
            # weight used outside its module): the isolated path, for good
            self._layers.remove()
            self._layers = None
        self.path = "isolated"
        return self._whole.compute(b, scale, verify=self.proof)

    def _ghost_ready(self):
        """Ghost clipping applies: the per-layer path is proven on this model (the per-example
        cross-check of a batch passed), on one process, without virtual steps (a GEMM adds in
        another order than the fixed-order row sum: physical batches and ranks keep the
        materialised path, bit-identical to the whole batch)."""
        return self.ghost_clipping and self.proof is None and self._layers is not None and \
            self._layers.unusable is None and self._layers_agree and self.world == 1 and \
            self.physical is None

    def _ghost(self, b, scale):
        """(norms, clipped sum) by ghost norms and book-keeping (_ghost.py), or None: the
        materialised path decides."""
        if not self._ghost_ready():
            return None
        return ghost_clip(self._layers, self.params, b, scale, self.plan.clip)

    def _agrees(self, per, scale):
        """On the first non-empty batch: the per-layer gradients sum to autograd's batch gradient
        (p.grad, times scale for a mean loss) and equal autograd on each example alone (the
        first 8, the step's random draws replayed). A weight used outside its module (tied
        weights), or a module the hooks misread, fails this and the run takes the isolated
        path. Evidence only: the per-layer path runs only where the step's proof holds."""
        # relative to the whole gradient's norm: a parameter whose gradient is zero in exact
        # arithmetic (the key bias of an attention: softmax ignores a shift of every logit)
        # holds rounding noise that no relative test per parameter can pass
        if any(p.grad is None for p in self.params):
            return False
        sq_err, sq_ref = 0.0, 0.0
        for p, g in zip(self.params, per):
            want = p.grad.detach() * scale
            sq_err += float(torch.linalg.vector_norm((g.sum(0) - want).double())) ** 2
            sq_ref += float(torch.linalg.vector_norm(want.double())) ** 2
        tol = 1e-9 if all(p.dtype == torch.float64 for p in self.params) else 1e-4
        if sq_err ** 0.5 > tol * sq_ref ** 0.5 + 1e-30:
            return False
        # and example by example (the first 8), against autograd on each example alone (the
        # model's functional copy, the step's random draws replayed: dropout masks included),
        # once: a layer whose examples are not along dimension 0 of its input (a sequence-first
        # Linear whose sequence happens to be as long as the batch) sums to the right batch
        # gradient with wrong per-example rows. Never skipped: with Dropout active the replay
        # gives the reference the masks of the step's forward.
        b = per[0].shape[0]
        k = min(b, 8)  # the first 8 examples: a misread layer gets (nearly) every row wrong
        rng = torch.get_rng_state()
        try:
            ref = self._whole.alone(b, scale, first=k)
        except RuntimeError:
            return False
        finally:
            torch.set_rng_state(rng)
        sq_err = torch.zeros(k, dtype=torch.float64)
        sq_ref = torch.zeros(k, dtype=torch.float64)
        low = False
        for p, g, r in zip(self.params, per, ref):
            d = (g[:k].double() - r.double()).reshape(k, -1).cpu()
            sq_err += (d * d).sum(1)
            rr = r.double().reshape(k, -1).cpu()
            sq_ref += (rr * rr).sum(1)
            low = low or p.dtype not in (torch.float64, torch.float32)
        tol = 5e-2 if low else 1e-9 if all(p.dtype == torch.float64 for p in self.params) \
            else 1e-4
        return bool((sq_err.sqrt() <= tol * sq_ref.sqrt() + 1e-30).all())

    def _privatize(self):
        """Sets p.grad = (clipped sum + noise) / expected batch for every trainable parameter;
        returns False (p.grad untouched) for a physical batch that is not the step's last."""
        if self.steps_done >= self.plan.steps:
            raise RuntimeError(f"dpcorr: all {self.plan.steps} steps of the run are done")
        if self._pending is None:
            raise RuntimeError("dpcorr: optimizer.step() without a batch of the engine's loader "
                               "(the ledger accounts only for the batches it issues: iterate "
                               "the loader make_private returned)")
        if self._foreign is not None:
            raise RuntimeError(f"dpcorr: {self._foreign}; the private optimizer steps only on "
                               f"that batch (transform data in the dataset or collate_fn)")
        for k, (a, c) in enumerate(zip(self._pending[2], self._pending[4])):
            if a.shape != c.shape or not torch.equal(a.detach(), c):
                raise RuntimeError(
                    f"dpcorr: tensor {k} of the batch the loader issued for step "
                    f"{self._pending[0]} (its inputs and labels, in order) was changed in place "
                    f"before optimizer.step(); the ledger accounts only for the issued examples "
                    f"(transform data in the dataset or collate_fn, on copies)")
        if not self._backward_done and self._pending[1] > 0:
            self._stop_tracker()
            raise RuntimeError("dpcorr: optimizer.step() without engine.backward(losses): the "
                               "engine needs one loss per example; replace loss.backward() by "
                               "losses = <loss>(..., reduction=\"none\"); "
                               "engine.backward(losses)")
        b = self._whole.batch_size()
        t, want = self._pending[:2]
        if t != self.steps_done:
            raise RuntimeError(f"dpcorr: the loader's batch is for step {t}, the run is at "
                               f"step {self.steps_done}")
        if b is None and want == 0:
            b = 0
        if b != want:
            raise RuntimeError(f"dpcorr: the model saw a batch of {b} examples, the "
                               f"loader's batch of step {t} has {want}")
        clip = self.plan.clip
        if b > 0:
            # the gradients of each example's own loss (engine.backward(losses): scale 1). The
            # first batch's checks decide the path (they need the per-example rows); then, on
            # the per-layer path and on every step whose proof holds, (norms, clipped sum) by
            # ghost clipping, so that a resumed run takes the steps' path as the run did
            per = None if self._ghost_ready() else self._per_example(b, 1.0)
            if per is not None and self._ghost_ready():
                per = None  # the rows served the checks: freed before ghost clipping
            ghost = self._ghost(b, 1.0)
            if ghost is None:
                per = self._per_example(b, 1.0) if per is None else per
                flats = [g.reshape(b, -1) for g in per]  # views: (b, numel(p))
                # ||g_i|| over all parameters (float64 from per-parameter norms accumulated
                # in float64; a clip factor rounded to bfloat16 could leave ||factor_i g_i||
                # above clip)
                norms = self._norms(flats)
            else:
                norms = ghost[0]
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
            # (b, 1): min(1, clip/||g_i||) by the library's formula (dpc_model_clip_factors)
            n64 = norms.detach().to("cpu", dtype=torch.float64).contiguous()
            factor = torch.from_numpy(_lib.clip_factors(n64.numpy(), clip)).to(
                norms.device)[:, None]
            if ghost is None:
                self._clip_and_sum(flats, factor)
            else:
                self._acc = ghost[1] if self._acc is None else self._acc.add_(ghost[1])
            self._clipped += b
            self._over += int((factor < 1.0).sum())
        if not self._pending[3]:
            self.step_done = False
            return False
        self.last_clip_fraction = self._over / self._clipped if self._clipped else float("nan")
        sums, self._acc, self._clipped, self._over = self._acc, None, 0, 0
        if self.world > 1:
            sums = self._pass_sum()
        self.step_done = True
        noise = self._take_noise(self.steps_done)  # raw (B Z)_t, float64, CPU
        cpu_sum = torch.zeros(self.dim, dtype=torch.float64) if sums is None else \
            sums.detach().to("cpu", dtype=torch.float64)
        if self.keep_clipped_sum:
            self.last_clipped_sum = cpu_sum.clone()
        # the release by the library's one formula (dpc_noise_release, as the C trainer and
        # privatizer): (g_t + noise_scale (B Z)_t) / B ("sum": / 1), float64, in place of the
        # noise (the buffer is free until the next step's noise)
        inv_b = 1.0 / self.plan.expected_batch if self.loss_reduction == "mean" else 1.0
        _lib.release(cpu_sum.numpy(), self._noise_buf, self.plan.noise_scale, inv_b,
                     self._noise_buf)
        if self._staged:  # to the device: from pinned memory, asynchronous
            flat = noise.to(self.device, non_blocking=True, copy=True)
            if self.device.type == "cuda":
                self._copied = torch.cuda.Event()
                self._copied.record()
        else:
            flat = noise
        off = 0
        for p in self.params:
            n = p.numel()
            h = flat[off:off + n].view(p.shape)
            # rounded once to p's dtype (the float64 update), moved to p's device
            if p.grad is not None and p.grad.shape == p.shape and p.grad.dtype == p.dtype \
                    and p.grad.device == p.device:
                p.grad.copy_(h, non_blocking=True)
            else:
                p.grad = h.to(device=p.device, dtype=p.dtype, copy=True)
            off += n
        return True

    def _norms(self, flats):
        """||g_i|| over all parameters, float64 (b,). Every row's sum of squares is accumulated
        in float64, whatever the gradients' dtype: torch's float32 vector_norm accumulates in
        float32 on the CPU (8e-6 relative on a 100,480-value row, half the margin below, and
        growing with the row), so lower-precision rows are widened block by block (_BLOCK
        columns at a time: no float64 copy of the whole matrix). The norms are raised by 2^-16
        (gradients not float64) or 2^-40 (relative; far above the rounding error), so that
        factor_i = clip / ||g_i|| never leaves ||factor_i g_i|| above clip."""
        sq, low = None, False
        for g in flats:
            if g.dtype == torch.float64 and g.device.type == "cpu" and g.is_contiguous():
                a = g.numpy()  # numpy's einsum: a vectorized float64 dot per row
                s = torch.from_numpy(np.einsum("ij,ij->i", a, a))
            else:
                low = low or g.dtype != torch.float64
                s = None
                for c in range(0, g.shape[1], _BLOCK):
                    blk = g[:, c:c + _BLOCK]
                    if blk.device.type == "cpu" and not blk.requires_grad:
                        # widened (exact), then numpy's float64 dot per row: 3-4x faster
                        # than torch's vector_norm(dtype=float64) on this CPU
                        a = blk.to(torch.float64).numpy()
                        n2 = torch.from_numpy(np.einsum("ij,ij->i", a, a))
                    else:
                        n = torch.linalg.vector_norm(blk, dim=1, dtype=torch.float64)
                        n2 = n * n
                    s = n2 if s is None else s.add_(n2)
                if s is None:
                    s = torch.zeros(g.shape[0], dtype=torch.float64, device=g.device)
            sq = s if sq is None else sq.add_(s.to(sq.device))
        # raised above their rounding error: 2^-16 for norms of low-precision gradients,
        # 2^-40 for float64 ones (the float64 factor and product round too)
        return sq.sqrt_().mul_(1.0 + 2.0 ** (-16 if low else -40))

    def _clip_and_sum(self, flats, factor):
        """The clipped rows factor_i float64(g_i) (one rounding: float64(g_i) is exact), added
        to the step's float64 sum example after example (the earlier physical batches' sum
        first): the same additions in the same order however the step's batch is split (a
        GEMV's order depends on the batch size). On the CPU in blocks of columns that stay in
        cache (a float64 scratch of (b + 1) x 2048: the sum so far in row 0, then numpy's
        multiply and its reduction over axis 0, which adds row after row); distributed: the
        rows are kept for the rank-to-rank sum."""
        b = factor.shape[0]
        dev = self.device if self.world == 1 else torch.device("cpu")
        if self._acc is None:
            self._acc = torch.zeros(self.dim, dtype=torch.float64, device=dev)
        off = 0
        if self.world > 1 or dev.type != "cpu":
            f = factor.to(dev)
            for g in flats:
                n = g.shape[1]
                rows = g.to(device=dev, dtype=torch.float64).mul_(f)
                if self.world > 1:  # added after the earlier ranks' sum arrives
                    self._rows.append((off, rows))
                else:
                    acc = self._acc[off:off + n]
                    for row in rows:
                        acc.add_(row)
                off += n
            return
        blk = _BLOCK
        if self._work is None or self._work.numel() < (b + 1) * blk:
            self._work = torch.empty((b + 1 + b // 4) * blk, dtype=torch.float64)
        work, f = self._work.numpy(), factor.numpy()
        acc = self._acc.numpy()
        for g in flats:
            n = g.shape[1]
            for c in range(0, n, blk):
                w = min(blk, n - c)
                m = work[:(b + 1) * w].reshape(b + 1, w)
                m[0] = acc[off + c:off + c + w]
                torch.from_numpy(m[1:]).copy_(g[:, c:c + w])  # float64(g_i): exact
                np.multiply(m[1:], f, out=m[1:])
                np.add.reduce(m, axis=0, out=acc[off + c:off + c + w])
            off += n

    def _advance(self):
        self._backward_done = False
        self.steps_done += 1
        self._high = max(self._high, self.steps_done)
        self._pending = None
        self._clear_all()

    # ---- checkpoints -----------------------------------------------------------------------

    def state_dict(self):
        """Everything needed to resume the run bit for bit: the step, the RNG (seed, or the
        secure key: store the checkpoint like a secret), the noise generator's state, the
        ledger (to refuse a checkpoint of another run), the model's and the optimizer's
        state_dicts. Save it with ``torch.save``. Taken while the loader's batch of a step is
        out (the noise thread has made that step's noise, one row ahead of the saved step), it
        holds that row too ("noise_ahead"), so that the resumed run uses the same bits."""
        self._drain()
        out = {"format": _STATE_FORMAT, "version": 4, "steps_done": self.steps_done,
               "rng": self.plan.rng, "ledger": self.plan.ledger(), "dim": self.dim,
               "fingerprint": self._fingerprint(),
               "noise": self.noise.state_dict(),
               # copies: a state_dict shares its tensors with the live model, so a checkpoint
               # kept while training goes on would hold later weights than its steps_done
               "model": _snapshot(self.model.state_dict()),
               "optimizer": _snapshot(self.optimizer.original.state_dict())}
        if self._job is not None:
            out["noise_ahead"] = {"step": self._job.step,
                                  # scaled, as versions 4 have always saved it (the buffer
                                  # holds the raw row; the release scales it)
                                  "row": (self._noise_t * self.plan.noise_scale).numpy()}
        out["digests"] = {k: _state_digest(v) for k, v in out.items()}
        return out

    def load_state_dict(self, state):
        """Resumes a run saved by :meth:`state_dict`: same model architecture, data size and
        make_private arguments (the seed excepted: the saved run's RNG is adopted). Refuses a
        checkpoint of another run with ValueError naming what differs."""
        if not isinstance(state, dict) or state.get("format") != _STATE_FORMAT:
            raise ValueError("state: not a dpcorr.torch checkpoint")
        if state.get("version") != 4:
            # version 1 had no fingerprint of clip and data, version 2 no digests binding
            # steps_done, the noise state and the ledger: they cannot be checked, so refused;
            # version 3 was written by the scalar-loss engine, whose loss_reduction="sum" also
            # divided by the batch size (the per-example loss engine does not): resuming it
            # would change the update's scale mid-run
            raise ValueError(f"state: unsupported version {state.get('version')!r} (versions 1 "
                             f"and 2 carry no digests of steps_done, the noise state and the "
                             f"ledger; version 3 was saved by the scalar-loss engine, whose "
                             f"loss_reduction='sum' divided by the batch size; restart the run)")
        _check_digests(state)
        if state["dim"] != self.dim:
            raise ValueError(f"state: the checkpoint's model has {state['dim']} trainable "
                             f"parameters, this one {self.dim}")
        mine, saved = self._fingerprint(), state.get("fingerprint")
        if not isinstance(saved, dict):
            raise ValueError("state: the checkpoint has no fingerprint")
        if "sampler_scheme" in mine and saved.get("sampler_scheme") != mine["sampler_scheme"]:
            was = saved.get("sampler_scheme", 1)  # absent: written before scheme 2
            raise ValueError(f"state: the checkpoint was written by sampler scheme {was!r}"
                             f"{' (per-example draws at every step)' if was == 1 else ''}; "
                             f"this dpcorr samples by scheme {mine['sampler_scheme']} (a "
                             f"binomial batch size, then that many distinct uniform examples);"
                             f" resume is not possible (the remaining batches would not be "
                             f"those of the run); restart the run")
        diff = [k for k in mine if saved.get(k) != mine[k]] + \
            [k for k in saved if k not in mine]
        if diff:
            raise ValueError("state: a checkpoint of another run (" + "; ".join(
                f"{k} differs: {saved.get(k)!r} in the checkpoint, {mine.get(k)!r} here"
                for k in diff) + ")")
        _generator_agrees(state)
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
        if step < self._high:
            raise ValueError(
                f"state: steps_done {step} < the {self._high} steps this engine has already "
                f"run: loading it would lower the spent epsilon from {self.epsilon(self._high):.6g}"
                f" to {self.epsilon(step):.6g} although those steps were released, and running "
                f"them again would release their noise again; the spend stays "
                f"{self.epsilon(self._high):.6g} (load a checkpoint at step >= {self._high}, or "
                f"start a new run with a new key)")
        noise, row = self._replay_noise(plan, state, step)
        self._drain()  # the thread's job belongs to the generator being replaced
        self._job = None
        if row is not None:  # the replayed row, never the saved one (compared equal)
            self._noise_t.copy_(torch.from_numpy(row))
            self._job = _prefetch.done_job(step)
        self.model.load_state_dict(state["model"])
        self.optimizer.original.load_state_dict(state["optimizer"])
        self.plan, self.noise, self.steps_done, self._pending = plan, noise, step, None
        self._high = max(self._high, step)
        self._clear_all()
        self._acc, self._clipped, self._over, self.step_done = None, 0, 0, True


    def _replay_noise(self, plan, state, step):
        """The noise state of a checkpoint is a pure function of (key, step): the generator is
        rebuilt from the key, its saved state replayed and compared bit for bit (the library's
        dpc_noise_import), and the row made ahead ("noise_ahead") regenerated and compared; the
        saved floats are never used. Refuses, naming the field, a noise step that is not the
        checkpoint's steps_done (a rewound one would release an earlier step's noise again: two
        releases with the same noise cancel it in their difference) and a row or buffer that is
        not its replay (zeroed, NaN, edited). Returns (generator, raw row or None)."""
        saved, ahead = state.get("noise"), state.get("noise_ahead")
        if not isinstance(saved, dict):
            raise ValueError("state: noise: missing (the noise generator's state)")
        want = step + (1 if ahead is not None else 0)
        got = saved.get("step")
        if isinstance(got, bool) or not isinstance(got, numbers.Integral) or got != want:
            plus = ", plus the row made ahead" if ahead is not None else ""
            raise ValueError(
                f"state: noise.step is {got!r}, steps_done {step} needs {want} (the noise "
                f"generator's step must be the steps done{plus}: a rewound noise step would "
                f"release an earlier step's noise again)")
        noise = plan.noise_generator(self.dim, form=self._noise_form, scaled=False)
        try:
            noise.load_state_dict(saved)  # the library replays the buffers and compares them
        except (ValueError, DpcorrRuntimeError) as e:
            raise ValueError(f"state: noise: {e}") from None
        if ahead is None:
            return noise, None
        if not isinstance(ahead, dict) or ahead.get("step") != step:
            raise ValueError(f"state: noise_ahead.step is "
                             f"{ahead.get('step') if isinstance(ahead, dict) else ahead!r}, "
                             f"its row must be step {step}'s (steps_done)")
        raw = np.asarray(ahead.get("row"))
        if raw.dtype != np.float64 or raw.shape != (self.dim,):
            raise ValueError(f"state: noise_ahead.row must be {self.dim} float64 values, got "
                             f"{raw.dtype} {raw.shape}")
        noise.seek(step)  # step's row again (the generator ends at step + 1, as saved)
        row = np.empty(self.dim, dtype=np.float64)
        noise.next(out=row)
        scaled = row * plan.noise_scale  # as saved: one IEEE multiply per value
        bad = np.flatnonzero(scaled.view(np.uint64) != raw.view(np.uint64))
        if bad.size:
            i = int(bad[0])
            raise ValueError(
                f"state: noise_ahead.row differs from its replay from the key at coordinate {i} "
                f"({raw[i]!r} saved, {scaled[i]!r} replayed; {bad.size} of {self.dim} values): an "
                f"edited checkpoint (a zeroed row would release step {step} without noise)")
        return noise, row

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
        if self.plan.ledger().get("sampler") in _lib.SCHEME_SAMPLERS:  # which batches it drew
            out["sampler_scheme"] = _lib.SAMPLER_SCHEME
        return out


_ACTIVE = [None]  # the engine whose loader issued the batch in progress (for backward())


def _close_stale_trackers():
    """Takes off torch's mode stack the trackers of engines that are gone or moved on (a
    forward that raised in user code leaves its engine's tracker there until then)."""
    from torch.overrides import _get_current_function_mode_stack
    for m in _get_current_function_mode_stack():
        if isinstance(m, Tracker):
            eng = m.owner() if getattr(m, "owner", None) is not None else None
            if eng is None or eng._tracker is not m:
                m.close()


def backward(losses):
    """``engine.backward(losses)`` of the engine whose loader issued the batch in progress (one
    private run at a time): ``dpcorr.torch.backward(F.cross_entropy(out, y,
    reduction="none"))``."""
    eng = _ACTIVE[0]() if _ACTIVE[0] is not None else None
    if eng is None or eng._pending is None:
        raise RuntimeError("dpcorr: backward() without a batch of a private loader in progress")
    return eng.backward(losses)


def _module_state(model):
    """What a forward pass must not change: for every module, each tensor attribute outside
    its parameters and submodules (buffers and plain attributes, in lists, tuples and dicts
    too) by identity and version counter (an in-place write bumps it), and each number, string
    or None attribute by value. Keyed by 'module.attribute'."""
    out = {}
    params = {id(p) for p in model.parameters()}  # changed by the optimizer, not the forward
    for name, m in model.named_modules():
        where = name or type(model).__name__
        for key, v in m.__dict__.items():
            if key in ("_parameters", "_modules", "training") or key.endswith("hooks") or \
                    key in ("forward", "_state_dict_hooks", "_load_state_dict_pre_hooks"):
                continue
            if key == "_buffers":
                for bn, t in v.items():
                    if t is not None:
                        out[f"{where}.{bn} (buffer)"] = (id(t), t._version)
                continue
            _state_items(f"{where}.{key}", v, out, 0, params)
    return out


def _state_items(path, v, out, depth, params):
    if isinstance(v, torch.Tensor):
        if id(v) not in params:  # e.g. an RNN's _flat_weights list holds its parameters
            out[path] = (id(v), v._version)
    elif isinstance(v, (bool, numbers.Number, str)) or v is None:
        out[path] = ("value", v if not isinstance(v, float) or v == v else "nan")
    elif isinstance(v, (list, tuple)) and depth < 3:
        out[path] = ("len", len(v))
        for i, x in enumerate(v[:64]):
            _state_items(f"{path}[{i}]", x, out, depth + 1, params)
    elif isinstance(v, dict) and depth < 3:
        out[path] = ("len", len(v))
        for k in list(v)[:64]:
            _state_items(f"{path}[{k!r}]", v[k], out, depth + 1, params)
    elif depth < 3 and hasattr(v, "__dict__") and not callable(v) and \
            not isinstance(v, (torch.nn.Module, type)):
        # a plain object (a namespace, a dataclass) holding state: its attributes too
        out[path] = ("object", id(v))
        for k, x in list(vars(v).items())[:64]:
            _state_items(f"{path}.{k}", x, out, depth + 1, params)


def _snapshot(v):
    """v with every tensor copied (dicts, lists and tuples rebuilt)."""
    if isinstance(v, torch.Tensor):
        return v.detach().clone()
    if isinstance(v, dict):  # an OrderedDict keeps its type and the modules' _metadata
        out = type(v)((k, _snapshot(x)) for k, x in v.items())
        if hasattr(v, "_metadata"):
            out._metadata = v._metadata
        return out
    if isinstance(v, list):
        return [_snapshot(x) for x in v]
    if isinstance(v, tuple):
        return tuple(_snapshot(x) for x in v)
    return v


def _state_digest(v):
    """The SHA-256 of a state_dict field (every tensor, array, number and string, with dtypes,
    shapes and dict keys), as hex."""
    h = hashlib.sha256()
    _hash_value(h, v)
    return h.hexdigest()


def _hash_value(h, v):
    if isinstance(v, torch.Tensor):
        v = v.detach().cpu().contiguous()
        h.update(f"T{v.dtype}{tuple(v.shape)}".encode())
        h.update((v.view(torch.int16) if v.dtype == torch.bfloat16 else v).numpy().tobytes())
    elif isinstance(v, np.ndarray):
        h.update(f"A{v.dtype}{v.shape}".encode())
        h.update(np.ascontiguousarray(v).tobytes())
    elif isinstance(v, dict):
        h.update(f"D{len(v)}".encode())
        for key in sorted(v, key=str):
            h.update(f"K{type(key).__name__}{key!r}".encode())
            _hash_value(h, v[key])
    elif isinstance(v, (list, tuple)):
        h.update(f"L{type(v).__name__}{len(v)}".encode())
        for x in v:
            _hash_value(h, x)
    else:  # numbers, strings, None (float: repr round-trips; nan and inf included)
        h.update(f"O{type(v).__name__}{v!r}".encode())


def _check_digests(state):
    """Every field of a checkpoint (steps_done, rng, ledger, fingerprint, the noise state, the row
    made ahead, model and optimizer) must match the digest saved with it: a field edited alone
    (steps_done 4 -> 0, a ledger, a buffer) is refused naming it. A SHA-256 is not a MAC: an
    editor who recomputes the digests is caught by what is replayed (the noise state) and by
    the engine's own spend (a lower steps_done), not by the digest."""
    saved = state.get("digests")
    if not isinstance(saved, dict):
        raise ValueError("state: no digests (steps_done, noise state and ledger unbound)")
    fields = [k for k in state if k != "digests"]
    for k in sorted(set(fields) | set(saved)):
        if k not in state or _state_digest(state[k]) != saved.get(k):
            raise ValueError(f"state: {k} does not match its digest in the checkpoint (an "
                             f"edited, damaged or partial checkpoint)")


def _generator_agrees(state):
    """The run's generator (state["rng"]), the noise generator's (state["noise"]) and the
    ledger's seed_mode and seed describe one generator: a seeded generator under a ledger that
    says secure (or the reverse), a seeded state without its seed, or a noise generator of
    another key is refused, naming the field."""
    run, led, nz = state.get("rng"), state.get("ledger"), state.get("noise")
    if not isinstance(run, dict) or not isinstance(led, dict) or not isinstance(nz, dict):
        raise ValueError("state: rng, ledger and noise must be dicts")
    mode, seed, key = run.get("rng_mode"), run.get("seed"), run.get("key")
    if mode == "seeded":
        if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or key is not None:
            raise ValueError(f"state: rng: a seeded generator needs an integer seed and no key "
                             f"(seed {seed!r}): refusing to load it as another generator "
                             f"(seed None would be a fresh secure key)")
    elif mode == "secure":
        if seed is not None or not isinstance(key, (list, tuple)) or len(key) != 8:
            raise ValueError("state: rng: a secure generator has seed None and its 8-word key")
    else:
        raise ValueError(f"state: rng.rng_mode must be 'seeded' or 'secure', got {mode!r}")
    if led.get("seed_mode") != mode or (mode == "seeded" and led.get("seed") != seed):
        raise ValueError(f"state: rng: the generator is {mode}"
                         f"{f' (seed {seed})' if mode == 'seeded' else ''}, the ledger says "
                         f"{led.get('seed_mode')!r} (seed {led.get('seed')!r}): the ledger "
                         f"must describe the generator that made the noise")
    for k in ("rng_mode", "seed", "key"):
        if nz.get(k) != run.get(k):
            raise ValueError(f"state: noise.{k} is not the run's rng.{k}: the noise generator "
                             f"must be the run's (its {k} differs)")


_BLOCK = 2048  # columns per block of the clipped sum (CPU): (b + 1) x 2048 doubles in cache


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
    # A dataset with random augmentation returns another draw of its transforms at every
    # access; its identity is its data, so the pass runs under fixed seeds of torch's, numpy's
    # and Python's global generators (restored afterwards): the same data gives the same
    # examples, hence the same digest, in every process, and a resume is not refused for a
    # draw. (Transforms with their own generator objects are not reseeded: they resume only if
    # their draws do not depend on it.)
    py_state, np_state = random.getstate(), np.random.get_state()
    try:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(0)
            random.seed(0)
            np.random.seed(0)
            for i in range(len(dataset)):
                try:
                    _digest_item(h, dataset[i])
                except _NonFinite:
                    raise ValueError(f"dataset: example {i} has a non-finite value; clean or "
                                     f"drop it") from None
    finally:
        random.setstate(py_state)
        np.random.set_state(np_state)
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
        self.engine._clear_all()
        if self.engine._pending is not None:
            self.engine._start_tracker()

    def step(self, closure=None):
        """One private step (closure, if given, runs the forward and backward passes)."""
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        if self.engine._privatize():
            self.original.step()
            self.engine._advance()
        else:  # a physical batch of a virtual step: the next one of the same step follows
            self.engine._pending = None
            self.engine._backward_done = False
            self.engine._clear_all()
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
            idx = eng._share(eng.plan.batch(t))
            m = eng.physical or max(int(idx.size), 1)
            parts = [idx[s:s + m] for s in range(0, int(idx.size), m)] or [idx]
            for k, part in enumerate(parts):
                if eng.steps_done != t or (k > 0 and eng._pending is not None):
                    raise RuntimeError(f"dpcorr: optimizer.step() must be called once per batch "
                                       f"(the loader is at step {t}, the run at "
                                       f"{eng.steps_done})")
                batch = self.fetch(part)
                eng._begin(t, int(part.size), batch, last=k == len(parts) - 1)
                yield batch

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


__all__ = ["make_private", "backward", "PrivacyEngine", "DPOptimizer", "DPDataLoader"]
