"""The instruction-set level per kernel family (issue 29): measured once per process, forced by
DPCORR_ISA as in the CLI, and never a value of the noise."""

import hashlib
import os
import subprocess
import sys

import numpy as np
import pytest

import dpcorr

LEVELS = ["sse2", "avx2", "avx512"]


def test_levels_measured_once():
    lv = dpcorr.isa_levels()
    assert set(lv) == {"gemm", "gauss", "noise", "forced", "measured_ns"}
    if os.environ.get("DPCORR_ISA", "auto") in ("", "auto"):
        assert lv["forced"] is False
        for fam in ("gemm", "gauss", "noise"):
            ns = lv["measured_ns"][fam]
            assert lv[fam] in ns and all(v > 0 for v in ns.values())
            assert list(ns) == LEVELS[:len(ns)]  # every level this CPU runs, narrowest first
    assert dpcorr.isa_levels() == lv  # cached: the same answer, not a new measurement


def _noise_hash(env_isa):
    code = ("import hashlib, numpy as np, dpcorr\n"
            "m = dpcorr.Mechanism('blt', 40, theta=[0.9, 0.5], omega=[0.2, 0.1])\n"
            "g = dpcorr.NoiseGenerator(m, 3001, seed=5)\n"
            "rows = np.stack([g.next() for _ in range(7)])\n"
            "print(dpcorr.isa_levels()['noise'], hashlib.sha256(rows.tobytes()).hexdigest())\n")
    env = dict(os.environ, DPCORR_ISA=env_isa)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=120, check=False)
    return out.returncode, out.stdout.split(), out.stderr


def test_forced_levels_same_noise():
    rc, (auto_level, ref), err = _noise_hash("auto")
    assert rc == 0, err
    for lvl in LEVELS:
        rc, out, err = _noise_hash(lvl)
        if rc and "does not support" in err:
            continue  # a level this CPU lacks
        assert rc == 0, err
        assert out == [lvl, ref], (lvl, out, ref)


def test_unknown_level_named():
    rc, _, err = _noise_hash("avx9")
    assert rc != 0 and "DPCORR_ISA=avx9" in err and "unknown level" in err
