"""User-level PyTorch ops of every family (pooling, norms, activations, losses, scans, reductions,
padding and other index maps, dropout) traced end to end through torch.export, lowered, run in
the IR interpreter and compared with PyTorch; exact integer counts where the structure fixes them.

A family is one module that applies many user-level ops and returns their outputs flattened and
concatenated, so one trace (about a second, mostly torch.export's decomposition pass) checks them
all. The ops these lowering modules keep out of the decomposition (their PRESERVE sets) are checked
to reach their own lowerings."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

import solar
import solar.frontends.torch.lowerings as lowerings_pkg
from solar.errors import SolarError
from solar.frontends.torch import loader
from solar.frontends.torch.check import lower_node, check_module, check_ops
from solar.frontends.torch.convert import convert_with_bindings
from solar.frontends.torch.lowerings.dropout import RANDOM_PERIOD
from solar.ir.interp import run
from solar.ir.nodes import Seq

aten = torch.ops.aten

OWN_MODULES = ("losses", "norms", "reductions", "index_maps")
PRESERVED = frozenset().union(
    *(importlib.import_module(f"{lowerings_pkg.__name__}.{m}").PRESERVE for m in OWN_MODULES)
)


class Fn(nn.Module):
    def __init__(self, fn: Callable[..., Any]):
        super().__init__()
        self.fn = fn

    def forward(self, *xs: torch.Tensor) -> Any:
        return self.fn(*xs)


class On(nn.Module):
    """Apply a module to some of the family's inputs (by position)."""

    def __init__(self, module: nn.Module, *which: int):
        super().__init__()
        self.module, self.which = module, which

    def forward(self, *xs: torch.Tensor) -> Any:
        return self.module(*(xs[i] for i in self.which))


class Family(nn.Module):
    """Every part's outputs, flattened to float and concatenated into one output."""

    def __init__(self, *parts: nn.Module):
        super().__init__()
        self.parts = nn.ModuleList(parts)

    def forward(self, *xs: torch.Tensor) -> torch.Tensor:
        outs: list[torch.Tensor] = []
        for part in self.parts:
            out = part(*xs)
            for t in out if isinstance(out, (tuple, list)) else (out,):
                outs.append(t.float().flatten())
        return torch.cat(outs)


def r(*shape: int) -> torch.Tensor:
    return torch.randn(*shape)


def signs(*shape: int) -> torch.Tensor:
    return torch.randn(*shape).sign()


def _pooling() -> tuple[nn.Module, tuple]:
    x3, x4, x5 = r(2, 3, 10), r(2, 3, 9, 9), r(2, 3, 5, 6, 7)
    parts = [
        On(nn.MaxPool2d(3, 2, 1, ceil_mode=True), 1),
        On(nn.MaxPool2d(2, return_indices=True), 1),
        On(nn.MaxPool2d((3, 2), stride=(2, 1), padding=(1, 0), dilation=(2, 1)), 1),
        On(nn.MaxPool1d(3, 2, 1, ceil_mode=True), 0),
        On(nn.MaxPool3d((2, 3, 2), (1, 2, 2), (1, 1, 0), (1, 1, 2), return_indices=True), 2),
        On(nn.AvgPool2d(3, 2, 1, ceil_mode=True, count_include_pad=False), 1),
        On(nn.AvgPool2d(3, 2, 1, ceil_mode=True), 1),
        On(nn.AvgPool2d(2, divisor_override=3), 1),
        On(nn.AvgPool1d(3, 2, 1), 0),
        On(nn.AvgPool3d(2, 2, 1, count_include_pad=False), 2),
        On(nn.AdaptiveAvgPool2d(7), 1),
        On(nn.AdaptiveAvgPool2d(1), 1),
        On(nn.AdaptiveAvgPool1d(4), 0),
        On(nn.AdaptiveAvgPool3d((2, 3, 4)), 2),
        On(nn.AdaptiveMaxPool2d((4, 3), return_indices=True), 1),
        On(nn.AdaptiveMaxPool1d(3), 0),
        On(nn.AdaptiveMaxPool3d(2), 2),
        On(nn.LPPool2d(2, 3, stride=2), 1),
    ]
    return Family(*parts), (x3, x4, x5)


