"""Issue 28, the package's half: every value a run cannot honour is refused before it reaches C,
with a message naming the Python argument (ctypes would wrap 2**63 or -1 into a size_t and pass
NaN through); dpcorr.torch refuses non-finite data and per-example gradients with the example's
index; load_state_dict refuses a checkpoint taken with another configuration, clip or data. The
accepted neighbours of each refused value are checked to still work."""

import io
import math

import pytest
import torch

import dpcorr
import dpcorr.torch as dt
from dpcorr import account, strategy, TrainingPlan

torch.set_num_threads(1)

NAN, INF = float("nan"), float("inf")


def refused(fn, name, match=None):
    """fn() raises the binding's refusal of argument `name` (field and message name it)."""
    with pytest.raises(dpcorr.DpcorrValueError) as e:
        fn()
    assert e.value.field == name, (e.value.field, str(e.value))
    assert str(e.value).startswith(name + ":"), str(e.value)
    if match is not None:
        assert match in str(e.value), str(e.value)
    return e.value


# ---- non-finite floats -------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [NAN, INF, -INF], ids=["nan", "inf", "-inf"])
def test_non_finite_floats_refused(bad):
    refused(lambda: strategy.optimize("blt", 8, min_improvement=bad), "min_improvement",
            "finite")
    refused(lambda: strategy.optimize("blt", 8, momentum=bad), "momentum")
    refused(lambda: strategy.optimize("blt", 8, decay=bad), "decay")
    refused(lambda: dpcorr.Mechanism("nu", 8, nu=bad), "nu")
    refused(lambda: dpcorr.Mechanism("lcgd", 8, lam=bad), "lambda")
    refused(lambda: dpcorr.Mechanism("blt", 8, theta=[0.9, bad], omega=[0.1, 0.2]), "theta",
            "entry 1")
    refused(lambda: dpcorr.Mechanism("toeplitz", 3, coeffs=[1.0, bad]), "coeffs")
    refused(lambda: dpcorr.Mechanism("dense", 2, dense=[[1.0, 0.0], [bad, 1.0]]), "dense")
    refused(lambda: account.epsilon(bad, q=0.1, steps=10, delta=1e-5), "sigma")
    refused(lambda: account.epsilon(1.0, q=0.1, steps=10, delta=1e-5, interval=bad), "interval")
    refused(lambda: account.epsilon(1.0, q=0.1, steps=10, delta=1e-5, accountant="rdp",
                                    orders=[2.0, bad]), "orders")
    refused(lambda: account.sigma(bad, 1e-5, q=0.1, steps=10), "epsilon")
    refused(lambda: account.delta(1.0, q=0.1, steps=10, epsilon=bad), "epsilon")
    refused(lambda: account.gdp_delta(bad, 1.0), "mu")
    refused(lambda: account.zcdp_epsilon(bad, 1e-5), "rho")
    for arg in ("lr", "clip", "momentum", "weight_decay", "delta", "noise_multiplier"):
        kw = {"noise_multiplier": 1.0, arg: bad}
        refused(lambda: TrainingPlan(100, batch_size=10, **kw), arg)
    refused(lambda: TrainingPlan(100, batch_size=10, epsilon=bad), "epsilon")
    refused(lambda: TrainingPlan(100, batch_size=10, noise_multiplier=1.0, workload=(0.5, bad)),
            "workload")


# ---- integers out of range ---------------------------------------------------------------------


