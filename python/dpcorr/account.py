"""Privacy accounting (``include/dpcorr/account.h``): epsilon, delta, noise and step calibration
for (subsampled, composed) Gaussian mechanisms and for correlated-noise mechanisms, and the zCDP
and Gaussian-DP conversions. The same library calls as ``dpcorr account``, so the numbers are
the CLI's.

The noise multiplier ``sigma`` has one meaning (account.h): noise std / (clip x sensitivity of
one step). Without ``mech``, the event is ``steps`` compositions of a Gaussian with noise
multiplier sigma on a batch drawn with rate ``q`` (Poisson, or a fixed-size batch with
``sampling="fixed"``; q = 1: no sampling). With ``mech`` (a :class:`dpcorr.Mechanism`, or a kind
name plus its parameters), each row of Z has std sigma x clip x column_norm(C), and the run is
accounted as ``dpcorr account`` does (one library rule, dpc_account_query_resolve): one Gaussian
with the mechanism's sensitivity for its participation pattern (q = 1); with Poisson rate q < 1
and a cyclic pattern, by the best valid route (amplified banded MF when the period is at least
C's bands); with q < 1 and no cyclic pattern, Poisson sampling at every step by the best route
(MMCC for C >= 0) in ``epsilon`` and ``sigma`` (``delta`` and ``steps`` account the pattern's
event).

Accountants: "pld" (privacy loss distributions), "rdp" (Renyi DP), "gdp" (Gaussian DP, exact
without sampling), "zcdp"; None is the library's default: gdp for a mechanism with q = 1, rdp
for ``sampling="fixed"``, else pld. ``neighbor=None``: zero-out with a mechanism, else
add-remove. Options: ``orders`` and ``refine`` (rdp), ``interval``, ``tail`` and ``disc`` (pld:
"connect-dots", "round-up" or the optimistic "round-down"), ``conversion`` (zcdp: "tight" or
"bun-steinke").

Every function returns a float; ``details=True`` returns the CLI's ``--json`` record as a dict
(dpc_account_solution_json: mode, epsilon, delta, sigma, steps, q, accountant, neighbor, order /
rho / mu / rdp_order, and the mechanism's sensitivity, rounds, noise std, routes, ...).
"""

import ctypes
import json
import math

from . import _check
from . import _lib
from ._lib import lib
from .mechanism import Mechanism

ACCOUNTANTS = ("pld", "rdp", "gdp", "zcdp")
# the zCDP conversions by the names of dpc_account_opts' table (its zcdp_conv values)
_CONVERSIONS = {n: v for v, n in enumerate(_lib.enum_names(_lib.AccountOpts, "zcdp_conv"))}
_OPTS = ("sampling", "neighbor", "sensitivity", "orders", "refine", "interval", "tail", "disc",
         "conversion")
# keyword -> the library's field (dpc_account_query_uses says whether a configuration reads it)
_FIELD = {"sampling": "sampling", "sensitivity": "sensitivity", "orders": "orders",
          "refine": "rdp_refine", "interval": "pld_interval", "tail": "pld_tail",
          "disc": "pld_disc", "conversion": "zcdp_conv"}
# the query, mirrored from the library's field table of dpc_account_query (its fields, offsets,
# nested opts / mech / part): one accounting question, completed by the library's rules
# (dpc_account_query_resolve) and answered by dpc_account_query_solve, as `dpcorr account`
_Query = _lib.generated("dpc_account_query")
# the modes a keyword function asks, by the table's names of dpc_account_mode (convert aside:
# its own functions below)
_MODES = {n: v for v, n in enumerate(_lib.enum_names(_Query, "mode")) if n != "convert"}
# the query's fields spelt as this module's arguments (the event a query builds names its
# component "parts[0]"; the mechanism's parameters are keywords of their own)
_RENAME = {"parts[0].count": "steps", "parts[0].": "", "mech.": "", "opts.": ""}


class _Solution(ctypes.Structure):
    """dpc_account_solution (account.h): an answer record without a field table (checked by
    size)."""
    _fields_ = [("result", _lib.AccountResult), ("sigma", _lib.c_double),
                ("steps", _lib.c_size_t), ("opts", _lib.AccountOpts), ("have_info", _lib.c_int),
                ("info", _lib.MechInfo), ("part", _lib.Participation)]