def _norms() -> tuple[nn.Module, tuple]:
    x2, x3, x4, x5 = r(6, 4), r(2, 4, 10), r(2, 4, 7, 6), r(2, 4, 3, 4, 5)

    def trained(m: nn.Module) -> nn.Module:  # eval mode with non-trivial statistics
        with torch.no_grad():
            for name, p in list(m.named_parameters()) + list(m.named_buffers()):
                if p.is_floating_point():
                    p.copy_(torch.rand_like(p) + 0.5 if "var" in name else torch.randn_like(p))
        return m.eval()

    parts = [
        On(trained(nn.BatchNorm2d(4)), 2),
        On(trained(nn.BatchNorm1d(4)), 0),
        On(trained(nn.BatchNorm1d(4)), 1),
        On(trained(nn.BatchNorm3d(4)), 3),
        On(nn.BatchNorm2d(4, track_running_stats=False), 2),
        On(nn.BatchNorm1d(4, affine=False, track_running_stats=False), 0),
        On(nn.InstanceNorm2d(4), 2),
        On(trained(nn.InstanceNorm1d(4, affine=True)), 1),
        On(nn.InstanceNorm3d(4), 3),
        On(trained(nn.GroupNorm(2, 4)), 2),
        On(nn.GroupNorm(4, 4, affine=False), 1),
        On(nn.GroupNorm(1, 4), 3),
        On(trained(nn.LayerNorm([7, 6])), 2),
        On(trained(nn.RMSNorm(10)), 1),
        On(nn.LocalResponseNorm(3), 2),
    ]
    return Family(*parts), (x2, x3, x4, x5)


ACTIVATIONS = [
    nn.ReLU(),
    nn.ReLU6(),
    nn.LeakyReLU(0.2),
    nn.GELU(),
    nn.GELU("tanh"),
    nn.SELU(),
    nn.ELU(0.7),
    nn.CELU(1.3),
    nn.Hardtanh(-0.5, 2.0),
    nn.Hardsigmoid(),
    nn.Hardswish(),
    nn.Softplus(),
    nn.Softplus(2.0, 1.0),
    nn.Softsign(),
    nn.SiLU(),
    nn.Mish(),
    nn.Sigmoid(),
    nn.Tanh(),
    nn.LogSigmoid(),
    nn.Threshold(0.1, 20.0),
    nn.PReLU(),
    nn.PReLU(3),
    nn.GLU(),
    nn.GLU(0),
    nn.Tanhshrink(),
    nn.Softshrink(0.3),
    nn.Hardshrink(0.3),
    nn.Softmin(1),
    nn.Softmax(-1),
    nn.LogSoftmax(1),
]


def _activations() -> tuple[nn.Module, tuple]:
    return Family(*ACTIVATIONS), (r(4, 3, 6),)


def _losses() -> tuple[nn.Module, tuple]:
    x, y, z = r(4, 6), r(4, 6), r(4, 6)
    p, q = torch.rand(4, 6) * 0.9 + 0.05, torch.rand(4, 6)
    parts = [
        On(nn.MSELoss(), 0, 1),
        On(nn.MSELoss(reduction="sum"), 0, 1),
        On(nn.L1Loss(reduction="none"), 0, 1),
        On(nn.SmoothL1Loss(), 0, 1),
        On(nn.SmoothL1Loss(beta=0.5), 0, 1),
        On(nn.HuberLoss(delta=0.7), 0, 1),
        On(nn.KLDivLoss(reduction="batchmean"), 0, 4),
        On(nn.KLDivLoss(reduction="sum", log_target=True), 0, 1),
        On(nn.MarginRankingLoss(0.2), 0, 1, 5),
        On(nn.TripletMarginLoss(1.0), 0, 1, 2),
        On(nn.TripletMarginLoss(0.5, p=1.0, swap=True), 0, 1, 2),
        On(nn.CosineSimilarity(1), 0, 1),
        On(Fn(lambda a, b: torch.mean(1 - F.cosine_similarity(a, b, dim=1))), 0, 1),
        On(Fn(lambda a, t: torch.mean(torch.clamp(1 - a * t, min=0))), 0, 5),
        On(nn.SoftMarginLoss(), 0, 5),
        On(nn.BCELoss(), 3, 4),
        On(nn.BCEWithLogitsLoss(), 0, 4),
        On(nn.PoissonNLLLoss(), 0, 4),
        On(nn.PairwiseDistance(), 0, 1),
        On(nn.CrossEntropyLoss(), 0, 6),
        On(nn.CrossEntropyLoss(label_smoothing=0.1, reduction="sum"), 0, 6),
        On(nn.NLLLoss(), 0, 6),
        On(nn.MultiMarginLoss(), 0, 6),
    ]
    classes = torch.randint(0, 6, (4,))
    return Family(*parts), (x, y, z, p, q, signs(4, 6), classes)


