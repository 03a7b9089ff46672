"""dpcorr.torch's refusals that explain: weight_norm, spectral_norm, prune, parametrize,
Embedding(max_norm) (refused before any in-place change of its weight), sparse Embedding, an
empty dataset -- each at make_private, naming the module and the fix -- and custom
autograd.Function: exact on the per-layer path between layers, refused naming the function on
the isolated path (not functorch's message)."""

import copy

import pytest
import torch
import torch.nn.functional as F
from torch.nn.utils import prune

import dpcorr.torch as dt
from torch_functions import Cube

torch.set_num_threads(1)
N, B = 12, 6


def make(model, x=None, y=None, **kw):
    x = torch.randn(N, 4) if x is None else x
    y = torch.randint(0, 3, (N,)) if y is None else y
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
    args = dict(noise_multiplier=1.0, batch_size=B, epochs=1, mech="nu", seed=1)
    args.update(kw)
    return dt.make_private(model, opt, torch.utils.data.TensorDataset(x, y), **args)


def body(inner):
    return torch.nn.Sequential(torch.nn.Linear(4, 5), torch.nn.Tanh(), inner)


def weight_normed():
    return body(torch.nn.utils.weight_norm(torch.nn.Linear(5, 3)))


def spectral_normed():
    return body(torch.nn.utils.spectral_norm(torch.nn.Linear(5, 3)))


def pruned():
    lin = torch.nn.Linear(5, 3)
    prune.l1_unstructured(lin, "weight", 0.5)
    return body(lin)


def parametrized():
    return body(torch.nn.utils.parametrizations.spectral_norm(torch.nn.Linear(5, 3)))


REFUSED = {
    "weight_norm": (weight_normed, r"^model: .*2 \(Linear\) uses weight_norm .*"
                                   r"remove_weight_norm"),
    "spectral_norm": (spectral_normed, r"2 \(Linear\) uses spectral_norm .*"
                                       r"remove_spectral_norm"),
    "prune": (pruned, r"2 \(Linear\) is pruned .*prune\.remove\(module, 'weight'\)"),
    "parametrize": (parametrized, r"2 \(ParametrizedLinear\) is parametrized "
                                  r"\(torch\.nn\.utils\.parametrize: weight\).*"
                                  r"remove_parametrizations"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_weight_hooks_refused_naming_the_module(case):
    build, pattern = REFUSED[case]
    torch.manual_seed(0)
    model = build()
    assert dt.validate(model)  # listed by validate too
    with pytest.raises(ValueError, match=pattern):
        make(model)


class Tokens(torch.nn.Module):
    def __init__(self, **kw):
        super().__init__()
        self.emb = torch.nn.Embedding(10, 4, **kw)
        self.out = torch.nn.Linear(4, 3)

    def forward(self, t):
        return self.out(self.emb(t).mean(1))


def test_embedding_max_norm_refused_before_any_change():
    torch.manual_seed(0)
    model = Tokens(max_norm=0.5)
    with torch.no_grad():
        model.emb.weight.mul_(10)  # every row is over max_norm: a forward would rescale them
    before = model.emb.weight.detach().clone()
    x = torch.randint(0, 10, (N, 3))
    with pytest.raises(ValueError, match=r"emb \(Embedding\) renormalizes its weight in place "
                                         r"at every forward \(max_norm=0\.5\).*max_norm=None"):
        make(model, x)
    assert torch.equal(model.emb.weight, before)


def test_sparse_embedding_refused():
    model = Tokens(sparse=True)
    with pytest.raises(ValueError, match=r"emb \(Embedding\) produces sparse gradients "
                                         r"\(sparse=True\).*sparse=False"):
        make(model, torch.randint(0, 10, (N, 3)))
    bag = torch.nn.Sequential(torch.nn.EmbeddingBag(10, 4, sparse=True), torch.nn.Linear(4, 3))
    with pytest.raises(ValueError, match=r"0 \(EmbeddingBag\) produces sparse gradients"):
        make(bag, torch.randint(0, 10, (N, 3)))


def test_empty_dataset_refused():
    model = torch.nn.Linear(4, 3)
    with pytest.raises(ValueError, match=r"^dataset: is empty \(0 examples\)"):
        make(model, torch.randn(0, 4), torch.randint(0, 3, (0,)))
    loader = torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(torch.randn(0, 4), torch.zeros(0, dtype=torch.long)),
        batch_size=4)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with pytest.raises(ValueError, match=r"^dataset: is empty"):
        dt.make_private(model, opt, loader, noise_multiplier=1.0, seed=1)


def test_plain_modules_still_accepted():
    """The refusals are specific: the same models without the hook, max_norm or sparse pass."""
    assert dt.validate(body(torch.nn.Linear(5, 3))) == []
    assert dt.validate(Tokens()) == []
    model = body(torch.nn.Linear(5, 3))
    model, opt, loader, eng = make(model)
    xb, yb = next(iter(loader))
    dt.backward(F.cross_entropy(model(xb), yb, reduction="none"))
    opt.step()
    eng.close()


class Scaled(torch.autograd.Function):
    """x * w for a parameter w: a parametric custom Function (no per-example rule)."""

    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x * w

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        return g * w, (g * x).sum(0)


class Between(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = torch.nn.Linear(4, 5), torch.nn.Linear(5, 3)

    def forward(self, x):
        return self.b(Cube.apply(torch.tanh(self.a(x))))


class Owner(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(4, 5)
        self.w = torch.nn.Parameter(torch.ones(5))
        self.b = torch.nn.Linear(5, 3)

    def forward(self, x):
        return self.b(Scaled.apply(self.a(x), self.w))


def test_autograd_function_between_layers_exact_on_the_per_layer_path():
    torch.manual_seed(0)
    with torch.random.fork_rng():
        torch.set_default_dtype(torch.float64)
        try:
            model, x = Between(), torch.randn(N, 4)
        finally:
            torch.set_default_dtype(torch.float32)
    y = torch.randint(0, 3, (N,))
    ref = copy.deepcopy(model)
    model, opt, loader, eng = make(model, x, y)
    xb, yb = next(iter(loader))
    dt.backward(F.cross_entropy(model(xb), yb, reduction="none"))
    got = eng._per_example(B, 1.0)
    assert eng.path == "layers"
    for i in range(B):
        ref.zero_grad()
        F.cross_entropy(ref(xb[i:i + 1]), yb[i:i + 1]).backward()
        for g, p in zip(got, ref.parameters()):
            torch.testing.assert_close(g[i], p.grad, rtol=1e-10, atol=1e-12)
    opt.step()
    eng.close()


def test_autograd_function_without_rule_refused_naming_it():
    torch.manual_seed(0)
    model, opt, loader, eng = make(Owner())
    xb, yb = next(iter(loader))
    dt.backward(F.cross_entropy(model(xb), yb, reduction="none"))
    with pytest.raises(ValueError, match=r"^model: .*Scaled \(torch\.autograd\.Function\) has no "
                                         r"per-example rule.*without autograd\.Function|"
                                         r"^model: .*Scaled \(torch\.autograd\.Function\) has no "
                                         r"per-example rule"):
        opt.step()
    eng.close()
