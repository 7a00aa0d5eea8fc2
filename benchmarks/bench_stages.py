"""CPU seconds per analysis stage for every problem of one or more folders (or files), after imports:
trace (build + torch.export + decompositions), lower (the lowering table), passes, lift (the einsum
graph) and analysis (every bound level on one GPU, and the report), with the median per problem.

Usage:
    python benchmarks/bench_stages.py benchmarks/suite [benchmarks/models ...] [--arch H200-SXM]
        [-k SUBSTRING] [--skip SUBSTRING ...] [--timeout 600] [--out FILE.json] [--retrace]
        [--no-share-layers]

A stack of identical layers is traced with 4 of them as `solar analyze` traces it
(solar.frontends.torch.share; --no-share-layers: every layer): then `trace` is the build and the
shortened export, `stitch` the lowering, passes and stitching of the 4-layer program (and, where
the stitch refuses, the whole model's trace), and the row's `layers` says what was shared.

One process; torch, solar and the lazily imported parts (scipy's LP) are imported by analysing a
small problem first (not recorded), and each file's own top-level imports (timm, torchvision,
`from transformers import BertModel`) are run before its stages and recorded apart (`import_cpu_s`,
not in the totals: "after imports"). CPU seconds (time.process_time) are the
steady number on a shared machine; wall seconds are recorded too. A problem that raises or runs past
--timeout is recorded with a one-line error and not counted in the medians. PyTorch files only (a
JAX file is timed as one `load` stage)."""

from __future__ import annotations

import argparse
import json
import platform
import signal
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.suite_tools import list_problems  # noqa: E402

STAGES = ("trace", "lower", "passes", "stitch", "lift", "analysis")
IMPORT = "import"  # the file's own top-level imports (recorded, not counted in the totals)
SHARE = True  # --no-share-layers: False
RETRACE = False  # --retrace: True
WARMUP = ROOT / "benchmarks" / "suite" / "level1" / "1_Square_matmul.py"


class _Timeout(Exception):
    pass


def _alarm(signum, frame):  # noqa: ARG001
    raise _Timeout


def stages_of(path: Path, arch: str, notes: list | None = None) -> dict[str, tuple[float, float]]:
    """{stage: (cpu seconds, wall seconds)} of analysing one file (`notes` gets the sharing line)."""
    from solar.api import Loaded, analyze_loaded, load
    from solar.frontends.detect import framework_of

    out: dict[str, tuple[float, float]] = {}

    def timed(name, fn, *args):
        c, w = time.process_time(), time.perf_counter()
        value = fn(*args)
        out[name] = (time.process_time() - c, time.perf_counter() - w)
        return value

    timed(IMPORT, _import_statements, path)
    if framework_of(str(path)) != "torch":
        loaded = timed("load", load, str(path))
    else:
        from solar.frontends.torch import Decomposition, TraceOptions, share, trace_file
        from solar.frontends.torch.convert import convert_returning
        from solar.passes import optimize

        options = TraceOptions(Decomposition.RETRACE if RETRACE else Decomposition.DIRECT)
        if SHARE:
            attempt = timed("trace", share.start_file, str(path), None, False, options)
            outcome = timed("stitch", share.finish, attempt) if attempt.stacks else share.finish(attempt)
            traced, program = outcome.traced, outcome.program
            if notes is not None and outcome.note:
                notes.append(outcome.note)
        else:
            traced, program = timed("trace", lambda: trace_file(str(path), options=options)), None
        if program is None:
            raw = timed("lower", lambda: convert_returning(traced, False)[0])  # before the passes
            program = timed("passes", optimize, raw)
        loaded = Loaded(program, traced.flags, traced.source_file, traced, tuple(traced.notes()))
    timed("lift", lambda: loaded.graph)
    timed("analysis", analyze_loaded, loaded, arch)
    return out


