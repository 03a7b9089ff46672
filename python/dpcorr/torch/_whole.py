"""Per-example gradients of the whole model, each example alone (the isolated path).

A forward hook on the model itself keeps its positional arguments (the batch: dimension 0) and
registers a tensor hook on each output tensor for the gradient of the loss with respect to it.
After ``engine.backward(losses)`` the gradient of example i is

    grad_theta < model(x_i; theta), dL/d out_i >

computed by ``functorch.grad`` over a functional copy of the whole model
(``make_functional_with_buffers``, which keeps tied weights tied), batched with ``vmap`` in
chunks of ``chunk`` examples (memory bounded by the chunk), or example by example where vmap
has no rule for an operation (LSTM/GRU/RNN in functorch 0.2). It equals autograd on example i
alone whenever example i's loss depends on out_i alone (the engine's proof, _proof.py, refuses
any other loss) and out_i is example i's output computed alone: where the proof did not show
it, ``compute(verify=...)`` compares every example's outputs alone with the batch's at every
step and refuses a model whose outputs differ (NotPerExampleError). The random
draws of the step's forward (dropout masks, randn_like) are recorded and each example's part
replayed in its per-example computation (_replay.py): the gradient is that of the forward the
step ran, not of a fresh draw. RNNs, attention,
weights used outside their module, root parameters and custom modules need nothing more.
"""

import torch
from functorch import grad, make_functional_with_buffers, vmap

from ._proof import ANCHOR, NotPerExampleError
from ._replay import Draws, rng_states, same_states


def one_batch_size(sizes):
    """The one batch size the model ran on since the last step (None: it did not run); both
    gradient paths refuse several (the step's examples are one batch of the loader)."""
    if not sizes:
        return None
    if len(sizes) > 1:
        raise RuntimeError(f"dpcorr: the model ran on batches of sizes {sorted(sizes)} since "
                           f"the last step; run it once per step on the loader's batch")
    return next(iter(sizes))


def _tensors(obj):
    """The tensors of a (nested) output, in a fixed order."""
    if isinstance(obj, torch.Tensor):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [t for o in obj for t in _tensors(o)]
    if isinstance(obj, dict):
        return [t for k in obj for t in _tensors(obj[k])]
    return []


def _hook_free_copy(model):
    """make_functional_with_buffers (a deep copy that keeps tied weights tied) of the model
    without the hooks of anyone (an earlier engine's hooks hold library handles)."""
    kinds = ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks")
    saved = [(m, k, getattr(m, k)) for m in model.modules() for k in kinds if hasattr(m, k)]
    # the per-layer path's recording forward of a unit (an instance attribute) stays behind too
    forwards = [(m, m.__dict__.pop("forward")) for m in model.modules() if "forward" in m.__dict__
                and getattr(m.__dict__["forward"], "__name__", "") == "recording"]
    try:
        for m, k, _ in saved:
            setattr(m, k, type(getattr(m, k))())
        fmodel, _, _ = make_functional_with_buffers(model)
    finally:
        for m, k, v in saved:
            setattr(m, k, v)
        for m, f in forwards:
            m.__dict__["forward"] = f
    return fmodel


