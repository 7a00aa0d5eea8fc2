"""Sizes that depend on the data (torch.export's unbacked symbols u0, u1, ...: the rows of
`nonzero`, `masked_select`, `x[mask]`, `unique`, `bincount`, `repeat_interleave` with tensor
repeats): where each is made, the range the program admits, and the value the bound takes."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any, Mapping

import torch

from solar.errors import UnsupportedOpError
from solar.frontends import views
from solar.frontends.torch.context import concrete, dtype_of
from solar.frontends.torch.sources import source_line

aten = torch.ops.aten

# Ops whose output size is data-dependent and whose every admissible size solar can price, each
# with the name the report gives it: the bound takes each size at the least value torch's range
# admits (0 rows unless the program states more: an all-false mask, all-zero repeats).
SIZED_OPS: dict[object, str] = {
    aten.nonzero.default: "nonzero",
    aten.masked_select.default: "masked_select",
    aten.index.Tensor: "x[mask]",
    aten._unique2.default: "unique",
    aten.unique_dim.default: "unique",
    aten.unique_consecutive.default: "unique_consecutive",
    aten.bincount.default: "bincount",
    aten.repeat_interleave.Tensor: "repeat_interleave",
}

# Nodes that only check at run time (export's range assertions on sizes; one_hot's check that its
# indices are in range): they produce nothing, so nothing reaches an output through them.
RUN_TIME_CHECKS = frozenset({
    aten._assert_scalar.default,
    aten.sym_constrain_range_for_size.default,
    aten.sym_constrain_range.default,
    aten._assert_async.default,
    aten._assert_async.msg,
})


@dataclass(frozen=True, slots=True)
class DataSize:
    """One data-dependent size: its symbol, the op and source line that make it, the range torch
    proved for it (`upper` None: unbounded) and the value the bound takes (the least admissible)."""

    symbol: str
    op: str
    source: str
    lower: int
    upper: int | None
    value: int

    def where(self) -> tuple[str, str, int, int | None]:
        """What sizes made by one line share: the op, the source line, the range."""
        return (self.op, self.source.split(": ", 1)[0], self.lower, self.upper)


def _names(symbols: list[str]) -> str:
    return ", ".join(symbols) if len(symbols) <= 4 else f"{symbols[0]} … {symbols[-1]} ({len(symbols)} sizes)"


def describe(sizes: tuple[DataSize, ...]) -> str:
    """The sizes, those of one op, line and range together: `u0 = rows of nonzero at m.py:12,
    0 ≤ u0 ≤ 4096`; `u0, u1 = rows of ..., each 0 ≤ u ≤ 4096`."""
    groups: dict[tuple, list[str]] = {}
    for s in sizes:
        groups.setdefault(s.where(), []).append(s.symbol)
    parts = []
    for (op, at, lower, upper), symbols in groups.items():
        one = symbols[0] if len(symbols) == 1 else "u"
        high = f" ≤ {upper}" if upper is not None else ""
        each = "" if len(symbols) == 1 else "each "
        parts.append(f"{_names(symbols)} = rows of {op}" + (f" at {at}" if at else "")
                     + f", {each}{lower} ≤ {one}{high}")
    values: dict[int, list[str]] = {}
    for s in sizes:
        values.setdefault(s.value, []).append(s.symbol)
    taken = ", ".join(f"{_names(symbols)} = {v}" + (" each" if len(symbols) > 1 else "")
                      for v, symbols in values.items())
    return "; ".join(parts) + f"; bound at the least ({taken})"


def empty_result(val: Any, sizes: Mapping[str, int]) -> Any:
    """The value of a node none of whose outputs has an element at the sizes taken (a tensor, or a
    tuple or list of them: empty views, which hold nothing to compute), or None when one has."""
    tensors = list(val) if isinstance(val, (tuple, list)) else [val]
    if not tensors or not all(isinstance(t, torch.Tensor) for t in tensors):
        return None
    shapes = [tuple(concrete(d, sizes) for d in t.shape) for t in tensors]
    if not all(0 in shape for shape in shapes):
        return None
    out = [views.constant(0, shape, dtype_of(t.dtype)) for shape, t in zip(shapes, tensors)]
    return out[0] if not isinstance(val, (tuple, list)) else type(val)(out)


def _checked_only(node: torch.fx.Node) -> bool:
    """A scalar read from the data (`.item()`) whose value reaches run-time checks only (through
    size arithmetic): a check such as transformers' torch_compilable_check, not a size."""
    users = list(node.users)
    while users:
        user = users.pop()
        if user.target in RUN_TIME_CHECKS:
            continue
        if isinstance(user.meta.get("val"), torch.Tensor) or user.op != "call_function":
            return False
        users.extend(user.users)
    return True


