"""Whether the meta trace (solar.frontends.torch.meta_trace) gives the program torch.export gives:
every model file is loaded twice as `solar analyze` loads it, with the meta trace and with
torch.export alone, and the two compared — the IR text, the eager calls, the report's assumption
notes, totals and bounds on the golden GPUs. Counts how many files the meta trace took.

Usage:
    python benchmarks/meta_trace_sweep.py FILE_OR_FOLDER ... [--out FILE.json]

A folder stands for its *.py files. Prints one line per file (meta / export, same / DIFFERENT)
and a summary; exits 1 when any file differs."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def outcome(path: str, meta: bool) -> tuple[dict[str, Any], bool]:
    """What the analysis gives for one file as `solar analyze` loads it (the IR text, the eager
    calls, the assumption notes, totals and bounds on the golden GPUs; or solar's error line), and
    whether the meta trace took it. Without `meta`, the meta trace answers None (torch.export)."""
    sys.path.insert(0, str(ROOT))
    from benchmarks.golden_totals import loaded_totals
    from solar.api import load
    from solar.errors import SolarError, message_line
    from solar.frontends.loaded import eager_calls
    from solar.frontends.torch import loader, meta_trace

    took: list[bool] = []

    def recorded(model: Any, inputs: tuple) -> Any:
        ep = meta_trace.meta_training_ir(model, inputs) if meta else None
        took.append(ep is not None)
        return ep

    loader.meta_training_ir = recorded  # records the meta trace's answers, or refuses every program
    try:
        loaded = load(path)
        got = {"ir": str(loaded.program), "eager": [repr(c) for c in eager_calls(loaded) or ()],
               "notes": list(loaded.notes), "totals": loaded_totals(loaded)}
    except SolarError as exc:
        got = {"error": message_line(exc)}
    finally:
        loader.meta_training_ir = meta_trace.meta_training_ir
    return got, any(took)


def compare(path: str) -> tuple[bool, bool]:
    """(the meta trace took the file, both traces give the same)."""
    meta, took = outcome(path, True)
    exported, _ = outcome(path, False)
    return took, meta == exported


def files(args: list[str]) -> list[str]:
    out: list[str] = []
    for a in args:
        p = Path(a)
        out += sorted(str(f) for f in p.glob("*.py")) if p.is_dir() else [str(p)]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    rows = []
    for path in files(args.paths):
        took, same = compare(path)
        rows.append({"file": path, "meta": took, "same": same})
        print(f"{'meta' if took else 'export':6} {'same' if same else 'DIFFERENT'}  {path}", flush=True)
    meta = sum(r["meta"] for r in rows)
    differ = [r["file"] for r in rows if not r["same"]]
    print(f"{len(rows)} files: {meta} traced meta, {len(rows) - meta} by torch.export; {len(differ)} differ")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"rows": rows, "meta": meta, "differ": differ}, indent=2))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
