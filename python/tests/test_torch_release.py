"""One release formula (issue 36 item 3): dpcorr.torch's update, the C privatizer's release and
TrainingPlan.release (dpc_noise_release, through ctypes) are the same bits for the same clipped
sums and keys; the C trainer's half of the same statement is tests/test_release.c (trainer =
privatizer, bit for bit)."""

import ctypes
from ctypes import byref, c_double, c_int, c_size_t, c_void_p

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import dpcorr
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
    rows = eng.plan.noise_generator(eng.dim)  # the plan's own rows from the same key
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
            hp = eng.plan.release(s, rows.next())  # a front end built on the plan
            assert (hp.view(np.uint64) == h.view(np.uint64)).all(), (mech, steps)
            assert np.any(grad != s / batch)  # noise was added
            steps += 1
            if steps == 4:
                break
        assert steps == 4
    finally:
        lib.dpc_privatize_free(pv)


def test_release_kernel_is_the_formula_and_refuses_nonfinite():
    rng = np.random.default_rng(7)
    g = rng.standard_normal(5000) * 10.0 ** rng.integers(-5, 5, 5000)
    z = rng.standard_normal(5000)
    for s, inv_b in ((1.7, 1.0 / 24), (0.3, 1.0), (2.0, 1.0 / 3)):
        want = (g + s * z) * inv_b  # numpy: each operation rounded once, in this order
        got = _lib.release(g, z, s, inv_b, np.empty_like(g))
        assert (got.view(np.uint64) == want.view(np.uint64)).all()
    bad, row = g.copy(), z.copy()
    bad[17] = np.nan
    with pytest.raises(ValueError) as exc:
        _lib.release(bad, row, 1.0, 0.5, row)
    assert exc.value.field == "clipped_sum" and "coordinate 17" in str(exc.value)
    assert (row == z).all()  # refused before anything was written
    bad[17] = -np.inf
    with pytest.raises(ValueError, match="clipped_sum"):
        _lib.release(bad, row, 1.0, 0.5, np.empty_like(g))
    with pytest.raises(ValueError, match="noise_scale"):
        _lib.release(g, z, float("nan"), 0.5, np.empty_like(g))


def test_plan_release_is_the_kernel():
    plan = dpcorr.TrainingPlan(1000, batch_size=50, epochs=1, noise_multiplier=1.1, clip=0.8,
                               mech="blt", seed=4)
    dim = 33
    raw, scaled = plan.noise_generator(dim, scaled=False), plan.noise_generator(dim)
    g = np.random.default_rng(1).standard_normal(dim)
    for _ in range(3):
        z, w = raw.next(), scaled.next()
        want = _lib.release(g, z, plan.noise_scale, 1.0 / plan.expected_batch,
                            np.empty(dim))
        assert (plan.release(g, w).view(np.uint64) == want.view(np.uint64)).all()
        assert (plan.release(g, z, scaled=False).view(np.uint64) == want.view(np.uint64)).all()
    with pytest.raises(ValueError, match="clipped_sum"):
        plan.release(np.full(dim, np.nan), w)
    with pytest.raises(ValueError, match="noise_row has 32"):
        plan.release(g, w[:32])
