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
