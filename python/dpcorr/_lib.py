"""Loading ``libdpcorr.so`` and declaring the part of its C API the package uses (ctypes).

The library is looked up, in this order:

1. ``DPCORR_LIB``: the path of ``libdpcorr.so`` (or of the directory holding it);
2. ``libdpcorr.so`` next to this file (``make`` copies ``build/libdpcorr.so`` into
   ``python/dpcorr/``, and ``pip install ./python`` installs that copy with the package).

Every struct the package passes by pointer is mirrored below. A struct with an exported field
table (``dpc_X_fields``, field.h) is mirrored from the table at import (``generated``): its
fields, types, offsets and nested structs come from the library, checked against each row's
offset and size and ``dpc_abi_sizeof``; none is written here. The others are written by hand
and compared, at import, with the size the library reports (``dpc_abi_sizeof``). A library
built from other headers is refused with an ImportError instead of corrupting memory.

Nothing here is public API: the modules of the package wrap it.
"""

import ctypes
import keyword
import os
import pathlib
import numpy as np

from ._errors import DpcorrError, raise_for

c_double = ctypes.c_double
c_int = ctypes.c_int
c_size_t = ctypes.c_size_t
c_uint32 = ctypes.c_uint32
c_uint64 = ctypes.c_uint64
c_char_p = ctypes.c_char_p
c_void_p = ctypes.c_void_p
P = ctypes.POINTER

LIB_NAME = "libdpcorr.so"


def _candidates():
    env = os.environ.get("DPCORR_LIB")
    if env:
        path = pathlib.Path(env)
        return [path / LIB_NAME if path.is_dir() else path], True
    return [pathlib.Path(__file__).resolve().parent / LIB_NAME], False


def _load():
    paths, from_env = _candidates()
    for path in paths:
        if path.is_file():
            try:
                return ctypes.CDLL(str(path)), path
            except OSError as exc:
                raise ImportError(f"dpcorr: cannot load {path}: {exc}") from exc
    where = ", ".join(str(p) for p in paths)
    if from_env:
        raise ImportError(f"dpcorr: DPCORR_LIB points to {where}, which does not exist; set it "
                          f"to the path of {LIB_NAME} (built by `make` in the dpcorr tree)")
    raise ImportError(
        f"dpcorr: {LIB_NAME} not found (looked for {where}). Build it with `make` in the dpcorr "
        f"source tree (it copies build/{LIB_NAME} into python/dpcorr/), or set DPCORR_LIB to the "
        f"path of an installed {LIB_NAME} (for example /usr/local/lib/{LIB_NAME})")


lib, LIB_PATH = _load()

# ---- the field table itself (field.h): the two hand-written mirrors the generator reads ---------


class Field(ctypes.Structure):
    """dpc_field (field.h): one row of a library field table."""
    _fields_ = [("name", c_char_p), ("type", c_int), ("offset", c_size_t), ("size", c_size_t),
                ("def_", c_double), ("lo", c_double), ("hi", c_double), ("flags", ctypes.c_uint),
                ("names", P(c_char_p)), ("nnames", c_size_t), ("sub", c_void_p),
                ("doc", c_char_p), ("label", c_char_p), ("def_text", c_char_p),
                ("group", c_char_p), ("when", c_char_p)]


class FieldTable(ctypes.Structure):
    """dpc_field_table (field.h)."""
    _fields_ = [("name", c_char_p), ("size", c_size_t), ("align", c_size_t),
                ("fields", P(Field)), ("count", c_size_t)]


# ---- mirrors generated from the library's field tables (field.h) --------------------------------
#
# A struct with an exported field table (dpc_X_fields()) is mirrored from that table at import:
# its fields' names, C types, offsets and sizes, nested tables as nested mirrors, so that no field
# is written here (the table's row is its one description). A struct that gains a table switches
# with one line: `Name = generated("dpc_name")` in place of its hand-written class below.

# dpc_field_type (field.h; values appended, never renumbered) -> the ctypes type of a member
FIELD_DOUBLE, FIELD_SIZE, FIELD_INT, FIELD_BOOL, FIELD_ENUM, FIELD_U64, FIELD_STRUCT, \
    FIELD_STRING, FIELD_POINTER, FIELD_BYTES, FIELD_U32, FIELD_CHAR, FIELD_LONG = range(13)
_FIELD_CTYPES = {FIELD_DOUBLE: c_double, FIELD_SIZE: c_size_t, FIELD_INT: c_int,
                 FIELD_BOOL: c_int, FIELD_ENUM: c_int, FIELD_U64: c_uint64,
                 FIELD_STRING: c_char_p, FIELD_POINTER: c_void_p, FIELD_U32: c_uint32,
                 FIELD_CHAR: ctypes.c_char, FIELD_LONG: ctypes.c_long}
