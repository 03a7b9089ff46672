"""The random draws of the user's forward pass, recorded and replayed example by example.

A forward pass with dropout, stochastic depth or ``randn_like`` (a VAE) draws random numbers.
The per-example gradients must be those of the forward the user's step ran: the same masks and
noise, not a fresh draw (functorch's recomputation would draw again: a TransformerEncoderLayer
with dropout 0.1 then got gradients 6.7e-2 away from its own forward's). So the forward pass
of the step runs under :class:`Draws` (a ``TorchFunctionMode``) in *record* mode: every random
operation it knows (below) keeps what it drew; the per-example computation of example i runs
under the same mode in *replay* mode, where each operation returns example i's part of the
recorded draw instead of drawing.

Per-example semantics (the same in the forward and in the gradient): example i sees the rows
of the batch's draws that belong to it. A recorded draw of shape S maps to an example's shape s
when they differ in one dimension d with S[d] = B s[d]: example i's part is
``narrow(d, i s[d], s[d])`` (a batch dimension, or the batch merged batch-major with another
one, as MultiheadAttention merges it with its heads); a draw of the example's shape (no batch
dimension: one draw shared by every example) is used whole. Anything else is refused.

Known random operations: ``F.dropout`` (and ``torch.dropout``), ``F.dropout1d/2d/3d`` (one
mask per example and channel), MultiheadAttention's attention dropout, the dropout between the
layers of ``LSTM``/``GRU``/``RNN`` (run layer by layer, with dropout between), ``rand_like``,
``randn_like``, ``randint_like``, ``rand``, ``randn``, ``randint``, ``bernoulli`` and the
in-place ``bernoulli_``, ``normal_``, ``uniform_``, ``exponential_``, ``random_``,
``cauchy_``, ``log_normal_``, ``geometric_``. Another random operation (``alpha_dropout``,
``RReLU``, ``multinomial``, ...) would draw anew in the per-example computation: the replay
checks that torch's generator did not move and refuses the model otherwise.
"""

import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode

_T = torch.Tensor


def _bind(names, defaults, args, kwargs):
    """args/kwargs of a call as a dict of the parameters ``names`` (defaults filled in)."""
    out = dict(defaults)
    out.update(zip(names, args))
    out.update(kwargs)
    return out


class Draws(TorchFunctionMode):
    """Records the random draws of a forward pass, or replays example ``index``'s part of them.
    ``records``: (operation name, tensor) in the order they were drawn."""

    def __init__(self, records=None):
        super().__init__()
        self.records = [] if records is None else records
        self.index = None  # None: record; else the example replayed
        self.batch = None
        self.pos = 0

    def replay(self, index, batch):
        """Replays example ``index`` of a batch of ``batch`` examples from the first draw."""
        self.index, self.batch, self.pos = index, batch, 0

    def finish(self):
        """Every recorded draw was replayed (else the forward took another path)."""
        if self.index is not None and self.pos != len(self.records):
            raise ValueError(f"model: the per-example forward of example {self.index} made "
                             f"{self.pos} random draws, the step's forward {len(self.records)}: "
                             f"its random operations must not depend on the batch")

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        handler = _HANDLERS.get(func)
        if handler is None:
            return func(*args, **kwargs)
        return handler(self, func, args, kwargs)

    def draw(self, name, shape, make):
        """The draw of operation ``name`` with the (per-example) shape ``shape``: ``make()``
        when recording (kept), example ``index``'s part of the recorded one when replaying."""
        if self.index is None:
            t = make()
            self.records.append((name, t.detach()))
            return t
        if self.pos >= len(self.records):
            raise ValueError(f"model: {name} drew in the per-example forward of example "
                             f"{self.index} but not in the step's forward: its random "
                             f"operations must not depend on the batch")
        got, rec = self.records[self.pos]
        self.pos += 1
        if got != name:
            raise ValueError(f"model: the per-example forward drew {name} where the step's "
                             f"forward drew {got}: its random operations must not depend on "
                             f"the batch")
        return self._part(name, rec, tuple(shape))

    def _part(self, name, rec, shape):
        full = tuple(rec.shape)
        if full == shape:
            return rec
        diff = [d for d in range(len(full)) if len(full) == len(shape) and full[d] != shape[d]]
        if len(diff) == 1 and full[diff[0]] == self.batch * shape[diff[0]]:
            d = diff[0]
            return rec.narrow(d, self.index * shape[d], shape[d])
        raise ValueError(f"model: a draw of {name} of shape {list(full)} in the step's forward "
                         f"does not map to example {self.index}'s shape {list(shape)} (the "
                         f"batch of {self.batch} along one dimension): dpcorr cannot give the "
                         f"example its own part of the draw")


def _mask(mode, name, like, shape, p):
    """A dropout mask (0 or 1 / (1 - p)) of ``shape``, drawn as torch draws it (bernoulli_)."""
    def make():
        if p >= 1.0:
            return torch.zeros(shape, dtype=like.dtype, device=like.device)
        return torch.empty(shape, dtype=like.dtype, device=like.device).bernoulli_(
            1.0 - p).div_(1.0 - p)
    return mode.draw(name, shape, make)


def _dropout(mode, func, args, kwargs):
    if func is F.dropout:
        a = _bind(("input", "p", "training", "inplace"), {"p": 0.5, "training": True,
                                                          "inplace": False}, args, kwargs)
    else:  # torch.dropout(input, p, train), torch.dropout_
        a = _bind(("input", "p", "training"), {}, args, kwargs)
        a["inplace"] = func is torch.dropout_
    x, p = a["input"], float(a["p"])
    if not a["training"] or p == 0.0:
        return func(*args, **kwargs)
    if not 0.0 <= p <= 1.0:
        return func(*args, **kwargs)  # torch's own error
    m = _mask(mode, "dropout", x, x.shape, p)
    return x.mul_(m) if a["inplace"] else x * m


