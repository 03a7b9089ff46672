"""dpcorr.torch: the ledger is what ran (the optimizer steps only on the batch the engine's
loader issued for that step; a DataLoader's own sampler is refused, its batch size adopted) and
engine.epsilon() is the epsilon spent so far (the library's accountant at the steps done)."""

import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import dpcorr
import dpcorr.torch as dt
from dpcorr.torch.engine import _data_digest, _state_digest

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
    with pytest.raises(RuntimeError, match="without a batch of a private loader"):
        dpcorr.torch.backward(F.cross_entropy(model(x), y, reduction="none"))
    model.zero_grad()
    F.cross_entropy(model(x), y).backward()
    with pytest.raises(RuntimeError, match="without a batch of the engine's loader"):
        opt.step()
    it = iter(loader)
    xb, yb = next(it)  # the engine's batch is pending, but the model runs on another one
    opt.zero_grad()
    dpcorr.torch.backward(F.cross_entropy(model(x), y, reduction="none"))
    with pytest.raises(RuntimeError, match="not the batch the loader issued for step 0"):
        opt.step()
    opt.zero_grad()
    dpcorr.torch.backward(F.cross_entropy(model(xb * 1.0 + 0.5), yb, reduction="none"))  # a transform in the loop
    with pytest.raises(RuntimeError, match="not the batch"):
        opt.step()
    assert eng.steps_done == 0
    assert all(torch.equal(a, p) for a, p in zip(before, model.parameters()))
    opt.zero_grad()
    dpcorr.torch.backward(F.cross_entropy(model(xb.clone()), yb, reduction="none"))  # an equal copy (e.g. .to(device)) is fine
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
            dpcorr.torch.backward(F.cross_entropy(model(x), y, reduction="none"))
            opt.step()
            if eng.steps_done in (1, 5, 13, 20):  # (each PLD evaluation takes ~0.1 s)
                seen.append(eng.epsilon())
    assert all(a < b for a, b in zip(seen, seen[1:])) and 0 < seen[0] < total
    assert seen[-1] == total and eng.steps_done == eng.steps
    # the library's accountant at the steps done, from a plan of its own
    same = dpcorr.TrainingPlan(200, seed=1, **eng._plan_kwargs)
    assert seen[1] == same.epsilon(5) and seen[2] == same.epsilon(13)


def run_virtual(make, x, y, physical, mech="blt", reduction="sum", **kw):
    torch.manual_seed(0)
    model = make()
    opt = torch.optim.SGD(model.parameters(), lr=0.2, momentum=0.9)
    model, opt, loader, eng = dt.make_private(
        model, opt, torch.utils.data.TensorDataset(x, y), batch_size=20, epochs=2,
        noise_multiplier=1.0, mech=mech, seed=4, max_physical_batch_size=physical,
        loss_reduction=reduction, **kw)
    parts = 0
    for _ in range(2):
        for xb, yb in loader:
            assert xb.shape[0] <= (physical or 10 ** 9)
            opt.zero_grad()
            dpcorr.torch.backward(F.cross_entropy(model(xb), yb, reduction="none"))
            opt.step()
            parts += 1
    eng.detach()
    return [p.detach().clone() for p in model.parameters()], parts, eng


class Elementwise(torch.nn.Module):
    """Only elementwise operations and row reductions: its forward and per-example gradients
    are the same bits whatever the batch size (a matrix product is not: BLAS blocks by size)."""

    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(3, 6))
        self.b = torch.nn.Parameter(torch.zeros(3))

    def forward(self, v):
        return (torch.tanh(v[:, None, :] * self.w)).sum(-1) + self.b


class Seq(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(3, 4, batch_first=True)
        self.out = torch.nn.Linear(4, 3)

    def forward(self, v):
        return self.out(self.lstm(v)[0][:, -1])


@pytest.mark.parametrize("physical", [1, 7, 20])
def test_virtual_steps_bit_identical_to_the_whole_batch(physical):
    """Clipping, the float64 sum (same additions, same order), the noise and the step are the
    same bits with the batch split into physical batches of 1, 7 or 20 examples (a summed loss:
    with a mean loss the per-example gradients are b x the mean's, rounded differently for each
    physical batch size b)."""
    torch.manual_seed(1)
    x, y = torch.randn(100, 6), torch.randint(0, 3, (100,))
    want, steps, eng0 = run_virtual(Elementwise, x, y, None)
    got, parts, eng = run_virtual(Elementwise, x, y, physical)
    assert steps == eng0.steps == 10 and parts == 10 * -(-20 // physical)
    assert eng.steps_done == 10 and eng.path == eng0.path == "isolated"
    assert all(torch.equal(a, b) for a, b in zip(want, got))


@pytest.mark.parametrize("physical", [1, 7])
@pytest.mark.parametrize("make,path", [
    (lambda: torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3)),
     "layers"), (Seq, "isolated")], ids=["mlp", "lstm"])