def _declare():
    P, E = _lib.P, _lib.P(_lib.Error)
    for name, restype, argtypes in (
            ("dpc_account_query_init", None, [P(_Query), _lib.c_int]),
            ("dpc_account_query_resolve", _lib.c_int, [P(_Query), E]),
            ("dpc_account_query_solve", _lib.c_int, [P(_Query), P(_Solution), E]),
            ("dpc_account_query_uses", _lib.c_int, [P(_Query), _lib.c_char_p]),
            ("dpc_account_solution_json", _lib.c_size_t,
             [P(_Query), P(_Solution), _lib.c_char_p, _lib.c_size_t])):
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = restype, argtypes
    have = lib.dpc_abi_sizeof(b"dpc_account_solution")  # _Query: generated and checked
    if have != ctypes.sizeof(_Solution):
        raise ImportError(f"dpcorr: sizeof dpc_account_solution is {have} in {_lib.LIB_PATH} "
                          f"and {ctypes.sizeof(_Solution)} here; rebuild both from one tree "
                          f"(make)")


_declare()


def _mechanism(mech, steps, params, need_steps):
    if mech is None:
        if params:
            raise TypeError(f"unexpected keyword argument(s) {', '.join(params)} (mechanism "
                            f"parameters need mech=)")
        return None
    if isinstance(mech, Mechanism):
        if params:
            raise TypeError(f"unexpected keyword argument(s) {', '.join(params)}: give them "
                            f"to the Mechanism")
        if steps is not None and _check.steps("steps", steps) != mech.steps:
            raise ValueError(f"steps: {steps} differs from the mechanism's n = {mech.steps}")
        return mech
    if isinstance(mech, str):
        if steps is None and not need_steps:
            steps = 1  # mode steps searches n itself: validate the kind at a placeholder n
        return Mechanism(mech, steps, **params)
    raise TypeError(f"mech: expected a dpcorr.Mechanism or a kind name, got "
                    f"{type(mech).__name__}")


def _conversion(name):
    if name is None:  # the library's default: dpc_account_opts' table
        return _CONVERSIONS[_lib.default(_lib.AccountOpts, "zcdp_conv")]
    if name not in _CONVERSIONS:
        raise ValueError(f"conversion: expected {' or '.join(_CONVERSIONS)}, got {name!r}")
    return _CONVERSIONS[name]


def _required(name, value):
    if value is None:
        raise TypeError(f"{name}: required")
    return value


def _solve(mode, q, accountant, mech, kwargs, *, sigma=None, steps=None, epsilon=None,
           delta=None, max_steps=None, details=False):
    """Fills a dpc_account_query (None: the library's default), solves it, and returns the
    answer of `mode` (or the details)."""
    opts = {k: kwargs.pop(k) for k in list(kwargs) if k in _OPTS}
    query = _Query()
    lib.dpc_account_query_init(ctypes.byref(query), _MODES[mode])
    if q is not None:  # None: the library's default (dpc_account_query's table: 1)
        query.q = _check.real("q", q)
    m = _mechanism(mech, steps, kwargs, need_steps=mode != "steps")
    if m is not None:
        query.with_mech = 1
        query.mech = m._params_struct()
        query.part = m.participation
        steps = m.steps
    if mode != "steps":
        query.steps = _check.steps("steps", _required("steps", steps))
    else:
        if max_steps is not None:  # None: the library's (0, resolved to 10^7)
            query.max_steps = _check.steps("max_steps", max_steps)
    for name, value in (("sigma", sigma), ("epsilon", epsilon), ("delta", delta)):
        if value is not None:
            setattr(query, name, _check.real(name, value))
    if accountant is not None:
        query.accountant = _lib.parse(lib.dpc_accountant_parse, "accountant", accountant)
    if opts.get("neighbor") is not None:  # "" is not a default: the library's parser refuses it
        query.neighbor = _lib.parse(lib.dpc_neighbor_parse, "neighbor", opts["neighbor"])
    if opts.get("sampling") is not None:
        query.sampling = _lib.parse(lib.dpc_sampling_parse, "sampling", opts["sampling"])
    if opts.get("sensitivity") is not None:
        query.sensitivity = _check.real("sensitivity", opts["sensitivity"])
    o = query.opts
    orders = None
    if opts.get("orders") is not None:
        orders = _check.vector("orders", opts["orders"])
        o.orders = orders.ctypes.data  # the generated mirror's pointers are untyped (c_void_p)
        o.norders = orders.size
    if opts.get("refine") is not None:  # None: the library's default (dpc_account_opts_init)
        o.rdp_refine = int(_check.flag("refine", opts["refine"]))
    if opts.get("interval") is not None:
        o.pld_interval = _check.real("interval", opts["interval"])
    if opts.get("tail") is not None:
        o.pld_tail = _check.real("tail", opts["tail"])
    if opts.get("disc") is not None:
        o.pld_disc = _lib.parse(lib.dpc_pld_disc_parse, "disc", opts["disc"])
    if opts.get("conversion") is not None:
        o.zcdp_conv = _conversion(opts["conversion"])
    unused = [k for k in _FIELD if opts.get(k) is not None and
              not lib.dpc_account_query_uses(ctypes.byref(query), _FIELD[k].encode())]
    if unused:  # as the CLI: a value the configuration would ignore is refused
        raise ValueError(f"{unused[0]}: not used by this configuration (accountant "
                         f"{accountant or 'default'}, q = {query.q:g}"
                         f"{', a mechanism' if m is not None else ''})")
    sol = _Solution()
    _lib.call(lib.dpc_account_query_solve, ctypes.byref(query), ctypes.byref(sol),
              rename=_RENAME)
    del orders  # borrowed by the query until here
    r = sol.result
    value = {"epsilon": r.epsilon, "delta": r.delta, "sigma": sol.sigma,
             "steps": int(sol.steps)}[mode]
    return _details(query, sol) if details else value


