"""Privacy accounting (``include/dpcorr/account.h``): epsilon, delta, noise and step calibration
for (subsampled, composed) Gaussian mechanisms and for correlated-noise mechanisms, and the zCDP
and Gaussian-DP conversions. The same library calls as ``dpcorr account``, so the numbers are
the CLI's.

The noise multiplier ``sigma`` has one meaning (account.h): noise std / (clip x sensitivity of
one step). Without ``mech``, the event is ``steps`` compositions of a Gaussian with noise
multiplier sigma on a batch drawn with rate ``q`` (Poisson, or a fixed-size batch with
``sampling="fixed"``; q = 1: no sampling). With ``mech`` (a :class:`dpcorr.Mechanism`, or a kind
name plus its parameters), each row of Z has std sigma x clip x column_norm(C), and the run is
accounted as in the library's trainer: one Gaussian with the mechanism's sensitivity for its
participation pattern (q = 1), or, with Poisson rate q < 1 and a cyclic pattern whose period is
at least C's bands, amplified banded MF.

Accountants: "pld" (privacy loss distributions; the default), "rdp" (Renyi DP), "gdp" (Gaussian
DP, exact without sampling; the default for a mechanism with q = 1), "zcdp". Options: ``orders``
and ``refine`` (rdp), ``interval``, ``tail`` and ``disc`` (pld: "connect-dots", "round-up" or the
optimistic "round-down"), ``conversion`` (zcdp: "tight" or "bun-steinke").

Every function returns a float; ``details=True`` returns a dict with everything the CLI's
``--json`` prints (epsilon, delta, sigma, steps, q, accountant, neighbor, order / rho / mu, and
the mechanism's sensitivity, rounds, noise std, ...).
"""

import ctypes
import math

from . import _check
from . import _lib
from ._lib import lib
from .mechanism import Mechanism

ACCOUNTANTS = ("pld", "rdp", "gdp", "zcdp")
_CONVERSIONS = {"tight": 0, "bun-steinke": 1}
_OPTS = ("sampling", "neighbor", "sensitivity", "orders", "refine", "interval", "tail", "disc",
         "conversion")


class _Query:
    """The event and accountant options of one call (shared by the four modes)."""

    def __init__(self, q, steps, accountant, mech, opts, mech_params, need_steps=True):
        self.q = _check.real("q", q)
        if not (0.0 < self.q <= 1.0):
            raise ValueError(f"q: must be in (0, 1], got {self.q}")
        unknown = [k for k in opts if k not in _OPTS]
        if unknown:
            raise TypeError(f"unexpected keyword argument(s) {', '.join(unknown)}")
        self.mech = self._mechanism(mech, steps, mech_params, need_steps)
        self.steps = self.mech.steps if self.mech is not None else (
            _check.steps("steps", steps) if need_steps else 1)
        if accountant is None:
            accountant = "gdp" if self.mech is not None and self.q == 1.0 else "pld"
        self.accountant = accountant
        acc = _lib.parse(lib.dpc_accountant_parse, "accountant", accountant)
        o = _lib.AccountOpts()
        lib.dpc_account_opts_init(ctypes.byref(o), acc)
        self._orders = None
        if opts.get("orders") is not None:
            self._orders = _check.vector("orders", opts["orders"])
            o.orders = self._orders.ctypes.data_as(_lib.P(_lib.c_double))
            o.norders = self._orders.size
        o.rdp_refine = int(_check.flag("refine", opts.get("refine", False)))
        if "interval" in opts:
            o.pld_interval = _check.real("interval", opts["interval"])
        if "tail" in opts:
            o.pld_tail = _check.real("tail", opts["tail"])
        if "disc" in opts:
            o.pld_disc = _lib.parse(lib.dpc_pld_disc_parse, "disc", opts["disc"])
        o.zcdp_conv = _conversion(opts.get("conversion", "tight"))
        self.opts = o
        neighbor = opts.get("neighbor")
        if neighbor is None:  # "" is not a default: the library's parser refuses it
            neighbor = "zero-out" if self.mech is not None else "add-remove"
        self.neighbor = neighbor
        self.neighbor_code = _lib.parse(lib.dpc_neighbor_parse, "neighbor", neighbor)
        self.sensitivity = _check.real("sensitivity", opts.get("sensitivity", 1.0))
        sampling = opts.get("sampling", "poisson")
        self.sampling = _lib.parse(lib.dpc_sampling_parse, "sampling", sampling)
        if self.sampling == 0:
            raise ValueError("sampling: expected poisson or fixed (q = 1 means no sampling)")
        if self.mech is not None and sampling == "fixed":
            raise ValueError("sampling: mechanisms are amplified by (cyclic) Poisson sampling "
                             "only")
        self.info = None

    @staticmethod
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

    def event(self, sigma, steps=None):
        """The dpc_gauss_event for noise multiplier sigma (and `steps` compositions)."""
        ev = _lib.GaussEvent()
        sigma = _check.real("sigma", sigma)
        if self.mech is None:
            lib.dpc_gauss_event_init(ctypes.byref(ev))
            ev.sigma = sigma
            ev.sensitivity = self.sensitivity
            ev.sampling = self.sampling if self.q < 1.0 else 0
            ev.q = self.q
            ev.count = self.steps if steps is None else steps
            return ev
        mech = self.mech if steps is None or steps == self.mech.steps else \
            self.mech.with_steps(steps)
        info = _lib.MechInfo()
        _lib.call(lib.dpc_account_mech_event, mech._ptr, ctypes.byref(mech.participation),
                  sigma, self.q, ctypes.byref(ev), ctypes.byref(info))
        self.info = info
        return ev

    def run(self, fn, ev, value):
        """dpc_account_epsilon / dpc_account_delta on the event."""
        e = _lib.Event(self.neighbor_code, 1, ctypes.pointer(ev))
        r = _lib.AccountResult()
        # the event has one part, built from this function's arguments: name them as the caller
        # did ("sigma", not the library's "parts[0].sigma")
        _lib.call(fn, ctypes.byref(e), ctypes.byref(self.opts), value, ctypes.byref(r),
                  rename={"parts[0].count": "steps", "parts[0].": ""})
        return r

    def report(self, r, sigma, steps, details, value):
        if not details:
            return value
        out = {"accountant": self.accountant, "epsilon": r.epsilon, "delta": r.delta,
               "sigma": sigma, "steps": steps, "q": self.q, "neighbor": self.neighbor,
               "upper_bound": bool(r.upper_bound)}
        for key in ("order", "rho", "mu"):
            v = getattr(r, key)
            if not math.isnan(v):
                out[key] = v
        if self.info is not None:
            i = self.info
            out.update(mech=self.mech.kind, participations=self.mech.participations,
                       min_sep=self.mech.min_sep, sensitivity=i.sensitivity,
                       sensitivity_exact=bool(i.sensitivity_exact), amplified=bool(i.amplified),
                       rounds=int(i.rounds), noise_multiplier=i.noise_multiplier,
                       column_norm=i.column_norm, noise_std_per_unit_clip=i.noise_std,
                       run_sigma=i.run_sigma)
        return out