def _scans() -> tuple[nn.Module, tuple]:
    def exclusive(x: torch.Tensor, dim: int) -> torch.Tensor:  # KernelBench's formulation
        zeros = torch.zeros_like(x.select(dim, 0).unsqueeze(dim))
        return torch.cumsum(torch.cat((zeros, x), dim=dim).narrow(dim, 0, x.size(dim)), dim=dim)

    parts = [
        Fn(lambda x, m: torch.cumsum(x, 1)),
        Fn(lambda x, m: torch.cumsum(x, 0)),
        Fn(lambda x, m: torch.cumsum(x, -1)),
        Fn(lambda x, m: torch.cumsum(x.flip(1), 1).flip(1)),
        Fn(lambda x, m: exclusive(x, 1)),
        Fn(lambda x, m: torch.cumsum(x * m, dim=1)),
        Fn(lambda x, m: torch.cumsum(m, dim=2)),
        Fn(lambda x, m: torch.cumprod(x.abs() + 0.5, 1)),
        Fn(lambda x, m: torch.cumprod(x, 2, dtype=torch.float64)),
    ]
    return Family(*parts), (r(3, 13, 5), torch.rand(3, 13, 5) > 0.5)


def _reductions() -> tuple[nn.Module, tuple]:
    parts = [
        Fn(lambda x: torch.argmax(x, 1)),
        Fn(lambda x: torch.argmin(x, -1, keepdim=True)),
        Fn(lambda x: torch.argmax(x)),
        Fn(lambda x: torch.max(x, 1)),
        Fn(lambda x: torch.min(x, 2, keepdim=True)),
        Fn(lambda x: torch.max(x, 1).values),
        Fn(lambda x: torch.max(x)),
        Fn(lambda x: torch.min(x)),
        Fn(lambda x: torch.prod(x, 1)),
        Fn(lambda x: torch.prod(x)),
        Fn(lambda x: torch.var(x, 1)),
        Fn(lambda x: torch.std(x, (0, 2), unbiased=False)),
        Fn(lambda x: torch.var_mean(x, 2)),
        Fn(lambda x: torch.std_mean(x, 1, keepdim=True)),
        Fn(lambda x: torch.norm(x, dim=1)),
        Fn(lambda x: torch.linalg.vector_norm(x, 1, dim=2)),
        Fn(lambda x: torch.linalg.vector_norm(x, float("inf"), dim=(0, 1))),
        Fn(lambda x: torch.linalg.vector_norm(x, 3)),
        Fn(lambda x: torch.linalg.matrix_norm(x)),
        Fn(lambda x: F.normalize(x, dim=1)),
        Fn(lambda x: torch.logsumexp(x, 1)),
        Fn(lambda x: (x > 0.5).any(1)),
        Fn(lambda x: (x > -1.5).all(2)),
        Fn(lambda x: (x > 0).any()),
        Fn(lambda x: torch.count_nonzero(x > 0, 1)),
        Fn(lambda x: torch.aminmax(x, dim=1)),
    ]
    return Family(*parts), (r(3, 5, 4),)


