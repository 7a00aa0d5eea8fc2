"""Structure propagation (a forward pass): values that are functions of indices only become guards,
and regions where a tensor is a known constant are propagated into the statements that read it.

Three rewrites, each splitting a statement's domain into disjoint pieces that carry guards:

- *index-only temps* (one unguarded assignment over the whole tensor whose value reads no tensor:
  iota, masks built with arange/tril/triu) are inlined into their readers when that costs no
  extra op at any point (in practice: when their comparisons become guards);
- an *affine condition* in a value (`index(j - i) <= 0`) splits the statement into the pieces where
  it is true and where it is false, and the condition is folded away;
- a load of a tensor inside a region where an earlier assignment wrote a constant (and no later
  writer overwrote it) is replaced by the constant in that region, when this makes the piece
  cheaper: a constant assignment, fewer ops, or an accumulation of the identity (dropped).

So `where(j > i, -inf, s)` feeding softmax feeding `p @ v` ends with every statement of the chain
guarded by `j <= i`. Pieces of a statement never read what another piece writes (statements that
read their own target elsewhere than at the written element are left whole)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace

from solar.ir.affine import Affine
from solar.ir.defuse import defuse
from solar.ir.nodes import (
    Cast,
    Const,
    Expr,
    Load,
    Program,
    Role,
    Seq,
    Stmt,
    flatten,
    map_indices,
    nested,
)
from solar.ir.scalar_ops import Update
from solar.passes.fold import complement, find_condition, fold, is_noop, op_count
from solar.passes.fold import replace as replace_expr
from solar.passes.regions import is_empty, meets, pull, store_region, with_guards

MAX_PIECES = 32  # a statement split into more pieces than this is left as it was

Region = tuple[tuple, object]  # (tensor-space piece, constant value)


def propagate(program: Program) -> Program:
    writers = defuse(program).writers
    defs: dict[str, tuple[tuple[Affine | None, ...], Expr]] = {}
    out: list[list[Stmt]] = []
    by_tensor: dict[str, list[Stmt]] = defaultdict(list)
    cache: dict[str, list[Region]] = {}
    entered = None  # the outermost in-order loop being processed
    for (seqs, _), stmt in zip(program.nested(), program.stmts):
        if seqs and seqs[0] is not entered:
            # A later statement of an in-order loop's body writes, at earlier steps, what an earlier
            # one reads at later steps: every write of the body counts as done before any of its
            # reads, and none of them is a known constant (a Cast hides a constant value).
            entered = seqs[0]
            for s in _flat(entered):
                opaque = replace(s, value=Cast(program.tensor(s.target.tensor).dtype, s.value))
                by_tensor[s.target.tensor].append(opaque)
                cache.pop(s.target.tensor, None)
        pieces = _inline_index_only(program, stmt, defs)
        pieces = [q for p in pieces for q in _split_conditions(program, p)]
        pieces = [q for p in pieces for q in _split_constants(program, p, by_tensor, cache)]
        out.append(pieces)
        if seqs:
            continue
        entered = None
        for p in pieces:
            by_tensor[p.target.tensor].append(p)
            cache.pop(p.target.tensor, None)
        if len(pieces) == 1 and len(writers[stmt.target.tensor]) == 1:
            _register_index_only(program, pieces[0], defs)
    return program.with_stmts(out)


def _flat(seq: Seq) -> list[Stmt]:
    return [flatten((seq, *outer), s) for outer, s in nested(seq.body)]


# ---- safety --------------------------------------------------------------------------------------


def _splittable(stmt: Stmt) -> bool:
    """Pieces run one after another; that equals the whole statement when no piece can see another
    piece's writes (loads of the target only at the written element) and no assignment reduces."""
    if stmt.update is Update.ASSIGN and stmt.reduced_vars:
        return False
    if not stmt.target.is_affine:  # a scatter: its points may hit one element, keep it whole
        return False
    return all(
        ld.index == stmt.target.index for ld in stmt.loads() if ld.tensor == stmt.target.tensor
    )


def _piece_count_ok(pieces: list[Stmt]) -> bool:
    return len(pieces) <= MAX_PIECES


# ---- index-only temps ----------------------------------------------------------------------------


