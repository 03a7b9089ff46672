"""Fast gradient clipping on the per-layer path: ghost norms and book-keeping.

The per-layer path (_per_sample.py) captures, for every layer use, its input A and the gradient
G of the loss with respect to its output. The per-example gradient of a Linear's weight is
G_i^T A_i (A_i: example i's T x d_in rows, G_i: its T x d_out rows), so

    ||G_i^T A_i||^2 = ||a_i||^2 ||g_i||^2                     (T = 1)
                    = sum((A_i A_i^T) o (G_i G_i^T))          (T > 1: the ghost norm)

cost O(d_in + d_out) or O(T^2 (d_in + d_out)) per example instead of the d_in x d_out
per-example matrix, and the clipped sum of the batch is one contraction

    sum_i f_i G_i^T A_i = (diag(f) G)^T A                     (book-keeping: no second backward)

with f_i = min(1, clip / ||g_i||) the float64 clip factors. A convolution is a Linear over the
unfolded patches (T = output positions); an Embedding's per-example gradient is a scatter of its
G rows into the rows of the looked-up indices (the rows of one example that hit the same index
add up first, then the norm). With a sequence (T > 1) the per-example matrices cost as many
multiply-adds as the contraction, so they are made (one batched product) unless they are large
against the activations already held (d_in d_out > 2 T (d_in + d_out)): the choice is memory's.
Layers without a rule here (LayerNorm, GroupNorm, MultiheadAttention, Conv3d, grouped
convolutions, ...) and layers used several times in one forward (the norm of a sum of uses is
not the sum of their norms) get their per-example gradients materialised by the per-layer
path's own rule, as without ghost clipping.

Precision (the engine's guarantees): every squared norm is that of what is summed, in float64,
or an upper bound of it. Materialised rows (the captured dtype, as the engine's per-layer path
makes them) are converted to float64 (exact; in cache-sized blocks of columns) and their norms
and f^T rows taken from those:
the norm is that of the rows summed, accumulated in float64 (engine._norms takes float32 rows'
norms in float32, 8e-6 relative on the MLP's first layer). T = 1:
||a_i||^2 ||g_i||^2 from float64(a), float64(g) (exact conversions; no cancellation), the sum a
float64 GEMM. Gram matrices are made in the captured dtype and their terms have both signs, so
that squared norm is raised by its rounding bound (see _sequence); the float64 contraction then
sums the exact products of the captured values. The squared norms are added in float64 and
raised by the engine's margin (2^-16 when any parameter is not float64, else 2^-40) before
clip / norm, so no example's clipped contribution exceeds clip. The sums differ from the
engine's fixed-order row sum by rounding only (a GEMM adds in another order): equal to 1e-10
relative in float64, not bit for bit; the engine therefore takes this path only where no
bit-identity between two orders of the same sum is promised: not under virtual steps (whose
physical batches add up exactly as the whole batch) and not across torch.distributed ranks
(whose rank-to-rank sum keeps the one-process order).
"""

import math

import numpy as np
import torch
import torch.nn.functional as F

from .. import _lib
from ._per_sample import as_conv2d, plain_conv

_F64 = torch.float64


