"""dpcorr.TrainingPlan: the same ledger as `dpcorr train` for the same configuration (the
library makes the decisions); batches as the sampler describes them; errors."""

import json

import numpy as np
import pytest

import dpcorr
from dpcorr import TrainingPlan

DATA = "synthetic:logistic,n=1000,d=5"
N = 1000
KEYS = ("epsilon", "sigma", "sensitivity", "sensitivity_exact", "steps", "q", "rounds",
        "sampler", "route", "accountant", "mechanism", "participation", "participations",
        "separation", "noise_std_per_unit_clip", "delta", "seed")

BLT = dict(theta=[0.98, 0.8], omega=[0.15, 0.25])

CASES = [
    ("dp-sgd", dict(mech="identity", epsilon=2.0), ["--epsilon", 2]),
    ("nu", dict(mech="nu", mech_params={"nu": 0.1}, epsilon=2.0),
     ["--mech", "nu", "--nu", 0.1, "--epsilon", 2]),
    ("bsr cyclic", dict(mech="bsr", mech_params={"bands": 5}, sampler="cyclic-poisson",
                        epsilon=3.0, accountant="rdp", lr=0.2, momentum=0.9),
     ["--mech", "bsr", "--bands", 5, "--sampler", "cyclic-poisson", "--epsilon", 3,
      "--accountant", "rdp", "--lr", 0.2, "--momentum", 0.9]),
    ("blt given z", dict(mech="blt", mech_params=BLT, noise_multiplier=1.3),
     ["--mech", "blt", "--theta", "0.98,0.8", "--omega", "0.15,0.25", "--noise-multiplier",
      1.3]),
    ("tree shuffle", dict(mech="tree", sampler="shuffle", epsilon=4.0, delta=1e-6),
     ["--mech", "tree", "--sampler", "shuffle", "--epsilon", 4, "--delta", 1e-6]),
]


@pytest.mark.parametrize("name,kw,args", CASES, ids=[c[0] for c in CASES])
def test_same_ledger_as_dpcorr_train(cli, tmp_path, name, kw, args):
    kw = dict(kw)
    plan = TrainingPlan(N, batch_size=100, epochs=2, seed=7, **kw)
    report = tmp_path / "r.json"
    cli("train", "--data", DATA, "--model", "logistic", "--epochs", 2, "--batch", 100,
        "--seed", 7, "--quiet", "--report", report, *args)
    want = json.loads(report.read_text())["privacy"]
    got = plan.ledger()
    for key in KEYS:
        if key in want:
            assert got[key] == want[key], f"{name}: {key}: {got[key]!r} vs {want[key]!r}"
    assert plan.epsilon() == want["epsilon"]
    assert plan.epsilon(plan.steps) == want["epsilon"]
    assert plan.epsilon(0) == 0.0


def test_batches():
    plan = TrainingPlan(N, batch_size=100, epochs=2, epsilon=2.0, mech="nu", seed=3)
    assert plan.sampler == "fixed" and plan.steps == 20 and plan.steps_per_epoch == 10
    epoch0 = np.concatenate([plan.batch(t) for t in range(10)])
    epoch1 = np.concatenate([plan.batch(t) for t in range(10, 20)])
    assert np.array_equal(epoch0, epoch1)  # fixed order: the same order every epoch
    assert np.array_equal(np.sort(epoch0), np.arange(N))
    assert all(plan.batch(t).size == 100 for t in range(20))
    again = TrainingPlan(N, batch_size=100, epochs=2, epsilon=2.0, mech="nu", seed=3)
    assert np.array_equal(again.batch(5), plan.batch(5))
    other = TrainingPlan(N, batch_size=100, epochs=2, epsilon=2.0, mech="nu", seed=4)
    assert not np.array_equal(other.batch(5), plan.batch(5))
    poisson = TrainingPlan(N, batch_size=100, epochs=2, noise_multiplier=1.0, mech="identity",
                           seed=3, accountant="rdp")
    assert poisson.sampler == "poisson" and poisson.ledger()["amplified"]
    sizes = [poisson.batch(t).size for t in range(poisson.steps)]
    assert 70 < np.mean(sizes) < 130
    b = poisson.batch(0)
    assert np.all(np.diff(b) > 0) and b.min() >= 0 and b.max() < N
    with pytest.raises(dpcorr.DpcorrValueError):
        poisson.batch(poisson.steps)
    with pytest.raises(ValueError, match="step"):
        poisson.batch(-1)
    assert plan.noise_scale == plan.clip * plan.ledger()["noise_std_per_unit_clip"]
    assert plan.noise_multiplier == plan.ledger()["noise_multiplier"]
    assert plan.rng == {"rng_mode": "seeded", "seed": 3, "key": None}
    secure = TrainingPlan(N, batch_size=100, noise_multiplier=1.0, mech="identity",
                          accountant="rdp")
    assert secure.ledger()["seed_mode"] == "secure" and len(secure.rng["key"]) == 8


def test_noise_generator_is_the_trainers(noise_ref):
    plan = TrainingPlan(N, batch_size=100, epochs=2, noise_multiplier=1.1, mech="blt",
                        mech_params=BLT, seed=12, clip=0.7)
    gen = plan.noise_generator(9)
    want = noise_ref("blt", plan.steps, 12, 9, 3, **BLT)
    for t in range(3):
        assert gen.next().tobytes() == (np.array(want[t]) * plan.noise_scale).tobytes()