class WholeModelGradients:
    """Captures the model's batches and output gradients; ``compute`` as PerSampleGradients."""

    def __init__(self, model, chunk=32):
        self.model = model
        self.chunk = chunk
        self.params = [p for p in model.parameters() if p.requires_grad]
        if not self.params:
            raise ValueError("model: has no trainable parameters")
        self.fmodel = _hook_free_copy(model)
        self._live_params = [model.get_parameter(n) for n in self.fmodel.param_names]
        self._live_buffers = [model.get_buffer(n) for n in self.fmodel.buffer_names]
        self._use_vmap = True
        self.uses = []  # per forward pass: (args, outputs, grads dict, random draws)
        self.on_forward = None  # the engine's check of the batch (token)
        self.quiet = False  # no capture (the independence check's own forward passes)
        self._draws = None  # the Draws recording the forward pass in progress
        self._pre = model.register_forward_pre_hook(self._pre_hook)
        self._handle = model.register_forward_hook(self._hook)
        cuda = {t.device.index or 0 for t in list(model.parameters()) + list(model.buffers())
                if t.device.type == "cuda"}
        self._cuda = sorted(cuda)  # the CUDA generators the forward may draw from

    def remove(self):
        self._pre.remove()
        self._handle.remove()
        self._stop_recording()
        self.clear()

    def _stop_recording(self):
        draws, self._draws = self._draws, None
        if draws is not None:
            draws.__exit__(None, None, None)
        return draws

    def _pre_hook(self, module, inputs):
        # a forward that raised left its recorder on the mode stack: drop it first
        self._stop_recording()
        if self.quiet or not torch.is_grad_enabled():
            return
        # the forward's random draws (dropout masks, randn_like) are kept, so that each
        # example's gradient is that of the forward the step ran (_replay.py)
        self._draws = Draws()
        self._draws.__enter__()

    def clear(self):
        self.uses = []

    def _hook(self, module, inputs, output):
        draws = self._stop_recording()
        if self.quiet or not torch.is_grad_enabled():
            return
        outs = [o for o in _tensors(output) if o.requires_grad]
        if not outs:
            return
        use = (tuple(inputs), outs, {}, draws.records if draws is not None else [])
        self.uses.append(use)
        if self.on_forward is not None:
            self.on_forward(inputs)
        for k, o in enumerate(outs):
            o.register_hook(lambda g, k=k, d=use[2]: d.__setitem__(k, g.detach()))

    def batch_size(self):
        sizes = set()
        for args, _, _, _ in self.uses:
            batched = [a.shape[0] for a in args if isinstance(a, torch.Tensor) and a.dim() > 0]
            if not batched:
                raise RuntimeError("dpcorr: the model's forward took no tensor argument (the "
                                   "batch must be a positional tensor argument, dimension 0)")
            sizes.add(batched[0])
        return one_batch_size(sizes)

    def _sync_modes(self):
        # the copy follows model.train()/eval() (dropout) of every submodule
        for m, c in zip(self.model.modules(), self.fmodel.stateless_model.modules()):
            c.training = m.training

    def compute(self, batch_size, scale=1.0, first=None, verify=None):
        """Per-example gradients (of the first ``first`` examples only, when given). ``verify``
        (a reason the model is not proven per example): every example's outputs computed alone
        must equal its rows of the step's batch outputs (else NotPerExampleError): the loss
        gradient taken from the batch is then that of the example alone."""
        self._verify = verify
        if not any(use[2] for use in self.uses):
            raise RuntimeError("dpcorr: no gradient reached the model; call loss.backward() "
                               "before optimizer.step()")
        self._sync_modes()
        params = tuple(p.detach() for p in self._live_params)
        buffers = tuple(b.detach() for b in self._live_buffers)
        index = {id(p): k for k, p in enumerate(self._live_params)}
        total = None
        for args, outs, grads, draws in self.uses:
            if not grads:
                continue
            for k, o in enumerate(outs):
                if k in grads and (o.dim() == 0 or o.shape[0] != batch_size):
                    raise RuntimeError(f"dpcorr: output {k} of the model has shape "
                                       f"{tuple(o.shape)}: the examples must be along dimension "
                                       f"0 of every output that reaches the loss")
            gos = [grads.get(k) for k in range(len(outs))]
            gos = [None if g is None else (g * scale if scale != 1.0 else g) for g in gos]
            g = self._per_example(params, buffers, args, gos, batch_size, first, draws)
            total = g if total is None else [a + b for a, b in zip(total, g)]
        return [total[index[id(p)]] for p in self.params]

    def _per_example(self, params, buffers, args, gos, b, first=None, draws=()):
        fmodel = self.fmodel
        batched = [isinstance(a, torch.Tensor) and a.dim() > 0 and a.shape[0] == b for a in args]
        live = [k for k, g in enumerate(gos) if g is not None]

        def contribution(prm, xs, gs):
            it = iter(xs)
            call = [next(it).unsqueeze(0) if bt else a for a, bt in zip(args, batched)]
            outs = [o for o in _tensors(fmodel(prm, buffers, *call)) if o.requires_grad]
            dot = sum((outs[k] * g.unsqueeze(0)).sum() for k, g in zip(live, gs))
            return dot, [outs[k].detach()[0] for k in live]

        batch_outs = None
        for use in self.uses:
            if use[0] is args:
                batch_outs = [use[1][k].detach() for k in live]

        xs = [a for a, bt in zip(args, batched) if bt]
        gs = [gos[k] for k in live]
        end = b if first is None else min(b, first)
        if self._use_vmap and not draws:
            try:
                # randomness="error": a random operation the recorder did not see must not
                # draw anew unnoticed; it goes to the example-by-example replay and its check
                vg = vmap(grad(contribution, has_aux=True), in_dims=(None, 0, 0),
                          randomness="error")
                parts = []
                for s in range(0, end, self.chunk):
                    e = min(s + self.chunk, end)
                    got, alone = vg(params, [x[s:e] for x in xs], [g[s:e] for g in gs])
                    self._check_alone(alone, batch_outs, s, e)
                    parts.append(got)
                return [torch.cat([p[j] for p in parts]) for j in range(len(params))]
            except NotPerExampleError:
                raise
            except (RuntimeError, IndexError, ValueError, TypeError) as err:
                _refuse_function(err, self.uses)
                if "randomness" not in str(err):
                    self._use_vmap = False  # an operation without a batching rule
        g1 = grad(contribution, has_aux=True)
        replay = Draws(list(draws))
        before = rng_states(self._cuda)
        rows = []
        for i in range(end):
            # example i's part of the step's draws (its dropout masks, its noise)
            replay.replay(i, b)
            try:
                with replay:
                    got, alone = g1(params, [x[i] for x in xs], [g[i] for g in gs])
                rows.append(got)
                self._check_alone([a.unsqueeze(0) for a in alone], batch_outs, i, i + 1)
            except NotPerExampleError:
                raise
            except (RuntimeError, IndexError, ValueError, TypeError) as err:
                _refuse_function(err, self.uses)
                why = getattr(self, "_verify", None)
                if why is not None:
                    # not proven, and the example cannot even be computed alone (an index
                    # into other examples, a Python value of the batch): the model mixes them
                    raise NotPerExampleError(
                        f"model: not proven per example ({why}), and example {i} computed "
                        f"alone fails ({type(err).__name__}: {err}): the model mixes the "
                        f"examples of a batch; see {ANCHOR}") from err
                raise
            replay.finish()
        if not same_states(before, rng_states(self._cuda)):
            raise ValueError(_UNREPLAYED)
        return [torch.stack([r[j] for r in rows]) for j in range(len(params))]

    def _check_alone(self, alone, batch_outs, s, e):
        """The outputs of examples s..e-1 computed alone against their rows of the batch's
        outputs (when the model is not proven per example): equal up to rounding, else the
        model mixes the examples and is refused (the loss gradient of the batch would carry
        other examples into example i's row)."""
        why = getattr(self, "_verify", None)
        if why is None or batch_outs is None:
            return
        for a, o in zip(alone, batch_outs):
            ref = o[s:e].to(a.dtype)
            if a.shape != ref.shape:
                raise NotPerExampleError(
                    f"model: an example's output alone has shape {list(a.shape[1:])}, in the "
                    f"batch {list(ref.shape[1:])}: the model mixes the examples ({why}); see "
                    f"{ANCHOR}")
            tol = 1e-10 if a.dtype == torch.float64 else 1e-5 if a.dtype == torch.float32 \
                else 2e-2
            err = torch.linalg.vector_norm((a - ref).reshape(e - s, -1).double(), dim=1)
            mag = torch.linalg.vector_norm(ref.reshape(e - s, -1).double(), dim=1)
            bad = (err > tol * mag + 1e-30) | ~torch.isfinite(err)
            if bool(bad.any()):
                i = s + int(bad.nonzero()[0])
                raise NotPerExampleError(
                    f"model: mixes the examples of a batch: example {i}'s output computed alone "
                    f"differs from its output in the batch (relative difference "
                    f"{float(err[i - s] / (mag[i - s] + 1e-300)):.3g}); not proven per example "
                    f"because of: {why}. Make each example's computation use that example only "
                    f"(see {ANCHOR})")

    def alone(self, batch_size, scale=1.0, first=None):
        """The reference: per-example gradients by plain autograd on each example alone (the
        functional copy of the model on example i, the step's draws replayed), the first
        ``first`` examples. Needs no functorch rule: custom autograd.Function included."""
        self._sync_modes()
        params = [p.detach().requires_grad_() for p in self._live_params]
        buffers = tuple(b.detach() for b in self._live_buffers)
        index = {id(p): k for k, p in enumerate(self._live_params)}
        end = batch_size if first is None else min(batch_size, first)
        total = [torch.zeros((end,) + tuple(p.shape), dtype=p.dtype, device=p.device)
                 for p in params]
        before = rng_states(self._cuda)
        for args, _, grads, draws in self.uses:
            if not grads:
                continue
            batched = [isinstance(a, torch.Tensor) and a.dim() > 0 and a.shape[0] == batch_size
                       for a in args]
            replay = Draws(list(draws))
            for i in range(end):
                call = [a[i:i + 1] if bt else a for a, bt in zip(args, batched)]
                replay.replay(i, batch_size)
                with torch.enable_grad(), replay:
                    outs = [o for o in _tensors(self.fmodel(params, buffers, *call))
                            if o.requires_grad]
                replay.finish()
                dot = sum((outs[k] * (grads[k][i:i + 1] * scale)).sum() for k in grads)
                got = torch.autograd.grad(dot, params, allow_unused=True)
                for t, g in zip(total, got):
                    if g is not None:
                        t[i] += g
        if not same_states(before, rng_states(self._cuda)):
            raise ValueError(_UNREPLAYED)
        return [total[index[id(p)]] for p in self.params]


