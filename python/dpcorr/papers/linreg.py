"""The reproduction of the DP-AMBSSGD scaling study (``include/dpcorr/papers/linreg.h``):
:func:`run` calls ``dpc_linreg_repro_run``, as ``dpcorr repro ambssgd`` does, and returns the
sigma, epsilon, N and d sweeps of the adaptive-clipping linear regression, with their log-log
slopes, the checks the theory is held to, and ``reproduces`` / ``not_reproduced``.
"""

import ctypes

import numpy as np

from .. import _lib
from .._lib import lib, c_double, c_int, c_size_t, c_char_p, P
from . import _repro

_Params = _lib.generated("dpc_linreg_repro_params")
MAXS, MAXE, MAXN, MAXD, MAXT = 4, 4, 5, 4, 160  # DPC_LINREG_REPRO_MAX*
# the arms of the sigma sweep, in the order of dpc_linreg_repro_result.risk
ARMS = ("adaptive", "fixed", "nonprivate", "ssp", "paper_rule")

# ---- hand-written mirrors of the result (linreg.h): not in the ABI list; checked against
# offsetof by python/tests/test_papers_linreg.py -------------------------------------------------


class _Grid(ctypes.Structure):
    """dpc_linreg_repro_grid."""
    _fields_ = [("n0", c_size_t), ("d0", c_size_t), ("seeds", c_size_t),
                ("sig", c_double * MAXS), ("nsig", c_size_t), ("eps", c_double * MAXE),
                ("neps", c_size_t), ("ns", c_size_t * MAXN), ("nn", c_size_t),
                ("n_seeds", c_size_t), ("ds", c_size_t * MAXD), ("nd", c_size_t),
                ("d_n", c_size_t), ("d_seeds", c_size_t), ("ssgd_seeds", c_size_t)]


class _Point(ctypes.Structure):
    """dpc_linreg_repro_point: a point of the N or d sweep, means over its seeds."""
    _fields_ = [("n", c_size_t), ("d", c_size_t), ("adaptive", c_double),
                ("nonprivate", c_double), ("dp_excess", c_double), ("clip_fraction", c_double)]


class _Result(ctypes.Structure):
    """dpc_linreg_repro_result."""
    _fields_ = [("grid", _Grid), ("jobs", c_size_t), ("threads", c_size_t),
                ("delta", c_double), ("c1", c_double), ("dpstat_k", c_size_t),
                ("dpstat_rule", c_int), ("sigma", c_double * MAXS),
                ("risk", (c_double * MAXS) * len(ARMS)),
                ("dp_excess_adaptive", c_double * MAXS), ("dp_excess_fixed", c_double * MAXS),
                ("clip_fraction", c_double * MAXS), ("o5_oracle", c_double * MAXS),
                ("note", (c_double * MAXS) * 3), ("slope_sigma_adaptive", c_double),
                ("slope_sigma_fixed", c_double), ("ratio_fixed_over_adaptive", c_double),
                ("eps", c_double * (MAXE + 1)), ("eps_risk", c_double * (MAXE + 1)),
                ("eps_dp_excess", c_double * (MAXE + 1)), ("neps", c_size_t),
                ("eps_nonprivate", c_double), ("eps1_risk", c_double), ("slope_eps", c_double),
                ("exact_alpha_risk", c_double), ("dpssgd_risk", c_double),
                ("nsweep", _Point * MAXN), ("dsweep", _Point * MAXD), ("slope_n", c_double),
                ("slope_d", c_double), ("zeta", (c_double * MAXT) * MAXS),
                ("gamma", (c_double * MAXT) * MAXS), ("T0", c_size_t),
                ("ok_sigma_slope", c_int), ("ok_fixed_flat", c_int), ("ok_ratio", c_int),
                ("ok_eps_slope", c_int)]


MIRRORS = {"dpc_linreg_repro_grid": _Grid, "dpc_linreg_repro_point": _Point,
           "dpc_linreg_repro_result": _Result}


def _declare():
    E = P(_lib.Error)
    _repro.declare(lib, (
        ("dpc_linreg_repro_params_init", None, [P(_Params)]),
        ("dpc_linreg_repro_count", c_int, [P(_Params), P(c_size_t), E]),
        ("dpc_linreg_repro_run", c_int, [P(_Params), P(P(_Result)), E]),
        ("dpc_linreg_repro_result_free", None, [P(_Result)]),
        ("dpc_dpstat_rule_name", c_char_p, [c_int]),
        ("dpc_linreg_repro_reproduced", P(c_char_p), [P(c_size_t)]),
        ("dpc_linreg_repro_not_reproduced", P(c_char_p), [P(c_size_t)])))


_declare()


def _params(scale, seed, threads):
    return _repro.params(_Params, lib.dpc_linreg_repro_params_init, scale=scale, seed=seed, threads=threads)


