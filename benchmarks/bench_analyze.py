"""Benchmark of solar's own analysis speed and memory over the problem suite.

Usage:
    python benchmarks/bench_analyze.py [--suite benchmarks/suite] [--arch H100-SXM] [--repeat 3]
                                       [--out benchmarks/results/analyze_times.json] [-k SUBSTRING]
    python benchmarks/bench_analyze.py --scaling [llama llama-hf densenet] [--max-layers 64] [--max-depth 32]
                                       [--fit-from 8] [--out benchmarks/results/analyze_scaling.json]

Scaling mode (benchmarks/scaling.py): a Llama-shaped stack at 1, 2, 4 ... layers and a DenseNet-style
concatenation chain of growing depth, each size in a fresh process: seconds per stage, peak RSS, and
the fitted growth exponent of each stage in the size.

Imports solar once (timed separately), then for every problem file under --suite (natural order) times
``solar.analyze(path, arch=arch)`` --repeat times (min and median wall seconds), measures the peak
Python heap with tracemalloc on one extra run, and records the process peak RSS at the end. A problem
that raises is recorded with a one-line error and the run continues. Prints a table and a summary line
and writes JSON with the environment. Exit status: 0 if every problem analysed, 1 otherwise.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import gc
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.suite_tools import list_problems  # noqa: E402

MIB = 1024 * 1024


def _one_line(exc: BaseException, limit: int = 300) -> str:
    text = str(exc).strip().splitlines()
    msg = f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__
    return msg if len(msg) <= limit else msg[: limit - 3] + "..."


def peak_rss_mib() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # Linux reports KiB, macOS bytes.
    return peak / MIB if sys.platform == "darwin" else peak / 1024


def _git_commit() -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, timeout=10
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0:
        return None
    return out.stdout.strip() or None


def cpu_reference_s(repeat: int = 3) -> float:
    """CPU seconds of a fixed pure-Python workload (integer loop, dict and tuple churn), best of
    `repeat`: the speed of the machine a benchmark ran on, so that CPU seconds from different
    machines of the same kind (they vary 2-3x) can be compared as multiples of it."""
    best = float("inf")
    for _ in range(repeat):
        t = time.process_time()
        table: dict = {}
        acc = 0
        for i in range(1_000_000):
            key = (i & 1023, i >> 10)
            table[key] = table.get(key, 0) + i
            acc += i * 3 % 7
        best = min(best, time.process_time() - t)
    return best


def _environment() -> dict:
    try:
        import torch

        torch_version = torch.__version__
    except Exception as exc:  # torch missing or broken: still write the benchmark file
        torch_version = f"unavailable ({_one_line(exc)})"
    return {
        "python": platform.python_version(),
        "python_implementation": platform.python_implementation(),
        "torch": torch_version,
        "platform": platform.platform(),
        "machine": platform.machine(),
        "processor": platform.processor(),
        "cpu_count": os.cpu_count(),
        "cpu_reference_s": cpu_reference_s(),
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "git_commit": _git_commit(),
    }


def bench_problem(analyze, path: Path, arch: str, repeat: int) -> dict:
    """Time ``analyze(path, arch=arch)``; never raises for errors inside analyze."""
    result: dict = {"status": "ok", "error": None, "median_s": None, "min_s": None,
                    "tracemalloc_peak_mib": None, "times_s": []}
    gc.collect()
    try:
        for _ in range(repeat):
            t0 = time.perf_counter()
            analyze(str(path), arch=arch)
            result["times_s"].append(time.perf_counter() - t0)
        gc.collect()
        tracemalloc.start()
        try:
            tracemalloc.reset_peak()
            analyze(str(path), arch=arch)
            result["tracemalloc_peak_mib"] = tracemalloc.get_traced_memory()[1] / MIB
        finally:
            tracemalloc.stop()
    except Exception as exc:
        result["status"] = "error"
        result["error"] = _one_line(exc)
    if result["status"] == "ok":
        result["median_s"] = statistics.median(result["times_s"])
        result["min_s"] = min(result["times_s"])
    else:
        result["tracemalloc_peak_mib"] = None
    return result


def _fmt(value: float | None, spec: str) -> str:
    """Format ``value`` with ``spec`` (e.g. "9.4f"); None becomes "-" padded to the same width."""
    if value is None:
        width = "".join(ch for ch in spec.split(".")[0] if ch.isdigit())
        return "-".rjust(int(width) if width else 1)
    return format(value, spec)


def print_table(rows: list[dict]) -> None:
    width = max([len("problem")] + [len(r["problem"]) for r in rows])
    header = f"{'problem':<{width}}  {'median s':>9}  {'min s':>9}  {'peak MiB':>9}  status"
    print(header)
    print("-" * len(header))
    for r in rows:
        status = "ok" if r["status"] == "ok" else f"ERROR {r['error']}"
        print(
            f"{r['problem']:<{width}}  {_fmt(r['median_s'], '9.4f')}  {_fmt(r['min_s'], '9.4f')}"
            f"  {_fmt(r['tracemalloc_peak_mib'], '9.1f')}  {status}"
        )


def summarize(rows: list[dict], wall_s: float) -> dict:
    medians = [r["median_s"] for r in rows if r["status"] == "ok"]
    return {
        "count": len(rows),
        "ok": len(medians),
        "errors": len(rows) - len(medians),
        "median_of_medians_s": statistics.median(medians) if medians else None,
        "max_median_s": max(medians) if medians else None,
        "sum_of_medians_s": sum(medians),
        "total_wall_s": wall_s,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suite", type=Path, default=ROOT / "benchmarks" / "suite",
                        help="folder of KernelBench-format problem files (searched recursively)")
    parser.add_argument("--arch", default="H100-SXM", help="hardware spec passed to solar.analyze")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per problem (>= 1)")
    parser.add_argument("--out", type=Path,
                        default=ROOT / "benchmarks" / "results" / "analyze_times.json",
                        help="where to write the JSON results")
    parser.add_argument("-k", dest="filter", default=None,
                        help="only problems whose relative path contains this substring")
    parser.add_argument("--scaling", nargs="*", choices=("llama", "llama-hf", "densenet"), default=None,
                        help="scaling mode over these families (none given: both)")
    parser.add_argument("--max-layers", type=int, default=64, help="scaling: largest Llama stack")
    parser.add_argument("--max-depth", type=int, default=32, help="scaling: deepest DenseNet chain")
    parser.add_argument("--seq", type=int, default=2048, help="scaling: Llama prefill tokens")
    parser.add_argument("--fit-from", type=int, default=8, help="scaling: smallest size fitted")
    args = parser.parse_args(argv)
    if args.scaling is not None:
        return _scaling(args)
    if args.repeat < 1:
        parser.error("--repeat must be >= 1")
    if not args.suite.is_dir():
        parser.error(f"--suite {args.suite} is not a folder")

    problems = list_problems(args.suite)
    if args.filter:
        problems = [p for p in problems if args.filter in str(p.relative_to(args.suite))]
    if not problems:
        parser.error(f"no problem files under {args.suite}")

    import_error = None
    t0 = time.perf_counter()
    try:
        import solar

        analyze = solar.analyze
    except Exception as exc:  # record it, and report every problem as failed
        import_error = _one_line(exc)
        analyze = None
    import_s = time.perf_counter() - t0
    print(f"import solar: {import_s:.3f} s" + (f"  ({import_error})" if import_error else ""))

    rows = []
    t_start = time.perf_counter()
    for path in problems:
        rel = path.relative_to(args.suite).as_posix()
        if analyze is None:
            res = {"status": "error", "error": f"solar unavailable: {import_error}",
                   "median_s": None, "min_s": None, "tracemalloc_peak_mib": None, "times_s": []}
        else:
            res = bench_problem(analyze, path, args.arch, args.repeat)
        rows.append({"problem": rel, **res})
        print(f"  {rel}: {res['status']}", file=sys.stderr, flush=True)
    wall_s = time.perf_counter() - t_start
    peak_rss = peak_rss_mib()

    print()
    print_table(rows)
    summary = summarize(rows, wall_s)
    print(
        f"\n{summary['count']} problems, {summary['ok']} ok, "
        f"median {_fmt(summary['median_of_medians_s'], '.4f')} s, "
        f"max {_fmt(summary['max_median_s'], '.4f')} s, "
        f"total {summary['total_wall_s']:.2f} s wall ({args.repeat} timed + 1 traced run each), "
        f"import {import_s:.3f} s, peak RSS {peak_rss:.0f} MiB"
    )

    report = {
        "benchmark": "solar.analyze",
        "arch": args.arch,
        "repeat": args.repeat,
        "suite": str(args.suite),
        "environment": _environment(),
        "import_s": import_s,
        "import_error": import_error,
        "peak_rss_mib": peak_rss,
        "summary": summary,
        "problems": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {args.out}")
    return 0 if summary["errors"] == 0 else 1


def _scaling(args: argparse.Namespace) -> int:
    from benchmarks import scaling

    families = args.scaling or ["llama", "densenet"]
    archs = tuple(dict.fromkeys([args.arch, *scaling.ARCHS]))
    result = scaling.run(families, args.max_layers, args.max_depth, args.seq, args.fit_from, archs)
    result["environment"] = _environment()
    out = args.out
    if out == ROOT / "benchmarks" / "results" / "analyze_times.json":
        out = ROOT / "benchmarks" / "results" / "analyze_scaling.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {out}")
    return 0 if all("error" not in r for r in result["rows"]) else 1


if __name__ == "__main__":
    sys.exit(main())