# the types dpc_field_get reads as a number (dpc_field_is_numeric); a CHAR member reads in
# Python as one byte (b","), its number the byte's value
NUMERIC_TYPES = (FIELD_DOUBLE, FIELD_SIZE, FIELD_INT, FIELD_BOOL, FIELD_ENUM, FIELD_U64,
                 FIELD_U32, FIELD_CHAR, FIELD_LONG)

_GENERATED = {}  # struct name -> its generated mirror (one class per table: nested = top level)


class Mirror(ctypes.Structure):
    """Base of the generated mirrors. ``_table_``: the library's dpc_field_table;
    ``_rows_``: {Python attribute name: its dpc_field row} (a C name that is a Python keyword,
    ``lambda``, is the attribute ``lambda_``)."""
    _table_ = None
    _rows_ = {}


def _table_of(table_fn):
    try:
        fn = getattr(lib, table_fn)
    except AttributeError:
        raise ImportError(f"dpcorr: {LIB_PATH} lacks {table_fn}: it is older than this package; "
                          f"rebuild it (make)") from None
    fn.restype, fn.argtypes = P(FieldTable), []
    return fn().contents


def _member_ctype(f):
    if f.type == FIELD_STRUCT:
        return _generate(ctypes.cast(f.sub, P(FieldTable)).contents)
    if f.type == FIELD_BYTES:
        return ctypes.c_ubyte * f.size
    if f.type not in _FIELD_CTYPES:
        raise ImportError(f"dpcorr: {LIB_PATH}: field {f.name.decode()} has a type ({f.type}) "
                          f"this package does not know; it is older than the library")
    return _FIELD_CTYPES[f.type]