def _number(v):
    return float(v) if v in ("inf", "-inf") else math.nan if v is None else v


def _details(query, sol):
    """The library's record of the answer (dpc_account_solution_json, the CLI's --json)."""
    lib.dpc_account_query_resolve(ctypes.byref(query), None)  # the values it was solved with
    n = lib.dpc_account_solution_json(ctypes.byref(query), ctypes.byref(sol), None, 0)
    buf = ctypes.create_string_buffer(n + 1)
    lib.dpc_account_solution_json(ctypes.byref(query), ctypes.byref(sol), buf, n + 1)
    return {k: _number(v) if not isinstance(v, str) or v in ("inf", "-inf") else v
            for k, v in json.loads(buf.value.decode()).items()}


def epsilon(sigma, q=None, steps=None, delta=None, accountant=None, mech=None, *, details=False,
            **kwargs):
    """The smallest epsilon for which the run is (epsilon, delta)-DP.

    sigma       noise multiplier z > 0
    q           sampling rate in (0, 1] (default None: the library's, 1: no sampling)
    steps       compositions (without mech; with a kind name also its n)
    delta       in (0, 1)
    accountant  "pld" | "rdp" | "gdp" | "zcdp" (default None: the library's rule,
                dpc_account_query_resolve: gdp for a mechanism with q = 1, rdp for
                sampling="fixed", else pld)
    mech        None, a :class:`dpcorr.Mechanism`, or a kind name with its parameters as keyword
                arguments (nu=, bands=, participations=, min_sep=, cyclic=, ...)

    Example: ``epsilon(1.1, q=0.01, steps=10000, delta=1e-5)`` (DP-SGD).
    """
    return _solve("epsilon", q, accountant, mech, kwargs, sigma=_check.real("sigma", sigma),
                  steps=steps, delta=_required("delta", delta), details=details)


def delta(sigma, q=None, steps=None, epsilon=None, accountant=None, mech=None, *, details=False,
          **kwargs):
    """The smallest delta for which the run is (epsilon, delta)-DP (epsilon >= 0). Arguments as
    :func:`epsilon`."""
    return _solve("delta", q, accountant, mech, kwargs, sigma=_check.real("sigma", sigma),
                  steps=steps, epsilon=_required("epsilon", epsilon), details=details)


