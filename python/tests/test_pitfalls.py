"""The nine critical DP pitfalls of jax_privacy's "Common Pitfalls" page in the Python front ends:
:class:`dpcorr.TrainingPlan` with :mod:`dpcorr.account` (a loop that computes its own gradients)
and :mod:`dpcorr.torch` (``make_private``). Each pitfall is shown refused or handled exactly; the
table of every front end is in doc/reliability.md ("The critical DP pitfalls"); the C API's half
is tests/test_pitfalls.c, the CLI's tests/cli/pitfalls.sh."""

import numpy as np
import pytest
import torch

import dpcorr
import dpcorr.torch as dt

torch.set_num_threads(1)


def regression(n=60, d=3, seed=0, scale=1.0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, d, generator=g, dtype=torch.float64) * scale
    y = torch.randn(n, generator=g, dtype=torch.float64)
    return torch.utils.data.TensorDataset(x, y)


def linear(d=3):
    m = torch.nn.Linear(d, 1, bias=False).double()
    with torch.no_grad():
        m.weight.copy_(torch.linspace(-0.5, 0.5, d, dtype=torch.float64)[None, :])
    return m


def private(ds, *, batch=10, z=1.1, clip=0.3, sampler="auto", seed=5, mech="identity", **kw):
    m = linear(ds.tensors[0].shape[1])
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    return dt.make_private(m, opt, ds, batch_size=batch, noise_multiplier=z, clip=clip,
                           sampler=sampler, seed=seed, mech=mech, **kw)


def one_step(model, opt, x, y):
    opt.zero_grad()
    out = model(x).squeeze(1)
    dt.backward(0.5 * (out - y) ** 2)  # one loss per example
    opt.step()


def reference(eng, seed, kind="identity"):
    """An independent plan of the same run (same key): its batches and raw noise rows."""
    plan = dpcorr.TrainingPlan(eng.n_examples, batch_size=int(eng.plan.expected_batch),
                               epochs=1, noise_multiplier=eng.plan.noise_multiplier, mech=kind,
                               clip=eng.plan.clip, seed=seed, accountant="pld")
    return plan, plan.noise_generator(eng.dim, scaled=False)


# ---- 1. division by batch size ------------------------------------------------------------------

def test_division_by_expected_batch_plan():
    plan = dpcorr.TrainingPlan(200, batch_size=20, noise_multiplier=1.0, seed=3)
    sizes = {len(plan.batch(t)) for t in range(plan.steps)}
    assert plan.sampler == "poisson" and len(sizes) > 3  # realised sizes vary
    assert plan.expected_batch == 20.0 and plan.ledger()["q"] == 20 / 200


def test_division_by_expected_batch_torch():
    """p.grad = (sum of clipped per-example gradients + noise) / B, B the expected size, on
    batches of other sizes; never the division by the realised size."""
    ds = regression()
    model, opt, loader, eng = private(ds)
    plan, noise = reference(eng, 5)
    x_all, y_all = ds.tensors
    other = 0
    for t, (x, y) in enumerate(loader):
        idx = plan.batch(t)
        w = model.weight.detach().clone().reshape(-1)
        r = (x_all[idx] @ w - y_all[idx])[:, None] * x_all[idx]  # per-example gradients
        norms = r.norm(dim=1) * (1 + 2.0 ** -40)  # the engine's raised norms (engine._norms)
        clipped = (r * torch.clamp(eng.plan.clip / norms, max=1.0)[:, None]).sum(0)
        z = torch.from_numpy(noise.next()) * eng.plan.noise_scale
        one_step(model, opt, x, y)
        # (read after the step: a value of the batch read into Python between the loader and
        # engine.backward refuses the loss)
        assert torch.equal(x, x_all[idx])  # the loader's batch is the accounted sampler's
        got = model.weight.grad.reshape(-1)
        want = (clipped + z) / 10.0
        torch.testing.assert_close(got, want, rtol=1e-13, atol=1e-15)
        if len(idx) not in (0, 10):
            other += 1
            assert (got - (clipped + z) / len(idx)).abs().max() > 1e-6
    assert other >= 2


