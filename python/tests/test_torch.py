"""dpcorr.torch: per-example gradients against a loop over examples; one private step against an
independent recomputation (brute-force gradients, the C library's noise rows); the ledger of
`dpcorr train` for the same configuration; a tiny training run that learns; checkpoint/resume
bit for bit (seeded and secure); CorrelatedNoise; every error path."""

import io
import json

import numpy as np
import pytest
import torch

import dpcorr
import dpcorr.torch as dt
from dpcorr.torch._per_sample import PerSampleGradients

torch.set_num_threads(1)


class Twice(torch.nn.Module):
    """Uses one Linear twice (per-example gradients sum over the uses)."""

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(6, 6)
        self.head = torch.nn.Linear(6, 3)

    def forward(self, x):
        return self.head(torch.tanh(self.lin(torch.tanh(self.lin(x)))))


def cnn():
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Conv2d(1, 4, 3, padding=1), torch.nn.GroupNorm(2, 4), torch.nn.ReLU(inplace=True),
        torch.nn.MaxPool2d(2), torch.nn.Conv2d(4, 4, 3), torch.nn.Tanh(),
        torch.nn.AvgPool2d(1), torch.nn.Flatten(), torch.nn.LayerNorm(16),
        torch.nn.Linear(16, 3))


def brute_force(model, x, y, reduction="mean"):
    """Per-example gradients by one backward pass per example."""
    out = []
    for i in range(x.shape[0]):
        model.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x[i:i + 1]), y[i:i + 1])
        loss.backward()
        out.append([p.grad.detach().clone() if p.grad is not None else torch.zeros_like(p)
                    for p in model.parameters()])
    return [torch.stack([o[j] for o in out]) for j in range(len(out[0]))]


@pytest.mark.parametrize("make,shape", [(cnn, (7, 1, 8, 8)), (Twice, (7, 6))],
                         ids=["conv-groupnorm-pool-layernorm", "shared-linear"])
@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_per_example_gradients(make, shape, reduction):
    model = make()
    torch.manual_seed(1)
    x, y = torch.randn(*shape), torch.randint(0, 3, (shape[0],))
    want = brute_force(model, x, y)
    ps = PerSampleGradients(model)
    model.zero_grad()
    torch.nn.functional.cross_entropy(model(x), y, reduction=reduction).backward()
    assert ps.batch_size() == shape[0]
    got = ps.compute(shape[0], float(shape[0]) if reduction == "mean" else 1.0)
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, rtol=1e-4, atol=1e-5)
    ps.remove()
    with torch.no_grad():
        model(x)  # no hooks, no capture
    assert ps.batch_size() is None


class TwoHeads(torch.nn.Module):
    """The second head's output never reaches the loss: its gradients are zero."""

    def __init__(self):
        super().__init__()
        self.body = torch.nn.Linear(6, 4)
        self.used = torch.nn.Linear(4, 3)
        self.unused = torch.nn.Linear(4, 3)

    def forward(self, x):
        h = torch.tanh(self.body(x))
        self.side = self.unused(h)
        return self.used(h)


def test_output_that_misses_the_loss_has_zero_gradient():
    model = TwoHeads()
    x, y = torch.randn(5, 6), torch.randint(0, 3, (5,))
    want = brute_force(model, x, y)
    ps = PerSampleGradients(model)
    torch.nn.functional.cross_entropy(model(x), y).backward()
    got = ps.compute(5, 5.0)
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, rtol=1e-4, atol=1e-6)
    assert float(got[-1].abs().max()) == 0.0


def data(n=300, d=6, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, d, generator=g)
    w = torch.randn(d, generator=g)
    y = (x @ w > 0).long()
    return torch.utils.data.TensorDataset(x, y)


def mlp(d=6, seed=0):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(d, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))


def train(model, opt, loader, engine, steps=None):
    done = 0
    while engine.steps_done < engine.steps and (steps is None or done < steps):
        for x, y in loader:
            opt.zero_grad()
            dpcorr.torch.backward(torch.nn.functional.cross_entropy(model(x), y, reduction="none"))
            opt.step()
            done += 1
            if steps is not None and done == steps:
                return


def flat(model):
    return torch.cat([p.detach().reshape(-1) for p in model.parameters()])


