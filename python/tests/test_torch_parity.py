"""dpcorr.torch per-example gradients against autograd run on each example alone (float64,
1e-10 relative) for every supported kind of layer and composition -- through make_private, so
the engine's own choice of path (per-layer or whole-model) and its first-step checks are what is
tested -- plus every refusal (validate, the independence check) with its message, fix(), and an
LSTM text model trained against the same model with per-example autograd and the same noise."""

import copy

import pytest
import torch
import torch.nn.functional as F

import dpcorr.torch as dt

torch.set_num_threads(1)
N, B = 12, 6


class Head(torch.nn.Module):
    """body (any module) -> mean over the sequence when 3-d -> Linear to 3 classes."""

    def __init__(self, body, width, take=None):
        super().__init__()
        self.body = body
        self.take = take
        self.out = torch.nn.Linear(width, 3)

    def forward(self, x):
        h = self.body(x)
        if self.take is not None:
            h = self.take(h)
        if h.dim() == 3:
            h = h.mean(1)
        return self.out(h)


class Rnn(torch.nn.Module):
    def __init__(self, kind, layers, bidir, batch_first):
        super().__init__()
        self.batch_first = batch_first
        self.rnn = getattr(torch.nn, kind)(3, 4, num_layers=layers, bidirectional=bidir,
                                           batch_first=batch_first)
        self.out = torch.nn.Linear(4 * (2 if bidir else 1), 3)

    def forward(self, x):  # x: (batch, time, 3), as the loader yields it
        seq, _ = self.rnn(x if self.batch_first else x.transpose(0, 1))
        last = seq[:, -1] if self.batch_first else seq[-1]
        return self.out(last)


class SelfAttention(torch.nn.Module):
    """Per-layer path (MultiheadAttention as one unit) unless a causal mask is given (keyword
    or positional) or the attention weights reach the loss: then the isolated path."""

    def __init__(self, batch_first, mask=None, use_weights=False):
        super().__init__()
        self.batch_first = batch_first
        self.mask, self.use_weights = mask, use_weights
        self.att = torch.nn.MultiheadAttention(8, 2, batch_first=batch_first)

    def forward(self, x):
        if not self.batch_first:
            x = x.transpose(0, 1)
        causal = torch.triu(torch.ones(4, 4, dtype=torch.bool), 1)
        if self.mask == "keyword":
            y, w = self.att(x, x, x, attn_mask=causal)
        elif self.mask == "positional":
            y, w = self.att(x, x, x, None, True, causal)
        else:
            y, w = self.att(x, x, x)
        if self.use_weights:
            y = y + w.sum(-1, keepdim=True)
        return y if self.batch_first else y.transpose(0, 1)


class Tied(torch.nn.Module):
    """Embedding weight reused as the output layer (F.linear(h, emb.weight))."""

    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(10, 6, padding_idx=0)
        self.mid = torch.nn.Linear(6, 6)

    def forward(self, x):
        return F.linear(torch.tanh(self.mid(self.emb(x).mean(1))), self.emb.weight)


class RootParam(torch.nn.Module):
    """A positional embedding as a parameter of the model itself."""

    def __init__(self):
        super().__init__()
        self.pos = torch.nn.Parameter(torch.randn(5, 4))
        self.lin = torch.nn.Linear(4, 3)

    def forward(self, x):
        return self.lin(torch.tanh(x + self.pos).mean(1))