def sigma(epsilon, delta, q=None, steps=None, accountant=None, mech=None, *, details=False,
          **kwargs):
    """The smallest noise multiplier for which the run is (epsilon, delta)-DP (epsilon > 0), on
    the private side of the crossing. Arguments as :func:`epsilon`."""
    return _solve("sigma", q, accountant, mech, kwargs, steps=steps,
                  epsilon=_check.real("epsilon", epsilon), delta=_check.real("delta", delta),
                  details=details)


def steps(sigma, epsilon, delta, q=None, accountant=None, mech=None, *, max_steps=None,
          details=False, **kwargs):
    """The largest number of steps (<= ``max_steps``, None: the library's 10^7) for which the
    run is (epsilon, delta)-DP.
    With a mechanism its n is searched too (C, and so its sensitivity, depend on n; dense
    strategies have one n only: ValueError). Other arguments as :func:`epsilon`."""
    return _solve("steps", q, accountant, mech, kwargs, sigma=_check.real("sigma", sigma),
                  epsilon=_check.real("epsilon", epsilon), delta=_check.real("delta", delta),
                  max_steps=max_steps, details=details)


# ---- zCDP (Bun & Steinke 2016) -----------------------------------------------------------------


def _scalar(fn, *args):
    out = ctypes.c_double()
    _lib.call(fn, *args, ctypes.byref(out))
    return out.value


def zcdp_rho_gaussian(sigma, sensitivity=1.0):
    """rho of the Gaussian mechanism, sensitivity^2 / (2 sigma^2)."""
    return _scalar(lib.dpc_zcdp_rho_gaussian, _check.real("sensitivity", sensitivity),
                   _check.real("sigma", sigma))


def zcdp_epsilon(rho, delta, conversion=None):
    """rho-zCDP -> the smallest epsilon at delta (tight: Canonne, Kamath & Steinke 2020;
    "bun-steinke": rho + 2 sqrt(rho log(1/delta)); None: the library's default, tight)."""
    out = ctypes.c_double()
    _lib.call(lib.dpc_zcdp_epsilon, _check.real("rho", rho), _check.real("delta", delta),
              _conversion(conversion), ctypes.byref(out), None)
    return out.value


def zcdp_delta(rho, epsilon, conversion=None):
    """rho-zCDP -> the smallest delta at epsilon."""
    return _scalar(lib.dpc_zcdp_delta, _check.real("rho", rho), _check.real("epsilon", epsilon),
                   _conversion(conversion))


def zcdp_rho(epsilon, delta, conversion=None):
    """(epsilon, delta) -> the largest rho whose conversion gives epsilon."""
    return _scalar(lib.dpc_zcdp_rho_for, _check.real("epsilon", epsilon),
                   _check.real("delta", delta), _conversion(conversion))


def zcdp_sigma(rho, count=1):
    """The noise multiplier of ``count`` composed Gaussians whose total is rho-zCDP:
    sqrt(count / (2 rho))."""
    return _scalar(lib.dpc_zcdp_sigma_for, _check.real("rho", rho), _check.steps("count", count))


# ---- Gaussian DP (Dong, Roth & Su 2022) --------------------------------------------------------


def gdp_mu_gaussian(sigma, sensitivity=1.0):
    """mu of the Gaussian mechanism, sensitivity / sigma."""
    return _scalar(lib.dpc_gdp_mu_gaussian, _check.real("sensitivity", sensitivity),
                   _check.real("sigma", sigma))


def gdp_epsilon(mu, delta):
    """mu-GDP -> the smallest epsilon at delta (exact)."""
    return _scalar(lib.dpc_gdp_epsilon, _check.real("mu", mu), _check.real("delta", delta))


def gdp_delta(mu, epsilon):
    """mu-GDP -> delta(epsilon) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) (exact)."""
    return _scalar(lib.dpc_gdp_delta, _check.real("mu", mu), _check.real("epsilon", epsilon))


def gdp_mu(epsilon, delta):
    """(epsilon, delta) -> the largest mu with delta(epsilon; mu) <= delta."""
    return _scalar(lib.dpc_gdp_mu_for, _check.real("epsilon", epsilon),
                   _check.real("delta", delta))


def gdp_sigma(mu, count=1):
    """The noise multiplier of ``count`` composed Gaussians whose total is mu-GDP:
    sqrt(count) / mu."""
    return _scalar(lib.dpc_gdp_sigma_for, _check.real("mu", mu), _check.steps("count", count))
