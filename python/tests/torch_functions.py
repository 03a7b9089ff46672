"""Custom autograd Functions shared by the torch tests (test_torch_sensitivity.py,
test_torch_refusals.py): one definition, so that the model accepted in one suite and the one
probed in the other are the same."""

import torch


class Cube(torch.autograd.Function):
    """x ** 3 with its own backward (no functorch rule in torch 1.13)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 3 * x * x * g
