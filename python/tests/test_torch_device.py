"""dpcorr.torch, device and dtype (issue 27, item 6): the noise thread gives the same bits as
making the noise in optimizer.step(); the staged (device) path gives the CPU path's bits; a
float32 / bfloat16 model's gradient is the float64 noised update rounded once; the thread stops
on close() and on garbage collection; checkpoints taken while a step's noise is out resume bit
for bit."""

import gc
import threading

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import dpcorr.torch as dt

torch.set_num_threads(1)


def data(n=240, d=6, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, d, generator=g)
    y = (x[:, 0] + x[:, 1] > 0).long()
    return torch.utils.data.TensorDataset(x, y)


def mlp(dtype=torch.float32, seed=0):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.Tanh(),
                               torch.nn.Linear(8, 2)).to(dtype)


def run(steps=None, dtype=torch.float32, lr=0.3, staged=False, **kw):
    ds = data()
    if dtype != torch.float32:
        ds = torch.utils.data.TensorDataset(ds.tensors[0].to(dtype), ds.tensors[1])
    model = mlp(dtype)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    args = dict(noise_multiplier=0.7, batch_size=24, epochs=2, clip=0.5, mech="blt", seed=3)
    args.update(kw)
    model, opt, loader, eng = dt.make_private(model, opt, ds, **args)
    eng._staged = staged  # the device path (copy out of the staging buffer) on the CPU
    done = 0
    while eng.steps_done < eng.steps and (steps is None or done < steps):
        for x, y in loader:
            opt.zero_grad()
            dt.backward(F.cross_entropy(model(x), y, reduction="none"))
            opt.step()
            done += 1
            if steps is not None and done == steps:
                break
    return model, opt, loader, eng


def params(model):
    return [p.detach().clone() for p in model.parameters()]


def noise_threads():
    return [t for t in threading.enumerate() if t.name == "dpcorr-noise" and t.is_alive()]


@pytest.mark.parametrize("mech,kw", [("blt", {}), ("identity", {}),
                                     ("bsr", {"mech_params": {"bands": 3}})],
                         ids=["blt", "dp-sgd", "bsr"])
def test_background_noise_bit_identical_to_synchronous(mech, kw):
    m1, _, _, e1 = run(mech=mech, prefetch_noise=True, **kw)
    m2, _, _, e2 = run(mech=mech, prefetch_noise=False, **kw)
    assert e1.steps_done == e1.steps == e2.steps_done
    for a, b in zip(params(m1), params(m2)):
        assert torch.equal(a, b)
    assert e1._worker is not None and e2._worker is None
    assert e1.noise_wait_s >= 0 and e2.noise_wait_s > 0
    th = e1._worker._thread
    e1.close()
    e2.close()
    assert not th.is_alive()


def test_staged_device_path_same_bits():
    m1, _, _, e1 = run(staged=True)
    m2, _, _, e2 = run(staged=False)
    for a, b in zip(params(m1), params(m2)):
        assert torch.equal(a, b)
    e1.close()
    e2.close()


