"""Sinking elementwise producers into readers that need few of their elements: a temp written by
one unguarded assignment over its whole box, and read at fewer points than it has elements (a
gather of one class per row after log_softmax, a few rows of a large elementwise result), is
computed where it is read instead. That costs the producer's ops per *read* point, not per
element, which is what an implementation that computes only the needed elements does; the temp
then becomes dead. Data-dependent reads are followed: `T[n, ind(t[n])]` with
T[n, c] = x[n, c] - s[n] becomes x[n, ind(t[n])] - s[n]."""

from __future__ import annotations

from dataclasses import replace

from solar.errors import NotAffineError
from solar.ir.affine import Affine, var
from solar.ir.defuse import defuse
from solar.ir.nodes import Call, Cast, Expr, Index, IndexTerm, Indirect, Load, Program, Role, Stmt
from solar.ir.scalar_ops import Update
from solar.passes.fold import op_count
from solar.passes.fold import replace as replace_expr
from solar.passes.regions import points


def sink(program: Program) -> Program:
    stmts = list(program.stmts)
    du = defuse(program)
    # In-order loops are a barrier: a value computed at one step may be read at a later one, after
    # its sources changed, so producers and readers inside them are left alone.
    ordered = {i for i, (seqs, _) in enumerate(program.nested()) if seqs}
    reading = {t: list(rs) for t, rs in du.readers.items()}
    for tensor, ws in du.writers.items():
        if len(ws) != 1 or program.tensor(tensor).role is not Role.TEMP:
            continue
        w = ws[0]
        if w in ordered or any(i in ordered for i in reading.get(tensor, ())):
            continue
        mapping = _definition(program, stmts[w])
        if mapping is None or op_count(stmts[w].value) == 0:
            continue
        readers = [(i, stmts[i]) for i in reading.get(tensor, ()) if i != w]
        if not readers or not _cheaper(program, stmts[w], tensor, readers):
            continue
        rewritten = _rewrite(program, stmts, w, mapping, tensor, readers)
        if rewritten is not None:
            for i, s in rewritten.items():
                stmts[i] = s
                for t in dict.fromkeys(ld.tensor for ld in s.loads()):
                    if i not in reading.setdefault(t, []):
                        reading[t].append(i)
    return program.with_stmts(stmts)


def _definition(program: Program, stmt: Stmt) -> tuple[str, ...] | None:
    """The loop variable of each target dim when `stmt` assigns every element of its target once
    (no guards, no reduction), else None."""
    if stmt.update is not Update.ASSIGN or stmt.guards or stmt.reduced_vars:
        return None
    if not stmt.target.is_affine:  # a data-dependent store (scatter)
        return None
    extents = program.extents(stmt)
    shape = program.shape(stmt.target.tensor)
    names = []
    for e, size in zip(stmt.target.index, shape):
        if not e.is_plain_var or extents[e.terms[0][0]] != size:
            return None
        names.append(e.terms[0][0])
    return tuple(names) if len(set(names)) == len(names) == len(stmt.loop_vars) else None


def _cheaper(
    program: Program, producer: Stmt, tensor: str, readers: list[tuple[int, Stmt]]
) -> bool:
    reads = sum(
        points(program, s) * sum(1 for ld in s.loads() if ld.tensor == tensor) for _, s in readers
    )
    return reads < points(program, producer)


def _rewrite(
    program: Program,
    stmts: list[Stmt],
    w: int,
    names: tuple[str, ...],
    tensor: str,
    readers: list[tuple[int, Stmt]],
) -> dict[int, Stmt] | None:
    producer = stmts[w]
    sources = {ld.tensor for ld in producer.loads()}
    out: dict[int, Stmt] = {}
    for i, reader in readers:
        if i < w or any(stmts[k].target.tensor in sources for k in range(w + 1, i)):
            return None  # a source changes between the producer and this reader
        value = reader.value
        for ld in dict.fromkeys(ld for ld in reader.loads() if ld.tensor == tensor):
            try:
                inlined = _substitute(producer.value, dict(zip(names, ld.index)))
            except NotAffineError:
                return None
            value = replace_expr(value, ld, inlined)
        out[i] = replace(reader, value=value)
    return out


def _substitute(expr: Expr, mapping: dict[str, IndexTerm]) -> Expr:
    """`expr` with loop variables replaced by index terms (affine or data-dependent)."""
    affine = {v: t for v, t in mapping.items() if isinstance(t, Affine)}
    indirect = {v: t for v, t in mapping.items() if isinstance(t, Indirect)}

    def term(t: IndexTerm) -> IndexTerm:
        if isinstance(t, Indirect):
            if t.offset.variables & indirect.keys():
                raise NotAffineError("a data-dependent index inside an indirect offset")
            return Indirect(_substitute(t.value, mapping), t.offset.substitute(affine))
        used = t.variables & indirect.keys()
        if not used:
            return t.substitute(affine)
        v = next(iter(used))
        rest = t - var(v)
        if len(used) > 1 or t.coefficient(v) != 1 or rest.variables & indirect.keys():
            raise NotAffineError(f"{t} uses a data-dependent index non-linearly")
        target = indirect[v]
        return Indirect(target.value, target.offset + rest.substitute(affine))

    match expr:
        case Load(tensor, index):
            return Load(tensor, tuple(term(t) for t in index))
        case Index(e):
            if e.variables & indirect.keys():
                raise NotAffineError("a data-dependent index used as a value")
            return Index(e.substitute(affine))
        case Call(op, args):
            return Call(op, tuple(_substitute(a, mapping) for a in args))
        case Cast(dtype, arg):
            return Cast(dtype, _substitute(arg, mapping))
    return expr
