"""The reproduction of the DP-SRGD paper's scalings (``include/dpcorr/papers/srgd.h``):
:func:`run` calls ``dpc_srgd_repro_run``, as ``dpcorr repro srgd`` does, and returns its
experiments as dicts (E1 excess risk vs n, E2 / E3 the private part vs p and eps, E4 Regime A
vs B, E6 tree vs independent noise, E7 the baselines at equal privacy, E8 the per-step
records), with the slopes and checks beside the theorems' and ``reproduces`` /
``not_reproduced``.
"""

import ctypes

import numpy as np

from .. import _lib
from .._lib import lib, c_double, c_int, c_size_t, c_uint64, c_char_p, P
from . import _repro

_Params = _lib.generated("dpc_srgd_repro_params")
_StepInfo = _lib.generated("dpc_srgd_step_info")
NMETHODS = 4  # DPC_SRGD_REPRO_NMETHODS
EXPERIMENTS = 7  # the entries of cpu_seconds

# ---- hand-written mirrors of the result (srgd.h): not in the ABI list; checked against offsetof
# by python/tests/test_papers_srgd.py ------------------------------------------------------------


class _Grid(ctypes.Structure):
    """dpc_srgd_repro_grid."""
    _fields_ = [("seeds_n", c_size_t), ("seeds_private", c_size_t), ("seeds_ablation", c_size_t),
                ("seeds_baseline", c_size_t), ("Tn", c_size_t * 8), ("nTn", c_size_t),
                ("p_n", c_size_t), ("eps_n", c_double), ("n_private", c_size_t),
                ("relevant", c_size_t), ("ps", c_size_t * 5), ("nps", c_size_t),
                ("k_p", c_double), ("ks", c_double * 10), ("nks", c_size_t),
                ("n_ablation", c_size_t), ("cs", c_double * 5), ("ncs", c_size_t),
                ("honaker", c_int), ("eps_tree", c_double), ("eps_base", c_double * 3),
                ("neb", c_size_t), ("lrs", c_double * 5), ("nlr", c_size_t),
                ("base_batch", c_size_t), ("n_ab", c_size_t * 3), ("nab", c_size_t)]


class _Stat(ctypes.Structure):
    """dpc_srgd_repro_stat: a mean over seeds and its standard error (NaN for one seed)."""
    _fields_ = [("mean", c_double), ("se", c_double)]


class _VsN(ctypes.Structure):
    """dpc_srgd_repro_vs_n_row (E1)."""
    _fields_ = [("n", c_size_t), ("T", c_size_t), ("B", c_size_t), ("beta", c_double),
                ("seed0", c_uint64), ("nonprivate_p2", _Stat), ("nonprivate_p1", _Stat),
                ("private_part", _Stat), ("unaccelerated", _Stat), ("accel_sgd", _Stat)]


class _VsP(ctypes.Structure):
    """dpc_srgd_repro_vs_p_row (E2)."""
    _fields_ = [("p", c_size_t), ("beta", c_double), ("private_part", _Stat),
                ("excess_private", _Stat), ("excess_nonprivate", _Stat)]


class _VsEps(ctypes.Structure):
    """dpc_srgd_repro_vs_eps_row (E3)."""
    _fields_ = [("eps", c_double), ("k", c_double), ("beta", c_double),
                ("private_part", _Stat), ("in_fit", c_int)]


class _Regime(ctypes.Structure):
    """dpc_srgd_repro_regime_row (E4)."""
    _fields_ = [("n", c_size_t), ("T", c_size_t), ("B", c_size_t), ("regime", c_int),
                ("beta", c_double), ("nonprivate", _Stat), ("eps1", _Stat)]


class _Tree(ctypes.Structure):
    """dpc_srgd_repro_tree_row (E6)."""
    _fields_ = [("c", c_double), ("T", c_size_t), ("B", c_size_t), ("beta", c_double),
                ("tree", _Stat), ("honaker", _Stat), ("independent", _Stat),
                ("nonprivate", _Stat), ("z", c_double), ("wins", c_int)]


