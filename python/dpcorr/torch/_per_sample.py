"""Per-example gradients of a PyTorch model with functorch, layer by layer.

Every module that owns trainable parameters (Linear, Conv1d/2d/3d, GroupNorm, LayerNorm,
Embedding, ...: a module whose parameters are its own, not its children's) gets a forward hook
that keeps its input and registers a tensor hook on its output for the gradient of the loss with
respect to that output. After ``loss.backward()`` the gradient of example i with respect to the
module's parameters is

    grad_theta < module(x_i; theta), dL/d out_i >

computed for all i at once by ``functorch.vmap(functorch.grad(...))`` over a hook-free
functional copy of the module (``functorch.make_functional_with_buffers``). This holds whenever
the module treats the examples of a batch independently: true for the layers above, false for
BatchNorm (refused) and for anything that mixes examples. Activations and pooling have no
parameters and need nothing. A module used several times in one forward pass gets the sum over
its uses. The tensor hooks see the gradient of the module's own output, so in-place activations
after a layer are fine.
"""

import math

import torch
import torch.nn.functional as F
from functorch import grad, vmap

from ._whole import _hook_free_copy, one_batch_size

_REFUSED = (torch.nn.modules.batchnorm._BatchNorm,)
# The layers whose per-example gradient from (input, output gradient) is proven here: one tensor
# in, one tensor out, every parameter their own. Any other module with parameters of its own
# makes the engine use the isolated path (_whole.py).
FAST = (torch.nn.Linear, torch.nn.Conv1d, torch.nn.Conv2d, torch.nn.Conv3d, torch.nn.Embedding,
        torch.nn.LayerNorm, torch.nn.GroupNorm, torch.nn.MultiheadAttention)
# Units that take several tensors and own their submodules' parameters (out_proj): the examples
# along dimension 0 (batch_first) or 1 of every input and of the attention output; called
# without masks (a mask, or the attention weights reaching the loss, sends the run to the
# isolated path). Their arguments are seen through a wrapper of the instance's forward.
_UNITS = (torch.nn.MultiheadAttention,)


