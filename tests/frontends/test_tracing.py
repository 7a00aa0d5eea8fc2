"""solar.frontends.torch.tracing: what solar changes in torch while export traces, checked to change
nothing in the result (every node's stack trace as torch records it; forward() restored)."""

from __future__ import annotations

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import solar  # noqa: F401  (op schemas torchvision needs)
from solar.frontends.torch import tracing


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(4, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)

    def forward(self, x):
        y = self.helper(self.bn(self.conv(x)))
        return x + y

    def helper(self, y):  # a frame not named forward, between two that are
        return F.relu(y) * 2


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.Sequential(Block(), Block())
        self.head = nn.Linear(4, 3)

    def forward(self, x):
        y = self.blocks(x).mean((2, 3))
        return torch.softmax(self.head(y), -1)


def _resnet():
    import torchvision

    return torchvision.models.resnet18(num_classes=4).eval(), (torch.randn(1, 3, 32, 32),)


def _traces(model, inputs, cheap: bool) -> list:
    import contextlib

    with tracing.cheap_stack_traces() if cheap else contextlib.nullcontext():
        ep = torch.export.export(model, inputs, strict=False)
    return [(n.name, n.meta.get("stack_trace")) for n in ep.graph.nodes]


@pytest.mark.parametrize("build", [lambda: (Net().eval(), (torch.randn(2, 4, 5, 5),)), _resnet], ids=["user", "torchvision"])
def test_cheap_stack_traces_are_torchs(build, monkeypatch):
    model, inputs = build()
    calls = []
    real = tracing.stack_trace
    monkeypatch.setattr(tracing, "stack_trace", lambda tracer: calls.append(1) or real(tracer))
    want = _traces(model, inputs, False)
    assert not calls
    got = _traces(model, inputs, True)
    assert calls, "the cheap path was not taken"
    assert got == want
    assert sum(1 for _, t in want if t) >= 5


def test_cheap_stack_traces_restore_torch():
    before = torch.fx.proxy.TracerBase.create_node
    with pytest.raises(RuntimeError), tracing.cheap_stack_traces():
        assert torch.fx.proxy.TracerBase.create_node is not before
        raise RuntimeError
    assert torch.fx.proxy.TracerBase.create_node is before


def test_modes_in_forward_only_inside_and_restored():
    """The modes are entered around forward() (not around the rest of the export) and the model's
    forward is its own again after, however the body ends."""
    from torch.overrides import TorchFunctionMode

    seen = []

    class Count(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(func)
            return func(*args, **(kwargs or {}))

    model = nn.Linear(3, 2)
    with tracing.modes_in_forward(model, lambda: (Count(),)):
        torch.export.export(model, (torch.randn(2, 3),), strict=False)
    assert F.linear in seen
    assert len(seen) < 20  # export's own faking of the parameters reads hundreds of properties
    assert "forward" not in vars(model)
    with pytest.raises(ValueError), tracing.modes_in_forward(model, lambda: ()):
        raise ValueError
    assert "forward" not in vars(model)
