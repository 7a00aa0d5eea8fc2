"""`solar definitions DIR`: bound every workload of a folder of SOL-ExecBench / FlashInfer-Bench
definitions on one or more GPUs with the KernelBench suite runner (one isolated trace per workload;
timeouts, resume and `--ray` as `solar kernelbench` has them), score measured kernels, and write
OUT/bounds.jsonl (one line per definition, workload and GPU) beside the kernelbench report files."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rich.console import Console

from solar.commands.args import Parser
from solar.errors import SolarError, UsageError
from solar.kernelbench.cli import add_batch_flags, checked_batch_flags, run_config, stoppable
from solar.kernelbench.results import RESULTS_FILE, read_rows, sorted_rows
from solar.kernelbench.runner import run_analysis

EXAMPLES = """examples:
  solar definitions benchmarks/definitions --arch B200 --clock-mhz 1500 --out defs/
  solar definitions benchmarks/definitions --arch H100-SXM --out defs/       # same OUT: rows add up
  solar definitions flashinfer-trace/ --definitions 'gqa_paged*' --arch B200 --out r/ --jobs 4
  solar definitions DIR --arch B200 --clock-mhz 1500 --out r/ --measured traces.jsonl
  solar definitions DIR --arch B200 --out r/ --ray              # a local Ray cluster
  solar definitions DIR --arch B200 --out r/ --ray auto         # the running Ray cluster

DIR holds NAME/definition.json + NAME/workload.jsonl folders (SOL-ExecBench), or definitions/**.json
with workloads/**.jsonl (FlashInfer-Trace); a definition found in two folders with the same workloads
is read once. Each workload becomes a KernelBench-format problem file OUT/problems/DEFINITION/UUID.py
(the reference source, then a harness calling run(...) at the workload's shapes) bounded by `solar
analyze` in a process of its own.

A definition's `reference` is Python code and solar runs it, as it runs a model file: in the worker
process that bounds each workload (never in this process, never while reading DIR). Bound only
definitions you would run. Workload JSONL, axis expressions and constraints are data (the
expressions go through a restricted arithmetic evaluator), never run as code. Results: OUT/results.jsonl
(the runner's rows; a re-run resumes), OUT/bounds.jsonl (one line per definition, workload, GPU with
every bound level and, with --measured, the score; the definitions of this run only), summary.json, results.csv, report.html, and
scores.csv with --measured.

--clock-mhz scales the clock-bound rates (tensor cores, SIMT and SFU pipes) by MHZ / boost clock, which
is sound for a locked SM clock; memory bandwidth is not scaled (DRAM and L2 do not run on the SM
clock), so memory-bound workloads keep their bound.

--measured reads FlashInfer-Bench / SOL-ExecBench traces (evaluation.performance.latency_ms and
reference_latency_ms, evaluation.environment.hardware) or flat records {"definition", "workload",
"arch", "kernel_seconds"|"kernel_ms", "baseline_seconds"|"baseline_ms"}; the score is
S = 1 / (1 + (T_k - T_SOL) / (T_b - T_SOL)). Exit status 1 when a measured time is below a bound.
"""


def register(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "definitions",
        help="bound SOL-ExecBench / FlashInfer-Bench definitions and workloads, score kernels",
        description="Bound every workload of a folder of definitions (definition.json + workload.jsonl) "
        "on one or more GPUs, score measured kernels, and write a report.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("root", metavar="DIR", help="folder of definitions (their `reference` is Python code that solar runs in its worker processes)")
    p.add_argument("--arch", nargs="+", default=["B200"], metavar="NAME", help="GPU spec names (default B200)")
    p.add_argument("--out", required=True, type=Path, metavar="DIR", help="output folder")
    p.add_argument("--definitions", metavar="GLOB", help="only definitions whose name matches")
    p.add_argument("--measured", nargs="+", default=[], metavar="FILE", help="measured kernel and baseline times (see below)")
    p.add_argument("--suspicious-ratio", type=float, default=None, metavar="R", help="flag kernels below R x T_SOL (default 1.25)")
    add_batch_flags(p, "workload")
    p.set_defaults(fn=run, mode=None)
    return p


def run(args: argparse.Namespace) -> int:
    return stoppable(_run, args)


def _run(args: argparse.Namespace) -> int:
    # the suite reader, the scores and the report: not paid by --help or a bad flag
    from solar.definitions.report import definition_rows, write_definitions_report
    from solar.definitions.scores import DEFAULT_SUSPICIOUS_RATIO, load_timings
    from solar.definitions.suite import cases, copies_note, find_definitions, write_problems

    console = Console(stderr=True, highlight=False)
    entries = find_definitions(args.root, args.definitions)  # every file is checked first
    for note in filter(None, map(copies_note, entries)):
        print(f"note: {note}", file=sys.stderr)
    all_cases = cases(entries)
    ratio = DEFAULT_SUSPICIOUS_RATIO if args.suspicious_ratio is None else args.suspicious_ratio
    if not ratio >= 1.0:
        raise UsageError(f"--suspicious-ratio must be at least 1 (a multiple of T_SOL), got {ratio!r}")
    archs, flags = checked_batch_flags(args)
    timings = [t for f in args.measured for t in load_timings(f, args.measured_arch)]
    problems = write_problems(all_cases, args.out)
    config = run_config(args, problems, archs, flags)
    stats = run_analysis(config)
    console.print(
        f"bounded {stats.launched} workloads of {len(entries)} definitions in {stats.wall_seconds:.1f} s "
        f"wall; {stats.skipped} (workload, GPU) pairs already done"
    )
    wanted = {c.rel for c in all_cases}
    rows = [r for r in sorted_rows(read_rows(args.out / RESULTS_FILE)[0]) if r.problem in wanted]
    records = definition_rows(all_cases, rows)
    written = write_definitions_report(args.out, args.root, config, stats, rows, records, timings, ratio)
    for line in written.lines:
        console.print(line)
    return 1 if written.violations else 0


def main() -> int:  # pragma: no cover - `python -m solar.definitions.cli`
    alone = Parser(prog="solar")
    register(alone.add_subparsers(dest="command", parser_class=Parser))
    try:
        args = alone.parse_args(["definitions", *sys.argv[1:]])
        return args.fn(args)
    except SolarError as exc:
        print(f"solar: error: {' '.join(str(exc).split(chr(10))[0].split())}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
