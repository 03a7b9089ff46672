"""One release formula (issue 36 item 3): dpcorr.torch's update is the C privatizer's release
(dpc_noise_release) for the same clipped sums and keys, bit for bit; the C trainer's half of the
same statement is tests/test_release.c (trainer = privatizer)."""

import ctypes
from ctypes import byref, c_double, c_int, c_size_t, c_void_p

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import dpcorr.torch as dt
from dpcorr import _lib

torch.set_num_threads(1)
lib = _lib.lib


class PrivatizeConfig(ctypes.Structure):
    """dpc_privatize_config (privatize.h), for this test only (its size checked below)."""
    _fields_ = [("dim", c_size_t), ("n_examples", c_size_t), ("batch", c_size_t),
                ("epochs", c_size_t), ("epsilon", c_double), ("delta", c_double),
                ("noise_multiplier", c_double), ("clip", c_double), ("mech", _lib.MechParams),
                ("sampler", c_int), ("groups", c_size_t), ("accountant", c_int), ("isa", c_int)]


for name, (res, args) in {
        "dpc_privatize_config_init": (None, [c_void_p]),
        "dpc_privatize_new": (c_int, [c_void_p, c_void_p, c_void_p, c_void_p]),
        "dpc_privatize_free": (None, [c_void_p]),
        "dpc_privatize_batch": (c_int, [c_void_p, c_void_p, c_void_p, c_void_p]),
        "dpc_privatize_step": (c_int, [c_void_p, c_void_p, c_void_p, c_void_p])}.items():
    getattr(lib, name).restype, getattr(lib, name).argtypes = res, args


def code(parse, s):
    v = c_int()
    _lib.call(parse, s.encode(), byref(v))
    return v.value


@pytest.mark.parametrize("mech", ["blt", "nu", "identity"])
def test_torch_update_is_the_privatizers_release(mech):
    have = lib.dpc_abi_sizeof(b"dpc_privatize_config")
    assert have == ctypes.sizeof(PrivatizeConfig), "the test's mirror is out of date"
    fn = lib.dpc_privatize_config_fields
    fn.restype, fn.argtypes = ctypes.POINTER(_lib.FieldTable), []
    _lib.check_mirror(PrivatizeConfig, "dpc_privatize_config_fields")  # names, offsets, sizes
    n, batch, clip, z = 240, 24, 0.5, 0.7
    g = torch.Generator().manual_seed(0)
    x = torch.randn(n, 6, generator=g, dtype=torch.float64)
    ds = torch.utils.data.TensorDataset(x, (x[:, 0] + x[:, 1] > 0).long())
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.Tanh(),
                                torch.nn.Linear(8, 2)).double()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)  # no momentum: the plain workload
    kw = dict(nu=0.05) if mech == "nu" else {}
    model, opt, loader, eng = dt.make_private(
        model, opt, ds, noise_multiplier=z, batch_size=batch, epochs=1, clip=clip, mech=mech,
        seed=3, sampler="fixed", **({"mech_params": kw} if kw else {}))
    eng.keep_clipped_sum = True

    cfg = PrivatizeConfig()
    lib.dpc_privatize_config_init(byref(cfg))
    cfg.dim, cfg.n_examples, cfg.batch, cfg.epochs = eng.dim, n, batch, 1
    cfg.noise_multiplier, cfg.clip = z, clip
    cfg.mech.kind = code(lib.dpc_mech_kind_parse, mech)
    if mech == "nu":
        cfg.mech.nu = 0.05
    cfg.sampler = code(lib.dpc_sampler_kind_parse, "fixed")
    rng = _lib.Rng()
    lib.dpc_rng_seed(byref(rng), 3)
    pv = c_void_p()
    _lib.call(lib.dpc_privatize_new, byref(pv), byref(cfg), byref(rng))
    try:
        idx = np.empty(n, dtype=np.uintp)
        h = np.empty(eng.dim, dtype=np.float64)
        steps = 0
        for xb, yb in loader:
            count = c_size_t()
            _lib.call(lib.dpc_privatize_batch, pv, idx.ctypes.data, byref(count))
            assert list(idx[:count.value]) == [int(i) for i in eng.plan.batch(eng.steps_done)]
            opt.zero_grad()
            dt.backward(F.cross_entropy(model(xb), yb, reduction="none"))
            opt.step()  # the release: p.grad = the noised update (kept after the step)
            s = eng.last_clipped_sum.numpy().copy()
            _lib.call(lib.dpc_privatize_step, pv, s.ctypes.data, h.ctypes.data)
            grad = torch.cat([p.grad.reshape(-1) for p in model.parameters()]).numpy()
            same = grad.view(np.uint64) == h.view(np.uint64)
            assert same.all(), (mech, steps, int((~same).sum()), eng.dim)
            assert np.any(grad != s / batch)  # noise was added
            steps += 1
            if steps == 4:
                break
        assert steps == 4
    finally:
        lib.dpc_privatize_free(pv)
