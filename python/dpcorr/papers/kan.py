"""The reproduction of the KAN + DP-lambda-CGD paper (``include/dpcorr/papers/kan.h``, its
section 9), as ``dpcorr repro kan`` computes it: :func:`noise` (1. the noise as the training
loop applies it), :func:`sensitivity` (2. brute force, exact and Lemma F.11's bound),
:func:`kappa_table` (3. the noise multiplier by Thm. D.9, Thm. F.12 and dpcorr's calibration),
:func:`width_window` (6. projection activations against the width) and :func:`trends` (7. n and
epsilon at lambda = 0), each returning the library's struct as arrays and dicts, and
:func:`fmnist_setup` (8: the Fashion-MNIST comparison's setup). The lambda trends (4, 5) and
the Fashion-MNIST training runs stay CLI-only.

``scale``: "full" (minutes), "quick" (seconds) or "smoke" (numbers not meaningful); None: the
library's, {scale}. ``seed``: the root seed of every run (each part adds its salt); None:
{seed}.
"""

import ctypes

import numpy as np

from .. import _lib
from .._lib import lib, c_double, c_int, c_size_t, c_char_p, P
from . import _repro

_Params = _lib.generated("dpc_kan_repro_params")
NLAMBDA, MAX_WIDTHS, MAX_POINTS, NOISE_T = 5, 6, 5, 100  # DPC_KAN_REPRO_*

# ---- hand-written mirrors of the parts' results (kan.h): not in the ABI list; checked against
# offsetof by python/tests/test_papers_kan.py ----------------------------------------------------


class _Noise(ctypes.Structure):
    """dpc_kan_repro_noise."""
    _fields_ = [("coordinates", c_size_t), ("T", c_size_t), ("lambda_", c_double * 3),
                ("var_xi1", c_double * 3), ("var_xi_t", c_double * 3),
                ("theory_var_xi_t", c_double * 3), ("cov_lag1", c_double * 3),
                ("theory_cov_lag1", c_double * 3), ("cov_lag2", c_double * 3),
                ("var_sum", (c_double * (NOISE_T + 1)) * 3),
                ("theory_var_sum", (c_double * (NOISE_T + 1)) * 3)]


class _SensRow(ctypes.Structure):
    """dpc_kan_repro_sens_row."""
    _fields_ = [("T", c_size_t), ("tau", c_size_t), ("lambda_", c_double), ("brute", c_double),
                ("exact", c_double), ("bound", c_double), ("bound_over_exact", c_double)]


class _Sens(ctypes.Structure):
    """dpc_kan_repro_sens."""
    _fields_ = [("row", _SensRow * 8), ("rows", c_size_t)]


class _KappaRow(ctypes.Structure):
    """dpc_kan_repro_kappa_row."""
    _fields_ = [("n", c_size_t), ("B", c_size_t), ("T", c_size_t), ("eps", c_double),
                ("kappa_D9", c_double), ("kappa_F12", c_double * NLAMBDA), ("F12_valid", c_int),
                ("kappa_dpcorr", c_double * NLAMBDA), ("participations", c_size_t * NLAMBDA),
                ("sensitivity", c_double * NLAMBDA)]


class _Kappa(ctypes.Structure):
    """dpc_kan_repro_kappa."""
    _fields_ = [("row", _KappaRow * 3), ("rows", c_size_t), ("eq19_kappa", c_double),
                ("eq19_eps", c_double), ("eq19_order", c_double), ("eq19_kappa_exists", c_int),
                ("fb_kappa_F12", c_double), ("fb_delta_F12", c_double),
                ("fb_kappa_exact", c_double), ("fb_sensitivity", c_double),
                ("fb_kappa_F12_l0", c_double), ("fb_delta_F12_l0", c_double),
                ("fb_kappa_exact_l0", c_double)]


class _WidthRow(ctypes.Structure):
    """dpc_kan_repro_width_row."""
    _fields_ = [("m", c_size_t), ("P", c_size_t), ("projections", c_size_t),
                ("kappa", c_double), ("eta", c_double), ("clip", c_double),
                ("gamma_lo", c_double), ("radius", c_double), ("max_dist", c_double),
                ("m_edge", c_double), ("m_hi", c_double), ("m_lo", c_double), ("inside", c_int)]


class _Width(ctypes.Structure):
    """dpc_kan_repro_width."""
    _fields_ = [("kappa", c_double), ("ref_eta", c_double), ("edge_ref", c_double),
                ("row", _WidthRow * MAX_WIDTHS), ("rows", c_size_t), ("consistent", c_int),
                ("inside_seen", c_int), ("beyond_seen", c_int), ("verified", c_int)]