def _shapes() -> tuple[nn.Module, tuple]:
    x4 = r(2, 3, 5, 6)
    parts = [
        Fn(lambda x: F.pad(x, (1, 2, 0, 1))),
        Fn(lambda x: F.pad(x, (2, 0), value=-1.5)),
        Fn(lambda x: F.pad(x, (-1, 1, 1, -2))),
        Fn(lambda x: nn.ZeroPad2d(1)(x)),
        Fn(lambda x: nn.ConstantPad3d((1, 0, 0, 1, 1, 1), 0.5)(x)),
        Fn(lambda x: x.flip(1)),
        Fn(lambda x: x.flip(0, 3)),
        Fn(lambda x: torch.diagonal(x, 1, 2, 3)),
        Fn(lambda x: torch.tril(x[0, 0])),
        Fn(lambda x: torch.triu(x, 1)),
        Fn(lambda x: torch.diag_embed(x[0, 0])),
        Fn(lambda x: torch.diag(x[0, 0, 0]) @ x[0, 0].T),
        Fn(lambda x: nn.Dropout(0.4).eval()(x) * 2),
        Fn(lambda x: F.dropout(x, 0.4, training=False) + 1),
    ]
    return Family(*parts), (x4,)


def _preserved() -> tuple[nn.Module, tuple]:
    x4 = r(2, 3, 5, 6)
    parts = [
        On(Fn(lambda x: F.pad(x, (1, 2, 0, 3), mode="reflect")), 0),
        On(Fn(lambda x: F.pad(x, (2, 1), mode="reflect")), 1),
        On(nn.ReflectionPad2d(2), 0),
        On(Fn(lambda x: F.pad(x, (1, 2, 3, 0), mode="replicate")), 0),
        On(nn.ReplicationPad3d((1, 0, 1, 2, 0, 1)), 0),
        On(Fn(lambda x: F.pad(x, (1, 2, 0, 3), mode="circular")), 0),
        On(nn.CircularPad1d(2), 1),
        On(Fn(lambda x: F.pad(x, (1, 1, 2, 0), value=0.25)), 0),
        On(Fn(lambda x: x.roll(2, 1)), 0),
        On(Fn(lambda x: x.roll((-1, 7), (2, 3))), 0),
        On(Fn(lambda x: x.roll(5)), 1),
        On(Fn(lambda x: torch.tril(x)), 0),
        On(Fn(lambda x: torch.triu(x, -1)), 0),
        On(Fn(lambda x: torch.tril(x[0, 0]) @ x[1, 1].T), 0),
        On(Fn(lambda x: torch.diag_embed(x[0, 0], 1)), 0),
        On(Fn(lambda x: torch.diag(x[0, 0, 0])), 0),
        On(Fn(lambda x: torch.diag(x[0, 0], -1)), 0),
        On(Fn(lambda x: (x > -1).all(3)), 0),
        On(Fn(lambda x: (x > 0).all()), 0),
        On(Fn(lambda x: (x > -2).all((1, 3))), 0),
        On(nn.HingeEmbeddingLoss(0.5), 2, 3),
        On(nn.CosineEmbeddingLoss(0.1, reduction="none"), 2, 4, 5),
        On(nn.GroupNorm(3, 6), 6),
    ]
    return Family(*parts), (x4, r(2, 3, 7), r(4, 6), signs(4, 6), r(4, 6), signs(4), r(2, 6, 3, 4))


FAMILIES = {
    "pooling": _pooling,
    "norms": _norms,
    "activations": _activations,
    "losses": _losses,
    "scans": _scans,
    "reductions": _reductions,
    "shapes": _shapes,
}


@pytest.mark.parametrize("family", FAMILIES)
def test_family_matches_pytorch(family):
    torch.manual_seed(0)
    model, inputs = FAMILIES[family]()
    result = check_module(model, inputs)
    assert result.ok and not result.unchecked, result.checks