class PerSampleGradients:
    """Installs the hooks on ``model`` and computes per-example gradients on demand.

    ``params``: the trainable parameters in ``model.parameters()`` order (the coordinate order
    of the noise). ``compute(batch_size, scale)`` returns one tensor per parameter of shape
    (batch_size, *param.shape); ``scale`` multiplies the captured output gradients (the batch
    size for a mean-reduced loss, so that the results are the gradients of each example's own
    loss).
    """

    def __init__(self, model):
        self.params = [p for p in model.parameters() if p.requires_grad]
        if not self.params:
            raise ValueError("model: has no trainable parameters")
        owner = {}
        self.layers = []
        inside = set()  # the submodules of a unit
        for name, module in model.named_modules():
            if id(module) in inside:
                continue
            if type(module) in _UNITS:
                inside.update(id(m) for m in module.modules() if m is not module)
                own = [p for p in module.parameters() if p.requires_grad]
            else:
                own = [p for p in module.parameters(recurse=False) if p.requires_grad]
            if not own:
                continue
            if isinstance(module, _REFUSED):
                raise ValueError(f"model: {name or 'the model'} ({type(module).__name__}) mixes "
                                 f"the examples of a batch, so per-example gradients are not "
                                 f"defined; use GroupNorm or LayerNorm")
            if type(module) not in FAST:
                raise ValueError(f"model: {name or 'the model'} ({type(module).__name__}) is not "
                                 f"a layer of the per-layer path")
            if type(module) not in _UNITS and \
                    any(p.requires_grad for c in module.children() for p in c.parameters()):
                raise ValueError(f"model: {name or 'the model'} ({type(module).__name__}) has "
                                 f"parameters of its own and submodules with parameters; put its "
                                 f"own parameters in a submodule")
            fmodel = _hook_free_copy(module)
            layer = _Layer(name, module, fmodel)
            self.layers.append(layer)
            for p in layer.params:
                if id(p) in owner:
                    raise ValueError(f"model: parameter shared by {owner[id(p)]} and {name}: "
                                     f"not supported")
                owner[id(p)] = name
        missing = [p for p in self.params if id(p) not in owner]
        if missing:
            raise ValueError("model: some trainable parameters belong to no module")
        self.unusable = None  # why a forward pass showed this path does not apply
        # (tensor, callback) of every tensor hook of the forward pass in progress: the
        # engine's pruned backward (engine._backward_to_captures) hands each its gradient
        self.watched = []
        # the step's proof (engine: _proof.Tracker.tag_of): each layer's input must hold the
        # examples along the layer's batch dimension, nothing mixed in; else this path does
        # not apply (a sequence-first Linear with L == B reads time steps as examples)
        self.tag_of = None
        self._handles = [layer.module.register_forward_hook(self._forward_hook(layer))
                         for layer in self.layers]
        for layer in self.layers:
            if layer.unit:
                _wrap_forward(layer)

    def remove(self):
        """Removes the hooks (the model is a plain model again)."""
        for h in self._handles:
            h.remove()
        self._handles = []
        for layer in self.layers:
            if layer.unit and "forward" in layer.module.__dict__:
                del layer.module.__dict__["forward"]
        self.clear()

    def clear(self):
        """Forgets the captured activations and output gradients."""
        for layer in self.layers:
            layer.inputs.clear()
            layer.grads.clear()
        self.watched = []

    def _watch(self, t, callback):
        t.register_hook(callback)
        self.watched.append((t, callback))

    def _forward_hook(self, layer):
        if layer.unit:
            return self._unit_hook(layer)

        def hook(module, inputs, output):
            if not torch.is_grad_enabled() or not isinstance(output, torch.Tensor) or \
                    not output.requires_grad:
                return
            if len(inputs) != 1 or not isinstance(inputs[0], torch.Tensor):
                self.unusable = (f"{layer.name} ({type(module).__name__}) took "
                                 f"{len(inputs)} arguments")
                return
            # an input that is not the batch's (a constant, e.g. a table of positions, whose
            # output is broadcast over the batch) has no per-example rows either
            tag = self.tag_of(inputs[0]) if self.tag_of is not None else 0
            if tag != 0:
                self.unusable = (f"{layer.name} ({type(module).__name__}) holds the examples "
                                 f"along dimension {tag} of its input, not 0" if
                                 isinstance(tag, int) else
                                 f"{layer.name} ({type(module).__name__}): its input is not "
                                 f"the batch's" if tag is None else f"{layer.name}: {tag}")
                return
            layer.inputs.append(inputs[0].detach())
            use = len(layer.inputs) - 1
            self._watch(output, lambda g: layer.grads.__setitem__(use, g.detach()))
        return hook

    def _unit_hook(self, layer):
        def hook(module, inputs, output):
            call, layer.call = layer.call, None
            if not torch.is_grad_enabled():
                return
            out = output[0] if isinstance(output, tuple) else output
            if not isinstance(out, torch.Tensor) or not out.requires_grad:
                return
            if call is None or len(call[0]) != len(inputs) or \
                    any(a is not b for a, b in zip(call[0], inputs)):
                why = "was called in a way the wrapper did not see"
            else:
                why = _unit_why(module, *call)
            fast, layer.fast = layer.fast, None
            if why is not None:
                self.unusable = f"{layer.name} ({type(module).__name__}) {why}"
                return
            args = call[0]
            if self.tag_of is not None:
                tags = [self.tag_of(a) for a in args[:3]]
                if any(t != layer.bdim for t in tags):
                    self.unusable = (f"{layer.name} ({type(module).__name__}) does not hold "
                                     f"the examples along its batch dimension {layer.bdim}")
                    return
            q, k, v = (a.detach() for a in args[:3])
            held = None
            if fast is not None and fast[0] is out:  # the decomposed forward ran
                held = [None, None, None, fast[2].detach()]
                for j, t in enumerate(fast[1]):
                    self._watch(t, lambda g, j=j, h=held: h.__setitem__(j, g.detach()))
            layer.inputs.append((q, k, v, args[1] is args[0], args[2] is args[0], held))
            use = len(layer.inputs) - 1
            self._watch(out, lambda g: layer.grads.__setitem__(use, g.detach()))
            if isinstance(output, tuple) and len(output) > 1 and \
                    isinstance(output[1], torch.Tensor) and output[1].requires_grad:
                def weights_used(g):
                    self.unusable = (f"{layer.name} ({type(module).__name__}): its attention "
                                     f"weights reached the loss")
                self._watch(output[1], weights_used)
        return hook

    def batch_size(self):
        """The batch size of the captured forward pass (None when nothing was captured)."""
        return one_batch_size({layer.batch_of(x) for layer in self.layers for x in layer.inputs})

    def compute(self, batch_size, scale=1.0):
        """Per-example gradients, one (batch_size, *shape) tensor per trainable parameter; None
        (and ``unusable`` says why) when a layer's batch dimension is not the model's."""
        if not any(layer.grads for layer in self.layers):
            raise RuntimeError("dpcorr: no gradient reached the model; call loss.backward() "
                               "before optimizer.step()")
        out = {}
        for layer in self.layers:
            for use, x in enumerate(layer.inputs):
                go = layer.grads.get(use)
                if go is None:  # this output did not reach the loss: zero gradient
                    continue
                if layer.batch_of(x) != batch_size:  # e.g. a sequence-first Linear
                    self.unusable = (f"{layer.name} ran on {layer.batch_of(x)} rows along its "
                                     f"batch dimension, the model on {batch_size} examples")
                    return None
                if scale != 1.0:
                    go = go * scale
                for p, g in zip(layer.params, layer.per_example(x, go, scale)):
                    out[id(p)] = g if id(p) not in out else out[id(p)] + g
        res = []
        for p in self.params:
            g = out.get(id(p))
            if g is None:  # the layer did not run, or did not reach the loss
                g = torch.zeros((batch_size,) + tuple(p.shape), dtype=p.dtype, device=p.device)
            res.append(g)
        return res