class _Baseline(ctypes.Structure):
    """dpc_srgd_repro_baseline (E7)."""
    _fields_ = [("T", c_size_t), ("B", c_size_t), ("lr", c_double),
                ("noise_multiplier", c_double), ("excess", _Stat)]


class _Result(ctypes.Structure):
    """dpc_srgd_repro_result."""
    _fields_ = [("grid", _Grid), ("runs", c_size_t), ("calibrations", c_size_t),
                ("vs_n", _VsN * 8), ("slope_n_p2", c_double), ("slope_n_p2_se", c_double),
                ("slope_n_p1", c_double), ("slope_n_unaccelerated", c_double),
                ("slope_n_accel_sgd", c_double), ("slope_n_private", c_double),
                ("lambda1", c_double), ("beta0", c_double), ("eps_p", c_double),
                ("beta_max_fit", c_double), ("T_private", c_size_t), ("fit_points", c_size_t),
                ("vs_p", _VsP * 5), ("vs_eps", _VsEps * 10), ("slope_p", c_double),
                ("slope_p_se", c_double), ("slope_eps", c_double), ("slope_eps_se", c_double),
                ("slope_beta_eps", c_double), ("slope_beta_p", c_double),
                ("regimes", _Regime * 6), ("tree", _Tree * 5),
                ("tree_beats_independent", c_int),
                ("baselines", (_Baseline * NMETHODS) * 3), ("trace", P(_StepInfo) * 2),
                ("trace_T", c_size_t * 2), ("regime_a_max_delta_over_first_step", c_double),
                ("cpu_seconds", c_double * EXPERIMENTS)]


MIRRORS = {"dpc_srgd_repro_grid": _Grid, "dpc_srgd_repro_stat": _Stat,
           "dpc_srgd_repro_vs_n_row": _VsN, "dpc_srgd_repro_vs_p_row": _VsP,
           "dpc_srgd_repro_vs_eps_row": _VsEps, "dpc_srgd_repro_regime_row": _Regime,
           "dpc_srgd_repro_tree_row": _Tree, "dpc_srgd_repro_baseline": _Baseline,
           "dpc_srgd_repro_result": _Result}


def _declare():
    E = P(_lib.Error)
    _repro.declare(lib, (
        ("dpc_srgd_repro_params_init", None, [P(_Params)]),
        ("dpc_srgd_repro_count", c_int, [P(_Params), P(c_size_t), P(c_size_t), E]),
        ("dpc_srgd_repro_run", c_int, [P(_Params), P(P(_Result)), E]),
        ("dpc_srgd_repro_result_free", None, [P(_Result)]),
        ("dpc_srgd_repro_method_name", c_char_p, [c_size_t]),
        ("dpc_srgd_repro_experiment_name", c_char_p, [c_size_t]),
        ("dpc_srgd_repro_reproduced", P(c_char_p), [P(c_size_t)]),
        ("dpc_srgd_repro_not_reproduced", P(c_char_p), [P(c_size_t)])))


_declare()


def _params(scale, seed, threads):
    return _repro.params(_Params, lib.dpc_srgd_repro_params_init, scale=scale, seed=seed, threads=threads)


def count(scale=None, seed=None, threads=None):
    """The number of runs and calibrations :func:`run` makes for these arguments (cheap):
    ``(runs, calibrations)``."""
    runs, cals = c_size_t(), c_size_t()
    _lib.call(lib.dpc_srgd_repro_count, ctypes.byref(_params(scale, seed, threads)),
              ctypes.byref(runs), ctypes.byref(cals))
    return runs.value, cals.value


def _trace(r, k):
    """The per-step records of trace k as {column: numpy array} (the columns of the library's
    table dpc_srgd_step_info_fields)."""
    recs = [r.trace[k][t] for t in range(r.trace_T[k])]
    return {name: np.array([getattr(rec, name) for rec in recs],
                           dtype=np.float64 if ctype is c_double else np.uint64)
            for name, ctype in _StepInfo._fields_ if not name.startswith("_pad")}