def test_integers_out_of_range_refused():
    # bands: more than n bands do not exist (the run would use n under a name claiming 2**63)
    refused(lambda: strategy.optimize("banded", 8, bands=2 ** 63), "bands", "[0, 8]")
    refused(lambda: strategy.optimize("banded", 8, bands=9), "bands")
    refused(lambda: dpcorr.Mechanism("bsr", 10, bands=2 ** 63), "bands", "[0, 10]")
    # a run of 10 steps with 11 bands runs 10 bands, and its ledger says so (as `dpcorr train`:
    # the library decides, dpc_train_config_resolve)
    plan = TrainingPlan(100, batch_size=10, noise_multiplier=1.0, mech="bsr",
                        mech_params={"bands": 11})
    assert plan.ledger()["mechanism"] == "BSR (bands=10)"
    refused(lambda: strategy.optimize("blt", 8, buffers=2 ** 64), "buffers")
    refused(lambda: strategy.optimize("blt", 2 ** 63), "steps", "1099511627776")
    # steps beyond the CLI's cap (2^40): refused at once instead of a search of minutes
    refused(lambda: account.sigma(1.0, 1e-5, q=0.01, steps=2 ** 63), "steps", "1099511627776")
    refused(lambda: account.epsilon(1.0, q=0.01, steps=2 ** 64 + 3, delta=1e-5), "steps")
    refused(lambda: account.steps(1.0, 1.0, 1e-5, q=0.01, max_steps=2 ** 41), "max_steps")
    refused(lambda: account.gdp_sigma(0.5, 2 ** 63), "count")
    refused(lambda: account.epsilon(1.0, q=0.01, steps=-5, delta=1e-5), "steps")
    refused(lambda: dpcorr.Mechanism("nu", 2 ** 63), "steps")
    # groups as a float (1e12): a type error; as an int: the library's range names it
    with pytest.raises(TypeError, match="groups"):
        TrainingPlan(100, batch_size=10, noise_multiplier=1.0, groups=1e12)
    with pytest.raises(dpcorr.DpcorrValueError) as e:
        TrainingPlan(100, batch_size=10, noise_multiplier=1.0, sampler="cyclic-poisson",
                     groups=10 ** 12)
    assert e.value.field == "groups"
    # issue 37: groups under a sampler without groups (Poisson, the identity's default; balls-in-
    # bins) were accepted and ignored; the library's configuration check refuses them
    for sampler in (None, "poisson", "balls-in-bins", "fixed"):
        kw = {"sampler": sampler} if sampler else {}
        refused(lambda: TrainingPlan(100, batch_size=10, noise_multiplier=1.0, groups=10 ** 12,
                                     **kw), "groups", "only cyclic Poisson")
    TrainingPlan(100, batch_size=10, noise_multiplier=1.0, sampler="cyclic-poisson", groups=5)
    # min_improvement is a fraction of the loss in [0, 1) (issue 37: -1 was accepted)
    for bad in (-1.0, 1.0, 2.5):
        refused(lambda: strategy.optimize("blt", 8, min_improvement=bad), "min_improvement",
                "in [0, 1)")
    with pytest.raises(TypeError, match="steps"):
        account.epsilon(1.0, q=0.1, steps=10.0, delta=1e-5)
    with pytest.raises(TypeError, match="bands"):
        strategy.optimize("banded", 8, bands="3")


def test_plan_epsilon_past_the_run_refused():
    plan = TrainingPlan(100, batch_size=10, noise_multiplier=1.0, seed=1)
    assert plan.steps == 10
    refused(lambda: plan.epsilon(11), "step", "[0, 10]")
    refused(lambda: plan.epsilon(2 ** 64), "step")
    with pytest.raises(TypeError, match="step"):
        plan.epsilon(5.5)
    # accepted: every step of the run, the last one being the run's epsilon
    refused(lambda: plan.batch(10), "step", "beyond the 10 steps")  # the library's check
    assert plan.batch(9).size > 0
    e5, e10 = plan.epsilon(5), plan.epsilon(10)
    assert 0 < e5 < e10 and math.isclose(e10, plan.epsilon(), rel_tol=0.05)