def test_virtual_steps_match_the_whole_batch(make, path, physical):
    """With matrix products the model's own forward pass differs in the last bits between batch
    sizes (BLAS); the virtual steps then agree to rounding (float64)."""
    torch.manual_seed(1)
    x = torch.randn(100, 6) if path == "layers" else torch.randn(100, 4, 3)
    x, y = x.double(), torch.randint(0, 3, (100,))
    with torch.random.fork_rng():
        torch.set_default_dtype(torch.float64)
        try:
            want, _, eng0 = run_virtual(make, x, y, None, reduction="mean")
            got, _, eng = run_virtual(make, x, y, physical, reduction="mean")
        finally:
            torch.set_default_dtype(torch.float32)
    assert eng.path == eng0.path == path
    for a, b in zip(want, got):
        assert float((a - b).norm()) <= 1e-12 * float(a.norm())


def test_virtual_steps_poisson_and_errors():
    torch.manual_seed(2)
    x, y = torch.randn(100, 6), torch.randint(0, 3, (100,))
    make = Elementwise
    want, _, _ = run_virtual(make, x, y, None, mech="identity", accountant="pld")
    got, _, eng = run_virtual(make, x, y, 3, mech="identity", accountant="pld")
    assert all(torch.equal(a, b) for a, b in zip(want, got))
    with pytest.raises(ValueError, match="max_physical_batch_size"):
        run_virtual(make, x, y, 0)
    torch.manual_seed(0)
    model = make()
    opt = torch.optim.SGD(model.parameters(), lr=0.2)
    model, opt, loader, eng = dt.make_private(
        model, opt, torch.utils.data.TensorDataset(x, y), batch_size=20, epochs=1,
        noise_multiplier=1.0, mech="nu", seed=4, max_physical_batch_size=8)
    it = iter(loader)
    xb, yb = next(it)
    dpcorr.torch.backward(F.cross_entropy(model(xb), yb, reduction="none"))
    opt.step()
    assert not eng.step_done and eng.steps_done == 0
    with pytest.raises(RuntimeError, match="once per batch"):
        next(it)
        next(it)  # the second physical batch was never stepped on


def distributed(world, seed, *extra):
    """tests/torch_dist_worker.py with ``world`` processes (gloo on loopback, bounded time)."""
    port = 29500 + os.getpid() % 1000 + 7 * world
    env = dict(os.environ, PYTHONPATH=str(pathlib.Path(dt.__file__).parents[2]))
    res = subprocess.run([sys.executable, str(pathlib.Path(__file__).with_name(
        "torch_dist_worker.py")), str(world), str(port), seed, *extra], env=env,
        capture_output=True, text=True, timeout=240, check=False)
    assert res.returncode == 0, res.stderr[-2000:]
    return json.loads(res.stdout.strip().splitlines()[-1])


def test_distributed_bit_identical_to_one_process():
    """Each rank takes a contiguous share of every batch; the clipped sum passes from rank to
    rank; rank 0's key (broadcast), the same noise: 2 and 3 processes end with the same run's
    parameters in one process, bit for bit, and the ranks agree with each other."""
    for world in (2, 3):
        many = distributed(world, "7")
        assert many["ranks_equal"] and many["params"] == many["one_process"]
        assert len(many["params"]) == 21


def test_distributed_rank_with_another_configuration_refused():
    out = distributed(2, "7", "differ")
    assert out["error"].startswith("torch.distributed: rank 1's ledger differ from rank 0's")


# ---- the noise state is verified, not trusted, on resume (issue 37) --------------------------

def forged(state):
    """The state with its digests recomputed, as an editor who knows the format would: what the
    replay of the noise from the key must catch (the digests are not a MAC)."""
    state = {k: v for k, v in state.items() if k != "digests"}
    state["digests"] = {k: _state_digest(v) for k, v in state.items()}
    return state