def test_numpy_reduction_adds_row_after_row():
    """The clipped sum relies on numpy's add.reduce over axis 0 of a C-contiguous matrix adding
    row after row (into ``out``), as a loop does: the same bits however a batch is split."""
    rng = np.random.default_rng(1)
    for k, n in [(2, 1), (3, 5), (251, 2048), (1000, 7), (17, 1999)]:
        rows = rng.standard_normal((k, n)) * np.exp(5 * rng.standard_normal((k, n)))
        loop = rows[0].copy()
        for r in rows[1:]:
            loop += r
        out = np.empty(n)
        np.add.reduce(rows, axis=0, out=out)
        assert np.array_equal(out, loop)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_low_precision_gradient_is_the_float64_update_rounded_once(dtype):
    seen = {}
    model, opt, loader, eng = run(steps=0, dtype=dtype, lr=0.01, mech="identity",
                                  sampler="fixed", noise_multiplier=3.0)
    clip_and_sum = eng._clip_and_sum

    def spy_sum(flats, factor):
        clip_and_sum(flats, factor)
        seen["sum"] = eng._acc.clone()
    eng._clip_and_sum = spy_sum
    ghost = eng._ghost

    def spy_ghost(b, scale):  # ghost clipping's sum (one physical batch: the step's sum)
        out = ghost(b, scale)
        if out is not None:
            seen["sum"] = out[1].clone()
        return out
    eng._ghost = spy_ghost
    take = eng._take_noise

    def spy_take(step):  # the raw row (B Z)_t; the release scales it
        out = take(step)
        seen["noise"] = out * eng.plan.noise_scale
        return out
    eng._take_noise = spy_take
    differs = 0
    for _ in range(3):
        x, y = next(iter(loader))
        opt.zero_grad()
        dt.backward(F.cross_entropy(model(x).float(), y, reduction="none"))
        opt.step()
        update = (seen["sum"] + seen["noise"]) * (1.0 / eng.plan.expected_batch)
        off = 0
        for p in model.parameters():
            n = p.numel()
            want = update[off:off + n].view(p.shape)
            assert p.grad.dtype == dtype
            assert torch.equal(p.grad, want.to(dtype))  # one rounding of the float64 update
            # rounding the noise and the sum separately (two roundings) is another result
            twice = ((seen["noise"][off:off + n].to(dtype) + seen["sum"][off:off + n].to(dtype))
                     / eng.plan.expected_batch).view(p.shape)
            differs += int((twice != p.grad).sum())
            off += n
    assert differs > 0
    eng.close()


def test_thread_stops_on_close_and_on_gc():
    gc.collect()  # engines of earlier tests
    before = set(noise_threads())
    _, _, _, eng = run(steps=2)
    th = eng._worker._thread
    assert th.is_alive() and th.daemon and set(noise_threads()) - before == {th}
    eng.close()
    assert not th.is_alive() and eng._worker is None
    with pytest.raises(RuntimeError):  # closed: the hooks are gone as well
        eng.optimizer.step()
    model, opt, loader, eng = run(steps=2)
    th = eng._worker._thread
    assert th.is_alive()
    del model, opt, loader, eng
    gc.collect()
    th.join(5)
    assert not th.is_alive()
    with run(steps=1)[3] as eng:  # a context manager
        th = eng._worker._thread
        assert th.is_alive()
    assert not th.is_alive()
    assert set(noise_threads()) <= before


def test_checkpoint_with_the_next_steps_noise_out_resumes_bit_identically():
    full, _, _, e_full = run()
    model, opt, loader, eng = run(steps=5)
    it = iter(loader)
    x, y = next(it)  # the batch of step 5 is out: its noise is made (or being made)
    state = eng.state_dict()
    assert state["noise_ahead"]["step"] == 5
    eng.close()
    m2, o2, l2, e2 = run(steps=0, seed=99)
    e2.load_state_dict(state)
    while e2.steps_done < e2.steps:
        for x, y in l2:
            o2.zero_grad()
            dt.backward(F.cross_entropy(m2(x), y, reduction="none"))
            o2.step()
    for a, b in zip(params(full), params(m2)):
        assert torch.equal(a, b)
    e_full.close()
    e2.close()


def test_a_parameter_on_another_device_is_accepted():
    ds = data()
    model = mlp().to("meta")
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    _, _, _, eng = dt.make_private(model, opt, ds, noise_multiplier=1.0, batch_size=24,
                                   epochs=1, seed=1)
    assert eng.device.type == "meta" and eng._staged
    assert not eng._noise_t.is_pinned()  # pinned only for CUDA
    eng.close()


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float64])
def test_clipped_rows_never_above_clip(dtype):
    """factor_i = min(1, clip / ||g_i||) with the engine's norms: ||factor_i float64(g_i)|| <=
    clip in float64 for every example, whatever the gradients' dtype (low-precision norms are
    raised by 2^-16, above their rounding error)."""
    _, _, _, eng = run(steps=0)
    g = torch.Generator().manual_seed(5)
    for scale in (1e-3, 1.0, 1e3):
        flats = [(torch.randn(64, n, generator=g, dtype=torch.float64) * scale).to(dtype)
                 for n in (7, 300, 4097)]
        clip = 0.37
        factor = (clip / eng._norms(flats)).clamp(max=1.0)[:, None]
        rows = torch.cat([f.to(torch.float64) * factor for f in flats], 1)
        assert bool((torch.linalg.vector_norm(rows, dim=1) <= clip).all())
    eng.close()
