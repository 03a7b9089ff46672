"""The proof that each example's loss depends on that example alone (dpcorr.torch's fast path).

From the moment the loader issues a batch until ``engine.backward(losses)``, every torch
operation runs under :class:`Tracker` (a ``TorchFunctionMode``). Every tensor derived from the
batch carries a *tag*: the dimension along which it holds the examples (one example per index
along that dimension, nothing else mixed in), or a reason why it does not (it mixes the
examples, or an operation outside the rules below touched it). Tensors that do not derive from
the batch (parameters, buffers, constants made during the step) carry no tag.

Each operation on tagged tensors has a rule (below): pointwise operations keep the batch
dimension (broadcasting mapped), reductions, softmax and norms keep it when they act along
other dimensions, views keep it when the examples stay one dimension (the prefix-product rule),
matrix products keep it when it is not contracted and only one operand carries it (``z @ z.T``
gives both dimensions the batch: refused), convolutions, pooling, normalisation layers,
embeddings, attention and RNNs keep it where their batch dimension is. Any other operation on a
tagged tensor, a reduction across the batch (``h.mean(0)``, ``h.abs().max()``, a loss with
reduction "mean"), an index or slice along the batch, a Python value read out of a batch-derived
tensor (``.item()``, ``bool``, ``.tolist()``, ``.numpy()``), or an integer index that torch
runs without telling the mode (a view whose base is tagged) leaves its result *not proven*,
with the reason.

The batch size is a value of the batch too (under Poisson-type sampling it moves with every
example present; with any sampler each example alone has B = 1 and position 0): a size read
involving the batch dimension of a tagged tensor (``x.shape``, ``x.size()``, ``len(x)``,
``x.numel()``) gives a tracked int (_sizes.py), and a call with one among its arguments is
proven only where it sizes the batch dimension of a shape operation's result
(``x.view(B, -1)``, ``zeros(B, d)``, ``randn(B, d)``); elsewhere (``h / B``, ``full_like(h, B)``,
``arange(B)`` but as the first index of ``x[arange(B), y]``) its result is not proven, naming
the read (:meth:`Tracker._sizes`). Tensors made like a tagged tensor (``zeros_like(h)``) or
with its batch size (``zeros(B, d)``) are tagged along that dimension, so that a reduction of
them over it (``ones_like(h).sum()``: B) is one across the batch; a pointwise operation with a
tensor not of the batch that has one row per position of the batch (``h + table``, table of
B rows) uses each example's position as a value: not proven.

This decides, deterministically at every step: the loss vector must come out tagged with
dimension 0 after the model's outputs are taken as given (else the loss mixes the examples:
refused); the model's outputs must come out tagged along dimension 0 for the per-layer fast
path (else the isolated path computes each example alone). It is a proof over the operations
torch dispatches through ``__torch_function__``; operations below that level (inside one
dispatched call) are covered by the rule for that call.
"""

import math
import threading
import weakref

import torch
from torch.overrides import TorchFunctionMode, _get_current_function_mode_stack, _pop_mode, \
    _push_mode

from ._sizes import first_tracked, is_tracked, patch_builtins, tracked, unpatch_builtins

