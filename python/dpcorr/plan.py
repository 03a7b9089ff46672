"""The privacy plan of a training run (``dpc_train_plan`` of ``include/dpcorr/train.h``): the
library trainer's run decisions (sampler, mechanism for n steps, calibrated or given noise
multiplier, accounting route, ledger) for a front end that computes the gradients itself, such
as :mod:`dpcorr.torch`. The same configuration gives the same ledger, the same batches and the
same noise as ``dpcorr train``.

A step t of such a front end (what the library's trainer does):

    I_t = plan.batch(t)                                  # example indices of step t
    g_t = sum_{i in I_t} min(1, clip / ||g_i||) g_i      # clipped per-example gradients
    h_t = plan.release(g_t, w_t)                         # w_t = noise.next(): noise_scale (B Z)_t
    optimizer step on h_t                                # post-processing

plan.release is (g_t + w_t) x (1/B) by the library's one release (dpc_noise_release): the bits
of the C trainer, the privatizer and dpcorr.torch (writing (g_t + w_t) / B by hand divides
instead, and can differ in the last bit).
"""

import ctypes
import json

import numpy as np

from . import _check
from . import _lib
from ._lib import lib
from .mechanism import Mechanism, run_params
from . import noise as _noise
from .noise import NoiseGenerator
from . import strategy as _strategy

SAMPLERS = ("auto", "fixed", "shuffle", "poisson", "cyclic-poisson", "balls-in-bins")


def default_blt(n_examples, batch_size, epochs, sampler=None, momentum=None, decay=None):
    """The BLT strategy a run uses when ``mech="blt"`` comes without theta/omega: the library's
    ``dpc_train_default_blt`` (max error) for the run's n = epochs x floor(N / B) steps, k =
    epochs participations at least b apart (b = floor(N / B) for fixed-order epochs, the groups
    for cyclic Poisson, 1 otherwise: the separation of the default BSR bands) and the optimizer's
    workload (momentum, decay = 1 - lr x weight decay; None: the library's default workload,
    dpc_mech_params_init's). Deterministic."""
    workload = tuple(_lib.default(_lib.MechParams, name) if v is None else v
                     for name, v in (("momentum", momentum), ("decay", decay)))
    plan = TrainingPlan(n_examples, batch_size=batch_size, epochs=epochs, noise_multiplier=1.0,
                        mech="blt", sampler=sampler, workload=workload, seed=0,
                        allow_large_delta=True)
    strategy = ctypes.c_void_p()
    _lib.call(lib.dpc_train_default_blt, ctypes.byref(plan._cfg), ctypes.byref(strategy))
    L = plan.ledger()
    part = _lib.Participation(_lib.PART_MINSEP, L["participations"], L["separation"])
    return _strategy._adopt_strategy(strategy, part)