_UNREPLAYED = ("model: draws random numbers in an operation dpcorr cannot replay for each "
               "example (the per-example gradients would see another draw than the step's "
               "forward); use F.dropout / nn.Dropout, Dropout1d/2d/3d, rand_like, randn_like or "
               "bernoulli_, or draw in the dataset (see dpcorr.torch._replay)")


def _functions(uses):
    """The custom autograd.Function classes in the autograd graphs of the captured outputs."""
    seen, found, stack = set(), [], [o.grad_fn for _, outs, _, _ in uses for o in outs]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        cls = getattr(node, "_forward_cls", None)
        if cls is not None and cls not in found:
            found.append(cls)
        stack.extend(n for n, _ in node.next_functions)
    return found


def _refuse_function(err, uses):
    """functorch's refusal of a custom autograd.Function, as a ValueError naming it."""
    if "autograd.Function" not in str(err):
        return
    names = ", ".join(f"{c.__module__}.{c.__qualname__}" for c in _functions(uses)) or \
        "a custom autograd.Function"
    raise ValueError(f"model: {names} (torch.autograd.Function) has no per-example rule: the "
                     f"isolated path (functorch) cannot differentiate it example by example. "
                     f"Use it only between layers of the per-layer path (Linear, Conv, "
                     f"LayerNorm, GroupNorm, Embedding, MultiheadAttention), or write it with "
                     f"torch operations (no autograd.Function)") from None
