"""The batch size as a tracked value (the proof's rule for sizes, _proof.py).

Under Poisson-type sampling the batch size B depends on which examples are present, and even
with a fixed batch size the per-example reference semantics (each example computed alone, a
batch of one) has B = 1 and every position 0: a forward that puts B or an example's position
into tensor VALUES (``h / x.shape[0]``, ``torch.arange(B)[:, None] + h``, ``torch.full_like(h,
B)``) computes something else than each example alone, and under Poisson sampling removing one
example moves every other example's row. Reading B as a SHAPE (``x.view(x.size(0), -1)``,
``torch.zeros(B, d)``, ``torch.randn(B, d)``: one row per example, the rows built alike) is
what torch's own modules do at every call and changes nothing per example.

What torch 1.13's TorchFunctionMode sees (measured): ``Tensor.shape.__get__``, ``size``,
``numel`` (``nelement`` too), ``__len__``, ``dim``, ``stride``, and the factories without a
tensor argument (``zeros``, ``randn``, ``arange``, ``eye``, ``tensor``, ``full``); a
``torch.Size`` keeps the int subclass objects it is built from (indexing, slicing and
unpacking give them back); ``torch.Size`` cannot be subclassed; ``len()`` turns whatever
``__len__`` returns into an exact int.

So a size read that involves the batch dimension of a tensor the proof tags (``x.shape``,
``x.size()``, ``x.size(d)``, ``len(x)``, ``x.numel()``, unpacking ``x.shape``) returns a
:class:`BatchInt`: an ``int`` (torch and Python take it wherever they take an int) that
remembers the read. Integer arithmetic with it (``B * 2``, ``B // 2``, ``-B``, ``B / 2``,
``B ** 0.5``, ``round``, ``math.ceil``/``floor``, ``math.prod(x.shape)``) gives a tracked
value again (:class:`BatchFloat` for a float result). The tracker then decides where a tracked
value lands (``_proof.Tracker._sizes``): as a size of the batch dimension of the result of a
shape operation (view/reshape/expand/repeat/unflatten/new_zeros/zeros/ones/empty/rand/randn/
full's size) it is a shape; anywhere else among a torch function's arguments (a scalar of
arithmetic with a tensor, ``torch.tensor``'s data, a fill value, ``arange``/``linspace``/
``eye`` sizes, an index, a dimension of another size) its result is not proven, naming the
read.

Where the value leaves Python's int type the proof cannot follow it, so those exits are noted
as reasons the step is not proven (then the isolated path's own-row check decides, or the
loss is refused): ``float(B)``, ``int(B)``, ``complex(B)``, ``math.sqrt(B)`` and the other
math functions that convert through ``__float__``, ``numpy.float64(B)``, ``range(B)`` (its
items are plain ints), and comparisons of a tracked value with an untracked number
(``if x.shape[0] > 8``: control flow decided by B). Not noted: comparing two tracked values,
as torch's modules do to validate shapes (``hx.size() != expected``), and a test of the batch
size itself whose outcome is the same for every batch size >= 1 (``len(x) == 0``: an empty
batch; each example alone gets the same outcome).

NOT covered (Python computes these without asking the int; documented in python/README.md):
a float, numpy scalar or Fraction on the LEFT of arithmetic with the batch size (``1.0 / B``,
``0.5 * B``: float's own operator reads the int's value), ``math.log(B)`` (and log2, log10:
CPython reads an int's digits directly), ``str(B)``/format, ``[0] * B``, sequence slicing by
``B``, ``B.bit_length()``, ``numpy.array(x.shape)`` (numpy reads the ints' values),
``torch.Size.numel()`` (C code; ``math.prod(x.shape)`` is tracked), ``x.stride()``,
``x.storage()`` sizes, and a size read of a tensor the proof does not tag (one built from
the batch's values through Python). ``len(x)`` is tracked by replacing ``builtins.len`` while
a tracker is active (CPython's ``len`` makes an exact int of whatever ``__len__`` returns).
"""

import builtins
import threading
import weakref

_len = builtins.len
_range = builtins.range


class _Tracked:
    """The part of BatchInt and BatchFloat that says where the value came from."""

    _read = "the batch size"
    _owner = None  # weakref to the Tracker whose batch it is
    _exact = False  # the batch size itself as read (x.shape[0], len(x)), not computed from it

    def _live(self):
        tr = self._owner() if self._owner is not None else None
        if tr is None or tr.closed or tr.paused or threading.get_ident() != tr._thread:
            return None
        return tr

    def _escape(self, how):
        tr = self._live()
        if tr is not None:
            tr._note(f"batch size read into values: {self._read} left the proof through "
                     f"{how} (what is computed from it is invisible to the proof)")


