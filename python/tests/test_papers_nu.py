"""dpcorr.papers.nu: Figures 1, 2, 3 and Tables 1, 2, 4 of the nu-DP-FTRL paper from the library
(dpc_nu_*_run), equal to what `dpcorr repro nu-*` writes for the same scale and seed: every CSV
line rebuilt from the binding's numbers with the CLI's format strings (tools/repro_nu_*.c), and
the JSON summary's claims. Mirrors checked against offsetof; refusals name the keyword."""

import math

import numpy as np
import pytest

from dpcorr.papers import nu


def _csv(path):
    return path.read_text().splitlines()[1:]  # without the header


def _repro(cli, tmp_path, target, *args):
    out = tmp_path / target
    summary = cli("repro", target, *args, "--out", out, "--json")
    return out, summary


def _claims_match(got, summary):
    assert got["reproduces"] == summary["reproduces"]
    assert got["not_reproduced"] == summary["not_reproduced"]


def test_fig1_matches_cli(cli, tmp_path):
    out, summary = _repro(cli, tmp_path, "nu-fig1", "--quick", "--seed", 7)
    r = nu.fig1(seed=7)  # the library's scale: quick
    assert (r["scale"], r["seed"]) == ("quick", 7) and summary["seed"] == 7
    assert _csv(out / "fig1_ratio.csv") == [
        "%.10g,%.10g,%.10g,%.10g" % row for row in zip(r["eta"], r["ratio"], r["ftrl_opt"],
                                                        r["sgd"])]
    assert _csv(out / "fig1_sim.csv") == [
        "%g,%.8g,%.3g,%.8g,%.8g,%.3g,%.8g,%.6g,%.3g,%.6g,%d,%d,%d" % (
            s["eta"], s["opt"]["mean"], s["opt"]["se"], s["opt"]["theory"], s["sgd"]["mean"],
            s["sgd"]["se"], s["sgd"]["theory"], s["ratio"], s["ratio_se"], s["ratio_theory"],
            s["opt"]["steps"], s["opt"]["burn_in"], s["opt"]["seed"]) for s in r["sims"]]
    assert _csv(out / "fig1_beta.csv") == [
        "%d,%.10g,%.10g" % (t, a, b) for t, a, b in zip(r["t"], r["beta"][0], r["beta"][1])]
    assert _csv(out / "fig1_spectrum.csv") == [
        "%.10g,%.10g,%.10g" % row for row in zip(r["omega"], r["spectrum"][0],
                                                  r["spectrum"][1])]
    assert summary["max_rel_dev_sim_vs_theory"] == float("%.10g" % r["max_rel_dev"])
    _claims_match(r, summary)
    # the seeds are the header's salts: root + 100 + i (nu = eta), root + 200 + i (DP-SGD)
    assert [s["opt"]["seed"] for s in r["sims"]] == [107, 108, 109]
    assert [s["sgd"]["seed"] for s in r["sims"]] == [207, 208, 209]


def test_fig2_matches_cli(cli, tmp_path):
    out, summary = _repro(cli, tmp_path, "nu-fig2", "--smoke")
    r = nu.fig2("smoke")
    lines = []
    for p in r["points"]:
        for m in (0, 1):
            lines.append("%s,%d,%g,%g,%.6g,%.6g,%s,%.8g,%.8g,%.3g,%.8g,%.3g,%.8g,%d,%d,%d" % (
                p["sweep"], p["d"], p["alpha"], p["eta"], p["nu"], p["d_eff"],
                "nu-Noisy-FTRL" if m else "Noisy-SGD", p["theory"][m], p["fixed"][m],
                p["fixed_se"][m], p["random"][m], p["random_se"][m],
                p["sandwich"] if m else math.nan, p["steps"], p["burn_in"][m], p["seed"][m]))
    assert _csv(out / "fig2_points.csv") == lines
    assert _csv(out / "fig2_slopes.csv") == [
        "%s,%.2f,%.4f,%.4f,%.4f" % (s["name"], s["paper"], s["lti"], s["fixed"], s["random"])
        for s in r["slopes"]]
    assert summary["random_design_within_sandwich"] == {"inside": r["inside"],
                                                         "points": r["total"]}
    assert summary["config"]["points"] == len(r["points"])
    _claims_match(r, summary)
    # the sweeps index the points; their x are d, d_eff and eta of those points
    for name, key in (("d", "d"), ("alpha", "d_eff"), ("eta", "eta")):
        sw = r["sweeps"][name]
        assert list(sw["x"]) == [r["points"][i][key] for i in sw["points"]]