class Mixed(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(10, 8, padding_idx=0)
        self.pos = torch.nn.Parameter(torch.randn(5, 8) * 0.1)
        self.enc = torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
        self.lstm = torch.nn.LSTM(8, 4, batch_first=True)
        self.conv = torch.nn.Conv1d(4, 4, 3, padding=1)
        self.norm = torch.nn.GroupNorm(2, 4)
        self.ln = torch.nn.LayerNorm(4)

    def forward(self, x):
        h = self.enc(self.emb(x) + self.pos)
        h, _ = self.lstm(h)
        h = self.norm(self.conv(h.transpose(1, 2))).mean(2)
        return F.linear(self.ln(h), self.emb.weight[:3, :4])


def floats(*shape):
    return lambda: torch.randn(N, *shape)


def tokens():
    t = torch.randint(1, 10, (N, 5))
    t[::3, 3:] = 0  # padding
    return t


CASES = {
    "linear": (lambda: torch.nn.Sequential(torch.nn.Linear(6, 4), torch.nn.Tanh(),
                                           torch.nn.Linear(4, 3)), floats(6), "layers"),
    "conv1d": (lambda: torch.nn.Sequential(torch.nn.Conv1d(2, 3, 3), torch.nn.Tanh(),
                                           torch.nn.Flatten(), torch.nn.Linear(18, 3)),
               floats(2, 8), "layers"),
    "conv2d-groupnorm-layernorm": (lambda: torch.nn.Sequential(
        torch.nn.Conv2d(1, 4, 3, padding=1), torch.nn.GroupNorm(2, 4), torch.nn.ReLU(),
        torch.nn.MaxPool2d(2), torch.nn.Flatten(), torch.nn.LayerNorm(16),
        torch.nn.Linear(16, 3)), floats(1, 4, 4), "layers"),
    "embedding-padding": (lambda: Head(torch.nn.Embedding(10, 4, padding_idx=0), 4), tokens,
                          "layers"),
    "mha-batch-first": (lambda: Head(SelfAttention(True), 8), floats(4, 8), "layers"),
    "mha-seq-first": (lambda: Head(SelfAttention(False), 8), floats(4, 8), "layers"),
    "mha-mask-keyword": (lambda: Head(SelfAttention(True, "keyword"), 8), floats(4, 8),
                         "isolated"),
    "mha-mask-positional": (lambda: Head(SelfAttention(False, "positional"), 8), floats(4, 8),
                            "isolated"),
    "mha-weights-used": (lambda: Head(SelfAttention(True, use_weights=True), 8), floats(4, 8),
                         "isolated"),
    "transformer-encoder-layer": (lambda: Head(torch.nn.TransformerEncoderLayer(
        8, 2, 16, dropout=0.0, batch_first=True), 8), floats(4, 8), "layers"),
    "transformer-encoder": (lambda: Head(torch.nn.TransformerEncoder(
        torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True), 2), 8),
        floats(4, 8), "layers"),
    "tied-weights": (Tied, tokens, "isolated"),
    "root-parameter": (RootParam, floats(5, 4), "isolated"),
    "mixed": (Mixed, tokens, "isolated"),
}
for kind in ("LSTM", "GRU", "RNN"):
    for layers, bidir, bf in ((1, False, True), (2, True, False), (2, False, True),
                              (1, True, True)):
        CASES[f"{kind.lower()}-l{layers}{'-bi' if bidir else ''}-{'bf' if bf else 'sf'}"] = (
            (lambda k=kind, la=layers, bi=bidir, b=bf: Rnn(k, la, bi, b)), floats(4, 3),
            "isolated")


def autograd_alone(model, x, y):
    """Per-example gradients: one backward pass per example on a batch of one."""
    rows = []
    for i in range(x.shape[0]):
        model.zero_grad()
        F.cross_entropy(model(x[i:i + 1]), y[i:i + 1]).backward()
        rows.append([p.grad.clone() if p.grad is not None else torch.zeros_like(p)
                     for p in model.parameters()])
    return [torch.stack([r[j] for r in rows]) for j in range(len(rows[0]))]


def engine_for(model, x, y, **kw):
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
    args = dict(noise_multiplier=1.0, batch_size=B, epochs=1, mech="nu", seed=1)
    args.update(kw)
    return dt.make_private(model, opt, torch.utils.data.TensorDataset(x, y), **args)


@pytest.mark.parametrize("case", sorted(CASES))
def test_per_example_gradients_equal_autograd_alone(case):
    make, inputs, path = CASES[case]
    torch.manual_seed(0)
    with torch.random.fork_rng():
        torch.set_default_dtype(torch.float64)
        try:
            model = make()
            x = inputs()
        finally:
            torch.set_default_dtype(torch.float32)
    y = torch.randint(0, 3, (N,))
    ref_model = copy.deepcopy(model)
    model, opt, loader, eng = engine_for(model, x, y)
    xb, yb = next(iter(loader))
    opt.zero_grad()
    dt.backward(F.cross_entropy(model(xb), yb, reduction="none"))
    got = eng._per_example(xb.shape[0], 1.0)
    assert eng.path == path
    want = autograd_alone(ref_model, xb, yb)
    names = [n for n, p in ref_model.named_parameters() if p.requires_grad]
    for name, g, w in zip(names, got, want):
        assert g.dtype == torch.float64
        err = float((g - w).norm() / max(float(w.norm()), 1e-300))
        assert err <= 1e-10, f"{case}: {name} relative error {err:.3g}"
    opt.step()  # the step itself runs (checks, noise) on the path chosen
    eng.detach()


class Centering(torch.nn.Module):
    def forward(self, x):
        return x - x.mean(0)