def checked_scalars(exported: torch.export.ExportedProgram) -> dict[str, int]:
    """Each scalar read from the data that only run-time checks use -> 1: the checks pass on the
    run the bound describes, and nothing the program computes depends on the value."""
    out: dict[str, int] = {}
    for node in exported.graph.nodes:
        if node.target is aten._local_scalar_dense.default and _checked_only(node):
            val = node.meta.get("val")
            # the symbol it binds, and those its value is written in (a re-traced program's names)
            free = val.node.expr.free_symbols if isinstance(val, (torch.SymInt, torch.SymBool)) else ()
            out.update({str(sym): 1 for sym in (*(node.meta.get("unbacked_bindings") or {}), *free)})
    return out


def _bound(value: Any) -> int | None:
    """An end of torch's value range as an int; None where it is unbounded (int_oo)."""
    numbers = sys.modules.get("torch.utils._sympy.numbers")  # loaded wherever a size is unbacked
    if numbers is not None and value in (numbers.int_oo, -numbers.int_oo):
        return None
    return int(value)


def data_sizes(exported: torch.export.ExportedProgram, source_file: str | None) -> tuple[DataSize, ...]:
    """Every unbacked size of the program, in the order its ops run. An unbacked size made by an
    op outside SIZED_OPS (`.item()` used as a size) is refused with the op and source line."""
    ranges = {str(k): v for k, v in exported.range_constraints.items()}
    found: list[DataSize] = []
    for node in exported.graph.nodes:
        made = node.meta.get("unbacked_bindings") or {}
        for sym in made:
            src = source_line(node, source_file)
            if node.target is aten._local_scalar_dense.default and _checked_only(node):
                continue
            if node.target not in SIZED_OPS:
                raise UnsupportedOpError(
                    f"a size that depends on the data comes from {node.target}"
                    + (f" at {src}" if src else "")
                    + "; solar prices data-dependent sizes of nonzero, masked_select, boolean-mask "
                    "indexing, unique, bincount and repeat_interleave only"
                )
            r = ranges.get(str(sym))
            lower = max(0, _bound(r.lower) or 0) if r is not None else 0
            upper = _bound(r.upper) if r is not None else None
            found.append(DataSize(str(sym), SIZED_OPS[node.target], src, lower, upper, lower))
    return tuple(found)


def substitution(sizes: tuple[DataSize, ...]) -> dict[str, int]:
    """Each data-dependent symbol's name -> the value the bound takes for it."""
    return {s.symbol: s.value for s in sizes}


def size_notes(exported: torch.export.ExportedProgram, source_file: str | None) -> list[str]:
    """Assumption lines: the data-dependent sizes and what the bound assumed of them, and that the
    work behind them falls to none (one line), or nothing for a program without such sizes."""
    sizes = data_sizes(exported, source_file)
    if not sizes:
        return []
    lines = ["data-dependent sizes: " + describe(sizes)]
    if any(s.value == 0 for s in sizes):
        lines.append(
            "data-dependent sizes at 0: the work on those rows counts as none, since no constraint "
            "solar uses forbids 0 rows (a sum of sizes, such as per-expert counts after a top-k "
            "adding up to tokens × k, is not used); the tensors that decide the sizes are still read"
        )
    return lines


__all__ = ["DataSize", "SIZED_OPS", "RUN_TIME_CHECKS", "checked_scalars", "data_sizes", "empty_result", "size_notes", "substitution"]
