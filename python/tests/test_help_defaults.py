"""Every default that `dpcorr train --help` and `dpcorr audit --help` print for a trainer field
is the library's dpc_train_config_init value (the library decides; the help text is a copy that
nothing else compares)."""

import ctypes
import re
import subprocess

import pytest

from dpcorr import _lib
from dpcorr._lib import lib

# option -> dpc_train_config field (dotted: inside mech)
NUMERIC = {"--epochs": "epochs", "--batch": "batch", "--clip": "clip",
           "--lr": "lr", "--momentum": "momentum", "--weight-decay": "weight_decay",
           "--cooldown-fraction": "cooldown_fraction", "--cooldown-factor": "cooldown_factor",
           "--threads": "threads", "--chunk": "chunk", "--nu": "mech.nu",
           "--lambda": "mech.lambda_"}


def _options(help_text):
    """{option: its help text, continuation lines joined}."""
    out, cur = {}, None
    for line in help_text.splitlines():
        m = re.match(r"^  (--[a-z0-9-]+)", line)
        if m:
            cur = m.group(1)
            out[cur] = line
        elif cur and re.match(r"^ {10,}\S", line):
            out[cur] += " " + line.strip()
        else:
            cur = None
    return out


def _field(c, name):
    for part in name.split("."):
        c = getattr(c, part)
    return c


@pytest.mark.parametrize("cmd", ["train", "audit"])
def test_help_defaults_are_the_library_init(cli_path, cmd):
    text = subprocess.run([str(cli_path), cmd, "--help"], capture_output=True, text=True,
                          check=True).stdout
    opts = _options(text)
    c = _lib.TrainConfig()
    lib.dpc_train_config_init(ctypes.byref(c))
    checked = 0
    # delta: 0 in the library's init = derived from N (dpc_account_default_delta); --help says so
    if "--delta" in opts:
        assert c.delta == 0.0 and "largest power of ten" in opts["--delta"], opts["--delta"]
        checked += 1
    for opt, field in NUMERIC.items():
        if opt not in opts:
            continue
        m = re.search(r"\(default ([-+0-9.eE]+)[;)]", opts[opt])
        assert m, f"{cmd} {opt}: no default printed: {opts[opt]!r}"
        assert float(m.group(1)) == float(_field(c, field)), \
            f"{cmd} {opt}: --help says {m.group(1)}, dpc_train_config_init {_field(c, field)}"
        checked += 1
    words = {"--accountant": _lib.text(lib.dpc_accountant_name(c.accountant)),
             "--schedule": ("constant", "cosine", "cooldown")[c.schedule],
             "--precision": ("double", "float32")[c.precision]}
    for opt, want in words.items():
        if opt not in opts:
            continue
        m = re.search(r"([a-z0-9]+) \(default\)", opts[opt])
        assert m and m.group(1) == want, f"{cmd} {opt}: default {m and m.group(1)}, library {want}"
        checked += 1
    assert checked >= 10, f"{cmd}: only {checked} defaults found in --help"