POINTWISE = set("""
add sub mul div true_divide floor_divide remainder fmod pow float_power exp exp2 expm1 log log2
log10 log1p neg negative abs absolute sqrt rsqrt square sigmoid tanh relu relu6 gelu silu mish
elu selu celu leaky_relu softplus softsign hardtanh hardsigmoid hardswish logsigmoid tanhshrink
softshrink hardshrink threshold clamp clip clamp_min clamp_max sin cos tan asin acos atan atan2
sinh cosh asinh acosh atanh sign sgn reciprocal erf erfc erfinv floor ceil round trunc frac
maximum minimum fmax fmin where masked_fill lerp addcmul addcdiv eq ne lt le gt ge
greater less greater_equal less_equal not_equal logical_and logical_or logical_not logical_xor
bitwise_and bitwise_or bitwise_xor bitwise_not and or xor invert isnan isfinite isinf isneginf
isposinf nan_to_num float double half bfloat16 long int bool short byte char to type type_as
clone contiguous detach requires_grad_ cpu cuda dropout alpha_dropout feature_alpha_dropout
dropout1d dropout2d dropout3d bernoulli copy_ xlogy sub_ rsub neg_ logit hypot conj real imag
glu prelu heaviside copysign nextafter positive sinc deg2rad rad2deg square_ exp_ pin_memory data
""".split())
CONVERT = set("""to type type_as float double half bfloat16 long int bool short byte char clone
contiguous detach requires_grad_ cpu cuda pin_memory data""".split())
# losses whose reduction="none" result is pointwise in their inputs
POINTWISE_LOSS = set("""binary_cross_entropy binary_cross_entropy_with_logits mse_loss l1_loss
smooth_l1_loss huber_loss soft_margin_loss kl_div poisson_nll_loss margin_ranking_loss
hinge_embedding_loss gaussian_nll_loss""".split())
# losses over a class (or feature) dimension 1: the batch must be dimension 0
ROW_LOSS = set("""cross_entropy nll_loss multi_margin_loss multilabel_margin_loss
multilabel_soft_margin_loss cosine_embedding_loss triplet_margin_loss
triplet_margin_with_distance_loss ctc_loss""".split())
REDUCE = set("""sum mean nansum nanmean prod amax amin logsumexp norm vector_norm var std
var_mean std_mean all any argmax argmin median nanmedian mode count_nonzero max min aminmax
kthvalue topk""".split())
ALONG = set("""softmax log_softmax softmin cumsum cumprod cummax cummin logcumsumexp normalize
sort argsort flip""".split())  # act along a dimension, keep the shape
VIEW = set("""view reshape flatten unflatten squeeze unsqueeze view_as reshape_as ravel""".split())
EXPAND = set("""expand expand_as broadcast_to""".split())
SPATIAL = set("""conv1d conv2d conv3d conv_transpose1d conv_transpose2d conv_transpose3d
avg_pool1d avg_pool2d avg_pool3d max_pool1d max_pool2d max_pool3d adaptive_avg_pool1d
adaptive_avg_pool2d adaptive_avg_pool3d adaptive_max_pool1d adaptive_max_pool2d
adaptive_max_pool3d lp_pool1d lp_pool2d max_pool1d_with_indices max_pool2d_with_indices
max_pool3d_with_indices instance_norm group_norm pixel_shuffle pixel_unshuffle interpolate
upsample upsample_nearest upsample_bilinear unfold fold pad channel_shuffle
local_response_norm""".split())
META = set("""dim size shape dtype device numel ndim ndimension is_floating_point is_complex
requires_grad is_contiguous stride storage_offset data_ptr grad_fn is_leaf layout is_cuda
element_size nelement __len__ register_hook retain_grad is_sparse names is_quantized
_version __repr__ __format__ __str__ is_meta is_mkldnn get_device""".split())
FACTORY_LIKE = set("""zeros_like ones_like empty_like full_like rand_like randn_like randint_like
new_zeros new_ones new_empty new_full new_tensor""".split())
ESCAPE = set("""item tolist numpy __bool__ __float__ __int__ __index__ __complex__ __array__
equal allclose __iter__ __hash__""".split())
SIZE_READS = {"shape", "size", "numel"}  # len(x): builtins.len (_sizes.py)
ANCHOR = "python/README.md, section 'Privacy model of dpcorr.torch'"


def _name(func):
    name = getattr(func, "__name__", None) or ""
    if name == "__get__":
        name = getattr(getattr(func, "__self__", None), "__name__", "") or ""
    if name.startswith("__") and name.endswith("__") and name not in META | ESCAPE:
        base = name[2:-2]
        if base in ("radd", "rsub", "rmul", "rtruediv", "rdiv", "rpow", "rfloordiv", "rmod",
                    "rand", "ror", "rxor", "rmatmul"):
            base = base[1:]
        elif base[:1] == "i" and base[1:] in ("add", "sub", "mul", "truediv", "div", "pow",
                                             "floordiv", "mod", "and", "or", "xor", "matmul"):
            base = base[1:]
        name = {"truediv": "div", "floordiv": "floor_divide", "mod": "remainder"}.get(base,
                                                                                    base)
    elif name.endswith("_") and not name.startswith("_") and name[:-1] in POINTWISE | VIEW:
        name = name[:-1]  # in-place: the same rule, the result is the first argument
    return name


class _NotProven(Exception):
    pass


class NotPerExampleError(ValueError):
    """A loss, model or state on which one example could move other examples' rows of the
    clipped-gradient matrix: refused (the message names the operation or attribute)."""


def _flat(obj, out):
    if isinstance(obj, torch.Tensor):
        out.append(obj)
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            _flat(o, out)
    elif isinstance(obj, dict):
        for o in obj.values():
            _flat(o, out)
    return out


def _dims(dim, ndim):
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        return list(range(ndim))  # torch 1.13 reduces every dimension for dim=[] too
    if isinstance(dim, (list, tuple)):
        return sorted(int(d) % max(ndim, 1) for d in dim)
    return [int(dim) % max(ndim, 1)]


