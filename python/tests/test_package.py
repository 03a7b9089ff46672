"""The package itself: the library is found next to the package or through DPCORR_LIB, a clear
ImportError otherwise; struct layouts are checked against the library; the error classes;
`pip install` works offline."""

import ctypes
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

import dpcorr
from dpcorr import _lib

PKG = pathlib.Path(dpcorr.__file__).resolve().parent


def run_python(code, env_extra=None, cwd="/", pythonpath=None):
    env = {k: v for k, v in os.environ.items() if k not in ("DPCORR_LIB", "PYTHONPATH")}
    if pythonpath:
        env["PYTHONPATH"] = str(pythonpath)
    env.update(env_extra or {})
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, cwd=cwd, check=False)


def test_versions_and_layouts():
    assert dpcorr.library_version == dpcorr.__version__ == "0.1.0"
    for name, mirror in _lib.MIRRORS.items():
        assert _lib.lib.dpc_abi_sizeof(name.encode()) == ctypes.sizeof(mirror), name
    names = {_lib.lib.dpc_abi_name(i).decode() for i in range(_lib.lib.dpc_abi_count())}
    assert set(_lib.MIRRORS) <= names


def test_layout_mismatch_is_an_import_error(monkeypatch):
    class Wrong(ctypes.Structure):
        _fields_ = [("x", ctypes.c_double)]

    monkeypatch.setitem(_lib.MIRRORS, "dpc_train_config", Wrong)
    with pytest.raises(ImportError, match="other headers.*dpc_train_config"):
        _lib._check_abi()


def test_missing_library_is_a_clear_import_error(tmp_path):
    r = run_python("import dpcorr", {"DPCORR_LIB": str(tmp_path / "nope.so")},
                   pythonpath=PKG.parent)
    assert r.returncode != 0 and "ImportError" in r.stderr and "DPCORR_LIB" in r.stderr
    bare = tmp_path / "pkg"
    shutil.copytree(PKG, bare / "dpcorr", ignore=shutil.ignore_patterns("*.so", "__pycache__"))
    r = run_python("import dpcorr", pythonpath=bare)
    assert r.returncode != 0 and "libdpcorr.so not found" in r.stderr and "make" in r.stderr
    notlib = tmp_path / "fake.so"
    notlib.write_text("not a library")
    r = run_python("import dpcorr", {"DPCORR_LIB": str(notlib)}, pythonpath=PKG.parent)
    assert r.returncode != 0 and "cannot load" in r.stderr


def test_library_next_to_the_package():
    if not (PKG / "libdpcorr.so").is_file():
        pytest.skip("python/dpcorr/libdpcorr.so not copied (make python)")
    r = run_python("import dpcorr; print(dpcorr.library_path)", pythonpath=PKG.parent)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(PKG / "libdpcorr.so")
    lib_dir = pathlib.Path(_lib.LIB_PATH).resolve().parent
    r = run_python("import dpcorr; print(dpcorr.library_path)", {"DPCORR_LIB": str(lib_dir)},
                   pythonpath=PKG.parent)
    assert r.returncode == 0 and r.stdout.strip() == str(lib_dir / "libdpcorr.so")


def test_pip_install_offline(tmp_path):
    if not (PKG / "libdpcorr.so").is_file():
        pytest.skip("python/dpcorr/libdpcorr.so not copied (make python)")
    if subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True).returncode:
        pytest.skip("pip is not installed (python3-pip)")
    src = tmp_path / "src"
    shutil.copytree(PKG.parent, src, ignore=shutil.ignore_patterns(
        "__pycache__", "build", "*.egg-info", "tests", "examples", "bench"))
    target = tmp_path / "site"
    r = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-build-isolation",
                        "--no-deps", "--no-index", "--target", str(target), str(src)],
                       capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr
    r = run_python("import dpcorr, dpcorr.torch, dpcorr.papers.nu; print(dpcorr.library_path)",
                   pythonpath=target)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().startswith(str(target))


def test_error_classes():
    with pytest.raises(dpcorr.DpcorrValueError) as e:
        dpcorr.Mechanism("nu", 10, nu=2.0)
    err = e.value
    assert isinstance(err, ValueError) and isinstance(err, dpcorr.DpcorrError)
    assert err.field == "nu" and err.code == 1 and err.status == "invalid argument"
    assert str(err).startswith("nu: must be in [0, 1)")
    with pytest.raises(dpcorr.DpcorrRuntimeError) as e:
        dpcorr.Mechanism.load("/nonexistent/strategy.json")
    assert isinstance(e.value, RuntimeError) and e.value.status == "i/o error"