def steps_of(model, opt, loader, eng, k):
    """k steps from the engine's current one (the loader's batch of the next step not taken)."""
    it = iter(loader)
    for _ in range(k):
        x, y = next(it)
        opt.zero_grad()
        dpcorr.torch.backward(F.cross_entropy(model(x), y, reduction="none"))
        opt.step()
    return it


def saved(seed=1, ahead=False, k=3, mech="blt"):
    """A run of setup() (mech, seed) after k steps, its state_dict (with the row of step k made
    ahead by the noise thread when ahead), and a fresh engine of the same run to load it into."""
    ds, model, opt, loader, eng = setup(mech=mech, seed=seed)
    it = steps_of(model, opt, loader, eng, k)
    if ahead:
        next(it)  # step k's batch is out: the thread made its noise row
    state = eng.state_dict()
    assert ("noise_ahead" in state) == ahead and state["noise"]["step"] == k + ahead
    fresh = setup(mech=mech, seed=seed)[4]
    return state, fresh, eng


def test_unedited_noise_state_with_a_row_ahead_resumes_bit_for_bit():
    state, fresh, _ = saved(ahead=True)
    ds, model, opt, loader, eng = setup(mech="blt")
    steps_of(model, opt, loader, eng, 10)
    _, m2, o2, l2, e2 = setup(mech="blt")
    e2.load_state_dict(state)
    assert e2.steps_done == 3 and e2._job is not None and e2._job.step == 3
    m2.load_state_dict(state["model"])
    steps_of(m2, o2, l2, e2, 7)
    assert all(torch.equal(a, b) for a, b in zip(model.parameters(), m2.parameters()))


def test_rewound_noise_step_refused():
    """A noise generator state of an earlier step under the checkpoint's steps_done would
    release that step's noise again (two releases with the same noise cancel it in their
    difference)."""
    ds, model, opt, loader, eng = setup(mech="blt")
    steps_of(model, opt, loader, eng, 1)
    early = eng.state_dict()["noise"]
    steps_of(model, opt, loader, eng, 2)
    state = eng.state_dict()
    fresh = setup(mech="blt")[4]
    state["noise"] = early
    with pytest.raises(ValueError, match=r"noise.step is 1, steps_done 3 needs 3 .*rewound"):
        fresh.load_state_dict(forged(state))
    state, fresh, _ = saved(ahead=True)
    state["noise"]["step"] = 3  # the row of step 3 is out: the generator must be at 4
    with pytest.raises(ValueError, match=r"noise.step is 3, steps_done 3 needs 4"):
        fresh.load_state_dict(forged(state))
    assert fresh.steps_done == 0


@pytest.mark.parametrize("edit", ["ulp", "zero", "nan", "swap"])
def test_edited_noise_buffers_refused(edit):
    state, fresh, _ = saved()
    buf = state["noise"]["state"]
    assert buf.size == 2 * fresh.dim  # BLT: 2 buffers per coordinate
    if edit == "ulp":
        buf[5] = np.nextafter(buf[5], np.inf)
    elif edit == "zero":
        buf[:] = 0.0
    elif edit == "nan":
        buf[7] = np.nan
    else:
        buf[[0, 1]] = buf[[1, 0]]
    with pytest.raises(ValueError, match=r"noise: .*noise_state.*replay from the key"):
        fresh.load_state_dict(forged(state))


@pytest.mark.parametrize("edit", ["zero", "nan", "ulp", "another step's row"])
def test_edited_noise_ahead_row_refused(edit):
    state, fresh, eng = saved(ahead=True)
    row = state["noise_ahead"]["row"]
    if edit == "zero":
        row[:] = 0.0
    elif edit == "nan":
        row[3] = np.nan
    elif edit == "ulp":
        row[-1] = np.nextafter(row[-1], -np.inf)
    else:
        row[:] = eng.plan.noise_generator(eng.dim).next()
    with pytest.raises(ValueError, match=r"noise_ahead.row differs from its replay from the key "
                                         r"at coordinate"):
        fresh.load_state_dict(forged(state))
    assert fresh.steps_done == 0 and fresh._job is None


