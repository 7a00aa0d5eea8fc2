"""Def-use of a program's tensors, computed once: which statements (positions in `Program.stmts`,
the flattened view) write and read each tensor, and each statement's distinct loads. Lifting, the
passes and the backends ask it instead of rebuilding the maps.

A statement *reads* a tensor it loads (including loads inside data-dependent indices); its *uses*
add its own target when it accumulates (`+=` reads the old value)."""

from __future__ import annotations

import functools
from bisect import bisect_left, bisect_right

from solar.ir.nodes import Load, Program, Role, Stmt
from solar.ir.scalar_ops import Update

__all__ = ["DefUse", "defuse"]


class DefUse:
    """Writer and reader positions of every tensor of `program`, in program order."""

    def __init__(self, program: Program) -> None:
        self.program = program
        self.writers: dict[str, list[int]] = {}
        self.readers: dict[str, list[int]] = {}
        self.loads: list[tuple[Load, ...]] = []  # per statement, distinct, in order of appearance
        for i, stmt in enumerate(program.stmts):
            self.writers.setdefault(stmt.target.tensor, []).append(i)
            loads = distinct_loads(stmt)
            self.loads.append(loads)
            for name in dict.fromkeys(ld.tensor for ld in loads):
                self.readers.setdefault(name, []).append(i)

    def uses(self, position: int) -> tuple[str, ...]:
        """Tensors whose values statement `position` uses: its loads, and its target when it
        accumulates."""
        names = [ld.tensor for ld in self.loads[position]]
        stmt = self.program.stmts[position]
        if stmt.update is not Update.ASSIGN:
            names.append(stmt.target.tensor)
        return tuple(dict.fromkeys(names))

    def last_writer_before(self, tensor: str, position: int) -> int | None:
        """The statement whose value of `tensor` a statement at `position` reads (the latest
        earlier writer), or None."""
        writers = self.writers.get(tensor, ())
        k = bisect_left(writers, position)
        return writers[k - 1] if k else None

    def next_writer_after(self, tensor: str, position: int) -> int | None:
        writers = self.writers.get(tensor, ())
        k = bisect_right(writers, position)
        return writers[k] if k < len(writers) else None

    def readers_of_value(self, tensor: str, writer: int) -> list[int]:
        """Statements after `writer` that read the value it wrote (no other writer between them;
        the next writer itself reads it when it updates in place)."""
        readers = self.readers.get(tensor, ())
        stop = self.next_writer_after(tensor, writer)
        end = len(readers) if stop is None else bisect_right(readers, stop)
        return list(readers[bisect_right(readers, writer) : end])

    @functools.cached_property
    def live(self) -> frozenset[str]:
        """Tensors whose values reach an output: the outputs, and everything a statement writing a
        live tensor reads (a temp read only by its own writers is dead)."""
        live = {t.name for t in self.program.with_role(Role.OUTPUT)}
        work = list(live)
        while work:
            for w in self.writers.get(work.pop(), ()):
                for ld in self.loads[w]:
                    if ld.tensor not in live:
                        live.add(ld.tensor)
                        work.append(ld.tensor)
        return frozenset(live)

    @functools.cached_property
    def dram(self) -> frozenset[str]:
        """Inputs and parameters that no statement overwrites: their values are the ones in DRAM
        when the program starts."""
        return frozenset(
            t.name
            for t in self.program.tensors
            if t.role in (Role.INPUT, Role.PARAM) and t.name not in self.writers
        )

    @functools.cached_property
    def used(self) -> frozenset[str]:
        """Tensors some statement writes or reads."""
        return frozenset(self.writers) | frozenset(self.readers)


# statement identity -> (the statement, its distinct loads): a pass rebuilds the program but keeps
# most statements as they were, so the next def-use finds their loads here (the entry holds the
# statement, so its identity is not reused while the entry exists). Bounded; cleared when full.
_LOADS: dict[int, tuple[Stmt, tuple[Load, ...]]] = {}
LOADS_KEPT = 1 << 16


def distinct_loads(stmt: Stmt) -> tuple[Load, ...]:
    """The statement's loads, each once, in order of appearance."""
    hit = _LOADS.get(id(stmt))
    if hit is not None and hit[0] is stmt:
        return hit[1]
    loads = tuple(dict.fromkeys(stmt.loads()))
    if len(_LOADS) >= LOADS_KEPT:
        _LOADS.clear()
    _LOADS[id(stmt)] = (stmt, loads)
    return loads


def defuse(program: Program) -> DefUse:
    """The def-use of `program`, computed once per program value and kept with it."""
    cached = program._defuse
    if cached is None:
        cached = DefUse(program)
        object.__setattr__(program, "_defuse", cached)
    return cached
