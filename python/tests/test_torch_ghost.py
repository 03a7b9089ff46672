"""Fast gradient clipping (dpcorr/torch/_ghost.py): ghost norms and the book-keeping clipped sum
against the materialised per-example path, float64, 1e-10 relative, for every rule (Linear
without and with a sequence, both branches of the ghost-or-materialise choice, Conv1d/2d,
Embedding with repeated and padding indices) and the layers that fall back (LayerNorm,
GroupNorm, MultiheadAttention, a layer used twice, frozen parameters); the engine's choice
(ghost on every step, the first one after its checks, so that test_torch.py's resumed runs stay
bit-identical; never under virtual steps), its refusal of a non-finite gradient, and whole runs
equal to the materialised engine's."""


import pytest
import torch

import dpcorr.torch as dt
from dpcorr.torch import _ghost, engine as engine_mod

torch.set_num_threads(1)
N, B, CLIP = 24, 8, 0.05


class Seq(torch.nn.Module):
    """A Linear over a sequence (b, T, d) then a mean and a head."""

    def __init__(self, t, d_in, d_out):
        super().__init__()
        self.t, self.d_in = t, d_in
        self.lin = torch.nn.Linear(d_in, d_out)
        self.out = torch.nn.Linear(d_out, 3)

    def forward(self, x):
        h = torch.tanh(self.lin(x.reshape(x.shape[0], self.t, self.d_in)))
        return self.out(h.mean(1))


class Twice(torch.nn.Module):
    """One Linear used twice in a forward: the norm of a sum of uses (materialised)."""

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(6, 6)
        self.out = torch.nn.Linear(6, 3)

    def forward(self, x):
        return self.out(torch.tanh(self.lin(torch.tanh(self.lin(x)))))


class Embed(torch.nn.Module):
    def __init__(self, padding_idx=None):
        super().__init__()
        self.emb = torch.nn.Embedding(5, 4, padding_idx=padding_idx)
        self.out = torch.nn.Linear(4, 3)

    def forward(self, x):
        return self.out(torch.tanh(self.emb(x)).mean(1))