class TrainingPlan:
    """The run decisions and the privacy ledger of a training run over ``n_examples`` records.

    Exactly one of ``epsilon`` (the noise multiplier is calibrated to (epsilon, delta)) and
    ``noise_multiplier`` (the ledger reports the epsilon it spends) is given.

    n_examples         N, the number of training records (>= 1)
    batch_size         B: the (expected) batch size; n = epochs x floor(N / B) steps
    epochs             passes over the data
    mech               a kind name ("identity" = DP-SGD, "nu", "bsr", "blt", ...; None: the
                       library's, {mech}) with its parameters in ``mech_params``, or a
                       :class:`dpcorr.Mechanism` (its kind
                       and parameters; rebuilt for the run's n). "blt" without theta/omega uses
                       :func:`default_blt`; "bsr" / "bisr" without ``bands``: the
                       library's default for the run (32 bands for one epoch, max(steps per
                       epoch, 16) for more under fixed-order epochs; the ledger's mechanism
                       names it).
    sampler            "auto" (Poisson for identity, fixed-order epochs otherwise; None: the
                       library's, {sampler}), "fixed", "shuffle", "poisson", "cyclic-poisson"
                       (``groups``, default the bands),
                       "balls-in-bins"; the ledger's "route" says how the run was accounted
    delta              None (default): the library's default for N (the largest power of ten
                       <= 1/(10 N), at most 1e-5), recorded as derived in the ledger
    clip               per-example L2 clip norm
    accountant         None: the library's default ({accountant}); or "rdp" for amplified
                       runs; unamplified runs use "gdp" (exact) unless "zcdp" is asked for
    seed               int: seeded (reproducible); None: secure (OS key)
    lr, momentum, weight_decay
                       the optimizer's values: BSR / BISR (and the default BLT) are the square
                       root of its workload (momentum, decay 1 - lr x weight_decay) unless
                       ``workload=(momentum, decay)`` is given
    allow_large_delta  accept delta >= 1/N (None: the library's default, {allow_large_delta})
    rng_state          the :attr:`rng` of a saved plan: resume its run (seed or secure key);
                       replaces ``seed``

    Every keyword left None is the library's default (dpc_train_config_init, from the field
    table dpc_train_config_fields): {defaults}.
    """

    def __init__(self, n_examples, *, batch_size, epochs=None, epsilon=None, delta=None,
                 noise_multiplier=None, mech=None, mech_params=None, sampler=None,
                 groups=None, clip=None, accountant=None, seed=None, lr=None, momentum=None,
                 weight_decay=None, workload=None, allow_large_delta=None, rng_state=None):
        # a keyword left None is the library's default (dpc_train_config_init, from its field
        # table dpc_train_config_fields); no copy of them here
        self.n_examples = _check.size("n_examples", n_examples, 1)
        c = _lib.TrainConfig()
        lib.dpc_train_config_init(ctypes.byref(c))
        c.batch = _check.size("batch_size", batch_size, 1)
        if epochs is not None:
            c.epochs = _check.size("epochs", epochs, 1)
        if (epsilon is None) == (noise_multiplier is None):
            raise ValueError("epsilon: give exactly one of epsilon (the noise is calibrated) and "
                             "noise_multiplier (the epsilon is reported)")
        c.epsilon = 0.0 if epsilon is None else _check.real("epsilon", epsilon)
        c.noise_multiplier = 0.0 if noise_multiplier is None else \
            _check.real("noise_multiplier", noise_multiplier)
        if epsilon is not None and not c.epsilon > 0:
            raise ValueError(f"epsilon: must be a finite number > 0, got {c.epsilon}")
        if noise_multiplier is not None and not c.noise_multiplier > 0:
            raise ValueError(f"noise_multiplier: must be a finite number > 0, got "
                             f"{c.noise_multiplier}")
        # None: the library's default, derived from N and recorded as such in the ledger
        if delta is not None:
            c.delta = _check.real("delta", delta)
            if not 0 < c.delta < 1:
                raise ValueError(f"delta: must be in (0, 1), got {c.delta}")
        if allow_large_delta is not None:
            c.allow_large_delta = int(_check.flag("allow_large_delta", allow_large_delta))
        if accountant is not None:  # None: the library's default (dpc_account_default_accountant)
            c.accountant = _lib.parse(lib.dpc_accountant_parse, "accountant", accountant)
        for name, value in (("clip", clip), ("lr", lr), ("momentum", momentum),
                            ("weight_decay", weight_decay)):
            if value is not None:
                setattr(c, name, _check.real(name, value))
        if sampler is not None:
            _check.choice("sampler", sampler, SAMPLERS)
            c.sampler = _lib.SAMPLER_AUTO if sampler == "auto" else \
                _lib.parse(lib.dpc_sampler_kind_parse, "sampler", sampler)
        if groups is not None:
            c.groups = _check.size("groups", groups)
        self._keep = []
        mech_params = dict(mech_params or {})
        if mech is None:  # the library's kind (dpc_mech_params_init's)
            mech = _lib.default(_lib.MechParams, "kind")
        if isinstance(mech, str) and mech == "blt" and "theta" not in mech_params:
            if mech_params:
                raise TypeError(f"mech_params: {', '.join(mech_params)} do not apply to the "
                                f"default BLT (give theta and omega, or a Mechanism)")
            # no coefficients: the library optimizes the run's default BLT
            # (dpc_train_default_blt), as `dpcorr train --mech blt` does
            c.mech.kind = _lib.parse(lib.dpc_mech_kind_parse, "mech", "blt")
        elif isinstance(mech, Mechanism):
            if mech_params:
                raise TypeError("mech_params: give them to the Mechanism")
            c.mech = mech._params_struct()
            self._keep.append(mech)  # its arrays back c.mech's pointers
        elif isinstance(mech, str) and mech.startswith("file:"):
            template = Mechanism(mech, None, **mech_params)  # the file's strategy (its n)
            c.mech = template._params_struct()
            self._keep.append(template)
        elif isinstance(mech, str):
            # the run's mechanism, unbuilt: validated by the library as the trainer will
            # (dpc_train_mech_check; BSR/BISR without bands take the run's default bands)
            c.mech, keep = run_params(mech, **mech_params)
            self._keep.append(keep)
        else:
            raise TypeError(f"mech: expected a kind name or a dpcorr.Mechanism, got "
                            f"{type(mech).__name__}")
        # (a dense strategy of another n than the run's is refused by the library: mech.steps)
        if workload is not None:
            if not isinstance(workload, (tuple, list)) or len(workload) != 2:
                raise TypeError(f"workload: expected (momentum, decay), got {workload!r}")
            wm, wd = workload
            c.mech.momentum = _check.real("workload", wm)
            c.mech.decay = _check.real("workload", wd)
            c.workload_explicit = 1
        self._rng = _noise.make_rng(seed) if rng_state is None else \
            _noise.rng_from_state(rng_state)
        self._ptr = ctypes.c_void_p()
        _lib.call(lib.dpc_train_plan_new, ctypes.byref(self._ptr), ctypes.byref(c),
                  self.n_examples, ctypes.byref(self._rng))
        self._cfg = lib.dpc_train_plan_config(self._ptr).contents
        self._sampler = lib.dpc_train_plan_sampler(self._ptr)
        self._idx = np.empty(int(lib.dpc_sampler_max_batch(self._sampler)), dtype=np.uint64)
        self._ledger = self._read_ledger()
        L = self._ledger
        part = _lib.Participation(_lib.PART_CYCLIC if L["participation"] == "cyclic"
                                  else _lib.PART_MINSEP, L["participations"], L["separation"])
        self.mechanism = Mechanism._adopt(lib.dpc_train_plan_mech(self._ptr), part, owner=self)

    def __del__(self):
        ptr = getattr(self, "_ptr", None)
        if ptr and lib is not None:
            lib.dpc_train_plan_free(ptr)
            self._ptr = ctypes.c_void_p()

    def _read_ledger(self):
        L = lib.dpc_train_plan_ledger(self._ptr)
        n = lib.dpc_ledger_json(L, None, 0)
        buf = ctypes.create_string_buffer(n + 1)
        lib.dpc_ledger_json(L, buf, n + 1)
        return json.loads(buf.value.decode())

    # ---- what the plan decided -------------------------------------------------------------

    def ledger(self):
        """The privacy ledger (the fields of the C trainer's report: algorithm, mechanism,
        sampler, route, accountant, calibration, neighbor, participation, participations,
        separation, q, rounds, amplified, noise_multiplier / sigma, sensitivity,
        sensitivity_exact, column_norm, noise_std_per_unit_clip, epsilon, delta,
        epsilon_target, epsilon_paper, steps, steps_per_epoch, expected_batch, seed_mode and
        seed), as a dict (a copy)."""
        return dict(self._ledger)

    def epsilon(self, step=None):
        """The epsilon of the whole run (default), or of what the first ``step`` steps release
        (for step < n the PLD accountant uses a 10x coarser grid: a valid, slightly looser
        bound)."""
        if step is None:
            return self._ledger["epsilon"]
        out = ctypes.c_double()
        # a step past the run's end is not a step of this run: refused, not extrapolated
        step = _check.size("step", step, 0, self.steps)
        _lib.call(lib.dpc_train_plan_epsilon_at, self._ptr, step, ctypes.byref(out))
        return out.value

    @property
    def steps(self):
        """n: the number of steps of the run."""
        return int(self._ledger["steps"])

    @property
    def steps_per_epoch(self):
        """floor(N / B): the steps that process N examples (on average)."""
        return int(self._ledger["steps_per_epoch"])

    @property
    def expected_batch(self):
        """B: the divisor of the noisy gradient sum."""
        return float(self._ledger["expected_batch"])

    @property
    def noise_multiplier(self):
        """z, calibrated or given."""
        return float(self._ledger["noise_multiplier"])

    @property
    def noise_scale(self):
        """clip x noise std per unit clip: the std of each entry of Z in gradient-sum units."""
        return float(lib.dpc_train_plan_noise_scale(self._ptr))

    @property
    def sampler(self):
        """The resolved sampler ("poisson", "fixed", "shuffle", "cyclic-poisson")."""
        return _lib.text(lib.dpc_sampler_kind_name(self._cfg.sampler))

    @property
    def clip(self):
        """The per-example clip norm."""
        return float(self._cfg.clip)

    @property
    def rng(self):
        """The root generator's identity (seed, or the secure key: keep it secret)."""
        return _noise.rng_state(self._rng)

    def batch(self, step):
        """The example indices of ``step`` (0 <= step < n) as an int64 numpy array: a pure
        function of (key, step), in increasing order for Poisson samplers."""
        count = _lib.c_size_t()
        _lib.call(lib.dpc_sampler_batch, self._sampler, _check.size("step", step),
                  self._idx.ctypes.data, ctypes.byref(count), rename={"t": "step"})
        return self._idx[:count.value].astype(np.int64)

    def release(self, clipped_sum, noise_row, out=None, *, scaled=True):
        """Step t's release h_t = (g_t + w_t) x (1/B) (B = :attr:`expected_batch`), computed by
        the library's one release kernel (``dpc_noise_release``), so a front end built on the
        plan gives the bits of the C trainer, the privatizer and :mod:`dpcorr.torch` for the
        same clipped sum and key. ``clipped_sum`` g_t and ``noise_row`` w_t: arrays of one
        length, read as float64 (exactly); ``noise_row`` is a row of
        ``noise_generator(dim)`` (``scaled=False``: a raw row (B Z)_t of
        ``noise_generator(dim, scaled=False)``, scaled here by :attr:`noise_scale`). Returns
        ``out`` (a new float64 array unless given; a C-contiguous float64 numpy array, which may
        be either input). A NaN or inf in ``clipped_sum`` raises
        :class:`dpcorr.DpcorrValueError` naming it (nothing released)."""
        g = np.ascontiguousarray(clipped_sum, dtype=np.float64).reshape(-1)
        w = np.ascontiguousarray(noise_row, dtype=np.float64).reshape(-1)
        if g.size != w.size:
            raise ValueError(f"clipped_sum: {g.size} values, noise_row has {w.size}")
        if out is None:
            out = np.empty_like(w)
        # a scaled row already holds noise_scale x (B Z)_t, rounded once as the kernel rounds
        # it: a factor of 1 adds it unchanged (1 x w = w exactly)
        scale = 1.0 if _check.flag("scaled", scaled) else self.noise_scale
        return _lib.release(g, w, scale, 1.0 / self.expected_batch, out)

    def noise_generator(self, dim, form=None, memory_budget=None, scaled=True):
        """The run's noise over coordinates [0, dim): rows noise_scale x (B Z)_t from the
        plan's key, exactly the noise the library's trainer adds to a model with ``dim``
        parameters (``scaled=False``: the raw rows (B Z)_t, to be multiplied by
        :attr:`noise_scale` by the caller). ``form`` ("auto", "buffer", "replay") and
        ``memory_budget`` (bytes of buffer state) left None are the library's defaults
        (dpc_noise_config_init); the noise is the same in every form."""
        return NoiseGenerator._with_scale(self.mechanism, _check.size("dim", dim, 1), self._rng,
                                          self.noise_scale if _check.flag("scaled", scaled)
                                          else 1.0, form, memory_budget)