def test_overflowing_values_refused():
    """Issue 28's 1e308 sweep, through the binding: values whose squares or products overflow
    are refused by the library naming the package's argument (a 1e308 learning rate trained to
    loss 1e306; zCDP rho 1e20 converted to epsilon 0)."""
    refused(lambda: TrainingPlan(100, batch_size=10, noise_multiplier=1.0, lr=1e308), "lr",
            "overflows")
    refused(lambda: TrainingPlan(100, batch_size=10, noise_multiplier=1.0, clip=1e200), "clip",
            "overflows")
    refused(lambda: TrainingPlan(100, batch_size=10, noise_multiplier=1.0, weight_decay=1e308),
            "weight_decay", "overflows")
    refused(lambda: TrainingPlan(100, batch_size=10, noise_multiplier=1e300), "noise_multiplier",
            "overflows")
    refused(lambda: account.zcdp_epsilon(1e308, 1e-5), "rho", "overflows")
    refused(lambda: account.gdp_epsilon(1e308, 1e-5), "mu", "overflows")
    # the accepted neighbours: large but finite, and rho beyond the old precision loss
    assert TrainingPlan(100, batch_size=10, noise_multiplier=1.0, lr=1e3).steps == 10
    assert 1e20 <= account.zcdp_epsilon(1e20, 1e-5) < 1.001e20


def test_balls_in_bins_calibration_bounded():
    """A balls-in-bins calibration over 1e5 bins (minutes before) is refused at once by the
    work limit; the plan names its sampler's period through the library's field."""
    import time
    t0 = time.time()
    with pytest.raises(dpcorr.DpcorrError) as e:
        TrainingPlan(1000000, batch_size=10, epsilon=8.0, sampler="balls-in-bins")
    assert "work limit" in str(e.value) and "bins" in str(e.value), str(e.value)
    assert time.time() - t0 < 5.0


def test_strings_refused():
    with pytest.raises(dpcorr.DpcorrValueError) as e:
        account.epsilon(1.0, q=0.01, steps=10, delta=1e-5, neighbor="")
    assert e.value.field == "neighbor" and str(e.value).startswith("neighbor:")
    with pytest.raises(TypeError, match="neighbor"):
        account.epsilon(1.0, q=0.01, steps=10, delta=1e-5, neighbor=3)
    with pytest.raises(TypeError, match="kind"):
        strategy.optimize(3, 8)
    with pytest.raises(ValueError, match="objective"):
        strategy.optimize("blt", 8, objective="")
    with pytest.raises(TypeError, match="workload"):
        TrainingPlan(100, batch_size=10, noise_multiplier=1.0, workload=0.5)


def test_accepted_neighbours_still_work():
    m = strategy.optimize("blt", 8, min_improvement=0.05)
    assert m.steps == 8
    assert strategy.optimize("banded", 8, bands=8).steps == 8  # bands = n: accepted
    assert dpcorr.Mechanism("bsr", 10, bands=10).steps == 10
    a = account.epsilon(1.0, q=0.01, steps=10, delta=1e-5)
    b = account.epsilon(1.0, q=0.01, steps=10, delta=1e-5, neighbor="add-remove")
    assert a == b > 0  # add-remove is the default without a mechanism
    assert 0 < account.epsilon(1.0, q=0.01, steps=10, delta=1e-5, neighbor="zero-out") < INF
    plan = TrainingPlan(100, batch_size=10, noise_multiplier=1.0, mech="bsr",
                        mech_params={"bands": 10}, seed=1)
    assert "bands=10" in plan.ledger()["mechanism"]


# ---- dpcorr.torch: non-finite data and gradients -----------------------------------------------


def data(n=60, d=6, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, d, generator=g)
    return torch.utils.data.TensorDataset(x, (x.sum(1) > 0).long())


def mlp(d=6, seed=0):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(d, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))


def private(ds, model=None, **kw):
    model = model if model is not None else mlp()
    args = dict(noise_multiplier=1.0, batch_size=20, epochs=1, mech="nu", seed=3)
    args.update(kw)
    return dt.make_private(model, torch.optim.SGD(model.parameters(), lr=0.1), ds, **args)


def flat(model):
    return torch.cat([p.detach().reshape(-1) for p in model.parameters()])


