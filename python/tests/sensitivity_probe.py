"""The one-example sensitivity probe of dpcorr.torch (used by test_torch_sensitivity.py).

A case is run by three engines in lockstep, made with the same seed (so the same sampler
batches and the same noise) from the same initial model (built under the same seed):

    A        the dataset D, example j moved to the end of the batch it is in
    remove   the neighbour D \\ {j}: the batches of A without j (add/remove adjacency)
    replace  the neighbour D with example j replaced by another draw (replace-one adjacency),
             j at the end of its batch as in A

Before each step the global torch generator is seeded the same in the three engines, so the
random draws of the forward pass (dropout masks, stochastic depth) are the same: the examples
that A and a neighbour share keep their draws (for "remove" only where a draw of shape
(B - 1, ...) is the prefix of the draw of shape (B, ...): dropout and uniform draws of a
batch-first tensor; a case whose draws are not coupled that way -- normal draws, a
sequence-first layout under dropout -- is probed by "replace" only). After each step the
neighbours' parameters are set to A's: each step is measured given the same released past
(adaptive composition), so step t's difference is the sensitivity of step t alone, and a
difference at a step without j is state carried across steps.

The step's clipped sum (before noise, before the division by the batch size) is the engine's
``last_clipped_sum`` (the vector ``_privatize`` adds the noise to; kept when the probe sets
``keep_clipped_sum``).
"""

import numpy as np
import torch

import dpcorr.torch as dt

N, B = 12, 4  # 3 steps of 4 examples (epochs=1)
CLIP = 1e-3  # below every per-example gradient norm of the cases: every row is clipped
TOL = 1e-9  # relative float64 tolerance on the bound


def step(engine, model, optimizer, batch, loss_fn):
    """One private step: the only place the training loop's API is spelled (the per-example
    loss API of issue 34 item 1: a vector of B losses to engine.backward)."""
    optimizer.zero_grad()
    engine.backward(loss_fn(model, *batch))
    optimizer.step()


def clipped_sum(engine):
    """The step's clipped sum before noise and before the division by the batch size (float64,
    the engine's parameters in order)."""
    s = engine.last_clipped_sum
    assert s is not None, "the engine recorded no clipped sum for the step"
    return s.detach().to("cpu", torch.float64).clone()


def make(model, dataset, seed, make_kw=None, lr=0.05):
    """make_private with the probe's run: 3 steps of B examples, clip CLIP (or make_kw's)."""
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=lr)
    kw = dict(noise_multiplier=1.0, batch_size=B, epochs=1, mech="nu", sampler="shuffle",
              clip=CLIP, seed=seed)
    kw.update(make_kw or {})
    model, opt, loader, engine = dt.make_private(model, opt, dataset, **kw)
    engine.keep_clipped_sum = True  # the probe's reading (not private: off by default)
    return model, opt, loader, engine


def build(case, seed):
    """The case's model in float64, initialised from ``seed`` (the same model at every call: a
    deepcopy would fail on the models refused for their hooks, e.g. weight_norm)."""
    torch.manual_seed(seed)
    return case.build().double()


def coupled(case, seed=0):
    """Whether the case's forward draws couple under removal: with the same seed, the outputs
    of a batch without its last example are the first outputs of the whole batch (to
    rounding). Only then is "remove" a measurement of the engine, not of other draws."""
    model = build(case, seed).train()
    x = case.data(torch.Generator().manual_seed(seed), B)[0]
    with torch.no_grad():
        torch.manual_seed(7)
        whole = model(x)
        torch.manual_seed(7)
        part = model(x[:-1])
    return bool(torch.allclose(whole[:-1], part, rtol=1e-12, atol=1e-12))


def deterministic(case, seed=0):
    """Whether the case's forward draws nothing at random (the same outputs under two seeds):
    then example j's own clipped gradient can be recomputed outside the engine."""
    model = build(case, seed).train()
    x = case.data(torch.Generator().manual_seed(seed), B)[0]
    with torch.no_grad():
        torch.manual_seed(7)
        one = model(x)
        torch.manual_seed(8)
        two = model(x)
    return bool(torch.equal(one, two))


