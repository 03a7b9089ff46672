"""The binding's mirrors of the trainer's structs are checked against the library's field
tables (dpc_train_config_fields, dpc_mech_params_fields, dpc_train_record_fields) at import:
the same fields at the same offsets; a mirror with two fields swapped is refused. The
TrainingPlan keywords left None are the library's defaults (the table's), not copies."""

import ctypes

import pytest

from dpcorr import _lib
from dpcorr._lib import lib
from dpcorr.plan import TrainingPlan


@pytest.mark.parametrize("table_fn,mirror", sorted(_lib.TABLES.items()))
def test_mirror_matches_the_library_table(table_fn, mirror):
    _lib.check_mirror(getattr(_lib, mirror), table_fn)
    assert len(_lib.table_fields(table_fn)) == len(getattr(_lib, mirror)._fields_)


def test_swapped_fields_are_refused():
    fields = list(_lib.TrainConfig._fields_)
    i = [n for n, _ in fields].index("cooldown_fraction")
    fields[i], fields[i + 1] = fields[i + 1], fields[i]  # same size: _check_abi cannot see it
    swapped = type("TrainConfig", (ctypes.Structure,), {"_fields_": fields})
    assert ctypes.sizeof(swapped) == ctypes.sizeof(_lib.TrainConfig)
    with pytest.raises(ImportError, match="offset"):
        _lib.check_mirror(swapped, "dpc_train_config_fields")
    renamed = type("MechParams", (ctypes.Structure,),
                   {"_fields_": [("nu2" if n == "nu" else n, t)
                                 for n, t in _lib.MechParams._fields_]})
    with pytest.raises(ImportError, match="nu2"):
        _lib.check_mirror(renamed, "dpc_mech_params_fields")


def test_plan_defaults_are_the_library_table():
    plan = TrainingPlan(1000, batch_size=50, noise_multiplier=1.0, seed=1)
    fields = _lib.table_fields("dpc_train_config_fields")
    for name in ("epochs", "groups", "clip", "lr", "momentum", "weight_decay"):
        assert getattr(plan._cfg, name) == fields[name].def_, name
    given = TrainingPlan(1000, batch_size=50, noise_multiplier=1.0, seed=1, lr=0.5, epochs=2)
    assert given._cfg.lr == 0.5 and given._cfg.epochs == 2
    c = _lib.TrainConfig()
    lib.dpc_train_config_init(ctypes.byref(c))
    assert fields["cooldown_fraction"].def_ == c.cooldown_fraction
