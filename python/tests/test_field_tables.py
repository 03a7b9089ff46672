"""The binding's mirrors of the structs with a library field table are generated from that table
at import (dpcorr._lib.generated): every exported table gives a ctypes mirror with its fields
at the table's offsets and sizes and the library's sizeof; the generator refuses a table it
cannot mirror exactly. The keywords that mirror a library field default to None, and None gives
the library's default: what the C `_init` writes (compared through ctypes, nothing changed in
C), not a copy."""

import ctypes
import inspect
import math
import json
import pathlib
import re

import numpy as np
import pytest

from dpcorr import _lib
from dpcorr._lib import lib
from dpcorr.mechanism import Mechanism
from dpcorr.noise import NoiseGenerator
from dpcorr.plan import TrainingPlan

ROOT = pathlib.Path(__file__).resolve().parents[2]
_DECL = re.compile(r"DPC_API const dpc_field_table \*(dpc_\w+)_fields\(void\)")


def exported_structs():
    """Every struct whose table a public header exports (dpc_X_fields), from the headers."""
    found = set()
    for h in sorted((ROOT / "include" / "dpcorr").rglob("*.h")):
        found.update(_DECL.findall(h.read_text()))
    return sorted(found)


STRUCTS = exported_structs()


def test_the_headers_export_tables():
    # the parametrized tests below cover every table; an empty list would test nothing
    assert len(STRUCTS) >= 20 and "dpc_train_config" in STRUCTS, STRUCTS


def _rows(t):
    return [t.fields[i] for i in range(t.count)]


@pytest.mark.parametrize("struct", STRUCTS)
def test_generated_mirror_is_the_table(struct):
    m = _lib.generated(struct)
    t = m._table_
    assert t.name.decode() == struct
    assert ctypes.sizeof(m) == t.size
    abi = lib.dpc_abi_sizeof(struct.encode())
    assert abi in (0, t.size)  # 0: a struct the ABI list does not name (the papers')
    named = [(n, c) for n, c in m._fields_ if not n.startswith("_pad")]
    rows = _rows(t)
    assert len(named) == len(rows)
    covered = 0
    for (attr, ctype), f in zip(named, rows):
        assert attr.rstrip("_") == f.name.decode()
        d = getattr(m, attr)
        assert (d.offset, d.size) == (f.offset, f.size), attr
        covered += f.size
        if f.type == _lib.FIELD_STRUCT:  # nested: the sub-table's own generated mirror
            sub = ctypes.cast(f.sub, _lib.P(_lib.FieldTable)).contents
            assert ctype is _lib._generate(sub)  # one class per table, exported or nested
    # what is not a field is padding, and padding is only what the table leaves between fields
    pads = sum(ctypes.sizeof(c) for n, c in m._fields_ if n.startswith("_pad"))
    assert covered + pads <= t.size


@pytest.mark.parametrize("struct", STRUCTS)
def test_generated_mirror_reads_the_table_defaults(struct):
    """dpc_field_defaults writes each numeric default; the mirror reads it back at its field:
    a field of the wrong type or offset would read other bytes."""
    m = _lib.generated(struct)
    lib.dpc_field_defaults.argtypes = [_lib.P(_lib.FieldTable), ctypes.c_void_p]
    obj = m()
    ctypes.memset(ctypes.byref(obj), 0xA5, ctypes.sizeof(obj))
    lib.dpc_field_defaults(ctypes.byref(m._table_), ctypes.byref(obj))

    def walk(mirror, value):
        n = 0
        for attr, f in mirror._rows_.items():
            if f.type == _lib.FIELD_STRUCT:
                n += walk(type(getattr(value, attr)), getattr(value, attr))
            elif f.type in _lib.NUMERIC_TYPES:
                got = getattr(value, attr)  # a NaN default (unset) reads back as NaN
                if f.type == _lib.FIELD_CHAR:  # one byte (b","): its number is the byte
                    assert got == _lib.default(mirror, attr), (mirror.__name__, attr)
                    got = got[0]
                assert got == f.def_ or (math.isnan(f.def_) and math.isnan(got)), (mirror.__name__, attr)
                if f.type == _lib.FIELD_ENUM:
                    name = _lib.default(mirror, attr)
                    assert _lib.enum_value(mirror, attr, name) == int(f.def_)
                n += 1
        return n

    walk(m, obj)


