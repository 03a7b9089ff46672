"""dpcorr.NoiseGenerator: rows bit-identical to the C library (a separately compiled C program)
for a seed; out= into numpy arrays and torch tensors without a copy; seek, checkpoints, secure
mode; every error path."""

import numpy as np
import pytest
import torch

import dpcorr
from dpcorr import Mechanism, NoiseGenerator

BLT = dict(theta=[0.99, 0.9, 0.5], omega=[0.1, 0.2, 0.3])

CASES = [
    ("identity", {}),
    ("nu", {"nu": 0.05}),
    ("antipgd", {"nu": 0.1}),
    ("lcgd", {"lambda": 0.7}),
    ("bsr", {"bands": 4, "momentum": 0.9}),
    ("bisr", {"bands": 3}),
    ("blt", BLT),
    ("tree", {"honaker": 1}),
]


@pytest.mark.parametrize("kind,params", CASES, ids=[c[0] for c in CASES])
def test_rows_bit_identical_to_c(noise_ref, kind, params):
    steps, seed, dim, rows = 12, 20240517, 37, 12
    want = noise_ref(kind, steps, seed, dim, rows, **params)
    kw = {("lam" if k == "lambda" else k): (bool(v) if k == "honaker" else v)
          for k, v in params.items()}
    mech = Mechanism(kind, steps, **kw)
    # the C program prints (B Z)_t; the generator's rows are scale x (B Z)_t with
    # scale = z x clip x column_norm(C) (exactly 1 for the identity at z = 1)
    gen = NoiseGenerator(mech, dim, seed=seed, noise_multiplier=1.0)
    raw = NoiseGenerator(mech, dim, seed=seed, noise_multiplier=None)
    assert raw.scale == 1.0 and gen.scale == mech.column_norm
    for t in range(rows):
        ref = np.array(want[t])
        assert raw.next().tobytes() == ref.tobytes(), f"{kind}: raw row {t} differs"
        assert gen.next().tobytes() == (ref * gen.scale).tobytes(), f"{kind}: row {t} differs"
    with pytest.raises(dpcorr.DpcorrValueError):
        gen.next()  # past the last step (DPC_E_RANGE)


def test_scale_is_multiplier_times_clip_times_column_norm():
    mech = Mechanism("nu", 50, nu=0.1)
    g = NoiseGenerator(mech, 5, seed=1, noise_multiplier=2.5, clip=0.3)
    assert g.scale == 2.5 * mech.column_norm * 0.3
    raw = NoiseGenerator(mech, 5, seed=1, noise_multiplier=1.0)
    base = raw.next() / raw.scale
    np.testing.assert_allclose(g.next(), base * g.scale, rtol=1e-15)


def test_identity_rows_are_standard_normal():
    # a statistical sanity check with a fixed seed (mean 0, variance 1 of 200000 draws)
    gen = NoiseGenerator(Mechanism("identity", 2), 200000, seed=5)
    x = gen.next()
    assert abs(x.mean()) < 0.01 and abs(x.var() - 1) < 0.01


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_out_numpy_in_place(dtype):
    mech = Mechanism("blt", 6, **BLT)
    ref = NoiseGenerator(mech, 10, seed=3, noise_multiplier=1.7)
    gen = NoiseGenerator(mech, 10, seed=3, noise_multiplier=1.7)
    out = np.zeros((2, 5), dtype=dtype)
    ptr = out.ctypes.data
    for _ in range(3):
        r = gen.next(out=out)
        assert r is out and out.ctypes.data == ptr
        np.testing.assert_array_equal(out.reshape(-1), ref.next().astype(dtype))


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_out_torch_in_place(dtype):
    mech = Mechanism("nu", 6, nu=0.02)
    ref = NoiseGenerator(mech, 12, seed=4)
    gen = NoiseGenerator(mech, 12, seed=4)
    out = torch.zeros(3, 4, dtype=dtype)
    ptr = out.data_ptr()
    for _ in range(4):
        assert gen.next(out=out) is out and out.data_ptr() == ptr
        assert torch.equal(out.reshape(-1), torch.from_numpy(ref.next()).to(dtype))


def test_out_errors():
    gen = NoiseGenerator(Mechanism("identity", 3), 6, seed=1)
    with pytest.raises(TypeError, match="dtype"):
        gen.next(out=np.zeros(6, dtype=np.int64))
    with pytest.raises(TypeError, match="dtype"):
        gen.next(out=torch.zeros(6, dtype=torch.float16))
    with pytest.raises(ValueError, match="contiguous"):
        gen.next(out=np.zeros(12)[::2])
    with pytest.raises(ValueError, match="contiguous"):
        gen.next(out=torch.zeros(2, 3).t())
    with pytest.raises(ValueError, match="6 elements"):
        gen.next(out=np.zeros(5))
    ro = np.zeros(6)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        gen.next(out=ro)
    with pytest.raises(TypeError, match="numpy array or a torch tensor"):
        gen.next(out=[0.0] * 6)
    assert gen.step == 0  # nothing was consumed by the refused calls


