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

import torch
from functorch import grad, vmap

from ._whole import _hook_free_copy, one_batch_size

_REFUSED = (torch.nn.modules.batchnorm._BatchNorm,)
# The layers whose per-example gradient from (input, output gradient) is proven here: one tensor
# in, one tensor out, every parameter their own. Any other module with parameters of its own
# makes the engine use the whole-model path (_whole.py).
FAST = (torch.nn.Linear, torch.nn.Conv1d, torch.nn.Conv2d, torch.nn.Conv3d, torch.nn.Embedding,
        torch.nn.LayerNorm, torch.nn.GroupNorm)


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
        for name, module in model.named_modules():
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
            if any(p.requires_grad for c in module.children() for p in c.parameters()):
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
        self._handles = [layer.module.register_forward_hook(self._forward_hook(layer))
                         for layer in self.layers]

    def remove(self):
        """Removes the hooks (the model is a plain model again)."""
        for h in self._handles:
            h.remove()
        self._handles = []
        self.clear()

    def clear(self):
        """Forgets the captured activations and output gradients."""
        for layer in self.layers:
            layer.inputs.clear()
            layer.grads.clear()

    def _forward_hook(self, layer):
        def hook(module, inputs, output):
            if not torch.is_grad_enabled() or not isinstance(output, torch.Tensor) or \
                    not output.requires_grad:
                return
            if len(inputs) != 1 or not isinstance(inputs[0], torch.Tensor):
                self.unusable = (f"{layer.name} ({type(module).__name__}) took "
                                 f"{len(inputs)} arguments")
                return
            layer.inputs.append(inputs[0].detach())
            use = len(layer.inputs) - 1
            output.register_hook(lambda g: layer.grads.__setitem__(use, g.detach()))
        return hook

    def batch_size(self):
        """The batch size of the captured forward pass (None when nothing was captured)."""
        return one_batch_size({x.shape[0] for layer in self.layers for x in layer.inputs})

    def compute(self, batch_size, scale=1.0):
        """Per-example gradients, one (batch_size, *shape) tensor per trainable parameter."""
        if not any(layer.grads for layer in self.layers):
            raise RuntimeError("dpcorr: no gradient reached the model; call loss.backward() "
                               "before optimizer.step()")
        out = {}
        for layer in self.layers:
            for use, x in enumerate(layer.inputs):
                go = layer.grads.get(use)
                if go is None:  # this output did not reach the loss: zero gradient
                    continue
                if scale != 1.0:
                    go = go * scale
                for p, g in zip(layer.params, layer.per_example(x, go)):
                    out[id(p)] = g if id(p) not in out else out[id(p)] + g
        res = []
        for p in self.params:
            g = out.get(id(p))
            if g is None:  # the layer did not run, or did not reach the loss
                g = torch.zeros((batch_size,) + tuple(p.shape), dtype=p.dtype, device=p.device)
            res.append(g)
        return res


class _Layer:
    def __init__(self, name, module, fmodel):
        self.name = name
        self.module = module
        self.fmodel = fmodel
        # make_functional orders parameters as module.named_parameters() does
        self.params = list(module.parameters())
        self.inputs = []
        self.grads = {}

        def contribution(params, buffers, x, go):
            return (fmodel(params, buffers, x.unsqueeze(0)) * go.unsqueeze(0)).sum()

        self._vg = vmap(grad(contribution), in_dims=(None, None, 0, 0))

    def per_example(self, x, go):
        params = tuple(p.detach() for p in self.params)
        buffers = tuple(b.detach() for b in self.module.buffers())
        return list(self._vg(params, buffers, x, go))