# the defaults the docstring names are the library's (its field tables; generated, not copied)
TrainingPlan.__doc__ = TrainingPlan.__doc__.replace(
    "{mech}", _lib.default_text(_lib.MechParams, "kind")).replace(
    "{sampler}", _lib.default_text(_lib.TrainConfig, "sampler")).replace(
    "{accountant}", _lib.default_text(_lib.TrainConfig, "accountant")).replace(
    "{allow_large_delta}", _lib.default_text(_lib.TrainConfig, "allow_large_delta")).replace(
    "{defaults}", _lib.defaults_doc(_lib.TrainConfig, (
        "epochs", "groups", "clip", "accountant", "lr", "momentum", "weight_decay")))


# ---- the demos' recipes (dpc_train_demo_setup, dpc_train_demo_frontier) -------------------------


class _Demo(ctypes.Structure):
    """dpc_train_demo (train.h). Not in the ABI list: python/tests/test_demo_recipe.py checks
    its offsets against a program compiled with the header."""
    _fields_ = [("cfg", _lib.TrainConfig), ("model", ctypes.c_char_p),
                ("label", ctypes.c_char_p), ("name", ctypes.c_char_p),
                ("features", ctypes.c_char_p)]


lib.dpc_train_demo_setup.restype = ctypes.c_int
lib.dpc_train_demo_setup.argtypes = [ctypes.c_int, _lib.P(_Demo), _lib.P(_lib.Error)]
lib.dpc_train_demo_frontier.restype, lib.dpc_train_demo_frontier.argtypes = None, [_lib.P(_Demo)]


