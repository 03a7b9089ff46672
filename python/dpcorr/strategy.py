"""Strategy optimization (``include/dpcorr/strategy.h``): BLT, banded Toeplitz and dense ("ME")
strategies optimized for a horizon n, a participation pattern (k participations at least b steps
apart) and a workload (prefix sums, or SGD with momentum / weight decay). The loss is
sensitivity^2 x error^2; every optimizer keeps the strategy where its sensitivity is exact."""

import ctypes

from . import _check
from . import _lib
from ._lib import lib
from .mechanism import Mechanism

_OPTIMIZERS = {"blt": "dpc_strategy_optimize_blt", "banded": "dpc_strategy_optimize_banded",
               "dense": "dpc_strategy_optimize_dense"}


def optimize(kind, steps, *, participations=1, min_sep=1, objective="max", momentum=0.0,
             decay=1.0, bands=0, buffers=0, max_buffers=0, min_improvement=0.0,
             max_iterations=0):
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

    Deterministic for a given input. Errors: :class:`dpcorr.DpcorrValueError` with the library's
    message.
    """
    _check.choice("kind", kind, tuple(_OPTIMIZERS))
    _check.choice("objective", objective, ("max", "mean"))
    pb = _lib.StrategyProblem()
    lib.dpc_strategy_problem_init(ctypes.byref(pb), _check.steps("steps", steps))
    pb.participations = _check.size("participations", participations, 1)
    pb.min_sep = _check.size("min_sep", min_sep, 1)
    pb.workload = _lib.Workload(_check.real("momentum", momentum), _check.real("decay", decay))
    pb.objective = 1 if objective == "mean" else 0
    opt = _lib.StrategyOptions()
    lib.dpc_strategy_options_init(ctypes.byref(opt))
    opt.max_iterations = _check.size("max_iterations", max_iterations)
    opt.buffers = _check.size("buffers", buffers)
    opt.max_buffers = _check.size("max_buffers", max_buffers)
    opt.min_improvement = _check.real("min_improvement", min_improvement)
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
