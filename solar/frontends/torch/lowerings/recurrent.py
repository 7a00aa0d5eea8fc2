"""RNN, GRU and LSTM (nn.RNN/GRU/LSTM: multi-layer, bidirectional, batch_first), lowered whole.

Decomposed, a recurrent net becomes one subgraph per time step (tens of thousands of nodes at 512
steps), and even tracing it costs minutes: the fake-tensor shape propagation of aten.lstm runs its
decomposition step by step. So while tracing, the loader routes torch's recurrent kernels
(`torch._VF.lstm`, ...) to the custom ops `solar::lstm`, `solar::gru`, `solar::rnn_tanh`,
`solar::rnn_relu` (REDIRECT), whose fake implementations only compute shapes and which export keeps
whole; their real implementations call torch's kernels. The aten ops are lowered too (PRESERVE).

Per layer and direction: the input projection of every time step is one contraction (it does not
depend on the recurrence); the recurrence h[s+1] = cell(x[tau(s)] W_ih + h[s] W_hh) is a few
statements inside an in-order loop over the time step `s` (tau(s) = s forwards, T-1-s backwards),
hidden states kept in a temp with T+1 rows (row 0 the initial state). The IR's size does not grow
with T, the counts are exact (T x the body), and the interpreter runs it step by step."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import torch
from torch import Tensor

from solar.errors import UnsupportedOpError
from solar.frontends import views
from solar.frontends.builder import ProgramBuilder, Term, add, call, const, mul, sub
from solar.frontends.torch.context import LowerCtx
from solar.frontends.torch.lowerings.registry import lower
from solar.frontends.views import View
from solar.ir.affine import Affine, var
from solar.ir.dtypes import DType
from solar.ir.scalar_ops import ScalarOp as S
from solar.ir.scalar_ops import Update

aten = torch.ops.aten

PRESERVE = frozenset({aten.lstm.input, aten.gru.input, aten.rnn_tanh.input, aten.rnn_relu.input})


# ---- custom ops the loader routes torch's recurrent kernels to while tracing ---------------------


def _custom_op(name: str, kernel: Callable, states: int) -> None:
    """A custom op `solar::<name>` calling `kernel` (LSTM: two state tensors, others one), whose
    fake implementation only computes shapes."""
    state = list[Tensor] if states == 2 else Tensor
    out = tuple[Tensor, Tensor, Tensor] if states == 2 else tuple[Tensor, Tensor]

    def impl(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
        return kernel(
            input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first
        )

    impl.__annotations__ = dict(
        input=Tensor, hx=state, params=list[Tensor], has_biases=bool, num_layers=int,
        dropout=float, train=bool, bidirectional=bool, batch_first=bool, **{"return": out},
    )
    op = torch.library.custom_op(f"solar::{name}", impl, mutates_args=())

    @op.register_fake
    def _shapes(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
        hs = list(hx) if states == 2 else [hx]
        width = (2 if bidirectional else 1) * hs[0].shape[-1]
        return (input.new_empty(input.shape[:-1] + (width,)), *map(torch.empty_like, hs))


_custom_op("lstm", torch._VF.lstm, 2)
_custom_op("gru", torch._VF.gru, 1)
_custom_op("rnn_tanh", torch._VF.rnn_tanh, 1)
_custom_op("rnn_relu", torch._VF.rnn_relu, 1)
solar = torch.ops.solar

# torch function -> custom op, for the loader (which routes a call only when its argument count
# matches the op's schema: the `.input` form, not packed sequences).
REDIRECT = {
    torch._C._VariableFunctions.lstm: solar.lstm.default,
    torch._C._VariableFunctions.gru: solar.gru.default,
    torch._C._VariableFunctions.rnn_tanh: solar.rnn_tanh.default,
    torch._C._VariableFunctions.rnn_relu: solar.rnn_relu.default,
}


@dataclass
class Step:
    """One time step of one layer and direction (inside the in-order loop over `s`)."""

    b: ProgramBuilder
    loops: list[tuple[str, int]]  # batch + hidden unit
    s: Affine  # step number
    tau: Affine  # time index of the input read at this step
    bi: Affine
    j: Affine
    hidden: int
    xg: View  # input projection (+ bias; + recurrent projection for in-place cells), [T, B, G*H]
    hg: View | None  # recurrent projection kept apart (GRU), [T, B, G*H]
    h: View  # hidden states, [T+1, B, H]
    c: View | None  # cell states (LSTM), [T+1, B, H]
    n: View | None  # GRU candidate state, [T, B, H]

    def gate(self, source: View, row: Affine, k: int) -> Term:
        return source.at((row, self.bi, self.j + k * self.hidden))

    def assign(self, target: View, row: Affine, value: Term) -> None:
        self.b.emit(self.loops, target.base, (row, self.bi, self.j), Update.ASSIGN, value)


def _sigmoid(t: Term) -> Term:
    return call(S.SIGMOID, t)


def _tanh(t: Term) -> Term:
    return call(S.TANH, t)


def _lstm(k: Step) -> None:
    """c' = sigmoid(f) c + sigmoid(i) tanh(g); h' = sigmoid(o) tanh(c')   (gates i, f, g, o)."""
    g = lambda n: k.gate(k.xg, k.tau, n)  # noqa: E731
    c_prev = k.c.at((k.s, k.bi, k.j))
    k.assign(k.c, k.s + 1, add(mul(_sigmoid(g(1)), c_prev), mul(_sigmoid(g(0)), _tanh(g(2)))))
    k.assign(k.h, k.s + 1, mul(_sigmoid(g(3)), _tanh(k.c.at((k.s + 1, k.bi, k.j)))))


def _gru(k: Step) -> None:
    """r = sigmoid(x_r + h_r); n = tanh(x_n + r h_n); z = sigmoid(x_z + h_z);
    h' = (1 - z) n + z h = n + z (h - n)   (gates r, z, n; h_* include b_hh)."""
    x = lambda n: k.gate(k.xg, k.tau, n)  # noqa: E731
    hh = lambda n: k.gate(k.hg, k.s, n)  # noqa: E731
    r = _sigmoid(add(x(0), hh(0)))
    k.assign(k.n, k.s, _tanh(add(x(2), mul(r, hh(2)))))
    n = k.n.at((k.s, k.bi, k.j))
    z = _sigmoid(add(x(1), hh(1)))
    k.assign(k.h, k.s + 1, add(n, mul(z, sub(k.h.at((k.s, k.bi, k.j)), n))))


def _simple(act: Callable[[Term], Term]) -> Callable[[Step], None]:
    def step(k: Step) -> None:
        k.assign(k.h, k.s + 1, act(k.gate(k.xg, k.tau, 0)))

    return step


@dataclass(frozen=True)
class Cell:
    gates: int  # rows of W_ih per hidden unit
    has_cell: bool  # LSTM's second state
    separate_hidden: bool  # the recurrent projection kept apart from the input projection (GRU)
    step: Callable[[Step], None]


LSTM = Cell(4, True, False, _lstm)
GRU = Cell(3, False, True, _gru)
RNN_TANH = Cell(1, False, False, _simple(_tanh))
RNN_RELU = Cell(1, False, False, _simple(lambda t: call(S.MAX, t, 0.0)))
CELLS: dict[Any, Cell] = {
    aten.lstm.input: LSTM,
    solar.lstm.default: LSTM,
    aten.gru.input: GRU,
    solar.gru.default: GRU,
    aten.rnn_tanh.input: RNN_TANH,
    solar.rnn_tanh.default: RNN_TANH,
    aten.rnn_relu.input: RNN_RELU,
    solar.rnn_relu.default: RNN_RELU,
}


def _project(
    b: ProgramBuilder, hint: str, x: View, w: View, init: Callable[[Affine], Term], dtype: DType
) -> View:
    """out[t, b, g] = init(g) + sum_k x[t, b, k] w[g, k], every time step in one contraction."""
    steps, batch, _ = x.shape
    rows = w.shape[0]
    out = b.temp(hint, (steps, batch, rows), dtype)
    t, bi, g, r = var("i0"), var("i1"), var("i2"), var("r0")
    loops = [("i0", steps), ("i1", batch), ("i2", rows)]
    b.emit(loops, out.base, (t, bi, g), Update.ASSIGN, init(g))
    b.emit(
        loops + [("r0", x.shape[2])],
        out.base,
        (t, bi, g),
        Update.ADD,
        mul(x.at((t, bi, r)), w.at((g, r))),
    )
    return out


def _direction(
    ctx: LowerCtx,
    cell: Cell,
    x: View,
    h0: View,
    c0: View | None,
    weights: Sequence[View],
    reverse: bool,
    tag: str,
) -> tuple[View, View | None]:
    """One layer in one direction: the hidden states [T+1, B, H] (and cell states)."""
    b, dtype = ctx.b, x.dtype
    steps, batch, _ = x.shape
    hidden = h0.shape[-1]
    w_ih, w_hh = weights[0], weights[1]
    b_ih, b_hh = (weights[2], weights[3]) if len(weights) == 4 else (None, None)
    if b_ih is None:
        xg_init: Callable[[Affine], Term] = lambda g: const(0.0)  # noqa: E731
    elif cell.separate_hidden:
        xg_init = lambda g: b_ih.at((g,))  # noqa: E731
    else:  # both biases summed once, not at every step
        bsum = b.temp(f"{ctx.hint}_{tag}_bias", b_ih.shape, dtype)
        b.emit(
            [("i0", b_ih.shape[0])],
            bsum.base,
            (var("i0"),),
            Update.ASSIGN,
            add(b_ih.at((var("i0"),)), b_hh.at((var("i0"),))),
        )
        xg_init = lambda g: bsum.at((g,))  # noqa: E731
    xg = _project(b, f"{ctx.hint}_{tag}_x", x, w_ih, xg_init, dtype)

    state = (steps + 1, batch, hidden)
    h = b.temp(f"{ctx.hint}_{tag}_h", state, dtype)
    c = b.temp(f"{ctx.hint}_{tag}_c", state, dtype) if cell.has_cell else None
    bj = [("i1", batch), ("i2", hidden)]
    bi, j = var("i1"), var("i2")
    for target, init in ((h, h0), (c, c0)):
        if target is not None:
            b.emit(bj, target.base, (Affine(), bi, j), Update.ASSIGN, init.at((bi, j)))
    hg = b.temp(f"{ctx.hint}_{tag}_hh", xg.shape, dtype) if cell.separate_hidden else None
    n = (
        b.temp(f"{ctx.hint}_{tag}_n", (steps, batch, hidden), dtype)
        if cell.separate_hidden
        else None
    )

    def emit_step(prefix: list[tuple[str, int]], s: Affine) -> None:
        tau = (steps - 1) - s if reverse else s
        g, r = var("i3"), var("r0")
        rows = w_hh.shape[0]
        loops = prefix + [("i1", batch), ("i3", rows)]
        if hg is not None:  # GRU: h W_hh + b_hh apart from the input projection
            target, row = hg, s
            init = const(0.0) if b_hh is None else b_hh.at((g,))
            b.emit(loops, hg.base, (s, bi, g), Update.ASSIGN, init)
        else:  # accumulate into this step's input projection in place
            target, row = xg, tau
        product = mul(h.at((s, bi, r)), w_hh.at((g, r)))
        b.emit(loops + [("r0", hidden)], target.base, (row, bi, g), Update.ADD, product)
        cell.step(Step(b, prefix + bj, s, tau, bi, j, hidden, xg, hg, h, c, n))

    with b.in_order("s", steps) as s:
        emit_step([], s)
    return h, c


def _outputs(h: View, reverse: bool) -> View:
    """The output of one direction, [T, B, H]: the state after reading time t."""
    steps = h.shape[0] - 1
    if reverse:
        return View(
            (steps,) + h.shape[1:], h.dtype, lambda idx: h.at((steps - idx[0],) + tuple(idx[1:]))
        )
    return views.slice_(h, 0, 1, steps + 1)


def _rnn(
    ctx: LowerCtx,
    op: Any,
    x: View,
    hx: View | Sequence[View],
    params: Sequence[View],
    has_biases: bool,
    num_layers: int,
    dropout: float,
    train: bool,
    bidirectional: bool,
    batch_first: bool,
) -> tuple[View, ...]:
    cell = CELLS[op]
    if dropout and train and num_layers > 1:
        raise UnsupportedOpError(
            f"{op} with dropout={dropout} between layers in training mode draws random "
            "numbers; analyse in eval mode (--mode eval)"
        )
    dirs = 2 if bidirectional else 1
    per = 4 if has_biases else 2
    if len(params) != num_layers * dirs * per:
        raise UnsupportedOpError(f"{op} with projections (proj_size) is not supported yet")
    hx = list(hx) if isinstance(hx, (list, tuple)) else [hx]  # LSTM: [h0, c0]; others: h0
    if batch_first:
        x = views.permute(x, (1, 0, 2))
    finals: list[list[View]] = [[] for _ in hx]
    layer_in = x
    for layer in range(num_layers):
        outs = []
        for d in range(dirs):
            k = layer * dirs + d
            states = [views.select(s, 0, k) for s in hx]
            h, c = _direction(
                ctx,
                cell,
                layer_in,
                states[0],
                states[1] if cell.has_cell else None,
                params[k * per : (k + 1) * per],
                reverse=d == 1,
                tag=f"l{layer}{'r' if d else ''}",
            )
            outs.append(_outputs(h, d == 1))
            for slot, st in zip(finals, (h, c)):
                slot.append(views.unsqueeze(views.select(st, 0, st.shape[0] - 1), 0))
        layer_in = outs[0] if dirs == 1 else views.cat(outs, 2)
    output = views.permute(layer_in, (1, 0, 2)) if batch_first else layer_in
    return tuple([output] + [views.cat(slot, 0) for slot in finals])


def _rule(op: Any) -> Callable[..., tuple[View, ...]]:
    def rule(ctx: LowerCtx, *args: Any) -> tuple[View, ...]:
        return _rnn(ctx, op, *args)

    return rule


for _op in CELLS:
    lower(_op)(_rule(_op))

__all__ = ["CELLS", "PRESERVE", "REDIRECT"]