def test_one_step_recomputed(noise_ref):
    ds = data()
    model = mlp()
    ref_model = mlp()
    blt = dict(theta=[0.97, 0.7], omega=[0.2, 0.3])
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    model, opt, loader, eng = dt.make_private(model, opt, ds, noise_multiplier=0.8, epochs=2,
                                              batch_size=50, clip=0.05, mech="blt",
                                              mech_params=blt, seed=21)
    P = eng.dim
    rows = noise_ref("blt", eng.steps, 21, P, 3, **blt)
    for t in range(3):
        theta = flat(model).double()
        idx = eng.plan.batch(t)
        ref_model.load_state_dict(model.state_dict())
        per = brute_force(ref_model, ds.tensors[0][idx], ds.tensors[1][idx])
        per = torch.cat([g.reshape(len(idx), -1) for g in per], 1).double()
        norms = per.norm(dim=1)
        clipped = (per * torch.clamp(0.05 / norms, max=1.0)[:, None]).sum(0)
        w = torch.tensor(rows[t], dtype=torch.float64) * eng.plan.noise_scale
        expect = theta - 0.5 * (clipped + w) / eng.plan.expected_batch
        x, y = next(iter(loader))
        opt.zero_grad()
        dpcorr.torch.backward(torch.nn.functional.cross_entropy(model(x), y, reduction="none"))
        opt.step()
        assert eng.last_clip_fraction == 1.0  # clip 0.05: every example is clipped
        torch.testing.assert_close(flat(model).double(), expect, rtol=0, atol=2e-6)


@pytest.mark.parametrize("mech,kw,args", [
    ("identity", {}, []),
    ("bsr", {"mech_params": {"bands": 4}, "sampler": "cyclic-poisson"},
     ["--mech", "bsr", "--bands", 4, "--sampler", "cyclic-poisson"]),
    ("bsr", {}, ["--mech", "bsr"]),
], ids=["dp-sgd", "bsr-cyclic-poisson", "bsr-default-bands"])
def test_same_epsilon_as_dpcorr_train(cli, tmp_path, mech, kw, args):
    n = 1000
    ds = data(n, 5)
    model = torch.nn.Linear(5, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.3, momentum=0.9)
    _, _, _, eng = dt.make_private(model, opt, ds, epsilon=2.0, delta=1e-5, epochs=2,
                                   batch_size=100, mech=mech, seed=5, accountant="rdp", **kw)
    report = tmp_path / "r.json"
    cli("train", "--data", "synthetic:logistic,n=1000,d=5", "--model", "logistic",
        "--epsilon", 2, "--delta", 1e-5, "--epochs", 2, "--batch", 100, "--lr", 0.3,
        "--momentum", 0.9, "--seed", 5, "--accountant", "rdp", "--quiet", "--report", report,
        *args)
    want = json.loads(report.read_text())["privacy"]
    got = eng.ledger()
    for key in ("epsilon", "sigma", "sensitivity", "steps", "q", "rounds", "sampler", "route",
                "mechanism", "noise_std_per_unit_clip"):
        assert got[key] == want[key], key
    assert eng.epsilon_total() == want["epsilon"]


