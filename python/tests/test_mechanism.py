"""dpcorr.Mechanism: every kind against `build/dpcorr mech --json`; sensitivity, error and
B C = I recomputed with numpy from the dense matrices; strategy files; every error path."""

import itertools
import math

import numpy as np
import pytest

import dpcorr
from dpcorr import Mechanism

BLT = dict(theta=[0.99, 0.9, 0.5], omega=[0.1, 0.2, 0.3])

# (kind, python keyword arguments, CLI arguments)
KINDS = [
    ("identity", {}, []),
    ("nu", {"nu": 0.01}, ["--nu", 0.01]),
    ("antipgd", {"nu": 0.05}, ["--nu", 0.05]),
    ("lcgd", {"lam": 0.8}, ["--lambda", 0.8]),
    ("bsr", {"bands": 5, "momentum": 0.9}, ["--bands", 5, "--momentum", 0.9]),
    ("bisr", {"bands": 4, "decay": 0.99}, ["--bands", 4, "--decay", 0.99]),
    ("blt", BLT, ["--theta", "0.99,0.9,0.5", "--omega", "0.1,0.2,0.3"]),
    ("tree", {"honaker": True}, ["--honaker"]),
]


@pytest.mark.parametrize("kind,kw,args", KINDS, ids=[k[0] for k in KINDS])
def test_every_kind_matches_cli(cli, kind, kw, args):
    m = Mechanism(kind, 40, participations=3, min_sep=10, **kw)
    want = cli("mech", "--kind", kind, "--steps", 40, "--participations", 3, "--min-sep", 10,
               *args, "--json")
    got = m.info()
    for key in ("kind", "description", "steps", "participations", "participations_effective",
                "min_sep", "participation", "sensitivity", "sensitivity_exact",
                "sensitivity_method", "rmse", "max_error", "scaled_rmse", "scaled_max_error",
                "state_floats_per_coord", "anytime"):
        assert got[key] == want[key], key
    if want["gamma_inf"] is None:
        assert math.isnan(got["gamma_inf"])
    elif want["gamma_inf"] == "inf":
        assert got["gamma_inf"] == math.inf
    else:
        assert got["gamma_inf"] == want["gamma_inf"]


def test_toeplitz_and_dense_match_cli(cli, tmp_path):
    coeffs = [1.0, -0.5, 0.2, 0.05]
    f = tmp_path / "c.txt"
    f.write_text("\n".join(map(repr, coeffs)) + "\n")
    m = Mechanism("toeplitz", 20, coeffs=coeffs, participations=2, min_sep=5)
    want = cli("mech", "--kind", "toeplitz", "--coeffs", f, "--steps", 20,
               "--participations", 2, "--min-sep", 5, "--json")
    assert m.sensitivity == want["sensitivity"] and m.rmse == want["rmse"]
    rng = np.random.default_rng(0)
    n = 6
    d = np.tril(rng.uniform(-0.3, 0.3, (n, n)))
    np.fill_diagonal(d, 1.0)
    f = tmp_path / "d.txt"
    f.write_text("\n".join(" ".join(repr(v) for v in d[i, :i + 1]) for i in range(n)) + "\n")
    m = Mechanism("dense", n, dense=d, of="strategy")
    want = cli("mech", "--kind", "dense", "--coeffs", f, "--of", "strategy", "--steps", n,
               "--json")
    assert m.sensitivity == want["sensitivity"] and m.max_error == want["max_error"]
    np.testing.assert_array_equal(m.strategy_matrix(), d)
    np.testing.assert_array_equal(m.params["dense"], d)


