"""Which modules make per-example gradients undefined, and their replacements.

A module *mixes* the examples of a batch when one example's output depends on another example:
BatchNorm in training mode (batch statistics), and every module that keeps running statistics
of the batches it sees (the running mean reaches the next steps' outputs). Then the clipped sum
has no bounded sensitivity and no epsilon holds. This is decided per module type, whether or not
the module has trainable parameters (BatchNorm2d(affine=False) or a frozen BatchNorm mixes just
the same); code that mixes examples in other ways is caught at run time by the independence
check of the engine (``_whole.check_independence``).
"""

import math

import torch

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
