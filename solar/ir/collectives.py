"""Collectives: what moves between the ranks of a sharded program, their text form, their checks,
and the interpreter of a sharded program on simulated ranks.

A `Sharded` program is one rank's `Program` (every rank runs the same one on its own shard of the
data) and its collectives. Each collective writes its `out` tensor from its `arg` tensor across a
group of ranks; in the rank's program `out` is written by exactly one statement, its *local part*
(origin op: `origin_op`): an identity copy of `arg` into the shape of `out` (all-gather: `arg`
into every chunk; reduce-scatter: every chunk of `arg` in turn, the last one kept), which reads
every element the collective sends and writes every element it delivers, and computes nothing. Counting analyses price that statement like any other; the movement between
ranks is priced from the collective (solar.backends.collectives). The interpreter runs the program
on every rank and, at a local part, computes the collective's real result from all ranks' values."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum

import numpy as np

from solar.errors import IRSyntaxError, IRVerifyError
from solar.ir.affine import Affine, var
from solar.ir.interp import allocate, run_node
from solar.ir.nodes import Load, Loop, Origin, Program, Role, Stmt, Store
from solar.ir.parser import parse_program
from solar.ir.printer import format_program
from solar.ir.scalar_ops import Update
from solar.ir.verify import verify

MAX_WORLD = 1 << 20


class Kind(Enum):
    ALL_REDUCE = "all_reduce"
    ALL_GATHER = "all_gather"
    REDUCE_SCATTER = "reduce_scatter"
    ALL_TO_ALL = "all_to_all"
    SEND_RECV = "send_recv"  # each rank sends `arg` to the next rank of its group, `shift` places on


# Facts per kind: does it reduce; how `out`'s size along `dim` relates to `arg`'s (n = group size).
REDUCES = {Kind.ALL_REDUCE: True, Kind.REDUCE_SCATTER: True}
DIM_SCALE = {Kind.ALL_GATHER: (1, 0), Kind.REDUCE_SCATTER: (0, 1)}  # (out = arg * n, arg = out * n)
REDUCTIONS = {Update.ADD: np.add, Update.MAX: np.maximum, Update.MIN: np.minimum}
_REDUCE_NAMES = {Update.ADD: "sum", Update.MAX: "max", Update.MIN: "min"}


@dataclass(frozen=True, slots=True)
class Collective:
    """`out = kind(arg)` over each group of `groups` (a partition of the ranks into groups of one
    size): `reduce` for all-reduce and reduce-scatter, `dim` the dimension gathered, scattered or
    exchanged, `shift` for send/recv (rank at group position p sends to position p + shift)."""

    kind: Kind
    out: str
    arg: str
    groups: tuple[tuple[int, ...], ...]
    reduce: Update = Update.ADD
    dim: int = 0
    shift: int = 1

    @property
    def size(self) -> int:
        return len(self.groups[0])

    def group_of(self, rank: int) -> tuple[int, ...]:
        return next(g for g in self.groups if rank in g)


@dataclass(frozen=True, slots=True)
class Sharded:
    """One rank's program of a `world`-rank SPMD program, and its collectives in program order."""

    program: Program
    collectives: tuple[Collective, ...]
    world: int

    def __str__(self) -> str:
        return format_sharded(self)


# ---- local parts ---------------------------------------------------------------------------------


def local_part(c: Collective, arg_shape: Sequence[int], instance: int = 0, source: str = "") -> Stmt:
    """The statement that writes `c.out` on one rank: a copy of `arg` (see the module docstring)."""
    names = [f"i{d}" for d in range(len(arg_shape))]
    loops = [Loop(v, n) for v, n in zip(names, arg_shape)]
    src: list[Affine] = [var(v) for v in names]
    dst: list[Affine] = list(src)
    if c.kind is Kind.ALL_GATHER:
        loops.insert(0, Loop("r", c.size))
        dst[c.dim] = var("r") * arg_shape[c.dim] + var(names[c.dim])
    elif c.kind is Kind.REDUCE_SCATTER:
        chunk = arg_shape[c.dim] // c.size
        loops.insert(0, Loop("r", c.size))
        loops[c.dim + 1] = Loop(names[c.dim], chunk)
        src[c.dim] = var("r") * chunk + var(names[c.dim])
    origin = Origin(origin_op(c), instance, source)
    return Stmt(tuple(loops), Store(c.out, tuple(dst)), Update.ASSIGN, Load(c.arg, tuple(src)), (), origin)


# A local part built by a frontend names its collective in its origin op: `collective KIND(...) groups
# ...`, the text of format_collective without the tensors, so that the collective survives every
# rewrite that keeps origins (layer stitching copies statements with their origins).
ORIGIN_PREFIX = "collective "
# The origin op of a statement that copies a collective's argument (a view) into a tensor first:
# part of the collective's kernel, not a collective of its own.
INPUT_PREFIX = "input of "


def origin_op(c: Collective) -> str:
    return ORIGIN_PREFIX + format_collective(c).split(" = ", 1)[1].replace(f"({c.arg}", "(_", 1)


