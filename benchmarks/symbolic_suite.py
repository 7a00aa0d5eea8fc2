"""Which suite problems have a symbolic form: symbolise one size of each (SEQ, else BATCH, else
the first of N/M/ROWS/TOKENS/LENGTH), and compare the formulas with the numeric analysis at every
traced point plus one more (4x the traced value).

    PYTHONPATH=. python benchmarks/symbolic_suite.py [--arch H100-SXM] [FILE ...] > out.jsonl
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from pathlib import Path

from solar.api import load
from solar.errors import SolarError, message_line
from solar.hardware import get_spec
from solar.symbolic import analyze_symbolic, trace_file
from solar.symbolic.check import mismatches
from solar.symbolic.trace import with_values

PREFERRED = ("SEQ", "BATCH", "N", "M", "ROWS", "TOKENS", "LENGTH")


def size_global(source: str) -> str | None:
    names = re.findall(r"^([A-Za-z_]+)[ \t]*=[ \t]*\d+[ \t]*(?:#.*)?$", source, flags=re.MULTILINE)
    return next((n for n in PREFERRED if n in names), None)


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("files", nargs="*")
    p.add_argument("--arch", default="H100-SXM")
    args = p.parse_args()
    files = args.files or sorted(str(f) for f in Path("benchmarks/suite").glob("level*/*.py"))
    spec = get_spec(args.arch)
    for f in files:
        src = Path(f).read_text()
        g = size_global(src)
        row: dict = {"file": f, "global": g}
        t0 = time.perf_counter()
        try:
            if g is None:
                raise SolarError("no size global")
            sp = trace_file(f, {g: "X"}, lambda p: load(p).program)
            sa = analyze_symbolic(sp, spec)
            bad = [
                m for pt, prog in zip(sp.points, sp.traced) for m in mismatches(sa, pt, prog, spec)
            ]
            extra = {"X": 4 * sp.base["X"]}
            with tempfile.TemporaryDirectory() as tmp:
                copy = Path(tmp) / Path(f).name
                copy.write_text(with_values(src, {g: extra["X"]}))
                bad += mismatches(sa, extra, load(copy).program, spec)
            row.update(
                ok=not bad,
                mismatches=bad[:3],
                flops=str(sa.flops),
                dram_bytes=str(sa.dram_bytes),
                fused=str(sa.fused_seconds)[:300],
            )
        except Exception as exc:  # noqa: BLE001 - a sweep records every failure and goes on
            row.update(ok=False, error=f"{type(exc).__name__}: {message_line(exc)}"[:300])
        row["seconds"] = round(time.perf_counter() - t0, 2)
        print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
