"""dpcorr.torch with random forwards (dropout, randn_like): each example's gradient is that of
the forward the step ran (its own part of the step's masks and noise), compared in float64 to
1e-10 with an independent reference: the stock model rerun on the whole batch from the RNG state
the step's forward started from (the same masks), differentiated for one example's loss at a
time. And the sensitivity of the clipped sum to one example with Dropout active (the per-layer
path's cross-check is never skipped)."""

import copy

import pytest
import torch
import torch.nn.functional as F

import dpcorr.torch as dt

torch.set_num_threads(1)
N, B = 12, 6


class DropoutMlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.ReLU(),
                                       torch.nn.Dropout(0.5), torch.nn.Linear(16, 3))

    def forward(self, x):
        return self.net(x)


class Encoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.1, batch_first=True)
        self.out = torch.nn.Linear(8, 3)

    def forward(self, x):
        return self.out(self.enc(x).mean(1))


class DropLstm(torch.nn.Module):
    def __init__(self, kind="LSTM"):
        super().__init__()
        self.rnn = getattr(torch.nn, kind)(3, 5, num_layers=2, dropout=0.5, batch_first=True)
        self.out = torch.nn.Linear(5, 3)

    def forward(self, x):
        h, _ = self.rnn(x)
        return self.out(h[:, -1])


class Vae(torch.nn.Module):
    """The reparameterisation trick: z = mu + exp(logvar / 2) * randn_like(mu)."""

    def __init__(self):
        super().__init__()
        self.enc = torch.nn.Linear(4, 6)
        self.dec = torch.nn.Linear(3, 3)

    def forward(self, x):
        mu, logvar = self.enc(x).chunk(2, dim=1)
        z = mu + torch.exp(0.5 * logvar) * torch.randn_like(mu)
        return self.dec(z)


class StochasticDepth(torch.nn.Module):
    """A residual branch kept per example with probability 0.7 (bernoulli_ in place), and noise
    drawn by size (torch.randn(shape))."""

    def __init__(self):
        super().__init__()
        self.a, self.branch, self.out = (torch.nn.Linear(4, 6), torch.nn.Linear(6, 6),
                                         torch.nn.Linear(6, 3))

    def forward(self, x):
        h = torch.tanh(self.a(x))
        keep = torch.empty(h.shape[0], 1, dtype=h.dtype).bernoulli_(0.7) / 0.7
        h = h + keep * self.branch(h) + 0.1 * torch.randn(h.shape, dtype=h.dtype)
        return self.out(h)


