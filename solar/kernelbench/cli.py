"""`solar kernelbench`: bound every problem of a KernelBench-layout folder, join measured times, and
write a headroom report. `add_parser` registers the subcommand on `solar`'s subparsers; `main` runs
it alone (`python -m solar.kernelbench ROOT ...`)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from solar.errors import SolarError

EXAMPLES = """examples:
  solar kernelbench benchmarks/suite --level 1 2 3 --arch H100-SXM H200-SXM --out report/
  solar kernelbench KernelBench --level 1 --problems '*matmul*' --arch H200 --out r/ --jobs 4
  solar kernelbench KernelBench --arch H100-SXM --out r/ \\
      --measured KernelBench/results/timing/H100_modal/baseline_time_torch.json
  solar kernelbench KernelBench --arch H200-SXM --out r/ --measure        # on a CUDA machine

Each problem is analysed by `solar analyze FILE --arch ... --json` in a process of its own (a crash or
a hang costs one row), forked from a fork server that has imported torch and solar once (or, with
--isolation subprocess, a fresh `python -m solar.cli analyze` per problem). Rows are appended to OUT/results.jsonl as problems finish; a re-run skips the
(problem, GPU) pairs already there with the same analysis flags (--force redoes them). OUT also gets
results.csv, summary.json and a self-contained report.html. Exit status 1 when a measured time is
below a bound (a violation: a bug in solar).

