"""The meta trace (solar.frontends.torch.meta_trace) against torch.export: for every module it
takes, the training IR is node for node torch.export's (name, op, arguments, module stack, stack
trace, value shapes, signature), and the program lowered from it — IR text, eager calls, notes,
totals and bounds on every golden GPU — is the one torch.export's trace gives; for every module it
refuses, it answers None and the loader's result is torch.export's by construction."""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path

import pytest
import torch
from torch import nn
from torch._subclasses.fake_tensor import FakeTensorMode

import solar  # noqa: F401  (op schemas torchvision needs)
from solar.frontends.torch import loader, meta_trace
from solar.frontends.torch.fake import fakeify_program
from solar.frontends.torch.tracing import cheap_stack_traces

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from benchmarks.golden_totals import loaded_totals
from solar.api import load

# export records `torch_fn` too; solar reads neither it nor `tensor_meta`, and the meta trace
# does not write them.
META = ("nn_module_stack", "stack_trace")


def _value(val) -> tuple:
    if isinstance(val, (list, tuple)):
        return tuple(_value(v) for v in val)
    if not isinstance(val, torch.Tensor):
        return (str(val),)
    return tuple(val.shape), val.stride(), val.dtype, val.requires_grad


def _graph(ep: torch.export.ExportedProgram) -> list:
    nodes = [(n.op, n.name, str(n.target), str(n.args), str(n.kwargs), *(str(n.meta.get(k)) for k in META),
              _value(n.meta.get("val"))) for n in ep.graph.nodes]
    return nodes + [str(ep.graph_signature), sorted(ep.state_dict), sorted(ep.constants), str(ep.module_call_graph)]


def _both(model: nn.Module, inputs: tuple) -> tuple:
    """(the meta trace or None, torch.export's on fake copies) of a module, as the loader traces."""
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        on_meta = meta_trace.meta_training_ir(model, inputs)
    with FakeTensorMode(allow_non_fake_inputs=True) as fake:
        model, inputs = fakeify_program(model, inputs, fake)
        with torch.no_grad(), warnings.catch_warnings(), cheap_stack_traces():
            warnings.simplefilter("ignore")
            exported = torch.export.export(model, inputs, strict=False)
    return on_meta, exported


# ---- modules the meta trace takes ----------------------------------------------------------------


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.bn = nn.BatchNorm1d(8)

    def forward(self, x):
        return torch.relu(self.bn(self.lin(x)))


class Stacked(nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = Block(), Block()
        self.register_buffer("scale", torch.ones(8))
        self.register_buffer("shift", torch.zeros(8), persistent=False)

    def forward(self, x, y):
        return self.b(self.a(x)) * self.scale + self.shift + y


class CalledTwice(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        return self.lin(torch.tanh(self.lin(x)))


class ConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(inplace=True))
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        y = self.body(x)
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(y, 1), 1)), y.sum()


class Casts(nn.Module):
    def forward(self, x):
        return (x.to(torch.float64) * 2).to(torch.float32).softmax(-1)


class Factories(nn.Module):
    """Tensors made in forward on the input's device and on the default one, views, a split."""

    def forward(self, x):
        pos = torch.arange(x.shape[-1], device=x.device)
        ones = torch.ones(3, dtype=torch.float64)
        head, tail = x.chunk(2, -1)
        return x + pos, ones, head.t(), x[..., :2], tail.cpu(), x.new_zeros(2)


class DeviceBranch(nn.Module):
    """Code that reads the device sees the CPU, as on export's fake CPU tensors."""

    def forward(self, x):
        if x.device.type == "cpu" and x.is_cpu and not x.is_meta:
            return x * 2
        return x + 1


class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * x

    @staticmethod
    def backward(ctx, grad):
        return 2 * grad


