"""The symbolic report: formulas as text (pydantic, JSON) and their rendering for the CLI."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from solar.symbolic.bounds import FORMULAS, SymbolicAnalysis


class SymbolicReport(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    program: str
    arch: str
    symbols: dict[str, str]  # symbol -> "GLOBAL (traced VALUE)"
    sizes: dict[str, str]  # fitted size symbol -> formula
    formulas: dict[str, str]  # flops, dram_bytes, ..., fused_seconds, unfused_seconds
    at_traced: dict[str, float]  # every formula at the traced sizes
    crossovers: list[str]  # where two terms of the fused bound are equal
    notes: list[str]

    def to_json(self, indent: int | None = 2) -> str:
        return self.model_dump_json(indent=indent)


NOTES = [
    (
        "sizes: the file is traced at multiples of the traced values; each varying size is fitted "
        "exactly there (see `sizes`)"
    ),
    "counts: isl-barvinok parametric card of domains and footprints, as sympy",
    (
        "compute: Max over LP dual weightings found at the traced sizes (a lower bound at every "
        "size, equal to the numeric LP at the traced sizes)"
    ),
    (
        "cache_aware: re-read slices and contraction sizes as monomials of the symbols (found on "
        "the program with every size bound to a distinct large prime)"
    ),
]


def symbolic_report(sa: SymbolicAnalysis) -> SymbolicReport:
    base = {s: v for s, (_, v) in sa.symbols.items()}
    notes = list(NOTES)
    return SymbolicReport(
        program=sa.program,
        arch=sa.spec,
        symbols={s: f"{g} (traced {v})" for s, (g, v) in sa.symbols.items()},
        sizes={k: str(v) for k, v in sa.defs.items()},
        formulas=sa.formulas(),
        at_traced=sa.evaluate(base),
        crossovers=sa.regions(),
        notes=notes,
    )


def print_symbolic(r: SymbolicReport) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    syms = ", ".join(f"{s} = {g}" for s, g in r.symbols.items())
    t = Table(title=f"{r.program} on {r.arch}: symbolic ({syms})")
    t.add_column("quantity")
    t.add_column("formula", overflow="fold")
    t.add_column("at traced sizes", justify="right")
    for name in FORMULAS:
        v = r.at_traced[name]
        t.add_row(name, r.formulas[name], f"{v:.6g}" if isinstance(v, float) else str(v))
    console.print(t)
    for k, v in r.sizes.items():
        console.print(f"  size {k} = {v}")
    for line in r.crossovers:
        console.print(f"  binds: {line}")
    for line in r.notes:
        console.print(f"  note: {line}")
