"""dpcorr.strategy.optimize: the same strategies as `dpcorr mech optimize` (deterministic), the
loss recomputed from the mechanism, and the error paths."""

import math

import numpy as np
import pytest

import dpcorr
from dpcorr import strategy


@pytest.mark.parametrize("kind,kw,args", [
    ("blt", {}, []),
    ("blt", {"participations": 2, "min_sep": 20, "momentum": 0.9},
     ["--participations", 2, "--min-sep", 20, "--momentum", 0.9]),
    ("banded", {"bands": 4, "objective": "mean"}, ["--bands", 4, "--objective", "mean"]),
    ("dense", {}, []),
], ids=["blt", "blt-multi-momentum", "banded-mean", "dense"])
def test_optimize_matches_cli(cli, tmp_path, kind, kw, args):
    n = 24 if kind == "dense" else 40
    m = strategy.optimize(kind, n, **kw)
    out = tmp_path / "s.json"
    want = cli("mech", "optimize", "--kind", kind, "--steps", n, *args, "--out", out, "--json")
    info = m.strategy_info()
    assert info["loss"] == want["loss"] and info["iterations"] > 0
    cli_mech = dpcorr.Mechanism.load(out)
    for key, value in m.params.items():
        if isinstance(value, np.ndarray):
            np.testing.assert_array_equal(value, cli_mech.params[key])
        else:
            assert value == cli_mech.params[key]
    # the optimizer's reported loss is the mechanism's own sens^2 x err^2 (prefix workload only)
    if "momentum" not in kw:
        err = m.rmse if kw.get("objective") == "mean" else m.max_error
        assert math.isclose(info["loss"], (m.sensitivity * err) ** 2, rel_tol=1e-9)
        assert m.sensitivity_exact
    # saving writes the same file contents the CLI wrote
    m.save(tmp_path / "p.json")
    assert (tmp_path / "p.json").read_text() == out.read_text()


def test_blt_beats_dpsgd_and_errors():
    m = strategy.optimize("blt", 64)
    ident = dpcorr.Mechanism("identity", 64)
    assert m.scaled_max_error < ident.scaled_max_error
    with pytest.raises(ValueError, match="kind"):
        strategy.optimize("spiral", 10)
    with pytest.raises(ValueError, match="objective"):
        strategy.optimize("blt", 10, objective="median")
    with pytest.raises(ValueError, match="steps"):
        strategy.optimize("blt", -1)
    with pytest.raises(dpcorr.DpcorrValueError):
        strategy.optimize("banded", 10)  # bands required
    with pytest.raises(dpcorr.DpcorrValueError):
        strategy.optimize("blt", 10, momentum=float("nan"))
    with pytest.raises(dpcorr.DpcorrValueError):
        strategy.optimize("dense", 3000)
    with pytest.raises(TypeError, match="buffers"):
        strategy.optimize("blt", 10, buffers=1.5)