def _example_mechs():
    import importlib.util
    import pathlib
    path = pathlib.Path(__file__).resolve().parents[1] / "examples" / "torch_fashion_mnist.py"
    spec = importlib.util.spec_from_file_location("torch_fashion_mnist", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.MECHS


@pytest.mark.parametrize("mech", _example_mechs())
def test_every_example_mech_without_parameters(mech):
    """Every --mech of the example runs with the library's defaults (bsr/bisr: bands chosen
    for the run; blt: optimized; nu/antipgd/lcgd: 0), two steps."""
    ds = data(240, 6)  # batch 40: 6 steps per epoch, 2 epochs: n = 12
    model = mlp()
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    model, opt, loader, eng = dt.make_private(model, opt, ds, epsilon=4.0, epochs=2,
                                              batch_size=40, mech=mech, seed=3,
                                              accountant="rdp")
    before = flat(model).clone()
    train(model, opt, loader, eng, steps=2)
    assert eng.steps_done == 2 and not torch.equal(before, flat(model))
    L = eng.ledger()
    assert L["steps"] == 12 and L["epsilon"] <= 4.0 + 1e-9
    if mech in ("bsr", "bisr"):
        # k = 2 participations an epoch (6 steps) apart: max(6, 16) bands, at most n = 12
        assert L["mechanism"] == f"{mech.upper()} (bands=12)", L["mechanism"]


@pytest.mark.parametrize("epochs,sampler,bands", [(1, "auto", 32), (3, "auto", 100),
                                                  (3, "shuffle", 16)])
def test_bsr_default_bands(epochs, sampler, bands):
    """make_private(mech="bsr") without bands: the library's default for the run (32 for one
    epoch; an epoch's steps for fixed-order epochs; 16 for shuffled ones), as dpcorr train."""
    ds = data(4000, 3)  # batch 40: 100 steps per epoch
    model = torch.nn.Linear(3, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    _, _, _, eng = dt.make_private(model, opt, ds, noise_multiplier=1.0, epochs=epochs,
                                   batch_size=40, mech="bsr", sampler=sampler, seed=1)
    assert eng.ledger()["mechanism"] == f"BSR (bands={bands})"
    _, _, _, eng2 = dt.make_private(model, opt, ds, noise_multiplier=1.0, epochs=epochs,
                                    batch_size=40, mech="bsr", mech_params={"bands": 7},
                                    sampler=sampler, seed=1)
    assert eng2.ledger()["mechanism"] == "BSR (bands=7)"


@pytest.mark.parametrize("mech,field", [("toeplitz", "coeffs"), ("dense", "dense")])
def test_mech_without_its_arrays_refused(mech, field):
    model = mlp()
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    with pytest.raises(ValueError, match=field):
        dt.make_private(model, opt, data(240, 6), epsilon=4.0, batch_size=40, mech=mech,
                        seed=1)


def test_non_finite_example_refused():
    """One NaN feature must not decide the released model (issue 28): the run is refused,
    naming the example, and no parameter becomes NaN. make_private checks the data before any
    step (a non-finite gradient from finite data: test_refusals.py)."""
    ds = data(600, 6, seed=3)
    x, y = ds.tensors
    x = x.clone()
    x[17, 2] = float("nan")
    ds = torch.utils.data.TensorDataset(x, y)
    model = mlp()
    before = [p.detach().clone() for p in model.parameters()]
    opt = torch.optim.SGD(model.parameters(), lr=1.0)
    with pytest.raises(ValueError, match="example 17 has a non-finite value"):
        model, opt, loader, eng = dt.make_private(model, opt, ds, epsilon=8.0, epochs=1,
                                                  batch_size=600, clip=1.0, mech="identity",
                                                  seed=1, accountant="rdp", sampler="fixed")
        for xb, yb in loader:
            opt.zero_grad()
            dpcorr.torch.backward(torch.nn.functional.cross_entropy(model(xb), yb, reduction="none"))
            opt.step()
    for p, q in zip(model.parameters(), before):
        assert torch.isfinite(p).all() and torch.equal(p.detach(), q)


def test_tiny_training_run_learns():
    ds = data(600, 6, seed=3)
    model = mlp()
    opt = torch.optim.SGD(model.parameters(), lr=1.0, momentum=0.5)
    model, opt, loader, eng = dt.make_private(model, opt, ds, epsilon=8.0, epochs=4,
                                              batch_size=60, clip=1.0, mech="blt", seed=1,
                                              accountant="rdp")
    assert len(loader) == 10 and eng.epoch == 0
    for epoch in range(eng.epoch, 4):
        for x, y in loader:
            opt.zero_grad()
            dpcorr.torch.backward(torch.nn.functional.cross_entropy(model(x), y, reduction="none"))
            opt.step()
        assert eng.epoch == epoch + 1
    assert eng.steps_done == eng.steps == 40
    assert list(loader) == []  # the run is done
    x, y = ds.tensors
    with torch.no_grad():
        acc = (model(x).argmax(1) == y).float().mean().item()
    assert acc > 0.85, acc
    assert eng.epsilon_total() <= 8.0 and eng.epsilon(20) < eng.epsilon_total()
    with pytest.raises(RuntimeError, match="without a batch of a private loader"):
        opt.zero_grad()
        dpcorr.torch.backward(torch.nn.functional.cross_entropy(model(x[:5]), y[:5], reduction="none"))
        opt.step()


@pytest.mark.parametrize("seed", [9, None], ids=["seeded", "secure"])
@pytest.mark.parametrize("mech,kw", [("blt", {}), ("identity", {}),
                                     ("bsr", {"mech_params": {"bands": 3}})],
                         ids=["blt", "dp-sgd", "bsr"])
def test_checkpoint_resume_bit_identical(mech, kw, seed):
    ds = data(240, 6)

    def setup(s):
        model = mlp(seed=2)
        opt = torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)
        return dt.make_private(model, opt, ds, noise_multiplier=1.0, epochs=2, batch_size=40,
                               mech=mech, seed=s, accountant="rdp", **kw)

    m1, o1, l1, e1 = setup(seed)
    train(m1, o1, l1, e1, steps=4)  # into the first epoch
    buf = io.BytesIO()
    torch.save(e1.state_dict(), buf)
    train(m1, o1, l1, e1)
    m2, o2, l2, e2 = setup(12345 if seed is not None else None)  # the saved RNG is adopted
    buf.seek(0)
    e2.load_state_dict(torch.load(buf))
    assert e2.steps_done == 4 and e2.epoch == 0 and len(l2) == 6
    train(m2, o2, l2, e2)
    assert e2.steps_done == e2.steps
    assert torch.equal(flat(m1), flat(m2))
    assert e2.ledger() == e1.ledger()


def test_optimizer_closure_and_state():
    ds = data(200, 6)
    model = mlp()
    model, opt, loader, eng = dt.make_private(model, torch.optim.SGD(model.parameters(), lr=0.1,
                                                                     momentum=0.9), ds,
                                              noise_multiplier=1.0, batch_size=20, mech="nu",
                                              seed=2)
    assert eng.steps_per_epoch == 10 and "DPOptimizer" in repr(opt)
    x, y = next(iter(loader))

    def closure():
        opt.zero_grad()
        losses = torch.nn.functional.cross_entropy(model(x), y, reduction="none")
        eng.backward(losses)
        return losses.mean()

    loss = opt.step(closure)
    assert loss is not None and eng.steps_done == 1
    state = opt.state_dict()
    assert state == opt.original.state_dict() and len(state["state"]) == 4  # momentum buffers
    opt.load_state_dict(state)
    assert opt.param_groups is opt.original.param_groups  # also after the original rebuilt it
    sched = torch.optim.lr_scheduler.StepLR(opt, 1, gamma=0.5)
    x, y = next(iter(loader))
    opt.step(closure)
    sched.step()
    assert opt.original.param_groups[0]["lr"] == 0.05


def test_checkpoint_of_another_run_refused():
    ds = data(240, 6)
    model = mlp()
    _, opt, _, eng = dt.make_private(model, torch.optim.SGD(model.parameters(), lr=0.1), ds,
                                     noise_multiplier=1.0, epochs=2, batch_size=40, mech="nu",
                                     seed=1)
    state = eng.state_dict()
    model2 = mlp()
    _, _, _, other = dt.make_private(model2, torch.optim.SGD(model2.parameters(), lr=0.1), ds,
                                     noise_multiplier=1.5, epochs=2, batch_size=40, mech="nu",
                                     seed=1)
    with pytest.raises(ValueError, match="another run"):
        other.load_state_dict(state)
    with pytest.raises(ValueError, match="checkpoint"):
        other.load_state_dict({"format": "opacus"})
    small = torch.nn.Linear(6, 2)
    _, _, _, third = dt.make_private(small, torch.optim.SGD(small.parameters(), lr=0.1), ds,
                                     noise_multiplier=1.0, epochs=2, batch_size=40, mech="nu",
                                     seed=1)
    with pytest.raises(ValueError, match="trainable parameters"):
        third.load_state_dict(state)


def _redigest(state):
    """The state with its field digests recomputed (what an editor of the file could do)."""
    from dpcorr.torch import engine as engine_mod
    out = {k: v for k, v in state.items() if k != "digests"}
    out["digests"] = {k: engine_mod._state_digest(v) for k, v in out.items()}
    return out


def test_checkpoint_of_an_older_sampler_scheme_refused():
    """Poisson-kind batches changed with sampler scheme 2: a checkpoint without the scheme (as
    written before it) or with another one is refused naming both schemes, never resumed with
    other batches; fixed-order epochs did not change and record no scheme."""
    ds = data(240, 6)

    def engine(mech, sampler, **kw):
        model = mlp()
        return dt.make_private(model, torch.optim.SGD(model.parameters(), lr=0.1), ds,
                               noise_multiplier=1.0, epochs=2, batch_size=40, mech=mech,
                               sampler=sampler, seed=1, **kw)[3]

    for mech, sampler, kw in (("identity", "poisson", {}),
                              ("bsr", "cyclic-poisson", {"groups": 2,
                                                         "mech_params": {"bands": 2}})):
        eng = engine(mech, sampler, **kw)
        state = eng.state_dict()
        assert state["fingerprint"]["sampler_scheme"] == 2
        engine(mech, sampler, **kw).load_state_dict(state)  # the same scheme resumes
        old = dict(state, fingerprint={k: v for k, v in state["fingerprint"].items()
                                       if k != "sampler_scheme"})
        # edited alone, the fingerprint fails its digest; with the digests recomputed (as an
        # editor could), the scheme itself is refused
        with pytest.raises(ValueError, match="fingerprint does not match its digest"):
            engine(mech, sampler, **kw).load_state_dict(old)
        with pytest.raises(ValueError, match=r"sampler scheme 1 \(per-example draws.*scheme 2"
                                             r".*resume is not possible"):
            engine(mech, sampler, **kw).load_state_dict(_redigest(old))
        other = _redigest(dict(state, fingerprint=dict(state["fingerprint"], sampler_scheme=3)))
        with pytest.raises(ValueError, match="sampler scheme 3; this dpcorr samples by scheme 2"):
            engine(mech, sampler, **kw).load_state_dict(other)
    assert "sampler_scheme" not in engine("nu", "fixed").state_dict()["fingerprint"]


def test_generic_dataset_and_empty_batches():
    class Pairs(torch.utils.data.Dataset):
        def __len__(self):
            return 50

        def __getitem__(self, i):
            return torch.full((6,), float(i) / 50), i % 2

    model = mlp()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    # Poisson with expected batch 1: many steps draw nobody; they still take a (noise) step
    model, opt, loader, eng = dt.make_private(model, opt, torch.utils.data.DataLoader(Pairs()),
                                              noise_multiplier=2.0, batch_size=1, epochs=1,
                                              mech="identity", seed=4, delta=1e-3)
    sizes = []
    for x, y in loader:
        sizes.append(len(y))
        opt.zero_grad()
        out = model(x)
        if len(y):
            dpcorr.torch.backward(torch.nn.functional.cross_entropy(out, y, reduction="none"))
        opt.step()
    assert eng.steps_done == 50 and 0 in sizes and max(sizes) >= 1
    assert all(torch.isfinite(p).all() for p in model.parameters())


def test_correlated_noise():
    torch.manual_seed(0)
    params = [torch.nn.Parameter(torch.randn(3, 4)), torch.nn.Parameter(torch.randn(5))]
    mech = dpcorr.Mechanism("nu", 10, nu=0.05)
    cn = dt.CorrelatedNoise(params, mech, noise_multiplier=1.2, clip=0.5, seed=3,
                            expected_batch_size=4)
    ref = dpcorr.NoiseGenerator(mech, 17, seed=3, noise_multiplier=1.2, clip=0.5)
    for p in params:
        p.grad = torch.zeros_like(p)
    for t in range(3):
        before = [p.grad.clone() for p in params]
        cn.add_()
        w = torch.from_numpy(ref.next()) / 4
        got = torch.cat([(p.grad - b).reshape(-1) for p, b in zip(params, before)])
        torch.testing.assert_close(got, w.float(), rtol=1e-6, atol=1e-7)
    assert cn.step == 3
    grads = [torch.zeros(3, 4, dtype=torch.float64), torch.zeros(5, dtype=torch.float64)]
    state = cn.state_dict()
    cn.add_(grads)
    exact = torch.from_numpy(ref.next()) / 4
    assert torch.equal(torch.cat([g.reshape(-1) for g in grads]), exact)
    cn2 = dt.CorrelatedNoise(params, mech, 1.2, 0.5, seed=77, expected_batch_size=4)
    cn2.load_state_dict(state)
    assert cn2.step == 3
    with pytest.raises(ValueError, match="grads"):
        cn.add_([torch.zeros(3)])
    with pytest.raises(TypeError, match="mech"):
        dt.CorrelatedNoise(params, "nu", 1.0, 1.0)
    with pytest.raises(TypeError, match="params"):
        dt.CorrelatedNoise([], mech, 1.0, 1.0)
    with pytest.raises(ValueError, match="expected_batch_size"):
        dt.CorrelatedNoise(params, mech, 1.0, 1.0, expected_batch_size=0)
    with pytest.raises(ValueError, match="noise_multiplier"):
        dt.CorrelatedNoise(params, mech, float("nan"), 1.0)
    bare = [torch.nn.Parameter(torch.zeros(2))]
    with pytest.raises(ValueError, match="grad"):
        dt.CorrelatedNoise(bare, dpcorr.Mechanism("identity", 2), 1.0, 1.0).add_()


def test_errors():
    ds = data(200, 6)

    def private(model, **kw):
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        args = dict(noise_multiplier=1.0, batch_size=20, epochs=1, mech="nu", seed=1)
        args.update(kw)
        return dt.make_private(model, opt, ds, **args)

    bn = torch.nn.Sequential(torch.nn.Linear(6, 4), torch.nn.BatchNorm1d(4),
                             torch.nn.Linear(4, 2))
    with pytest.raises(ValueError, match="BatchNorm"):
        private(bn)
    frozen = torch.nn.Linear(6, 2)
    for p in frozen.parameters():
        p.requires_grad_(False)
    with pytest.raises(ValueError, match="trainable"):
        private(frozen)
    model = mlp()
    stray = torch.nn.Parameter(torch.zeros(1))
    with pytest.raises(ValueError, match="optimizer"):
        dt.make_private(model, torch.optim.SGD([*model.parameters(), stray], lr=0.1), ds,
                        noise_multiplier=1.0, batch_size=20, seed=1)
    with pytest.raises(TypeError, match="model"):
        dt.make_private("model", torch.optim.SGD(model.parameters(), lr=0.1), ds,
                        noise_multiplier=1.0, batch_size=20)
    with pytest.raises(TypeError, match="optimizer"):
        dt.make_private(model, "sgd", ds, noise_multiplier=1.0, batch_size=20)
    with pytest.raises(ValueError, match="loss_reduction"):
        private(mlp(), loss_reduction="max")
    with pytest.raises(dpcorr.DpcorrValueError) as e:
        private(mlp(), mech="identity", accountant="gdp")  # Poisson amplification: pld or rdp
    assert e.value.field == "accountant" and e.value.status == "unsupported"
    with pytest.raises(dpcorr.DpcorrValueError):
        private(mlp(), batch_size=1000)
    model, opt, loader, eng = private(mlp())
    with pytest.raises(RuntimeError, match="without a batch of the engine's loader"):
        opt.step()
    it = iter(loader)
    x, y = next(it)
    opt.zero_grad()
    with pytest.raises(dt.NotPerExampleError, match="one loss per example .*20 losses"):
        eng.backward(torch.nn.functional.cross_entropy(model(x[:5]), y[:5], reduction="none"))
    opt.zero_grad()
    eng.backward(torch.nn.functional.cross_entropy(model(x + 1), y, reduction="none"))
    with pytest.raises(RuntimeError, match="not the batch the loader issued for step 0"):
        opt.step()
    eng._backward_done = False  # (the refused step left the batch pending)
    opt.zero_grad()
    model(x)
    with pytest.raises(RuntimeError, match="backward"):
        opt.step()
    opt.zero_grad()
    dpcorr.torch.backward(torch.nn.functional.cross_entropy(model(x), y, reduction="none"))
    opt.step()
    with pytest.raises(RuntimeError, match="once per batch"):
        next(it)
        next(it)  # the batch of step 1 was never stepped on
    with pytest.raises(RuntimeError, match="cannot be added"):
        opt.add_param_group({"params": [stray]})
    eng.detach()