class _TrendRow(ctypes.Structure):
    """dpc_kan_repro_trend_row."""
    _fields_ = [("n", c_size_t), ("eps", c_double), ("kappa", c_double),
                ("avg_test_loss", c_double), ("avg_test_err", c_double),
                ("avg_train_loss", c_double), ("A_van", c_double)]


class _Trends(ctypes.Structure):
    """dpc_kan_repro_trends."""
    _fields_ = [("n_sweep", _TrendRow * MAX_POINTS), ("eps_sweep", _TrendRow * MAX_POINTS),
                ("nn", c_size_t), ("ne", c_size_t), ("decreasing_in_n", c_int),
                ("decreasing_in_eps", c_int)]


class _Fmnist(ctypes.Structure):
    """dpc_kan_repro_fmnist."""
    _fields_ = [("n_train", c_size_t), ("n_test", c_size_t), ("cfg", _lib.TrainConfig),
                ("model", c_char_p * 2), ("label", c_char_p * 2)]


MIRRORS = {"dpc_kan_repro_fmnist": _Fmnist, "dpc_kan_repro_noise": _Noise,
           "dpc_kan_repro_sens_row": _SensRow,
           "dpc_kan_repro_sens": _Sens, "dpc_kan_repro_kappa_row": _KappaRow,
           "dpc_kan_repro_kappa": _Kappa, "dpc_kan_repro_width_row": _WidthRow,
           "dpc_kan_repro_width": _Width, "dpc_kan_repro_trend_row": _TrendRow,
           "dpc_kan_repro_trends": _Trends}


def _declare():
    E = P(_lib.Error)
    _repro.declare(lib, (
        ("dpc_kan_repro_params_init", None, [P(_Params)]),
        ("dpc_kan_repro_noise_stats", c_int, [P(_Params), P(_Noise), E]),
        ("dpc_kan_repro_sensitivity", c_int, [P(_Sens), E]),
        ("dpc_kan_repro_kappa_table", c_int, [P(_Kappa), E]),
        ("dpc_kan_repro_width_window", c_int, [P(_Params), P(_Width), E]),
        ("dpc_kan_repro_n_eps_trends", c_int, [P(_Params), P(_Trends), E]),
        ("dpc_kan_repro_fmnist_setup", c_int, [c_int, P(_Fmnist), E]),
        ("dpc_kan_repro_lambdas", P(c_double), []),
        ("dpc_kan_repro_reproduced", P(c_char_p), [P(c_size_t)]),
        ("dpc_kan_repro_not_reproduced", P(c_char_p), [P(c_size_t)])))


_declare()


def _params(scale, seed):
    return _repro.params(_Params, lib.dpc_kan_repro_params_init, scale=scale, seed=seed)


def _call(fn, mirror, *args):
    out = mirror()
    _lib.call(fn, *args, ctypes.byref(out))
    return out


def _renamed(d):
    """A converted struct with ``lambda_`` (a Python keyword in a mirror) back to ``lambda``."""
    return {("lambda" if k == "lambda_" else k): v for k, v in d.items()}


def lambdas():
    """The lambdas of parts 4 and 5 (dpc_kan_repro_lambdas) and of kappa_table's columns."""
    return np.ctypeslib.as_array(lib.dpc_kan_repro_lambdas(), (NLAMBDA,)).copy()


def claims():
    """{"reproduces": [...], "not_reproduced": [...]}: what ``repro kan`` reproduces of the
    paper and what it cannot, and why."""
    out = {}
    for key, fn in (("reproduces", lib.dpc_kan_repro_reproduced),
                    ("not_reproduced", lib.dpc_kan_repro_not_reproduced)):
        n = c_size_t()
        arr = fn(ctypes.byref(n))
        out[key] = [arr[i].decode() for i in range(n.value)]
    return out


def noise(scale=None, seed=None):
    """1. The noise xi_t = kappa (Z_t - lambda Z_{t-1}) as lambda-CGD applies it (zero gradients,
    eta = clip = kappa = B = 1, T = 100 updates) at lambda 0, 0.5, 0.9: per coordinate means
    beside their theory. Returns ``lambda`` (3), ``var_xi1``, ``var_xi_t``,
    ``theory_var_xi_t``, ``cov_lag1``, ``theory_cov_lag1``, ``cov_lag2`` (3 each), ``var_sum``
    and ``theory_var_sum`` (3 x T: t = 1..T), ``coordinates``, ``T``."""
    r = _call(lib.dpc_kan_repro_noise_stats, _Noise, ctypes.byref(_params(scale, seed)))
    d = _renamed(_repro.value(r))
    d["var_sum"], d["theory_var_sum"] = d["var_sum"][:, 1:], d["theory_var_sum"][:, 1:]
    return d


