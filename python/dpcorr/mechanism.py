"""Correlated-noise mechanisms (``include/dpcorr/mech.h``): strategy C, noising matrix B = C^-1,
their sensitivity under a participation pattern, the error they give on a workload, and strategy
files.

Vocabulary (doc/mechanisms.md): n steps; the mechanism releases C G + Z (G the n x d matrix of
clipped gradients, Z Gaussian); the noise added to the gradient of step t is (B Z)_t; an example
takes part at most k times (``participations``), any two at least b steps apart (``min_sep``), or
exactly every b steps (``cyclic=True``, fixed-order epochs).
"""

import ctypes
import os

import numpy as np

from . import _check
from . import _lib
from ._lib import lib

# the kinds, in dpc_mech_kind order: the library's name table of dpc_mech_params.kind
KINDS = _lib.enum_names(_lib.MechParams, "kind")
_KIND_BLT, _KIND_TOEPLITZ, _KIND_DENSE, _KIND_TREE = (
    _lib.enum_value(_lib.MechParams, "kind", k) for k in ("blt", "toeplitz", "dense", "tree"))
# dpc_mech_kind -> strategy file kind (the kinds a strategy file holds have the kind's name)
_STRATEGY_KINDS = {k: KINDS[k] for k in (_KIND_BLT, _KIND_TOEPLITZ, _KIND_DENSE)}


def _kind_code(kind):
    return _lib.parse(lib.dpc_mech_kind_parse, "kind", kind)


def _params(kind, steps, *, nu=None, lam=None, bands=None, momentum=None, decay=None,
            honaker=None, theta=None, omega=None, coeffs=None, dense=None, of=None):
    """A dpc_mech_params for kind with the given parameters (checked by type and range here,
    by the library when used), and the numpy arrays its pointers refer to (keep them alive).
    A parameter left None keeps dpc_mech_params_init's value (the library's default, from its
    field table). steps 0: not set (a run sets it; dpc_train_mech_check), except for a dense
    matrix, whose shape gives n."""
    p = _lib.MechParams()
    lib.dpc_mech_params_init(ctypes.byref(p))
    p.kind = _kind_code(kind)
    p.steps = steps
    if nu is not None:
        p.nu = _check.real("nu", nu)
    if lam is not None:
        p.lambda_ = _check.real("lambda", lam)
    if bands is not None:
        # bands above n would run as n bands under a name claiming more (0: the kind's default)
        p.bands = _check.size("bands", bands, 0, p.steps if p.steps else _check.SIZE_MAX)
    for name, value in (("momentum", momentum), ("decay", decay)):
        if value is not None:
            setattr(p, name, _check.real(name, value))
    if honaker is not None:
        p.honaker = int(_check.flag("honaker", honaker))
    if of is not None:
        p.coeffs_of_strategy = {"noising": 0, "B": 0, "strategy": 1, "C": 1}.get(of, -1)
        if p.coeffs_of_strategy < 0:
            raise ValueError(f"of: expected 'noising' or 'strategy', got {of!r}")
    keep = []  # arrays referenced by p until the library has copied them
    if theta is not None or omega is not None:
        if p.kind != _KIND_BLT:
            raise ValueError(f"theta/omega: only for the blt kind, not {kind}")
        th = _check.vector("theta", theta if theta is not None else [])
        om = _check.vector("omega", omega if omega is not None else [])
        if th.size != om.size:
            raise ValueError(f"omega: {om.size} values but theta has {th.size}")
        p.nbuf = th.size
        p.theta = th.ctypes.data if th.size else None
        p.omega = om.ctypes.data if om.size else None
        keep += [th, om]
    if coeffs is not None:
        if p.kind != _KIND_TOEPLITZ:
            raise ValueError(f"coeffs: only for the toeplitz kind, not {kind}")
        c = _check.vector("coeffs", coeffs)
        p.ncoeffs = c.size
        p.coeffs = c.ctypes.data if c.size else None
        keep.append(c)
    if dense is not None:
        if p.kind != _KIND_DENSE:
            raise ValueError(f"dense: only for the dense kind, not {kind}")
        d = np.ascontiguousarray(dense, dtype=np.float64)
        if not p.steps and d.ndim == 2 and d.shape[0] == d.shape[1]:
            p.steps = d.shape[0]  # a run's dense strategy: the matrix gives n
        if d.shape != (p.steps, p.steps):
            raise ValueError(f"dense: expected a ({p.steps}, {p.steps}) matrix, got shape "
                             f"{d.shape}")
        _check.vector("dense", d.ravel())  # finite entries
        p.dense = d.ctypes.data
        keep.append(d)
    return p, keep