def _import_statements(path: Path) -> None:
    """Run the file's top-level import statements (`import timm`, `from transformers import
    BertModel`, which loads the model's module) in a scratch namespace: what the user's file
    imports is the user's import time, not solar's analysis ("after imports")."""
    import ast

    tree = ast.parse(path.read_text(), str(path))
    body = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom)) and not getattr(n, "level", 0)]
    try:
        exec(compile(ast.Module(body=body, type_ignores=[]), str(path), "exec"), {})  # noqa: S102
    except Exception:  # the analysis reports a failing import with its own error
        pass


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    msg = f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__
    return msg[:300]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="+", type=Path, help="KernelBench-layout folders or model files")
    ap.add_argument("--arch", default="H200-SXM")
    ap.add_argument("-k", dest="filter", default=None, help="only problems whose path contains this")
    ap.add_argument("--skip", nargs="*", default=[], help="leave out problems whose path contains these")
    ap.add_argument("--timeout", type=int, default=600, help="seconds per problem (wall)")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--retrace", action="store_true", help="always run_decompositions (no direct lowering)")
    ap.add_argument("--no-share-layers", dest="share", action="store_false", help="trace every layer")
    args = ap.parse_args(argv)
    global SHARE, RETRACE
    SHARE, RETRACE = args.share, args.retrace

    files: list[Path] = []
    for p in args.paths:
        files += [p] if p.is_file() else list_problems(p)
    files = [f for f in files if (args.filter is None or args.filter in str(f))
             and not any(s in str(f) for s in args.skip)]
    t0 = time.perf_counter()
    stages_of(WARMUP, args.arch)  # imports, and torch's lazy initialisation
    imports_s = time.perf_counter() - t0
    signal.signal(signal.SIGALRM, _alarm)
    rows = []
    for f in files:
        row: dict = {"problem": str(f.relative_to(ROOT) if f.is_relative_to(ROOT) else f)}
        signal.alarm(args.timeout)
        try:
            notes: list = []
            got = stages_of(f, args.arch, notes)
            if notes:
                row["layers"] = notes[0]
            row.update(status="ok", cpu_s={k: c for k, (c, _) in got.items() if k != IMPORT},
                       wall_s={k: w for k, (_, w) in got.items() if k != IMPORT},
                       import_cpu_s=got[IMPORT][0])
            row["total_cpu_s"] = sum(row["cpu_s"].values())
            row["total_wall_s"] = sum(row["wall_s"].values())
        except _Timeout:
            row.update(status="timeout", error=f"no result within {args.timeout} s")
        except Exception as exc:  # a problem that fails is a row, the run goes on
            row.update(status="error", error=_one_line(exc))
        finally:
            signal.alarm(0)
        rows.append(row)
        if row["status"] == "ok":
            parts = "  ".join(f"{k} {v:6.2f}" for k, v in row["cpu_s"].items())
            print(f"{row['problem']:<60} {row['total_cpu_s']:7.2f} s cpu  ({parts})", flush=True)
        else:
            print(f"{row['problem']:<60} {row['status'].upper()} {row['error']}", flush=True)
    ok = [r for r in rows if r["status"] == "ok"]
    summary = {
        "problems": len(rows),
        "ok": len(ok),
        "median_total_cpu_s": statistics.median(r["total_cpu_s"] for r in ok) if ok else None,
        "median_total_wall_s": statistics.median(r["total_wall_s"] for r in ok) if ok else None,
        "max_total_cpu_s": max((r["total_cpu_s"] for r in ok), default=None),
        "median_cpu_s_per_stage": {
            k: statistics.median(r["cpu_s"].get(k, 0.0) for r in ok) for k in STAGES
        } if ok else {},
        "imports_wall_s": imports_s,
        "direct_lowering": not args.retrace,
        "share_layers": args.share,
    }
    print(json.dumps(summary, indent=2))
    if args.out:
        from benchmarks.bench_analyze import cpu_reference_s

        env = {"python": platform.python_version(), "machine": platform.machine(),
               "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
               "cpu_reference_s": cpu_reference_s()}
        args.out.write_text(json.dumps({"summary": summary, "rows": rows, "environment": env}, indent=1) + "\n")
    return 0 if len(ok) == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