@pytest.mark.parametrize("struct,init,args", [
    ("dpc_train_config", "dpc_train_config_init", ()),
    ("dpc_mech_params", "dpc_mech_params_init", ()),
    ("dpc_noise_config", "dpc_noise_config_init", (7,)),
])
def test_c_init_is_the_table_defaults(struct, init, args):
    """The struct after its C _init, read through the generated mirror, holds the table's
    defaults (what a Python keyword left None stands for)."""
    m = _lib.generated(struct)
    obj = m()
    fn = getattr(lib, init)
    fn.argtypes = [_lib.P(m)] + [ctypes.c_size_t] * len(args)
    fn(ctypes.byref(obj), *args)
    ref = m()
    lib.dpc_field_defaults(ctypes.byref(m._table_), ctypes.byref(ref))
    if args:
        ref.d = args[0]  # dpc_noise_config_init's argument
    assert bytes(obj) == bytes(ref)


def test_narrow_types_are_mirrored():
    """The uint32, char and long rows (csv delimiter and label column, the SSP baseline's and
    linreg's streams) mirror as c_uint32, c_char and c_long; dpc_csv_opts_default, returned by
    value into the generated mirror, holds the table's defaults (b",", -1)."""
    csv = _lib.generated("dpc_csv_opts")
    types = dict(csv._fields_)
    assert types["delimiter"] is ctypes.c_char and types["label_col"] is ctypes.c_long
    assert _lib.row(csv, "delimiter").type == _lib.FIELD_CHAR
    assert _lib.row(csv, "label_col").type == _lib.FIELD_LONG
    assert _lib.default(csv, "delimiter") == b"," and _lib.default(csv, "label_col") == -1
    assert _lib.default_text(csv, "delimiter") == ","
    fn = lib.dpc_csv_opts_default
    fn.restype, fn.argtypes = csv, []
    got = fn()
    assert (got.delimiter, got.label_col, got.n_classes) == (b",", -1, 0)
    assert _lib.enum_names(csv, "header")[got.header] == _lib.default(csv, "header") == "auto"
    ref = csv()
    lib.dpc_field_defaults(ctypes.byref(csv._table_), ctypes.byref(ref))
    assert all(getattr(got, a) == getattr(ref, a) for a in csv._rows_), "default != table"
    for struct in ("dpc_linreg_ssp_opts", "dpc_linreg_opts"):
        m = _lib.generated(struct)
        assert dict(m._fields_)["stream"] is ctypes.c_uint32, struct
        obj = m()
        obj.stream = 2**32 - 1  # the whole type: read back exactly
        get = lib.dpc_field_get
        get.restype, get.argtypes = ctypes.c_double, [_lib.P(_lib.Field), ctypes.c_void_p]
        assert get(ctypes.byref(_lib.row(m, "stream")), ctypes.byref(obj)) == 2**32 - 1


def test_package_mirrors_are_the_generated_ones():
    for struct, name in (("dpc_train_config", "TrainConfig"), ("dpc_mech_params", "MechParams"),
                         ("dpc_noise_config", "NoiseConfig"), ("dpc_train_record", "TrainRecord"),
                         ("dpc_step_info", "StepInfo"),
                         ("dpc_privatize_config", "PrivatizeConfig")):
        assert getattr(_lib, name) is _lib.generated(struct)
    assert dict(_lib.TrainConfig._fields_)["mech"] is _lib.MechParams
    assert dict(_lib.PrivatizeConfig._fields_)["mech"] is _lib.MechParams
    assert _lib.MechParams._rows_["lambda_"].name == b"lambda"  # a Python keyword, renamed
    # the noise forms are the table's names, in value order
    assert _lib.NOISE_FORMS == {n: v for v, n in
                                enumerate(_lib.enum_names(_lib.NoiseConfig, "form"))}


def _module_mirrors():
    """The modules' hand-written mirrors of library results that have no table and are not in
    the ABI list ({C name: class}; their tests check them against offsetof)."""
    from dpcorr import plan, strategy
    from dpcorr.papers import kan, linreg, nu, srgd
    return {**nu.MIRRORS, **srgd.MIRRORS, **linreg.MIRRORS, **kan.MIRRORS,
            "dpc_mech_compare_row": strategy._CompareRow, "dpc_train_demo": plan._Demo}


def test_module_mirrors_have_no_table():
    """A result struct that gains an exported table is mirrored from it (generated) instead."""
    tabled = sorted(n for n in _module_mirrors() if hasattr(lib, n + "_fields"))
    assert tabled == [], f"switch these mirrors to _lib.generated: {tabled}"
    assert len(_module_mirrors()) >= 25