class Attention(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = torch.nn.Linear(4, 8)
        self.att = torch.nn.MultiheadAttention(8, 2, batch_first=True)
        self.norm = torch.nn.LayerNorm(8)
        self.out = torch.nn.Linear(8, 3)

    def forward(self, x):
        h = self.inp(x.reshape(x.shape[0], 5, 4))
        h = self.norm(h + self.att(h, h, h, need_weights=False)[0])
        return self.out(h.mean(1))


def _frozen_bias():
    m = torch.nn.Sequential(torch.nn.Linear(6, 5), torch.nn.Tanh(), torch.nn.Linear(5, 3))
    m[0].bias.requires_grad_(False)
    return m


# (name, model factory, input shape of one example or ("tokens", length))
CASES = [
    ("mlp", lambda: torch.nn.Sequential(torch.nn.Linear(6, 5), torch.nn.Tanh(),
                                        torch.nn.Linear(5, 3)), (6,)),
    # d_in d_out = 256 > 2 T (d_in + d_out) = 192: Gram matrices
    ("linear-seq-ghost", lambda: Seq(3, 16, 16), (48,)),
    ("linear-seq-rows", lambda: Seq(8, 2, 3), (16,)),  # 6 <= 80: per-example matrices
    ("linear-no-bias", lambda: torch.nn.Sequential(torch.nn.Linear(6, 5, bias=False),
                                                   torch.nn.Tanh(), torch.nn.Linear(5, 3)),
     (6,)),
    ("frozen-bias", _frozen_bias, (6,)),
    # the first convolution per-example matrices (L = 16 positions), the second Gram matrices
    # (L = 4, C k k = 72, out 16)
    ("conv2d", lambda: torch.nn.Sequential(
        torch.nn.Conv2d(2, 8, 3, stride=2, padding=1), torch.nn.GroupNorm(2, 8),
        torch.nn.Tanh(), torch.nn.Conv2d(8, 16, 3), torch.nn.Flatten(),
        torch.nn.Linear(64, 3)), (2, 8, 8)),
    ("conv1d", lambda: torch.nn.Sequential(
        torch.nn.Conv1d(3, 6, 3, padding=1), torch.nn.Tanh(), torch.nn.Conv1d(6, 16, 4, stride=4),
        torch.nn.Flatten(), torch.nn.Linear(32, 3)), (3, 8)),
    ("conv2d-dilated-no-bias", lambda: torch.nn.Sequential(
        torch.nn.Conv2d(2, 4, 3, dilation=2, padding=2, bias=False), torch.nn.Tanh(),
        torch.nn.Flatten(), torch.nn.Linear(256, 3)), (2, 8, 8)),
    # one input channel: the per-example matrices as a forward convolution (_conv_rows); 9 x 9
    # with stride 2 leaves the last row and column out (the output is cropped to the kernel)
    ("conv2d-one-channel", lambda: torch.nn.Sequential(
        torch.nn.Conv2d(1, 4, 4, stride=2, padding=1), torch.nn.Tanh(), torch.nn.Flatten(),
        torch.nn.Linear(64, 3)), (1, 9, 9)),
    ("conv1d-one-channel", lambda: torch.nn.Sequential(
        torch.nn.Conv1d(1, 3, 3, stride=2, padding=1, dilation=2), torch.nn.Tanh(),
        torch.nn.Flatten(), torch.nn.Linear(15, 3)), (1, 12)),
    ("embedding", lambda: Embed(), ("tokens", 7)),
    ("embedding-padding", lambda: Embed(padding_idx=0), ("tokens", 7)),
    ("attention-layernorm", Attention, (20,)),
    ("used-twice", Twice, (6,)),
]


# the cases whose per-example rows hold most trainable parameters (ghost_clip declines them)
MOSTLY_ROWS = {"attention-layernorm", "used-twice"}


def _data(shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    if shape[0] == "tokens":  # few distinct indices: repeats within an example
        x = torch.randint(0, 5, (N, shape[1]), generator=g)
    else:
        x = torch.randn((N,) + shape, generator=g, dtype=torch.float64)
    return x, torch.randint(0, 3, (N,), generator=g)


def _engine(model, data, ghost=True, **kw):
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.3,
                          momentum=0.5)
    kw.setdefault("epsilon", 30.0)
    _, opt, loader, eng = dt.make_private(model, opt, torch.utils.data.TensorDataset(*data),
                                          delta=1e-5, epochs=1, batch_size=B, clip=CLIP,
                                          mech="blt", seed=3, prefetch_noise=False, **kw)
    eng.ghost_clipping = ghost
    return opt, loader, eng


def _backward(eng, model, x, y):
    """The per-example loss API: one loss per example (the captures are the gradients of their
    sum: scale 1)."""
    eng.backward(torch.nn.functional.cross_entropy(model(x), y, reduction="none"))


def _materialised(eng, b, scale):
    per = eng._per_example(b, scale)
    flats = [g.reshape(b, -1) for g in per]
    norms = eng._norms(flats)
    factor = (eng.plan.clip / norms).clamp(max=1.0)
    total = torch.cat([factor @ f.double() for f in flats])
    return norms, total


def _rel(a, b):
    return float((a - b).norm() / b.norm().clamp_min(1e-300))


@pytest.mark.parametrize("name,make,shape", CASES, ids=[c[0] for c in CASES])
def test_ghost_equals_materialised(name, make, shape):
    """Per step, over several steps: the same captures give norms and clipped sums equal to the
    materialised path's to 1e-10 relative; most examples are clipped (CLIP is small), so the
    factors matter."""
    torch.manual_seed(0)
    model = make().double()
    data = _data(shape)
    opt, loader, eng = _engine(model, data)
    assert eng.path == "layers", name
    for t, (x, y) in enumerate(loader):
        opt.zero_grad()
        _backward(eng, model, x, y)
        b = len(y)
        want_n, want_s = _materialised(eng, b, 1.0)
        got = _ghost.ghost_clip(eng._layers, eng.params, b, 1.0, CLIP, always=True)
        assert got is not None
        assert _rel(got[0], want_n) < 1e-10, (name, t)
        assert _rel(got[1], want_s) < 1e-10, (name, t)
        assert float((want_n > CLIP).double().mean()) > 0.5  # clipping is exercised
        opt.step()
        if t == 2:
            break


def _train(make, shape, ghost, steps=3, physical=None, dtype=torch.float64, reduction="mean"):
    torch.manual_seed(0)
    model = make().to(dtype)
    x, y = _data(shape, seed=1)
    if x.is_floating_point():
        x = x.to(dtype)
    opt, loader, eng = _engine(model, (x, y), ghost=ghost, max_physical_batch_size=physical,
                               loss_reduction=reduction)
    for t, (xb, yb) in enumerate(loader):
        opt.zero_grad()
        _backward(eng, model, xb, yb)
        opt.step()
        if eng.steps_done == steps:
            break
    eng.close()
    return [p.detach().clone() for p in model.parameters()]


@pytest.mark.parametrize("name,make,shape", CASES, ids=[c[0] for c in CASES])
def test_run_equals_materialised_run(name, make, shape, monkeypatch):
    """Whole runs (same seed: same batches and noise): the ghost engine's parameters after 3
    steps equal the materialised engine's to 1e-10 relative, and ghost clipping ran on every
    step (the first one after its checks, which need the per-example rows: so that a resumed
    run, whose first step runs the checks again, takes the path the run took)."""
    calls = []
    real = engine_mod.ghost_clip

    def counted(*a, **k):
        out = real(*a, **k)
        calls.append(out is not None)
        return out
    monkeypatch.setattr(engine_mod, "ghost_clip", counted)
    got = _train(make, shape, True)
    # where most parameters would get per-example rows anyway, the engine's row sum is taken
    assert calls == [name not in MOSTLY_ROWS] * 3, (name, calls)
    del calls[:]
    want = _train(make, shape, False)
    assert calls == []
    for g, w in zip(got, want):
        assert _rel(g, w) < 1e-10, name


@pytest.mark.parametrize("t,d_in,d_out,gram", [(1, 7, 5, False), (3, 16, 16, True),
                                                (4, 40, 30, True), (8, 2, 3, False)])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_sequence_norms_bound_the_exact_ones(t, d_in, d_out, gram, dtype):
    """_sequence's squared norms against the exact per-example gradients (float64 products of
    the captured values), both branches, with examples built to cancel (a_2 = -a_1 + tiny,
    g_2 = g_1: the Gram terms are large, the gradient small): float64 to 1e-10 relative;
    float32: the Gram form an upper bound (its rounding bound) within 1e-3, the others the
    norms of what they sum; the clipped sums f^T of the exact matrices."""
    assert (d_in * d_out > 2 * t * (d_in + d_out) and t > 1) == gram
    g0 = torch.Generator().manual_seed(5)
    b = 6
    a = torch.randn(b, t, d_in, generator=g0, dtype=torch.float64)
    g = torch.randn(b, t, d_out, generator=g0, dtype=torch.float64)
    if t > 1:
        a[0, 1] = -a[0, 0] + 1e-3 * a[0, 1]
        g[0, 1] = g[0, 0]
    a, g = a.to(dtype), g.to(dtype)
    sq, part = _ghost._sequence(a, g, True, True)
    exact = torch.bmm(g.double().transpose(1, 2), a.double()).reshape(b, -1)
    gs = g.double().sum(1)
    want = (exact * exact).sum(1) + (gs * gs).sum(1)
    f = torch.linspace(0.2, 1.0, b, dtype=torch.float64)
    w_sum, b_sum = part(f)
    if dtype == torch.float64:
        assert _rel(sq, want) < 1e-10
        assert _rel(w_sum.reshape(-1), f @ exact) < 1e-10
    elif gram:  # the float64 contraction sums the exact matrices: the norm bounds them
        assert bool((sq >= want).all())
        assert float(((sq - want) / want).max()) < 1e-3
    else:  # the norms of what is summed: float32 rows (T > 1), float64 products (T = 1)
        assert _rel(sq, want) < (1e-12 if t == 1 else 1e-5)
        assert _rel(w_sum.reshape(-1), f @ exact) < 1e-5
    assert _rel(b_sum, f @ gs) < (1e-10 if dtype == torch.float64 else 1e-5)


@pytest.mark.parametrize("c_in,size,k,stride,pad,dil", [
    (1, (28, 28), (8, 8), (2, 2), (3, 3), (1, 1)),  # the CNN's first layer
    (1, (9, 11), (4, 3), (2, 3), (1, 0), (1, 2)),   # cropped, unequal sides
    (1, (1, 12), (1, 3), (1, 2), (0, 1), (1, 2)),   # a Conv1d as height 1
    (3, (7, 7), (3, 3), (2, 2), (1, 1), (1, 1)),    # grouped weight gradient
])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_conv_rows_equal_unfolded_products(c_in, size, k, stride, pad, dil, dtype):
    """_ghost._conv_rows (a forward convolution for one input channel, the grouped weight
    gradient otherwise) against the per-layer path's unfold and batched product: float64 to
    1e-12 relative per example, float32 to its rounding."""
    g0 = torch.Generator().manual_seed(7)
    b, n_out = 5, 4
    conv = torch.nn.Conv2d(c_in, n_out, k, stride=stride, padding=pad, dilation=dil)
    x = torch.randn((b, c_in) + size, generator=g0, dtype=torch.float64)
    go = torch.randn(conv.double()(x).shape, generator=g0, dtype=torch.float64)
    x, go = x.to(dtype), go.to(dtype)
    got = _ghost._conv_rows(x, go, k, stride, pad, dil)
    cols = torch.nn.functional.unfold(x.double(), k, dilation=dil, padding=pad, stride=stride)
    want = torch.bmm(go.double().reshape(b, n_out, -1), cols.transpose(1, 2)).reshape(b, -1)
    err = (got.double() - want).norm(dim=1) / want.norm(dim=1)
    assert got.shape == want.shape and got.dtype == dtype
    assert float(err.max()) < (1e-12 if dtype == torch.float64 else 1e-5)


def test_pruned_backward_leaves_parameter_gradients():
    """Once the per-layer path is proven (after the first step), engine.backward takes the
    gradients of the captured tensors only (torch.autograd.grad): p.grad is not filled by the
    backward pass (the engine sets it at optimizer.step()); on the first step, whose checks
    compare with autograd's p.grad, it is."""
    torch.manual_seed(0)
    model = CASES[0][1]().double()
    opt, loader, eng = _engine(model, _data(CASES[0][2]))
    it = iter(loader)
    for t in range(2):
        x, y = next(it)
        opt.zero_grad(set_to_none=True)
        _backward(eng, model, x, y)
        filled = [p.grad is not None for p in model.parameters()]
        assert filled == [t == 0] * len(filled), t
        opt.step()
        assert all(p.grad is not None for p in model.parameters())


def test_float32_run_close_to_materialised():
    """float32 parameters: ghost norms (upper bounds of the exact per-example norms) against
    the float32 rows' norms: the runs agree to float32 rounding."""
    make, shape = CASES[5][1], CASES[5][2]
    got = _train(make, shape, True, dtype=torch.float32)
    want = _train(make, shape, False, dtype=torch.float32)
    for g, w in zip(got, want):
        assert _rel(g, w) < 1e-4


def test_virtual_steps_stay_materialised(monkeypatch):
    """Under max_physical_batch_size the engine keeps the fixed-order row sum (bit-identical to
    the whole batch; a GEMM's order depends on the batch): ghost clipping is not called, and the
    virtual run is bit for bit the whole-batch materialised run."""
    calls = []
    monkeypatch.setattr(engine_mod, "ghost_clip", lambda *a, **k: calls.append(1))
    make, shape = CASES[0][1], CASES[0][2]
    virtual = _train(make, shape, True, physical=3, reduction="sum")
    assert calls == []
    whole = _train(make, shape, False, reduction="sum")
    for v, w in zip(virtual, whole):
        assert torch.equal(v, w)
    monkeypatch.undo()
    ghost = _train(make, shape, True, reduction="sum")
    for v, g in zip(virtual, ghost):
        assert _rel(g, v) < 1e-10


def test_nonfinite_refused_on_ghost_path():
    """A NaN reaching the gradients after the first step (the ghost path is active) is refused
    as on the materialised path, naming the example."""
    torch.manual_seed(0)
    model = CASES[0][1]().double()
    opt, loader, eng = _engine(model, _data(CASES[0][2]))
    it = iter(loader)
    x, y = next(it)
    opt.zero_grad()
    _backward(eng, model, x, y)
    opt.step()
    assert eng._layers_agree
    x, y = next(it)
    opt.zero_grad()
    with torch.no_grad():
        model[2].weight[0, 0] = float("nan")
    _backward(eng, model, x, y)
    with pytest.raises(ValueError, match="non-finite per-example gradient"):
        opt.step()


def test_norms_raised_clip_holds():
    """Each example's clipped contribution, materialised afterwards in float64, has norm at most
    clip: the ghost norms are raised above their rounding as engine._norms raises its own."""
    torch.manual_seed(0)
    model = Seq(3, 4, 5).double()
    opt, loader, eng = _engine(model, _data((12,)))
    x, y = next(iter(loader))
    opt.zero_grad()
    _backward(eng, model, x, y)
    b = len(y)
    norms, _ = _ghost.ghost_clip(eng._layers, eng.params, b, 1.0, CLIP, always=True)
    per = eng._layers.compute(b, 1.0)
    exact = torch.cat([g.reshape(b, -1) for g in per], 1).norm(dim=1)
    assert bool((norms > exact).all())
    factor = (CLIP / norms).clamp(max=1.0)
    assert bool((factor * exact <= CLIP).all())
    assert float(((norms - exact) / exact).max()) < 1e-11


def test_norms_accumulate_float32_rows_in_float64():
    """engine._norms: a float32 row's sum of squares is accumulated in float64 (torch's float32
    vector_norm accumulates in float32: ~1e-5 relative on long rows, the size of the clip
    margin). Reference: the float64 norm of the same float32 values."""
    from dpcorr.torch.engine import PrivacyEngine
    g = torch.Generator().manual_seed(3)
    rows = (torch.rand(3, 1_000_003, generator=g) + 1.0).to(torch.float32)
    got = PrivacyEngine._norms(None, [rows[:, :400_000], rows[:, 400_000:]])
    want = torch.linalg.vector_norm(rows.double(), dim=1)
    rel = (got / want - 1.0).abs()
    # raised by 2^-16 exactly (up to float64 rounding), never below the true norm
    assert bool((got >= want).all())
    assert float((rel - 2.0 ** -16).abs().max()) < 1e-12