def collectives_of(program: Program) -> tuple[Collective, ...]:
    """The collectives whose local parts `program` holds (statements whose origin op names one),
    in program order."""
    found = []
    for stmt in program.stmts:
        op = stmt.origin.op if stmt.origin else ""
        if not op.startswith(ORIGIN_PREFIX):
            continue
        arg = next(iter({ld.tensor for ld in stmt.loads()}), None)
        if arg is None:
            raise IRVerifyError(f"the local part of {op!r} reads no tensor")
        line = f"collective {stmt.target.tensor} = {op[len(ORIGIN_PREFIX):].replace('(_', f'({arg}', 1)}"
        found.append(_parse_line(line, 0))
    return tuple(found)


def sharded_of(program: Program, world: int) -> Sharded:
    """`program` (one rank's, its local parts named in their origins) as a sharded program."""
    return Sharded(program, collectives_of(program), world)


def full_bytes(c: Collective, program: Program) -> float:
    """S of `c` in `program`, in bytes: the full buffer (the input of all-reduce, reduce-scatter,
    all-to-all and send/recv; the output of all-gather), the size nccl-tests reports."""
    arg = program.numel(c.arg) * program.tensor(c.arg).dtype.bytes
    return arg * c.size if c.kind is Kind.ALL_GATHER else arg


def writer(program: Program, tensor: str) -> list[int]:
    return [k for k, s in enumerate(program.stmts) if s.target.tensor == tensor]


# ---- checks --------------------------------------------------------------------------------------


def verify_sharded(sharded: Sharded) -> None:
    """The rank program verifies, and every collective is well formed: a partition of the ranks into
    equal groups, tensors of one dtype whose shapes agree with the kind, and `out` written only by
    the collective's local part. A problem raises IRVerifyError naming the collective."""
    program = sharded.program
    verify(program)
    if not 1 <= sharded.world <= MAX_WORLD:
        raise IRVerifyError(f"world {sharded.world}: must be 1..{MAX_WORLD}")
    for number, c in enumerate(sharded.collectives, 1):
        problem = _problem(program, c, sharded.world)
        if problem:
            raise IRVerifyError(f"collective {number} ({format_collective(c)}): {problem}")


def _problem(program: Program, c: Collective, world: int) -> str | None:
    ranks = sorted(r for g in c.groups for r in g)
    if ranks != list(range(world)) or len({len(g) for g in c.groups}) != 1:
        return f"groups must split ranks 0..{world - 1} into groups of one size, each rank once"
    for name in (c.arg, c.out):
        if name not in {t.name for t in program.tensors}:
            return f"no tensor {name!r} in the program"
    if c.out == c.arg:
        return "out and arg must be different tensors (the local part copies one into the other)"
    a, o = program.tensor(c.arg), program.tensor(c.out)
    if a.dtype is not o.dtype:
        return f"{c.arg} is {a.dtype.value} but {c.out} is {o.dtype.value}"
    if o.role in (Role.INPUT, Role.PARAM):
        return f"{c.out} is an {o.role.value}; a collective writes a temp or an output"
    if c.kind in REDUCES and c.reduce not in REDUCTIONS:
        return f"reduction {c.reduce.value!r}: use sum, max or min"
    ashape, oshape = program.shape(c.arg), program.shape(c.out)
    if not 0 <= c.dim < max(len(ashape), 1):
        return f"dim {c.dim} is outside {c.arg}'s {len(ashape)} dimensions"
    want = list(ashape)
    if c.kind in DIM_SCALE:
        grow, shrink = DIM_SCALE[c.kind]
        if shrink and ashape[c.dim] % c.size:
            return f"{c.arg}'s dim {c.dim} ({ashape[c.dim]}) does not split into {c.size} chunks"
        want[c.dim] = ashape[c.dim] * c.size if grow else ashape[c.dim] // c.size
    if c.kind is Kind.ALL_TO_ALL and ashape[c.dim] % c.size:
        return f"{c.arg}'s dim {c.dim} ({ashape[c.dim]}) does not split into {c.size} chunks"
    if list(oshape) != want:
        return f"{c.out} has shape {list(oshape)}; {c.kind.value} of {c.arg} {list(ashape)} gives {want}"
    writes = writer(program, c.out)
    if len(writes) != 1 or not _is_copy(program.stmts[writes[0]], c):
        return f"{c.out} must be written by exactly one statement, the collective's local part (a copy of {c.arg})"
    return None


def _is_copy(stmt: Stmt, c: Collective) -> bool:
    """A statement that assigns loads of `c.arg` and computes nothing (the form of a local part;
    a frontend's builder may drop its loops of extent 1)."""
    return stmt.update is Update.ASSIGN and isinstance(stmt.value, Load) and stmt.value.tensor == c.arg


# ---- text form -----------------------------------------------------------------------------------


def format_collective(c: Collective) -> str:
    op = f"{c.kind.value}.{_REDUCE_NAMES[c.reduce]}" if c.kind in REDUCES else c.kind.value
    extra = f", dim={c.dim}" if c.kind in DIM_SCALE or c.kind is Kind.ALL_TO_ALL else ""
    extra += f", shift={c.shift}" if c.kind is Kind.SEND_RECV else ""
    groups = "|".join(",".join(map(str, g)) for g in c.groups)
    return f"{c.out} = {op}({c.arg}{extra}) groups {groups}"