# ---- 2. sensitivity alignment -------------------------------------------------------------------

@pytest.mark.parametrize("kind,params", [("identity", {}), ("nu", {"nu": 0.05}),
                                         ("bsr", {"bands": 3}), ("blt", {})])
def test_noise_is_calibrated_with_the_clip(kind, params):
    """noise scale = clip x z x column norm (the mechanism's one-participation sensitivity);
    twice the clip, twice the noise."""
    scales = []
    for clip in (0.5, 1.0):
        plan = dpcorr.TrainingPlan(300, batch_size=30, epochs=2, noise_multiplier=1.3, mech=kind,
                                   mech_params=params, clip=clip, seed=1, accountant="rdp")
        L = plan.ledger()
        col = plan.mechanism.with_participation(1, 1).sensitivity
        assert L["column_norm"] == pytest.approx(col, rel=1e-15)
        assert plan.noise_scale == pytest.approx(clip * 1.3 * col, rel=1e-15)
        scales.append(plan.noise_scale)
    assert scales[1] == 2 * scales[0]


def test_torch_noise_std_is_z_clip():
    """The released noise of a run has std z x clip / B: zero data gives zero gradients, so the
    gradient the optimizer gets is the noise alone (2000 coordinates: within 8%)."""
    d = 2000
    ds = torch.utils.data.TensorDataset(torch.zeros(20, d, dtype=torch.float64),
                                        torch.zeros(20, dtype=torch.float64))
    model, opt, loader, eng = private(ds, batch=4, z=1.5, clip=0.4, sampler="fixed")
    x, y = next(iter(loader))
    one_step(model, opt, x, y)
    std = float(model.weight.grad.std()) * 4
    assert eng.plan.clip == 0.4 and std == pytest.approx(1.5 * 0.4, rel=0.08)


# ---- 3. accounting vs sampler -------------------------------------------------------------------

@pytest.mark.parametrize("sampler", ["poisson", "fixed", "shuffle", "cyclic-poisson",
                                     "balls-in-bins"])
def test_ledger_names_the_sampler(sampler):
    plan = dpcorr.TrainingPlan(120, batch_size=12, epochs=2, noise_multiplier=1.5,
                               sampler=sampler, seed=2, accountant="rdp")
    assert plan.ledger()["sampler"] == plan.sampler == sampler


def test_torch_refuses_other_batches():
    ds = regression()
    model, opt, loader, eng = private(ds, sampler="fixed")
    x_all, y_all = ds.tensors
    # a step without a batch of the engine's loader
    opt.zero_grad()
    (model(x_all[:10]).sum()).backward()
    with pytest.raises(RuntimeError, match="without a batch of the engine's loader"):
        opt.step()
    # the model run on other tensors than the loader's batch
    x, y = next(iter(loader))
    opt.zero_grad()
    model(x_all[:10] + 1).sum().backward()
    with pytest.raises(RuntimeError, match="not the batch the loader issued"):
        opt.step()
    # a part of the batch
    opt.zero_grad()
    model(x[:5]).sum().backward()
    with pytest.raises(RuntimeError):
        opt.step()
    assert eng.steps_done == 0
    # a DataLoader with its own sampler is refused, not silently replaced
    weighted = torch.utils.data.DataLoader(
        ds, batch_size=10, sampler=torch.utils.data.WeightedRandomSampler([1.0] * 60, 60))
    m = linear()
    with pytest.raises(ValueError, match="WeightedRandomSampler"):
        dt.make_private(m, torch.optim.SGD(m.parameters(), lr=0.1), weighted,
                        noise_multiplier=1.0, seed=1)


# ---- 4. public vs private metadata --------------------------------------------------------------

