"""dpcorr.papers.kan: parts 1-3, 6 and 7 of the KAN + DP-lambda-CGD reproduction from the
library (dpc_kan_repro_*), equal to what `dpcorr repro kan --smoke` writes: every line of their
CSV files rebuilt from the binding's numbers with the CLI's format strings
(tools/repro_kan.c), and the JSON summary's checks and statements. Mirrors checked against
offsetof; refusals name the keyword."""

import ctypes
import json

import pytest

from dpcorr.papers import kan


def _csv(path):
    return path.read_text().splitlines()[1:]


@pytest.fixture(scope="module")
def smoke(repro, tmp_path_factory):
    out = tmp_path_factory.mktemp("kan") / "kan"
    summary, raw = repro("kan", out, "--smoke", "--seed", 3)
    return out, summary, raw


def test_cli_json_is_valid(smoke):
    json.loads(smoke[2])


def test_noise_matches_cli(smoke):
    out, summary, _ = smoke
    r = kan.noise("smoke", seed=3)
    T, N = r["T"], r["coordinates"]
    assert r["var_sum"].shape == (3, T)
    assert _csv(out / "noise_stats.csv") == [
        "%g,%d,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%d,%d" % (
            lam, T, r["var_xi1"][i], r["var_xi_t"][i], r["theory_var_xi_t"][i],
            r["cov_lag1"][i], r["theory_cov_lag1"][i], r["cov_lag2"][i], r["var_sum"][i][-1],
            r["theory_var_sum"][i][-1], T, N) for i, lam in enumerate(r["lambda"])]
    assert _csv(out / "noise_cumvar.csv") == [
        "%g,%d,%.6g,%.6g" % (lam, t + 1, r["var_sum"][i][t], r["theory_var_sum"][i][t])
        for i, lam in enumerate(r["lambda"]) for t in range(T)]
    assert summary["noise_var_sum_T100"]["0.5"]["var_sum"] == float("%.6g" % r["var_sum"][1][-1])


def test_exact_tables_match_cli(smoke):
    out, summary, _ = smoke
    assert _csv(out / "sensitivity.csv") == [
        "%d,%g,%d,%.8g,%.8g,%.8g,%.6g" % (w["T"], w["lambda"], w["tau"], w["brute"],
                                          w["exact"], w["bound"], w["bound_over_exact"])
        for w in kan.sensitivity()]
    k, lams = kan.kappa_table(), kan.lambdas()
    assert _csv(out / "kappa_table.csv") == [
        "%d,%d,%d,%g,1e-5,%g,%.8g,%.8g,%d,%.8g,%d,%.8g" % (
            w["n"], w["B"], w["T"], w["eps"], lams[i], w["kappa_D9"], w["kappa_F12"][i],
            w["F12_valid"], w["kappa_dpcorr"][i], w["participations"][i], w["sensitivity"][i])
        for w in k["rows"] for i in range(len(lams))]
    assert summary["eq19_eps_at_kappa_D9"] == float("%.10g" % k["eq19_eps"])
    assert summary["full_batch"]["kappa_exact"] == float("%.6g" % k["fb_kappa_exact"])


def test_width_and_trends_match_cli(smoke):
    out, summary, _ = smoke
    w = kan.width_window("smoke", 3)
    assert _csv(out / "width_window.csv") == [
        "%d,%d,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%d,%.6g,%.6g,%.6g,%d" % (
            x["m"], x["P"], x["kappa"], x["eta"], x["clip"], x["gamma_lo"], x["radius"],
            x["max_dist"], x["projections"], x["m_edge"], x["m_hi"], x["m_lo"], x["inside"])
        for x in w["rows"]]
    assert summary["width_window"]["consistent"] is w["verified"]
    assert summary["width_window"]["inside_seen"] is w["inside_seen"]
    t = kan.trends("smoke", 3)
    assert _csv(out / "n_eps_trends.csv") == [
        "%s,%d,%g,%.6g,%.8g,%.6g,%.8g,%.6g" % (sweep, x["n"], x["eps"], x["kappa"],
                                              x["avg_test_loss"], x["avg_test_err"],
                                              x["avg_train_loss"], x["A_van"])
        for sweep in ("n", "eps") for x in t[sweep + "_sweep"]]
    assert summary["trends"] == {"decreasing_in_n": t["decreasing_in_n"],
                                 "decreasing_in_eps": t["decreasing_in_eps"]}
    c = kan.claims()
    assert (summary["reproduces"], summary["not_reproduced"]) == (c["reproduces"],
                                                                  c["not_reproduced"])


def test_fmnist_setup_is_the_cli_runs(smoke):
    """The setup the CLI trained (its fmnist_kan_vs_mlp.csv rows: model, spec, epochs, batch,
    lr, clip, the accountant in the route), when the data set is installed."""
    out, summary, _ = smoke
    csv = out / "fmnist_kan_vs_mlp.csv"
    if not csv.is_file():
        pytest.skip(f"repro kan skipped Fashion-MNIST: {summary.get('fmnist')}")
    f = kan.fmnist_setup("smoke")
    c = f["config"]
    rows = _csv(csv)
    assert [r.split(",")[0] for r in rows] == [m["label"] for m in f["models"]]
    for row, m in zip(rows, f["models"]):
        label, spec = row.split(",")[:2]
        assert spec.startswith(m["model"].split(",")[0])  # the CLI prints the resolved spec
        assert f",3,1e-5,{c['epochs']},{c['batch']},{c['lr']:g},{c['clip']:g}," in row
        assert row.endswith(f"({c['accountant']}, add/remove)")
    assert (c["epsilon"], c["delta"]) == (3.0, 1e-5)
    assert kan.fmnist_setup("full")["config"]["accountant"] == "pld"  # kan.h: PLD at full


def test_seed_is_used():
    a, b = kan.noise("smoke", 1), kan.noise("smoke", 2)
    assert a["var_xi_t"][0] != b["var_xi_t"][0]
    assert (a["theory_var_sum"] == b["theory_var_sum"]).all()


def test_result_layouts(c_layout):
    # lambda is a Python keyword: the mirrors spell that member lambda_ (same layout)
    def c_named(m):
        return type(m.__name__, (ctypes.Structure,), {"_fields_": [
            ("lambda" if n == "lambda_" else n, t) for n, t in m._fields_]})
    assert c_layout("dpcorr/papers/kan.h", {k: c_named(m) for k, m in kan.MIRRORS.items()}) > 60


@pytest.mark.parametrize("fn", [kan.noise, kan.width_window, kan.trends])
def test_refusals_name_the_keyword(fn):
    with pytest.raises(ValueError, match="^scale:"):
        fn(scale="big")
    with pytest.raises(ValueError, match="^seed:") as exc:
        fn(seed=-1)
    assert exc.value.field == "seed"
