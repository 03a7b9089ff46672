"""dpcorr.demo_recipe: the recipes of `dpcorr demo` (dpc_train_demo_setup) and `dpcorr demo
--frontier` (dpc_train_demo_frontier) from the library; the README demo's runs equal, field by
field, what `dpcorr demo --dry-run` echoes (except the fields the run resolves or the demo
overrides), and a TrainingPlan built from a recipe runs the CLI's mechanism."""

import pathlib

import pytest

import dpcorr
from dpcorr import plan

DATA = pathlib.Path("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz")

# What the echo shows after the run's resolution (dpc_train_resolve: mech.steps, the groups and
# the BSR workload's momentum, the derived delta) and the demo's own options (threads 2, the ISA
# the CLI measured): not the recipe's values.
RESOLVED = {"mech.steps", "groups", "mech.momentum", "threads", "isa"}


def _echo(value):
    """A config value as the dry run echoes it (%.17g doubles, 0/1 flags, names)."""
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, float):
        return "%.17g" % value
    return str(value)


def _dry_run_sections(text):
    """{label: {key: value}} of each "# run N: label" section of `dpcorr demo --dry-run`."""
    sections, cur = {}, None
    for line in text.splitlines():
        if line.startswith("# run "):
            cur = sections.setdefault(line.split(": ", 1)[1], {})
        elif cur is not None and " = " in line:
            key, value = line.split(" = ", 1)
            cur[key] = value
        elif cur is not None and line.endswith(" ="):
            cur[line[:-2]] = ""
    return sections


@pytest.mark.skipif(not DATA.is_file(), reason="dataset-fashion-mnist is not installed")
def test_demo_recipes_match_the_dry_run(cli):
    sections = _dry_run_sections(cli("demo", "--dry-run"))
    recipes = [dpcorr.demo_recipe(n) for n in ("dpsgd", "bsr")]
    assert [r["label"] for r in recipes] == list(sections)
    seen = set()
    for r in recipes:
        echo = sections[r["label"]]
        assert (echo["model"], echo["label"]) == (r["model"], r["label"])
        assert echo["features"] == "none" and r["features"] is None
        assert echo["report"].endswith(f"/{r['name']}.json")
        shown = {k: v for k, v in r["config"].items() if k in echo}
        assert len(shown) >= 30, sorted(set(r["config"]) - set(echo))
        differ = {k for k, v in shown.items() if _echo(v) != echo[k]}
        assert differ <= RESOLVED, {k: (shown[k], echo[k]) for k in differ - RESOLVED}
        seen |= differ
    assert seen == RESOLVED  # each exception is used: the set is no wider than needed


def test_recipes_are_the_documented_ones():
    """train.h's description of the recipes, read through the binding: the demo's runs differ
    in mechanism, sampler and rate only; the frontier is the linear BSR run on features."""
    sgd, bsr, front = (dpcorr.demo_recipe(n)["config"] for n in ("dpsgd", "bsr", "frontier"))
    assert (sgd["mech.kind"], sgd["sampler"], bsr["mech.kind"], bsr["sampler"]) == \
        ("identity", "poisson", "bsr", "cyclic-poisson")
    assert bsr["mech.bands"] == 32 and (sgd["lr"], bsr["lr"]) == (0.125, 0.25)
    same = {k for k in sgd if sgd[k] == bsr[k]}
    assert set(sgd) - same == {"mech.kind", "mech.bands", "sampler", "lr"}
    assert (sgd["epsilon"], sgd["delta"], sgd["batch"], sgd["epochs"]) == (3.0, 1e-5, 250, 15)
    f = dpcorr.demo_recipe("frontier")
    assert f["model"] == "softmax" and f["features"].startswith("scatter:")
    assert (front["batch"], front["epochs"], front["lr"]) == (500, 20, 0.18)
    assert dpcorr.demo_recipe("bsr")["model"] == "mlp:256:tanh"


def test_a_plan_from_the_recipe():
    """A TrainingPlan from the bsr recipe's values at Fashion-MNIST's N = 60000: the run's
    mechanism is the recipe's BSR with its 32 bands, over epochs x N / batch steps, calibrated
    to the recipe's epsilon."""
    c = dpcorr.demo_recipe("bsr")["config"]
    p = dpcorr.TrainingPlan(60000, batch_size=c["batch"], epochs=1, epsilon=c["epsilon"],
                            delta=c["delta"], mech=c["mech.kind"],
                            mech_params={"bands": c["mech.bands"]}, sampler=c["sampler"],
                            clip=c["clip"], accountant=c["accountant"], lr=c["lr"],
                            momentum=c["momentum"], seed=1)
    led = p.ledger()
    assert p.mechanism.kind == "bsr" and p.mechanism.steps == 60000 // c["batch"]
    assert "bands=32" in p.mechanism.description
    assert 0.999 * c["epsilon"] < led["epsilon"] <= c["epsilon"]
    assert led["route"].startswith("amplified by sampling (banded MF)")


def test_demo_layout(c_layout):
    assert c_layout("dpcorr/train.h", {"dpc_train_demo": plan._Demo}) == 6


@pytest.mark.parametrize("run", ["frontier2", "", "DPSGD"])
def test_unknown_run_is_refused_naming_it(run):
    with pytest.raises(ValueError, match="^run: expected one of 'dpsgd', 'bsr', 'frontier'") \
            as exc:
        dpcorr.demo_recipe(run)
    assert exc.value.field == "run"
