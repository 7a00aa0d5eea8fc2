"""`solar analyze FILE --symbolic GLOBAL=SYMBOL,...`: the flag and its command."""

from __future__ import annotations

import argparse
import json


def add_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--symbolic",
        default=None,
        metavar="GLOBAL=SYM,...",
        help="sizes as symbols: module-level integers of the file (e.g. batch_size=B,seq_len=S); "
        "prints FLOPs, bytes and bounds as formulas",
    )


def run(args: argparse.Namespace) -> int:
    from solar.symbolic import analyze_file, parse_symbols
    from solar.symbolic.report import print_symbolic, symbolic_report

    names = parse_symbols(args.symbolic)
    out = analyze_file(
        args.file, names, args.arch, args.precision, args.clock_mhz, args.cache, args.train
    )
    reports = [symbolic_report(sa) for sa in out]
    if args.json:
        data = [json.loads(r.to_json()) for r in reports]
        print(json.dumps(data[0] if len(data) == 1 else data, indent=2))
    else:
        for r in reports:
            print_symbolic(r)
    return 0
