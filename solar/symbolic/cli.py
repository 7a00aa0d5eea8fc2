"""`solar analyze FILE --symbolic GLOBAL=SYMBOL,...`: the flag and its command."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from solar.backends.assumptions import Assumptions
from solar.errors import UsageError

if TYPE_CHECKING:
    from solar.ir.nodes import Program


def add_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--symbolic",
        default=None,
        metavar="GLOBAL=SYM,...",
        help="sizes as symbols: module-level integers of the file (e.g. batch_size=B,seq_len=S); "
        "prints FLOPs, bytes and bounds as formulas",
    )


def check(args: argparse.Namespace) -> None:
    """--symbolic prints formulas and draws nothing: --plot beside it is refused, not ignored."""
    if args.symbolic is not None and getattr(args, "plot", None):
        raise UsageError("--plot draws the numeric bounds, which --symbolic does not compute; drop --plot or --symbolic")


def run(
    args: argparse.Namespace, assumptions: Assumptions, load_program: Callable[[Path], Program]
) -> int:
    """The formulas of `args.file` on each GPU of `args.arch` (`load_program`: see
    solar.symbolic.trace.trace_file), printed as tables or JSON."""
    # sympy and isl load here, not when the CLI registers the flag
    from solar.symbolic.bounds import analyze_file
    from solar.symbolic.report import print_symbolic, symbolic_report

    out = analyze_file(args.file, args.symbolic, load_program, args.arch, assumptions)
    reports = [symbolic_report(sa) for sa in out]
    if args.json:
        data = [json.loads(r.to_json()) for r in reports]
        print(json.dumps(data[0] if len(data) == 1 else data, indent=2))
    else:
        for r in reports:
            print_symbolic(r)
    return 0
