"""dpcorr for PyTorch (torch 1.13 with functorch, as in Debian's python3-torch).

* :func:`make_private`: per-example losses (``engine.backward(losses)``, proven per example by
  construction: _proof.py), per-example gradients, clipping, dpcorr's correlated noise,
  dpcorr's sampler and accountant around a model, an optimizer and a dataset; the same
  configuration reports the same epsilon as ``dpcorr train``.
* :func:`validate` / :func:`fix`: the modules that mix the examples of a batch, and their
  replacement (BatchNorm -> GroupNorm).
* :class:`CorrelatedNoise`: only the noise, for gradients clipped elsewhere.
"""

from .engine import DPDataLoader, DPOptimizer, PrivacyEngine, backward, make_private
from ._proof import NotPerExampleError
from .noise import CorrelatedNoise
from .validate import fix, validate

__all__ = ["make_private", "backward", "PrivacyEngine", "DPOptimizer", "DPDataLoader", "CorrelatedNoise",
           "NotPerExampleError",
           "validate", "fix"]
