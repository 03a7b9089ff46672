"""The streaming correlated-noise generator (``dpc_noise`` of ``include/dpcorr/mech.h``) on the
counter-based RNG (``include/dpcorr/rng.h``).

Row t is ``scale x (B Z)_t`` over coordinates [coord0, coord0 + dim), where every entry of Z is
a pure function of (key, noise row, coordinate) and ``scale = noise_multiplier x clip x
column_norm(C)``: the noise the library's trainer adds to the sum of clipped gradients at step t
(the one meaning of the noise multiplier, include/dpcorr/account.h). With a seed the key is the
library's seeded Philox key and rows are bit-identical to those of the C library for the same
mechanism, seed and coordinates (stream DPC_STREAM_ID(DPC_STREAM_NOISE, 0), as dpc_trainer uses);
without one (``seed=None``) a 256-bit key comes from the OS and the words from ChaCha20.
"""

import ctypes
import sys

import numpy as np

from . import _check
from . import _lib
from ._errors import DpcorrRuntimeError
from ._lib import lib
from .mechanism import Mechanism

_STATE_FORMAT = "dpcorr-noise"


def make_rng(seed):
    """The library's root generator: seeded (Philox, reproducible) for an int seed in
    [0, 2^64), secure (ChaCha20 under a key from getrandom) for None."""
    rng = _lib.Rng()
    if seed is None:
        _lib.call(lib.dpc_rng_seed_os, ctypes.byref(rng))
    else:
        lib.dpc_rng_seed(ctypes.byref(rng), _check.size("seed", seed))
    return rng


def rng_state(rng):
    """The generator as plain data (the secure key included: keep such a state secret)."""
    if rng.mode == 1:
        return {"rng_mode": "secure", "seed": None, "key": [int(k) for k in rng.skey]}
    return {"rng_mode": "seeded", "seed": int(rng.seed), "key": None}


def rng_from_state(state):
    """Inverse of :func:`rng_state`."""
    mode = state.get("rng_mode")
    if mode == "seeded":
        seed = state.get("seed")
        if seed is None or isinstance(seed, bool):  # make_rng(None) would be a fresh secure key
            raise ValueError(f"state: a seeded generator's state needs its integer seed, got "
                             f"{seed!r}")
        return make_rng(seed)
    if mode == "secure":
        key = state.get("key")
        if not isinstance(key, (list, tuple)) or len(key) != 8:
            raise ValueError("state: a secure generator's state needs its 8-word key")
        rng = _lib.Rng()
        rng.mode = 1
        for i, k in enumerate(key):
            rng.skey[i] = _check.size("key", k) & 0xFFFFFFFF
        return rng
    raise ValueError(f"state: rng_mode must be 'seeded' or 'secure', got {mode!r}")


def _as_torch(out):
    """(torch, out) when out is a torch tensor (torch already imported by the caller), else
    (None, None): the package never imports torch itself here."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(out, torch.Tensor):
        return torch, out
    return None, None


def _noise_options(form, memory_budget):
    """(form, memory_budget) checked; None stays None: dpc_noise_config_init's default."""
    return (None if form is None else _check.choice("form", form, tuple(_lib.NOISE_FORMS)),
            None if memory_budget is None else _check.size("memory_budget", memory_budget))