def _register_index_only(program: Program, stmt: Stmt, defs: dict) -> None:
    decl = program.tensor(stmt.target.tensor)
    if decl.role is not Role.TEMP or stmt.update is not Update.ASSIGN or stmt.guards:
        return
    if not stmt.target.is_affine:
        return
    if any(True for _ in stmt.loads()) or stmt.reduced_vars:
        return
    shape, extents = program.shape(decl.name), program.extents(stmt)
    dims: list[Affine | None] = []
    for e, size in zip(stmt.target.index, shape):
        if e.is_plain_var and extents[e.terms[0][0]] == size:
            dims.append(e)
        elif e.is_const and size == 1:
            dims.append(None)
        else:
            return
    defs[decl.name] = (tuple(dims), stmt.value)


def _inline(load: Load, definition: tuple[tuple[Affine | None, ...], Expr]) -> Expr | None:
    dims, value = definition
    if not all(isinstance(t, Affine) for t in load.index):
        return None
    mapping = {d.terms[0][0]: t for d, t in zip(dims, load.index) if d is not None}
    return map_indices(value, lambda a: a.substitute(mapping))


def _inline_index_only(program: Program, stmt: Stmt, defs: dict) -> list[Stmt]:
    value = stmt.value
    for ld in dict.fromkeys(ld for ld in stmt.loads() if ld.tensor in defs):
        inlined = _inline(ld, defs[ld.tensor])
        if inlined is not None:
            value = replace_expr(value, ld, inlined)
    if value is stmt.value or not _splittable(stmt):
        return [stmt]
    pieces = _split_conditions(program, replace(stmt, value=fold(value)))
    base = op_count(stmt.value)
    if _piece_count_ok(pieces) and all(op_count(p.value) <= base for p in pieces):
        return pieces
    return [stmt]


# ---- affine conditions ---------------------------------------------------------------------------


def _split_conditions(program: Program, stmt: Stmt) -> list[Stmt]:
    value = fold(stmt.value)
    whole = replace(stmt, value=value) if value != stmt.value else stmt
    if is_noop(stmt.update, value):
        return []
    found = find_condition(value)  # most statements have none: the safety check only then
    if found is None or not _splittable(stmt):
        return [whole]
    node, cond = found
    pieces: list[Stmt] = []
    for regions, truth in ((cond.true, True), (cond.false, False)):
        folded = fold(replace_expr(value, node, Const(truth)))
        for region in regions:
            piece = with_guards(program, replace(stmt, value=folded), region)
            if piece.guards and is_empty(program, piece):
                continue
            pieces += _split_conditions(program, piece)
            if not _piece_count_ok(pieces):
                return [whole]
    return pieces


# ---- constant regions ----------------------------------------------------------------------------


def _const_regions(program: Program, tensor: str, by_tensor: dict, cache: dict) -> list[Region]:
    """Regions of `tensor` where the statements emitted so far leave a known constant."""
    if tensor in cache:
        return cache[tensor]
    ws = by_tensor.get(tensor, [])
    out: list[Region] = []
    for k, w in enumerate(ws):
        if w.update is not Update.ASSIGN or not isinstance(w.value, Const):
            continue
        region = store_region(program, w)
        if region is None or any(meets(program, later, region) for later in ws[k + 1 :]):
            continue
        out.append((region, w.value.value))
    cache[tensor] = out
    return out


def _better(before: Stmt, after: Stmt) -> bool:
    if after.update is Update.ASSIGN and isinstance(after.value, Const):
        return True
    return is_noop(after.update, after.value) or op_count(after.value) < op_count(before.value)


def _split_once(program: Program, stmt: Stmt, by_tensor: dict, cache: dict) -> list[Stmt] | None:
    for ld in dict.fromkeys(stmt.loads()):
        for region, c in _const_regions(program, ld.tensor, by_tensor, cache):
            pulled = pull(region, ld.index)
            if pulled is None:
                continue
            inside = with_guards(
                program, replace(stmt, value=fold(replace_expr(stmt.value, ld, Const(c)))), pulled
            )
            if not _better(stmt, inside) or is_empty(program, inside):
                continue
            rest = [with_guards(program, stmt, piece) for piece in complement(pulled)]
            rest = [r for r in rest if not is_empty(program, r)]
            return ([] if is_noop(inside.update, inside.value) else [inside]) + rest
    return None


def _split_constants(program: Program, stmt: Stmt, by_tensor: dict, cache: dict) -> list[Stmt]:
    if not _splittable(stmt):
        return [stmt]
    work, done = [stmt], []
    while work:
        s = work.pop()
        split = _split_once(program, s, by_tensor, cache)
        if split is None:
            done.append(s)
        else:
            work += split
        if not _piece_count_ok(done + work):
            return [stmt]
    return done