def test_ledger_is_public_configuration():
    """Two data sets of the same N with other contents give the same ledger (TrainingPlan takes
    N only, by construction); other keys (other realised batches): the same ledger but the
    seed; q = B/N of the N passed; no realised batch size in it."""
    ledgers = []
    for seed, key in ((0, 5), (1, 5), (0, 6)):
        model, opt, loader, eng = private(regression(seed=seed), seed=key)
        for x, y in loader:
            one_step(model, opt, x, y)
        L = eng.ledger()
        L.pop("seed")
        ledgers.append(L)
    assert ledgers[0] == ledgers[1] == ledgers[2]
    assert ledgers[0]["q"] == 10 / 60 and "batch" not in ledgers[0]
    assert "n_examples" in dpcorr.TrainingPlan.__init__.__code__.co_varnames
    assert not any(v in dpcorr.TrainingPlan.__init__.__code__.co_varnames
                   for v in ("data", "dataset", "x"))


# ---- 5. the neighbouring relation ---------------------------------------------------------------

def test_neighbouring_relation():
    poisson = dpcorr.TrainingPlan(100, batch_size=10, noise_multiplier=1.0, seed=1)
    fixed = dpcorr.TrainingPlan(100, batch_size=10, noise_multiplier=1.0, seed=1, sampler="fixed")
    assert poisson.ledger()["neighbor"] == "add-remove"
    assert fixed.ledger()["neighbor"] == "zero-out"
    e = dpcorr.account.epsilon(2.0, steps=10, delta=1e-5)
    assert dpcorr.account.epsilon(4.0, steps=10, delta=1e-5, neighbor="replace-one",
                                  sensitivity=2.0) == e
    assert dpcorr.account.epsilon(2.0, steps=10, delta=1e-5, neighbor="replace-one",
                                  sensitivity=2.0) > 1.5 * e
    with pytest.raises(dpcorr.DpcorrError, match="replace-one"):
        dpcorr.account.epsilon(2.0, q=0.1, steps=10, delta=1e-5, neighbor="replace-one")


# ---- 6. empty batches and non-finite gradients --------------------------------------------------

def test_empty_batch_releases_noise():
    """An empty Poisson batch is a normal step: p.grad = noise / B bit for bit."""
    ds = regression(n=50)
    model, opt, loader, eng = private(ds, batch=1, seed=9)
    plan, noise = reference(eng, 9)
    empty = 0
    for t, (x, y) in enumerate(loader):
        z = torch.from_numpy(noise.next())
        opt.zero_grad()
        out = model(x).squeeze(1)
        if len(y):
            eng.backward(0.5 * (out - y) ** 2)
        opt.step()
        if len(y) == 0:
            empty += 1
            want = z.mul_(eng.plan.noise_scale).mul_(1.0 / 1.0)
            assert torch.equal(model.weight.grad.reshape(-1), want)
    assert empty > 5 and eng.steps_done == 50


def test_plan_empty_batch_is_a_step():
    plan = dpcorr.TrainingPlan(50, batch_size=1, noise_multiplier=1.0, seed=9)
    sizes = [len(plan.batch(t)) for t in range(plan.steps)]
    assert 0 in sizes and plan.steps == 50  # the schedule does not skip an empty step


def test_non_finite_gradient_refused():
    """Finite data whose gradient overflows: the step is refused naming the example, nothing is
    released (parameters and step unchanged); non-finite data is refused before any step."""
    ds = regression(n=20, scale=1e200)
    model, opt, loader, eng = private(ds, batch=20, sampler="fixed")
    before = model.weight.detach().clone()
    x, y = next(iter(loader))
    with pytest.raises(ValueError, match="non-finite per-example gradient"):
        one_step(model, opt, x, y)
    assert eng.steps_done == 0 and torch.equal(model.weight.detach(), before)
    x = regression(n=20).tensors[0].clone()
    x[3, 1] = float("inf")
    with pytest.raises(ValueError, match="example 3 has a non-finite value"):
        private(torch.utils.data.TensorDataset(x, regression(n=20).tensors[1]))


# ---- 7. gradient accumulation -------------------------------------------------------------------

