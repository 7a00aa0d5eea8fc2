"""Mixture-of-experts routing: histc (tokens per expert) and grouped GEMMs (aten._grouped_mm and
transformers' fallback op of the same meaning).

histc is a data-dependent scatter-add of one per element into its bin (`h[ind(bin(x[i]))] +=
in_range(x[i])`), the bin computed as PyTorch's kernel does: (x - min) * bins / (max - min),
truncated, the right edge in the last bin, elements outside [min, max] (and NaN) not counted.

A grouped GEMM `out[s, n] = Σ_c a[s, c] · W[g(s), c, n]` with g(s) the group of row s (offsets are
the cumulative row counts of the groups): the group of every row is a small count
`G[s] = Σ_e [offs[e] <= s]`, and the contraction reads its weight through `ind(G[s])`. Its work,
S·K·N multiply-adds, does not depend on the offsets; its weight bytes do. Where the offsets are the
cumulative histc of top-k expert ids (the MoE pattern, found in the traced graph), every row lies
in a group and the rows' groups take at least k distinct values (each token's k ids are
distinct), so the weight read is priced at k experts: the least any routing can touch. Otherwise
one expert (the least any offsets allow), and rows past the last offset, which PyTorch leaves
unwritten, are assumed not to exist (the interpreter reports a row outside every group)."""

from __future__ import annotations

from typing import Any

import torch

from solar.errors import SolarError
from solar.frontends import views
from solar.frontends.builder import call, cast, const, contract, index_value, loop_vars, mul, sub
from solar.frontends.order import plain_keys
from solar.frontends.torch.context import LowerCtx
from solar.frontends.torch.lowerings.registry import lower, lower_library
from solar.frontends.views import View
from solar.ir.affine import var
from solar.ir.dtypes import DType
from solar.ir.nodes import Cast, Indirect, Load
from solar.ir.scalar_ops import ScalarOp as S
from solar.ir.scalar_ops import Update

aten = torch.ops.aten

NOTES = {
    aten._grouped_mm.default: "grouped GEMM (MoE experts): S·K·N multiply-adds whatever the "
    "offsets; weight bytes at the fewest experts the routing can touch (k distinct per token "
    "under top-k routing, else one), every row assumed inside a group",
    aten.histc.default: "histc: a data-dependent scatter-add of one per element into its bin "
    "(bytes of the input and the bins, the bin arithmetic per element)",
}


@lower(aten.histc.default)
def _histc(ctx: LowerCtx, x: View, bins: int = 100, min: Any = 0, max: Any = 0) -> View:
    lo, hi = float(min), float(max)
    if lo == hi and int(bins) == 1:  # the range is the data's: every element but NaN lands in the one bin
        lo, hi = -float("inf"), float("inf")
    elif lo == hi:
        raise SolarError(
            "histc with min == max takes its range from the data (a data-dependent reduction "
            "first); give the range (min < max)"
        )
    if hi < lo:
        raise SolarError(f"histc: max ({hi}) is below min ({lo})")
    b = ctx.b
    h = b.temp(ctx.hint, (int(bins),), ctx.dtype)
    b.emit([("i0", int(bins))], h.base, (var("i0"),), Update.ASSIGN, const(0.0))
    flat = plain_keys(ctx.b, ctx.hint, views.reshape(x, (x.numel,)))
    loops, idx = loop_vars("i", (x.numel,))
    v = flat.at(idx)
    if int(bins) == 1:
        b.emit(loops, h.base, (var("i0") * 0,), Update.ADD, cast(ctx.dtype, call(S.EQ, v, v)))
        return h
    inside = call(S.AND, call(S.GE, v, lo), call(S.LE, v, hi))
    clamped = call(S.WHERE, inside, v, lo)  # NaN and outside elements: bin 0, counted 0
    # the bin width's reciprocal times the distance (PyTorch divides: equal but within an ulp
    # of a bin edge; integer ids over [0, E-1] in E bins land alike)
    bin_of = cast(DType.I64, mul(sub(clamped, lo), int(bins) / (hi - lo)))
    ((_, position),) = call(S.MIN, bin_of, int(bins) - 1)  # the right edge: the last bin
    b.emit(loops, h.base, (Indirect(position),), Update.ADD, cast(ctx.dtype, inside))
    return h


# ---- grouped GEMM --------------------------------------------------------------------------------

# ops a routing id passes through between top-k and histc unchanged in value
_SAME_VALUES = frozenset(
    {
        aten._to_copy.default,
        aten.view.default,
        aten.reshape.default,
        aten.clone.default,
        aten.alias.default,
        aten._unsafe_view.default,
        aten.flatten.using_ints,
    }
)