def _conversion(name):
    if name not in _CONVERSIONS:
        raise ValueError(f"conversion: expected tight or bun-steinke, got {name!r}")
    return _CONVERSIONS[name]


def _required(name, value):
    if value is None:
        raise TypeError(f"{name}: required")
    return value


def epsilon(sigma, q=1.0, steps=None, delta=None, accountant=None, mech=None, *, details=False,
            **kwargs):
    """The smallest epsilon for which the run is (epsilon, delta)-DP.

    sigma       noise multiplier z > 0
    q           sampling rate in (0, 1] (1: no sampling)
    steps       compositions (without mech; with a kind name also its n)
    delta       in (0, 1)
    accountant  "pld" | "rdp" | "gdp" | "zcdp" (default: pld; gdp for a mechanism with q = 1)
    mech        None, a :class:`dpcorr.Mechanism`, or a kind name with its parameters as keyword
                arguments (nu=, bands=, participations=, min_sep=, cyclic=, ...)

    Example: ``epsilon(1.1, q=0.01, steps=10000, delta=1e-5)`` (DP-SGD).
    """
    opts = {k: kwargs.pop(k) for k in list(kwargs) if k in _OPTS}
    qr = _Query(q, steps, accountant, mech, opts, kwargs)
    delta = _check.real("delta", _required("delta", delta))
    sigma = _check.real("sigma", sigma)
    r = qr.run(lib.dpc_account_epsilon, qr.event(sigma), delta)
    return qr.report(r, sigma, qr.steps, details, r.epsilon)


def delta(sigma, q=1.0, steps=None, epsilon=None, accountant=None, mech=None, *, details=False,
          **kwargs):
    """The smallest delta for which the run is (epsilon, delta)-DP (epsilon >= 0). Arguments as
    :func:`epsilon`."""
    opts = {k: kwargs.pop(k) for k in list(kwargs) if k in _OPTS}
    qr = _Query(q, steps, accountant, mech, opts, kwargs)
    eps = _check.real("epsilon", _required("epsilon", epsilon))
    sigma = _check.real("sigma", sigma)
    r = qr.run(lib.dpc_account_delta, qr.event(sigma), eps)
    return qr.report(r, sigma, qr.steps, details, r.delta)