def test_no_generated_field_is_written_in_the_package():
    """The generated structs' fields are not listed in the package's source: a field only the
    trainer's table has (the schedule's) appears nowhere in python/dpcorr."""
    src = "\n".join(p.read_text() for p in (ROOT / "python" / "dpcorr").rglob("*.py"))
    for mirror in _module_mirrors().values():  # their members are their own structs'
        src = src.replace(inspect.getsource(mirror), "")
    hand = {n for m in _lib.MIRRORS.values() if not issubclass(m, _lib.Mirror)
            for n, _ in m._fields_}
    only_table = [f.name.decode() for f in _rows(_lib.TrainConfig._table_)
                  if f.name.decode() not in hand and f.name.decode() not in src]
    assert len(only_table) >= 5, only_table  # the schedule, threads, precision, ...
    for struct in ("dpc_train_config", "dpc_mech_params", "dpc_noise_config"):
        for f in _rows(_lib.generated(struct)._table_):
            if f.name.decode() not in hand:  # a hand-written mirror's own field aside
                assert f'("{f.name.decode()}", c_' not in src, (struct, f.name)


def _table(name, size, rows):
    arr = (_lib.Field * len(rows))(*rows)
    t = _lib.FieldTable(name.encode(), size, 8, ctypes.cast(arr, _lib.P(_lib.Field)), len(rows))
    t._keep = arr
    return t


def _row(name, ftype, offset, size):
    return _lib.Field(name=name.encode(), type=ftype, offset=offset, size=size, doc=b"test")


def test_generator_pads_and_refuses():
    # a gap the C compiler would not leave by itself (an int at 12 after a double at 0): the
    # mirror pads explicitly to the table's offset
    t = _table("dpc_test_gap", 24, [_row("a", _lib.FIELD_DOUBLE, 0, 8),
                                    _row("b", _lib.FIELD_INT, 12, 4),
                                    _row("c", _lib.FIELD_BYTES, 16, 5)])
    m = _lib._generate(t)
    assert (m.a.offset, m.b.offset, m.c.offset, ctypes.sizeof(m)) == (0, 12, 16, 24)
    assert any(n.startswith("_pad") for n, _ in m._fields_)
    # an offset ctypes cannot reach (a double at 4), a size that is not the type's, a type it
    # does not know: ImportError naming the field
    for bad, what in ((_row("x", _lib.FIELD_DOUBLE, 4, 8), "x"),
                      (_row("y", _lib.FIELD_INT, 0, 8), "y"),
                      (_row("z", 42, 0, 8), "z")):
        with pytest.raises(ImportError, match=what):
            _lib._generate(_table(f"dpc_test_bad_{what}", 16, [bad]))
    # a table whose size is not what its fields make
    with pytest.raises(ImportError, match="sizeof"):
        _lib._generate(_table("dpc_test_size", 4, [_row("a", _lib.FIELD_DOUBLE, 0, 8)]))


def test_swapped_fields_are_refused():
    """check_mirror (for a hand-written mirror of a struct that gains a table) sees two fields
    of one size swapped, which a size check cannot."""
    fields = [(n, c) for n, c in _lib.TrainConfig._fields_ if not n.startswith("_pad")]
    i = next(k for k in range(len(fields) - 1)
             if fields[k][1] is _lib.c_double and fields[k + 1][1] is _lib.c_double)
    fields[i], fields[i + 1] = fields[i + 1], fields[i]
    swapped = type("TrainConfig", (ctypes.Structure,), {"_fields_": fields})
    assert ctypes.sizeof(swapped) == ctypes.sizeof(_lib.TrainConfig)
    with pytest.raises(ImportError, match="offset"):
        _lib.check_mirror(swapped, "dpc_train_config_fields")
    _lib.check_mirror(_lib.TrainConfig, "dpc_train_config_fields")
    renamed = type("MechParams", (ctypes.Structure,),
                   {"_fields_": [("nu2" if n == "nu" else n, t)
                                 for n, t in _lib.MechParams._fields_]})
    with pytest.raises(ImportError, match="nu2"):
        _lib.check_mirror(renamed, "dpc_mech_params_fields")


# ---- keywords left None are the library's defaults (the C _init, through ctypes) --------------

def _c_train_config():
    c = _lib.TrainConfig()
    lib.dpc_train_config_init(ctypes.byref(c))
    return c


def _c_mech_params():
    p = _lib.MechParams()
    lib.dpc_mech_params_init(ctypes.byref(p))
    return p