def _source(node: Any) -> Any:
    """The node a value comes from through value-preserving ops (casts, reshapes)."""
    while isinstance(node, torch.fx.Node) and node.target in _SAME_VALUES:
        node = node.args[0]
    return node


def _getitem_of(node: Any, target: Any, item: int) -> Any:
    """The `target` node whose output `item` `node` is, or None."""
    import operator

    if not (isinstance(node, torch.fx.Node) and node.target is operator.getitem):
        return None
    src = node.args[0]
    return src if node.args[1] == item and getattr(src, "target", None) is target else None


def routing_k(offs: Any, rows: int) -> int | None:
    """k when the offsets are cumsum(histc(sorted top-k ids)) over a range holding every id, in
    bins that keep distinct ids apart (`_separates_ids`), and the `rows` are one per id (every row is then in a group, and each
    token's k distinct ids are k distinct groups): found in the traced graph; None otherwise."""
    if not (isinstance(offs, torch.fx.Node) and offs.target is aten.cumsum.default):
        return None
    hist = _source(offs.args[0])
    if getattr(hist, "target", None) is not aten.histc.default:
        return None
    args = list(hist.args) + [100, 0, 0][len(hist.args) - 1 :]
    bins = int(hist.kwargs.get("bins", args[1]))
    lo, hi = float(hist.kwargs.get("min", args[2])), float(hist.kwargs.get("max", args[3]))
    ids = _source(hist.args[0])
    sort = _getitem_of(ids, aten.sort.default, 0)  # sorted or not: histc counts every id
    topk = _getitem_of(_source(sort.args[0]) if sort else ids, aten.topk.default, 1)
    if topk is None:
        return None
    x, k = topk.args[0].meta["val"], int(topk.args[1])
    dim = topk.args[2] if len(topk.args) > 2 else topk.kwargs.get("dim", -1)
    ids = topk.meta["val"][1]
    n = int(x.shape[dim])
    if lo > 0 or hi < n - 1 or not _separates_ids(hist, bins, lo, hi) or int(ids.numel()) != rows or rows < k:
        return None
    return k


def _separates_ids(hist: Any, bins: int, lo: float, hi: float) -> bool:
    """Whether histc puts distinct integer ids in distinct bins whatever the rounding: bins at most
    (B-1)/B wide (hi - lo <= B - 1), so ids' bin positions lie 1 + 1/(B-1) apart, and the float32
    (or float64) bin arithmetic, off by far less than 1/(B-1) for B <= 1024, cannot close that
    (docs/BOUNDS.md §12, MoE routing)."""
    val = getattr(hist.args[0], "meta", {}).get("val")
    wide = val is not None and val.dtype in (torch.float32, torch.float64)
    return wide and 1 < bins <= 1024 and hi - lo <= bins - 1


def _offsets_arg(ctx: LowerCtx) -> Any:
    node = getattr(ctx.node, "args", None)
    if node is None:
        return None  # a lone op being checked: no graph around it
    return ctx.node.kwargs.get("offs", ctx.node.args[2] if len(ctx.node.args) > 2 else None)


def _groups(ctx: LowerCtx, offs: View, rows: int, hint: str | None = None) -> View:
    """G[s] = the group of row s = the number of offsets <= s."""
    b = ctx.b
    g = b.temp(f"{hint or ctx.hint}_group", (rows,), DType.I64)
    b.emit([("i0", rows)], g.base, (var("i0"),), Update.ASSIGN, const(0))
    le = call(S.LE, offs.at((var("e"),)), index_value(var("i0")))
    b.emit(
        [("i0", rows), ("e", offs.shape[0])], g.base, (var("i0"),), Update.ADD, cast(DType.I64, le)
    )
    return g


def _valid_offsets(args: Any, gen: torch.Generator) -> Any:
    """Random grouped-GEMM arguments with offsets MoE routing could give: non-decreasing, the
    last one the row count (`solar verify` on random data)."""
    args = list(args)
    if len(args) > 2 and isinstance(args[2], torch.Tensor) and args[0].dim() == 2:
        rows, groups = args[0].shape[0], args[2].shape[0]
        cuts = torch.sort(torch.randint(0, rows + 1, (groups - 1,), generator=gen)).values
        args[2] = torch.cat([cuts, torch.tensor([rows])]).to(args[2].dtype)
    return tuple(args)


CHECK_ARGUMENTS = {aten._grouped_mm.default: _valid_offsets}


@lower(aten._grouped_mm.default)
def _grouped_mm(
    ctx: LowerCtx,
    a: View,
    w: View,
    offs: View | None = None,
    bias: View | None = None,
    out_dtype: Any = None,
) -> View:
    if bias is not None:
        raise SolarError("_grouped_mm with a bias is not supported yet (add the bias after it)")
    return _grouped_gemm(ctx, a, w, offs, ctx.hint, ctx.dtype)


