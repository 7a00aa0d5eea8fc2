"""Sizes as symbols: the model writes IR over named sizes (`sym N = 16`, `input x: f32[N, D]`),
and solar binds them. `solve` reads each symbol's value from the shapes of the data the program is
checked on (inputs in order, parameters by name, outputs in order); `bind` substitutes the values
everywhere (shapes, loop extents, index expressions, guards), giving a program with integer sizes
only. `symbolise` goes the other way for worked examples: sizes equal to a named constant become
that symbol."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from solar.errors import LLMError
from solar.ir.affine import Affine, Constraint, const
from solar.ir.nodes import Loop, Program, Role, TensorDecl
from solar.ir.rewrite import rewrite, rewrite_children


class BindError(LLMError):
    """The IR's declarations do not fit the program's data (rank, a fixed size, a free symbol)."""


def bind(program: Program, values: Mapping[str, int]) -> Program:
    """`program` with every symbol replaced by its integer value (and no `sym` lines)."""
    mapping = {name: const(v) for name, v in values.items()}

    def size(s: Any) -> Any:
        return values.get(s, s) if isinstance(s, str) else s

    def fn(node: Any) -> Any:
        match node:
            case Affine():
                return node.substitute(mapping) if node.variables & mapping.keys() else node
            case Constraint():
                return node.substitute(mapping) if node.variables & mapping.keys() else node
            case Loop(var, extent):
                return Loop(var, size(extent))
            case TensorDecl():
                return dataclasses.replace(node, shape=tuple(size(s) for s in node.shape))
        if dataclasses.is_dataclass(node) and isinstance(getattr(node, "extent", None), str):
            # a loop form other than Loop (e.g. an in-order loop) with a symbolic trip count
            return rewrite_children(dataclasses.replace(node, extent=size(node.extent)), fn)
        return None

    return rewrite(dataclasses.replace(program, symbols=()), fn)


def solve(
    program: Program,
    inputs: Sequence[tuple[int, ...]],
    params: Mapping[str, tuple[int, ...]],
    outputs: Sequence[tuple[int, ...]] | None,
) -> dict[str, int]:
    """The value of every symbol of `program`, read from the shapes its inputs (in declaration
    order), parameters (by name) and outputs (in order; None: not known) have in the program
    being checked."""
    values: dict[str, int] = {}
    ins = program.with_role(Role.INPUT)
    outs = program.with_role(Role.OUTPUT)
    if len(ins) != len(inputs):
        raise BindError(
            f"the IR declares {len(ins)} inputs ({', '.join(t.name for t in ins) or 'none'}) but the "
            f"program takes {len(inputs)} tensor inputs with shapes {', '.join(map(str, inputs))}"
        )
    if outputs is not None and len(outs) != len(outputs):
        raise BindError(
            f"the IR declares {len(outs)} outputs but the program returns {len(outputs)} tensors "
            f"with shapes {', '.join(map(str, outputs))}"
        )
    pairs = [(t, s, f"input {k}") for k, (t, s) in enumerate(zip(ins, inputs))]
    for t in program.with_role(Role.PARAM):
        if t.name not in params:
            raise BindError(
                f"the IR declares param {t.name!r}, but the program's parameters are "
                f"{', '.join(sorted(params)) or 'none'} (write dots as underscores)"
            )
        pairs.append((t, params[t.name], f"parameter {t.name}"))
    pairs += [(t, s, f"output {k}") for k, (t, s) in enumerate(zip(outs, outputs or ()))]
    for decl, shape, what in pairs:
        shape = tuple(int(s) for s in shape)
        if len(decl.shape) != len(shape):
            raise BindError(
                f"{decl.role.value} {decl.name} is declared with rank {len(decl.shape)} "
                f"{list(decl.shape)}, but the program's {what} has shape {shape}"
            )
        for s, actual in zip(decl.shape, shape):
            if isinstance(s, str):
                if values.setdefault(s, actual) != actual:
                    raise BindError(
                        f"size symbol {s} is {values[s]} elsewhere but the program's {what} "
                        f"({decl.name}) has {actual} there (shape {shape})"
                    )
            elif s != actual:
                raise BindError(
                    f"{decl.name} is declared {list(decl.shape)} but the program's {what} has shape "
                    f"{shape}: write sizes as symbols (`sym N = ...`) so that they follow the shapes"
                )
    free = sorted(_used_symbols(program) - values.keys())  # declared and unused: harmless
    if free:
        raise BindError(
            f"size symbol(s) {', '.join(free)} are no dimension of any input, parameter or output; "
            "every symbol must name a dimension of one of them"
        )
    return values


def _used_symbols(program: Program) -> set[str]:
    used: set[str] = set()

    def fn(node: Any) -> Any:
        if isinstance(node, TensorDecl):
            used.update(s for s in node.shape if isinstance(s, str))
        elif dataclasses.is_dataclass(node) and isinstance(getattr(node, "extent", None), str):
            used.add(node.extent)  # a Loop, or another loop form (an in-order loop)
        return None

    rewrite(program, fn)
    return used


def symbolise(program: Program, names: Mapping[int, str]) -> Program:
    """Sizes (tensor dimensions, loop extents) equal to a value of `names` become that symbol, with
    a `sym` line binding it (for worked examples built at distinct small sizes)."""

    def size(s: Any) -> Any:
        return names.get(s, s) if isinstance(s, int) else s

    def fn(node: Any) -> Any:
        match node:
            case TensorDecl():
                return dataclasses.replace(node, shape=tuple(size(s) for s in node.shape))
        if dataclasses.is_dataclass(node) and isinstance(getattr(node, "extent", None), int):
            return rewrite_children(dataclasses.replace(node, extent=size(node.extent)), fn)
        return None

    out = rewrite(program, fn)
    used = _used_symbols(out)
    symbols = tuple((n, v) for v, n in sorted(names.items(), key=lambda kv: kv[1]) if n in used)
    return dataclasses.replace(out, symbols=symbols)