def sensitivity():
    """2. max_{|y| <= tau} ||C y|| of lambda-CGD for 8 (T, lambda, tau) cases: ``brute`` (over y
    in {0,1}^T; NaN for T > 12), ``exact`` (the core's), ``bound`` (Lemma F.11) and
    ``bound_over_exact``: a list of dicts (exact: no scale or seed)."""
    r = _call(lib.dpc_kan_repro_sensitivity, _Sens)
    return [_renamed(_repro.value(row)) for row in r.row[:r.rows]]


def kappa_table():
    """3. The noise multiplier kappa at delta = 1e-5 for three (n, B, T, eps): ``rows`` (each:
    n, B, T, eps, kappa_D9, and per lambda of :func:`lambdas` kappa_F12 (F12_valid: inside its
    eps <= 1 condition), kappa_dpcorr, participations, sensitivity); eq. 19 at row 0's
    kappa_D9 (``eq19_kappa``, ``eq19_eps``, ``eq19_order``, ``eq19_kappa_exists``); the full
    batch (``fb_*``). Exact: no scale or seed."""
    r = _call(lib.dpc_kan_repro_kappa_table, _Kappa)
    d = _repro.value(r)
    d["rows"] = [{**row, "F12_valid": bool(row["F12_valid"])} for row in d.pop("row")[:r.rows]]
    d["eq19_kappa_exists"] = bool(r.eq19_kappa_exists)
    return d


def width_window(scale=None, seed=None):
    """6. The width window at lambda 0.5 with the theory's settings: ``rows`` (per width m: P,
    projections, kappa, eta, clip, gamma_lo, radius, max_dist, m_edge, m_hi, m_lo, inside),
    ``kappa`` (of the sweep), ``ref_eta``, ``edge_ref`` and the checks ``consistent``,
    ``inside_seen``, ``beyond_seen``, ``verified``."""
    r = _call(lib.dpc_kan_repro_width_window, _Width, ctypes.byref(_params(scale, seed)))
    d = _repro.value(r)
    d["rows"] = [{**row, "inside": bool(row["inside"])} for row in d.pop("row")[:r.rows]]
    for k in ("consistent", "inside_seen", "beyond_seen", "verified"):
        d[k] = bool(d[k])
    return d


def trends(scale=None, seed=None):
    """7. lambda = 0 with kappa from Thm. D.9: ``n_sweep`` (eps = 2) and ``eps_sweep``
    (n = 1000), each a list of rows (n, eps, kappa, avg_test_loss, avg_test_err,
    avg_train_loss, A_van), and the checks ``decreasing_in_n``, ``decreasing_in_eps``."""
    r = _call(lib.dpc_kan_repro_n_eps_trends, _Trends, ctypes.byref(_params(scale, seed)))
    return {"n_sweep": [_repro.value(x) for x in r.n_sweep[:r.nn]],
            "eps_sweep": [_repro.value(x) for x in r.eps_sweep[:r.ne]],
            "decreasing_in_n": bool(r.decreasing_in_n),
            "decreasing_in_eps": bool(r.decreasing_in_eps)}


def fmnist_setup(scale=None):
    """8. The setup of the practical KAN against the MLP on Fashion-MNIST at (3, 1e-5)
    (dpc_kan_repro_fmnist_setup; the CLI trains both with the DP-FTRL trainer): ``n_train``,
    ``n_test`` (the first that many images of each split), ``models`` ([{{"label", "model"}}]
    for the KAN and the MLP: their names and model specs) and ``config`` (the runs'
    dpc_train_config by the library's field names, as :func:`dpcorr.demo_recipe`)."""
    from ..plan import _config_dict
    r = _call(lib.dpc_kan_repro_fmnist_setup, _Fmnist, _params(scale, None).scale)
    return {"n_train": int(r.n_train), "n_test": int(r.n_test),
            "models": [{"label": r.label[k].decode(), "model": r.model[k].decode()}
                       for k in range(2)],
            "config": _config_dict(_lib.TrainConfig, r.cfg)}


__doc__ = __doc__.format(scale=_lib.default_text(_Params, "scale"),
                         seed=_lib.default_text(_Params, "seed"))
