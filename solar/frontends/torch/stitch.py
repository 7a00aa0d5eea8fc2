"""Structure sharing of repeated layers at the trace level: a model whose N layers are provably
identical up to renaming is traced with TRACED layers only (first, two interior, last), lowered and
optimised, and the program of N layers is stitched from that one by copying interior layer 1 for
layers 2 .. N-2 and renaming the last layer to N-1.

The traced program must show the shape the stitching relies on, or `NotShareable` says why (the
caller then traces every layer):
- statements of layer l (by `Origin.module`, `<prefix><l>.*`) form one run, in layer order, with
  top-level statements only before layer 0 and after the last layer;
- a tensor belongs to the layer that writes it (params and inputs: to the one layer that reads
  them; read by several, or by top-level code, they are shared and never copied); layer l reads
  only its own, layer l-1's, layer 0's (never copied: T5's position bias, computed by the first
  block for all) and shared tensors, and top-level code after the layers only the last layer's,
  layer 0's and shared ones;
- interior layers 1 and 2 are equal statement by statement up to a bijective renaming that maps
  layer 1's tensors to layer 2's, layer 0's to layer 1's (or, read by both, to themselves) and
  shared tensors to themselves, with
  equal declarations, op instances shifted by one constant and module paths differing only in the
  layer index.
Copy k of layer 1 then names layer 1's params and inputs as the model does (`layers_1_` ->
`layers_k_`, `kv_2` -> `kv_2k`: the numbers that differ between a layer-1 name and its layer-2
counterpart step by their difference per layer), its temps and outputs `l<k>_<name>`, reads the
previous copy's tensors where layer 1 read layer 0's, and shifts op instances by (k-1) x the
shift; the last layer and what follows shift by (N-TRACED) x it. Whether the *modules* are
identical (class, parameter shapes, per-layer config) is the caller's to check before tracing
(`layer_signature`)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from solar.frontends.torch.convert import convert_returning, drop_unread
from solar.frontends.torch.eager import eager_calls, innermost
from solar.frontends.torch.traced import Traced
from solar.ir.nodes import (
    Call,
    Cast,
    Const,
    Expr,
    Index,
    Indirect,
    Load,
    Order,
    Origin,
    Program,
    Role,
    Seq,
    Stmt,
    Store,
    TensorDecl,
    rebuild,
)
from solar.ir.verify import verify
from solar.passes import PIPELINE, optimize, sink

TRACED = 4  # layers traced: 0 (first), 1 (the template), 2 (checks it), 3 (last)


class NotShareable(Exception):
    """The traced program does not have the structure stitching needs (the message says what)."""


# ---- renaming ------------------------------------------------------------------------------------


def _expr(e: Expr, fn: Callable[[str], str]) -> Expr:
    match e:
        case Load(tensor, index):
            return Load(fn(tensor), _index(index, fn))
        case Call(op, args):
            return Call(op, tuple(_expr(a, fn) for a in args))
        case Cast(dtype, arg):
            return Cast(dtype, _expr(arg, fn))
        case Order():
            return replace(e, key=_expr(e.key, fn))
        case Const() | Index():
            return e
    raise NotShareable(f"no renaming for a {type(e).__name__} expression")


def _index(index: tuple, fn: Callable[[str], str]) -> tuple:
    if all(not isinstance(t, Indirect) for t in index):
        return index
    return tuple(replace(t, value=_expr(t.value, fn)) if isinstance(t, Indirect) else t for t in index)


def renamed(stmt: Stmt, fn: Callable[[str], str], origin: Origin | None) -> Stmt:
    """`stmt` with every tensor name mapped by `fn` (its store first, then its value's loads in
    walk order) and its origin replaced."""
    target = Store(fn(stmt.target.tensor), _index(stmt.target.index, fn))
    return replace(stmt, target=target, value=_expr(stmt.value, fn), origin=origin)


def _skeleton(stmt: Stmt, layer_path: Callable[[str], str]) -> tuple[Stmt, list[str]]:
    """The statement with names blanked and its origin's instance and layer index dropped, and
    the names in the order they were blanked."""
    names: list[str] = []

    def take(n: str) -> str:
        names.append(n)
        return ""

    o = stmt.origin
    origin = None if o is None else replace(o, instance=0, module=layer_path(o.module))
    return renamed(stmt, take, origin), names


_NUMBER = re.compile(r"(\d+)")


def stepped(first: str, second: str, k: int) -> str | None:
    """The name of layer k's counterpart of `first` (layer 1's) given `second` (layer 2's): every
    number that differs between the two steps by its difference per layer (None where the two
    names do not differ in numbers only)."""
    a, b = _NUMBER.split(first), _NUMBER.split(second)
    if len(a) != len(b) or a[0::2] != b[0::2]:
        return None
    out = list(a)
    for i in range(1, len(a), 2):
        x, y = int(a[i]), int(b[i])
        out[i] = str(x + (k - 1) * (y - x))
    return "".join(out)


# ---- the plan ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Layout:
    """Where the layers of the traced program are: `prefix` names the layer list in module paths
    (`lm.model.layers.`), `layer[i]` is statement i's layer (None: top level)."""

    prefix: str

    def layer(self, module: str) -> int | None:
        if not module.startswith(self.prefix):
            return None
        head = module[len(self.prefix):].split(".", 1)[0]
        return int(head) if head.isdigit() else None

    def moved(self, module: str, src: int, dst: int) -> str:
        """`module` of layer `src` as the same module of layer `dst`."""
        head = f"{self.prefix}{src}"
        assert module == head or module.startswith(head + "."), module
        return f"{self.prefix}{dst}{module[len(head):]}"

    def blank(self, module: str) -> str:
        ell = self.layer(module)
        return module if ell is None else self.moved(module, ell, -1)


def _runs(labels: Sequence[int | None], what: str) -> tuple[int, list[tuple[int, int]], int]:
    """(end of the top-level head, [start, stop) of each layer's run, start of the top-level tail)
    of a sequence of layer labels, which must read None* 0+ 1+ ... (T-1)+ None*."""
    spans: list[tuple[int, int]] = []
    i, n = 0, len(labels)
    while i < n and labels[i] is None:
        i += 1
    head = i
    for ell in range(TRACED):
        j = i
        while j < n and labels[j] == ell:
            j += 1
        if j == i:
            raise NotShareable(f"the {what} of layer {ell} do not follow those of layer {ell - 1}")
        spans.append((i, j))
        i = j
    tail = i
    if any(x is not None for x in labels[tail:]):
        raise NotShareable(f"the {what} of the layers are not in layer order (or top-level code runs between layers)")
    return head, spans, tail


@dataclass(frozen=True)
class Plan:
    """How the program of `layers` layers is made from the traced one: the tensor owners, the
    layer 1 -> layer 2 renaming and the op-instance shift per layer."""

    layout: Layout
    layers: int
    owner: dict  # tensor -> its layer (None: shared)
    align: dict  # layer-1 view -> layer-2 view of every tensor layer 1 touches
    shift: int  # op instances per layer


def _owners(program: Program, labels: list[int | None]) -> dict[str, int | None]:
    writers: dict[str, set] = {}
    readers: dict[str, set] = {}
    for ell, s in zip(labels, program.stmts):
        writers.setdefault(s.target.tensor, set()).add(ell)
        for ld in s.loads():
            readers.setdefault(ld.tensor, set()).add(ell)
    owner: dict[str, int | None] = {}
    for t in program.tensors:
        w = writers.get(t.name)
        if w:
            if len(w) > 1:
                raise NotShareable(f"tensor {t.name} is written by more than one layer (or by top-level code and a layer)")
            owner[t.name] = next(iter(w))
            continue
        r = readers.get(t.name, set())
        owner[t.name] = next(iter(r)) if len(r) == 1 else None
    for ell, s in zip(labels, program.stmts):
        allowed = {None, 0, ell} if ell is not None else {None, 0, TRACED - 1}  # layer 0 is never copied
        if ell:
            allowed.add(ell - 1)
        for ld in s.loads():
            if owner[ld.tensor] not in allowed:
                where = f"layer {ell}" if ell is not None else "top-level code"
                raise NotShareable(f"{where} reads {ld.tensor} of layer {owner[ld.tensor]}")
    return owner


def plan(program: Program, layout: Layout, layers: int) -> Plan:
    """Check that `program` (traced with TRACED layers) can be stitched to `layers` layers."""
    if layers < TRACED:
        raise NotShareable(f"{layers} layers: fewer than the {TRACED} a shared trace needs")
    stmts = program.stmts
    labels = [None if s.origin is None else layout.layer(s.origin.module) for s in stmts]
    for start, node in zip(_starts(program), program.body):
        if isinstance(node, Seq) and len(set(labels[start : start + _count(node)])) > 1:
            raise NotShareable("an in-order loop holds statements of more than one layer")
    _, spans, _ = _runs(labels, "statements")
    owner = _owners(program, labels)
    (a0, a1), (b0, b1) = spans[1], spans[2]
    if a1 - a0 != b1 - b0:
        raise NotShareable(f"layers 1 and 2 have {a1 - a0} and {b1 - b0} statements")
    align: dict[str, str] = {}
    back: dict[str, str] = {}
    shift = None
    for s1, s2 in zip(stmts[a0:a1], stmts[b0:b1]):
        k1, n1 = _skeleton(s1, layout.blank)
        k2, n2 = _skeleton(s2, layout.blank)
        if k1 != k2:
            raise NotShareable(f"layers 1 and 2 differ at `{s1}` / `{s2}`")
        d = s2.origin.instance - s1.origin.instance
        if shift is None:
            shift = d
        elif d != shift:
            raise NotShareable("the op instances of layers 1 and 2 are not one shift apart")
        for x, y in zip(n1, n2):
            if align.setdefault(x, y) != y or back.setdefault(y, x) != x:
                raise NotShareable(f"layers 1 and 2 use {x} and {y} inconsistently")
    expect = {1: 2, 0: 1, None: None}
    for x, y in align.items():
        ox, oy = owner[x], owner[y]
        if ox == oy == 0 and x == y:  # layer 0's, read by every layer (T5's position bias)
            pass
        elif ox not in expect or oy != expect[ox] or (ox is None and x != y):
            raise NotShareable(f"layer 1's {x} (layer {ox}) corresponds to {y} (layer {oy}) in layer 2")
        dx, dy = program.tensor(x), program.tensor(y)
        if (dx.shape, dx.dtype, dx.role) != (dy.shape, dy.dtype, dy.role) or (
            (dx.updates is None) != (dy.updates is None) or dx.updates is not None and align.get(dx.updates) != dy.updates
        ):
            raise NotShareable(f"layer 1's {x} and layer 2's {y} are declared differently")
    own1 = [t.name for t in program.tensors if owner[t.name] == 1]
    if any(n not in align for n in own1):
        raise NotShareable("a tensor of layer 1 is not used by its statements")
    return Plan(layout, layers, owner, align, shift or 0)


# ---- stitching -----------------------------------------------------------------------------------


class _Names:
    """Layer k's name of each traced tensor."""

    def __init__(self, program: Program, p: Plan) -> None:
        self.program, self.p = program, p
        self.back = {y: x for x, y in p.align.items()}
        last = TRACED - 1
        self.last: dict[str, str] = {}  # the last layer's params and inputs, renamed to layer N-1
        by_step = {}
        for x, y in p.align.items():
            if p.owner[x] == 1 and program.tensor(x).role in (Role.PARAM, Role.INPUT):
                name = stepped(x, y, last)
                if name is not None:
                    by_step[name] = stepped(x, y, p.layers - 1)
        for t in program.tensors:
            if p.owner[t.name] == last and t.role in (Role.PARAM, Role.INPUT):
                if t.name not in by_step:
                    raise NotShareable(f"the last layer's {t.name} has no counterpart in layer 1")
                self.last[t.name] = by_step[t.name]

    def copy(self, n1: str, k: int) -> str:
        """Layer 1's tensor `n1` in copy k."""
        if k == 1:
            return n1
        if self.program.tensor(n1).role in (Role.PARAM, Role.INPUT):
            name = stepped(n1, self.p.align[n1], k)
            if name is None:
                raise NotShareable(f"{n1} and {self.p.align[n1]} differ in more than their numbers")
            return name
        return f"l{k}_{n1}"

    def in_copy(self, k: int) -> Callable[[str], str]:
        """The renaming of layer 1's statements for copy k."""

        def fn(name: str) -> str:
            o = self.p.owner[name]
            if o is None:
                return name
            if o == 1:
                return self.copy(name, k)
            if k == 1 or self.p.align[name] == name:  # read as it is, or by every layer
                return name
            return self.copy(self.p.align[name], k - 1)  # layer 0's -> copy k-1's

        return fn

    def in_last(self, name: str) -> str:
        o = self.p.owner[name]
        if o == TRACED - 2:  # the layer before the last: copy N-2 of its layer-1 counterpart
            return self.copy(self.back[name], self.p.layers - 2)
        return self.last.get(name, name)


def stitch(program: Program, p: Plan) -> Program:
    """The program of `p.layers` layers (see the module docstring)."""
    names = _Names(program, p)
    layout, n, extra = p.layout, p.layers, p.layers - TRACED
    stmts = program.stmts
    labels = [None if s.origin is None else layout.layer(s.origin.module) for s in stmts]
    _head, spans, tail = _runs(labels, "statements")

    def moved(s: Stmt, fn: Callable[[str], str], src: int | None, dst: int | None, by: int) -> Stmt:
        o = s.origin
        if o is not None:
            module = o.module if src is None else layout.moved(o.module, src, dst)
            o = replace(o, instance=o.instance + by, module=module)
        return renamed(s, fn, o)

    starts = _starts(program)
    body = program.body

    def nodes(lo: int, hi: int, edit: Callable[[Stmt], Stmt]) -> list:
        """The top-level nodes holding statements lo..hi, their statements edited (an in-order
        loop keeps its shape: `rebuild` puts the edited flattened statements back into it)."""
        picked = [k for k, st in enumerate(starts) if lo <= st < hi]
        return [x for k in picked for x in rebuild((body[k],), iter([edit(t) for t in stmts[starts[k] : starts[k] + _count(body[k])]]))]

    out = list(body[: next(k for k, st in enumerate(starts) if st >= spans[1][0])])  # head, layer 0
    for k in range(1, n - 1):
        fn = names.in_copy(k)
        out += nodes(*spans[1], lambda s, fn=fn, k=k: moved(s, fn, 1, k, (k - 1) * p.shift))
    last = TRACED - 1
    out += nodes(*spans[last], lambda s: moved(s, names.in_last, last, n - 1, extra * p.shift))
    out += nodes(tail, len(stmts), lambda s: moved(s, names.in_last, None, None, extra * p.shift))
    tensors = _tensors(program, p, names)
    if len({t.name for t in tensors}) != len(tensors):
        raise NotShareable("the stitched tensor names collide")
    return Program(program.name, tensors, tuple(out), program.symbols)


def _count(node: Any) -> int:
    """Statements in a top-level node (an in-order loop holds its body's)."""
    return sum(_count(x) for x in node.body) if isinstance(node, Seq) else 1


def _starts(program: Program) -> list[int]:
    """The index in `program.stmts` of each top-level node's first statement."""
    out, i = [], 0
    for node in program.body:
        out.append(i)
        i += _count(node)
    return out


def _tensors(program: Program, p: Plan, names: _Names) -> tuple[TensorDecl, ...]:
    """The declarations in the traced order, each run of layer 1's repeated for copies 1..N-2 (so
    the order is a full trace's: layer-major within each role)."""
    out: list[TensorDecl] = []
    run: list[TensorDecl] = []

    def flush() -> None:
        for k in range(1, p.layers - 1):
            fn = names.in_copy(k)
            out.extend(replace(t, name=fn(t.name), updates=t.updates and fn(t.updates)) for t in run)
        run.clear()

    for t in program.tensors:
        o = p.owner[t.name]
        if o == 1:
            run.append(t)
            continue
        flush()
        if o is None or o == 0:
            out.append(t)
        elif o == TRACED - 1:
            out.append(replace(t, name=names.in_last(t.name), updates=t.updates and names.in_last(t.updates)))
        # layer 2's are dropped: copy 2 of layer 1 stands for them
    flush()
    return tuple(out)


# ---- eager calls ---------------------------------------------------------------------------------


# The eager calls of `torch.tensor(value)` in a traced forward: what a per-layer constant costs.
CONSTANT_CALLS = frozenset({"aten.lift_fresh_copy.default", "aten.detach_.default", "aten.detach.default"})


def _per_layer_head(head: Sequence[Any], counted: set) -> int:
    """The length of a group of top-level calls that opens the program once per traced layer,
    makes constants only (CONSTANT_CALLS) and leaves no statement of its own, else 0: the `hf:`
    step's wrapper makes one cache-length tensor per layer before the model runs
    (solar.frontends.torch.hf._Step), and a full trace dispatches that group N times."""
    for g in range(1, len(head) // TRACED + 1):
        key = [(c.op, c.view) for c in head[: g * (TRACED + 1)]]
        if any(op not in CONSTANT_CALLS for op, _ in key[:g]):
            return 0
        if all(key[i] == key[i % g] for i in range(g * TRACED)) and key[g * TRACED :] != key[:g]:
            block = head[: g * TRACED]
            return 0 if any(c.instance in counted for c in block) else g
    return 0


def stitch_calls(calls: Sequence[Any], modules: Sequence[str], p: Plan, counted: set) -> tuple[Any, ...]:
    """The eager calls (solar.frontends.torch.eager.EagerCall, with the module path of each) of the
    program of `p.layers` layers: layer 1's copied with their instances shifted, the last layer's
    and what follows shifted by (N-TRACED) layers; a group of top-level calls made once per layer
    before the first (`_per_layer_head`; `counted`: the instances that have statements) is made
    N times, without an instance."""
    labels = [p.layout.layer(m) for m in modules]
    head_end, spans, _tail = _runs(labels, "eager calls")
    (a0, a1), (b0, b1) = spans[1], spans[2]

    def by(c: Any, d: int, src: int = 1, dst: int = 1) -> Any:
        if src != dst and c.modules:  # the module calls of layer src become those of layer dst
            c = replace(c, modules=tuple((_moved_key(k, p.layout.prefix, src, dst), cls) for k, cls in c.modules))
        return c if c.instance is None or d == 0 else replace(c, instance=c.instance + d)

    one, two = calls[a0:a1], calls[b0:b1]
    if [c.op for c in one] != [c.op for c in two] or any(
        (x.instance is None) != (y.instance is None) or x.instance is not None and y.instance - x.instance != p.shift
        for x, y in zip(one, two)
    ):
        raise NotShareable("the eager calls of layers 1 and 2 differ")
    g = _per_layer_head(calls[:head_end], counted)
    out = list(calls[: g * TRACED])
    out += [replace(c, instance=None) for c in calls[:g]] * (p.layers - TRACED)
    out += calls[g * TRACED : spans[1][0]]
    for k in range(1, p.layers - 1):
        out += [by(c, (k - 1) * p.shift, 1, k) for c in one]
    extra = (p.layers - TRACED) * p.shift
    out += [by(c, extra, TRACED - 1, p.layers - 1) for c in calls[spans[TRACED - 1][0] :]]
    return tuple(out)


def _moved_key(key: str, prefix: str, src: int, dst: int) -> str:
    """An nn_module_stack key (`L__self__model.layers.1.mlp`, `...@2` for a repeated call) of layer
    `src` as the key of the same module in layer `dst`; a key of no layer `src` is kept."""
    head = f"{prefix}{src}"
    i = key.find(head)
    while i >= 0:
        j = i + len(head)
        if (j == len(key) or key[j] in ".@") and (i == 0 or key[i - 1] in "._"):
            return f"{key[:i]}{prefix}{dst}{key[j:]}"
        i = key.find(head, i + 1)
    return key


# ---- a traced model, shared --------------------------------------------------------------------


@dataclass(frozen=True)
class Stitched:
    """What the analysis reads of a trace (as a Traced) for a program stitched to `layers`
    layers from the trace `base` of TRACED layers: its eager calls are stitched too."""

    base: Traced
    layers: Any  # N, or one N per stack (SharedTrace.at of several)
    stitched_calls: tuple

    @property
    def flags(self) -> tuple:
        return self.base.flags

    @property
    def eager(self) -> tuple:
        return self.base.eager

    @property
    def exported(self) -> Any:
        return self.base.exported

    @property
    def source_file(self) -> str | None:
        return self.base.source_file

    def notes(self) -> list[str]:
        return self.base.notes()

    def notices(self) -> list[str]:
        return self.base.notices()


@dataclass(frozen=True)
class SharedTrace:
    """A model of identical layers traced with TRACED of them, lowered and optimised once; `at`
    gives the program (and trace) of any number of layers."""

    traced: Traced  # of the shortened model
    program: Program
    layout: Layout
    more: tuple[Layout, ...] = ()  # further stacks (solar.frontends.torch.share), stitched in turn

    def at(self, layers: int | Sequence[int]) -> tuple[Program, Stitched]:
        """The program of `layers` layers (several stacks: one count per stack, in the order of
        their prefixes; each is stitched in the program the previous stitch made)."""
        counts = (layers,) if isinstance(layers, int) else tuple(layers)
        if len(counts) != 1 + len(self.more):
            raise NotShareable(f"{len(counts)} layer counts for {1 + len(self.more)} stacks")
        program = self.program
        calls = eager_calls(self.traced) if self.traced.eager else ()
        for layout, n in zip((self.layout, *self.more), counts):
            p = plan(program, layout, n)
            if calls:
                counted = {s.origin.instance for s in program.stmts if s.origin is not None}
                calls = stitch_calls(calls, [innermost(c.modules) for c in calls], p, counted)
            program = stitch(program, p)
        return program, Stitched(self.traced, layers, tuple(calls))


def lower_shared(traced: Traced, prefix: str | Sequence[str]) -> SharedTrace:
    """Lower a trace of TRACED layers (module paths `<prefix>.<l>...`; several prefixes: one per
    stack, each shortened, solar.frontends.torch.share) for stitching: NotShareable
    where `sink` computed a top-level temp that the layers read where they read it (sinking weighs
    a producer against all of its reads, and the layers' reads grow with their number: a full trace
    may keep what the short one sank). A temp the other passes remove (a mask folded to true
    where BERT's attention reads it) goes as it would from a full trace: they weigh no counts."""
    prefixes = (prefix,) if isinstance(prefix, str) else tuple(prefix)
    layouts = [Layout(x + "." if x else "") for x in prefixes]  # "": the model itself is the stack
    raw = convert_returning(traced, optimize=False)[0]
    watched: set[str] = set()
    for layout in layouts:
        labels = [None if s.origin is None else layout.layer(s.origin.module) for s in raw.stmts]
        top = {s.target.tensor for ell, s in zip(labels, raw.stmts) if ell is None}
        read = {ld.tensor for ell, s in zip(labels, raw.stmts) if ell is not None for ld in s.loads()}
        watched |= {n for n in top & read if raw.tensor(n).role is Role.TEMP}
    sunk: set[str] = set()

    def watching(p: Program) -> Program:
        out = sink(p)
        sunk.update(watched & _read(p) - _read(out))
        return out

    program = drop_unread(optimize(raw, pipeline=tuple(watching if f is sink else f for f in PIPELINE)))
    verify(program)
    kept = {t.name for t in program.tensors}
    lost = sorted((watched - kept) & sunk)
    if lost:
        raise NotShareable(f"the passes computed the shared {lost[0]} where the layers read it")
    return SharedTrace(traced, program, layouts[0], tuple(layouts[1:]))


def _read(program: Program) -> set[str]:
    return {ld.tensor for s in program.stmts for ld in s.loads()}
