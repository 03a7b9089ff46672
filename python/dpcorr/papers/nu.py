"""The reproduction of the nu-DP-FTRL paper's figures and tables
(``include/dpcorr/papers/nu_repro.h``): :func:`fig1`, :func:`fig2`, :func:`fig3` and
:func:`tables` call ``dpc_nu_fig1_run``, ``dpc_nu_fig2_run``, ``dpc_nu_fig3_run`` and
``dpc_nu_tables_run``, as ``dpcorr repro nu-fig1`` ... ``nu-tables`` do, and return their results:
numbers as floats and ints, curves as numpy arrays, records as dicts, with ``reproduces`` and
``not_reproduced`` (the paper's items the target reproduces, and those it cannot and why).

The figures take ``scale`` ("full", "quick": seconds, or "smoke": tiny grids whose numbers are
not meaningful; None: the library's, {scale}) and ``seed`` (the root seed of every simulation,
each adding its salt; None: the library's, {seed}). The library's default scale is quick; the
CLI's, without --quick or --smoke, is full. Figure 4 (Fashion-MNIST training runs) is not bound:
it needs the data set and minutes of CPU (``dpcorr repro nu-fig4``).
"""

import ctypes

import numpy as np

from . import _repro
from .. import _lib
from .._lib import lib, c_double, c_int, c_size_t, c_uint64, c_char_p, P

_Params = _lib.generated("dpc_nu_repro_params")

# ---- hand-written mirrors of the results (nu_repro.h, theory.h): not in the ABI list; checked
# against offsetof by python/tests/test_papers_nu.py ----------------------------------------------

FIG1_RATIO, FIG1_SIMS, FIG1_BETA, FIG1_OMEGA = 81, 3, 41, 401
FIG2_MAX_POINTS, FIG2_SLOPES = 16, 6
FIG3_MAX_KAPPA = 13
TABLES_MECHS, TABLES_T, TABLE4_ROWS = 5, 18, 6


class _Claims(ctypes.Structure):
    """dpc_nu_repro_claims."""
    _fields_ = [("reproduces", P(c_char_p)), ("n_reproduces", c_size_t),
                ("not_reproduced", P(c_char_p)), ("n_not_reproduced", c_size_t)]


class _SimPoint(ctypes.Structure):
    """dpc_nu_sim_point."""
    _fields_ = [("mean", c_double), ("se", c_double), ("theory", c_double), ("steps", c_size_t),
                ("burn_in", c_size_t), ("len", c_size_t), ("tail", c_double),
                ("seconds", c_double), ("seed", c_uint64)]


class _Fig1Sim(ctypes.Structure):
    """dpc_nu_fig1_sim."""
    _fields_ = [("eta", c_double), ("opt", _SimPoint), ("sgd", _SimPoint), ("ratio", c_double),
                ("ratio_se", c_double), ("ratio_theory", c_double)]


class _Fig1(ctypes.Structure):
    """dpc_nu_fig1_result."""
    _fields_ = [("eta", c_double * FIG1_RATIO), ("ratio", c_double * FIG1_RATIO),
                ("ftrl_opt", c_double * FIG1_RATIO), ("sgd", c_double * FIG1_RATIO),
                ("sims", _Fig1Sim * FIG1_SIMS), ("max_rel_dev", c_double),
                ("beta_eta", c_double * 2), ("t", c_double * FIG1_BETA),
                ("beta", (c_double * FIG1_BETA) * 2), ("omega", c_double * FIG1_OMEGA),
                ("spectrum", (c_double * FIG1_OMEGA) * 2), ("claims", _Claims)]


class _Fig2Config(ctypes.Structure):
    """dpc_nu_fig2_config."""
    _fields_ = [("d0", c_size_t), ("alpha0", c_double), ("eta0", c_double),
                ("ds", c_size_t * 5), ("nd", c_size_t), ("alphas", c_double * 4),
                ("nalpha", c_size_t), ("etas", c_double * 5), ("neta", c_size_t),
                ("mult", c_double), ("max_steps", c_size_t)]


class _Fig2Point(ctypes.Structure):
    """dpc_nu_fig2_point ([0] Noisy-SGD, [1] nu-Noisy-FTRL)."""
    _fields_ = [("sweep", c_char_p), ("d", c_size_t), ("alpha", c_double), ("eta", c_double),
                ("nu", c_double), ("d_eff", c_double), ("theory", c_double * 2),
                ("fixed", c_double * 2), ("fixed_se", c_double * 2), ("random", c_double * 2),
                ("random_se", c_double * 2), ("seed", c_uint64 * 2), ("sandwich", c_double),
                ("steps", c_size_t), ("burn_in", c_size_t * 2)]


