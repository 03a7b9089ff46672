"""Strategy optimization (``include/dpcorr/strategy.h``): BLT, banded Toeplitz and dense ("ME")
strategies optimized for a horizon n, a participation pattern (k participations at least b steps
apart) and a workload (prefix sums, or SGD with momentum / weight decay). The loss is
sensitivity^2 x error^2; every optimizer keeps the strategy where its sensitivity is exact."""

import ctypes
import math

from . import _check
from . import _lib
from ._lib import lib
from .mechanism import Mechanism

_OPTIMIZERS = {"blt": "dpc_strategy_optimize_blt", "banded": "dpc_strategy_optimize_banded",
               "dense": "dpc_strategy_optimize_dense"}


def optimize(kind, steps, *, participations=None, min_sep=None, objective=None, momentum=None,
             decay=None, bands=None, buffers=None, max_buffers=None, min_improvement=None,
             max_iterations=None):
    """Optimizes a strategy and returns it as a :class:`dpcorr.Mechanism` (with the participation
    pattern it was optimized for; :meth:`Mechanism.strategy_info` gives the loss, sensitivity,
    error and iterations; :meth:`Mechanism.save` writes the strategy file).

    kind            "blt" (buffered linear Toeplitz), "banded" (Toeplitz with ``bands`` bands)
                    or "dense" (n <= 2048)
    steps           n >= 1
    participations  k >= 1; min_sep: b >= 1 (ignored when k = 1)
    objective       "max" (max error, default) or "mean" (RMSE)
    momentum, decay the workload: SGD with momentum in [0, 1) and decay factor in (0, 1]
                    (default prefix sums)
    bands           banded: number of bands (required); dense: bandwidth of C^T C for k > 1
                    (0 = b)
    buffers         blt: a fixed number of buffers (0 = grow until one more improves the loss by
                    less than ``min_improvement``, default 1%, at most ``max_buffers``, default 10)
    max_iterations  L-BFGS iterations per run (0 = the library's default)

    A keyword left None is the library's default: what dpc_strategy_problem_init (k = 1, b = 1,
    the max objective, prefix sums) and dpc_strategy_options_init (every option 0: the
    library's choice) write.

    Deterministic for a given input. Errors: :class:`dpcorr.DpcorrValueError` with the library's
    message.
    """
    _check.choice("kind", kind, tuple(_OPTIMIZERS))
    # the structs after their C _init hold the library's defaults; a keyword given replaces one
    pb = _lib.StrategyProblem()
    lib.dpc_strategy_problem_init(ctypes.byref(pb), _check.steps("steps", steps))
    if objective is not None:
        _check.choice("objective", objective, ("max", "mean"))
        pb.objective = 1 if objective == "mean" else 0
    for name, value in (("participations", participations), ("min_sep", min_sep)):
        if value is not None:
            setattr(pb, name, _check.size(name, value, 1))
    if momentum is not None:
        pb.workload.momentum = _check.real("momentum", momentum)
    if decay is not None:
        pb.workload.decay = _check.real("decay", decay)
    opt = _lib.StrategyOptions()
    lib.dpc_strategy_options_init(ctypes.byref(opt))
    for name, value in (("max_iterations", max_iterations), ("buffers", buffers),
                        ("max_buffers", max_buffers)):
        if value is not None:
            setattr(opt, name, _check.size(name, value))
    if min_improvement is not None:
        opt.min_improvement = _check.real("min_improvement", min_improvement)
    if bands is not None:
        opt.bands = _check.size("bands", bands, 0, pb.steps)  # at most n bands exist
    strategy = ctypes.c_void_p()
    _lib.call(getattr(lib, _OPTIMIZERS[kind]), ctypes.byref(strategy), ctypes.byref(pb),
              ctypes.byref(opt))
    part = _lib.Participation(_lib.PART_MINSEP, pb.participations, pb.min_sep)
    return _adopt_strategy(strategy, part)


def _adopt_strategy(strategy, part):
    """A :class:`dpcorr.Mechanism` that owns ``strategy`` (a dpc_strategy pointer)."""
    ptr = ctypes.c_void_p()
    try:
        p = _lib.MechParams()
        lib.dpc_strategy_mech_params(strategy, ctypes.byref(p))
        _lib.call(lib.dpc_mech_new, ctypes.byref(ptr), ctypes.byref(p))
    except BaseException:
        lib.dpc_strategy_free(strategy)
        raise
    return Mechanism._adopt(ptr.value, part, strategy=strategy)


# ---- every mechanism side by side (`dpcorr compare`) --------------------------------------------

# the parameters' mirror comes from the library's field table (their defaults are its rows'); the
# table nests the pattern as "part" (a generated dpc_participation)
_CompareParams = _lib.generated("dpc_mech_compare_params")
_Part = dict(_CompareParams._fields_)["part"]


class _CompareRow(ctypes.Structure):
    """dpc_mech_compare_row (strategy.h). Not in the ABI list: python/tests/test_compare.py
    checks its offsets against a program compiled with the header."""
    _fields_ = [("name", ctypes.c_char * 64), ("kind", _lib.c_int), ("honaker", _lib.c_int),
                ("value", _lib.c_double), ("sensitivity", _lib.c_double),
                ("exact", _lib.c_int), ("rmse", _lib.c_double), ("max_error", _lib.c_double),
                ("state_floats", _lib.c_size_t), ("replay", _lib.c_int),
                ("anytime", _lib.c_int)]


