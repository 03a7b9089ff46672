"""dpcorr: differentially private machine learning with correlated noise, over the C library
``libdpcorr.so`` (ctypes; no compiler needed).

Contents:

* :mod:`dpcorr.account`: epsilon, delta, noise multiplier and step calibration (PLD, RDP, GDP,
  zCDP) for DP-SGD-style events and correlated-noise mechanisms; zCDP / GDP conversions.
* :class:`dpcorr.Mechanism`: every mechanism of ``dpcorr mech`` (DP-SGD, nu-DP-FTRL, BSR, BISR,
  BLT, tree, Toeplitz, dense, strategy files) with its exact sensitivity and error.
* :func:`dpcorr.strategy.optimize`: BLT, banded and dense strategies; :func:`dpcorr.compare`:
  every mechanism side by side at n steps (the table of ``dpcorr compare``).
* :mod:`dpcorr.papers` (imported on demand): the papers' reproductions as arrays and dicts
  (``dpcorr.papers.nu.fig1()``, ..., the numbers of ``dpcorr repro nu-*``).
* :class:`dpcorr.NoiseGenerator`: streaming correlated noise into numpy arrays or torch tensors,
  bit-identical to the C library for a seed, secure (OS key) without one.
* :class:`dpcorr.TrainingPlan`: the library trainer's run decisions and privacy ledger for a
  front end that computes gradients itself.
* :mod:`dpcorr.torch` (imported on demand): ``make_private`` for PyTorch models, and
  ``CorrelatedNoise`` for users who already clip.

The noise multiplier has one meaning everywhere: the noise std per row of Z is
``noise_multiplier x clip x column_norm(C)`` (for DP-SGD: the usual per-step multiplier).
Library errors raise :class:`DpcorrValueError` (a ValueError) or :class:`DpcorrRuntimeError` (a
RuntimeError) with the library's message and the parameter at fault in ``.field``.
"""

try:
    import numpy as _numpy  # noqa: F401
except ImportError as _exc:  # pragma: no cover - depends on the interpreter
    raise ImportError("dpcorr needs numpy (Debian: python3-numpy, which scripts/setup.sh "
                      "installs; run Debian's /usr/bin/python3)") from _exc

from ._errors import DpcorrError, DpcorrRuntimeError, DpcorrValueError
from . import _lib
from . import account
from . import strategy
from .strategy import compare
from .mechanism import KINDS, Mechanism
from .noise import NoiseGenerator
from .plan import TrainingPlan, default_blt, demo_recipe

from ._lib import isa_levels

__version__ = "0.1.0"

#: The version of the loaded libdpcorr.so.
library_version = _lib.version()
#: Where libdpcorr.so was loaded from.
library_path = str(_lib.LIB_PATH)

__all__ = ["account", "strategy", "compare", "Mechanism", "KINDS", "NoiseGenerator", "TrainingPlan",
           "default_blt", "demo_recipe", "DpcorrError", "DpcorrValueError", "DpcorrRuntimeError",
           "library_version", "library_path", "__version__"]