def test_preserved_ops_reach_their_lowerings_and_match_pytorch():
    torch.manual_seed(0)
    model, inputs = _preserved()
    traced = loader.trace_module(model, inputs)
    kept = {n.target for n in traced.exported.graph.nodes if n.target in PRESERVED}
    assert kept == PRESERVED, f"not kept whole: {sorted(map(str, PRESERVED - kept))}"
    result = check_module(model, inputs)
    assert result.ok and not result.unchecked, result.checks


def test_batch_norm_training_with_running_statistics():
    """Batch statistics, and the running-statistic updates (buffer mutations), op by op."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.BatchNorm2d(4), nn.Flatten(2), nn.BatchNorm1d(4, momentum=0.3))
    traced = loader.trace_module(model, (r(3, 4, 6, 5),))
    checks = check_ops(traced)
    ops = {c.what for c in checks}
    assert "aten._native_batch_norm_legit_functional.default" in ops
    assert checks and all(c.ok for c in checks), checks


def lower_alone(op: Any, *args: Any) -> tuple[Any, list[str], dict]:
    """Lower one op on real arguments as the output checks do: (program, output names, feed)."""
    node = type("Node", (), {"target": op, "name": str(op).split(".")[1], "kwargs": {}})
    program, names, feed, _ = lower_node(node, list(args), op(*args))
    return program, names, feed


def test_batch_norm_running_statistics_outside_training_is_refused():
    x, w, rm, rv = torch.randn(2, 3, 4), torch.randn(3), torch.randn(3), torch.rand(3)
    with pytest.raises(SolarError, match="not supported"):
        lower_alone(
            aten._native_batch_norm_legit_functional.default, x, w, w, rm, rv, False, 0.1, 1e-5
        )


def test_bitwise_not_of_integers_is_refused():
    with pytest.raises(SolarError, match="bitwise_not of i64"):
        lower_alone(aten.bitwise_not.default, torch.randint(0, 5, (3, 4)))


# ---- exact counts --------------------------------------------------------------------------------


def flops(model: nn.Module, *inputs: torch.Tensor) -> int:
    return solar.analyze(model, inputs, arch="H100-SXM").totals.flops


def window_counts(
    size: int, kernel: int, stride: int, pad: int, dilation: int, ceil_mode: bool
) -> list[int]:
    """Elements of each window that lie inside the input (brute force)."""
    span = dilation * (kernel - 1) + 1
    out = (size + 2 * pad - span + (stride - 1 if ceil_mode else 0)) // stride + 1
    if ceil_mode and (out - 1) * stride >= size + pad:
        out -= 1
    return [
        sum(0 <= o * stride - pad + k * dilation < size for k in range(kernel)) for o in range(out)
    ]


def test_max_pool_counts_exactly_the_window_elements_inside_the_input():
    n, c, h, w = 2, 3, 8, 7
    rows, cols = window_counts(h, 3, 2, 1, 1, True), window_counts(w, 3, 2, 1, 1, True)
    expected = n * c * sum(rows) * sum(cols)  # one compare per element; the unread index costs 0
    assert expected == 2 * 3 * (2 + 3 + 3 + 3 + 1) * (2 + 3 + 3 + 2)
    assert flops(nn.MaxPool2d(3, 2, 1, ceil_mode=True), r(n, c, h, w)) == expected


def test_avg_pool_counts_window_adds_and_one_multiply_per_output():
    n, c, h, w = 1, 2, 9, 6
    rows, cols = window_counts(h, 3, 2, 1, 1, True), window_counts(w, 3, 2, 1, 1, True)
    expected = n * c * (sum(rows) * sum(cols) + len(rows) * len(cols))
    model = nn.AvgPool2d(3, 2, 1, ceil_mode=True, count_include_pad=False)
    assert flops(model, r(n, c, h, w)) == expected


def test_adaptive_avg_pool_counts_overlapping_windows():
    # 10 -> 4: windows [0,3) [2,5) [5,8) [7,10); 7 -> 3: [0,3) [2,5) [4,7)
    expected = 2 * (12 * 9 + 4 * 3)
    assert flops(nn.AdaptiveAvgPool2d((4, 3)), r(1, 2, 10, 7)) == expected


def test_scan_recurrence_run_step_by_step_is_the_scan():
    model = Family(
        Fn(lambda x: torch.cumsum(x, 1)), Fn(lambda x: torch.cumprod(x.flip(0) * 0.5 + 1.0, 0))
    )
    x = r(6, 9)
    program, bindings = convert_with_bindings(loader.trace_module(model, (x,)))
    assert sum("s" in stmt.loop_vars for stmt in program.stmts) == 2  # one statement per scan
    assert sum(isinstance(node, Seq) for node in program.body) == 2  # each in its in-order loop
    (name,) = bindings
    (out,) = run(program, {name: x.numpy()}).values()
    np.testing.assert_allclose(out, model(x).numpy(), rtol=1e-5)


def test_scans_count_one_op_per_element_after_the_first():
    rows, n = 3, 16
    assert flops(Fn(lambda x: torch.cumsum(x, 1)), r(rows, n)) == rows * (n - 1)
    assert flops(Fn(lambda x: torch.cumprod(x.flip(0), 0)), r(n, rows)) == rows * (n - 1)


def test_argmax_counts_compare_ops_only():
    rows, n = 4, 9  # max (1), then equal / select / min for the first index (3) per element
    assert flops(Fn(lambda x: torch.argmax(x, 1)), r(rows, n)) == 4 * rows * n
    assert flops(Fn(lambda x: torch.max(x, 1).values), r(rows, n)) == rows * n


def test_batch_norm_eval_is_one_multiply_add_per_element():
    n, c, h, w = 2, 3, 4, 5
    per_channel = flops(nn.BatchNorm2d(c).eval(), r(n, c, h, w)) - 2 * n * c * h * w
    assert 0 < per_channel <= 8 * c  # rstd, scale, shift per channel


def test_triangles_padding_and_rolls_cost_nothing():
    model = Family(
        Fn(lambda x: torch.tril(x)),
        Fn(lambda x: F.pad(x, (2, 1), mode="reflect")),
        Fn(lambda x: x.roll(2, 0)),
    )
    assert flops(model, r(5, 5)) == 0


def test_triangular_and_diagonal_matmuls_count_only_their_nonzeros():
    n, k = 6, 4
    tri = Fn(lambda a, b: torch.tril(a) @ b)
    assert flops(tri, r(n, n), r(n, k)) == 2 * k * n * (n + 1) // 2
    upper = Fn(lambda a, b: a @ torch.triu(b, 1))
    assert flops(upper, r(k, n), r(n, n)) == 2 * k * n * (n - 1) // 2
    # one multiply-add per output (the contraction adds into a zero-initialised accumulator)
    assert flops(Fn(lambda a, b: torch.diag(a) @ b), r(n), r(n, k)) == 2 * n * k


# ---- random ops ----------------------------------------------------------------------------------


@pytest.mark.parametrize("p", [0.2, 0.5, 0.9])
def test_dropout_keeps_or_zeroes_each_element_at_the_right_rate(p):
    x = torch.randn(50, 40)  # two full periods of the pattern
    program, names, feed = lower_alone(aten.native_dropout.default, x, p, True)
    out = run(program, feed)
    y, mask = out[names[0]], out[names[1]]
    kept = int(mask.sum())
    assert np.allclose(y[mask], x.numpy()[mask] / (1 - p), rtol=1e-6) and (y[~mask] == 0).all()
    assert kept == round((1 - p) * RANDOM_PERIOD) * x.numel() // RANDOM_PERIOD
    # as lowered: the draw (a compare per element) and a multiply per kept element; in a traced
    # program the passes turn the draw's affine condition into guards: the multiplies remain
    assert solar.analyze(program, arch="H100-SXM").totals.flops == x.numel() + kept
    assert flops(nn.Dropout(p), x) == kept


def test_bernoulli_draws_at_the_right_rate():
    x, p = torch.zeros(20, 50), 0.3  # one full period of the pattern
    program, names, feed = lower_alone(aten.bernoulli.p, x, p)
    draws = run(program, feed)[names[0]]
    assert set(np.unique(draws)) <= {0.0, 1.0} and draws.mean() == pytest.approx(p)