def test_seeded_noise_generator_under_a_secure_ledger_refused():
    state, fresh, _ = saved(seed=None)  # a secure run
    assert state["ledger"]["seed_mode"] == "secure" and state["rng"]["rng_mode"] == "secure"
    seeded, _, _ = saved(seed=1)
    other = dict(state, noise=seeded["noise"])  # a seeded generator's noise state
    with pytest.raises(ValueError, match=r"noise.rng_mode is not the run's"):
        fresh.load_state_dict(forged(other))
    other = dict(state, rng=seeded["rng"])  # the run's generator seeded, the ledger secure
    with pytest.raises(ValueError, match=r"rng: the generator is seeded \(seed 1\), the ledger "
                                         r"says 'secure'"):
        fresh.load_state_dict(forged(other))
    key = list(state["rng"]["key"])
    key[0] ^= 1
    noise = dict(state["noise"], key=key)  # another secure key for the noise
    with pytest.raises(ValueError, match=r"noise.key is not the run's"):
        fresh.load_state_dict(forged(dict(state, noise=noise)))
    both = dict(state, rng=dict(state["rng"], key=key), noise=noise)  # both keys replaced
    with pytest.raises(ValueError, match=r"noise_state.*replay from the key"):
        fresh.load_state_dict(forged(both))
    fresh.load_state_dict(forged(state))  # the secure checkpoint itself resumes (its key adopted)
    assert fresh.steps_done == 3 and fresh.ledger()["seed_mode"] == "secure"


def test_seed_none_does_not_load_as_secure():
    state, fresh, _ = saved(seed=1)
    for part in ("rng", "noise"):
        bad = dict(state, **{part: dict(state[part], seed=None)})
        if part == "rng":
            bad["ledger"] = dict(state["ledger"], seed=None)
        with pytest.raises(ValueError, match=r"seed"):
            fresh.load_state_dict(forged(bad))
    assert fresh.steps_done == 0 and fresh.ledger()["seed_mode"] == "seeded"
    gen = dpcorr.NoiseGenerator(fresh.plan.mechanism, 21, 1)
    with pytest.raises(ValueError, match=r"seeded generator's state needs its integer seed"):
        gen.load_state_dict(dict(gen.state_dict(), seed=None))


# ---- the ledger is what ran (issue 34 item 4) ---------------------------------------------

def test_batch_token_covers_inputs_and_labels_by_content():
    ds, model, opt, loader, eng = setup(mech="nu")
    before = [p.detach().clone() for p in model.parameters()]
    it = iter(loader)
    x, y = next(it)
    other_x, other_y = ds.tensors[0][-20:], ds.tensors[1][-20:]
    x.copy_(other_x)  # the issued tensor overwritten in place before the forward pass
    opt.zero_grad()
    dpcorr.torch.backward(F.cross_entropy(model(x), y, reduction="none"))
    with pytest.raises(RuntimeError, match="not the batch the loader issued for step 0"):
        opt.step()
    ds, model, opt, loader, eng = setup(mech="nu")
    x, y = next(iter(loader))
    y.copy_(other_y)  # the labels of other examples, in the issued tensor
    opt.zero_grad()
    dpcorr.torch.backward(F.cross_entropy(model(x), y, reduction="none"))
    with pytest.raises(RuntimeError, match=r"tensor 1 of the batch the loader issued for step 0 "
                                           r"\(its inputs and labels, in order\) was changed"):
        opt.step()
    ds, model, opt, loader, eng = setup(mech="nu")
    x, y = next(iter(loader))
    opt.zero_grad()
    dpcorr.torch.backward(F.cross_entropy(model(x), y, reduction="none"))
    x.add_(1.0)  # after the forward pass, before the step
    with pytest.raises(RuntimeError, match=r"tensor 0 of the batch .* was changed in place"):
        opt.step()
    assert eng.steps_done == 0
    assert all(torch.equal(a, p) for a, p in zip(before, model.parameters()))