@pytest.mark.parametrize("bad", [NAN, INF])
def test_non_finite_data_refused_with_its_index(bad):
    ds = data()
    ds.tensors[0][37, 2] = bad
    with pytest.raises(ValueError, match="example 37 "):
        private(ds)

    class Items(torch.utils.data.Dataset):  # a generic dataset: checked example by example
        def __len__(self):
            return 60

        def __getitem__(self, i):
            return ds.tensors[0][i], int(ds.tensors[1][i])

    with pytest.raises(ValueError, match="example 37 "):
        private(Items())


class SqrtGate(torch.nn.Module):
    """Finite for x[:, 0] >= 0, NaN for the example whose first feature is negative: a non-finite
    per-example gradient from finite data."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.lin = torch.nn.Linear(6, 2)

    def forward(self, x):
        return self.lin(x) * torch.sqrt(x[:, :1])


def test_non_finite_gradient_refused_with_its_index():
    ds = data()
    ds.tensors[0][:, 0] = ds.tensors[0][:, 0].abs()
    ds.tensors[0][41, 0] = -1.0  # finite data, NaN gradient
    model = SqrtGate()
    model, opt, loader, eng = private(ds, model, batch_size=60)
    before = flat(model)
    x, y = next(iter(loader))
    opt.zero_grad()
    dpcorr.torch.backward(torch.nn.functional.cross_entropy(model(x), y, reduction="none"))
    with pytest.raises(ValueError, match=r"training record 41\).*non-finite"):
        opt.step()
    assert eng.steps_done == 0 and torch.equal(flat(model), before)  # no step, no NaN weight


# ---- dpcorr.torch: load_state_dict checks the run's fingerprint --------------------------------


def checkpoint(ds, **kw):
    model, opt, loader, eng = private(ds, epochs=2, **kw)
    for x, y in loader:
        opt.zero_grad()
        dpcorr.torch.backward(torch.nn.functional.cross_entropy(model(x), y, reduction="none"))
        opt.step()
        break
    buf = io.BytesIO()
    torch.save(eng.state_dict(), buf)
    buf.seek(0)
    return torch.load(buf)


def test_load_state_dict_fingerprint():
    ds = data()
    state = checkpoint(ds)
    # another clip norm
    _, _, _, other = private(ds, epochs=2, clip=2.0)
    with pytest.raises(ValueError, match=r"another run.*clip differs: 1\.0 in the checkpoint, "
                                         r"2\.0 here"):
        other.load_state_dict(state)
    # other data of the same size (one value changed)
    ds2 = data()
    ds2.tensors[0][5, 1] += 0.5
    _, _, _, other = private(ds2, epochs=2)
    with pytest.raises(ValueError, match="data differs"):
        other.load_state_dict(state)
    # another learning rate (the workload of the default BLT / BSR)
    m = mlp()
    _, _, _, other = dt.make_private(m, torch.optim.SGD(m.parameters(), lr=0.2), ds,
                                     noise_multiplier=1.0, batch_size=20, epochs=2, mech="nu",
                                     seed=3)
    with pytest.raises(ValueError, match="lr differs"):
        other.load_state_dict(state)
    # a checkpoint without a fingerprint (format version 1) cannot be checked
    old = dict(state, version=1)
    old.pop("fingerprint")
    _, _, _, same = private(ds, epochs=2)
    with pytest.raises(ValueError, match="version"):
        same.load_state_dict(old)
    # accepted: the same configuration and data, another seed (the saved RNG is adopted)
    _, _, _, same = private(data(), epochs=2, seed=99)
    same.load_state_dict(state)
    assert same.steps_done == 1


def test_data_digest_of_a_generic_dataset():
    from dpcorr.torch.engine import _data_digest

    class Items(torch.utils.data.Dataset):
        def __init__(self, shift):
            self.shift = shift

        def __len__(self):
            return 5

        def __getitem__(self, i):
            return torch.full((3,), float(i) + self.shift), i % 2, {"w": float(i)}

    a, b, c = _data_digest(Items(0.0)), _data_digest(Items(0.0)), _data_digest(Items(0.25))
    assert a == b != c  # deterministic, and the content decides it
    ds = data()
    assert _data_digest(ds) == _data_digest(data()) != _data_digest(data(seed=1))
