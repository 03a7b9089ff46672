"""python/examples/torch_fashion_mnist.py: --json prints the contract's keys (two steps only;
the full run's accuracy is measured in python/README.md)."""

import json
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
DATA = pathlib.Path("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz")


@pytest.mark.skipif(not DATA.is_file(), reason="dataset-fashion-mnist is not installed")
def test_example_json():
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    out = subprocess.run([sys.executable, str(ROOT / "python/examples/torch_fashion_mnist.py"),
                          "--mech", "blt", "--epsilon", "3", "--epochs", "1", "--max-steps", "2",
                          "--threads", "1", "--json"],
                         capture_output=True, text=True, env=env, check=False)
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout)
    for key in ("test_accuracy", "epsilon", "delta", "examples_per_s", "mechanism"):
        assert key in r, key
    assert r["steps_done"] == 2 and r["epsilon"] <= 3.0 and r["delta"] == 1e-5
    assert r["mechanism"].startswith("BLT") and r["ledger"]["sampler"] == "fixed"
    assert 0.0 <= r["test_accuracy"] <= 1.0 and r["examples_per_s"] > 0