def test_fig3_matches_cli(cli, tmp_path):
    out, summary = _repro(cli, tmp_path, "nu-fig3", "--quick")
    r = nu.fig3(scale="quick")
    assert _csv(out / "fig3_bound.csv") == [
        "%.6g,%.6g,%.8g,%.8g,%.8g,%.8g,%.6g" % (k, m, s, n, o, o0, s / n) for k, m, s, n, o, o0
        in zip(r["kappa"], r["mu"], r["bound_sgd"], r["bound_nu"], r["bound_opt"],
               r["bound_opt0"])]
    assert _csv(out / "fig3_sim.csv") == [
        "%g,%s,%.8g,%.3g,%.8g,%d,%d" % (s["kappa"], s["mechanism"], s["gap"], s["se"],
                                        s["bound"], s["steps"], s["seed"]) for s in r["sims"]]
    _claims_match(r, summary)
    assert r["below"] and r["ordering"]  # the figure's checks hold at quick scale
    assert r["ratio_max"] == r["bound_sgd"][-1] / r["bound_nu"][-1]


def test_tables_match_cli(cli, tmp_path):
    out, summary = _repro(cli, tmp_path, "nu-tables")
    r = nu.tables()
    assert _csv(out / "table2_mechanisms.csv") == [
        "%s,%g,%.8g,%.8g,%.8g,%.8g,%.8g,%.8g,%.8g,%s" % (
            w["name"], w["beta"]["nu"], *w["gamma_t2"], w["gamma_inf2"], w["f_inf"], w["rate"],
            w["rate_formula"]) for w in r["table2"]]
    assert _csv(out / "table2_gamma_T.csv") == [
        "%.0f," % t + ",".join("%.8g" % g for g in r["gamma_T2"][:, k])
        for k, t in enumerate(r["T"])]
    t1, ulb = r["table1"], r["lower_universal"]
    assert _csv(out / "table1.csv") == [
        "lower bound,%.8g,%.8g,1,1" % (t1["lower"], ulb),
        "Noisy-SGD,%.8g,%.8g,%.8g,%.8g" % (t1["sgd"], t1["v0_sgd"], t1["ratio_sgd"],
                                           t1["v0_sgd"] / ulb),
        "nu-Noisy-FTRL,%.8g,%.8g,%.8g,%.8g" % (t1["ftrl"], t1["v0_ftrl"], t1["ratio_ftrl"],
                                               t1["v0_ftrl"] / ulb),
        "LTI optimum,,%.8g,,%.8g" % (t1["v0_opt"], t1["v0_opt"] / ulb)]
    assert _csv(out / "table4.csv") == [
        "%g,%.8g,%.8g,%.8g,%.8g,%.8g,%.8g,%.8g" % (
            w["a"], w["d_eff"], w["d_eff_table4"], w["v0_sgd"], w["v0_ftrl"],
            w["v0_ftrl"] / w["v0_sgd"], w["ftrl_table4"], w["ftrl_table4"] / w["sgd_table4"])
        for w in r["table4"]]
    assert summary["damped_antipgd_between_sgd_and_nu"] is r["damped_between"]
    _claims_match(r, summary)
    assert [w["beta"]["kind"] for w in r["table2"]] == ["sgd", "nu", "nu", "antipgd",
                                                        "antipgd"]
    assert r["T"][0] == 1 and r["T"][-1] == 2 ** 17


def test_fig1_seed_and_scale_change_the_simulations():
    """The seed reaches the simulations (the closed forms do not depend on it), and the scale
    their horizon: the keywords are used, not dropped."""
    a, b, c = nu.fig1("smoke", 1), nu.fig1("smoke", 2), nu.fig1("smoke", 1)
    assert a["sims"][0]["opt"]["mean"] != b["sims"][0]["opt"]["mean"]
    assert a["sims"] == c["sims"]  # deterministic for a seed
    np.testing.assert_array_equal(a["ratio"], b["ratio"])
    assert a["sims"][0]["opt"]["steps"] < nu.fig1("quick", 1)["sims"][0]["opt"]["steps"]


def test_result_layouts(c_layout):
    assert c_layout("dpcorr/papers/nu_repro.h", nu.MIRRORS) > 100


@pytest.mark.parametrize("fn", [nu.fig1, nu.fig2, nu.fig3])
def test_refusals_name_the_keyword(fn):
    with pytest.raises(ValueError, match="^scale:"):
        fn(scale="medium")
    with pytest.raises(ValueError, match="^seed:") as exc:
        fn(seed=-1)
    assert exc.value.field == "seed"
    with pytest.raises(ValueError, match="^seed:"):
        fn(seed=2 ** 64)
    with pytest.raises(TypeError, match="^seed:"):
        fn(seed=1.5)
    with pytest.raises(TypeError, match="^scale:"):
        fn(scale=1)