class NoiseGenerator:
    """Correlated noise, one row per step, for a :class:`dpcorr.Mechanism`.

    ``NoiseGenerator(mech, dim, seed=None, noise_multiplier=1.0, clip=1.0, coord0=None,
    form=None, memory_budget=None)``

    mech              a :class:`dpcorr.Mechanism` (its n is the number of rows)
    dim               number of coordinates >= 1 (for example the model's parameter count)
    seed              int in [0, 2^64): seeded, reproducible, bit-identical to the C library;
                      None: secure (OS key, ChaCha20), not reproducible
    noise_multiplier  z: rows are z x clip x column_norm(C) x (B Z)_t; None: the raw rows
                      (B Z)_t (unit-variance Z), for callers that apply the scale themselves
    clip              the clip norm the noise is for (default 1: noise per unit clip)
    coord0            first global coordinate (generators over disjoint ranges concatenate into
                      the generator over their union); None: the library's default
    form              "auto", "buffer" (keep past noise) or "replay" (regenerate it: O(1) state;
                      banded B, tree, nu, toeplitz, dense); None: the library's default
    memory_budget     "auto": max bytes of buffer state; None: the library's default

    coord0, form and memory_budget mirror dpc_noise_config: None is dpc_noise_config_init's
    value ({defaults}).

    :meth:`next` returns row t and advances; :meth:`seek` jumps to a step; :meth:`state_dict` /
    :meth:`load_state_dict` checkpoint and resume bit-identically.
    """

    def __init__(self, mech, dim, seed=None, noise_multiplier=1.0, *, clip=1.0, coord0=None,
                 form=None, memory_budget=None):
        if not isinstance(mech, Mechanism):
            raise TypeError(f"mech: expected a dpcorr.Mechanism, got {type(mech).__name__}")
        self.mech = mech
        self.dim = _check.size("dim", dim, 1)
        self.coord0 = _lib.default(_lib.NoiseConfig, "coord0") if coord0 is None else \
            _check.size("coord0", coord0)
        c = _check.real("clip", clip)
        if not (c > 0 and c < float("inf")):
            raise ValueError(f"clip: must be a finite number > 0, got {c}")
        if noise_multiplier is None:  # raw rows (B Z)_t, exactly as dpc_noise_next emits them
            if c != 1.0:
                raise ValueError("clip: applies to scaled rows only (give noise_multiplier)")
            self.noise_multiplier, self.clip, self.scale = None, c, 1.0
        else:
            z = _check.real("noise_multiplier", noise_multiplier)
            if not (z > 0 and z < float("inf")):
                raise ValueError(f"noise_multiplier: must be a finite number > 0, got {z}")
            self.noise_multiplier = z
            self.clip = c
            # z * column_norm first, then * clip: the trainer's noise_scale (noise_std x clip)
            self.scale = z * mech.column_norm * c
        self._form_req, self._budget = _noise_options(form, memory_budget)
        self._rng = make_rng(seed)
        self._gen = ctypes.c_void_p()
        self._buf = None  # float64 scratch for float32 outputs
        self._open()

    def _open(self):
        if self._gen:
            lib.dpc_noise_free(self._gen)
            self._gen = ctypes.c_void_p()
        stream = lib.dpc_rng_stream_derive(ctypes.byref(self._rng),
                                           _lib.stream_id(_lib.STREAM_NOISE, 0))
        # dpc_noise_config_init writes the library's defaults; a form or budget left None
        # keeps them
        cfg = _lib.NoiseConfig()
        lib.dpc_noise_config_init(ctypes.byref(cfg), self.dim)
        cfg.coord0, cfg.isa = self.coord0, _lib.isa_level("noise")
        if self._form_req is not None:
            cfg.form = _lib.NOISE_FORMS[self._form_req]
        if self._budget is not None:
            cfg.memory_budget = self._budget
        _lib.call(lib.dpc_noise_new, ctypes.byref(self._gen), self.mech._ptr,
                  ctypes.byref(stream), ctypes.byref(cfg))

    def __del__(self):
        gen = getattr(self, "_gen", None)
        if gen and lib is not None:
            lib.dpc_noise_free(gen)
            self._gen = ctypes.c_void_p()

    @classmethod
    def _with_scale(cls, mech, dim, rng, scale, form=None, memory_budget=None):
        """A generator over [0, dim) for a given root rng and row scale (used by training
        plans, whose scale is the ledger's noise_std x clip)."""
        self = cls.__new__(cls)
        self.mech, self.dim = mech, dim
        self.coord0 = _lib.default(_lib.NoiseConfig, "coord0")
        self.noise_multiplier, self.clip, self.scale = float("nan"), float("nan"), scale
        self._form_req, self._budget = _noise_options(form, memory_budget)
        self._rng = _lib.Rng.from_buffer_copy(rng)
        self._gen, self._buf = ctypes.c_void_p(), None
        self._open()
        return self

    # ---- properties ------------------------------------------------------------------------

    @property
    def step(self):
        """The step the next call of :meth:`next` emits."""
        return int(lib.dpc_noise_step(self._gen))

    @property
    def steps(self):
        """n: the number of rows."""
        return self.mech.steps

    @property
    def form(self):
        """The form the generator runs in ("buffer" or "replay")."""
        return _lib.text(lib.dpc_noise_form_name(lib.dpc_noise_get_form(self._gen)))

    @property
    def secure(self):
        """True when the key came from the OS (ChaCha20 words)."""
        return self._rng.mode == 1

    @property
    def seed(self):
        """The seed (None in secure mode)."""
        return None if self.secure else int(self._rng.seed)

    # ---- rows ------------------------------------------------------------------------------

    def _fill(self, ptr):
        _lib.call(lib.dpc_noise_next, self._gen, ptr)

    def next(self, out=None):
        """Row t = the current step, then advances to t + 1.

        Without ``out``: a new float64 numpy array of ``dim`` values. With ``out``: fills it in
        place and returns it; ``out`` is a C-contiguous numpy array or CPU torch tensor of
        ``dim`` elements (any shape), float64 (written directly by the library) or float32
        (computed in float64, then rounded). Raises ``TypeError`` for another dtype or type,
        ``ValueError`` for a wrong size, a non-contiguous array or a non-CPU tensor, and
        :class:`dpcorr.DpcorrValueError` after the last step.
        """
        if out is None:
            row = np.empty(self.dim, dtype=np.float64)
            self._fill(row.ctypes.data)
            self._scale_inplace(row)
            return row
        torch, t = _as_torch(out)
        if t is not None:
            if t.device.type != "cpu":
                raise ValueError(f"out: must be a CPU tensor, got device {t.device}")
            if t.dtype not in (torch.float64, torch.float32):
                raise TypeError(f"out: dtype must be float64 or float32, got {t.dtype}")
            if not t.is_contiguous():
                raise ValueError("out: must be contiguous")
            arr = t.detach().numpy()  # shares the tensor's memory
        elif isinstance(out, np.ndarray):
            arr = out
        else:
            raise TypeError(f"out: expected a numpy array or a torch tensor, got "
                            f"{type(out).__name__}")
        if arr.dtype not in (np.float64, np.float32):
            raise TypeError(f"out: dtype must be float64 or float32, got {arr.dtype}")
        if not arr.flags.c_contiguous:
            raise ValueError("out: must be C-contiguous")
        if not arr.flags.writeable:
            raise ValueError("out: is read-only")
        if arr.size != self.dim:
            raise ValueError(f"out: must have {self.dim} elements, got {arr.size}")
        if arr.dtype == np.float64:
            self._fill(arr.ctypes.data)
            self._scale_inplace(arr.reshape(-1))
        else:
            if self._buf is None:
                self._buf = np.empty(self.dim, dtype=np.float64)
            self._fill(self._buf.ctypes.data)
            np.multiply(self._buf, self.scale, out=arr.reshape(-1), casting="same_kind")
        return out

    def _scale_inplace(self, row):
        if self.scale != 1.0:
            np.multiply(row, self.scale, out=row)

    def seek(self, step):
        """Positions the generator so that :meth:`next` emits ``step`` (0 <= step <= n)."""
        _lib.call(lib.dpc_noise_seek, self._gen, _check.size("step", step))

    # ---- checkpoints -----------------------------------------------------------------------

    def state_dict(self):
        """The generator's state as a dict of plain values and one numpy array: the step, the
        state floats the library cannot regenerate (BLT, BSR buffers; empty for kinds it
        replays), the generator's identity (mechanism, coordinates, scale) and its RNG. In
        secure mode this includes the 256-bit key: store it like a secret."""
        size = int(lib.dpc_noise_state_size(self._gen))
        state = np.empty(size, dtype=np.float64)
        step = _lib.c_size_t()
        _lib.call(lib.dpc_noise_export, self._gen, ctypes.byref(step),
                  state.ctypes.data_as(_lib.P(_lib.c_double)))
        out = {"format": _STATE_FORMAT, "version": 1, "mechanism": self.mech.description,
               "steps": self.steps, "dim": self.dim, "coord0": self.coord0,
               "scale": self.scale, "step": int(step.value), "state": state}
        out.update(rng_state(self._rng))
        return out

    def load_state_dict(self, state):
        """Restores a :meth:`state_dict` of a generator of the same mechanism, coordinates and
        scale (ValueError otherwise); adopts its RNG (seed or secure key), so that the following
        rows continue the saved run bit for bit. The saved state floats (BLT, BSR buffers) are a
        function of the key and the step: they are replayed from the key and compared, and a
        state that differs in any bit (edited, or of another key or step) raises ValueError
        naming noise_state; they are never used as they are."""
        if not isinstance(state, dict) or state.get("format") != _STATE_FORMAT:
            raise ValueError("state: not a dpcorr NoiseGenerator state")
        if state.get("version") != 1:
            raise ValueError(f"state: unsupported version {state.get('version')!r}")
        mine = {"mechanism": self.mech.description, "steps": self.steps, "dim": self.dim,
                "coord0": self.coord0, "scale": self.scale}
        for key, value in mine.items():
            if state.get(key) != value:
                raise ValueError(f"state: {key} is {state.get(key)!r}, this generator has "
                                 f"{value!r}")
        rng = rng_from_state(state)
        old = self._rng
        self._rng = rng
        try:
            self._open()
            arr = np.ascontiguousarray(state["state"], dtype=np.float64)
            if arr.size != int(lib.dpc_noise_state_size(self._gen)):
                raise ValueError(f"state: {arr.size} state floats, this generator keeps "
                                 f"{int(lib.dpc_noise_state_size(self._gen))}")
            try:  # the library replays the state from the key and compares it bit for bit
                _lib.call(lib.dpc_noise_import, self._gen, _check.size("step", state["step"]),
                          arr.ctypes.data_as(_lib.P(_lib.c_double)))
            except DpcorrRuntimeError as e:
                if e.field != "noise_state":
                    raise
                raise ValueError(f"state: {e}") from None
        except BaseException:
            self._rng = old
            self._open()
            raise


# the defaults the docstring names are the library's (its field table; generated, not copied)
NoiseGenerator.__doc__ = NoiseGenerator.__doc__.replace("{defaults}", _lib.defaults_doc(
    _lib.NoiseConfig, ("coord0", "form", "memory_budget")))