def test_physical_batches_are_one_step():
    """max_physical_batch_size: the step's physical batches are clipped and summed, the noise is
    added once (the generator advances once per logical step) and the result is the whole
    batch's to rounding (the clipped sum is grouped by physical batch, so its last bits may
    differ: measured, they do at every step of this run); a second optimizer.step() on one
    batch is refused."""
    ds = regression(n=60)
    runs, ledgers = [], []
    for phys in (None, 3):
        model, opt, loader, eng = private(ds, batch=12, seed=4, max_physical_batch_size=phys)
        steps = 0
        for x, y in loader:
            one_step(model, opt, x, y)
            if eng.step_done:
                steps += 1
                assert eng.noise.step == eng.steps_done == steps
        runs.append(model.weight.detach().clone())
        ledgers.append(eng.ledger())
        assert eng.epsilon() == eng.epsilon_total()  # 5 logical steps = the run's 5 steps
    assert torch.allclose(runs[0], runs[1], rtol=1e-13, atol=1e-15)
    assert ledgers[0] == ledgers[1]  # accounted as one step of the full batch
    model, opt, loader, eng = private(ds, batch=12, seed=4)
    x, y = next(iter(loader))
    one_step(model, opt, x, y)
    with pytest.raises(RuntimeError):
        one_step(model, opt, x, y)
    assert eng.steps_done == 1


# ---- 8. cross-example operations ----------------------------------------------------------------

class Centre(torch.nn.Module):
    """Subtracts the batch mean: mixes the examples of a batch."""

    def forward(self, x):
        return x - x.mean(0, keepdim=True)


def test_cross_example_modules_refused():
    ds = regression()
    for bad, why in ((torch.nn.BatchNorm1d(3), "BatchNorm1d"),
                     (Centre(), "model: mixes the examples of a batch.*mean over dimension 0")):
        m = torch.nn.Sequential(bad, torch.nn.Linear(3, 1)).double()
        opt = torch.optim.SGD(m.parameters(), lr=0.1)
        with pytest.raises(ValueError, match=why):
            m, opt, loader, eng = dt.make_private(m, opt, ds, batch_size=10, noise_multiplier=1.0,
                                                  mech="identity", seed=1, sampler="fixed")
            x, y = next(iter(loader))
            opt.zero_grad()
            eng.backward(0.5 * (m(x).squeeze(1) - y) ** 2)
            opt.step()


# ---- 9. auxiliary outputs -----------------------------------------------------------------------

def test_auxiliary_outputs_are_not_released():
    """What the engine keeps beside the noised parameters and the ledger: the clip fraction of
    the last step (telemetry, documented as not private); the ledger holds no statistic of the
    data (test_ledger_is_public_configuration) and the state_dict none but the noised model's."""
    ds = regression()
    model, opt, loader, eng = private(ds, sampler="fixed")
    for x, y in loader:
        one_step(model, opt, x, y)
    assert 0.0 <= eng.last_clip_fraction <= 1.0
    state = eng.state_dict()
    assert set(state) <= {"format", "version", "steps_done", "rng", "ledger", "dim", "fingerprint",
                          "noise", "model", "optimizer", "noise_ahead",
                          "digests"}
    assert "last_clip_fraction" not in state and "loss" not in str(sorted(state["ledger"]))


def test_correlated_noise_refuses_non_finite():
    """CorrelatedNoise (gradients the caller clips): a NaN or inf gradient is refused before the
    step's noise is drawn; the next finite call adds that step's noise (the reference row)."""
    p = torch.nn.Parameter(torch.zeros(5, dtype=torch.float64))
    mech = dpcorr.Mechanism("identity", 4)
    cn = dt.CorrelatedNoise([p], mech, noise_multiplier=1.0, clip=1.0, seed=3)
    ref = dt.CorrelatedNoise([p], mech, noise_multiplier=1.0, clip=1.0, seed=3)
    for bad in (float("nan"), float("inf")):
        g = torch.zeros(5, dtype=torch.float64)
        g[2] = bad
        with pytest.raises(ValueError, match="non-finite"):
            cn.add_([g])
        assert cn.step == 0
    got = cn.add_([torch.zeros(5, dtype=torch.float64)])[0]
    want = ref.add_([torch.zeros(5, dtype=torch.float64)])[0]
    assert cn.step == 1 and torch.equal(got, want) and bool((got != 0).all())