def test_plan_keywords_left_none_are_the_c_init():
    c = _c_train_config()
    plan = TrainingPlan(1000, batch_size=50, noise_multiplier=1.0, seed=1)
    for name in ("epochs", "groups", "clip", "lr", "momentum", "weight_decay", "accountant",
                 "allow_large_delta"):
        assert getattr(plan._cfg, name) == getattr(c, name), name
    assert plan._cfg.mech.kind == c.mech.kind
    # the same run as every keyword given the C init's value explicitly
    explicit = TrainingPlan(
        1000, batch_size=50, noise_multiplier=1.0, seed=1, epochs=c.epochs, clip=c.clip,
        lr=c.lr, momentum=c.momentum, weight_decay=c.weight_decay, groups=c.groups,
        accountant=_lib.text(lib.dpc_accountant_name(c.accountant)),
        allow_large_delta=bool(c.allow_large_delta),
        mech=_lib.text(lib.dpc_mech_kind_name(c.mech.kind)),
        sampler="auto" if c.sampler == _lib.SAMPLER_AUTO else
        _lib.text(lib.dpc_sampler_kind_name(c.sampler)))
    assert explicit.ledger() == plan.ledger()
    given = TrainingPlan(1000, batch_size=50, noise_multiplier=1.0, seed=1, lr=0.5, epochs=2)
    assert given._cfg.lr == 0.5 and given._cfg.epochs == 2


def test_mechanism_keywords_left_none_are_the_c_init():
    p = _c_mech_params()
    assert Mechanism("nu", 8).params["nu"] == p.nu
    assert Mechanism("lcgd", 8).params["lambda"] == p.lambda_
    assert Mechanism("tree", 8).params["honaker"] == bool(p.honaker)
    bsr = Mechanism("bsr", 8, bands=2).params
    assert (bsr["momentum"], bsr["decay"]) == (p.momentum, p.decay)
    toe = Mechanism("toeplitz", 4, coeffs=[1.0, -0.5]).params
    assert toe["of"] == ("strategy" if p.coeffs_of_strategy else "noising")
    explicit = Mechanism("bsr", 8, bands=2, momentum=p.momentum, decay=p.decay)
    assert explicit.description == Mechanism("bsr", 8, bands=2).description
    assert _lib.default(_lib.MechParams, "decay") == p.decay


def test_noise_generator_none_is_the_c_init(monkeypatch):
    """The dpc_noise_config the generator hands the library, with form and memory_budget left
    None, is dpc_noise_config_init's (but for the coordinates and the ISA level)."""
    seen = []
    real = lib.dpc_noise_new

    def spy(gen, mech, stream, cfg, err):
        seen.append(bytes(cfg._obj))
        return real(gen, mech, stream, cfg, err)

    monkeypatch.setattr(lib, "dpc_noise_new", spy)
    mech = Mechanism("nu", 6, nu=0.1)
    gen = NoiseGenerator(mech, 5, seed=2)
    ref = _lib.NoiseConfig()
    lib.dpc_noise_config_init(ctypes.byref(ref), 5)
    ref.isa = _lib.isa_level("noise")
    assert seen == [bytes(ref)]
    explicit = NoiseGenerator(mech, 5, seed=2,
                              form=_lib.enum_names(_lib.NoiseConfig, "form")[ref.form],
                              memory_budget=ref.memory_budget)
    assert seen[1] == seen[0]
    assert np.array_equal(gen.next(), explicit.next())


def test_make_private_keywords_left_none_are_the_c_init():
    """make_private's keywords left None run as the C init's values and record them (the
    checkpoint fingerprint is the one an explicit call gives)."""
    torch = pytest.importorskip("torch")
    import dpcorr.torch as dt

    c = _c_train_config()
    g = torch.Generator().manual_seed(0)
    ds = torch.utils.data.TensorDataset(torch.randn(40, 3, generator=g, dtype=torch.float64),
                                        torch.randint(0, 2, (40,), generator=g))

    def engine(**kw):
        torch.manual_seed(0)
        model = torch.nn.Linear(3, 2).double()
        opt = torch.optim.Adam(model.parameters())  # no momentum in its group
        return dt.make_private(model, opt, ds, batch_size=10, noise_multiplier=1.0,
                               mech="identity", seed=1, **kw)[3]

    e = engine()
    for name in ("epochs", "groups", "clip", "momentum", "weight_decay", "accountant",
                 "allow_large_delta", "noise_form"):
        assert getattr(e.plan._cfg, name) == getattr(c, name), name
    x = engine(epochs=c.epochs, clip=c.clip, groups=c.groups,
               accountant=_lib.text(lib.dpc_accountant_name(c.accountant)),
               allow_large_delta=bool(c.allow_large_delta),
               sampler="auto" if c.sampler == _lib.SAMPLER_AUTO else None,
               noise_form=_lib.text(lib.dpc_noise_form_name(c.noise_form)))
    assert json.dumps(e._fingerprint(), sort_keys=True) == \
        json.dumps(x._fingerprint(), sort_keys=True)
    assert e.plan.ledger() == x.plan.ledger()
    e.close()
    x.close()