def _demos():
    """{name: dpc_train_demo}: the README demo's runs (dpc_train_demo_setup 0, 1, ...) and the
    frontier; the names are the library's file stems ("dpsgd", "bsr", "frontier")."""
    out, run = {}, 0
    while True:
        d = _Demo()
        if lib.dpc_train_demo_setup(run, ctypes.byref(d), None):  # past the last run
            break
        out[d.name.decode()] = d
        run += 1
    d = _Demo()
    lib.dpc_train_demo_frontier(ctypes.byref(d))
    out[d.name.decode()] = d
    return out


def _config_dict(mirror, obj, prefix=""):
    """The numeric and enum fields of a generated mirror's struct, by the library's names
    ("mech.kind", "lr"), as `--dry-run` echoes them: enums (and the sampler) by name; the
    pointers, strings and bytes (a run's data, not a recipe's) left out."""
    out = {}
    for attr, f in mirror._rows_.items():
        name, value = prefix + f.name.decode(), getattr(obj, attr)
        if f.type == _lib.FIELD_STRUCT:
            out.update(_config_dict(dict(mirror._fields_)[attr], value, name + "."))
        elif f.type == _lib.FIELD_ENUM:
            out[name] = _lib.enum_names(mirror, attr)[value]
        elif name == "sampler":  # an int with its own name table (sampler.h)
            out[name] = _lib.text(lib.dpc_sampler_kind_name(value))
        elif f.type == _lib.FIELD_BOOL:
            out[name] = bool(value)
        elif f.type in _lib.NUMERIC_TYPES:
            out[name] = value
    return out