def test_default_blt():
    plan = TrainingPlan(N, batch_size=100, epochs=3, epsilon=2.0, mech="blt", seed=1,
                        momentum=0.5)
    ref = dpcorr.default_blt(N, 100, 3, momentum=0.5)
    assert plan.mechanism.params["theta"].tolist() == ref.params["theta"].tolist()
    # independent: the optimizer asked directly for n = 30, k = 3, b = N / 100 = 10
    direct = dpcorr.strategy.optimize("blt", 30, participations=3, min_sep=10, momentum=0.5)
    for key in ("theta", "omega"):
        assert plan.mechanism.params[key].tolist() == direct.params[key].tolist()
    info = ref.strategy_info()
    assert info["participations"] == 3 and info["min_sep"] == 10 and info["momentum"] == 0.5
    assert plan.ledger()["participation"] == "cyclic" and plan.ledger()["separation"] == 10


def test_errors():
    fast = dict(accountant="rdp")
    with pytest.raises(ValueError, match="exactly one"):
        TrainingPlan(N, batch_size=10)
    with pytest.raises(ValueError, match="exactly one"):
        TrainingPlan(N, batch_size=10, epsilon=1.0, noise_multiplier=1.0)
    with pytest.raises(ValueError, match="epsilon"):
        TrainingPlan(N, batch_size=10, epsilon=float("nan"))
    with pytest.raises(ValueError, match="n_examples"):
        TrainingPlan(0, batch_size=10, epsilon=1.0)
    with pytest.raises(ValueError, match="batch_size"):
        TrainingPlan(N, batch_size=-10, epsilon=1.0)
    with pytest.raises(dpcorr.DpcorrValueError) as e:
        TrainingPlan(N, batch_size=2000, epsilon=1.0, **fast)
    # the library's dpc_train_config.batch, named as the caller typed it (_lib.FIELDS)
    assert e.value.field == "batch_size" and str(e.value).startswith("batch_size: 2000")
    with pytest.raises(dpcorr.DpcorrValueError) as e:
        TrainingPlan(N, batch_size=10, epsilon=1.0, delta=0.01, **fast)  # >= 1/N
    assert e.value.field == "delta"
    TrainingPlan(N, batch_size=10, noise_multiplier=1.0, delta=0.01, allow_large_delta=True)
    with pytest.raises(dpcorr.DpcorrValueError) as e:
        TrainingPlan(N, batch_size=10, epsilon=1.0, accountant="gdp")  # Poisson: pld or rdp
    assert e.value.field == "accountant" and e.value.status == "unsupported"
    with pytest.raises(dpcorr.DpcorrValueError) as e:
        TrainingPlan(N, batch_size=10, epsilon=1.0, mech="nu", mech_params={"nu": 2.0})
    assert e.value.field == "nu"
    with pytest.raises(ValueError, match="sampler"):
        TrainingPlan(N, batch_size=10, epsilon=1.0, sampler="random")
    with pytest.raises(dpcorr.DpcorrValueError):
        TrainingPlan(N, batch_size=10, epsilon=1.0, accountant="moments")
    with pytest.raises(TypeError, match="mech"):
        TrainingPlan(N, batch_size=10, epsilon=1.0, mech=3)
    with pytest.raises(TypeError, match="mech_params"):
        TrainingPlan(N, batch_size=10, epsilon=1.0, mech="blt", mech_params={"bands": 2})
    with pytest.raises(ValueError, match="dense"):
        TrainingPlan(N, batch_size=100, epsilon=1.0,
                     mech=dpcorr.Mechanism("dense", 3, dense=np.eye(3)))
    # 3 bands over 2 groups: no banded amplification; the library accounts the whole run
    plan = TrainingPlan(N, batch_size=100, noise_multiplier=2.0, mech="bsr",
                        mech_params={"bands": 3}, sampler="cyclic-poisson", groups=2, **fast)
    assert not plan.ledger()["amplified"]


def test_default_blt_cli(cli, tmp_path):
    """`dpcorr train --mech blt` without --theta/--omega runs the same default BLT (sensitivity,
    calibrated z, ledger) as TrainingPlan(mech="blt"): one library decision for both."""
    report = tmp_path / "r.json"
    cli("train", "--data", "synthetic:logistic,n=1000,d=4", "--model", "logistic", "--epsilon", 2,
        "--batch", 100, "--epochs", 3, "--momentum", 0.5, "--mech", "blt", "--seed", 1,
        "--quiet", "--report", report)
    got = json.loads(report.read_text())["privacy"]
    plan = TrainingPlan(1000, batch_size=100, epochs=3, epsilon=2.0, mech="blt", seed=1,
                        momentum=0.5)
    L = plan.ledger()
    for key in ("noise_multiplier", "sensitivity", "accountant", "separation", "participations"):
        assert got[key] == L[key], key


def test_delta_rule_from_n():
    """The one delta rule of every trainer (dpc_account_resolve_delta): a delta not given is
    derived from N (largest power of ten <= 1/(10 N), at most 1e-5) and recorded as derived; a
    given delta >= 1/N is refused naming the keyword that accepts it, allow_large_delta."""
    for n, want in ((1000, 1e-5), (60000, 1e-6), (10**6, 1e-7)):
        L = TrainingPlan(n, batch_size=n // 10, noise_multiplier=1.0, seed=0).ledger()
        assert L["delta"] == pytest.approx(want, rel=1e-12) and L.get("delta_derived") is True
    with pytest.raises(dpcorr.DpcorrValueError) as e:
        TrainingPlan(10**6, batch_size=10**5, noise_multiplier=1.0, delta=1e-5, seed=0)
    assert e.value.field == "delta" and e.value.code == dpcorr._errors.E_PRIVACY
    assert "1/N" in str(e.value) and "allow_large_delta" in str(e.value)
    L = TrainingPlan(10**6, batch_size=10**5, noise_multiplier=1.0, delta=1e-5, seed=0,
                     allow_large_delta=True).ledger()
    assert L["delta"] == 1e-5 and not L.get("delta_derived")