def own_row(case, seed, model, engine, example, clip):
    """Example j's clipped gradient by plain autograd on j alone, at ``model``'s parameters, in
    the engine's coordinates: what removing j must take out of a correct engine's sum."""
    ref = build(case, seed).train()
    ref.load_state_dict(model.state_dict())
    names = {id(p): n for n, p in model.named_parameters()}
    mine = dict(ref.named_parameters())
    params = [mine[names[id(p)]] for p in engine.params]
    loss = case.loss(ref, *example)
    grads = torch.autograd.grad(loss.sum(), params, allow_unused=True)
    g = torch.cat([(torch.zeros_like(p) if d is None else d).reshape(-1).double()
                   for p, d in zip(params, grads)])
    return g * min(1.0, clip / float(torch.linalg.vector_norm(g)))


def _reorder(engine, j, drop):
    """The engine's batches with example j moved to the end (drop=False) or left out."""
    batch = engine.plan.batch

    def patched(t):
        idx = batch(t)
        rest = idx[idx != j]
        return rest if drop or rest.size == idx.size else np.append(rest, j)

    engine.plan.batch = patched


def probe(case, seed, kinds=("remove", "replace"), clip=CLIP):
    """Runs the case on data seed ``seed``; returns one dict per (neighbour, step): kind, step,
    ratio = ||S_A - S_neighbour|| / clip, present (j is in that step's batch), path (the
    engine's path for the step: "layers" or "isolated"), own: for "remove" at the step that
    holds j, on a case without random draws, ||(S_A - S_remove) - clip(g_j)|| / ||clip(g_j)||
    with g_j by autograd on j alone (else None)."""
    gen = torch.Generator().manual_seed(seed)
    data = case.data(gen, N)
    other = case.data(torch.Generator().manual_seed(10_000 + seed), N)
    steps = N // B
    kw = dict(case.make_kw or {}, clip=clip)
    # the noise is z x clip: unclipped (clip 1e6) a step of 1e-12 keeps the parameters finite
    lr = 0.05 if clip < 1 else 1e-12
    runs = {"A": make(build(case, seed), torch.utils.data.TensorDataset(*data), seed, kw, lr)}
    plan = runs["A"][3].plan
    at = next(t for t in [seed % steps, *range(steps)] if plan.batch(t).size)
    idx = plan.batch(at)  # j: an example of step ``at``'s batch
    j = int(idx[seed % idx.size])
    for kind in kinds:
        if kind == "replace":
            swapped = tuple(t.clone() for t in data)
            for t, o in zip(swapped, other):
                t[j] = o[j]
            ds = torch.utils.data.TensorDataset(*swapped)
        else:
            ds = torch.utils.data.TensorDataset(*data)
        runs[kind] = make(build(case, seed), ds, seed, kw, lr)
    for name, (_, _, _, eng) in runs.items():
        _reorder(eng, j, drop=name == "remove")
    iters = {name: iter(r[2]) for name, r in runs.items()}
    exact = "remove" in kinds and deterministic(case, seed)
    out = []
    for t in range(steps):
        present = j in set(int(i) for i in runs["A"][3].plan.batch(t))
        want = own_row(case, seed, runs["A"][0], runs["A"][3],
                       tuple(d[j:j + 1] for d in data), clip) if exact and present else None
        sums = {}
        for name, (model, opt, _, eng) in runs.items():
            torch.manual_seed(1000 * seed + t)  # the same draws in every engine
            while True:  # the physical batches of the step (one without virtual steps)
                step(eng, model, opt, next(iters[name]), case.loss)
                if eng.step_done:
                    break
            sums[name] = clipped_sum(eng)
        for kind in kinds:
            diff = sums["A"] - sums[kind]
            own = None
            if kind == "remove" and want is not None:
                own = float(torch.linalg.vector_norm(diff - want) /
                            torch.linalg.vector_norm(want))
            out.append(dict(kind=kind, step=t, ratio=float(torch.linalg.vector_norm(diff)) / clip,
                            present=present, own=own, path=getattr(runs["A"][3], "path", None)))
        # the released past is the same for every neighbour: A's parameters
        with torch.no_grad():
            for name in kinds:
                for p, q in zip(runs[name][0].parameters(), runs["A"][0].parameters()):
                    p.copy_(q)
    for r in runs.values():
        r[3].close()
    return out