def count(scale=None, seed=None, threads=None):
    """The number of jobs :func:`run` makes for these arguments (cheap)."""
    jobs = c_size_t()
    _lib.call(lib.dpc_linreg_repro_count, ctypes.byref(_params(scale, seed, threads)),
              ctypes.byref(jobs))
    return jobs.value


def run(scale=None, seed=None, threads=None):
    """The scaling study of ``dpcorr repro ambssgd`` (dpc_linreg_repro_run).

    scale    "full" (the reported grids: tens of minutes), "quick" (under a minute) or
             "smoke" (tiny; numbers not meaningful); None: the library's, {scale}
    seed     root seed (job s of a sweep point draws stream s); None: {seed}
    threads  worker threads (the results do not depend on it); None: {threads}

    Returns a dict: ``grid``; ``sigma`` (the sweep's values) with ``risk`` ({{arm: array}} for
    the arms adaptive, fixed, nonprivate, ssp, paper_rule: mean excess risk over the seeds),
    ``dp_excess_adaptive``, ``dp_excess_fixed``, ``clip_fraction``, ``o5_oracle`` and ``note``
    ({{"adaptive", "fixed", "nonprivate"}}: the note's runs, NaN where absent); the epsilon
    sweep ``eps``, ``eps_risk``, ``eps_dp_excess`` with ``eps_nonprivate``, ``eps1_risk``,
    ``exact_alpha_risk``, ``dpssgd_risk``; ``nsweep`` and ``dsweep`` (points: n, d, adaptive,
    nonprivate, dp_excess, clip_fraction); ``slopes`` (sigma_adaptive, sigma_fixed, epsilon,
    n, d) and ``ratio_fixed_over_adaptive``; ``zeta`` and ``gamma`` (sigma x T0: seed 0's
    adaptive run); ``checks`` (sigma_slope, fixed_flat, ratio, eps_slope); ``jobs``,
    ``threads``, ``delta``, ``c1``, ``dpstat_k``, ``dpstat_rule``; ``reproduces``,
    ``not_reproduced``."""
    p = _params(scale, seed, threads)
    out = P(_Result)()
    _lib.call(lib.dpc_linreg_repro_run, ctypes.byref(p), ctypes.byref(out))
    try:
        return _convert(p, out.contents)
    finally:
        lib.dpc_linreg_repro_result_free(out)


def _convert(p, r):
    g = r.grid
    ns, ne = g.nsig, r.neps
    arr = lambda a, n: np.array(a[:n])  # noqa: E731  (the first n entries of a C array)
    return {
        "scale": _lib.enum_names(_Params, "scale")[p.scale], "seed": int(p.seed),
        "grid": _repro.value(g), "jobs": int(r.jobs), "threads": int(r.threads), "delta": r.delta,
        "c1": r.c1, "dpstat_k": int(r.dpstat_k),
        "dpstat_rule": _lib.text(lib.dpc_dpstat_rule_name(r.dpstat_rule)),
        "sigma": arr(r.sigma, ns),
        "risk": {arm: arr(r.risk[a], ns) for a, arm in enumerate(ARMS)},
        **{k: arr(getattr(r, k), ns) for k in (
            "dp_excess_adaptive", "dp_excess_fixed", "clip_fraction", "o5_oracle")},
        "note": {k: arr(r.note[i], ns) for i, k in enumerate(("adaptive", "fixed",
                                                              "nonprivate"))},
        "eps": arr(r.eps, ne), "eps_risk": arr(r.eps_risk, ne),
        "eps_dp_excess": arr(r.eps_dp_excess, ne),
        **{k: getattr(r, k) for k in ("eps_nonprivate", "eps1_risk", "exact_alpha_risk",
                                      "dpssgd_risk", "ratio_fixed_over_adaptive")},
        "nsweep": [_repro.value(x) for x in r.nsweep[:g.nn]],
        "dsweep": [_repro.value(x) for x in r.dsweep[:g.nd]],
        "slopes": {"sigma_adaptive": r.slope_sigma_adaptive,
                   "sigma_fixed": r.slope_sigma_fixed, "epsilon": r.slope_eps,
                   "n": r.slope_n, "d": r.slope_d},
        "zeta": np.array([r.zeta[i][:r.T0] for i in range(ns)]),
        "gamma": np.array([r.gamma[i][:r.T0] for i in range(ns)]),
        "checks": {"sigma_slope": bool(r.ok_sigma_slope), "fixed_flat": bool(r.ok_fixed_flat),
                   "ratio": bool(r.ok_ratio), "eps_slope": bool(r.ok_eps_slope)},
        "reproduces": _repro.strings(lib.dpc_linreg_repro_reproduced),
        "not_reproduced": _repro.strings(lib.dpc_linreg_repro_not_reproduced)}


run.__doc__ = run.__doc__.format(**{f: _lib.default_text(_Params, f)
                                    for f in ("scale", "seed", "threads")})