def _library_workload():
    """(momentum, decay) of the library's default workload, prefix sums: the workload of a
    strategy problem after dpc_strategy_problem_init."""
    pb = _lib.StrategyProblem()
    lib.dpc_strategy_problem_init(ctypes.byref(pb), 1)
    return pb.workload.momentum, pb.workload.decay


def run_params(kind, **params):
    """The mechanism of a run, unbuilt: (dpc_mech_params, arrays to keep) validated by the
    library's dpc_train_mech_check as the trainer will (steps are the run's; BSR/BISR without
    bands and BLT without theta/omega take the run's defaults). For TrainingPlan."""
    if "lambda" in params:
        params["lam"] = params.pop("lambda")
    p, keep = _params(kind, 0, **params)
    _lib.call(lib.dpc_train_mech_check, ctypes.byref(p))
    return p, keep


class Mechanism:
    """A correlated-noise mechanism for ``steps`` steps and a participation pattern.

    ``Mechanism(kind, steps, **params)`` builds every kind of ``dpcorr mech``:

    ==========  ==============================================================================
    kind        parameters
    ==========  ==============================================================================
    identity    none (DP-SGD: B = C = I)
    nu          ``nu`` in [0, 1) (nu-DP-FTRL; 0 = optimal Toeplitz square root)
    antipgd     ``nu``: damping in [0, 1)
    lcgd        ``lam`` (or ``**{"lambda": v}``) in [0, 1]: B = bidiagonal (1, -lambda)
    bsr, bisr   ``bands`` >= 1; workload ``momentum`` in [0, 1), ``decay`` in (0, 1]
    blt         ``theta``, ``omega``: buffer decays and output scales of C (same length)
    tree        ``honaker=True`` for the Honaker estimator
    toeplitz    ``coeffs``: first column of B (``of="noising"``) or C (``"strategy"``)
    dense       ``dense``: the n x n lower-triangular B or C (``of=...``), n <= 4096
    file:PATH   a strategy file (as :meth:`load`); ``steps`` defaults to the file's n
    ==========  ==============================================================================

    A parameter left None is the library's default (dpc_mech_params_init, from the field table
    dpc_mech_params_fields: {defaults}).

    The participation pattern (for :attr:`sensitivity`) is ``participations`` (k, default 1)
    participations at least ``min_sep`` (b, default 1) steps apart, or exactly every b steps
    with ``cyclic=True``.

    Errors: an unknown kind or an invalid parameter raises :class:`dpcorr.DpcorrValueError` with
    the library's message (``"nu: must be in [0, 1), got 1.5"``); wrong Python types raise
    ``TypeError``, negative sizes ``ValueError``.

    A Mechanism is immutable; every property is computed by the library on first use.
    """

    def __init__(self, kind, steps=None, *, participations=1, min_sep=1, cyclic=False, nu=None,
                 lam=None, bands=None, momentum=None, decay=None, honaker=None, theta=None,
                 omega=None, coeffs=None, dense=None, of=None, **extra):
        if "lambda" in extra:
            lam = extra.pop("lambda")
        if extra:
            raise TypeError(f"Mechanism: unexpected keyword argument(s) {', '.join(extra)}")
        self._ptr = ctypes.c_void_p()
        self._owner = None
        self._strategy = ctypes.c_void_p()
        self._cache = {}
        self.participation = _lib.Participation(
            _lib.PART_CYCLIC if _check.flag("cyclic", cyclic) else _lib.PART_MINSEP,
            _check.size("participations", participations, 1),
            _check.size("min_sep", min_sep, 1))
        if not isinstance(kind, str):
            raise TypeError(f"kind: expected a string, got {type(kind).__name__}")
        if kind.startswith("file:"):
            # a value equal to the library's default is no clash (as left None)
            clash = [name for name, v, field in
                     (("nu", nu, "nu"), ("lambda", lam, "lambda_"), ("bands", bands, "bands"),
                      ("momentum", momentum, "momentum"), ("decay", decay, "decay"))
                     if v is not None and v != _lib.default(_lib.MechParams, field)]
            clash += [name for name, v in (("theta", theta), ("omega", omega),
                                           ("coeffs", coeffs), ("dense", dense)) if v is not None]
            if clash:
                raise ValueError(f"kind: {kind} takes its parameters from the file; do not also "
                                 f"give {', '.join(clash)}")
            self._build_from_file(kind[5:], steps, honaker)
            return
        p, keep = _params(kind, _check.steps("steps", steps if steps is not None else 0),
                          nu=nu, lam=lam, bands=bands, momentum=momentum, decay=decay,
                          honaker=honaker, theta=theta, omega=omega, coeffs=coeffs, dense=dense,
                          of=of)
        _lib.call(lib.dpc_mech_new, ctypes.byref(self._ptr), ctypes.byref(p))
        del keep

    # ---- construction helpers --------------------------------------------------------------

    def _build_from_file(self, path, steps, honaker):  # honaker None: the file's (init's)
        _lib.call(lib.dpc_strategy_load, ctypes.byref(self._strategy), os.fsencode(path))
        s = ctypes.cast(self._strategy, _lib.P(_lib.Strategy)).contents
        n = s.problem.steps if steps is None else _check.steps("steps", steps)
        if s.kind == _KIND_DENSE and n != s.problem.steps:
            raise ValueError(f"steps: the dense strategy in {path} has n = {s.problem.steps}, "
                             f"got {n}")
        p = _lib.MechParams()
        lib.dpc_strategy_mech_params(self._strategy, ctypes.byref(p))
        p.steps = n
        if honaker is not None:
            p.honaker = int(_check.flag("honaker", honaker))
        if self.participation.k == 1 and self.participation.b == 1:
            self.participation = _lib.Participation(_lib.PART_MINSEP, s.problem.participations,
                                                    s.problem.min_sep)
        _lib.call(lib.dpc_mech_new, ctypes.byref(self._ptr), ctypes.byref(p))

    @classmethod
    def _adopt(cls, ptr, participation, owner=None, strategy=None):
        """Wraps an existing dpc_mech (owned by `owner` when given, else by the new object)."""
        self = cls.__new__(cls)
        self._ptr = ctypes.c_void_p(ptr)
        self._owner = owner
        self._strategy = strategy if strategy is not None else ctypes.c_void_p()
        self._cache = {}
        self.participation = participation
        return self

    @classmethod
    def load(cls, path, steps=None, *, participations=None, min_sep=None, cyclic=False):
        """Reads a strategy file (``dpcorr mech optimize --out``, :meth:`save`,
        :func:`dpcorr.strategy.optimize`). ``steps`` defaults to the file's n (BLT and Toeplitz
        strategies serve any n; dense ones only theirs); the participation pattern defaults to
        the file's (k, b)."""
        m = cls("file:" + os.fspath(path), steps)
        s = ctypes.cast(m._strategy, _lib.P(_lib.Strategy)).contents
        k = s.problem.participations if participations is None else participations
        b = s.problem.min_sep if min_sep is None else min_sep
        m.participation = _lib.Participation(
            _lib.PART_CYCLIC if _check.flag("cyclic", cyclic) else _lib.PART_MINSEP,
            _check.size("participations", k, 1), _check.size("min_sep", b, 1))
        return m

    def with_participation(self, participations=1, min_sep=1, cyclic=False):
        """The same mechanism (shared, immutable) under another participation pattern."""
        part = _lib.Participation(
            _lib.PART_CYCLIC if _check.flag("cyclic", cyclic) else _lib.PART_MINSEP,
            _check.size("participations", participations, 1), _check.size("min_sep", min_sep, 1))
        return Mechanism._adopt(self._ptr.value, part, owner=self, strategy=self._strategy)

    def with_steps(self, steps):
        """The same kind and parameters for another number of steps (not for dense)."""
        p = self._params_struct()
        if p.kind == _KIND_DENSE and steps != p.steps:
            raise ValueError(f"steps: a dense mechanism is defined for n = {p.steps} only")
        p.steps = _check.steps("steps", steps)
        out = Mechanism._adopt(None, self.participation)
        _lib.call(lib.dpc_mech_new, ctypes.byref(out._ptr), ctypes.byref(p))
        return out

    def __del__(self):
        ptr = getattr(self, "_ptr", None)
        if ptr and getattr(self, "_owner", None) is None and _lib is not None and lib is not None:
            lib.dpc_mech_free(ptr)
            self._ptr = ctypes.c_void_p()
        strat = getattr(self, "_strategy", None)
        if strat and getattr(self, "_owner", None) is None and lib is not None:
            lib.dpc_strategy_free(strat)
            self._strategy = ctypes.c_void_p()

    # ---- description -----------------------------------------------------------------------

    def _params_struct(self):
        return _lib.MechParams.from_buffer_copy(lib.dpc_mech_get_params(self._ptr).contents)

    @property
    def kind(self):
        """The kind's name ("identity", "nu", ..., "blt", "toeplitz", "dense")."""
        return _lib.text(lib.dpc_mech_kind_name(self._params_struct().kind))

    @property
    def steps(self):
        """n, the number of steps."""
        return int(lib.dpc_mech_steps(self._ptr))

    @property
    def participations(self):
        """k of the participation pattern."""
        return int(self.participation.k)

    @property
    def min_sep(self):
        """b of the participation pattern (min-separation, or period when cyclic)."""
        return int(self.participation.b)

    @property
    def cyclic(self):
        """True when participations happen exactly every min_sep steps."""
        return self.participation.kind == _lib.PART_CYCLIC

    @property
    def description(self):
        """The library's one-line description, e.g. "nu-DP-FTRL (nu=0.01)"."""
        buf = ctypes.create_string_buffer(256)
        lib.dpc_mech_describe(self._ptr, buf, 256)
        return buf.value.decode()

    @property
    def params(self):
        """The parameters the mechanism was built with, as a dict (arrays as numpy copies)."""
        p = self._params_struct()
        out = {"kind": self.kind, "steps": int(p.steps)}
        kind = self.kind
        if kind in ("nu", "antipgd"):
            out["nu"] = p.nu
        elif kind == "lcgd":
            out["lambda"] = p.lambda_
        elif kind in ("bsr", "bisr"):
            out.update(bands=int(p.bands), momentum=p.momentum, decay=p.decay)
        elif kind == "tree":
            out["honaker"] = bool(p.honaker)
        elif kind == "blt":
            out["theta"] = np.ctypeslib.as_array(_lib.doubles(p.theta), (p.nbuf,)).copy()
            out["omega"] = np.ctypeslib.as_array(_lib.doubles(p.omega), (p.nbuf,)).copy()
        elif kind == "toeplitz":
            out["coeffs"] = np.ctypeslib.as_array(_lib.doubles(p.coeffs), (p.ncoeffs,)).copy()
            out["of"] = "strategy" if p.coeffs_of_strategy else "noising"
        elif kind == "dense":
            out["dense"] = np.ctypeslib.as_array(_lib.doubles(p.dense), (p.steps, p.steps)).copy()
            out["of"] = "strategy" if p.coeffs_of_strategy else "noising"
        return out

    def __repr__(self):
        if not self._ptr:
            return "Mechanism(<not built>)"
        part = "cyclic" if self.cyclic else "min-sep"
        return (f"Mechanism({self.description}, steps={self.steps}, "
                f"participations={self.participations}, {part} {self.min_sep})")

    @property
    def noise_rows(self):
        """m, the rows of C and of Z (2n for the tree, n otherwise)."""
        return int(lib.dpc_mech_noise_rows(self._ptr))

    @property
    def is_toeplitz(self):
        """True when B and C are lower-triangular Toeplitz."""
        return bool(lib.dpc_mech_is_toeplitz(self._ptr))

    @property
    def anytime(self):
        """True when the same coefficients serve every horizon (every kind but dense)."""
        return bool(lib.dpc_mech_is_anytime(self._ptr))

    # ---- sensitivity and error -------------------------------------------------------------

    def _sens(self, part=None):
        key = ("sens", None if part is None else (part.kind, part.k, part.b))
        if key not in self._cache:
            out = _lib.Sensitivity()
            _lib.call(lib.dpc_mech_sensitivity, self._ptr,
                      ctypes.byref(part if part is not None else self.participation),
                      ctypes.byref(out))
            self._cache[key] = out
        return self._cache[key]

    @property
    def sensitivity(self):
        """L2 sensitivity per unit clip norm under the participation pattern (exact, or an
        upper bound when :attr:`sensitivity_exact` is False)."""
        return self._sens().value

    @property
    def sensitivity_exact(self):
        """True when :attr:`sensitivity` is exact, False when it is an upper bound."""
        return bool(self._sens().exact)

    @property
    def sensitivity_method(self):
        """How the sensitivity was computed (the library's name of the method)."""
        return _lib.text(lib.dpc_sens_method_name(self._sens().method))

    @property
    def participations_effective(self):
        """min(k, ceil(n / b)): the participations actually possible."""
        return int(self._sens().k_effective)

    @property
    def column_norm(self):
        """The max column norm of C: the sensitivity of one participation per unit clip. The
        noise std per row of Z for noise multiplier z is z x clip x column_norm."""
        return self._sens(_lib.Participation(_lib.PART_MINSEP, 1, 1)).value

    @property
    def gamma_inf(self):
        """lim_{n -> inf} of the max column norm of C for Toeplitz kinds (inf when it
        diverges); NaN for kinds without one (dense)."""
        if "ginf" not in self._cache:
            v = ctypes.c_double()
            try:
                _lib.call(lib.dpc_mech_limit_sensitivity, self._ptr, ctypes.byref(v))
                self._cache["ginf"] = v.value
            except ValueError:
                self._cache["ginf"] = float("nan")
        return self._cache["ginf"]

    def error(self, workload_momentum=None, workload_decay=None):
        """(rmse, max_error) of the workload A B per unit noise std: RMSE = ||A B||_F / sqrt(n),
        max error = the largest row norm. The workload is SGD with momentum
        ``workload_momentum`` and decay ``workload_decay``; None: the library's default
        workload (prefix sums, dpc_strategy_problem_init's)."""
        m0, d0 = _library_workload()
        m = m0 if workload_momentum is None else _check.real("workload_momentum",
                                                             workload_momentum)
        d = d0 if workload_decay is None else _check.real("workload_decay", workload_decay)
        key = ("err", m, d)
        if key not in self._cache:
            w = _lib.Workload(m, d)
            out = _lib.MechError()
            _lib.call(lib.dpc_mech_error_of, self._ptr, ctypes.byref(w), ctypes.byref(out))
            self._cache[key] = (out.rmse, out.max_error)
        return self._cache[key]

    @property
    def rmse(self):
        """RMSE of the prefix-sum workload per unit noise std, ||A B||_F / sqrt(n)."""
        return self.error()[0]

    @property
    def max_error(self):
        """Max row norm of A B (prefix sums) per unit noise std."""
        return self.error()[1]

    @property
    def scaled_rmse(self):
        """sensitivity x rmse: the RMSE at noise multiplier 1 (compare mechanisms with it)."""
        return self.sensitivity * self.rmse

    @property
    def scaled_max_error(self):
        """sensitivity x max_error."""
        return self.sensitivity * self.max_error

    @property
    def state_floats_per_coord(self):
        """Floats of generator state per model coordinate in the buffer form (as
        ``dpcorr mech`` reports it)."""
        return int(lib.dpc_mech_state_floats(self._ptr, _lib.NOISE_FORMS["buffer"]))

    def state_floats(self, form="buffer"):
        """Floats of state per coordinate for ``form`` ("buffer" or "replay")."""
        _check.choice("form", form, ("buffer", "replay"))
        return int(lib.dpc_mech_state_floats(self._ptr, _lib.NOISE_FORMS[form]))

    def form_available(self, form):
        """Whether the noise generator can run in ``form`` ("auto", "buffer", "replay")."""
        _check.choice("form", form, tuple(_lib.NOISE_FORMS))
        return bool(lib.dpc_mech_form_available(self._ptr, _lib.NOISE_FORMS[form]))

    def info(self):
        """Everything ``dpcorr mech --json`` reports, as a dict."""
        return {
            "kind": self.kind, "description": self.description, "steps": self.steps,
            "participations": self.participations,
            "participations_effective": self.participations_effective,
            "min_sep": self.min_sep, "participation": "cyclic" if self.cyclic else "min-sep",
            "sensitivity": self.sensitivity, "sensitivity_exact": self.sensitivity_exact,
            "sensitivity_method": self.sensitivity_method, "rmse": self.rmse,
            "max_error": self.max_error, "scaled_rmse": self.scaled_rmse,
            "scaled_max_error": self.scaled_max_error, "gamma_inf": self.gamma_inf,
            "state_floats_per_coord": self.state_floats_per_coord, "anytime": self.anytime,
        }

    # ---- matrices --------------------------------------------------------------------------

    def _coeffs(self, fn, length):
        n = self.steps if length is None else _check.steps("length", length)
        out = np.empty(n, dtype=np.float64)
        _lib.call(fn, self._ptr, out.ctypes.data_as(_lib.P(_lib.c_double)), n)
        return out

    def strategy_coeffs(self, length=None):
        """The first ``length`` (default n) Toeplitz coefficients of C. Toeplitz kinds only."""
        return self._coeffs(lib.dpc_mech_strategy_coeffs, length)

    def noising_coeffs(self, length=None):
        """The first ``length`` (default n) Toeplitz coefficients of B = C^-1."""
        return self._coeffs(lib.dpc_mech_noising_coeffs, length)

    def strategy_matrix(self):
        """C as a dense (m, n) array (n <= 4096)."""
        out = np.empty((self.noise_rows, self.steps), dtype=np.float64)
        _lib.call(lib.dpc_mech_dense_strategy, self._ptr,
                  out.ctypes.data_as(_lib.P(_lib.c_double)))
        return out

    def noising_matrix(self):
        """B as a dense (n, m) array (n <= 4096)."""
        out = np.empty((self.steps, self.noise_rows), dtype=np.float64)
        _lib.call(lib.dpc_mech_dense_noising, self._ptr,
                  out.ctypes.data_as(_lib.P(_lib.c_double)))
        return out

    # ---- strategy files --------------------------------------------------------------------

    def strategy_info(self):
        """For an optimized or loaded strategy: its method, the problem it was optimized for and
        the loss the optimizer (or the file) reports; None for other mechanisms."""
        if not self._strategy:
            return None
        s = ctypes.cast(self._strategy, _lib.P(_lib.Strategy)).contents
        return {"kind": _STRATEGY_KINDS.get(s.kind, ""), "method": s.method.decode(),
                "steps": int(s.problem.steps), "participations": int(s.problem.participations),
                "min_sep": int(s.problem.min_sep),
                "objective": "mean" if s.problem.objective else "max",
                "momentum": s.problem.workload.momentum, "decay": s.problem.workload.decay,
                "loss": s.achieved.loss, "sensitivity": s.achieved.sensitivity,
                "error": s.achieved.error, "exact": bool(s.achieved.exact),
                "iterations": int(s.iterations)}

    def save(self, path):
        """Writes the mechanism as a strategy file (JSON, doubles round-trip exactly). An
        optimized or loaded strategy is written as it is; BLT and dense mechanisms as blt and
        dense strategies; every other Toeplitz kind as its first n coefficients of C (a
        toeplitz strategy that reproduces it for these n steps). The tree is not a square
        strategy: ValueError."""
        path = os.fsencode(path)
        if self._strategy:
            s = ctypes.cast(self._strategy, _lib.P(_lib.Strategy)).contents
            if s.problem.steps == self.steps:
                _lib.call(lib.dpc_strategy_save, self._strategy, path)
                return
        p = self._params_struct()
        if p.kind == _KIND_TREE:
            raise ValueError("save: the tree mechanism (2n noise rows) has no strategy file form")
        s = _lib.Strategy()
        s.problem.steps = p.steps
        s.problem.participations = self.participation.k
        s.problem.min_sep = self.participation.b
        s.problem.workload = _lib.Workload(0.0, 1.0)
        keep = None
        if p.kind == _KIND_BLT:
            s.kind, s.method, s.nbuf = p.kind, b"blt", p.nbuf
            s.theta, s.omega = _lib.doubles(p.theta), _lib.doubles(p.omega)
        elif p.kind == _KIND_DENSE:
            s.kind, s.method, s.dense = p.kind, b"dense", _lib.doubles(p.dense)
            s.of_strategy = p.coeffs_of_strategy
        else:
            keep = self.strategy_coeffs()
            s.kind, s.method, s.ncoeffs = _KIND_TOEPLITZ, self.kind.encode(), keep.size
            s.coeffs = keep.ctypes.data_as(_lib.P(_lib.c_double))
            s.of_strategy = 1
        _lib.call(lib.dpc_strategy_loss_of, self._ptr, ctypes.byref(s.problem),
                  ctypes.byref(s.achieved))
        _lib.call(lib.dpc_strategy_save, ctypes.byref(s), path)
        del keep


# the defaults the docstring names are the table's (generated, not copied)
Mechanism.__doc__ = Mechanism.__doc__.replace("{defaults}", _lib.defaults_doc(
    _lib.MechParams, ("nu", "lambda_", "momentum", "decay", "honaker")))
