"""`solar verify`: run a program's IR in the interpreter and compare its outputs with the program's
own (PyTorch or JAX), op by op; with --world-size / --mesh, a sharded program's ranks on simulated
ranks against its single-device original (solar.frontends.ranks), one line per rank and output."""

from __future__ import annotations

import argparse

from rich.table import Table

from solar.commands.args import add_mode_flags, add_run_flags, count
from solar.errors import UsageError
from solar.report import render


def register(sub: argparse._SubParsersAction) -> None:
    v = sub.add_parser("verify", help="compare the IR's outputs with the program's own outputs")
    v.add_argument("file")
    v.add_argument("--seed", type=count(0), default=0, help="seed of the random inputs")
    g = v.add_argument_group("a sharded program (its ranks against its single-device original)")
    g.add_argument("--world-size", type=count(1), default=None, help="ranks of a torch.distributed or JAX program")
    g.add_argument("--mesh", default=None, metavar="AxB", help="device mesh shape (e.g. 2x4); sets the world size")
    add_mode_flags(v)
    add_run_flags(v)
    v.set_defaults(fn=cmd_verify, check=check_verify)


def check_verify(args: argparse.Namespace) -> None:
    if (args.world_size is not None or args.mesh is not None) and (args.file.startswith("hf:") or args.file.endswith(".ir")):
        raise UsageError(
            f"{args.file}: --world-size / --mesh verify a PyTorch or JAX file against its single-device "
            "original; an hf: model or IR text has none"
        )


def cmd_verify(args: argparse.Namespace) -> int:
    # the analysis (islpy, lark): not paid by --help
    from solar.api import check_file, check_sharded

    if args.world_size is not None or args.mesh is not None:
        return _sharded_out(check_sharded(args.file, args.world_size, args.mesh, args.seed, args.mode, debug=args.debug))

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


def _sharded_out(result) -> int:
    shape = "x".join(map(str, result.mesh))
    print(f"verify {result.program}: {result.world} simulated ranks (mesh {shape}) vs the single-device original")
    for c in result.checks:
        print(c.line())
    print(f"{len(result.checks) - len(result.bad)} ok, {len(result.bad)} mismatched")
    return 1 if result.bad else 0