def sigma(epsilon, delta, q=1.0, steps=None, accountant=None, mech=None, *, details=False,
          **kwargs):
    """The smallest noise multiplier for which the run is (epsilon, delta)-DP (epsilon > 0), on
    the private side of the crossing. Arguments as :func:`epsilon`."""
    opts = {k: kwargs.pop(k) for k in list(kwargs) if k in _OPTS}
    qr = _Query(q, steps, accountant, mech, opts, kwargs)
    eps = _check.real("epsilon", epsilon)
    dlt = _check.real("delta", delta)
    z = ctypes.c_double()
    if qr.mech is not None:
        _lib.call(lib.dpc_account_mech_calibrate, qr.mech._ptr,
                  ctypes.byref(qr.mech.participation), qr.q, ctypes.byref(qr.opts), eps, dlt,
                  ctypes.byref(z), None, None)
    else:
        ev = qr.event(1.0)
        e = _lib.Event(qr.neighbor_code, 1, ctypes.pointer(ev))
        _lib.call(lib.dpc_account_calibrate_sigma, ctypes.byref(e), ctypes.byref(qr.opts), eps,
                  dlt, ctypes.byref(z), rename={"parts[0].count": "steps", "parts[0].": ""})
    if not details:
        return z.value
    r = qr.run(lib.dpc_account_epsilon, qr.event(z.value), dlt)
    return qr.report(r, z.value, qr.steps, True, z.value)


def steps(sigma, epsilon, delta, q=1.0, accountant=None, mech=None, *, max_steps=10_000_000,
          details=False, **kwargs):
    """The largest number of steps (<= ``max_steps``) for which the run is (epsilon, delta)-DP.
    With a mechanism its n is searched too (C, and so its sensitivity, depend on n; dense
    strategies have one n only: ValueError). Other arguments as :func:`epsilon`."""
    opts = {k: kwargs.pop(k) for k in list(kwargs) if k in _OPTS}
    qr = _Query(q, None, accountant, mech, opts, kwargs, need_steps=False)
    z = _check.real("sigma", sigma)
    eps = _check.real("epsilon", epsilon)
    dlt = _check.real("delta", delta)
    cap = _check.steps("max_steps", max_steps)
    n = _lib.c_size_t()
    if qr.mech is not None:
        if qr.mech.kind == "dense":
            raise ValueError("mech: dense is defined for one n only; steps needs a mechanism "
                             "defined for every n")
        p = qr.mech._params_struct()
        _lib.call(lib.dpc_account_mech_steps, ctypes.byref(p), ctypes.byref(qr.mech.participation),
                  z, qr.q, ctypes.byref(qr.opts), eps, dlt, cap, ctypes.byref(n))
    else:
        ev = qr.event(z, steps=1)
        e = _lib.Event(qr.neighbor_code, 1, ctypes.pointer(ev))
        _lib.call(lib.dpc_account_calibrate_steps, ctypes.byref(e), 0, ctypes.byref(qr.opts), eps,
                  dlt, cap, ctypes.byref(n))
    if not details:
        return int(n.value)
    r = qr.run(lib.dpc_account_epsilon, qr.event(z, steps=n.value), dlt)
    return qr.report(r, z, int(n.value), True, int(n.value))


# ---- zCDP (Bun & Steinke 2016) -----------------------------------------------------------------


def _scalar(fn, *args):
    out = ctypes.c_double()
    _lib.call(fn, *args, ctypes.byref(out))
    return out.value


def zcdp_rho_gaussian(sigma, sensitivity=1.0):
    """rho of the Gaussian mechanism, sensitivity^2 / (2 sigma^2)."""
    return _scalar(lib.dpc_zcdp_rho_gaussian, _check.real("sensitivity", sensitivity),
                   _check.real("sigma", sigma))


def zcdp_epsilon(rho, delta, conversion="tight"):
    """rho-zCDP -> the smallest epsilon at delta (tight: Canonne, Kamath & Steinke 2020;
    "bun-steinke": rho + 2 sqrt(rho log(1/delta)))."""
    out = ctypes.c_double()
    _lib.call(lib.dpc_zcdp_epsilon, _check.real("rho", rho), _check.real("delta", delta),
              _conversion(conversion), ctypes.byref(out), None)
    return out.value


def zcdp_delta(rho, epsilon, conversion="tight"):
    """rho-zCDP -> the smallest delta at epsilon."""
    return _scalar(lib.dpc_zcdp_delta, _check.real("rho", rho), _check.real("epsilon", epsilon),
                   _conversion(conversion))


def zcdp_rho(epsilon, delta, conversion="tight"):
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