def _wrap_forward(layer):
    """The unit's forward, through an instance attribute that records its arguments (the forward
    hooks of torch 1.13 do not see keyword arguments)."""
    module = layer.module
    forward = type(module).forward.__get__(module)

    def recording(*args, **kwargs):
        layer.call = (args, kwargs)
        if torch.is_grad_enabled() and _unit_why(module, args, kwargs) is None and \
                _decomposable(module):
            # the attention computed as its parts (the same operations, in the order of
            # F.multi_head_attention_forward), keeping the q, k, v projections and the context:
            # their gradients from the user's backward give the per-example gradients without
            # a second pass (Opacus's DPMultiheadAttention does the same)
            named = dict(zip(("key_padding_mask", "need_weights", "attn_mask",
                              "average_attn_weights"), args[3:]))
            named.update(kwargs)
            output, proj, ctx = _mha_forward(module, *args[:3],
                                             named.get("need_weights", True),
                                             named.get("average_attn_weights", True))
            layer.fast = (output[0], proj, ctx)
            return output
        return forward(*args, **kwargs)
    module.__dict__["forward"] = recording


def _unit_why(module, args, kwargs):
    """Why the unit's call is not covered by the per-layer path (None: it is)."""
    named = dict(zip(("key_padding_mask", "need_weights", "attn_mask",
                      "average_attn_weights"), args[3:]))
    named.update(kwargs)
    if module.training and module.dropout > 0:
        return "drops attention weights at random (dropout > 0)"
    if len(args) < 3 or not all(isinstance(a, torch.Tensor) and a.dim() == 3
                                for a in args[:3]):
        return "took other than three batched (3-d) tensors"
    if named.get("key_padding_mask") is not None or named.get("attn_mask") is not None or \
            set(named) - {"key_padding_mask", "need_weights", "attn_mask",
                          "average_attn_weights", "is_causal"}:
        return "took a mask"
    return None


def _decomposable(module):
    return module._qkv_same_embed_dim and module.bias_k is None and module.bias_v is None \
        and not module.add_zero_attn and not (module.training and module.dropout > 0)


def _mha_forward(module, q, k, v, need_weights, average):
    """MultiheadAttention's forward (no masks, no dropout) as its parts; returns (its output
    tuple, the q, k, v projections (N, L, E), the context (N, L, E)), batch-first inside."""
    if not module.batch_first:
        q, k, v = (t.transpose(0, 1) for t in (q, k, v))
    n, tgt, e = q.shape
    heads = module.num_heads
    hd = e // heads
    b_in = module.in_proj_bias
    b_in = (None, None, None) if b_in is None else b_in.chunk(3)
    proj = [F.linear(t, w, bb) for t, w, bb in zip((q, k, v), module.in_proj_weight.chunk(3),
                                                    b_in)]
    qh, kh, vh = (p.reshape(n, -1, heads, hd).transpose(1, 2) for p in proj)
    att = torch.softmax((qh / math.sqrt(hd)) @ kh.transpose(-1, -2), dim=-1)
    ctx = (att @ vh).transpose(1, 2).reshape(n, tgt, e)
    out = F.linear(ctx, module.out_proj.weight, module.out_proj.bias)
    if not module.batch_first:
        out = out.transpose(0, 1)
    weights = (att.mean(1) if average else att) if need_weights else None
    return (out, weights), proj, ctx


