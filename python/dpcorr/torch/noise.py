"""``CorrelatedNoise``: dpcorr's correlated noise for gradients a user already clips (for
example with Opacus with its own noise turned off)."""

import numpy as np
import torch

from .. import _check, _lib
from ..mechanism import Mechanism
from ..noise import NoiseGenerator


class CorrelatedNoise:
    """Adds step t's correlated noise to a list of gradient tensors, one step per call.

    ``CorrelatedNoise(params, mech, noise_multiplier, clip, seed=None, *,
    expected_batch_size=1, form=None)`` (form None: the library's default, as NoiseGenerator)

    params               the parameters (or any tensors) whose gradients get noise; their
                         concatenation, in this order, is the noise's coordinate vector
    mech                 a :class:`dpcorr.Mechanism`: its n is the number of steps
    noise_multiplier     z: the noise std per row of Z is z x clip x column_norm(C) (dpcorr's
                         one meaning; account for the run with dpcorr.account and the same
                         mechanism, participation pattern and z)
    clip                 the per-example clip norm of the gradients
    seed                 int: reproducible, bit-identical to the C library; None: secure
    expected_batch_size  the noise is divided by it: 1 (default) for gradients that are sums of
                         clipped per-example gradients, the expected batch size for averages

    ``add_(grads=None)`` adds the noise of the current step in place (``grads``: a list of
    tensors shaped like ``params``; default: each parameter's ``.grad``) and advances; a NaN or
    infinite entry is refused (ValueError, the step and its noise unspent).
    ``state_dict()`` / ``load_state_dict()`` checkpoint the generator.
    """

    def __init__(self, params, mech, noise_multiplier, clip, seed=None, *,
                 expected_batch_size=1, form=None):
        self.params = list(params)
        if not self.params or not all(isinstance(p, torch.Tensor) for p in self.params):
            raise TypeError("params: expected a non-empty sequence of tensors")
        if not isinstance(mech, Mechanism):
            raise TypeError(f"mech: expected a dpcorr.Mechanism, got {type(mech).__name__}")
        self.dim = sum(p.numel() for p in self.params)
        self.generator = NoiseGenerator(mech, self.dim, seed, noise_multiplier, clip=clip,
                                        form=form)
        b = _check.real("expected_batch_size", expected_batch_size)
        if not b > 0:
            raise ValueError(f"expected_batch_size: must be > 0, got {b}")
        self.expected_batch_size = b
        self._buf = np.empty(self.dim, dtype=np.float64)
        self._w = torch.from_numpy(self._buf)

    @property
    def step(self):
        """The step whose noise the next :meth:`add_` adds."""
        return self.generator.step

    def add_(self, grads=None):
        """Adds this step's noise (divided by ``expected_batch_size``) to ``grads`` in place and
        returns them."""
        if grads is None:
            grads = [p.grad for p in self.params]
            if any(g is None for g in grads):
                raise ValueError("grads: a parameter has no .grad; run backward first or pass "
                                 "the gradients")
        grads = list(grads)
        if len(grads) != len(self.params) or any(
                g.shape != p.shape for g, p in zip(grads, self.params)):
            raise ValueError("grads: expected one tensor shaped like each parameter")
        # a non-finite gradient would make the released tensor NaN/inf whatever the noise (one
        # example deciding the output): refused before the step's noise is drawn, as the C
        # privatizer refuses a non-finite clipped sum
        for k, g in enumerate(grads):
            if not bool(torch.isfinite(g).all()):
                raise ValueError(f"grads: tensor {k} has a non-finite entry at step "
                                 f"{self.generator.step}; refusing the step (nothing was added)")
        self.generator.next(out=self._buf)
        alpha = 1.0 / self.expected_batch_size
        off = 0
        with torch.no_grad():
            for g in grads:
                n = g.numel()
                # the library's release (dpc_noise_release: g + alpha w, float64, the trainer's
                # and the privatizer's formula), rounded once to g's dtype and device
                g64 = g.detach().to("cpu", dtype=torch.float64, copy=True).reshape(-1)
                _lib.release(g64.numpy(), self._buf[off:off + n], alpha, 1.0, g64.numpy())
                g.copy_(g64.view(g.shape))
                off += n
        return grads

    def state_dict(self):
        """The generator's state (:meth:`dpcorr.NoiseGenerator.state_dict`)."""
        return self.generator.state_dict()

    def load_state_dict(self, state):
        """Restores :meth:`state_dict`."""
        self.generator.load_state_dict(state)