@pytest.mark.parametrize("kind,kw,args", KINDS, ids=[k[0] for k in KINDS])
def test_matrices_and_sensitivity_recomputed(kind, kw, args):
    n = 9
    m = Mechanism(kind, n, **kw)
    C, B = m.strategy_matrix(), m.noising_matrix()
    assert C.shape == (m.noise_rows, n) and B.shape == (n, m.noise_rows)
    np.testing.assert_allclose(B @ C, np.eye(n), atol=1e-10)
    # single participation: the max column norm of C
    assert math.isclose(m.column_norm, np.linalg.norm(C, axis=0).max(), rel_tol=1e-12)
    # error of the prefix workload A B
    A = np.tril(np.ones((n, n)))
    AB = A @ B
    assert math.isclose(m.rmse, np.linalg.norm(AB) / math.sqrt(n), rel_tol=1e-10)
    assert math.isclose(m.max_error, np.linalg.norm(AB, axis=1).max(), rel_tol=1e-10)
    if m.is_toeplitz:
        c, b = m.strategy_coeffs(), m.noising_coeffs()
        np.testing.assert_allclose(C[:, 0], c, atol=1e-13)
        np.testing.assert_allclose(B[:, 0], b, atol=1e-13)
        assert m.strategy_coeffs(3).shape == (3,)


def test_multi_participation_by_enumeration():
    # sens^2 = max over patterns (k steps, at least b apart) of 1^T X_S 1, X = C^T C >= 0
    n, k, b = 10, 3, 3
    m = Mechanism("nu", n, nu=0.1, participations=k, min_sep=b)
    X = m.strategy_matrix().T @ m.strategy_matrix()
    best = 0.0
    for r in range(1, k + 1):
        for S in itertools.combinations(range(n), r):
            if all(S[i + 1] - S[i] >= b for i in range(len(S) - 1)):
                best = max(best, X[np.ix_(S, S)].sum())
    assert m.sensitivity_exact
    assert math.isclose(m.sensitivity, math.sqrt(best), rel_tol=1e-12)
    cyc = m.with_participation(participations=k, min_sep=b, cyclic=True)
    assert cyc.cyclic and cyc.sensitivity <= m.sensitivity + 1e-12
    assert m.with_participation().sensitivity == m.column_norm


def test_with_steps_and_params():
    m = Mechanism("lcgd", 10, **{"lambda": 0.5})
    assert m.params == {"kind": "lcgd", "steps": 10, "lambda": 0.5}
    m2 = m.with_steps(20)
    assert m2.steps == 20 and m2.kind == "lcgd" and m2.params["lambda"] == 0.5
    assert Mechanism("bsr", 5, bands=2).params["bands"] == 2
    assert Mechanism("tree", 4).noise_rows == 8
    assert Mechanism("tree", 4).form_available("replay")
    assert not Mechanism("blt", 4, **BLT).form_available("replay")
    assert Mechanism("nu", 4).state_floats("replay") == 0
    assert "nu-DP-FTRL" in repr(Mechanism("nu", 4, nu=0.1))
    assert Mechanism("nu", 4).anytime and not Mechanism("dense", 1, dense=[[1.0]]).anytime


@pytest.mark.parametrize("kind,kw", [("blt", BLT), ("nu", {"nu": 0.05}),
                                     ("dense", {"dense": [[1, 0], [-0.5, 1]]}),
                                     ("bsr", {"bands": 3})])
def test_save_load_roundtrip(tmp_path, cli, kind, kw):
    n = 2 if kind == "dense" else 30
    m = Mechanism(kind, n, participations=2, min_sep=15 if n > 2 else 1, **kw)
    path = tmp_path / f"{kind}.json"
    m.save(path)
    back = Mechanism.load(path)
    assert back.steps == n and back.participations == 2
    assert math.isclose(back.sensitivity, m.sensitivity, rel_tol=1e-12)
    assert math.isclose(back.max_error, m.max_error, rel_tol=1e-12)
    if kind == "blt":
        np.testing.assert_array_equal(back.params["theta"], BLT["theta"])
    same = Mechanism(f"file:{path}")
    assert same.description == back.description
    want = cli("mech", "--kind", f"file:{path}", "--participations", 2, "--min-sep",
               back.min_sep, "--json")
    assert want["sensitivity"] == back.sensitivity
    info = back.strategy_info()
    assert info["steps"] == n and math.isclose(info["sensitivity"], m.sensitivity, rel_tol=1e-12)
    # a BLT file serves any n
    if kind == "blt":
        assert Mechanism.load(path, 50).steps == 50