def test_edited_checkpoint_refused_by_its_digests():
    ds, model, opt, loader, eng = setup(mech="nu")
    steps_of(model, opt, loader, eng, 4)
    state = eng.state_dict()
    assert state["version"] == 3 and set(state["digests"]) == set(state) - {"digests"}
    for field, value in (("steps_done", 0), ("ledger", dict(state["ledger"], epsilon=0.1)),
                         ("model", {k: v + 1 for k, v in state["model"].items()})):
        fresh = setup(mech="nu")[4]
        with pytest.raises(ValueError, match=rf"state: {field} does not match its digest"):
            fresh.load_state_dict(dict(state, **{field: value}))
        assert fresh.steps_done == 0 and fresh.epsilon() == 0.0
    fresh = setup(mech="nu")[4]
    with pytest.raises(ValueError, match=r"state: noise does not match its digest"):
        fresh.load_state_dict(dict(state, noise=dict(state["noise"], step=0)))
    with pytest.raises(ValueError, match=r"unsupported version 2"):
        fresh.load_state_dict(dict(state, version=2))
    no = {k: v for k, v in state.items() if k != "digests"}
    with pytest.raises(ValueError, match=r"no digests"):
        fresh.load_state_dict(no)
    # steps_done and the noise step rewound together, digests recomputed: the noise step is
    # bound by the replay (stateless mechanism: nothing to compare), so this engine's own
    # spend is what refuses it below; a fresh engine has no such memory (doc/reliability.md)
    fresh.load_state_dict(state)
    assert fresh.steps_done == 4 and fresh.epsilon() == eng.epsilon()


def test_an_older_checkpoint_never_lowers_the_spent_epsilon():
    ds, model, opt, loader, eng = setup(mech="blt")
    steps_of(model, opt, loader, eng, 2)
    old = eng.state_dict()
    steps_of(model, opt, loader, eng, 2)
    spent = eng.epsilon()
    assert spent > eng.epsilon(2) > 0
    with pytest.raises(ValueError, match=rf"steps_done 2 < the 4 steps this engine has already "
                                         rf"run: loading it would lower the spent epsilon from "
                                         rf"{spent:.6g} to {eng.epsilon(2):.6g}"):
        eng.load_state_dict(old)
    assert eng.steps_done == 4 and eng.epsilon() == spent
    eng.load_state_dict(eng.state_dict())  # the same step: nothing released twice
    assert eng.steps_done == 4 and eng.epsilon() == spent


def test_distributed_ranks_with_other_initial_parameters_refused():
    out = distributed(2, "7", "params")
    assert out["error"].startswith("torch.distributed: rank 1's initial parameters differ "
                                   "from rank 0's")
    assert "torch.manual_seed" in out["error"]


class Augmented(torch.utils.data.Dataset):
    """A dataset with a random augmentation (torch's and numpy's global generators)."""

    def __init__(self, n=120):
        g = torch.Generator().manual_seed(3)
        self.x, self.y = torch.randn(n, 6, generator=g), torch.randint(0, 3, (n,), generator=g)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        jitter = 0.01 * torch.randn(6) + float(np.random.uniform(-0.01, 0.01))
        return self.x[i] + jitter, self.y[i]


def test_dataset_with_random_augmentation_resumes():
    def make():
        model = torch.nn.Linear(6, 3)
        return dt.make_private(model, torch.optim.SGD(model.parameters(), lr=0.1), Augmented(),
                               noise_multiplier=1.0, batch_size=20, epochs=2, mech="blt", seed=1)
    torch.manual_seed(5)
    np.random.seed(5)
    model, opt, loader, eng = make()
    steps_of(model, opt, loader, eng, 3)
    state = eng.state_dict()
    other = make()[3]
    assert other._fingerprint()["data"] == eng._fingerprint()["data"]
    other.load_state_dict(state)
    assert other.steps_done == 3
    # the fingerprint leaves the user's generators where they were
    torch.manual_seed(11)
    np.random.seed(11)
    a, b = torch.rand(1), np.random.rand()
    torch.manual_seed(11)
    np.random.seed(11)
    assert _data_digest(Augmented()) == eng._fingerprint()["data"]
    assert torch.equal(torch.rand(1), a) and np.random.rand() == b
    # other data is still another run
    class Shifted(Augmented):
        def __getitem__(self, i):
            x, y = super().__getitem__(i)
            return x + 1.0, y
    model = torch.nn.Linear(6, 3)
    shifted = dt.make_private(model, torch.optim.SGD(model.parameters(), lr=0.1), Shifted(),
                              noise_multiplier=1.0, batch_size=20, epochs=2, mech="blt",
                              seed=1)[3]
    with pytest.raises(ValueError, match="data differs"):
        shifted.load_state_dict(state)