def _generate(t):
    """The ctypes mirror of the struct t describes: its rows in order, explicit padding where
    the table's offset is past ctypes' natural one, trailing padding up to t.size; then every
    offset, size and the struct's size checked against the table (ImportError otherwise)."""
    struct = t.name.decode()
    if struct in _GENERATED:
        return _GENERATED[struct]
    fields, rows, end = [], {}, 0
    for i in range(t.count):
        f = t.fields[i]
        name = f.name.decode()
        attr = name + "_" if keyword.iskeyword(name) else name
        ctype = _member_ctype(f)
        align = ctypes.alignment(ctype)
        natural = -(-end // align) * align
        if natural < f.offset:  # a gap ctypes would not leave by itself
            fields.append((f"_pad{len(fields)}", ctypes.c_ubyte * (f.offset - end)))
        fields.append((attr, ctype))
        rows[attr] = f
        end = f.offset + ctypes.sizeof(ctype)
    if end < t.size:
        align = max([ctypes.alignment(c) for _, c in fields] or [1])
        if -(-end // align) * align != t.size:
            fields.append((f"_pad{len(fields)}", ctypes.c_ubyte * (t.size - end)))
    camel = "".join(w.capitalize() for w in struct.removeprefix("dpc_").split("_"))
    cls = type(camel, (Mirror,), {
        "_fields_": fields, "_table_": t, "_rows_": rows,
        "__doc__": f"{struct}: generated from the library's field table {struct}_fields."})
    _verify(cls, t)
    _GENERATED[struct] = cls
    return cls


def _verify(cls, t):
    struct = t.name.decode()
    for attr, f in cls._rows_.items():
        d = getattr(cls, attr)
        if d.offset != f.offset or d.size != f.size:
            raise ImportError(
                f"dpcorr: {LIB_PATH}: {struct}.{f.name.decode()} is at offset {d.offset} (size "
                f"{d.size}) in the generated mirror and {f.offset} ({f.size}) in the library's "
                f"table")
    have = lib.dpc_abi_sizeof(struct.encode())  # 0: a struct the ABI list does not name
    if ctypes.sizeof(cls) != t.size or (have and have != t.size):
        raise ImportError(f"dpcorr: {LIB_PATH}: sizeof {struct} is {t.size} in its table, "
                          f"{have} by dpc_abi_sizeof and {ctypes.sizeof(cls)} generated")


def generated(struct):
    """The mirror of `struct` ("dpc_train_config") generated from its exported table
    (`struct`_fields)."""
    return _generate(_table_of(struct + "_fields"))


def row(mirror, name):
    """The dpc_field row of a generated mirror's field (its attribute name)."""
    try:
        return mirror._rows_[name]
    except KeyError:
        raise KeyError(f"{mirror.__name__} has no field {name!r}") from None


def default(mirror, name):
    """The library's default of a numeric field, as its table gives it (what the struct's _init
    writes): a float for DOUBLE, a bool for BOOL, the enum's name for an ENUM, one byte for a
    CHAR (b",", as the member reads), an int for the other integer types."""
    f = row(mirror, name)
    if f.type == FIELD_ENUM:
        return enum_names(mirror, name)[int(f.def_)]
    if f.type == FIELD_CHAR:
        return bytes([int(f.def_)])
    if f.type == FIELD_DOUBLE:
        return float(f.def_)
    if f.type == FIELD_BOOL:
        return bool(f.def_)
    if f.type in NUMERIC_TYPES:
        return int(f.def_)
    raise TypeError(f"{mirror.__name__}.{name}: not a numeric field")


def default_text(mirror, name):
    """The default of a field as the library shows it (dpc_field_format_default: "0.25", "auto",
    "1 GiB", "the strategy's bands")."""
    buf = ctypes.create_string_buffer(128)
    lib.dpc_field_format_default(ctypes.byref(row(mirror, name)), buf, len(buf))
    return buf.value.decode()


def defaults_doc(mirror, names):
    """"name: default" of each field, for a docstring (generated, never copied)."""
    return "; ".join(f"{row(mirror, n).name.decode()} {default_text(mirror, n)}" for n in names)


def doubles(address):
    """A generated mirror's DPC_FIELD_POINTER member (an address, or None) as double *: the
    table types a pointer member as an untyped borrowed pointer."""
    return ctypes.cast(address, P(c_double))


def enum_names(mirror, name):
    """The names of an ENUM field's values, in value order (the library's name table)."""
    f = row(mirror, name)
    if f.type != FIELD_ENUM:
        raise TypeError(f"{mirror.__name__}.{name}: not an enum field")
    return tuple(f.names[i].decode() for i in range(f.nnames))


def enum_value(mirror, name, value, arg=None):
    """The value of an ENUM field's name `value` (ValueError naming `arg`, default the field,
    and the accepted names, for another)."""
    names = enum_names(mirror, name)
    if value not in names:
        raise ValueError(f"{arg or name}: expected one of {', '.join(map(repr, names))}, got "
                         f"{value!r}")
    return names.index(value)


lib.dpc_abi_sizeof.restype, lib.dpc_abi_sizeof.argtypes = c_size_t, [c_char_p]
lib.dpc_field_format_default.restype = c_int
lib.dpc_field_format_default.argtypes = [P(Field), c_char_p, c_size_t]

MechParams = generated("dpc_mech_params")
Participation = generated("dpc_participation")
Workload = generated("dpc_workload")
NoiseConfig = generated("dpc_noise_config")
TrainConfig = generated("dpc_train_config")
TrainRecord = generated("dpc_train_record")
StepInfo = generated("dpc_step_info")
PrivatizeConfig = generated("dpc_privatize_config")

# ---- hand-written mirrors: structs without a field table (include/dpcorr/*.h), checked by size --


class Error(ctypes.Structure):
    """dpc_error (common.h)."""
    _fields_ = [("status", c_int), ("field", ctypes.c_char * 64), ("msg", ctypes.c_char * 512)]


class Rng(ctypes.Structure):
    """dpc_rng (rng.h)."""
    _fields_ = [("key", c_uint32 * 2), ("seed", c_uint64), ("mode", c_int),
                ("skey", c_uint32 * 8)]


class RngStream(ctypes.Structure):
    """dpc_rng_stream (rng.h)."""
    _fields_ = [("key", c_uint32 * 2), ("secure", c_uint32), ("skey", c_uint32 * 8)]


class Sensitivity(ctypes.Structure):
    """dpc_sensitivity (mech.h)."""
    _fields_ = [("value", c_double), ("exact", c_int), ("method", c_int),
                ("k_effective", c_size_t)]


class MechError(ctypes.Structure):
    """dpc_mech_error (mech.h)."""
    _fields_ = [("rmse", c_double), ("max_error", c_double)]


class IsaTuning(ctypes.Structure):
    """dpc_tune_levels (tune.h): the level per kernel family and the measured ns per level."""
    _fields_ = [("level", c_int * 3), ("ns", (c_double * 4) * 3), ("seconds", c_double)]


GaussEvent = generated("dpc_gauss_event")


Event = generated("dpc_event")  # parts: an untyped borrowed pointer (c_void_p)
class Progress(ctypes.Structure):
    """dpc_progress (common.h): a progress callback and its context (unset here: NULL)."""
    _fields_ = [("fn", ctypes.c_void_p), ("ctx", ctypes.c_void_p)]


AccountOpts = generated("dpc_account_opts")


class AccountResult(ctypes.Structure):
    """dpc_account_result (account.h)."""
    _fields_ = [("epsilon", c_double), ("delta", c_double), ("order", c_double),
                ("rho", c_double), ("mu", c_double), ("upper_bound", c_int)]


class MechInfo(ctypes.Structure):
    """dpc_account_mech_info (account.h)."""
    _fields_ = [("sensitivity", c_double), ("sensitivity_exact", c_int),
                ("column_norm", c_double), ("amplified", c_int), ("rounds", c_size_t),
                ("noise_multiplier", c_double), ("noise_std", c_double),
                ("run_sigma", c_double), ("route", c_int), ("delta_slack", c_double),
                ("eps_routes", c_double * 4), ("mc_samples", c_size_t),
                ("mc_confidence", c_double), ("mc_seed", c_uint64),
                ("note", ctypes.c_char_p), ("route_why", ctypes.c_char_p * 4),
                ("epsilon_single", c_double), ("advice", ctypes.c_char_p),
                ("bib_deterministic", c_int), ("eps_bib_mc", c_double), ("bib_mu", c_double)]


StrategyProblem = generated("dpc_strategy_problem")  # nests Workload


class StrategyLoss(ctypes.Structure):
    """dpc_strategy_loss (strategy.h)."""
    _fields_ = [("loss", c_double), ("sensitivity", c_double), ("error", c_double),
                ("exact", c_int)]


StrategyOptions = generated("dpc_strategy_options")


class Strategy(ctypes.Structure):
    """dpc_strategy (strategy.h)."""
    _fields_ = [("kind", c_int), ("method", ctypes.c_char * 24), ("problem", StrategyProblem),
                ("nbuf", c_size_t), ("theta", P(c_double)), ("omega", P(c_double)),
                ("ncoeffs", c_size_t), ("coeffs", P(c_double)), ("dense", P(c_double)),
                ("of_strategy", c_int), ("achieved", StrategyLoss),
                ("iterations", c_size_t)]


class SamplerDesc(ctypes.Structure):
    """dpc_sampler_desc (sampler.h)."""
    _fields_ = [("part", Participation), ("poisson", c_int), ("q", c_double),
                ("opportunities", c_size_t), ("steps_per_epoch", c_size_t),
                ("expected_batch", c_double), ("balls_in_bins", c_int)]


MIRRORS = {
    "dpc_error": Error, "dpc_rng": Rng, "dpc_rng_stream": RngStream,
    "dpc_mech_params": MechParams, "dpc_participation": Participation,
    "dpc_sensitivity": Sensitivity, "dpc_workload": Workload, "dpc_mech_error": MechError,
    "dpc_noise_config": NoiseConfig, "dpc_gauss_event": GaussEvent, "dpc_event": Event,
    "dpc_progress": Progress,
    "dpc_account_opts": AccountOpts, "dpc_account_result": AccountResult,
    "dpc_account_mech_info": MechInfo, "dpc_strategy_problem": StrategyProblem,
    "dpc_strategy_loss": StrategyLoss, "dpc_strategy_options": StrategyOptions,
    "dpc_strategy": Strategy, "dpc_sampler_desc": SamplerDesc,
    "dpc_train_config": TrainConfig, "dpc_train_record": TrainRecord, "dpc_step_info": StepInfo,
    "dpc_privatize_config": PrivatizeConfig,
}

# ---- functions ---------------------------------------------------------------------------------

_E = P(Error)
_D = P(c_double)
_S = P(c_size_t)
_STATUS = c_int

# name: (restype, argtypes)
_PROTOTYPES = {
    # common.h, abi.h
    "dpc_version": (c_char_p, []),
    "dpc_status_str": (c_char_p, [c_int]),
    "dpc_abi_sizeof": (c_size_t, [c_char_p]),
    # field.h and the tables of train.h, mech.h
    "dpc_train_config_fields": (P(FieldTable), []),
    "dpc_mech_params_fields": (P(FieldTable), []),
    "dpc_train_record_fields": (P(FieldTable), []),
    "dpc_noise_config_fields": (P(FieldTable), []),
    "dpc_step_info_fields": (P(FieldTable), []),
    "dpc_gauss_event_fields": (P(FieldTable), []),
    "dpc_account_opts_fields": (P(FieldTable), []),
    "dpc_strategy_problem_fields": (P(FieldTable), []),
    "dpc_strategy_options_fields": (P(FieldTable), []),
    "dpc_abi_count": (c_size_t, []),
    "dpc_abi_name": (c_char_p, [c_size_t]),
    # rng.h
    "dpc_rng_seed": (None, [P(Rng), c_uint64]),
    "dpc_rng_seed_os": (_STATUS, [P(Rng), _E]),
    "dpc_rng_stream_derive": (RngStream, [P(Rng), c_uint64]),
    "dpc_rng_gaussian_fill": (None, [P(RngStream), c_uint64, c_uint64, _D, c_size_t]),
    # mech.h
    "dpc_mech_params_init": (None, [P(MechParams)]),
    "dpc_mech_params_check": (_STATUS, [P(MechParams), _E]),
    "dpc_mech_new": (_STATUS, [P(c_void_p), P(MechParams), _E]),
    "dpc_mech_free": (None, [c_void_p]),
    "dpc_mech_kind_name": (c_char_p, [c_int]),
    "dpc_mech_kind_parse": (_STATUS, [c_char_p, P(c_int), _E]),
    "dpc_mech_get_params": (P(MechParams), [c_void_p]),
    "dpc_mech_describe": (c_int, [c_void_p, ctypes.c_char_p, c_size_t]),
    "dpc_mech_steps": (c_size_t, [c_void_p]),
    "dpc_mech_noise_rows": (c_size_t, [c_void_p]),
    "dpc_mech_is_toeplitz": (c_int, [c_void_p]),
    "dpc_mech_is_anytime": (c_int, [c_void_p]),
    "dpc_mech_strategy_coeffs": (_STATUS, [c_void_p, _D, c_size_t, _E]),
    "dpc_mech_noising_coeffs": (_STATUS, [c_void_p, _D, c_size_t, _E]),
    "dpc_mech_dense_noising": (_STATUS, [c_void_p, _D, _E]),
    "dpc_mech_dense_strategy": (_STATUS, [c_void_p, _D, _E]),
    "dpc_sens_method_name": (c_char_p, [c_int]),
    "dpc_mech_sensitivity": (_STATUS, [c_void_p, P(Participation), P(Sensitivity), _E]),
    "dpc_mech_limit_sensitivity": (_STATUS, [c_void_p, _D, _E]),
    "dpc_mech_error_of": (_STATUS, [c_void_p, P(Workload), P(MechError), _E]),
    "dpc_noise_form_name": (c_char_p, [c_int]),
    "dpc_mech_state_floats": (c_size_t, [c_void_p, c_int]),
    "dpc_mech_form_available": (c_int, [c_void_p, c_int]),
    "dpc_tune_isa": (_STATUS, [P(IsaTuning), _E]),
    "dpc_isa_parse": (_STATUS, [c_char_p, P(c_int), _E]),
    "dpc_isa_resolve": (_STATUS, [c_int, P(c_int), _E]),
    "dpc_isa_name": (c_char_p, [c_int]),
    "dpc_tune_family_name": (c_char_p, [c_int]),
    "dpc_noise_new": (_STATUS, [P(c_void_p), c_void_p, P(RngStream), P(NoiseConfig), _E]),
    "dpc_noise_config_init": (None, [P(NoiseConfig), c_size_t]),
    "dpc_noise_free": (None, [c_void_p]),
    "dpc_noise_next": (_STATUS, [c_void_p, c_void_p, _E]),
    "dpc_noise_release": (_STATUS, [c_void_p, c_void_p, c_size_t, c_double, c_double, c_void_p,
                                    _E]),
    "dpc_model_clip_factors": (None, [c_void_p, c_size_t, c_double, c_void_p]),
    "dpc_noise_step": (c_size_t, [c_void_p]),
    "dpc_noise_get_form": (c_int, [c_void_p]),
    "dpc_noise_seek": (_STATUS, [c_void_p, c_size_t, _E]),
    "dpc_noise_state_size": (c_size_t, [c_void_p]),
    "dpc_noise_export": (_STATUS, [c_void_p, _S, _D, _E]),
    "dpc_noise_import": (_STATUS, [c_void_p, c_size_t, _D, _E]),
    # account.h
    "dpc_accountant_name": (c_char_p, [c_int]),
    "dpc_accountant_parse": (_STATUS, [c_char_p, P(c_int), _E]),
    "dpc_neighbor_name": (c_char_p, [c_int]),
    "dpc_neighbor_parse": (_STATUS, [c_char_p, P(c_int), _E]),
    "dpc_sampling_parse": (_STATUS, [c_char_p, P(c_int), _E]),
    "dpc_pld_disc_parse": (_STATUS, [c_char_p, P(c_int), _E]),
    "dpc_gauss_event_init": (None, [P(GaussEvent)]),
    "dpc_account_opts_init": (None, [P(AccountOpts), c_int]),
    "dpc_account_epsilon": (_STATUS, [P(Event), P(AccountOpts), c_double, P(AccountResult), _E]),
    "dpc_account_delta": (_STATUS, [P(Event), P(AccountOpts), c_double, P(AccountResult), _E]),
    "dpc_account_calibrate_sigma": (_STATUS, [P(Event), P(AccountOpts), c_double, c_double,
                                              _D, _E]),
    "dpc_account_calibrate_steps": (_STATUS, [P(Event), c_size_t, P(AccountOpts), c_double,
                                              c_double, c_size_t, _S, _E]),
    "dpc_account_mech_event": (_STATUS, [c_void_p, P(Participation), c_double, c_double,
                                         P(GaussEvent), P(MechInfo), _E]),
    "dpc_account_mech_calibrate": (_STATUS, [c_void_p, P(Participation), c_double,
                                             P(AccountOpts), c_double, c_double, _D,
                                             P(GaussEvent), P(MechInfo), _E]),
    "dpc_account_mech_steps": (_STATUS, [P(MechParams), P(Participation), c_double, c_double,
                                         P(AccountOpts), c_double, c_double, c_size_t, _S, _E]),
    "dpc_zcdp_rho_gaussian": (_STATUS, [c_double, c_double, _D, _E]),
    "dpc_zcdp_epsilon": (_STATUS, [c_double, c_double, c_int, _D, _D, _E]),
    "dpc_zcdp_delta": (_STATUS, [c_double, c_double, c_int, _D, _E]),
    "dpc_zcdp_rho_for": (_STATUS, [c_double, c_double, c_int, _D, _E]),
    "dpc_zcdp_sigma_for": (_STATUS, [c_double, c_size_t, _D, _E]),
    "dpc_gdp_mu_gaussian": (_STATUS, [c_double, c_double, _D, _E]),
    "dpc_gdp_delta": (_STATUS, [c_double, c_double, _D, _E]),
    "dpc_gdp_epsilon": (_STATUS, [c_double, c_double, _D, _E]),
    "dpc_gdp_mu_for": (_STATUS, [c_double, c_double, _D, _E]),
    "dpc_gdp_sigma_for": (_STATUS, [c_double, c_size_t, _D, _E]),
    "dpc_ledger_json": (c_size_t, [c_void_p, ctypes.c_char_p, c_size_t]),
    "dpc_account_max_count": (c_size_t, []),
    # strategy.h
    "dpc_strategy_problem_init": (None, [P(StrategyProblem), c_size_t]),
    "dpc_strategy_options_init": (None, [P(StrategyOptions)]),
    "dpc_strategy_free": (None, [c_void_p]),
    "dpc_strategy_mech_params": (None, [c_void_p, P(MechParams)]),
    "dpc_strategy_optimize_blt": (_STATUS, [P(c_void_p), P(StrategyProblem),
                                            P(StrategyOptions), _E]),
    "dpc_strategy_optimize_banded": (_STATUS, [P(c_void_p), P(StrategyProblem),
                                               P(StrategyOptions), _E]),
    "dpc_strategy_optimize_dense": (_STATUS, [P(c_void_p), P(StrategyProblem),
                                              P(StrategyOptions), _E]),
    "dpc_strategy_loss_of": (_STATUS, [c_void_p, P(StrategyProblem), P(StrategyLoss), _E]),
    "dpc_strategy_save": (_STATUS, [c_void_p, c_char_p, _E]),
    "dpc_strategy_load": (_STATUS, [P(c_void_p), c_char_p, _E]),
    # sampler.h
    "dpc_sampler_kind_name": (c_char_p, [c_int]),
    "dpc_sampler_kind_parse": (_STATUS, [c_char_p, P(c_int), _E]),
    "dpc_sampler_describe": (None, [c_void_p, P(SamplerDesc)]),
    "dpc_sampler_max_batch": (c_size_t, [c_void_p]),
    "dpc_sampler_batch": (_STATUS, [c_void_p, c_size_t, c_void_p, _S, _E]),
    # train.h
    "dpc_train_config_init": (None, [P(TrainConfig)]),
    "dpc_train_mech_check": (_STATUS, [P(MechParams), _E]),
    "dpc_train_plan_new": (_STATUS, [P(c_void_p), P(TrainConfig), c_size_t, P(Rng), _E]),
    "dpc_train_plan_free": (None, [c_void_p]),
    "dpc_train_plan_config": (P(TrainConfig), [c_void_p]),
    "dpc_train_default_blt": (_STATUS, [P(TrainConfig), P(c_void_p), _E]),
    "dpc_train_plan_ledger": (c_void_p, [c_void_p]),
    "dpc_train_plan_sampler": (c_void_p, [c_void_p]),
    "dpc_train_plan_mech": (c_void_p, [c_void_p]),
    "dpc_train_plan_noise_scale": (c_double, [c_void_p]),
    "dpc_train_plan_epsilon_at": (_STATUS, [c_void_p, c_size_t, _D, _E]),
}


def _declare():
    missing = []
    for name, (restype, argtypes) in _PROTOTYPES.items():
        try:
            fn = getattr(lib, name)
        except AttributeError:
            missing.append(name)
            continue
        fn.restype = restype
        fn.argtypes = argtypes
    if missing:
        raise ImportError(f"dpcorr: {LIB_PATH} lacks {', '.join(missing)}: it is older than this "
                          f"package; rebuild it (make)")


def _check_abi():
    for name, mirror in MIRRORS.items():
        have = lib.dpc_abi_sizeof(name.encode())
        if have != ctypes.sizeof(mirror):
            raise ImportError(
                f"dpcorr: {LIB_PATH} was built from other headers than this package: sizeof "
                f"{name} is {have} in the library and {ctypes.sizeof(mirror)} here; rebuild "
                f"both from one tree (make)")


def table_fields(table_fn):
    """{name: Field} of a library field table (dpc_X_fields, by its function's name)."""
    t = _table_of(table_fn)
    return {t.fields[i].name.decode(): t.fields[i] for i in range(t.count)}


def check_mirror(mirror, table_fn):
    """Raises ImportError unless the ctypes mirror has exactly the fields of the library's table
    table_fn at its offsets and sizes, padding aside (the size check of _check_abi cannot see
    two fields swapped or renamed). The generated mirrors pass by construction; a hand-written
    mirror of a struct that gains a table can be checked with it until it is switched."""
    fields = table_fields(table_fn)
    mine = {(n[:-1] if n.endswith("_") and keyword.iskeyword(n[:-1]) else n): getattr(mirror, n)
            for n, _ in mirror._fields_ if not n.startswith("_pad")}
    if set(mine) != set(fields):
        raise ImportError(
            f"dpcorr: {LIB_PATH}: {mirror.__name__} has fields {sorted(set(mine) ^ set(fields))} "
            f"that the library's {table_fn} does not agree with; rebuild both from one tree")
    for name, desc in mine.items():
        f = fields[name]
        if desc.offset != f.offset or desc.size != f.size:
            raise ImportError(
                f"dpcorr: {LIB_PATH}: {mirror.__name__}.{name} is at offset {desc.offset} (size "
                f"{desc.size}) here and {f.offset} ({f.size}) in the library; rebuild both "
                f"from one tree (make)")


_declare()
_check_abi()

# the binding's step range is the library's (one range, not a copy)
from . import _check  # noqa: E402  (after the library is loaded)
_check.STEPS_MAX = int(lib.dpc_account_max_count())

# ---- enums (values are the C enums') -----------------------------------------------------------

SAMPLER_AUTO = 99
# dpcorr/sampler.h DPC_SAMPLER_SCHEME: which batches (key, step) draws for the Poisson kinds
# (scheme 2: a binomial batch size, then that many distinct uniform examples; scheme 1 drew a
# word per example and step). Checkpoints of those kinds record it.
SAMPLER_SCHEME = 2
SCHEME_SAMPLERS = ("poisson", "cyclic-poisson")
PART_MINSEP, PART_CYCLIC = 0, 1
# the noise forms by name (the library's name table of dpc_noise_config.form)
NOISE_FORMS = {name: v for v, name in enumerate(enum_names(NoiseConfig, "form"))}
STREAM_NOISE = 1


def stream_id(purpose, index=0):
    """DPC_STREAM_ID(purpose, index)."""
    return (purpose << 32) | (index & 0xFFFFFFFF)


# ---- helpers -----------------------------------------------------------------------------------


# The library's name of a parameter -> the package's name of the argument that carries it, where
# they differ (dpc_error.field). One table, applied to every library error the package raises, so
# that a message names what the caller typed. A key ending in "." renames a prefix.
FIELDS = {
    "batch": "batch_size",  # dpc_train_config.batch: TrainingPlan(batch_size=)
}


def _f64(a, name):
    if not (isinstance(a, np.ndarray) and a.dtype == np.float64 and a.flags.c_contiguous):
        raise TypeError(f"{name}: expected a C-contiguous float64 numpy array")
    return a.ctypes.data


def release(clipped_sum, z, noise_scale, inv_b, out):
    """The library's release of one step (dpc_noise_release), the one formula of the C trainer,
    the privatizer and dpcorr.torch: out = (clipped_sum + noise_scale z) inv_b, float64, in
    this operation order. Arrays: C-contiguous float64 of one length; out may be z or
    clipped_sum."""
    n = z.size
    if clipped_sum.size != n or out.size != n:
        raise ValueError(f"release: lengths differ (clipped_sum {clipped_sum.size}, z {n}, "
                         f"out {out.size})")
    call(lib.dpc_noise_release, _f64(clipped_sum, "clipped_sum"), _f64(z, "z"), n,
         float(noise_scale), float(inv_b), _f64(out, "out"))
    return out


def clip_factors(norms, clip, out=None):
    """The library's clip factors (dpc_model_clip_factors): clip / norm where norm > clip, else
    1; norms finite float64 (the caller refuses a non-finite one)."""
    out = np.empty_like(norms) if out is None else out
    if out.size != norms.size:
        raise ValueError("clip_factors: out has another length than norms")
    lib.dpc_model_clip_factors(_f64(norms, "norms"), norms.size, float(clip), _f64(out, "out"))
    return out


def call(fn, *args, rename=None):
    """Calls fn(*args, &err) and raises the library's error when it returns a status != 0.

    The error's field and message use the package's argument names (FIELDS). rename: more
    {library field prefix: the binding's name for it}, for a call whose library argument the
    binding built itself (e.g. "parts[0]." -> "" for an event of one part)."""
    err = Error()
    status = fn(*args, ctypes.byref(err))
    if status:
        field = err.field.decode(errors="replace")
        msg = err.msg.decode(errors="replace")
        for old, new in {**FIELDS, **(rename or {})}.items():
            if field == old or (old.endswith(".") and field.startswith(old)):
                field = new + field[len(old):]
                if msg.startswith(old):
                    msg = new + msg[len(old):]
                break
        raise_for(status, field, msg, lib.dpc_status_str(status).decode())


def text(ptr):
    """A C string returned by the library, as str."""
    return ptr.decode() if ptr is not None else ""


def parse(fn, name, value):
    """An enum from its name through one of the library's parsers (dpc_*_parse)."""
    if not isinstance(value, str):
        raise TypeError(f"{name}: expected a string, got {type(value).__name__}")
    out = c_int()
    try:
        call(fn, value.encode(), ctypes.byref(out))
    except DpcorrError as exc:
        # the parsers name their argument ("name"); the caller's parameter is `name`
        if exc.field != name:
            lib_field = exc.field
            exc.field = name
            if lib_field and str(exc).startswith(lib_field + ":"):
                exc.args = (str(exc)[len(lib_field) + 1:].lstrip(),)
            if not str(exc).startswith(name + ":"):
                exc.args = (f"{name}: {exc}",)
        raise
    return out.value


def version():
    """The version string of the loaded library."""
    return text(lib.dpc_version())


ISA_FAMILIES = {"gemm": 0, "gauss": 1, "noise": 2}
_ISA = {}  # the process's levels (front ends own the process-wide cache; the library keeps none)


def isa_levels():
    """The instruction-set level per kernel family, as the CLI chooses them: DPCORR_ISA when set
    (every family; an unknown or unsupported value raises, naming DPCORR_ISA), else the level
    dpc_tune_isa measured fastest here, once per process (about 10 ms). Every level computes the
    same bits; only the speed differs. Returns {"gemm": "avx512", ..., "forced": bool,
    "measured_ns": {family: {level: ns}}}."""
    if not _ISA:
        import os
        want = os.environ.get("DPCORR_ISA", "")
        if want and want != "auto":
            lvl = c_int()
            try:
                call(lib.dpc_isa_parse, want.encode(), ctypes.byref(lvl))
                call(lib.dpc_isa_resolve, lvl.value, ctypes.byref(lvl))
            except ValueError as exc:
                raise ValueError(f"DPCORR_ISA={want}: {exc}") from None
            _ISA.update({f: lvl.value for f in ISA_FAMILIES}, forced=True, measured_ns={})
        else:
            t = IsaTuning()
            call(lib.dpc_tune_isa, ctypes.byref(t))
            names = {k: text(lib.dpc_isa_name(k)) for k in (1, 2, 3)}
            _ISA.update({f: t.level[i] for f, i in ISA_FAMILIES.items()}, forced=False,
                        measured_ns={f: {names[k]: t.ns[i][k] for k in (1, 2, 3) if t.ns[i][k] > 0}
                                     for f, i in ISA_FAMILIES.items()})
    return {**{f: text(lib.dpc_isa_name(_ISA[f])) for f in ISA_FAMILIES},
            "forced": _ISA["forced"], "measured_ns": _ISA["measured_ns"]}


def isa_level(family):
    """The dpc_isa value for one family (isa_levels)."""
    isa_levels()
    return _ISA[family]