class Tracker(TorchFunctionMode):
    """Tags the tensors derived from one batch of ``batch`` examples (see the module doc)."""

    def __init__(self, batch):
        super().__init__()
        self.batch = batch
        self._tags = {}  # id -> (weakref, dim int | reason str)
        self.paused = 0
        self.closed = False
        self.in_model = 0  # depth of model forward passes in progress
        self.model_why = None  # first reason the model's outputs are not proven
        self.loss_why = None  # first reason a value of the batch escaped outside the model
        self.where = []  # the modules whose forward is running (dotted name, type)
        # the thread that iterates the loader: other threads' operations (the noise thread's
        # scaling) are not the step's and must not share the pause counter
        self._thread = threading.get_ident()

    # ---- tags -------------------------------------------------------------------------------

    def tag(self, t, v):
        self._tags[id(t)] = (weakref.ref(t), v)

    def tag_of(self, t):
        """None (not derived from the batch), an int (the batch dimension) or a reason str."""
        e = self._tags.get(id(t))
        if e is not None and e[0]() is t:
            return e[1]
        base = getattr(t, "_base", None)
        if base is not None and self.tag_of(base) is not None:
            # a view of a batch tensor made where the mode did not see it (an integer index)
            return "an integer index into a tensor of the batch (x[0]: one example's part used " \
                   "where all are)"
        return None

    def untag(self, t):
        self._tags.pop(id(t), None)

    def _note(self, why):
        if self.where and " (in " not in why:
            why = f"{why} (in {self.where[-1]})"
        if self.in_model:
            self.model_why = self.model_why or why
        else:
            self.loss_why = self.loss_why or why

    # ---- the mode ---------------------------------------------------------------------------

    def __enter__(self):
        # torch 1.13 runs x[i], x[1:3] and x[index_tensor] without __torch_function__: the
        # indexing of Tensor is routed through the rules while the tracker is active
        self._saved_index = (torch.Tensor.__getitem__, torch.Tensor.__setitem__)
        get, put = self._saved_index
        me = self

        self._wrappers = None

        def getitem(t, idx):
            out = get(t, idx)
            if not me.paused and not me.closed and threading.get_ident() == me._thread:
                me._seen(get, "__getitem__", (t, idx), {}, out)
            return out

        def setitem(t, idx, v):
            out = put(t, idx, v)
            if not me.paused and not me.closed and threading.get_ident() == me._thread:
                me._seen(put, "__setitem__", (t, idx, v), {}, t)
            return out
        torch.Tensor.__getitem__, torch.Tensor.__setitem__ = getitem, setitem
        self._wrappers = (getitem, setitem)
        patch_builtins(self)  # len(x) and range(B) see the tracked batch size (_sizes.py)
        return super().__enter__()

    def __exit__(self, *exc):
        self.close()
        return False

    def close(self):
        """Ends the tracking: the mode leaves torch's stack wherever it is in it (a forward
        that raised may have left the replay recorder above it; the modes above are kept, in
        order) and the indexing is restored (if no later tracker patched it over)."""
        if self.closed:
            return
        self.closed = True
        unpatch_builtins(self)
        if (torch.Tensor.__getitem__, torch.Tensor.__setitem__) == self._wrappers:
            torch.Tensor.__getitem__, torch.Tensor.__setitem__ = self._saved_index
        if any(m is self for m in _get_current_function_mode_stack()):
            above = []
            while True:
                m = _pop_mode()
                if m is self:
                    break
                above.append(m)
            for m in reversed(above):
                _push_mode(m)

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if self.closed or threading.get_ident() != self._thread:
            return func(*args, **kwargs)
        if func in (torch.Tensor.__getitem__, torch.Tensor.__setitem__) or \
                getattr(func, "__name__", "") in ("__getitem__", "__setitem__"):
            # the patched indexing (__enter__) runs the rule once
            self.paused += 1
            try:
                return func(*args, **kwargs)
            finally:
                self.paused -= 1
        paused = self.paused
        # inside the call: its own Python code (F.multi_head_attention_forward's indexing, a
        # float() of a size argument) is covered by the rule for the call, not followed
        self.paused += 1
        try:
            out = func(*args, **kwargs)
        finally:
            self.paused -= 1
        if paused:
            return out
        name = _name(func)
        if name in SIZE_READS:
            return self._size_read(name, args, kwargs, out)
        self._seen(func, name, args, kwargs, out)
        return out

    def _size_read(self, name, args, kwargs, out):
        """x.shape, x.size(), x.size(d), x.numel() of a tensor tagged along dimension d: the
        batch's extent as a tracked int (_sizes.py), so the rules see where it lands."""
        t = args[0] if args else None
        d = self.tag_of(t) if isinstance(t, torch.Tensor) else None
        if not isinstance(d, int) or isinstance(d, bool):
            return out
        me = weakref.ref(self)
        what = f"a tensor of the batch of shape {list(t.shape)}"
        if name == "numel":
            return tracked(out, f"x.numel() of {what}", me)
        if isinstance(out, torch.Size):
            read = "x.shape" if name == "shape" else "x.size()"
            items = list(out)
            items[d] = tracked(items[d], f"{read}[{d}] of {what}", me, exact=True)
            return torch.Size(items)
        dim = kwargs.get("dim", args[1] if len(args) > 1 else None)
        if isinstance(out, int) and dim is not None and int(dim) % max(t.dim(), 1) == d:
            return tracked(out, f"x.size({int(dim)}) of {what}", me, exact=True)
        return out

    def sized_len(self, obj, n):
        """len(x) (builtins.len while this tracker is active, _sizes.py): the batch's extent
        when x is tagged along dimension 0."""
        if self.closed or self.paused or threading.get_ident() != self._thread or \
                not isinstance(obj, torch.Tensor) or self.tag_of(obj) != 0:
            return n
        return tracked(n, f"len(x) of a tensor of the batch of shape {list(obj.shape)}",
                       weakref.ref(self), exact=True)

    def _seen(self, func, name, args, kwargs, out):
        self.paused += 1  # the rules' own torch calls are not the user's
        try:
            self._apply(func, name, args, kwargs, out)
        finally:
            self.paused -= 1

    def _apply(self, func, name, args, kwargs, out):
        if name in META or (name.startswith("is_") and name != "is_nonzero") or \
                (name.startswith("_") and not name.startswith("__") and
                 name in ("_base", "_version", "_cdata", "_grad_fn", "_backward_hooks",
                          "_is_view", "_python_dispatch", "_typed_storage")):
            return  # metadata (is_nested, is_floating_point, _base, ...), not values
        ins = _flat(list(args) + list(kwargs.values()), [])
        tags = [(t, self.tag_of(t)) for t in ins]
        tagged = [(t, v) for t, v in tags if v is not None]
        size = first_tracked([list(args), kwargs])  # the batch size among the arguments
        if not tagged and size is None:
            return
        if name in ESCAPE and tagged:
            self._note(f"a value of the batch was read into Python ({name}): what is computed "
                       f"from it is invisible to the proof")
            return
        outs = _flat(out, [])
        if name.endswith("_") and args and isinstance(args[0], torch.Tensor) and \
                not any(args[0] is o for o in outs):
            outs.append(args[0])
        if not outs:
            if tagged and name not in ("backward", "register_hook", "retain_grad", "__repr__",
                                       "__format__", "__str__", "__len__"):
                self._note(f"{name}: returned a non-tensor value computed from the batch")
            return
        # arange(B) as the index of x[arange(B), y] (the loss's label logits): its positions
        # are allowed there only (_advanced); anywhere else they are values
        bad = [v for t, v in tagged if isinstance(v, str) and not (
            isinstance(v, _Position) and name == "__getitem__" and t is not args[0])]
        if bad:
            res = str(bad[0])
        elif not tagged:
            res = None  # a tensor made from constants (and the batch size: below)
        else:
            try:
                res = self._rule(name, func, args, kwargs, tagged, outs)
            except _NotProven as e:
                res = str(e)
            except Exception as e:  # a rule that cannot read the call: not proven
                res = f"{name}: not covered by the rules ({type(e).__name__})"
        if size is not None:
            res = self._sizes(name, args, kwargs, outs, res, size)
        if isinstance(res, str) and not isinstance(res, _Position):
            if self.where and " (in " not in res:
                res = f"{res} (in {self.where[-1]})"
            self._note(res)
        for o, r in zip(outs, res if isinstance(res, list) else [res] * len(outs)):
            if r is None:
                self.untag(o)
            else:
                self.tag(o, r)

    def _sizes(self, name, args, kwargs, outs, res, size):
        """The rule for a call with the batch size among its arguments (_sizes.py): as the
        size of the batch dimension of a shape operation's result (x.view(B, -1), zeros(B, d),
        randn(B, d), expand(B, -1)) it is a shape, and the result holds one row per example
        along it (constants or independent draws: a reduction over it is across the batch);
        anywhere else (a scalar, data, a fill value, arange/linspace/eye, an index, another
        dimension's size) the batch size is a value and the result is not proven: even with a
        fixed batch size each example alone (the per-example reference) has B = 1 and
        position 0, and under Poisson-type sampling B moves with every example present."""
        why = f"batch size read into values: {size._read}, an argument of {name}"
        if isinstance(res, str):
            return res  # not proven already, for its own reason
        if name not in SHAPED or len(outs) != 1:
            o = outs[0]
            if name == "arange" and o.dim() == 1 and o.shape[0] == self.batch and \
                    not o.is_floating_point() and \
                    torch.equal(o.detach().cpu(), torch.arange(self.batch)):
                return _Position(f"{why} (the examples' positions used as values)")
            return why
        sizes, offset, values = _size_args(name, args, kwargs)
        if first_tracked(values) is not None or first_tracked(list(sizes)) is None:
            return why  # a fill value or a bound, not a size
        spots = [offset + k for k, v in enumerate(sizes) if is_tracked(v)]
        o, B = outs[0], self.batch
        if len(spots) != 1:
            return f"{why}: the size of {len(spots)} dimensions (every example meets every other)"
        k = spots[0]
        if o.dim() <= k or o.shape[k] != B or int(sizes[k - offset]) != B or \
                (res is not None and res != k):
            return f"{why}: sets dimension {k} of the result to {int(sizes[k - offset])}, " \
                   f"not the dimension holding the batch's {B} examples"
        return k

    # ---- the rules --------------------------------------------------------------------------

    def _rule(self, name, func, args, kwargs, tagged, outs):
        B = self.batch
        x, d = tagged[0]
        o = outs[0]
        if name in FACTORY_LIKE:
            # zeros_like(h): one row per example (constants or independent draws), so that a
            # reduction over them (ones_like(h).sum(): the batch size) is across the batch;
            # new_zeros(sizes): a tensor of its sizes (the batch size among them: _sizes)
            like = x is args[0] or kwargs.get("input") is x
            return d if name.endswith("_like") and like and isinstance(d, int) else None
        if name in POINTWISE_LOSS:
            red = kwargs.get("reduction", "mean")
            if red != "none":
                raise _NotProven(f"{name} with reduction={red!r} combines the examples (use "
                                 f"reduction='none')")
            return self._pointwise(name, tagged, o, args[:2])
        if name in POINTWISE:
            return self._pointwise(name, tagged, o, args, kwargs)
        if name in ROW_LOSS:
            red = kwargs.get("reduction", "mean")
            if red != "none":
                raise _NotProven(f"{name} with reduction={red!r} combines the examples (use "
                                 f"reduction='none')")
            if any(v != 0 for _, v in tagged) or any(t.dim() < 1 for t, _ in tagged):
                raise _NotProven(f"{name}: the examples must be along dimension 0")
            if any(not any(t is a for a in args[:2]) for t, _ in tagged):
                raise _NotProven(f"{name}: an argument other than input and target (class "
                                 f"weights, ...) depends on the batch")
            return 0
        if name in REDUCE:
            return self._reduce(name, args, kwargs, x, d, outs)
        if name in ALONG:
            dim = kwargs.get("dim", _arg(args, 1, 1 if name == "normalize" else None))
            if name == "normalize":
                dim = kwargs.get("dim", _arg(args, 2, 1))
            if name == "flip":
                dim = kwargs.get("dims", _arg(args, 1, None))
            if dim is None or d in _dims(dim, x.dim()):
                raise _NotProven(f"{name} along the batch dimension mixes the examples")
            return [d] * len(outs)
        if name in VIEW:
            return self._view(name, x, d, o)
        if name in EXPAND:
            return d + o.dim() - x.dim()
        if name in ("permute", "transpose", "swapaxes", "swapdims", "t", "T", "mT", "movedim",
                    "moveaxis", "adjoint", "H", "mH"):
            return self._permute(name, args, kwargs, x, d)
        if name in ("cat", "concat", "concatenate", "stack", "hstack", "vstack"):
            return self._cat(name, args, kwargs, tagged, o)
        if name in ("split", "chunk", "unbind", "tensor_split", "split_with_sizes"):
            dim = kwargs.get("dim", _arg(args, 2 if name != "unbind" else 1,
                                         0 if name != "unbind" else 0))
            dim = int(dim) % x.dim()
            if dim == d:
                raise _NotProven(f"{name} along the batch dimension")
            return [d - (1 if name == "unbind" and dim < d else 0)] * len(outs)
        if name in ("__getitem__", "__setitem__"):
            return self._index(name, args, tagged, x, d, o)
        if name in ("matmul", "mm", "bmm", "mv", "linear", "addmm", "baddbmm", "addmv",
                    "bilinear"):
            return self._matmul(name, args, kwargs, tagged, o)
        if name in SPATIAL:
            return self._spatial(name, args, kwargs, tagged, x, d)
        if name in ("layer_norm", "rms_norm"):
            shape = kwargs.get("normalized_shape", _arg(args, 1, None))
            if len(tagged) > 1 or x is not args[0] or d >= x.dim() - len(tuple(shape)):
                raise _NotProven("layer_norm over the batch dimension")
            return d
        if name == "batch_norm":
            training = kwargs.get("training", _arg(args, 5, False))
            if training:
                raise _NotProven("batch_norm in training mode (batch statistics) mixes the "
                                 "examples")
            if len(tagged) > 1 or x is not args[0] or d != 0:
                raise _NotProven("batch_norm: the batch must be dimension 0 of its input only")
            return 0
        if name in ("embedding", "embedding_bag", "one_hot"):
            if x is not args[0] or len(tagged) > 1:
                raise _NotProven(f"{name}: the weights depend on the batch")
            if name == "embedding_bag" and (x.dim() != 2 or d != 0):
                raise _NotProven("embedding_bag with offsets: not proven per example")
            return d
        if name == "einsum":
            return self._einsum(args, tagged)
        if name in ("gather", "take_along_dim", "index_select"):
            # logp.gather(1, y[:, None]): along a dimension other than the batch's, the index
            # of each example from that example (or a constant)
            dim = int(kwargs.get("dim", _arg(args, 1, None))) % max(args[0].dim(), 1)
            src, index = args[0], kwargs.get("index", _arg(args, 2, None))
            d = self.tag_of(src)
            ti = self.tag_of(index) if isinstance(index, torch.Tensor) else None
            if not isinstance(d, int) or dim == d or ti not in (None, d) or \
                    (name != "index_select" and index.shape[d] != src.shape[d]) or \
                    (name == "index_select" and ti is not None):
                raise _NotProven(f"{name} along or across the batch dimension")
            return d
        if name == "multi_head_attention_forward":
            return self._mha(args, kwargs, tagged, outs)
        if name in ("lstm", "gru", "rnn_tanh", "rnn_relu"):
            return self._rnn(args, tagged, outs)
        raise _NotProven(f"{name}: an operation outside dpcorr.torch's per-example rules")

    def _pointwise(self, name, tagged, o, args=(), kwargs=None):
        shapes = [t.shape for t in _flat(list(args) + list((kwargs or {}).values()), [])]
        if name in CONVERT and args and isinstance(args[0], torch.Tensor):
            shapes = [args[0].shape]  # x.to(other), x.type_as(other): x's shape
        try:
            if shapes and tuple(torch.broadcast_shapes(*shapes)) != tuple(o.shape):
                raise _NotProven(f"{name}: its result is not the broadcast of its operands "
                                 f"(not an elementwise operation here)")
        except RuntimeError:
            raise _NotProven(f"{name}: operands that do not broadcast") from None
        dims = set()
        for t, d in tagged:
            k = d + o.dim() - t.dim()
            if t.shape[d] != o.shape[k]:
                raise _NotProven(f"{name}: one example broadcast over the batch")
            dims.add(k)
        if len(dims) != 1:
            raise _NotProven(f"{name} combines the batch dimension of one operand with another "
                             f"dimension of the other (every example meets every other)")
        k = dims.pop()
        if name not in CONVERT:
            self._no_position_rows(name, _flat(list(args) + list((kwargs or {}).values()), []),
                                   o, k)
        return k

    def _no_position_rows(self, name, operands, o, k, lead=None):
        """h + table, cat([h, table], 1), bmm(h, table) with a tensor not of the batch whose
        rows lie along the result's batch dimension k: example i gets row i, its position in
        the batch used as a value. A tensor made with the batch size (zeros(B, d), expand of
        a parameter to B rows) is tagged and passes: its rows are built alike. ``lead``: only
        an operand's first ``t.dim() - lead`` dimensions broadcast (matrix products)."""
        if o.shape[k] == 1:
            return
        for t in operands:
            if not isinstance(t, torch.Tensor) or self.tag_of(t) is not None:
                continue
            j = k - (o.dim() - t.dim())
            if 0 <= j < t.dim() - (lead or 0) and t.shape[j] != 1:
                raise _NotProven(f"{name}: a tensor not of the batch has one row per position "
                                 f"of the batch ({list(t.shape)}): each example's position "
                                 f"is used as a value")

    def _reduce(self, name, args, kwargs, x, d, outs):
        if x is not args[0]:
            if name in ("max", "min") and len(args) > 1 and isinstance(args[1], torch.Tensor):
                return self._pointwise(name, [(a, self.tag_of(a)) for a in args[:2]
                                              if self.tag_of(a) is not None], outs[0])
            raise _NotProven(f"{name}: the batch in an argument other than the input")
        if name in ("max", "min") and len(args) > 1 and isinstance(args[1], torch.Tensor):
            ts = [(a, self.tag_of(a)) for a in args[:2] if self.tag_of(a) is not None]
            return self._pointwise(name, ts, outs[0])
        pos = {"norm": 2, "vector_norm": 2, "topk": 2, "kthvalue": 2}.get(name, 1)
        dim = kwargs.get("dim", kwargs.get("axis", _arg(args, pos, None)))
        if name == "var" or name == "std":
            if isinstance(dim, bool):
                dim = None
        keep = name == "topk" or bool(kwargs.get("keepdim", _arg(args, pos + 1, False)))
        red = _dims(dim, x.dim())
        if d in red:
            what = "every dimension" if dim is None else f"dimension {d}"
            raise _NotProven(f"{name} over {what} reduces across the examples of the batch")
        return [d if keep else d - sum(1 for r in red if r < d)] * len(outs)

    def _view(self, name, x, d, o):
        pre = math.prod(x.shape[:d])
        for k in range(o.dim()):
            if math.prod(o.shape[:k]) == pre and o.shape[k] == x.shape[d]:
                return k
            if math.prod(o.shape[:k]) > pre:
                break
        raise _NotProven(f"{name} from {list(x.shape)} to {list(o.shape)} merges the batch "
                         f"dimension {d} with another")

    def _permute(self, name, args, kwargs, x, d):
        n = x.dim()
        if name in ("t", "T", "H", "adjoint") and n <= 2:
            return (n - 1 - d) if n == 2 else d
        if name in ("mT", "mH", "adjoint", "T", "H"):
            if name in ("T", "H"):
                return n - 1 - d
            return {n - 1: n - 2, n - 2: n - 1}.get(d, d)
        if name == "permute":
            order = args[1:] if len(args) > 2 or not isinstance(args[1], (list, tuple)) \
                else args[1]
            order = [int(i) % n for i in (kwargs.get("dims") or order)]
            return order.index(d)
        if name in ("movedim", "moveaxis"):
            src = _dims(kwargs.get("source", _arg(args, 1, None)), n)
            dst = _dims(kwargs.get("destination", _arg(args, 2, None)), n)
            src, dst = ([src] if isinstance(src, int) else src), \
                ([dst] if isinstance(dst, int) else dst)
            perm = [None] * n
            for s, t in zip(src, dst):
                perm[t] = s
            rest = iter(i for i in range(n) if i not in src)
            perm = [p if p is not None else next(rest) for p in perm]
            return perm.index(d)
        a = int(kwargs.get("dim0", _arg(args, 1, 0))) % n
        b = int(kwargs.get("dim1", _arg(args, 2, 1))) % n
        return b if d == a else a if d == b else d

    def _cat(self, name, args, kwargs, tagged, o):
        seq = args[0]
        if name in ("hstack", "vstack"):
            raise _NotProven(f"{name}: not covered")
        dim = int(kwargs.get("dim", _arg(args, 1, 0)))
        ds = {v for _, v in tagged}
        if len(ds) != 1 or any(t.dim() != seq[0].dim() for t in seq):
            raise _NotProven(f"{name} of tensors with the batch along different dimensions")
        d = ds.pop()
        if name == "stack":
            dim = dim % o.dim()
            k = d + (1 if dim <= d else 0)
            self._no_position_rows(name, [t.unsqueeze(dim) for t in seq], o, k)
            return k
        if dim % o.dim() == d:
            raise _NotProven(f"{name} along the batch dimension")
        self._no_position_rows(name, seq, o, d)
        return d

    def _index(self, name, args, tagged, x, d, o):
        if x is not args[0]:
            if name == "__setitem__" and self.tag_of(args[0]) is None:
                raise _NotProven("an index assignment of batch values into a tensor outside "
                                 "the batch")
            if name == "__getitem__":
                return self._advanced(args, x, d)
        idx = args[1]
        if not isinstance(idx, tuple):
            idx = (idx,)
        if name == "__setitem__":
            v = args[2]
            tv = self.tag_of(v) if isinstance(v, torch.Tensor) else None
            if tv is not None and (v.dim() != x.dim() or tv != d or not all(
                    isinstance(i, slice) or i is Ellipsis for i in idx)):
                raise _NotProven("an index assignment that moves batch values to other rows")
        n, p, q, adv = x.dim(), 0, 0, False
        ell = sum(1 for i in idx if i is not Ellipsis and i is not None)
        res = None
        for i in idx:
            if i is Ellipsis:
                skip = n - ell
                if p <= d < p + skip:
                    res = q + (d - p)
                p += skip
                q += skip
            elif i is None:
                q += 1
            elif isinstance(i, slice):
                if p == d:
                    if i != slice(None):
                        raise _NotProven("a slice along the batch dimension")
                    res = q
                p += 1
                q += 1
            elif isinstance(i, int) or (isinstance(i, torch.Tensor) and i.dim() == 0):
                if p == d:
                    raise _NotProven("an index selecting one example of the batch")
                p += 1
            else:
                adv = True
                if p == d:
                    return self._advanced(args, x, d)
                p += 1
                q += 1
        if res is None:
            res = q + (d - p)
        if adv and name == "__getitem__":
            raise _NotProven("an advanced index next to the batch dimension")
        return d if name == "__setitem__" else res

    def _advanced(self, args, x, d):
        """x[arange(B), y]: a gather of one entry per example (the loss's label logits)."""
        idx = args[1] if isinstance(args[1], tuple) else (args[1],)
        if d != 0 or not isinstance(idx[0], torch.Tensor) or \
                not torch.equal(idx[0].detach().cpu(), torch.arange(self.batch)):
            raise _NotProven("an advanced index along the batch dimension that is not "
                             "arange(B) (it moves examples between rows)")
        for i in idx[1:]:
            if not isinstance(i, torch.Tensor) or i.dim() != 1 or i.shape[0] != self.batch:
                raise _NotProven("an advanced index other than x[arange(B), per-example]")
            v = self.tag_of(i)
            if v not in (None, 0):
                raise _NotProven("an advanced index mixing the examples")
        if self.tag_of(x) != 0:
            raise _NotProven("an index of a tensor not along the batch")
        return 0

    def _matmul(self, name, args, kwargs, tagged, o):
        if name in ("linear", "bilinear"):
            x = args[0]
            d = self.tag_of(x)
            if len(tagged) > 1 or x is not tagged[0][0] or d == x.dim() - 1:
                raise _NotProven(f"{name}: the batch in its weights, or contracted")
            return d
        if name in ("addmm", "baddbmm", "addmv"):
            if self.tag_of(args[0]) is not None:
                raise _NotProven(f"{name}: batch-dependent bias")
            args = args[1:]
        a, b = args[0], args[1]
        res = set()
        for t, is_a in ((a, True), (b, False)):
            v = self.tag_of(t)
            if v is None:
                continue
            n = t.dim()
            if n == 1:
                raise _NotProven(f"{name}: the batch dimension is contracted")
            contracted = n - 1 if is_a else n - 2
            if v == contracted:
                raise _NotProven(f"{name}: the batch dimension is contracted (a sum over the "
                                 f"examples)")
            if is_a and v == n - 2:
                res.add(o.dim() - 2 if b.dim() > 1 else o.dim() - 1)
            elif not is_a and v == n - 1:
                res.add(o.dim() - 1)
            else:
                res.add(v + o.dim() - n)
        if len(res) != 1 or (len(tagged) > 1 and
                             not all(v < t.dim() - 2 for t, v in tagged)):
            raise _NotProven(f"{name} pairs every example with every other (both operands "
                             f"carry the batch, e.g. z @ z.T)")
        k = res.pop()
        if k < o.dim() - 2:  # the batch among the broadcast (leading) dimensions
            self._no_position_rows(name, [a, b], o, k, lead=2)
        return k

    def _spatial(self, name, args, kwargs, tagged, x, d):
        if x is not args[0] or len(tagged) > 1 or d != 0:
            raise _NotProven(f"{name}: the batch must be dimension 0 of its input only")
        for k in ("1d", "2d", "3d"):
            if name.endswith(k) and x.dim() != int(k[0]) + 2 and "pool" not in name:
                raise _NotProven(f"{name} on an unbatched input (dimension 0 is not the "
                                 f"batch)")
        if name in ("group_norm", "instance_norm") and x.dim() < 2:
            raise _NotProven(f"{name} on an unbatched input")
        if name == "pad" and len(kwargs.get("pad", _arg(args, 1, ()))) // 2 >= x.dim():
            raise _NotProven("pad along the batch dimension")
        return 0

    def _einsum(self, args, tagged):
        """einsum("bld,bmd->blm", q, k): the batch's letter, the same in every operand that
        carries the batch, once in each and once in the output (never summed over)."""
        eq = args[0]
        ops = args[1] if len(args) == 2 and isinstance(args[1], (list, tuple)) else args[1:]
        if not isinstance(eq, str) or "->" not in eq or "." in eq:
            raise _NotProven("einsum without an explicit output (or with ...): not covered")
        ins, out = eq.replace(" ", "").split("->")
        subs = ins.split(",")
        letters = set()
        for sub, t in zip(subs, ops):
            d = self.tag_of(t) if isinstance(t, torch.Tensor) else None
            if d is None:
                continue
            if not isinstance(d, int) or d >= len(sub) or sub.count(sub[d]) != 1:
                raise _NotProven("einsum: the batch is not one index of an operand")
            letters.add(sub[d])
        if len(letters) != 1:
            raise _NotProven("einsum pairs the examples of its operands (different indices)")
        b = letters.pop()
        if out.count(b) != 1:
            raise _NotProven("einsum sums over the examples of the batch")
        for sub, t in zip(subs, ops):
            if isinstance(t, torch.Tensor) and self.tag_of(t) is None and b in sub and \
                    t.shape[sub.index(b)] != 1:
                raise _NotProven("einsum: a tensor not of the batch has one row per position "
                                 "of the batch: each example's position is used as a value")
        return out.index(b)

    def _mha(self, args, kwargs, tagged, outs):
        q, k, v = args[:3]
        for t, d in tagged:
            if any(t is a for a in (q, k, v)):
                if t.dim() != 3 or d != 1:
                    raise _NotProven("multi_head_attention_forward: the batch must be "
                                     "dimension 1 of query, key and value")
            elif kwargs.get("key_padding_mask") is t and d == 0:
                continue
            else:
                raise _NotProven("multi_head_attention_forward: the batch in its weights "
                                 "or in a mask other than key_padding_mask")
        return [1, 0][:len(outs)]

    def _rnn(self, args, tagged, outs):
        x = args[0]
        if len(args) != 9 or not isinstance(args[1], (list, tuple, torch.Tensor)) or \
                (isinstance(args[1], torch.Tensor) and args[1].dim() == 1):
            raise _NotProven("a packed sequence: not proven per example")
        first = bool(args[8])
        hx = _flat(args[1], [])
        for t, d in tagged:
            want = (0 if first else 1) if t is x else 1 if any(t is h for h in hx) else None
            if want is None or d != want:
                raise _NotProven("rnn: the batch must be along the batch dimension of its "
                                 "input and states")
        return [0 if first else 1] + [1] * (len(outs) - 1)