def run(scale=None, seed=None, threads=None):
    """Every experiment of ``dpcorr repro srgd`` (dpc_srgd_repro_run) and its statistics.

    scale    "full" (the reported grids: tens of minutes), "quick" (about a minute) or
             "smoke" (tiny; numbers not meaningful); None: the library's, {scale}
    seed     root seed of every run (each series adds its salt, srgd.h); None: {seed}
    threads  worker threads (the results do not depend on it); None: {threads}

    Returns a dict: ``grid`` (the scale's grids), ``runs``, ``calibrations``; ``vs_n`` (E1
    rows: n, T, B, beta, seed0 and {{mean, se}} of nonprivate_p2, nonprivate_p1, private_part,
    unaccelerated, accel_sgd) with ``slopes_n``; ``vs_p`` (E2), ``vs_eps`` (E3) with
    ``private_scaling`` (slopes, lambda1, beta0, eps_p, beta_max_fit, T_private, fit_points);
    ``regimes`` (E4; regime "A" or "B"); ``tree`` (E6) and ``tree_beats_independent``;
    ``baselines`` (E7: per eps, {{"eps", method name: {{T, B, lr, noise_multiplier, excess}}}});
    ``trace`` (E8: {{"A": {{column: array}}, "B": ...}}, the dpc_srgd_step_info columns) and
    ``regime_a_max_delta_over_first_step``; ``reproduces``, ``not_reproduced``. The library's
    CPU times per experiment are not measured here (no clock is given: the CLI's
    cpu_seconds_per_experiment)."""
    p = _params(scale, seed, threads)
    out = P(_Result)()
    _lib.call(lib.dpc_srgd_repro_run, ctypes.byref(p), ctypes.byref(out))
    try:
        return _convert(p, out.contents)
    finally:
        lib.dpc_srgd_repro_result_free(out)


def _convert(p, r):
    g = r.grid
    methods = [_lib.text(lib.dpc_srgd_repro_method_name(m)) for m in range(NMETHODS)]
    regimes = []
    for row in r.regimes[:2 * g.nab]:
        d = _repro.value(row)
        d["regime"] = "B" if row.regime == 1 else "A"  # DPC_SRGD_REGIME_B
        regimes.append(d)
    return {
        "scale": _lib.enum_names(_Params, "scale")[p.scale], "seed": int(p.seed),
        "grid": _repro.value(g), "runs": int(r.runs), "calibrations": int(r.calibrations),
        "vs_n": [_repro.value(x) for x in r.vs_n[:g.nTn]],
        "slopes_n": {k: getattr(r, "slope_n_" + k) for k in (
            "p2", "p2_se", "p1", "unaccelerated", "accel_sgd", "private")},
        "vs_p": [_repro.value(x) for x in r.vs_p[:g.nps]],
        "vs_eps": [{**_repro.value(x), "in_fit": bool(x.in_fit)} for x in r.vs_eps[:g.nks]],
        "private_scaling": {k: getattr(r, k) for k in (
            "slope_p", "slope_p_se", "slope_eps", "slope_eps_se", "slope_beta_eps",
            "slope_beta_p", "lambda1", "beta0", "eps_p", "beta_max_fit", "T_private",
            "fit_points")},
        "regimes": regimes,
        "tree": [{**_repro.value(x), "wins": bool(x.wins)} for x in r.tree[:g.ncs]],
        "tree_beats_independent": bool(r.tree_beats_independent),
        "baselines": [{"eps": g.eps_base[e], **{methods[m]: _repro.value(r.baselines[e][m])
                                                for m in range(NMETHODS)}}
                      for e in range(g.neb)],
        "trace": {"A": _trace(r, 0), "B": _trace(r, 1)},
        "regime_a_max_delta_over_first_step": r.regime_a_max_delta_over_first_step,
        "reproduces": _repro.strings(lib.dpc_srgd_repro_reproduced),
        "not_reproduced": _repro.strings(lib.dpc_srgd_repro_not_reproduced)}


run.__doc__ = run.__doc__.format(**{f: _lib.default_text(_Params, f)
                                    for f in ("scale", "seed", "threads")})