def _declare_compare():
    P, E = _lib.P, _lib.P(_lib.Error)
    for name, restype, argtypes in (
            ("dpc_mech_compare_params_init", None, [P(_CompareParams), _lib.c_size_t]),
            ("dpc_mech_compare", _lib.c_int,
             [P(_CompareParams), P(P(_CompareRow)), P(_lib.c_size_t), P(_lib.c_size_t), E, E]),
            ("dpc_mech_compare_free", None, [P(_CompareRow)]),
            ("dpc_mech_compare_grid", P(_lib.c_double), [_lib.c_int, P(_lib.c_size_t)])):
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = restype, argtypes


_declare_compare()

# the library's names of the pattern's fields -> this module's keywords
_COMPARE_RENAME = {"part.k": "participations", "part.b": "min_sep", "part.kind": "cyclic",
                   "k": "participations", "b": "min_sep"}


def compare_grid(kind):
    """The grid a tuned row of :func:`compare` searches (dpc_mech_compare_grid): the dampings of
    "antipgd", the lambdas of "lcgd"; () for another kind."""
    code = _lib.parse(lib.dpc_mech_kind_parse, "kind", kind)
    count = _lib.c_size_t()
    grid = lib.dpc_mech_compare_grid(code, ctypes.byref(count))
    return tuple(grid[i] for i in range(count.value))


def compare(steps, *, participations=None, min_sep=None, cyclic=None):
    """Every mechanism side by side at ``steps`` steps under one participation pattern: the
    library's table (dpc_mech_compare), one of the two `dpcorr compare` prints, with the same
    numbers. Rows, in order: DP-SGD (identity), optimal CC (nu = 0), nu-DP-FTRL at the
    library's best nu for the pattern, damped anti-PGD and lambda-CGD at the best of their grids
    (:func:`compare_grid`) by scaled RMSE, BSR and BISR at the library's default bands, the
    default BLT (n >= 2), the binary and the Honaker tree. A row that cannot be evaluated (the
    library's work limit, the BLT at n = 1) is left out and counted.

    steps           n >= 1
    participations  k (None: the library's, {k})
    min_sep         b: min-separation, or the period with ``cyclic`` (None: the library's,
                    {b}; `dpcorr compare` gives its second table b = n / k)
    cyclic          participations exactly every b steps (None: the library's, {kind})

    Returns a dict: ``rows`` (a list of dicts: name, kind, honaker, value (the row's chosen nu,
    lambda, bands or buffers; 0 for identity and trees), sensitivity, sensitivity_exact, rmse,
    max_error (per unit noise, prefix sums), scaled_rmse, scaled_max_error (times the
    sensitivity), loss_vs_sgd (scaled RMSE^2 over DP-SGD's; the CLI's "vs SGD"), state_floats
    (per coordinate, buffer form), replay (the replay form is available: 0 floats of state),
    anytime), ``failed`` (evaluations left out, grid values included) and ``first_failure``
    (the first's message, or None). Errors: ValueError naming the keyword.
    """
    p = _CompareParams()
    lib.dpc_mech_compare_params_init(ctypes.byref(p), _check.steps("steps", steps))
    if participations is not None:
        p.part.k = _check.size("participations", participations, 1)
    if min_sep is not None:
        p.part.b = _check.size("min_sep", min_sep, 1)
    if cyclic is not None:
        p.part.kind = _lib.enum_value(_Part, "kind",
                                      "cyclic" if _check.flag("cyclic", cyclic) else "min-sep",
                                      "cyclic")
    rows = _lib.P(_CompareRow)()
    count, failed, first = _lib.c_size_t(), _lib.c_size_t(), _lib.Error()
    _lib.call(lib.dpc_mech_compare, ctypes.byref(p), ctypes.byref(rows), ctypes.byref(count),
              ctypes.byref(failed), ctypes.byref(first), rename=_COMPARE_RENAME)
    try:
        table = [_compare_row(rows[i]) for i in range(count.value)]
    finally:
        lib.dpc_mech_compare_free(rows)
    # the loss relative to DP-SGD's (the first row whenever it evaluated; NaN without it)
    sgd = [r["scaled_rmse"] ** 2 for r in table if r["kind"] == "identity"] or [math.nan]
    for r in table:
        r["loss_vs_sgd"] = r["scaled_rmse"] ** 2 / sgd[0]
    return {"steps": int(p.steps), "participations": int(p.part.k), "min_sep": int(p.part.b),
            "cyclic": bool(p.part.kind), "rows": table, "failed": int(failed.value),
            "first_failure": first.msg.decode(errors="replace") if failed.value else None}


def _compare_row(r):
    return {"name": r.name.decode(), "kind": _lib.text(lib.dpc_mech_kind_name(r.kind)),
            "honaker": bool(r.honaker), "value": r.value, "sensitivity": r.sensitivity,
            "sensitivity_exact": bool(r.exact), "rmse": r.rmse, "max_error": r.max_error,
            "scaled_rmse": r.sensitivity * r.rmse,
            "scaled_max_error": r.sensitivity * r.max_error,
            "state_floats": int(r.state_floats), "replay": bool(r.replay),
            "anytime": bool(r.anytime)}


compare.__doc__ = compare.__doc__.format(**{f: _lib.default_text(_Part, f)
                                            for f in ("k", "b", "kind")})