class _Fig2Slope(ctypes.Structure):
    """dpc_nu_fig2_slope."""
    _fields_ = [("name", c_char_p), ("key", c_char_p), ("paper", c_double), ("lti", c_double),
                ("fixed", c_double), ("random", c_double)]


class _Fig2(ctypes.Structure):
    """dpc_nu_fig2_result."""
    _fields_ = [("cfg", _Fig2Config), ("points", _Fig2Point * FIG2_MAX_POINTS),
                ("npoints", c_size_t), ("nsweep", c_size_t * 3),
                ("sweep", (c_size_t * 5) * 3), ("x", (c_double * 5) * 3),
                ("slopes", _Fig2Slope * FIG2_SLOPES), ("max_rel_dev", c_double),
                ("inside", c_int), ("total", c_int), ("claims", _Claims)]


class _Fig3Sim(ctypes.Structure):
    """dpc_nu_fig3_sim."""
    _fields_ = [("kappa", c_double), ("mech", c_int), ("gap", c_double), ("se", c_double),
                ("bound", c_double), ("steps", c_size_t), ("seed", c_uint64)]


class _Fig3(ctypes.Structure):
    """dpc_nu_fig3_result."""
    _fields_ = [("nk", c_size_t), ("tmax", c_size_t), ("kappa", c_double * FIG3_MAX_KAPPA),
                ("mu", c_double * FIG3_MAX_KAPPA), ("bound_sgd", c_double * FIG3_MAX_KAPPA),
                ("bound_nu", c_double * FIG3_MAX_KAPPA), ("bound_opt", c_double * FIG3_MAX_KAPPA),
                ("bound_opt0", c_double * FIG3_MAX_KAPPA), ("rho_sim", c_double),
                ("sims", _Fig3Sim * 4), ("below", c_int), ("ordering", c_int),
                ("ratio_mid", c_double), ("ratio_max", c_double), ("claims", _Claims)]


class _Beta(ctypes.Structure):
    """dpc_theory_beta (theory.h)."""
    _fields_ = [("kind", c_int), ("nu", c_double), ("len", c_size_t),
                ("coeffs", P(c_double))]


class _Rates(ctypes.Structure):
    """dpc_theory_rates (theory.h)."""
    _fields_ = [("trace", c_double), ("lambda_max", c_double), ("lambda_min", c_double),
                ("d_eff", c_double), ("nu", c_double), ("sgd", c_double), ("ftrl", c_double),
                ("lower", c_double), ("ratio_sgd", c_double), ("ratio_ftrl", c_double),
                ("v0_sgd", c_double), ("v0_ftrl", c_double), ("v0_opt", c_double)]


class _Table2Row(ctypes.Structure):
    """dpc_nu_table2_row."""
    _fields_ = [("name", c_char_p), ("beta", _Beta), ("gamma_t2", c_double * 4),
                ("gamma_inf2", c_double), ("f_inf", c_double), ("rate", c_double),
                ("rate_formula", c_char_p)]


class _Table4Row(ctypes.Structure):
    """dpc_nu_table4_row."""
    _fields_ = [("a", c_double), ("d_eff", c_double), ("d_eff_table4", c_double),
                ("v0_sgd", c_double), ("v0_ftrl", c_double), ("ftrl_table4", c_double),
                ("sgd_table4", c_double)]


class _Tables(ctypes.Structure):
    """dpc_nu_tables_result."""
    _fields_ = [("d", c_size_t), ("eta", c_double), ("rho", c_double), ("trace", c_double),
                ("damped_nu", c_double), ("T", c_double * TABLES_T),
                ("gamma_T2", (c_double * TABLES_T) * TABLES_MECHS),
                ("table2", _Table2Row * TABLES_MECHS), ("damped_between", c_int),
                ("nu0_log_fit", c_double), ("table1", _Rates), ("lower_universal", c_double),
                ("table4", _Table4Row * TABLE4_ROWS), ("claims", _Claims)]


MIRRORS = {"dpc_nu_repro_claims": _Claims, "dpc_nu_sim_point": _SimPoint,
           "dpc_nu_fig1_sim": _Fig1Sim, "dpc_nu_fig1_result": _Fig1,
           "dpc_nu_fig2_config": _Fig2Config, "dpc_nu_fig2_point": _Fig2Point,
           "dpc_nu_fig2_slope": _Fig2Slope, "dpc_nu_fig2_result": _Fig2,
           "dpc_nu_fig3_sim": _Fig3Sim, "dpc_nu_fig3_result": _Fig3, "dpc_theory_beta": _Beta,
           "dpc_theory_rates": _Rates, "dpc_nu_table2_row": _Table2Row,
           "dpc_nu_table4_row": _Table4Row, "dpc_nu_tables_result": _Tables}