class ChannelDrop(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(1, 4, 3)
        self.drop = torch.nn.Dropout2d(0.3)
        self.out = torch.nn.Linear(4, 3)

    def forward(self, x):
        return self.out(self.drop(torch.tanh(self.conv(x))).mean((2, 3)))


MODELS = {"dropout-mlp": (DropoutMlp, (4,), "layers"),
          "transformer-dropout": (Encoder, (5, 8), "isolated"),
          "lstm-dropout": (DropLstm, (4, 3), "isolated"),
          "gru-dropout": (lambda: DropLstm("GRU"), (4, 3), "isolated"),
          "vae-randn-like": (Vae, (4,), "layers"),
          "dropout2d": (ChannelDrop, (1, 5, 5), "layers"),
          "stochastic-depth-randn": (StochasticDepth, (4,), "layers")}


def float64(make, *shape):
    with torch.random.fork_rng():
        torch.set_default_dtype(torch.float64)
        try:
            return make(), torch.randn(N, *shape)
        finally:
            torch.set_default_dtype(torch.float32)


def engine_for(model, x, y, **kw):
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
    args = dict(noise_multiplier=1.0, batch_size=B, epochs=1, mech="nu", seed=1)
    args.update(kw)
    return dt.make_private(model, opt, torch.utils.data.TensorDataset(x, y), **args)


def same_draws_reference(model, xb, yb, state):
    """Example i's gradient: the stock model on the whole batch from RNG state ``state`` (the
    step's masks), the loss of example i alone differentiated."""
    rows = []
    for i in range(xb.shape[0]):
        torch.set_rng_state(state)
        model.zero_grad()
        F.cross_entropy(model(xb)[i:i + 1], yb[i:i + 1]).backward()
        rows.append([p.grad.clone() if p.grad is not None else torch.zeros_like(p)
                     for p in model.parameters()])
    return [torch.stack([r[j] for r in rows]) for j in range(len(rows[0]))]


@pytest.mark.parametrize("case", sorted(MODELS))
def test_random_forward_gradients_are_the_steps_own(case):
    make, shape, path = MODELS[case]
    torch.manual_seed(0)
    model, x = float64(make, *shape)
    y = torch.randint(0, 3, (N,))
    ref_model = copy.deepcopy(model)
    model, opt, loader, eng = engine_for(model, x, y)
    for step, (xb, yb) in enumerate(loader):
        opt.zero_grad()
        state = torch.get_rng_state()
        dt.backward(F.cross_entropy(model(xb), yb, reduction="none"))
        after = torch.get_rng_state()
        got = eng._per_example(B, 1.0)
        assert torch.equal(after, torch.get_rng_state())  # the checks and replay drew nothing
        assert eng.path == path
        with torch.random.fork_rng():
            want = same_draws_reference(ref_model, xb, yb, state)
        # the masks really differ between examples and from a fresh draw (not a vacuous test)
        for g, w in zip(got, want):
            torch.testing.assert_close(g, w, rtol=1e-10, atol=1e-12)
        opt.step()
        with torch.no_grad():
            for p, q in zip(model.parameters(), ref_model.parameters()):
                q.copy_(p)
        if step == 1:
            break
    eng.close()


def test_a_fresh_draw_would_differ():
    """The reference is sensitive to the masks: the same model with other masks gives other
    per-example gradients (so the test above can fail)."""
    torch.manual_seed(0)
    model, x = float64(Encoder, 5, 8)
    y = torch.randint(0, 3, (N,))
    state = torch.get_rng_state()
    a = same_draws_reference(model, x[:B], y[:B], state)
    torch.manual_seed(123)
    b = same_draws_reference(model, x[:B], y[:B], torch.get_rng_state())
    assert max(float((u - v).abs().max()) for u, v in zip(a, b)) > 1e-3


class AlphaDrop(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = torch.nn.Linear(4, 8), torch.nn.Linear(8, 3)
        self.act = torch.nn.AlphaDropout(0.2)

    def forward(self, x):
        return self.b(self.act(self.a(x)))


def test_unreplayable_random_op_refused():
    """AlphaDropout draws inside one C++ call dpcorr does not record: refused, not redrawn.
    (RReLU draws only for negative inputs, so one example shifts the others' draws: not in
    the proof's rules, so the isolated path runs, redraws, and is refused as unreplayed.)"""
    torch.manual_seed(0)
    model, x = float64(AlphaDrop, 4)
    y = torch.randint(0, 3, (N,))
    model, opt, loader, eng = engine_for(model, x, y)
    xb, yb = next(iter(loader))
    dt.backward(F.cross_entropy(model(xb), yb, reduction="none"))
    with pytest.raises(ValueError, match="cannot replay"):
        opt.step()
    eng.close()


class SeqFirstDrop(torch.nn.Module):
    """Linear layers run sequence-first (time, batch, features) with time == batch, and
    Dropout: per-layer rows would be per time step (the issue's 2.2-4.9 x clip)."""

    def __init__(self):
        super().__init__()
        self.a, self.b = torch.nn.Linear(3, 16), torch.nn.Linear(16, 3)
        self.drop = torch.nn.Dropout(0.3)

    def forward(self, x):  # x: (batch, time, 3)
        h = self.drop(torch.tanh(self.a(x.transpose(0, 1))))
        return self.b(h).mean(0)


def first_clipped_sum(model_state, make, x, y, mask_seed):
    """The clipped sum of step 1 (before the noise; clip 1), its batch's example indices and
    the engine's path; the forward's masks come from ``mask_seed``."""
    model = make()
    model.load_state_dict(model_state)
    model, opt, loader, eng = engine_for(model, x, y, sampler="fixed")
    xb, yb = next(iter(loader))
    torch.manual_seed(mask_seed)  # the same masks in both runs
    dt.backward(F.cross_entropy(model(xb), yb, reduction="none"))
    per = eng._per_example(xb.shape[0], 1.0)
    flat = torch.cat([g.reshape(g.shape[0], -1) for g in per], 1)
    norms = flat.norm(dim=1, keepdim=True)
    total = (flat * torch.clamp(1.0 / norms, max=1.0)).sum(0)
    idx, path = eng.plan.batch(0), eng.path
    eng.close()
    return total, idx, path


def make_seq_first():
    with torch.random.fork_rng():
        torch.set_default_dtype(torch.float64)
        try:
            return SeqFirstDrop()
        finally:
            torch.set_default_dtype(torch.float32)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_sequence_first_linear_with_dropout_sensitivity_within_clip(seed):
    """Replace one example of the step's batch (bound: 2 x clip): the clipped sum moves by at
    most 2 x clip (clip 1), over data seeds and dropout masks; before, Dropout skipped the
    per-layer path's cross-check and the per-time-step rows moved it by 2.2-4.9 x clip."""
    torch.manual_seed(seed)
    state = make_seq_first().state_dict()
    x = torch.randn(N, B, 3, dtype=torch.float64) * 3
    y = torch.randint(0, 3, (N,))
    for mask_seed in range(3):
        a, idx, path = first_clipped_sum(state, make_seq_first, x, y, mask_seed)
        assert path == "isolated"
        j = int(idx[mask_seed % len(idx)])
        x2, y2 = x.clone(), y.clone()
        x2[j] = -x[j] * 5 + 1
        y2[j] = (y[j] + 1) % 3
        b, idx2, _ = first_clipped_sum(state, make_seq_first, x2, y2, mask_seed)
        assert list(idx) == list(idx2)
        assert float((a - b).norm()) <= 2.0 + 1e-9, float((a - b).norm())
        assert float((a - b).norm()) > 0.0
