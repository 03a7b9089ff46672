"""dpcorr.papers.srgd: the DP-SRGD reproduction from the library (dpc_srgd_repro_run), equal to
what `dpcorr repro srgd --smoke` writes: every CSV line rebuilt from the binding's numbers with
the CLI's format strings (tools/repro_srgd.c) and the JSON summary's statements. Mirrors
checked against offsetof; refusals name the keyword."""

import json
import math

import numpy as np
import pytest

from dpcorr.papers import srgd


def _csv(path):
    return path.read_text().splitlines()[1:]


@pytest.fixture(scope="module")
def smoke(repro, tmp_path_factory):
    out = tmp_path_factory.mktemp("srgd") / "srgd"
    summary, raw = repro("srgd", out, "--smoke", "--seed", 11)
    return out, summary, srgd.run("smoke", seed=11), raw


def test_cli_json_is_valid(smoke):
    json.loads(smoke[3])


def test_rates_match_cli(smoke):
    out, summary, r, _ = smoke
    g = r["grid"]
    assert _csv(out / "srgd_vs_n.csv") == [
        "%d,%d,%d,%.6g,%.8g,%.3g,%.8g,%.3g,%.8g,%.3g,%.8g,%.3g,%.8g,%.3g,%d" % (
            b["n"], b["T"], b["B"], b["beta"], *(b[k][s] for k in (
                "nonprivate_p2", "nonprivate_p1", "private_part", "unaccelerated", "accel_sgd")
                for s in ("mean", "se")), b["seed0"]) for b in r["vs_n"]]
    ps = r["private_scaling"]
    assert _csv(out / "srgd_vs_p.csv") == [
        "%d,%d,%d,%.6g,%.6g,%.8g,%.3g,%.8g,%.8g" % (
            b["p"], g["relevant"], g["n_private"], ps["eps_p"], b["beta"],
            b["private_part"]["mean"], b["private_part"]["se"], b["excess_private"]["mean"],
            b["excess_nonprivate"]["mean"]) for b in r["vs_p"]]
    assert _csv(out / "srgd_vs_eps.csv") == [
        "%.6g,%.4g,%d,%d,%.6g,%.8g,%.3g,%d" % (
            b["eps"], b["k"], g["ps"][0], g["n_private"], b["beta"], b["private_part"]["mean"],
            b["private_part"]["se"], b["in_fit"]) for b in r["vs_eps"]]
    sn = r["slopes_n"]
    assert summary["vs_n"]["slope_nonprivate_p1"] == float("%.4f" % sn["p1"])
    assert summary["vs_n"]["slope_private_part"] == float("%.4f" % sn["private"])
    assert summary["private_scaling"]["slope_vs_p"] == float("%.4f" % ps["slope_p"])
    assert summary["private_scaling"]["eps_fit_points"] == ps["fit_points"]


def test_ablations_match_cli(smoke):
    out, summary, r, _ = smoke
    g = r["grid"]
    assert _csv(out / "srgd_regimes.csv") == [
        "%d,%s,%d,%d,%.6g,%.8g,%.3g,%.8g,%.3g" % (
            b["n"], b["regime"], b["T"], b["B"], b["beta"], b["nonprivate"]["mean"],
            b["nonprivate"]["se"], b["eps1"]["mean"], b["eps1"]["se"]) for b in r["regimes"]]
    assert _csv(out / "srgd_tree_vs_independent.csv") == [
        "%g,%d,%d,%.6g,%g,%.8g,%.3g,%.8g,%.3g,%.8g,%.3g,%.8g,%.3g" % (
            b["c"], b["T"], b["B"], b["beta"], g["eps_tree"], b["tree"]["mean"],
            b["tree"]["se"], b["honaker"]["mean"], b["honaker"]["se"],
            b["independent"]["mean"], b["independent"]["se"], b["nonprivate"]["mean"], b["z"])
        for b in r["tree"]]
    assert summary["tree_beats_independent_T_ge_64"] is r["tree_beats_independent"]
    lines = []
    for row in r["baselines"]:
        for m in ("dp-srgd", "accel-dp-sgd", "dp-sgd-poisson", "dp-ftrl-tree"):
            b = row[m]
            lines.append("%g,%s,%d,%d,%g,%.6g,%.8g,%.3g" % (
                row["eps"], m, b["T"], b["B"], b["lr"], b["noise_multiplier"],
                b["excess"]["mean"], b["excess"]["se"]))
    assert _csv(out / "srgd_baselines.csv") == lines
    lines = []
    for regime in ("A", "B"):
        t = r["trace"][regime]
        T = len(t["step"])
        assert list(t["step"]) == list(range(T))
        lines += ["%s,%d,%d,%.8g,%.4g,%.8g,%.8g,%.8g,%.10g" % (
            regime, s, T, t["max_norm"][s], t["clip_fraction"][s], t["noise_norm"][s],
            t["b_norm"][s], t["srg_error"][s], t["risk"][s]) for s in range(T)]
    assert _csv(out / "srgd_trace.csv") == lines
    assert summary["regime_a_max_delta_over_first_step"] == \
        float("%.10g" % r["regime_a_max_delta_over_first_step"])
    assert summary["reproduces"] == r["reproduces"]
    assert summary["not_reproduced"] == r["not_reproduced"]


def test_count_threads_and_seed(smoke):
    """count() is what run() does; the thread count does not change a bit (the library's
    promise); the seed is used."""
    _, _, r, _ = smoke
    assert srgd.count("smoke", seed=11) == (r["runs"], r["calibrations"])
    np.testing.assert_equal(srgd.run("smoke", seed=11, threads=2), r)  # NaN == NaN here
    assert r["vs_n"][0]["seed0"] == 11 + 100  # E1's series salt (srgd.h)
    other = srgd.run("smoke", seed=12)
    assert other["vs_n"][0]["private_part"]["mean"] != r["vs_n"][0]["private_part"]["mean"]
    assert not math.isnan(r["vs_n"][0]["nonprivate_p2"]["mean"])


def test_result_layouts(c_layout):
    assert c_layout("dpcorr/papers/srgd.h", srgd.MIRRORS) > 100


def test_refusals_name_the_keyword():
    with pytest.raises(ValueError, match="^scale:"):
        srgd.run(scale="tiny")
    for bad in (0, 257):
        with pytest.raises(ValueError, match="^threads:") as exc:
            srgd.count(threads=bad)
        assert exc.value.field == "threads"
    with pytest.raises(ValueError, match="^seed:"):
        srgd.run(seed=-5)
    with pytest.raises(TypeError, match="^threads:"):
        srgd.run(threads=2.0)
