"""dpcorr.papers.linreg: the DP-AMBSSGD scaling study from the library (dpc_linreg_repro_run),
equal to what `dpcorr repro ambssgd --smoke` writes: every CSV line rebuilt from the binding's
numbers with the CLI's format strings (tools/repro_ambssgd.c) and the JSON summary's config,
checks and statements. Mirrors checked against offsetof; refusals name the keyword."""

import numpy as np
import pytest

from dpcorr.papers import linreg


def _csv(path):
    return path.read_text().splitlines()[1:]


@pytest.fixture(scope="module")
def smoke(cli, tmp_path_factory):
    out = tmp_path_factory.mktemp("ambssgd") / "ambssgd"
    summary = cli("repro", "ambssgd", "--smoke", "--seed", 5, "--out", out, "--json")
    return out, summary, linreg.run("smoke", seed=5)


def test_sweeps_match_cli(smoke):
    out, summary, r = smoke
    g, risk = r["grid"], r["risk"]
    assert _csv(out / "ambssgd_sigma.csv") == [
        "%g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.3g,%.3g,%.3g,%.3g,%d" % (
            s, *(risk[a][i] for a in linreg.ARMS), r["dp_excess_adaptive"][i],
            r["dp_excess_fixed"][i], r["o5_oracle"][i], r["clip_fraction"][i],
            r["note"]["adaptive"][i], r["note"]["fixed"][i], r["note"]["nonprivate"][i],
            g["seeds"]) for i, s in enumerate(r["sigma"])]
    assert _csv(out / "ambssgd_epsilon.csv") == [
        "%g,%.6g,%.6g,%.6g" % (e, rk, dp, r["eps_nonprivate"]) for e, rk, dp in
        zip(r["eps"], r["eps_risk"], r["eps_dp_excess"])] + [
        "1 (exact alpha*),%.6g,%.6g,%.6g" % (r["exact_alpha_risk"], r["exact_alpha_risk"] -
                                             r["eps_nonprivate"], r["eps_nonprivate"])]
    assert _csv(out / "ambssgd_n_d.csv") == [
        "%s,%d,%d,%.6g,%.6g,%.6g,%.3g,%d" % (sweep, q["n"], q["d"], q["adaptive"],
                                            q["nonprivate"], q["dp_excess"], q["clip_fraction"],
                                            seeds)
        for sweep, pts, seeds in (("N", r["nsweep"], g["n_seeds"]),
                                  ("d", r["dsweep"], g["d_seeds"])) for q in pts]
    sl = r["slopes"]
    assert [line.split(",")[1] for line in _csv(out / "ambssgd_slopes.csv")] == [
        "%.4f" % sl[k] for k in ("sigma_adaptive", "sigma_fixed", "epsilon", "n", "d")]


def test_summary_matches_cli(smoke):
    _, summary, r = smoke
    cfg = summary["config"]
    assert (cfg["n0"], cfg["d0"], cfg["seeds"]) == (r["grid"]["n0"], r["grid"]["d0"],
                                                     r["grid"]["seeds"])
    assert (cfg["delta"], cfg["dpstat_rule"], cfg["dpstat_k"], cfg["c1"]) == \
        (r["delta"], r["dpstat_rule"], r["dpstat_k"], r["c1"])
    assert summary["checks"] == {"sigma_slope_2_pm_0.3": r["checks"]["sigma_slope"],
                                 "fixed_flat": r["checks"]["fixed_flat"],
                                 "ratio_at_least_100": r["checks"]["ratio"],
                                 "epsilon_slope_in_range": r["checks"]["eps_slope"]}
    assert summary["ratio_fixed_over_adaptive"] == \
        float("%.10g" % r["ratio_fixed_over_adaptive"])
    assert summary["reproduces"] == r["reproduces"]
    assert summary["not_reproduced"] == r["not_reproduced"]
    assert r["zeta"].shape == r["gamma"].shape == (len(r["sigma"]), r["zeta"].shape[1])


def test_threads_count_and_seed(smoke):
    _, _, r = smoke
    assert linreg.count("smoke", seed=5) == r["jobs"]
    two = linreg.run("smoke", seed=5, threads=2)
    assert two.pop("threads") == 2 and r["threads"] == 1
    np.testing.assert_equal(two, {k: v for k, v in r.items() if k != "threads"})
    other = linreg.run("smoke", seed=6)
    assert other["risk"]["fixed"][0] != r["risk"]["fixed"][0]


def test_result_layouts(c_layout):
    assert c_layout("dpcorr/papers/linreg.h", linreg.MIRRORS) > 60


def test_refusals_name_the_keyword():
    with pytest.raises(ValueError, match="^scale:"):
        linreg.run(scale="FULL")
    for bad in (0, 10 ** 6):
        with pytest.raises(ValueError, match="^threads:") as exc:
            linreg.count(threads=bad)
        assert exc.value.field == "threads"
    with pytest.raises(ValueError, match="^seed:"):
        linreg.count(seed=2 ** 64)