def test_constructor_errors():
    m = Mechanism("identity", 3)
    with pytest.raises(TypeError, match="mech"):
        NoiseGenerator("identity", 4)
    with pytest.raises(ValueError, match="dim"):
        NoiseGenerator(m, 0)
    with pytest.raises(ValueError, match="dim"):
        NoiseGenerator(m, -3)
    with pytest.raises(TypeError, match="dim"):
        NoiseGenerator(m, 2.5)
    with pytest.raises(ValueError, match="noise_multiplier"):
        NoiseGenerator(m, 4, noise_multiplier=float("nan"))
    with pytest.raises(ValueError, match="noise_multiplier"):
        NoiseGenerator(m, 4, noise_multiplier=-1)
    with pytest.raises(ValueError, match="clip"):
        NoiseGenerator(m, 4, clip=0)
    with pytest.raises(ValueError, match="clip"):
        NoiseGenerator(m, 4, noise_multiplier=None, clip=2.0)
    with pytest.raises(ValueError, match="seed"):
        NoiseGenerator(m, 4, seed=-1)
    with pytest.raises(ValueError, match="form"):
        NoiseGenerator(m, 4, form="sideways")
    with pytest.raises(dpcorr.DpcorrValueError):
        NoiseGenerator(Mechanism("blt", 4, **BLT), 4, form="replay")  # BLT cannot replay


def test_seek_and_coordinate_slices():
    mech = Mechanism("bsr", 10, bands=3)
    full = NoiseGenerator(mech, 9, seed=8)
    rows = [full.next() for _ in range(10)]
    g = NoiseGenerator(mech, 9, seed=8)
    assert g.steps == 10 and g.form == "buffer" and not g.secure and g.seed == 8
    assert NoiseGenerator(Mechanism("nu", 10), 3, seed=1, form="replay").form == "replay"
    g.seek(7)
    assert g.step == 7
    assert g.next().tobytes() == rows[7].tobytes()
    a = NoiseGenerator(mech, 4, seed=8)
    b = NoiseGenerator(mech, 5, seed=8, coord0=4)
    for t in range(10):
        assert np.concatenate([a.next(), b.next()]).tobytes() == rows[t].tobytes()
    with pytest.raises(ValueError, match="step"):
        g.seek(-1)


@pytest.mark.parametrize("kind,params", [("blt", BLT), ("nu", {"nu": 0.1}),
                                         ("bsr", {"bands": 2})])
def test_state_dict_resume(kind, params):
    mech = Mechanism(kind, 8, **params)
    ref = NoiseGenerator(mech, 7, seed=11, noise_multiplier=0.9)
    rows = [ref.next() for _ in range(8)]
    g = NoiseGenerator(mech, 7, seed=11, noise_multiplier=0.9)
    for _ in range(3):
        g.next()
    state = g.state_dict()
    h = NoiseGenerator(mech, 7, seed=999, noise_multiplier=0.9)  # the saved seed is adopted
    h.load_state_dict(state)
    assert h.step == 3 and h.seed == 11
    for t in range(3, 8):
        assert h.next().tobytes() == rows[t].tobytes()
    other = NoiseGenerator(mech, 6, seed=11, noise_multiplier=0.9)
    with pytest.raises(ValueError, match="dim"):
        other.load_state_dict(state)
    with pytest.raises(ValueError, match="scale"):
        NoiseGenerator(mech, 7, seed=11, noise_multiplier=1.0).load_state_dict(state)
    with pytest.raises(ValueError, match="not a dpcorr"):
        h.load_state_dict({"format": "x"})
    # the state floats are replayed from the key and compared (issue 37): an edited value, a
    # state of another step or of another seed is refused naming noise_state
    if state["state"].size:
        edited = dict(state, state=state["state"].copy())
        edited["state"][4] = np.nextafter(edited["state"][4], np.inf)
        with pytest.raises(ValueError,
                           match=r"noise_state: coordinate \d+, buffer \d+ at step 3: the saved"):
            h.load_state_dict(edited)
        with pytest.raises(ValueError, match=r"noise_state"):
            h.load_state_dict(dict(state, step=2))
        with pytest.raises(ValueError, match=r"noise_state"):
            h.load_state_dict(dict(state, seed=12))
    with pytest.raises(ValueError, match=r"seeded generator's state needs its integer seed"):
        h.load_state_dict(dict(state, seed=None))


def test_secure_mode():
    mech = Mechanism("blt", 5, **BLT)
    a = NoiseGenerator(mech, 100)
    b = NoiseGenerator(mech, 100)
    assert a.secure and a.seed is None
    ra = a.next()
    assert not np.array_equal(ra, b.next())  # independent OS keys
    state = a.state_dict()
    assert state["rng_mode"] == "secure" and len(state["key"]) == 8
    rows = [a.next() for _ in range(4)]
    c = NoiseGenerator(mech, 100)
    state_at_1 = dict(state)
    c.load_state_dict(state_at_1)  # the key travels with the state
    for t in range(4):
        assert c.next().tobytes() == rows[t].tobytes()
    seeded = NoiseGenerator(mech, 100, seed=0)
    assert not np.array_equal(seeded.next(), ra)