_FEATURE = {F.dropout1d: 3, F.dropout2d: 4, F.dropout3d: 5}


def _feature_dropout(mode, func, args, kwargs):
    a = _bind(("input", "p", "training", "inplace"), {"p": 0.5, "training": True,
                                                      "inplace": False}, args, kwargs)
    x, p = a["input"], float(a["p"])
    if not a["training"] or p == 0.0 or x.dim() != _FEATURE[func] or not 0.0 <= p <= 1.0:
        return func(*args, **kwargs)  # unbatched inputs: torch's own (then refused in replay)
    shape = tuple(x.shape[:2]) + (1,) * (x.dim() - 2)  # one mask per example and channel
    m = _mask(mode, func.__name__, x, shape, p)
    return x.mul_(m) if a["inplace"] else x * m


def _mha(mode, func, args, kwargs):
    """MultiheadAttention's functional forward: its attention dropout (a call of the module
    global ``dropout`` of torch.nn.functional, which this mode does not see from inside) is
    routed to this mode for the call (the module global is swapped for the call's duration:
    another thread's F.multi_head_attention_forward in that window would be recorded too)."""
    glob = F.multi_head_attention_forward.__globals__
    saved = glob["dropout"]
    glob["dropout"] = lambda x, p=0.5, training=True, inplace=False: _dropout(
        mode, F.dropout, (x, p, training, inplace), {})
    try:
        return func(*args, **kwargs)
    finally:
        glob["dropout"] = saved


_RNN = {torch.lstm: 3, torch.gru: 2, torch.rnn_tanh: 2, torch.rnn_relu: 2}


def _rnn(mode, func, args, kwargs):
    """A multi-layer LSTM/GRU/RNN with dropout between its layers, run layer by layer (the same
    operations) with the dropout drawn by this mode."""
    names = ("input", "hx", "params", "has_biases", "num_layers", "dropout", "train",
             "bidirectional", "batch_first")
    if len(args) + len(kwargs) != len(names) or not isinstance(args[0], torch.Tensor) or \
            (len(args) > 1 and isinstance(args[1], torch.Tensor) and args[1].dim() == 1):
        return func(*args, **kwargs)  # the packed-sequence form: torch's own
    a = _bind(names, {}, args, kwargs)
    layers, p = int(a["num_layers"]), float(a["dropout"])
    if not a["train"] or p == 0.0 or layers < 2:
        return func(*args, **kwargs)
    dirs = 2 if a["bidirectional"] else 1
    per = len(a["params"]) // layers
    hx = a["hx"]
    x, last = a["input"], []
    for k in range(layers):
        h = [t[k * dirs:(k + 1) * dirs] for t in hx] if isinstance(hx, (list, tuple)) \
            else hx[k * dirs:(k + 1) * dirs]
        out = func(x, h, a["params"][k * per:(k + 1) * per], a["has_biases"], 1, 0.0, True,
                   a["bidirectional"], a["batch_first"])
        x = out[0]
        last.append(out[1:])
        if k < layers - 1:  # drawn time-major, as torch's own kernel draws it
            if a["batch_first"]:
                shape = (x.shape[1], x.shape[0]) + tuple(x.shape[2:])
                x = x * _mask(mode, "dropout", x, shape, p).transpose(0, 1)
            else:
                x = x * _mask(mode, "dropout", x, x.shape, p)
    states = [torch.cat([s[j] for s in last], 0) for j in range(_RNN[func] - 1)]
    return (x, *states)


def _like(mode, func, args, kwargs):
    x = args[0] if args else kwargs["input"]
    return mode.draw(func.__name__, x.shape, lambda: func(*args, **kwargs))


def _sized(mode, func, args, kwargs):
    """rand/randn/randint(..., size): the shape from a draw-free call on the meta device."""
    meta = {k: v for k, v in kwargs.items() if k not in ("generator", "device", "out",
                                                          "pin_memory")}
    shape = func(*args, device="meta", **meta).shape
    return mode.draw(func.__name__, shape, lambda: func(*args, **kwargs))


def _in_place(mode, func, args, kwargs):
    x = args[0]
    if mode.index is None:
        out = func(*args, **kwargs)
        mode.draw(func.__name__, x.shape, lambda: x.detach().clone())
        return out
    return x.copy_(mode.draw(func.__name__, x.shape, None))


_HANDLERS = {F.dropout: _dropout, torch.dropout: _dropout, torch.dropout_: _dropout,
             F.multi_head_attention_forward: _mha}
_HANDLERS.update({f: _feature_dropout for f in _FEATURE})
_HANDLERS.update({f: _rnn for f in _RNN})
_HANDLERS.update({f: _like for f in (torch.rand_like, torch.randn_like, torch.randint_like,
                                     torch.bernoulli)})
_HANDLERS.update({f: _sized for f in (torch.rand, torch.randn, torch.randint)})
_HANDLERS.update({f: _in_place for f in (_T.bernoulli_, _T.normal_, _T.uniform_,
                                         _T.exponential_, _T.random_, _T.cauchy_,
                                         _T.log_normal_, _T.geometric_)})


def rng_states(devices):
    """The CPU generator's state and those of the CUDA ``devices``."""
    return [torch.get_rng_state()] + [torch.cuda.get_rng_state(d) for d in devices]


def same_states(a, b):
    return len(a) == len(b) and all(torch.equal(x, y) for x, y in zip(a, b))


__all__ = ["Draws", "rng_states", "same_states"]
