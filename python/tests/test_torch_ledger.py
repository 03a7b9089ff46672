"""dpcorr.torch: the ledger is what ran (the optimizer steps only on the batch the engine's
loader issued for that step; a DataLoader's own sampler is refused, its batch size adopted) and
engine.epsilon() is the epsilon spent so far (the library's accountant at the steps done)."""

import pytest
import torch
import torch.nn.functional as F

import dpcorr
import dpcorr.torch as dt

torch.set_num_threads(1)


def setup(**kw):
    torch.manual_seed(0)
    x, y = torch.randn(200, 6), torch.randint(0, 3, (200,))
    ds = torch.utils.data.TensorDataset(x, y)
    model = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    args = dict(noise_multiplier=1.0, batch_size=20, epochs=2, mech="nu", seed=1)
    args.update(kw)
    return (ds,) + dt.make_private(model, opt, ds, **args)


def test_own_dataloader_iteration_refused_before_the_gradient_is_used():
    ds, model, opt, loader, eng = setup()
    before = [p.detach().clone() for p in model.parameters()]
    own = torch.utils.data.DataLoader(ds, batch_size=20, shuffle=True)
    x, y = next(iter(own))
    F.cross_entropy(model(x), y).backward()
    with pytest.raises(RuntimeError, match="without a batch of the engine's loader"):
        opt.step()
    it = iter(loader)
    xb, yb = next(it)  # the engine's batch is pending, but the model runs on another one
    opt.zero_grad()
    F.cross_entropy(model(x), y).backward()
    with pytest.raises(RuntimeError, match="not the batch the loader issued for step 0"):
        opt.step()
    opt.zero_grad()
    F.cross_entropy(model(xb * 1.0 + 0.5), yb).backward()  # a transform in the loop
    with pytest.raises(RuntimeError, match="not the batch"):
        opt.step()
    assert eng.steps_done == 0
    assert all(torch.equal(a, p) for a, p in zip(before, model.parameters()))
    opt.zero_grad()
    F.cross_entropy(model(xb.clone()), yb).backward()  # an equal copy (e.g. .to(device)) is fine
    opt.step()
    assert eng.steps_done == 1


@pytest.mark.parametrize("loader,what", [
    (lambda ds: torch.utils.data.DataLoader(ds, batch_size=20, sampler=
                                            torch.utils.data.WeightedRandomSampler(
                                                torch.ones(200), 200)),
     r"sampler \(WeightedRandomSampler\)"),
    (lambda ds: torch.utils.data.DataLoader(ds, batch_sampler=[[0, 1], [2, 3]]),
     r"batch_sampler \(list\)"),
])
def test_dataloader_with_its_own_sampler_refused(loader, what):
    ds = setup()[0]
    model = torch.nn.Linear(6, 3)
    with pytest.raises(ValueError, match="dataset: the DataLoader's " + what +
                       " would be replaced by dpcorr's sampler"):
        dt.make_private(model, torch.optim.SGD(model.parameters(), lr=0.1), loader(ds),
                        noise_multiplier=1.0, epochs=1, mech="nu", seed=1)


def test_dataloader_batch_size_adopted_or_conflict_refused():
    ds = setup()[0]
    model = torch.nn.Linear(6, 3)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    dl = torch.utils.data.DataLoader(ds, batch_size=25, shuffle=True)
    _, _, loader, eng = dt.make_private(model, opt, dl, noise_multiplier=1.0, epochs=1,
                                        mech="nu", seed=1)
    assert eng.plan.expected_batch == 25 and len(loader) == 8
    eng.detach()
    with pytest.raises(ValueError, match="batch_size: 20 differs from the DataLoader's "
                                         "batch_size 25"):
        dt.make_private(model, opt, dl, batch_size=20, noise_multiplier=1.0, mech="nu")
    with pytest.raises(ValueError, match="batch_size: required"):
        dt.make_private(model, opt, ds, noise_multiplier=1.0, mech="nu")


@pytest.mark.parametrize("mech,kw", [("nu", {}), ("identity", {"accountant": "pld"})])
def test_epsilon_is_spent_so_far(mech, kw):
    ds, model, opt, loader, eng = setup(mech=mech, **kw)
    assert eng.epsilon() == 0.0
    total = eng.epsilon_total()
    assert total == eng.ledger()["epsilon"]
    seen = []
    for epoch in range(2):
        for x, y in loader:
            opt.zero_grad()
            F.cross_entropy(model(x), y).backward()
            opt.step()
            if eng.steps_done in (1, 5, 13, 20):  # (each PLD evaluation takes ~0.1 s)
                seen.append(eng.epsilon())
    assert all(a < b for a, b in zip(seen, seen[1:])) and 0 < seen[0] < total
    assert seen[-1] == total and eng.steps_done == eng.steps
    # the library's accountant at the steps done, from a plan of its own
    same = dpcorr.TrainingPlan(200, seed=1, **eng._plan_kwargs)
    assert seen[1] == same.epsilon(5) and seen[2] == same.epsilon(13)