class _Layer:
    def __init__(self, name, module, fmodel):
        self.name = name
        self.module = module
        self.fmodel = fmodel
        # make_functional orders parameters as module.named_parameters() does
        self.params = list(module.parameters())
        self.inputs = []
        self.grads = {}
        self.unit = type(module) in _UNITS
        self.call = None
        self.fast = None
        self.kind = type(module) if type(module) in _CLOSED else None
        self.bdim = 0
        if self.unit:
            self.bdim = 0 if module.batch_first else 1
            self._vg = {}
            return

        def contribution(params, buffers, x, go):
            return (fmodel(params, buffers, x.unsqueeze(0)) * go.unsqueeze(0)).sum()

        self._vg = vmap(grad(contribution), in_dims=(None, None, 0, 0))

    def batch_of(self, x):
        return x[0].shape[self.bdim] if self.unit else x.shape[0]

    def per_example(self, x, go, scale=1.0):
        if self.unit:
            return self._unit_per_example(x, go, scale)
        if self.kind is not None:
            out = _closed_form(self.module, x, go)
            if out is not None:
                return out
        params = tuple(p.detach() for p in self.params)
        buffers = tuple(b.detach() for b in self.module.buffers())
        return list(self._vg(params, buffers, x, go))

    def _unit_per_example(self, x, go, scale):
        q, k, v, k_is_q, v_is_q, held = x
        if held is not None and all(g is not None for g in held[:3]):
            return _mha_from_parts(self.module, q, k, v, go, held, scale, self.bdim)
        out = _mha_closed_form(self.module, q, k, v, go, self.bdim)
        if out is not None:
            return out
        key = (k_is_q, v_is_q)
        if key not in self._vg:
            fmodel, bd = self.fmodel, self.bdim

            def contribution(params, buffers, q1, k1, v1, g1):
                q1 = q1.unsqueeze(bd)
                k1 = q1 if k_is_q else k1.unsqueeze(bd)
                v1 = q1 if v_is_q else v1.unsqueeze(bd)
                out = fmodel(params, buffers, q1, k1, v1, need_weights=False)[0]
                return (out * g1.unsqueeze(bd)).sum()
            self._vg[key] = vmap(grad(contribution), in_dims=(None, None, bd, bd, bd, bd))
        params = tuple(p.detach() for p in self.params)
        buffers = tuple(b.detach() for b in self.module.buffers())
        return list(self._vg[key](params, buffers, q, k, v, go))


_CLOSED = (torch.nn.Linear, torch.nn.Conv1d, torch.nn.Conv2d, torch.nn.LayerNorm,
           torch.nn.GroupNorm)


def _closed_form(module, x, go):
    """Per-example gradients of the layers whose gradient is a contraction of the input (or the
    normalized input) with the output gradient, as Opacus computes them: one batched matrix
    product instead of functorch's per-example backward. None: not covered (functorch)."""
    b = x.shape[0]
    kind = type(module)
    if kind is torch.nn.Linear:
        x2 = x.reshape(b, -1, x.shape[-1])
        g2 = go.reshape(b, -1, go.shape[-1])
        # (b, out, in); one row per example: an outer product (a broadcast multiply is 3x a
        # bmm with an inner dimension of 1, and the same products)
        out = [g2.transpose(1, 2) * x2 if x2.shape[1] == 1 else
               torch.bmm(g2.transpose(1, 2), x2)]
        if module.bias is not None:
            out.append(g2.sum(1))
        return out
    if kind in (torch.nn.Conv1d, torch.nn.Conv2d):
        if not plain_conv(module):
            return None
        xs, ks, st, pad, dil = as_conv2d(module, x)
        cols = F.unfold(xs, ks, dilation=dil, padding=pad, stride=st)  # (b, C k k, L)
        g2 = go.reshape(b, go.shape[1], -1)  # (b, out, L)
        out = [torch.bmm(g2, cols.transpose(1, 2)).view((b,) + tuple(module.weight.shape))]
        if module.bias is not None:
            out.append(g2.sum(2))
        return out
    if kind is torch.nn.GroupNorm:
        if not module.affine:
            return None
        xhat = F.group_norm(x, module.num_groups, None, None, module.eps)
        c = x.shape[1]
        return [(xhat * go).reshape(b, c, -1).sum(2), go.reshape(b, c, -1).sum(2)]
    if kind is torch.nn.LayerNorm:
        if not module.elementwise_affine:
            return None
        shape = tuple(module.normalized_shape)
        xhat = F.layer_norm(x, shape, None, None, module.eps)
        lead = tuple(range(1, x.dim() - len(shape)))
        w = (xhat * go).sum(lead) if lead else xhat * go
        bias = go.sum(lead) if lead else go
        return [w, bias]
    return None