def test_every_mirrored_struct_with_a_table_is_generated():
    """A struct that gains an exported table is mirrored from it: its hand-written mirror must
    be replaced by one line, `Name = generated("dpc_name")` (this test names it)."""
    hand = sorted(name for name, m in _lib.MIRRORS.items()
                  if name in STRUCTS and m is not _lib.generated(name))
    assert hand == [], f"switch these mirrors to _lib.generated: {hand}"
    # the ones still written by hand are exactly the structs without a table
    assert all(not hasattr(lib, name + "_fields") for name, m in _lib.MIRRORS.items()
               if not issubclass(m, _lib.Mirror))


def test_structs_without_a_table_none_is_their_c_init(monkeypatch):
    """strategy.optimize and Mechanism.error (dpc_strategy_problem, dpc_strategy_options and
    dpc_workload, whose mirrors are generated from their tables): a keyword left None keeps what
    the C _init wrote."""
    from dpcorr import strategy

    seen = []
    real = lib.dpc_strategy_optimize_banded

    def spy(out, pb, opt, err):
        seen.append((bytes(pb._obj), bytes(opt._obj)))
        return real(out, pb, opt, err)

    monkeypatch.setattr(lib, "dpc_strategy_optimize_banded", spy)
    strategy.optimize("banded", 16, bands=2)
    pb, opt = _lib.StrategyProblem(), _lib.StrategyOptions()
    lib.dpc_strategy_problem_init(ctypes.byref(pb), 16)
    lib.dpc_strategy_options_init(ctypes.byref(opt))
    opt.bands = 2
    assert seen == [(bytes(pb), bytes(opt))]
    m = Mechanism("nu", 8, nu=0.3)
    assert m.error() == m.error(pb.workload.momentum, pb.workload.decay)
    assert m.error() != m.error(0.5, pb.workload.decay)  # the workload is used


def test_a_library_without_the_table_is_refused():
    with pytest.raises(ImportError, match="dpc_no_such_struct_fields"):
        _lib.generated("dpc_no_such_struct")


@pytest.mark.parametrize("mode", range(5))
def test_account_query_init_is_the_table_defaults(mode):
    """dpc_account_query_init, read through the generated mirror, is the table's defaults (NaN
    "not given", AUTO, the nested tables' own) but for its mode argument."""
    from dpcorr import account

    q = account._Query()
    lib.dpc_account_query_init(ctypes.byref(q), mode)
    ref = account._Query()
    lib.dpc_field_defaults.argtypes = [_lib.P(_lib.FieldTable), ctypes.c_void_p]
    lib.dpc_field_defaults(ctypes.byref(account._Query._table_), ctypes.byref(ref))
    ref.mode = mode
    assert bytes(q) == bytes(ref)
    assert math.isnan(q.sigma) and q.accountant == -1 and q.part.k == 1
    assert dict(account._Query._fields_)["part"] is _lib.Participation
    assert dict(account._Query._fields_)["mech"] is _lib.MechParams
    assert dict(account._Query._fields_)["opts"] is _lib.AccountOpts
    assert account._MODES == {"epsilon": 0, "delta": 1, "sigma": 2, "steps": 3}


def test_participation_init_is_the_table_defaults():
    p = _lib.Participation(kind=1, k=7, b=9)
    lib.dpc_participation_init(ctypes.byref(p))
    assert (p.kind, p.k, p.b) == (_lib.PART_MINSEP, 1, 1)
    assert _lib.enum_names(_lib.Participation, "kind") == ("min-sep", "cyclic")
    assert _lib.Participation(_lib.PART_CYCLIC, 4, 5).b == 5  # positional, as the package builds it


def test_account_keywords_left_none_are_the_library_defaults():
    """The accounting keywords left None (q, max_steps, conversion, refine) give what the
    library's defaults give (the query's and the accountant options' tables), not a copy."""
    from dpcorr import account

    assert account.epsilon(1.1, steps=100, delta=1e-5) == \
        account.epsilon(1.1, q=_lib.default(account._Query, "q"), steps=100, delta=1e-5)
    assert account.steps(20.0, 1.0, 1e-5) == account.steps(20.0, 1.0, 1e-5, max_steps=10_000_000)
    tight = _lib.default(_lib.AccountOpts, "zcdp_conv")
    assert account.zcdp_epsilon(0.1, 1e-5) == account.zcdp_epsilon(0.1, 1e-5, tight)
    assert account.epsilon(1.1, steps=100, delta=1e-5, accountant="zcdp") == \
        account.epsilon(1.1, steps=100, delta=1e-5, accountant="zcdp", conversion=tight)