def ghost_clip(layers, params, batch_size, scale, clip, always=False):
    """Per-example norms and the clipped sum of one (physical) batch from the per-layer path's
    captures, without per-example gradients where a layer has a ghost rule.

    ``layers``: a PerSampleGradients after ``loss.backward()``; ``params``: the trainable
    parameters (the engine's coordinate order); ``scale``: the factor of the captured output
    gradients (the batch size for a mean loss). Returns ``(norms, clipped_sum)``: norms (b,)
    float64, raised above their rounding error as engine._norms does, and clipped_sum (dim,)
    float64 = sum_i min(1, clip / norms_i) g_i in the coordinates of ``params``. Returns None
    when the captures do not fit the per-layer path (nothing reached the model, a layer ran on
    another batch size), and when most trainable parameters would get per-example rows anyway
    (by the shapes: Linear / Conv with many positions against their sizes, LayerNorm,
    MultiheadAttention, ...; ``always``: not this one): the caller then takes the materialised
    path.
    """
    b = batch_size
    trainable = {id(p) for p in params}
    dev = params[0].device
    sq = torch.zeros(b, dtype=_F64, device=dev)
    parts = []  # callables: factor (b,) float64 -> [(param, float64 sum of f_i g_i)]
    if not any(layer.grads for layer in layers.layers):
        return None
    ghosted = rows = 0  # trainable parameters without and with per-example rows
    for layer in layers.layers:
        uses = [(x, layer.grads[u]) for u, x in enumerate(layer.inputs) if u in layer.grads]
        if any(layer.batch_of(x) != b for x, _ in uses):
            return None
        n = sum(p.numel() for p in layer.params if id(p) in trainable)
        if len(uses) == 1 and _without_rows(layer.module, *uses[0], b):
            ghosted += n
        else:
            rows += n
    if ghosted < rows and not always:
        # mostly per-example rows anyway: the engine's fixed-order row sum over one matrix
        # is faster than this path's layer-by-layer float64 passes (the 2-layer transformer:
        # 0.90x); the materialised path is the same clipping to rounding
        return None
    for layer in layers.layers:
        uses = [(x, layer.grads[u]) for u, x in enumerate(layer.inputs) if u in layer.grads]
        if not uses:
            continue
        mine = [p for p in layer.params if id(p) in trainable]
        rule = _rule(layer.module) if len(uses) == 1 else None
        got = rule(layer.module, uses[0][0], uses[0][1], scale, mine) if rule else None
        if got is None:
            got = _materialised(layer, uses, scale, mine)
        s, part = got
        sq.add_(s.to(dev))
        parts.append(part)
    low = any(p.dtype != _F64 for p in params)
    norms = sq.sqrt_().mul_(1.0 + 2.0 ** (-16 if low else -40))
    # min(1, clip / ||g_i||) by the library's formula (dpc_model_clip_factors)
    n64 = norms.detach().to("cpu", dtype=_F64).contiguous()
    factor = torch.from_numpy(_lib.clip_factors(n64.numpy(), clip)).to(norms.device)
    offsets, off = {}, 0
    for p in params:
        offsets[id(p)] = off
        off += p.numel()
    total = torch.zeros(off, dtype=_F64, device=dev)
    for part in parts:
        for p, s in part(factor):
            o = offsets[id(p)]
            total[o:o + p.numel()].add_(s.reshape(-1).to(dev))
    return norms, total


