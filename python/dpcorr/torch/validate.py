"""Which modules make per-example gradients undefined, and their replacements.

A module *mixes* the examples of a batch when one example's output depends on another example:
BatchNorm in training mode (batch statistics), and every module that keeps running statistics
of the batches it sees (the running mean reaches the next steps' outputs). Then the clipped sum
has no bounded sensitivity and no epsilon holds. This is decided per module type, whether or not
the module has trainable parameters (BatchNorm2d(affine=False) or a frozen BatchNorm mixes just
the same); code that mixes examples in other ways is caught at every step by the engine's
proof (``_proof.py``) and the isolated path's comparison of each example's outputs alone with
the batch's.

Refused as well, before any forward pass, naming the module and the fix: weight_norm,
spectral_norm, torch.nn.utils.prune and parametrize (weights made by a hook or a
parametrization), Embedding/EmbeddingBag with max_norm (renormalizes its weight in place at
every forward) or sparse=True (sparse gradients).
"""

import math

import torch
import torch.nn.utils.parametrize
import torch.nn.utils.prune
from torch.nn.utils.spectral_norm import SpectralNorm
from torch.nn.utils.weight_norm import WeightNorm

_BN = torch.nn.modules.batchnorm._BatchNorm  # BatchNorm1d/2d/3d, SyncBatchNorm, LazyBatchNorm
_IN = torch.nn.modules.instancenorm._InstanceNorm


def _problem(name, module):
    where = name or "the model"
    kind = type(module).__name__
    if isinstance(module, _BN):
        return (f"{where} ({kind}) mixes the examples of a batch (batch statistics): replace it "
                f"with GroupNorm({_groups(module.num_features)}, {module.num_features}) "
                f"(dpcorr.torch.fix(model) does)")
    if isinstance(module, _IN) and module.track_running_stats:
        return (f"{where} ({kind}) keeps running statistics over batches: use "
                f"track_running_stats=False (dpcorr.torch.fix(model) does)")
    return _unsupported(where, kind, module)


def _unsupported(where, kind, module):
    """Modules whose weights are not plain parameters of the forward, or whose forward changes
    its weights in place, or whose gradients are sparse: refused before any forward pass runs
    (an Embedding with max_norm renormalizes its weight in place at every forward)."""
    for hook in module._forward_pre_hooks.values():
        if isinstance(hook, WeightNorm):
            return (f"{where} ({kind}) uses weight_norm ({hook.name} recomputed from "
                    f"{hook.name}_g and {hook.name}_v by a forward pre-hook, which the "
                    f"per-example copies of the model cannot carry): remove it with "
                    f"torch.nn.utils.remove_weight_norm(module) before make_private, or compute "
                    f"g * v / ||v|| in your module's forward")
        if isinstance(hook, SpectralNorm):
            return (f"{where} ({kind}) uses spectral_norm (a forward pre-hook whose power "
                    f"iteration updates buffers at every forward): remove it with "
                    f"torch.nn.utils.remove_spectral_norm(module) before make_private, or "
                    f"normalize the weight in your module's forward")
        if isinstance(hook, torch.nn.utils.prune.BasePruningMethod):
            return (f"{where} ({kind}) is pruned (torch.nn.utils.prune: {hook._tensor_name} = "
                    f"{hook._tensor_name}_orig * {hook._tensor_name}_mask by a forward "
                    f"pre-hook): make it permanent with torch.nn.utils.prune.remove(module, "
                    f"'{hook._tensor_name}') before make_private, or multiply by a fixed mask "
                    f"buffer in your module's forward")
    if torch.nn.utils.parametrize.is_parametrized(module):
        names = ", ".join(sorted(module.parametrizations.keys()))
        return (f"{where} ({kind}) is parametrized (torch.nn.utils.parametrize: {names}): "
                f"remove it with torch.nn.utils.parametrize.remove_parametrizations(module, "
                f"name) before make_private, or compute the parametrization in your module's "
                f"forward")
    if isinstance(module, (torch.nn.Embedding, torch.nn.EmbeddingBag)):
        if module.max_norm is not None:
            return (f"{where} ({kind}) renormalizes its weight in place at every forward "
                    f"(max_norm={module.max_norm}), a change outside the private step: use "
                    f"max_norm=None (to bound the rows, renormalize them after "
                    f"optimizer.step(), under torch.no_grad())")
        if module.sparse:
            return (f"{where} ({kind}) produces sparse gradients (sparse=True), which are "
                    f"neither clipped per example nor noised densely: use sparse=False")
    return None


def validate(model, strict=False):
    """The list of problems of ``model`` for per-example gradients, one string per module that
    mixes examples, named by its dotted path (``model.named_modules()``) with its replacement.
    ``strict=True`` raises ValueError listing them instead (when there are any)."""
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"model: expected a torch.nn.Module, got {type(model).__name__}")
    problems = [p for p in (_problem(n, m) for n, m in model.named_modules()) if p]
    if strict and problems:
        raise ValueError("model: per-example gradients are not defined: " + "; ".join(problems))
    return problems


def _groups(channels):
    # as many groups as possible up to 32 that divide the channels (Opacus uses 32 groups)
    return math.gcd(32, channels)


def _replacement(module):
    if isinstance(module, _BN):
        gn = torch.nn.GroupNorm(_groups(module.num_features), module.num_features, module.eps,
                                affine=module.affine)
        if module.affine:
            with torch.no_grad():
                gn.weight.copy_(module.weight)
                gn.bias.copy_(module.bias)
            gn.weight.requires_grad_(module.weight.requires_grad)
            gn.bias.requires_grad_(module.bias.requires_grad)
        return gn.to(device=module.weight.device if module.affine else None)
    if isinstance(module, _IN) and module.track_running_stats:
        new = type(module)(module.num_features, module.eps, module.momentum,
                           affine=module.affine, track_running_stats=False)
        if module.affine:
            new.load_state_dict({"weight": module.weight, "bias": module.bias}, strict=False)
        return new
    return None


def fix(model):
    """Replaces every module that :func:`validate` refuses (BatchNorm -> GroupNorm with the same
    channels and affine parameters; InstanceNorm -> without running statistics), in place;
    returns the model (a new module when the model itself is one of them)."""
    new = _replacement(model)
    if new is not None:
        return new
    for name, child in list(model.named_children()):
        fixed = fix(child)
        if fixed is not child:
            setattr(model, name, fixed)
    return model


__all__ = ["validate", "fix"]