def format_sharded(sharded: Sharded) -> str:
    head = [f"world {sharded.world}"] + [f"collective {format_collective(c)}" for c in sharded.collectives]
    return "\n".join(head) + "\n" + format_program(sharded.program)


_NAME = r"[A-Za-z_][A-Za-z0-9_.]*"
_LINE = re.compile(
    rf"^collective ({_NAME}) = ([a-z_]+)(?:\.(sum|max|min))?\(({_NAME})((?:, (?:dim|shift)=-?\d{{1,6}})*)\)"
    r" groups (\d{1,7}(?:[,|]\d{1,7})*)$"
)
_KINDS = {k.value: k for k in Kind}
_UPDATES = {v: k for k, v in _REDUCE_NAMES.items()}


def parse_sharded(text: str) -> Sharded:
    """The inverse of format_sharded; a malformed header line raises IRSyntaxError naming it."""
    lines = text.split("\n")
    first = lines[0].strip() if lines else ""
    m = re.fullmatch(r"world (\d{1,7})", first)
    if not m:
        raise IRSyntaxError("line 1: a sharded program starts with `world N` (N ranks); add it")
    collectives, k = [], 1
    while k < len(lines) and lines[k].startswith("collective"):
        collectives.append(_parse_line(lines[k].strip(), k + 1))
        k += 1
    return Sharded(parse_program("\n".join(lines[k:])), tuple(collectives), int(m.group(1)))


def _parse_line(line: str, number: int) -> Collective:
    m = _LINE.match(line)
    if not m or m.group(2) not in _KINDS:
        raise IRSyntaxError(
            f"line {number}: expected `collective OUT = KIND[.sum|.max|.min](ARG[, dim=D][, shift=S]) "
            f"groups 0,1|2,3`, got {line[:80]!r}"
        )
    out, kind, reduce, arg, opts, groups = m.groups()
    options = dict(re.findall(r"(dim|shift)=(-?\d+)", opts))
    kind = _KINDS[kind]
    if (reduce is not None) != (kind in REDUCES):
        raise IRSyntaxError(f"line {number}: {kind.value} takes {'a' if kind in REDUCES else 'no'} reduction")
    return Collective(
        kind, out, arg,
        tuple(tuple(int(r) for r in g.split(",")) for g in groups.split("|")),
        _UPDATES[reduce] if reduce else Update.ADD,
        int(options.get("dim", 0)),
        int(options.get("shift", 1)),
    )


# ---- simulated ranks -----------------------------------------------------------------------------


def run_ranks(sharded: Sharded, inputs: Sequence[Mapping[str, np.ndarray]]) -> list[dict[str, np.ndarray]]:
    """Run the rank program on each of `world` simulated ranks (inputs[r]: rank r's shard of every
    input and param); each collective's local part is replaced by the collective's result across its
    group. Returns each rank's outputs."""
    program = sharded.program
    if len(inputs) != sharded.world:
        raise IRVerifyError(f"run_ranks: {len(inputs)} input sets for {sharded.world} ranks")
    by_out = {c.out: c for c in sharded.collectives}
    nested = {s.target.tensor for seqs, s in program.nested() if seqs}
    if nested & set(by_out):
        raise IRVerifyError("run_ranks: a collective inside an in-order loop is not supported yet")
    arrays = [allocate(program, inp) for inp in inputs]
    for node in program.body:
        c = by_out.get(node.target.tensor) if isinstance(node, Stmt) else None
        if c is None:
            for a in arrays:
                run_node(program, node, a)
            continue
        for rank, value in enumerate(exchange(c, [a[c.arg] for a in arrays])):
            arrays[rank][c.out][...] = value
    return [{t.name: a[t.name] for t in program.with_role(Role.OUTPUT)} for a in arrays]


def exchange(c: Collective, values: Sequence[np.ndarray]) -> list[np.ndarray]:
    """The value of `c.out` on every rank, given the value of `c.arg` on every rank."""
    out: list[np.ndarray] = [np.empty(0)] * len(values)
    for group in c.groups:
        mine = [values[r] for r in group]
        n = len(group)
        for p, rank in enumerate(group):
            out[rank] = _one(c, mine, p, n)
    return out


def _one(c: Collective, mine: list[np.ndarray], p: int, n: int) -> np.ndarray:
    if c.kind is Kind.ALL_REDUCE:
        return REDUCTIONS[c.reduce].reduce(np.stack(mine), axis=0)
    if c.kind is Kind.ALL_GATHER:
        return np.concatenate(mine, axis=c.dim)
    if c.kind is Kind.REDUCE_SCATTER:
        return np.split(REDUCTIONS[c.reduce].reduce(np.stack(mine), axis=0), n, axis=c.dim)[p]
    if c.kind is Kind.ALL_TO_ALL:
        return np.concatenate([np.split(v, n, axis=c.dim)[p] for v in mine], axis=c.dim)
    return mine[(p - c.shift) % n]  # send/recv: position p receives from p - shift
