"""The one printer of the IR text form (parsed back by solar.ir.parser; the two round-trip exactly).

    program mm {
      sym M = 128
      input A: f32[M, 64]
      param B: f32[64, 32]
      output C: f32[M, 32]
      @op aten.mm.default id=0 tf32 at "model.py:12"
      for i in 0..M, j in 0..32:
        C[i, j] = 0
      @op aten.mm.default id=0 tf32 at "model.py:12"
      for i in 0..M, j in 0..32, k in 0..64:
        C[i, j] += A[i, k] * B[k, j]
    }

Index expressions are affine: `2*i + j - 1`, `(i // 2)`, `(i + j % 3)`; guards follow `where`.
Value expressions use infix + - * / and function calls for every other scalar op (`exp(x)`,
`max(a, b)`, `where(c, a, b)`, `neg(x)`), `f16(x)` for casts, `index(i - j)` for an index used as a
value, `ind(I[i])` (optionally `+ offset`; `ind(I[i], 2)`: at least 2 distinct values) for a
data-dependent index and `order(x[i, r], r, j)` / `order_desc(...)` for the position along loop `r`
of the key of rank `j` (an order statistic: sort, top-k). An `@op` line names the
frontend op of the next statement, its instance id, `tf32` when the framework lets it use TF32 tensor
cores for fp32 math, the user's source line and (`in "layers.3.mlp"`) the calling module's path.
An in-order loop runs its braced body once per step:

      for t in 0..T in order {
        for i in 0..N:
          h[t + 1, i] = tanh(h[t, i] + x[t, i])
      }"""

from __future__ import annotations

import math

from solar.ir.affine import Affine, Atom, Constraint, FloorDiv, Mod
from solar.ir.nodes import (
    Call,
    Cast,
    Const,
    Expr,
    Index,
    Indirect,
    Load,
    Order,
    Program,
    Seq,
    Stmt,
    Store,
)
from solar.ir.scalar_ops import ScalarOp

INFIX = {ScalarOp.ADD: ("+", 1), ScalarOp.SUB: ("-", 1), ScalarOp.MUL: ("*", 2), ScalarOp.DIV: ("/", 2)}
INDENT = "  "


def format_atom(atom: Atom) -> str:
    match atom:
        case str():
            return atom
        case FloorDiv(expr, d):
            return f"({_operand(expr)} // {d})"
        case Mod(expr, d):
            return f"({_operand(expr)} % {d})"
    raise TypeError(atom)


def _operand(expr: Affine) -> str:
    text = format_affine(expr)
    single = len(expr.terms) == 1 and expr.terms[0][1] == 1 and expr.const == 0
    return text if single or (expr.is_const and expr.const >= 0) else f"({text})"


def format_affine(expr: Affine) -> str:
    parts: list[str] = []
    for atom, coeff in expr.terms:
        body = format_atom(atom)
        mag = abs(coeff)
        text = body if mag == 1 else f"{mag}*{body}"
        if not parts:
            parts.append(text if coeff > 0 else f"-{text}")
        else:
            parts.append(f"+ {text}" if coeff > 0 else f"- {text}")
    if expr.const or not parts:
        if not parts:
            parts.append(str(expr.const))
        else:
            parts.append(f"+ {expr.const}" if expr.const > 0 else f"- {-expr.const}")
    return " ".join(parts)


def format_constraint(c: Constraint) -> str:
    return f"{format_affine(c.expr)} {'==' if c.equality else '>='} 0"


def format_const(value: float | int | bool) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return repr(float(value))


def format_index_term(term: Affine | Indirect) -> str:
    if isinstance(term, Indirect):
        distinct = f", {term.distinct}" if term.distinct > 1 else ""
        text = f"ind({format_expr(term.value)}{distinct})"
        if term.offset != Affine():
            off = format_affine(term.offset)
            text += f" - {off[1:]}" if off.startswith("-") else f" + {off}"
        return text
    return format_affine(term)


def _format_access(tensor: str, index: tuple) -> str:
    return f"{tensor}[{', '.join(format_index_term(t) for t in index)}]"


def _precedence(expr: Expr) -> int:
    if isinstance(expr, Call) and expr.op in INFIX:
        return INFIX[expr.op][1]
    return 3


def format_expr(expr: Expr) -> str:
    match expr:
        case Load(tensor, index):
            return _format_access(tensor, index)
        case Const(value):
            return format_const(value)
        case Index(e):
            return f"index({format_affine(e)})"
        case Cast(dtype, arg):
            return f"{dtype.text}({format_expr(arg)})"
        case Call(op, args) if op in INFIX:
            sym, prec = INFIX[op]
            left, right = args
            ltxt = format_expr(left)
            rtxt = format_expr(right)
            if _precedence(left) < prec:
                ltxt = f"({ltxt})"
            if _precedence(right) <= prec:
                rtxt = f"({rtxt})"
            return f"{ltxt} {sym} {rtxt}"
        case Call(op, args):
            return f"{op.value}({', '.join(format_expr(a) for a in args)})"
        case Order(key, over, rank, descending):
            name = "order_desc" if descending else "order"
            return f"{name}({format_expr(key)}, {over}, {format_affine(rank)})"
    raise TypeError(expr)


def format_stmt(stmt: Stmt, indent: str = "") -> str:
    lines = []
    if stmt.origin is not None:
        o = stmt.origin
        src = f' at "{o.source}"' if o.source else ""
        tf32 = " tf32" if o.allow_tf32 else ""
        module = f' in "{o.module}"' if o.module else ""
        lines.append(f"{indent}@op {o.op} id={o.instance}{tf32}{src}{module}")
    body = f"{_format_access(stmt.target.tensor, stmt.target.index)} {stmt.update.value} {format_expr(stmt.value)}"
    if stmt.loops:
        head = ", ".join(f"{loop.var} in 0..{loop.extent}" for loop in stmt.loops)
        if stmt.guards:
            head += " where " + " and ".join(format_constraint(g) for g in stmt.guards)
        lines.append(f"{indent}for {head}:")
        lines.append(f"{indent}{INDENT}{body}")
    elif stmt.guards:  # no loops of its own, guards on enclosing in-order loop variables
        lines.append(f"{indent}if {' and '.join(format_constraint(g) for g in stmt.guards)}:")
        lines.append(f"{indent}{INDENT}{body}")
    else:
        lines.append(f"{indent}{body}")
    return "\n".join(lines)


def format_program(program: Program) -> str:
    lines = [f"program {program.name} {{"]
    for name, value in program.symbols:
        lines.append(f"{INDENT}sym {name} = {value}")
    for t in program.tensors:
        updates = f" updates {t.updates}" if t.updates else ""
        lines.append(
            f"{INDENT}{t.role.value} {t.name}: {t.dtype.text}[{', '.join(str(s) for s in t.shape)}]{updates}"
        )
    lines.extend(format_node(node, INDENT) for node in program.body)
    lines.append("}")
    return "\n".join(lines) + "\n"


def format_node(node: Stmt | Seq, indent: str = "") -> str:
    """A statement, or an in-order loop `for t in 0..T in order {` with its body indented."""
    if isinstance(node, Stmt):
        return format_stmt(node, indent)
    lines = [f"{indent}for {node.var} in 0..{node.extent} in order {{"]
    lines.extend(format_node(n, indent + INDENT) for n in node.body)
    lines.append(f"{indent}}}")
    return "\n".join(lines)


def format_store(store: Store) -> str:
    return _format_access(store.tensor, store.index)