--measured accepts `solar validate --json` output (a JSON list, JSON Lines or one object; records
with `problem`, `arch`/`gpu`/`hardware` and `measured.<variant>.median_seconds`) and KernelBench
baseline timing files ({"level1": {"1_Name.py": {"mean": <ms>, "hardware": ...}}}, milliseconds).
Prefix VARIANT= (eager, compile, ...) to set what a file measured; --measured-arch sets the GPU.
"""

#: analysis flags passed through verbatim to every per-problem `solar analyze` (attribute, flag).
ANALYSIS_FLAGS = (
    ("precision", "--precision"),
    ("clock_mhz", "--clock-mhz"),
    ("mode", "--mode"),
    ("cache", "--cache"),
)


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "kernelbench",
        help="bound a KernelBench-layout suite and write a headroom report",
        description="Bound every problem of a KernelBench-layout folder (level1/1_Name.py, ...) on one or "
        "more GPUs, join measured times, and write a headroom report.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "root", metavar="ROOT", help="KernelBench-layout folder (or a KernelBench clone)"
    )
    p.add_argument(
        "--arch",
        nargs="+",
        required=True,
        metavar="NAME",
        help="GPU spec names (see `solar specs`)",
    )
    p.add_argument(
        "--out", required=True, type=Path, metavar="DIR", help="output folder (results and report)"
    )
    p.add_argument(
        "--level", nargs="+", type=int, default=[], metavar="N", help="only these levels"
    )
    p.add_argument(
        "--problems", metavar="GLOB", help="only problems whose path or file name matches"
    )
    p.add_argument(
        "--jobs", type=int, default=os.cpu_count() or 1, metavar="N", help="parallel workers"
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=300.0,
        metavar="S",
        help="seconds per problem (default 300)",
    )
    p.add_argument("--force", action="store_true", help="redo pairs already in results.jsonl")
    p.add_argument(
        "--isolation",
        choices=("fork", "subprocess"),
        default="fork",
        help="fork: workers forked from a warm fork server (default, fast); subprocess: a fresh "
        "`python -m solar.cli analyze` per problem",
    )
    p.add_argument(
        "--measured",
        nargs="+",
        default=[],
        metavar="[VARIANT=]FILE",
        help="measured times (see below)",
    )
    p.add_argument(
        "--measured-arch", metavar="NAME", help="GPU of every --measured time (overrides the files)"
    )
    p.add_argument(
        "--measure", action="store_true", help="time each problem here with `solar validate` (CUDA)"
    )
    p.add_argument(
        "--measure-timeout", type=float, default=600.0, metavar="S", help="seconds per validate run"
    )
    a = p.add_argument_group("analysis flags passed to every `solar analyze`")
    a.add_argument(
        "--precision", metavar="POLICY", help="tensor-core precision policy (exact, fastest)"
    )
    a.add_argument("--clock-mhz", type=float, metavar="MHZ", help="locked SM clock")
    a.add_argument("--mode", metavar="MODE", help="passed through as --mode")
    a.add_argument("--cache", metavar="CACHE", help="passed through as --cache")
    p.set_defaults(fn=run)
    return p


def analysis_flags(args: argparse.Namespace) -> tuple[str, ...]:
    flags: list[str] = []
    for attr, flag in ANALYSIS_FLAGS:
        value = getattr(args, attr, None)
        if value is not None:
            flags += [flag, f"{value:g}" if isinstance(value, float) else str(value)]
    return tuple(flags)


def run(args: argparse.Namespace) -> int:
    from rich.console import Console

    from solar.kernelbench.measure import MEASURED_FILE, measure_suite
    from solar.kernelbench.measured import load_measured
    from solar.kernelbench.problems import find_problems
    from solar.kernelbench.report import write_report
    from solar.kernelbench.results import RESULTS_FILE, read_rows, sorted_rows
    from solar.kernelbench.runner import RunConfig, resolve_archs, run_analysis
    from solar.kernelbench.summary import Context

    console = Console(stderr=True, highlight=False)
    problems = find_problems(args.root, tuple(args.level), args.problems)
    archs = resolve_archs(args.arch)
    measured = [load_measured(spec, args.measured_arch) for spec in args.measured]
    config = RunConfig(
        problems=tuple(problems),
        archs=archs,
        out=args.out,
        flags=analysis_flags(args),
        jobs=args.jobs,
        timeout_s=args.timeout,
        force=args.force,
        isolation=args.isolation,
    )
    stats = run_analysis(config)
    console.print(
        f"analysed {stats.launched} problems in {stats.wall_seconds:.1f} s wall ({args.jobs} jobs); "
        f"{stats.skipped} (problem, GPU) pairs already done"
    )
    measure_note = None
    if args.measure:
        mstats = measure_suite(problems, args.out, args.measure_timeout, args.force)
        measure_note = mstats.note()
        console.print(f"measure: {measure_note}")
    if (args.out / MEASURED_FILE).is_file():
        measured.append(load_measured(str(args.out / MEASURED_FILE), args.measured_arch))
    rows = sorted_rows(read_rows(args.out / RESULTS_FILE)[0])
    all_archs = tuple(archs) + tuple(sorted({r.arch for r in rows} - set(archs)))
    ctx = Context(
        root=str(args.root),
        archs=all_archs,
        flags=config.flags,
        wall_seconds=stats.wall_seconds,
        jobs=args.jobs,
        launched=stats.launched,
        skipped=stats.skipped,
        measured_files=tuple(measured),
        measure_note=measure_note,
    )
    written = write_report(args.out, ctx, rows)
    cov = written.summary_data["coverage"]
    counts = {s: sum(c[s] for c in cov.values()) for s in ("ok", "unsupported", "error", "timeout")}
    console.print(
        f"{sum(counts.values())} problems: "
        + ", ".join(f"{n} {s}" for s, n in counts.items())
        + f"; report: {written.html}"
    )
    violations = written.joined.violations
    if violations:
        console.print(
            f"[bold red]{len(violations)} VIOLATION(S)[/]: measured below a lower bound (see the report)"
        )
    return 1 if violations else 0


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m solar.kernelbench ROOT ...`: the subcommand on its own, with `solar`'s error rules."""
    from solar.cli import _Parser

    parser = _Parser(prog="solar")
    add_parser(parser.add_subparsers(dest="command", parser_class=_Parser))
    try:
        args = parser.parse_args(["kernelbench", *(sys.argv[1:] if argv is None else argv)])
        return args.fn(args)
    except SolarError as exc:
        print(f"solar: error: {' '.join(str(exc).split(chr(10))[0].split())}", file=sys.stderr)
        return 2