def _arg(args, i, default):
    return args[i] if len(args) > i else default


class _Position(str):
    """The reason a tensor of the examples' positions (arange(B)) is not proven; accepted
    only as the first index of x[arange(B), y] (Tracker._advanced)."""


# shape operations and factories whose size arguments may hold the batch size (Tracker._sizes)
SHAPED = set("""view reshape expand broadcast_to repeat unflatten new_zeros new_ones new_empty
new_full zeros ones empty full rand randn randint normal""".split())


def _size_args(name, args, kwargs):
    """(the sizes, the result dimension of the first, the value arguments) of a SHAPED call."""
    values = [kwargs.get(k) for k in ("fill_value", "low", "high", "mean", "std") if k in kwargs]
    if name == "unflatten":
        x = args[0]
        dim = int(kwargs.get("dim", _arg(args, 1, 0)))
        return tuple(kwargs.get("sizes", _arg(args, 2, ()))), dim % max(x.dim(), 1), values
    if name in ("full", "new_full", "randint", "normal"):
        pos = list(args[1:] if name == "new_full" else args)
        seq = [i for i, a in enumerate(pos) if isinstance(a, (list, tuple))]
        sizes = kwargs.get("size", pos[seq[-1]] if seq else ())
        values += [a for i, a in enumerate(pos) if not seq or i != seq[-1]]
        return tuple(sizes), 0, values
    rest = args if name in ("zeros", "ones", "empty", "rand", "randn") else args[1:]
    if len(rest) == 1 and isinstance(rest[0], (list, tuple)):
        rest = rest[0]
    return tuple(kwargs.get("size", kwargs.get("shape", rest))), 0, values


__all__ = ["Tracker", "ANCHOR", "NotPerExampleError"]