def batchnorm_model(bn):
    return torch.nn.Sequential(torch.nn.Conv2d(1, 2, 3), torch.nn.Sequential(torch.nn.ReLU(), bn),
                               torch.nn.Flatten(), torch.nn.Linear(8, 3))


def frozen(bn):
    for p in bn.parameters():
        p.requires_grad_(False)
    return bn


@pytest.mark.parametrize("bn,kind", [
    (lambda: torch.nn.BatchNorm2d(2, affine=False), "BatchNorm2d"),
    (lambda: frozen(torch.nn.BatchNorm2d(2)), "BatchNorm2d"),
    (lambda: torch.nn.BatchNorm2d(2), "BatchNorm2d"),
    (lambda: torch.nn.SyncBatchNorm(2), "SyncBatchNorm"),
], ids=["affine-false", "frozen", "affine", "sync"])
def test_batchnorm_refused_by_dotted_path_and_fixed(bn, kind):
    model = batchnorm_model(bn())
    problems = dt.validate(model)
    assert len(problems) == 1 and problems[0].startswith(f"1.1 ({kind}) mixes the examples")
    assert "GroupNorm(2, 2)" in problems[0]
    x, y = torch.randn(N, 1, 4, 4), torch.randint(0, 3, (N,))
    with pytest.raises(ValueError, match=r"1\.1 \(" + kind + r"\) mixes the examples .*fix"):
        engine_for(model, x, y)
    with pytest.raises(ValueError, match="1.1"):
        dt.validate(model, strict=True)
    fixed = dt.fix(model)
    assert fixed is model and isinstance(model[1][1], torch.nn.GroupNorm)
    assert dt.validate(model) == []
    model, opt, loader, eng = engine_for(model, x, y)
    for xb, yb in loader:
        opt.zero_grad()
        dt.backward(F.cross_entropy(model(xb), yb, reduction="none"))
        opt.step()
    eng.detach()


def test_instancenorm_with_running_stats_refused_and_fixed():
    model = torch.nn.Sequential(torch.nn.InstanceNorm1d(3, track_running_stats=True))
    assert dt.validate(model)[0].startswith("0 (InstanceNorm1d) keeps running statistics")
    assert dt.validate(torch.nn.InstanceNorm1d(3)) == []  # no running statistics: per example
    dt.fix(model)
    assert not model[0].track_running_stats and dt.validate(model) == []
    assert isinstance(dt.fix(torch.nn.BatchNorm1d(4)), torch.nn.GroupNorm)  # the model itself


def test_custom_module_that_mixes_examples_refused_before_the_first_step():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), Centering(), torch.nn.Tanh(),
                                torch.nn.Linear(4, 3))
    before = [p.detach().clone() for p in model.parameters()]
    x, y = torch.randn(N, 4), torch.randint(0, 3, (N,))
    assert dt.validate(model) == []  # only the run can tell
    model, opt, loader, eng = engine_for(model, x, y)
    xb, yb = next(iter(loader))
    opt.zero_grad()
    dt.backward(F.cross_entropy(model(xb), yb, reduction="none"))
    with pytest.raises(dt.NotPerExampleError, match=r"model: mixes the examples of a batch: "
                       r"example \d+'s output computed alone differs.*mean over dimension 0 .*"
                       r"\(in 1 \(Centering\)\)"):
        opt.step()
    assert all(torch.equal(a, p) for a, p in zip(before, model.parameters()))
    assert eng.steps_done == 0


def test_sequence_first_encoder_fed_batch_first_refused():
    """A seq-first TransformerEncoder given (batch, time, ...) attends across the batch: the
    check names the attention module."""
    torch.manual_seed(0)
    model = Head(torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(8, 2, 16,
                                                                              dropout=0.0), 1), 8)
    model, opt, loader, eng = engine_for(model, torch.randn(N, 4, 8), torch.randint(0, 3, (N,)))
    xb, yb = next(iter(loader))
    dt.backward(F.cross_entropy(model(xb), yb, reduction="none"))
    with pytest.raises(dt.NotPerExampleError, match=r"mixes the examples.*every example with every other"
                       r".*\(in body\.layers\.0\.self_attn \(MultiheadAttention\)\)"):
        opt.step()


def test_dropout_model_is_proven_and_leaves_no_trace():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Dropout(0.5),
                                torch.nn.Linear(8, 3))
    x, y = torch.randn(N, 4), torch.randint(0, 3, (N,))
    model, opt, loader, eng = engine_for(model, x, y)
    xb, yb = next(iter(loader))
    opt.zero_grad()
    dt.backward(F.cross_entropy(model(xb), yb, reduction="none"))
    state = torch.get_rng_state()
    opt.step()
    # proven per example by construction (no probe): the per-layer path, the RNG untouched
    assert torch.equal(state, torch.get_rng_state())
    assert eng.proof is None and eng.path == "layers"


