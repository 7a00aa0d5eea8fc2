"""`solar verify`: run a program's IR in the interpreter and compare its outputs with the program's
own (PyTorch or JAX), op by op."""

from __future__ import annotations

import argparse

from rich.table import Table

from solar.commands.args import add_mode_flags, add_run_flags, count
from solar.report import render


def register(sub: argparse._SubParsersAction) -> None:
    v = sub.add_parser("verify", help="compare the IR's outputs with the program's own outputs")
    v.add_argument("file")
    v.add_argument("--seed", type=count(0), default=0, help="seed of the random inputs")
    add_mode_flags(v)
    add_run_flags(v)
    v.set_defaults(fn=cmd_verify)


def cmd_verify(args: argparse.Namespace) -> int:
    from solar.api import check_file  # the analysis (islpy, networkx, lark): not paid by --help

    result = check_file(args.file, args.seed, args.mode, args.infer_structure, debug=args.debug)
    table = Table(title=f"verify {result.program}: IR interpreter vs PyTorch", title_justify="left")
    for col in ("op", "shapes", "mode", "rel. error", "tolerance", "result", "source"):
        table.add_column(col, overflow="fold")
    for c in result.checks:
        status = "unchecked" if c.mode == "unchecked" else ("ok" if c.ok else "MISMATCH")
        table.add_row(c.what, c.shapes, c.mode, f"{c.error:.2e}", f"{c.tolerance:.0e}", status + (f" ({c.note})" if c.note else ""), c.source)
    render.console().print(table)
    bad = [c for c in result.checks if c.mode != "unchecked" and not c.ok]
    print(
        f"{len(result.checks) - len(bad) - len(result.unchecked)} checked ok, {len(bad)} mismatched, "
        f"{len(result.unchecked)} unchecked"
    )
    return 1 if bad else 0
