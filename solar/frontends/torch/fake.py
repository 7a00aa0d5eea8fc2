"""Fake copies of a model and its inputs for tracing (apart from solar.frontends.torch.loader, which
uses them): real parameters, buffers and tensor attributes become fake tensors of the same shape,
dtype and strides, so that tracing allocates nothing the size of the model."""

from __future__ import annotations

from typing import Any

import torch
from torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode
from torch.utils._pytree import tree_flatten


def tensor_attributes(model: torch.nn.Module) -> list[tuple[torch.nn.Module, str, str, torch.Tensor]]:
    """Tensors held as plain attributes (neither parameters nor buffers): (module, attribute,
    qualified name, tensor)."""
    out = []
    for prefix, mod in model.named_modules():
        for attr, value in vars(mod).items():
            if isinstance(value, torch.Tensor) and not isinstance(value, torch.nn.Parameter):
                out.append((mod, attr, f"{prefix}.{attr}" if prefix else attr, value))
    return out


def fakeify(x: Any, mode: FakeTensorMode) -> Any:
    if isinstance(x, torch.Tensor) and not isinstance(x, FakeTensor):
        return mode.from_tensor(x)
    return x


def fakeify_module(model: torch.nn.Module, mode: FakeTensorMode) -> torch.nn.Module:
    """A copy of the model whose real parameters, buffers and tensor attributes are fake tensors
    of the same shape, dtype and strides (no data is copied, tied weights stay tied). Tensor
    attributes become non-persistent buffers of the copy, so that forward may update them as it
    may update buffers (torch.export refuses a mutated constant)."""
    import copy

    attributes = tensor_attributes(model)
    tensors = list(model.parameters(recurse=True)) + list(model.buffers(recurse=True))
    tensors += [t for _, _, _, t in attributes]
    memo = {id(t): _fake_like(t, mode) for t in tensors if not isinstance(t, FakeTensor)}
    memo.update((id(t), t) for t in _contained_tensors(model) if id(t) not in memo)
    if not memo and not attributes:
        return model
    model = copy.deepcopy(model, memo)
    for mod, attr, _, value in tensor_attributes(model):
        delattr(mod, attr)
        mod.register_buffer(attr, value, persistent=False)
    return model


def _contained_tensors(model: torch.nn.Module) -> list[torch.Tensor]:
    """Tensors in list, tuple and dict attributes (torchvision's AnchorGenerator): the copy shares
    them, as a real tensor cannot be copied under the fake mode (export reads them as constants)."""
    out = []
    for mod in model.modules():
        for value in vars(mod).values():
            if isinstance(value, (list, tuple, dict)):
                out += [t for t in tree_flatten(value)[0] if isinstance(t, torch.Tensor)]
    return out


def _fake_like(t: torch.Tensor, mode: FakeTensorMode) -> torch.Tensor:
    fake = mode.from_tensor(t)
    return torch.nn.Parameter(fake, requires_grad=t.requires_grad) if isinstance(t, torch.nn.Parameter) else fake
