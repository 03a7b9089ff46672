"""dpcorr.compare (dpc_mech_compare): the table `dpcorr compare` prints, line for line, from the
binding's numbers; the library's defaults of the keywords; refusals naming the keyword."""

import math

import pytest

import dpcorr
from dpcorr import strategy


def _cli_line(r):
    """A row as tools/cmd_compare.c prints it (its format string, in Python's % formatting,
    which is C's for finite values)."""
    st = "%d%s" % (r["state_floats"], "/0" if r["replay"] and r["state_floats"] else "")
    return "%-30s %9.4g%s%9.4g %9.4g %11.4g %11.4g %7s %8s %6.3fx" % (
        r["name"], r["sensitivity"], " " if r["sensitivity_exact"] else "*", r["rmse"],
        r["max_error"], r["scaled_rmse"], r["scaled_max_error"], st,
        "yes" if r["anytime"] else "no", r["loss_vs_sgd"])


def _cli_tables(text):
    """The CLI's two tables: lists of row lines (the lines under each "mechanism" header)."""
    tables, rows = [], None
    for line in text.splitlines():
        if line.startswith("mechanism "):
            rows = []
            tables.append(rows)
        elif rows is not None and line.strip() and not line.startswith(("==", "(")):
            rows.append(line)
        elif not line.strip():
            rows = None
    return tables


@pytest.mark.parametrize("n,k,b", [(64, 2, 32), (40, 3, 7)])
def test_compare_matches_cli(cli, n, k, b):
    text = cli("compare", "--steps", n, "--participations", k, "--min-sep", b)
    single, multi = _cli_tables(text)
    one = dpcorr.compare(n)  # the library's pattern: single participation, the CLI's first table
    assert (one["participations"], one["min_sep"], one["cyclic"]) == (1, 1, False)
    two = strategy.compare(n, participations=k, min_sep=b)
    for got, want in ((one, single), (two, multi)):
        assert [_cli_line(r) for r in got["rows"]] == want
        assert got["failed"] == 0 and got["first_failure"] is None
    # the CLI's columns are rounded; the dict keeps the library's doubles, with their identities
    sgd = two["rows"][0]
    assert sgd["kind"] == "identity" and sgd["loss_vs_sgd"] == 1.0
    assert math.isclose(sgd["sensitivity"], math.sqrt(k))  # k participations of identity
    tuned = {r["kind"]: r["value"] for r in two["rows"] if r["kind"] in ("antipgd", "lcgd")}
    assert tuned["antipgd"] in strategy.compare_grid("antipgd")
    assert tuned["lcgd"] in strategy.compare_grid("lcgd")
    kinds = [r["kind"] for r in two["rows"]]
    assert kinds == ["identity", "nu", "nu", "antipgd", "lcgd", "bsr", "bisr", "blt", "tree",
                     "tree"]
    # each row is the mechanism it names, measured under the pattern (dpcorr.Mechanism)
    bsr = two["rows"][5]
    m = dpcorr.Mechanism("bsr", n, bands=int(bsr["value"]), participations=k, min_sep=b)
    assert (m.sensitivity, m.rmse, m.max_error) == (bsr["sensitivity"], bsr["rmse"],
                                                     bsr["max_error"])


def test_compare_failures_as_cli(cli):
    """At n = 1 the BLT row cannot be built: left out and counted, as the CLI's note says."""
    text = cli("compare", "--steps", 1)
    got = dpcorr.compare(1)
    assert [_cli_line(r) for r in got["rows"]] == _cli_tables(text)[0]
    assert "blt" not in [r["kind"] for r in got["rows"]]
    note = f"({got['failed']} configurations not shown; the first: {got['first_failure']})"
    assert got["failed"] == 1 and note in text


def test_compare_cyclic_and_grid():
    """cyclic=True is the pattern of fixed-order epochs: the sensitivities are the exact cyclic
    ones of dpcorr.Mechanism(cyclic=True)."""
    got = dpcorr.compare(48, participations=3, min_sep=16, cyclic=True)
    assert got["cyclic"] and got["participations"] == 3
    tree = got["rows"][-2]
    m = dpcorr.Mechanism("tree", 48, participations=3, min_sep=16, cyclic=True)
    assert tree["sensitivity"] == m.sensitivity
    assert strategy.compare_grid("antipgd") == (1e-3, 3e-3, 1e-2, 3e-2, 0.1, 0.3)
    assert strategy.compare_grid("bsr") == ()


def test_compare_row_layout(c_layout):
    assert c_layout("dpcorr/strategy.h", {"dpc_mech_compare_row": strategy._CompareRow}) == 12


@pytest.mark.parametrize("kw,name", [
    ({"steps": 0}, "steps"), ({"participations": 0}, "participations"),
    ({"min_sep": 0}, "min_sep"), ({"steps": -3}, "steps")])
def test_compare_refusals_name_the_keyword(kw, name):
    args = {"steps": 10, **kw}
    with pytest.raises(ValueError, match=f"^{name}:") as exc:
        dpcorr.compare(args.pop("steps"), **args)
    assert exc.value.field == name


@pytest.mark.parametrize("kw,name", [({"participations": 1.5}, "participations"),
                                     ({"cyclic": "yes"}, "cyclic"),
                                     ({"min_sep": "3"}, "min_sep")])
def test_compare_type_errors_name_the_keyword(kw, name):
    with pytest.raises(TypeError, match=f"^{name}:"):
        dpcorr.compare(10, **kw)