def _block(rows):
    """Columns per block of a float32 -> float64 pass over rows (b, n): about 1 MiB of float64
    (in cache), so that the rows are never converted whole. (A whole float64 copy kept from
    the norms to the sum saves one conversion but costs more: a fresh 8 MiB allocation per
    step faults its pages in again, and the other large allocations of the step with it:
    3000 page faults a step on the CNN, 2-4 ms on this VM.)"""
    return max(256, (1 << 17) // max(rows.shape[0], 1))


def _sq64(rows):
    """(rows, their squared norms (b,) accumulated in float64): the norms of exactly the rows
    that _ft sums (float64(rows), an exact conversion), made block by block. (torch's float32
    vector_norm accumulates in float32: 8e-6 relative on the MLP's 100 480-value rows, half the
    engine's 2^-16 margin; its float64 vector_norm, or dtype=float64, runs at about 0.5 G
    values/s on this CPU: 4x slower than converting a block and a float64 dot per row.)"""
    if rows.dtype == _F64:
        return rows, _dots(rows)
    sq = torch.zeros(rows.shape[0], dtype=_F64, device=rows.device)
    w = _block(rows)
    scratch = _scratch(rows, w)
    for c in range(0, rows.shape[1], w):
        blk = rows[:, c:c + w]
        sq += _dots(scratch[:, :blk.shape[1]].copy_(blk))
    return rows, sq


def _scratch(rows, w):
    """One float64 block (b, w) that every block of a pass over rows is widened into (one
    allocation per pass, not one per block: fewer fresh pages to fault in)."""
    return torch.empty((rows.shape[0], min(w, rows.shape[1])), dtype=_F64, device=rows.device)


def _dots(rows):
    """Each float64 row's dot with itself, (b,) float64: numpy's einsum on the CPU (a
    vectorised float64 dot per row, as engine._norms), else a product and a sum."""
    if rows.device.type == "cpu" and not rows.requires_grad:
        a = rows.numpy()
        return torch.from_numpy(np.einsum("ij,ij->i", a, a))
    return (rows * rows).sum(1)


def _ft(f, rows):
    """f^T float64(rows): (n,) float64 from rows (b, n) of any float dtype, block by block
    (torch.mv on the transposed rows: 1-d @ 2-d takes a 4-5x slower kernel in torch 1.13)."""
    f = f.to(rows.device)
    if rows.dtype == _F64:
        return torch.mv(rows.t(), f)
    out = torch.empty(rows.shape[1], dtype=_F64, device=rows.device)
    w = _block(rows)
    scratch = _scratch(rows, w)
    for c in range(0, rows.shape[1], w):
        blk = rows[:, c:c + w]
        torch.mv(scratch[:, :blk.shape[1]].copy_(blk).t(), f, out=out[c:c + w])
    return out


def _scaled(t, scale):
    """t * scale in t's dtype (as the per-layer path scales the output gradients)."""
    return t * scale if scale != 1.0 else t


def _f64(t, scale=1.0):
    """float64(t) * scale, never writing into t (a captured tensor)."""
    out = t.to(_F64)
    if scale != 1.0:
        out = out * scale if out is t else out.mul_(scale)
    return out


def _without_rows(module, x, go, b):
    """Whether the layer's rule here makes no per-example matrix (the choices of _sequence and
    _conv, from the shapes alone)."""
    kind = _rule(module)
    if kind is _embedding:
        return True
    if kind is _linear:
        d_in, d_out = x.shape[-1], go.shape[-1]
        t = x.numel() // max(b * d_in, 1)
        return t == 1 or d_in * d_out > 2 * t * (d_in + d_out)
    if kind is _conv:
        n_out = go.shape[1]
        t = go[0].numel() // n_out if go.shape[0] else 0
        ckk = x.shape[1] * math.prod(module.kernel_size)
        return ckk * n_out > 2 * t * (ckk + n_out)
    return False


def _rule(module):
    kind = type(module)
    if kind is torch.nn.Linear:
        return _linear
    if kind in (torch.nn.Conv1d, torch.nn.Conv2d):
        return _conv if plain_conv(module) else None
    if kind is torch.nn.Embedding:
        if module.max_norm is None and not module.sparse and not module.scale_grad_by_freq:
            return _embedding
        return None
    return None


def _materialised(layer, uses, scale, mine):
    """The per-layer path's per-example gradients of this layer (summed over its uses), their
    squared norms and their clipped sum f^T rows, both of the float64 rows (see _sq64)."""
    total = None
    for x, go in uses:
        if scale != 1.0:
            go = go * scale
        got = layer.per_example(x, go, scale)
        total = got if total is None else [a + c for a, c in zip(total, got)]
    rows = [_sq64(g.reshape(g.shape[0], -1)) for p, g in zip(layer.params, total)
            if any(p is q for q in mine)]
    kept = [p for p in layer.params if any(p is q for q in mine)]
    sq = sum(r[1] for r in rows)

    def part(f):
        return [(p, _ft(f, g)) for p, (g, _) in zip(kept, rows)]
    return sq, part


def _sequence(a, g, w, bias):
    """A Linear over sequences: a (b, T, d_in), g (b, T, d_out) in the captured dtype (g
    already scaled); w / bias: whether the weight / bias is trainable. Returns (squared norms
    (b,) float64, part).

    T = 1: ||a_i||^2 ||g_i||^2 in float64 (no cancellation: the engine's margin covers its
    rounding), the sum one float64 GEMM. T > 1: the per-example matrices G_i^T A_i (one batched
    product in the captured dtype; norm and clipped sum f^T rows in float64, as the engine does
    with materialised rows), unless they are large against the activations already held
    (d_in d_out > 2 T (d_in + d_out), which implies T^2 < d_in d_out / 16): then the ghost norm
    from the two (b, T, T) Gram matrices and the float64 book-keeping contraction. The Gram form
    cancels (its terms have both signs), so its squared norm is raised by its rounding bound
    gamma S_i^2, S_i = sum_t ||a_it|| ||g_it||, gamma = 1.01 (d_in + d_out + T^2 + 2) u (u: the
    captured dtype's unit roundoff): an upper bound of the exact per-example norm, which the
    float64 contraction sums."""
    b, t, d_in = a.shape
    d_out = g.shape[2]
    sq = torch.zeros(b, dtype=_F64, device=a.device)
    gsum = None
    if bias:
        gsum = (g.sum(1) if t > 1 else g[:, 0]).to(_F64)
        sq += (gsum * gsum).sum(1)
    per = a64 = g64 = None
    if w:
        if t == 1:
            a64, g64 = a.to(_F64), g.to(_F64)
            sq += (a64 * a64).sum((1, 2)) * (g64 * g64).sum((1, 2))
        elif d_in * d_out > 2 * t * (d_in + d_out):  # the ghost norm: two Gram matrices
            aa = torch.bmm(a, a.transpose(1, 2))
            gg = torch.bmm(g, g.transpose(1, 2))
            u = torch.finfo(a.dtype).eps / 2
            gamma = 1.01 * (d_in + d_out + t * t + 2) * u
            s = (torch.linalg.vector_norm(a, dim=2).to(_F64) *
                 torch.linalg.vector_norm(g, dim=2).to(_F64)).sum(1)
            sq += (aa * gg).sum((1, 2)).to(_F64) + gamma * s * s
            a64, g64 = a.to(_F64), g.to(_F64)
        else:  # the per-example matrix (b, d_out, d_in)
            per, n2 = _sq64(torch.bmm(g.transpose(1, 2), a).reshape(b, -1))
            sq += n2

    def part(f):
        out = []
        if w:
            if per is not None:
                out.append(_ft(f, per))
            else:  # (diag(f) G)^T A over the batch's b T rows, in float64
                gf = (g64 * f[:, None, None]).reshape(b * t, d_out)
                out.append(gf.t() @ a64.reshape(b * t, d_in))
        if bias:
            out.append(_ft(f, gsum))
        return out
    return sq, part


def _pair(module, mine, sq_part):
    """Names the sums of a (weight, bias) layer by parameter object, trainable ones only."""
    sq, part = sq_part
    kept = [p for p in (module.weight, module.bias) if p is not None and
            any(p is q for q in mine)]
    return sq, lambda f: list(zip(kept, part(f)))


def _linear(module, x, go, scale, mine):
    b = x.shape[0]
    a = x.reshape(b, -1, x.shape[-1])
    g = _scaled(go.reshape(b, -1, go.shape[-1]), scale)
    w = any(module.weight is q for q in mine)
    bias = module.bias is not None and any(module.bias is q for q in mine)
    return _pair(module, mine, _sequence(a, g, w, bias))


def _conv(module, x, go, scale, mine):
    """Conv1d / Conv2d as a Linear over the unfolded patches (as _per_sample._closed_form)."""
    b = x.shape[0]
    xs, ks, st, pad, dil = as_conv2d(module, x)
    n_out, c_in = go.shape[1], xs.shape[1]
    g = _scaled(go.reshape(b, n_out, -1), scale)  # (b, out, L)
    t, ckk = g.shape[2], c_in * ks[0] * ks[1]
    w = any(module.weight is q for q in mine)
    bias = module.bias is not None and any(module.bias is q for q in mine)
    shape = module.weight.shape
    if not w or ckk * n_out <= 2 * t * (ckk + n_out):
        per = None
        if w:
            hw = (1, t) if type(module) is torch.nn.Conv1d else tuple(go.shape[2:])
            per = _conv_rows(xs, g.reshape((b, n_out) + hw), ks, st, pad, dil)
        return _pair(module, mine, _rows(per, g.sum(2) if bias else None, shape))
    cols = F.unfold(xs, ks, dilation=dil, padding=pad, stride=st)  # (b, C k k, L)
    sq, part = _sequence(cols.transpose(1, 2), g.transpose(1, 2), w, bias)

    def shaped(f):
        out = part(f)
        if w:
            out[0] = out[0].reshape(shape)
        return out
    return _pair(module, mine, (sq, shaped))


def _conv_rows(xs, g, ks, st, pad, dil):
    """The per-example weight gradients (b, out C kh kw) of a conv2d of xs (b, C, H, W) whose
    output gradients are g (b, out, h, w) (stride st, zero padding pad, dilation dil: pairs).

    Example i's gradient is G_i^T U_i (U_i: its unfolded patches), made without unfolding: as
    the weight gradient of one convolution whose groups are the examples (example i's channels
    in, its output channels out: 1.6-1.7x faster than unfold and a batched product on this
    CPU), and for one input channel as a forward convolution: entry (o, a, c) of example i is
    sum_{h,w} g_i[o, h, w] x_i[st h + dil a - pad, st w + dil c - pad], the correlation of
    its image with its output gradient as a kernel dilated by the stride (the batch's images
    as the channels of one image, a group each): 1.8x faster than the weight gradient on the
    CNN's first layer (28 x 28, 8 x 8, stride 2), 2x slower with 3 or more channels. The same
    products; the sums in another order (parity to 1e-10 in float64 in the tests)."""
    b, n_out = g.shape[:2]
    c_in = xs.shape[1]
    if c_in == 1:
        out = F.conv2d(xs.transpose(0, 1), g.reshape((b * n_out, 1) + tuple(g.shape[2:])),
                       stride=dil, padding=pad, dilation=st, groups=b)
        return out[0, :, :ks[0], :ks[1]].reshape(b, -1)
    return torch.nn.grad.conv2d_weight(
        xs.reshape((1, b * c_in) + tuple(xs.shape[2:])), (b * n_out, c_in) + tuple(ks),
        g.reshape((1, b * n_out) + tuple(g.shape[2:])), stride=st, padding=pad, dilation=dil,
        groups=b).reshape(b, -1)


def _rows(per, gsum, shape=None):
    """Squared norms and part of materialised per-example rows ``per`` (b, n) (None: the weight
    is frozen) and bias sums ``gsum`` (b, out) (None: no trainable bias): the squared norms and
    f^T rows of the float64 rows (see _sq64)."""
    b = (per if per is not None else gsum).shape[0]
    sq = torch.zeros(b, dtype=_F64, device=(per if per is not None else gsum).device)
    if per is not None:
        per, n2 = _sq64(per)
        sq += n2
    if gsum is not None:
        gsum, n2 = _sq64(gsum)
        sq += n2

    def part(f):
        out = []
        if per is not None:
            s = _ft(f, per)
            out.append(s.reshape(shape) if shape is not None else s)
        if gsum is not None:
            out.append(_ft(f, gsum))
        return out
    return sq, part


def _embedding(module, x, go, scale, mine):
    """Example i's gradient is row g_it added to row x_it of the table: the rows of one example
    that hit the same index are added first (a segment sum keyed by (example, index)), then the
    norm; the clipped sum scatters f_i times those segments into the table."""
    if not any(module.weight is q for q in mine):
        return None
    b = x.shape[0]
    n_rows, dim = module.weight.shape
    idx = x.reshape(b, -1)
    t = idx.shape[1]
    g = _f64(go.reshape(b * t, dim), scale)
    example = torch.arange(b, device=idx.device).repeat_interleave(t)
    flat = idx.reshape(-1)
    if module.padding_idx is not None:  # its row gets no gradient
        keep = flat != module.padding_idx
        flat, example, g = flat[keep], example[keep], g[keep]
    key = example * n_rows + flat
    uniq, inv = torch.unique(key, return_inverse=True)
    seg = torch.zeros(uniq.numel(), dim, dtype=_F64, device=g.device).index_add_(0, inv, g)
    who, row = uniq // n_rows, uniq % n_rows
    sq = torch.zeros(b, dtype=_F64, device=g.device).index_add_(0, who, (seg * seg).sum(1))

    def part(f):
        out = torch.zeros(n_rows, dim, dtype=_F64, device=g.device)
        return [(module.weight, out.index_add_(0, row, seg * f.to(g.device)[who][:, None]))]
    return sq, part