def _declare():
    E = P(_lib.Error)
    for fig, mirror in (("fig1", _Fig1), ("fig3", _Fig3)):
        run, free = getattr(lib, f"dpc_nu_{fig}_run"), getattr(lib, f"dpc_nu_{fig}_free")
        run.restype, run.argtypes = c_int, [P(_Params), P(P(mirror)), E]
        free.restype, free.argtypes = None, [P(mirror)]
    lib.dpc_nu_fig2_run.restype = c_int
    lib.dpc_nu_fig2_run.argtypes = [P(_Params), _lib.c_void_p, _lib.c_void_p, P(P(_Fig2)), E]
    lib.dpc_nu_fig2_free.restype, lib.dpc_nu_fig2_free.argtypes = None, [P(_Fig2)]
    lib.dpc_nu_tables_run.restype, lib.dpc_nu_tables_run.argtypes = c_int, [P(P(_Tables)), E]
    lib.dpc_nu_tables_free.restype, lib.dpc_nu_tables_free.argtypes = None, [P(_Tables)]
    lib.dpc_nu_repro_params_init.restype = None
    lib.dpc_nu_repro_params_init.argtypes = [P(_Params)]
    lib.dpc_theory_beta_kind_name.restype = c_char_p
    lib.dpc_theory_beta_kind_name.argtypes = [c_int]


_declare()

# ---- the results as Python values ---------------------------------------------------------------


def _claims(c):
    return {"reproduces": [c.reproduces[i].decode() for i in range(c.n_reproduces)],
            "not_reproduced": [c.not_reproduced[i].decode() for i in range(c.n_not_reproduced)]}


def _params(scale, seed):
    return _repro.params(_Params, lib.dpc_nu_repro_params_init, scale=scale, seed=seed)


def _run(fn, free, args, convert):
    """Calls fn(*args, &out, &err), converts *out and frees it."""
    out = P(free.argtypes[0]._type_)()
    _lib.call(fn, *args, ctypes.byref(out))
    try:
        return convert(out.contents)
    finally:
        free(out)


def _common(p, r):
    return {"scale": _lib.enum_names(_Params, "scale")[p.scale], "seed": int(p.seed),
            **_claims(r.claims)}


def _sim_point(s):
    d = _repro.value(s)
    del d["seconds"]  # wall time of the run: not a result (the CLI writes it nowhere either)
    return d


def fig1(scale=None, seed=None):
    """Figure 1 (mean estimation, Theorem 2.1; ``dpcorr repro nu-fig1``).

    Returns a dict: ``eta``, ``ratio`` (the closed form R(eta) = F_inf(optimal beta*) /
    F_inf(DP-SGD) on (0, 2)), ``ftrl_opt`` and ``sgd`` (the two F_inf): arrays of 81;
    ``sims``: the simulations at eta = 0.5, 0.1, 0.02 (each: eta, ``opt`` and ``sgd`` points
    (mean, se, theory, steps, burn_in, len, tail, seed), ratio, ratio_se, ratio_theory);
    ``max_rel_dev`` (simulation vs theory of the optimum); ``beta_eta`` (0.1, 0.01), ``t``
    (41), ``beta`` (2 x 41: beta*_t), ``omega`` (401 on [-pi, pi]) and ``spectrum`` (2 x 401:
    |B*(omega)|^2); scale, seed, reproduces, not_reproduced."""
    p = _params(scale, seed)

    def convert(r):
        d = _repro.value(r)
        for s, raw in zip(d["sims"], r.sims):
            s["opt"], s["sgd"] = _sim_point(raw.opt), _sim_point(raw.sgd)
        del d["claims"]
        return {**d, **_common(p, r)}

    return _run(lib.dpc_nu_fig1_run, lib.dpc_nu_fig1_free, (ctypes.byref(p),), convert)