def _grouped_gemm(ctx: LowerCtx, a: View, w: View, offs: View | None, hint: str, dtype: DType) -> View:
    """out[s, n] = Σ_c a[s, c] · w[G(s), c, n] (or a batch of GEMMs without offsets)."""
    if a.rank == 3 and w.rank == 3 and offs is None:  # a batch of GEMMs
        (e, m, k), n = a.shape, w.shape[2]
        return contract(
            ctx.b,
            hint,
            (e, m, n),
            dtype,
            (k,),
            lambda o, r: a.at((o[0], o[1], r[0])),
            lambda o, r: w.at((o[0], r[0], o[2])),
        )
    if not (a.rank == 2 and w.rank == 3 and offs is not None and offs.rank == 1):
        shapes = f"{list(a.shape)} x {list(w.shape)}" + (
            " with offsets" if offs is not None else ""
        )
        raise SolarError(
            f"_grouped_mm of {shapes} is not supported (2-D x 3-D with offsets, the MoE form, and "
            "3-D x 3-D without are)"
        )
    (rows, k), n = a.shape, w.shape[2]
    g = _groups(ctx, offs, rows, hint)
    distinct = routing_k(_offsets_arg(ctx), rows) or 1

    def weight(o: tuple, r: tuple) -> Any:
        group = g.at((o[0],))[0][1]
        src = views.indirect(w, (rows, k, n), lambda i: (group, i[1], i[2]))
        assert src is not None  # a weight view linear in its expert dim (a parameter, a transpose)
        return tuple((gs, _claim(e, g.base, distinct)) for gs, e in src.at((o[0], r[0], o[1])))

    return contract(ctx.b, hint, (rows, n), dtype, (k,), lambda o, r: a.at((o[0], r[0])), weight)


def _claim(expr: Any, group: str, distinct: int) -> Any:
    """The weight load with its group index claiming `distinct` values."""
    if isinstance(expr, Cast):
        return Cast(expr.dtype, _claim(expr.arg, group, distinct))
    if distinct == 1 or not isinstance(expr, Load):
        return expr
    index = tuple(
        Indirect(t.value, t.offset, distinct)
        if isinstance(t, Indirect) and isinstance(t.value, Load) and t.value.tensor == group
        else t
        for t in expr.index
    )
    return Load(expr.tensor, index)


@lower_library("transformers::grouped_mm_fallback", note=NOTES[aten._grouped_mm.default])
def _transformers_grouped_mm(ctx: LowerCtx, a: View, w: View, offs: View) -> View:
    """transformers' grouped GEMM for weights other than bf16 under tracing: the same product as
    aten._grouped_mm (a loop of mm over the groups' rows)."""
    return _grouped_mm(ctx, a, w, offs)


@lower_library("transformers::grouped_mm_fallback_backward", note=NOTES[aten._grouped_mm.default])
def _transformers_grouped_mm_backward(
    ctx: LowerCtx, a: View, w: View, offs: View, grad: View
) -> tuple[View, View]:
    """The gradients of transformers' grouped GEMM: the input's, a grouped GEMM of the output's
    gradient by each group's transposed weight; the weight's, each row's outer product a[s] ⊗
    grad[s] added into its group's slice (S·K·N multiply-adds whatever the offsets: every row
    lies in one group), the groups no row reaches left zero."""
    (rows, k), n = a.shape, grad.shape[1]
    (input_shape, input_dtype), (weight_shape, weight_dtype) = ctx.meta(0), ctx.meta(1)
    grad_input = _grouped_gemm(
        ctx, grad, views.permute(w, (0, 2, 1)), offs, f"{ctx.hint}_input", input_dtype
    )
    g = _groups(ctx, offs, rows, f"{ctx.hint}_weight")
    out = ctx.b.temp(f"{ctx.hint}_weight", weight_shape, weight_dtype)
    zero = [(f"i{d}", size) for d, size in enumerate(weight_shape)]
    ctx.b.emit(zero, out.base, tuple(var(v) for v, _ in zero), Update.ASSIGN, const(0.0))
    group = g.at((var("s"),))[0][1]
    product = mul(a.at((var("s"), var("c"))), grad.at((var("s"), var("n"))))
    ctx.b.emit(
        [("s", rows), ("c", k), ("n", n)], out.base, (Indirect(group), var("c"), var("n")),
        Update.ADD, cast(weight_dtype, product),
    )
    return grad_input, out


__all__: list[str] = ["routing_k"]