def test_errors(tmp_path):
    with pytest.raises(dpcorr.DpcorrValueError) as e:
        Mechanism("fancy", 10)
    assert e.value.field == "kind"
    with pytest.raises(dpcorr.DpcorrValueError) as e:
        Mechanism("nu", 10, nu=float("nan"))
    assert e.value.field == "nu" and isinstance(e.value, ValueError)
    with pytest.raises(ValueError, match="steps"):
        Mechanism("nu", -1)
    with pytest.raises(ValueError, match="steps"):
        Mechanism("nu", 0)
    with pytest.raises(TypeError, match="steps"):
        Mechanism("nu", 2.5)
    with pytest.raises(TypeError, match="kind"):
        Mechanism(3, 10)
    with pytest.raises(ValueError, match="participations"):
        Mechanism("nu", 10, participations=0)
    with pytest.raises(ValueError, match="min_sep"):
        Mechanism("nu", 10, min_sep=-2)
    with pytest.raises(dpcorr.DpcorrValueError) as e:
        Mechanism("bsr", 10)  # bands required
    assert e.value.field == "bands"
    with pytest.raises(ValueError, match="omega"):
        Mechanism("blt", 10, theta=[0.5, 0.6], omega=[0.1])
    with pytest.raises(ValueError, match="only for the blt"):
        Mechanism("nu", 10, theta=[0.5], omega=[0.1])
    with pytest.raises(ValueError, match="only for the toeplitz"):
        Mechanism("nu", 10, coeffs=[1.0])
    with pytest.raises(ValueError, match="only for the dense"):
        Mechanism("nu", 10, dense=[[1.0]])
    with pytest.raises(ValueError, match="matrix"):
        Mechanism("dense", 3, dense=np.eye(2))
    with pytest.raises(dpcorr.DpcorrValueError):
        Mechanism("blt", 10, theta=[1.5], omega=[0.1])
    with pytest.raises(dpcorr.DpcorrValueError):
        Mechanism("toeplitz", 10, coeffs=[0.0, 1.0])
    with pytest.raises(TypeError, match="theta"):
        Mechanism("blt", 10, theta=["a"], omega=[0.1])
    with pytest.raises(ValueError, match="of"):
        Mechanism("toeplitz", 10, coeffs=[1.0], of="both")
    with pytest.raises(TypeError, match="unexpected"):
        Mechanism("nu", 10, bands2=3)
    with pytest.raises(ValueError, match="tree"):
        Mechanism("tree", 4).save(tmp_path / "t.json")
    with pytest.raises(dpcorr.DpcorrRuntimeError) as e:
        Mechanism.load(tmp_path / "missing.json")
    assert isinstance(e.value, RuntimeError)
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "dpcorr-strategy", "version": 1, "kind": "blt", "bogus": 1}\n')
    with pytest.raises(dpcorr.DpcorrValueError):
        Mechanism.load(bad)
    with pytest.raises(ValueError, match="from the file"):
        Mechanism("file:" + str(bad), nu=0.5)
    with pytest.raises(dpcorr.DpcorrValueError):
        Mechanism("nu", 10).error(workload_momentum=1.5)
    with pytest.raises(dpcorr.DpcorrValueError):
        Mechanism("tree", 4).strategy_coeffs()  # not Toeplitz
    with pytest.raises(ValueError, match="length"):
        Mechanism("nu", 4).noising_coeffs(0)
    with pytest.raises(ValueError, match="form"):
        Mechanism("nu", 4).state_floats("auto")
    with pytest.raises(ValueError, match="dense"):
        Mechanism("dense", 1, dense=[[1.0]]).with_steps(2)