def tracked(value, read, owner, exact=False):
    """``value`` (an int or float computed from the batch size) as a tracked value; ``exact``:
    the batch size itself as read (not computed from it)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        out = BatchInt(value)
    elif isinstance(value, float):
        out = BatchFloat(value)
    elif isinstance(value, tuple):
        return tuple(tracked(v, read, owner) for v in value)
    else:
        return value
    out._read, out._owner, out._exact = read, owner, exact
    return out


def is_tracked(v):
    return isinstance(v, _Tracked)


def first_tracked(obj, depth=0):
    """The first tracked value in a (nested) argument, or None."""
    if isinstance(obj, _Tracked):
        return obj
    if isinstance(obj, slice):  # x[:, :B]
        obj = (obj.start, obj.stop, obj.step)
    if depth < 4 and isinstance(obj, (list, tuple)):
        for o in obj:
            t = first_tracked(o, depth + 1)
            if t is not None:
                return t
    elif depth < 4 and isinstance(obj, dict):
        return first_tracked(list(obj.values()), depth + 1)
    return None


def _forward(base):
    as_float = getattr(float, base.__name__, None)

    def op(self, *other):
        r = base(self, *other)
        if r is NotImplemented and as_float is not None and other and \
                isinstance(other[0], float) and isinstance(self, int):
            # B * 0.5, B ** 0.5: int's operator declines a float, and float's reflected one
            # would read the int's value untracked: computed here, as float would
            r = as_float(int.__float__(self), *other)
        return tracked(r, self._read, self._owner)
    op.__name__ = base.__name__
    return op


def _exit(base, how):
    def op(self):
        self._escape(how)
        return base(self)
    op.__name__ = base.__name__
    return op


def _same_for_every_batch(base, other):
    """Whether ``B <op> other`` has one outcome for every batch size B >= 1 (``len(x) == 0``,
    ``x.shape[0] > 0``: a test for an empty batch, whose outcome is that of each example
    alone too)."""
    if isinstance(other, bool) or not isinstance(other, (int, float)) or other != other:
        return False
    if base.__name__ in ("__eq__", "__ne__"):
        return other < 1 or other != int(other)
    return base(1, other) == base(1 << 62, other)


def _compare(base):
    def op(self, other):
        if not isinstance(other, _Tracked) and not (
                self._exact and _same_for_every_batch(base, other)):
            self._escape(f"a comparison with {other!r} (control flow decided by the batch "
                         f"size)")
        return base(self, other)
    op.__name__ = base.__name__
    return op


_ARITH = """add radd sub rsub mul rmul floordiv rfloordiv truediv rtruediv mod rmod pow rpow
divmod rdivmod neg pos abs round trunc floor ceil""".split()
_INT_ONLY = "lshift rlshift rshift rrshift and rand or ror xor rxor invert".split()
_COMPARE = "eq ne lt le gt ge".split()


def _install(cls, base, names):
    for n in names:
        setattr(cls, f"__{n}__", _forward(getattr(base, f"__{n}__")))
    for n in _COMPARE:
        setattr(cls, f"__{n}__", _compare(getattr(base, f"__{n}__")))
    cls.__hash__ = base.__hash__
    cls.__float__ = _exit(base.__float__, "float()")
    cls.__int__ = _exit(base.__int__, "int()")
    cls.__complex__ = _exit(lambda v: complex(base.__float__(v)), "complex()")


class BatchInt(_Tracked, int):
    """An int computed from the batch dimension's size of a tensor the proof tags."""


class BatchFloat(_Tracked, float):
    """A float computed from the batch size (``B / 2``, ``B ** 0.5``)."""


_install(BatchInt, int, _ARITH + _INT_ONLY)
_install(BatchFloat, float, _ARITH)


class _RangeType(type):
    """``builtins.range`` while a tracker is active: ``range(B)`` notes that the batch size
    left the proof (its items are plain ints: positions of the examples); instances and
    isinstance are those of the real range."""

    def __call__(cls, *args):
        for a in args:
            if isinstance(a, _Tracked):
                a._escape("range()")
                break
        return _range(*args)

    def __instancecheck__(cls, obj):
        return isinstance(obj, _range)

    def __subclasscheck__(cls, sub):
        return issubclass(sub, _range)


class _TrackedRange(metaclass=_RangeType):
    pass


_LOCK = threading.Lock()
_TRACKERS = []  # weakrefs to the active trackers that asked for len/range (innermost last)


def _tracked_len(obj):
    n = _len(obj)
    if _TRACKERS and type(obj).__module__.startswith("torch"):
        me = threading.get_ident()
        for ref in reversed(_TRACKERS):  # the innermost active tracker of this thread
            tr = ref()
            if tr is not None and not tr.closed and tr._thread == me:
                return tr.sized_len(obj, n)
    return n


def patch_builtins(tracker):
    """While ``tracker`` is active, ``len`` and ``range`` see the tracked batch size (CPython
    turns __len__'s result into an exact int, and range's arguments into exact ints)."""
    with _LOCK:
        _TRACKERS.append(weakref.ref(tracker))
        builtins.len = _tracked_len
        builtins.range = _TrackedRange


def unpatch_builtins(tracker):
    """Called by ``tracker.close()``; the builtins are Python's own again once no tracker is
    active (a tracker that was never closed and is gone counts as ended)."""
    with _LOCK:
        _TRACKERS[:] = [r for r in _TRACKERS if r() is not None and r() is not tracker and
                        not r().closed]
        if not _TRACKERS:
            builtins.len = _len
            builtins.range = _range


__all__ = ["BatchInt", "BatchFloat", "tracked", "is_tracked", "first_tracked",
           "patch_builtins", "unpatch_builtins"]