class CustomFunction(nn.Module):
    """A custom autograd Function and an activation checkpoint: both traced through (no grad)."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        return torch.utils.checkpoint.checkpoint(self.lin, Square.apply(x), use_reentrant=False) + 1


class InPlace(nn.Module):
    def forward(self, x):
        y = x * 2
        y.add_(1).relu_()
        return y.view(-1), y.transpose(0, 1).contiguous()


TAKEN = {
    "casts (export's check before aten.to)": (Casts, lambda: (torch.randn(4, 8),)),
    "stacked blocks, buffers": (lambda: Stacked().eval(), lambda: (torch.randn(4, 8), torch.randn(4, 8))),
    "training-mode batch norm": (lambda: Stacked().train(), lambda: (torch.randn(4, 8), torch.randn(4, 8))),
    "a module called twice": (CalledTwice, lambda: (torch.randn(2, 8),)),
    "conv net, two outputs": (lambda: ConvNet().eval(), lambda: (torch.randn(2, 3, 8, 8),)),
    "factories, views, a split": (Factories, lambda: (torch.randn(4, 8),)),
    "in-place ops on an intermediate": (InPlace, lambda: (torch.randn(4, 8),)),
    "a branch on the device": (DeviceBranch, lambda: (torch.randn(4, 8),)),
    "a custom autograd Function, a checkpoint": (CustomFunction, lambda: (torch.randn(4, 8),)),
    "scaled dot-product attention": (
        lambda: nn.MultiheadAttention(8, 2, batch_first=True).eval(),
        lambda: (torch.randn(2, 5, 8), torch.randn(2, 5, 8), torch.randn(2, 5, 8)),
    ),
}


@pytest.mark.parametrize("name", sorted(TAKEN))
def test_taken_training_ir_is_exports(name):
    build, inputs = TAKEN[name]
    torch.manual_seed(0)
    on_meta, exported = _both(build(), inputs())
    assert on_meta is not None
    assert _graph(on_meta) == _graph(exported)


# ---- modules it refuses --------------------------------------------------------------------------


class Hooked(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.lin.register_forward_hook(lambda m, i, o: o * 2)

    def forward(self, x):
        return self.lin(x)


class Assigns(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("last", torch.zeros(4))

    def forward(self, x):
        self.last = x.sum(0)
        return x * 2


class Tied(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4, bias=False)
        self.b = nn.Linear(4, 4, bias=False)
        self.b.weight = self.a.weight

    def forward(self, x):
        return self.b(self.a(x))


class ScalarIndex(nn.Module):
    def forward(self, x, i):
        return x[i] * 2


class ReturnsInput(nn.Module):
    def forward(self, x):
        return x, x * 2


class MakesConstant(nn.Module):
    def forward(self, x):
        return x + torch.tensor([1.0, 2.0, 3.0, 4.0])


class DataDependent(nn.Module):
    def forward(self, x):
        return torch.nonzero(x > 0).float().sum() + x


class ReturnsDict(nn.Module):
    def forward(self, x):
        return {"y": x * 2}


class NumberInput(nn.Module):
    def forward(self, x, k):
        return x * k


class GradSwitch(nn.Module):
    def forward(self, x):
        with torch.no_grad():
            y = x * 2
        return y + 1


class ReadsValue(nn.Module):
    def forward(self, x):
        return x * float(x.sum())


class FunctionAttribute(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        lin = self.lin
        self.f = lambda x: lin(x) * 2

    def forward(self, x):
        return self.f(x)


class HalfNorm(nn.Module):
    """On the CPU a half-precision layer norm keeps its statistics in half precision, on CUDA
    (and the meta device) in float32."""

    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(4).to(torch.bfloat16)

    def forward(self, x):
        return self.norm(x.to(torch.bfloat16))


class Sdpa(nn.Module):
    """The CPU's attention kernel keeps its inputs' (B, T, H, D) layout; the meta kernel's output
    is contiguous, so `.contiguous()` after it would dispatch only on the meta device."""

    def forward(self, x):
        q = x.view(2, 8, 4, 16).transpose(1, 2)
        y = nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True)
        return y.transpose(1, 2).contiguous().view(2, 8, 64)


class Autocast(nn.Module):
    def forward(self, x):
        with torch.autocast("cpu", enabled=False):
            return x @ x.t()


class AttributeTensor(nn.Module):
    def __init__(self):
        super().__init__()
        self.table = torch.ones(4)

    def forward(self, x):
        return x * self.table


REFUSED = {
    "a forward hook": (Hooked, lambda: (torch.randn(2, 4),)),
    "an attribute assigned in forward": (Assigns, lambda: (torch.randn(2, 4),)),
    "a weight held under two names": (Tied, lambda: (torch.randn(2, 4),)),
    "indexing with a tensor scalar": (ScalarIndex, lambda: (torch.randn(3, 4), torch.tensor(1))),
    "an output that is an input": (ReturnsInput, lambda: (torch.randn(2, 4),)),
    "a tensor constant made in forward": (MakesConstant, lambda: (torch.randn(2, 4),)),
    "a data-dependent size": (DataDependent, lambda: (torch.randn(2, 4),)),
    "a dict output": (ReturnsDict, lambda: (torch.randn(2, 4),)),
    "a number input": (NumberInput, lambda: (torch.randn(2, 4), 3)),
    "a grad-mode switch in forward": (GradSwitch, lambda: (torch.randn(2, 4),)),
    "a value read in forward": (ReadsValue, lambda: (torch.randn(2, 4),)),
    "a tensor held as a plain attribute": (AttributeTensor, lambda: (torch.randn(2, 4),)),
    "a reduced-precision value": (HalfNorm, lambda: (torch.randn(2, 4),)),
    "an op whose meta kernel consults the device": (lambda: nn.ReflectionPad2d(1), lambda: (torch.randn(1, 2, 4, 4),)),
    "a padding other than constant": (lambda: nn.ReplicationPad1d(2), lambda: (torch.randn(1, 2, 4),)),
    "scaled dot-product attention (its output layout)": (Sdpa, lambda: (torch.randn(2, 8, 64),)),
    "an autocast region": (Autocast, lambda: (torch.randn(2, 4),)),
    "a function held as an attribute (export lifts what it reaches)": (FunctionAttribute, lambda: (torch.randn(2, 4),)),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_modules_fall_back_to_export(name):
    build, inputs = REFUSED[name]
    with torch.no_grad():
        assert meta_trace.meta_training_ir(build(), inputs()) is None


# ---- whole programs: the meta trace against torch.export alone ----------------------------------


FILES = [*sorted((ROOT / "examples").glob("*.py")),
         *(ROOT / "benchmarks" / "suite" / level / name for level, name in (
             ("level1", "10_Conv2d_grouped_dilated.py"),
             ("level2", "12_Linear_Dropout_GELU_LayerNorm.py"),
             ("level3", "3_Transformer_encoder_block.py"),
             ("level3", "50_MinGPT_block_causal_attention.py"),
             ("level3", "51_LSTM.py"),
             ("level3", "54_Mamba2_SSD_chunked_scan.py"),
         ))]

# Files of the table the meta trace refuses, or whose graph the direct path refuses.
NOT_TAKEN = frozenset({"moe_dispatch.py", "51_LSTM.py"})


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_files_give_the_same_ir_and_totals(path, monkeypatch):
    """The IR text, eager calls, notes and totals and bounds on every golden GPU are the same
    whether the meta trace is taken or torch.export traces alone."""
    took = []
    original = loader.meta_training_ir

    def recorded(model, inputs):
        ep = original(model, inputs)
        took.append(ep is not None)
        return ep

    monkeypatch.setattr(loader, "meta_training_ir", recorded)
    on_meta = load(str(path))
    monkeypatch.setattr(loader, "meta_training_ir", lambda model, inputs: None)
    exported = load(str(path))
    assert str(on_meta.program) == str(exported.program)
    assert on_meta.notes == exported.notes
    assert loaded_totals(on_meta) == loaded_totals(exported)
    assert any(took) == (path.name not in NOT_TAKEN)


# ---- torch's stack-trace filter ------------------------------------------------------------------


def test_dropped_files_are_torchs():
    """`dropped` names exactly the files under torch's folder that torch's filter drops."""
    from torch.fx.experimental.symbolic_shapes import uninteresting_files

    torch_dir = os.path.dirname(torch.__file__) + os.sep
    theirs = {f for f in uninteresting_files() if f.startswith(torch_dir)}
    assert all(meta_trace.dropped(f) for f in theirs)
    ours = {torch_dir + f for f in meta_trace.DROPPED_FILES}
    for folder in meta_trace.DROPPED_FOLDERS:  # every file there
        ours |= {str(p) for p in Path(torch_dir, folder).glob("*.py")}
    assert ours == theirs
    assert meta_trace.dropped("<string>") and "<string>" in uninteresting_files()
    assert not meta_trace.dropped(torch.nn.modules.linear.__file__)