def test_lstm_text_model_trains_like_per_example_autograd():
    """A synthetic text task (does token 7 occur?): the LSTM model trained by dpcorr.torch
    (isolated path) and the same model whose per-example gradients come from autograd on
    each example alone, with the same seed (same batches, same noise): accuracies within 2 pp."""
    g = torch.Generator().manual_seed(3)
    x = torch.randint(1, 10, (600, 6), generator=g)
    y = (x == 7).any(1).long()
    xt, yt, xs, ys = x[:400], y[:400], x[400:], y[400:]

    class Text(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = torch.nn.Embedding(10, 8)
            self.lstm = torch.nn.LSTM(8, 8, batch_first=True)
            self.out = torch.nn.Linear(8, 2)

        def forward(self, t):
            h, _ = self.lstm(self.emb(t))
            return self.out(h[:, -1])

    def train(reference):
        torch.manual_seed(0)
        model = Text()
        opt = torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)
        model, opt, loader, eng = dt.make_private(
            model, opt, torch.utils.data.TensorDataset(xt, yt), batch_size=50, epochs=6,
            noise_multiplier=0.3, clip=1.0, mech="blt", seed=5)
        if reference:
            def alone(b, scale):
                eng._whole.quiet = True
                try:
                    xb, yb = eng._whole.uses[0][0][0], batch[1]
                    return autograd_alone(model, xb, yb)
                finally:
                    eng._whole.quiet = False
            eng._per_example = alone
        for _ in range(6):
            for batch in loader:
                opt.zero_grad()
                dt.backward(F.cross_entropy(model(batch[0]), batch[1], reduction="none"))
                opt.step()
        eng.detach()
        with torch.no_grad():
            return float((model(xs).argmax(1) == ys).double().mean())

    acc, ref = train(False), train(True)
    assert acc >= 0.75, acc
    assert abs(acc - ref) <= 0.02, (acc, ref)


@pytest.mark.parametrize("batch_first", [True, False])
def test_attention_computed_as_its_parts_gives_the_same_output(batch_first):
    """The per-layer path runs MultiheadAttention as its parts (projections, softmax, context,
    output projection) to keep their gradients: the output and the weights are the stock
    forward's (float64: to rounding)."""
    torch.manual_seed(0)
    with torch.random.fork_rng():
        torch.set_default_dtype(torch.float64)
        try:
            att = torch.nn.MultiheadAttention(8, 2, batch_first=batch_first)
            x = torch.randn(4, N, 8)
        finally:
            torch.set_default_dtype(torch.float32)
    want = torch.nn.MultiheadAttention.forward(att, x, x, x)
    from dpcorr.torch._per_sample import PerSampleGradients
    ps = PerSampleGradients(att)
    got = att(x, x, x)
    assert ps.layers[0].inputs[0][5] is not None  # the parts ran
    for a, b in zip(got, want):
        torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-14)
    ps.remove()
    assert "forward" not in att.__dict__


def test_sequence_first_linear_as_long_as_the_batch_takes_the_whole_model_path():
    """Linear layers fed (time, batch, features) where time == batch: the per-layer rows would
    be per time step, not per example, yet sum to the right batch gradient; the first step's
    example-by-example comparison with the isolated path sends the run there."""

    class SeqFirst(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = torch.nn.Linear(3, 4), torch.nn.Linear(4, 3)

        def forward(self, x):  # x: (batch, time, 3), time == the batch size
            h = torch.tanh(self.a(x.transpose(0, 1)))  # (time, batch, 4)
            return self.b(h).mean(0)

    torch.manual_seed(0)
    with torch.random.fork_rng():
        torch.set_default_dtype(torch.float64)
        try:
            model = SeqFirst()
            x = torch.randn(N, B, 3)
        finally:
            torch.set_default_dtype(torch.float32)
    y = torch.randint(0, 3, (N,))
    ref_model = copy.deepcopy(model)
    model, opt, loader, eng = engine_for(model, x, y)
    xb, yb = next(iter(loader))
    assert xb.shape[0] == xb.shape[1] == B
    opt.zero_grad()
    dt.backward(F.cross_entropy(model(xb), yb, reduction="none"))
    got = eng._per_example(B, 1.0)
    assert eng.path == "isolated"
    want = autograd_alone(ref_model, xb, yb)
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, rtol=1e-10, atol=1e-12)