def demo_recipe(run):
    """The recipe of a run of ``dpcorr demo`` (doc/training.md), from the library: "dpsgd" and
    "bsr" (the README demo: an MLP on Fashion-MNIST at (3, 1e-5), dpc_train_demo_setup) or
    "frontier" (``dpcorr demo --frontier``: ScatterNet features, a linear model, BSR under cyclic
    Poisson sampling, dpc_train_demo_frontier). A front end that trains the same model
    (:mod:`dpcorr.torch`) takes its hyperparameters from here instead of copying them.

    Returns a dict: ``name`` (the run's file stem), ``label`` (its name in tables), ``model``
    (the library's model spec, e.g. "mlp:256:tanh"), ``features`` (a feature spec, or None),
    and ``config``: the run's dpc_train_config before the run resolves it (the trainer's
    defaults with the recipe's values), every numeric field by its library name ("batch",
    "lr", "mech.kind", "mech.bands", ...; enums by name). ValueError naming ``run`` for
    another name."""
    demos = _demos()
    if run not in demos:
        _check.refuse("run", f"expected one of {', '.join(map(repr, demos))}, got {run!r}")
    d = demos[run]
    return {"name": run, "label": d.label.decode(), "model": d.model.decode(),
            "features": d.features.decode() if d.features else None,
            "config": _config_dict(_lib.TrainConfig, d.cfg)}