def plain_conv(module):
    """Whether a Conv1d / Conv2d is one convolution of all input channels with zero padding of
    given sizes (the layout as_conv2d, unfold and the ghost rules read)."""
    return module.groups == 1 and module.padding_mode == "zeros" and \
        not isinstance(module.padding, str)


def as_conv2d(module, x):
    """A Conv1d / Conv2d and its batch input x as a Conv2d (a Conv1d as one of height 1):
    (input (b, C, H, W), kernel size, stride, padding, dilation), each a pair."""
    if type(module) is torch.nn.Conv1d:
        return (x.unsqueeze(2), (1,) + tuple(module.kernel_size), (1,) + tuple(module.stride),
                (0,) + tuple(module.padding), (1,) + tuple(module.dilation))
    return (x, tuple(module.kernel_size), tuple(module.stride), tuple(module.padding),
            tuple(module.dilation))


def _mha_closed_form(module, q, k, v, go, bd):
    """Per-example gradients of a MultiheadAttention without masks, dropout, bias_k/v or zero
    attention, whose q, k, v share the embedding size: one batched forward of the attention on
    the recorded inputs and one backward from the output gradient give the gradients of the q,
    k, v projections and the context; each parameter's per-example gradient is then a batched
    product with its input, as for Linear. None: not covered (functorch over the unit)."""
    if not module._qkv_same_embed_dim or module.bias_k is not None or \
            module.bias_v is not None or module.add_zero_attn or \
            (module.training and module.dropout > 0):
        return None
    if bd == 1:
        q, k, v, go = (t.transpose(0, 1) for t in (q, k, v, go))
    n, tgt, e = q.shape
    heads = module.num_heads
    hd = e // heads
    w_in, b_in = module.in_proj_weight.detach(), module.in_proj_bias
    b_in = (None, None, None) if b_in is None else b_in.detach().chunk(3)
    w_out = module.out_proj.weight.detach()
    with torch.enable_grad():
        proj = [F.linear(t, w, bb).detach().requires_grad_()
                for t, w, bb in zip((q, k, v), w_in.chunk(3), b_in)]
        qh, kh, vh = (p.reshape(n, -1, heads, hd).transpose(1, 2) for p in proj)
        att = torch.softmax((qh / math.sqrt(hd)) @ kh.transpose(-1, -2), dim=-1)
        ctx = (att @ vh).transpose(1, 2).reshape(n, tgt, e)
        grads = torch.autograd.grad(ctx, proj, go @ w_out)
    return _mha_grads(module, q, k, v, go, grads, ctx.detach())


def _mha_from_parts(module, q, k, v, go, held, scale, bd):
    """From the gradients of the projections and the context the decomposed forward kept."""
    if bd == 1:
        q, k, v, go = (t.transpose(0, 1) for t in (q, k, v, go))
    grads = held[:3] if scale == 1.0 else [g * scale for g in held[:3]]
    return _mha_grads(module, q, k, v, go, grads, held[3])


def _mha_grads(module, q, k, v, go, grads, ctx):
    """Per-example gradients (parameters() order) from batch-first inputs, output gradient,
    projection gradients and context."""
    out = [torch.cat([torch.bmm(g.transpose(1, 2), t) for g, t in zip(grads, (q, k, v))], 1)]
    if module.in_proj_bias is not None:
        out.append(torch.cat([g.sum(1) for g in grads], 1))
    out.append(torch.bmm(go.transpose(1, 2), ctx))
    if module.out_proj.bias is not None:
        out.append(go.sum(1))
    return out