def fig2(scale=None, seed=None):
    """Figure 2 (linear regression, Noisy-SGD vs nu-Noisy-FTRL; ``dpcorr repro nu-fig2``): the
    exact LTI value V0, the fixed-design and the random-design simulations against d, d_eff
    and eta, and the log-log slopes beside the paper's. quick takes seconds (about 5 s here),
    smoke a fraction of one.

    Returns a dict: ``points`` (each computed point: sweep, d, alpha, eta, nu, d_eff, and per
    mechanism ([0] Noisy-SGD, [1] nu-Noisy-FTRL) theory, fixed, fixed_se, random, random_se,
    seed, burn_in; sandwich, steps), ``sweeps`` ({"d": ..., "alpha": ..., "eta": ...}: each
    the indices into points and the x values (d, d_eff, eta)), ``slopes`` (name, key, paper
    (NaN: none), lti, fixed, random), ``max_rel_dev`` (fixed design vs V0), ``inside`` and
    ``total`` (random design inside [V0 - 3 s.e., sandwich]), ``config`` (the scale's grid),
    scale, seed, reproduces, not_reproduced."""
    p = _params(scale, seed)

    def convert(r):
        sweeps = {}
        for i, name in enumerate(("d", "alpha", "eta")):
            n = r.nsweep[i]
            sweeps[name] = {"points": [int(r.sweep[i][j]) for j in range(n)],
                            "x": np.array([r.x[i][j] for j in range(n)])}
        return {"points": [_repro.value(r.points[i]) for i in range(r.npoints)], "sweeps": sweeps,
                "slopes": _repro.value(r.slopes), "max_rel_dev": r.max_rel_dev,
                "inside": r.inside, "total": r.total, "config": _repro.value(r.cfg),
                **_common(p, r)}

    return _run(lib.dpc_nu_fig2_run, lib.dpc_nu_fig2_free, (ctypes.byref(p), None, None),
                convert)


def fig3(scale=None, seed=None):
    """Figure 3 (the Theorem 3.1 / E.1 bound on F_inf against the condition number;
    ``dpcorr repro nu-fig3``).

    Returns a dict: ``kappa`` and ``mu`` (the grid), ``bound_sgd``, ``bound_nu``,
    ``bound_opt`` (Optimized, Zames-Falb multipliers |t| <= ``tmax``) and ``bound_opt0`` (the
    circle criterion): arrays over the grid; ``sims`` (the log-cosh simulations at kappa 10
    and 100: kappa, mechanism ("DP-SGD" or "nu-DP-FTRL"), gap, se, bound, steps, seed) at
    ``rho_sim``; the checks ``below`` (every simulation below its bound) and ``ordering`` (SGD >
    nu > Optimized at the largest kappa); ``ratio_mid``, ``ratio_max`` (SGD / nu bound); scale,
    seed, reproduces, not_reproduced."""
    p = _params(scale, seed)

    def convert(r):
        d = _repro.value(r)
        for k in ("kappa", "mu", "bound_sgd", "bound_nu", "bound_opt", "bound_opt0"):
            d[k] = d[k][:r.nk]
        for s in d["sims"]:
            s["mechanism"] = "nu-DP-FTRL" if s.pop("mech") else "DP-SGD"
        d["below"], d["ordering"] = bool(r.below), bool(r.ordering)
        del d["nk"], d["claims"]
        return {**d, **_common(p, r)}

    return _run(lib.dpc_nu_fig3_run, lib.dpc_nu_fig3_free, (ctypes.byref(p),), convert)


def tables():
    """Tables 1, 2 and 4 (exact: no scale or seed; ``dpcorr repro nu-tables``) at the Figure 2
    point (d = 128, lambda_k = 1/k, eta = 0.02, rho = 1/2, G = 1, sigma_sgd = 0).

    Returns a dict: ``table2`` (per mechanism: name, beta (kind, nu), gamma_t2 at T = 1e2 ..
    1e5, gamma_inf2, f_inf (may be inf), rate (Table 2's, constant 1; inf: diverges),
    rate_formula), ``T`` (2^0 .. 2^17) and ``gamma_T2`` (mechanisms x T), ``damped_nu``,
    ``damped_between``, ``nu0_log_fit``, ``table1`` (the rates and exact LTI values: trace,
    lambda_max, lambda_min, d_eff, nu, sgd, ftrl, lower, ratio_sgd, ratio_ftrl, v0_sgd, v0_ftrl,
    v0_opt), ``lower_universal``, ``table4`` (a, d_eff, d_eff_table4, v0_sgd, v0_ftrl,
    ftrl_table4, sgd_table4), d, eta, rho, trace, reproduces, not_reproduced."""
    def convert(r):
        d = _repro.value(r)
        for row in d["table2"]:
            beta = row["beta"]
            row["beta"] = {"kind": _lib.text(lib.dpc_theory_beta_kind_name(beta["kind"])),
                           "nu": beta["nu"]}
        d["damped_between"] = bool(r.damped_between)
        del d["claims"]
        return {**d, **_claims(r.claims)}

    return _run(lib.dpc_nu_tables_run, lib.dpc_nu_tables_free, (), convert)


__doc__ = __doc__.format(scale=_lib.default_text(_Params, "scale"),
                         seed=_lib.default_text(_Params, "seed"))
