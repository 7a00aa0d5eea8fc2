"""`solar kernelbench`: bound every problem of a KernelBench-layout folder, join measured times, and
write a headroom report. `register` adds the subcommand to `solar`'s subparsers; `main` runs it alone
(`python -m solar.kernelbench ROOT ...`)."""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console

from solar.commands import analyze
from solar.commands.args import Parser
from solar.commands.entry import parser
from solar.errors import SolarError, UsageError
from solar.hardware import get_spec
from solar.hardware.host import get_host
from solar.kernelbench.measure import MEASURED_FILE, measure_suite
from solar.kernelbench.measured import load_measured
from solar.kernelbench.plan import RunConfig, check_jobs, check_seconds, resolve_archs
from solar.kernelbench.problems import find_problems
from solar.kernelbench.procs import NOTE, TRACKING
from solar.kernelbench.ray_runner import measure_on_ray
from solar.kernelbench.report import write_report
from solar.kernelbench.results import DISK_FULL, RESULTS_FILE, read_rows, sorted_rows, write_failed
from solar.kernelbench.runner import run_analysis
from solar.kernelbench.signals import Interrupted, signals_as_exceptions
from solar.kernelbench.summary import Context
from solar.kernelbench.zygote import stop_server
from solar.userfiles import check_writable_dir

EXAMPLES = """examples:
  solar kernelbench benchmarks/suite --level 1 2 3 --arch H100-SXM H200-SXM --out report/
  solar kernelbench KernelBench --level 1 --problems '*matmul*' --arch H200 --out r/ --jobs 4
  solar kernelbench KernelBench --arch H100-SXM --out r/ \\
      --measured KernelBench/results/timing/H100_modal/baseline_time_torch.json
  solar kernelbench KernelBench --arch H200-SXM --out r/ --measure        # on a CUDA machine

Each problem is analysed by `solar analyze FILE --arch ... --json` in a process of its own (a crash or
a hang costs one row), forked from a fork server that has imported torch and solar once (or, with
--isolation subprocess, a fresh `python -m solar.cli analyze` per problem). Rows are appended to OUT/results.jsonl as problems finish; a re-run skips the
(problem, GPU) pairs already there with the same analysis flags (--force redoes them all;
--retry-timeouts the timed-out ones, say with a longer --timeout; --retry-errors the crashed ones).
Runs may share one OUT at once (other GPUs, or the same ones: a pair one run is analysing is left
to it): rows are appended and the file compacted under a lock in OUT/.locks/, lines that are no row
moved to results.jsonl.bad. OUT also gets results.csv, summary.json and a self-contained report.html;
a full disk keeps the rows written and ends the run with one line (exit 2). Exit status 1 when a
measured time is below a bound (a violation: a bug in solar); 2 for a bad flag (every flag is checked
before anything starts).

Ctrl-C, SIGTERM or SIGHUP stop the run cleanly: every worker (and whatever it started, grandchildren
in sessions of their own included) and the fork server are killed, temporary folders removed, rows
already written kept (a re-run resumes); the exit status is 128 + the signal (130, 143, 129).

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
    ("host", "--host"),
)


def _seconds(flag: str):
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise UsageError(f"{flag} must be a number of seconds, got {text!r}") from None
        return check_seconds(value, flag)

    return parse


def _jobs(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise UsageError(f"--jobs must be a whole number of at least 1, got {text!r}") from None
    return check_jobs(value)


def _level(text: str) -> int:
    if not (text.isascii() and text.isdigit()):
        raise UsageError(f"--level takes level numbers (0, 1, 2, ...), got {text!r}")
    return int(text)


#: the highest --clock-mhz accepted: no GPU clocks its SMs near 10 GHz.
MAX_CLOCK_MHZ = 10_000.0


def _clock(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and 0 < value <= MAX_CLOCK_MHZ):
        raise UsageError(
            f"--clock-mhz must be a clock in MHz above 0 and at most {MAX_CLOCK_MHZ:g}, got {text!r}"
        )
    return value


def add_batch_flags(p: argparse.ArgumentParser, unit: str) -> argparse._ArgumentGroup:
    """The flags of every batch command (kernelbench, definitions): workers, timeouts, resume,
    Ray, --measured-arch, and the analysis flags passed to each `solar analyze` (returned as a
    group, for a command's own)."""
    p.add_argument(
        "--jobs", type=_jobs, default=os.cpu_count() or 1, metavar="N", help="parallel workers"
    )
    p.add_argument(
        "--timeout",
        type=_seconds("--timeout"),
        default=300.0,
        metavar="S",
        help=f"seconds per {unit} (default 300)",
    )
    p.add_argument("--force", action="store_true", help="redo pairs already in results.jsonl")
    p.add_argument(
        "--retry-timeouts",
        action="store_true",
        help="redo pairs whose row is a timeout (after raising --timeout, say)",
    )
    p.add_argument(
        "--retry-errors",
        action="store_true",
        help="redo pairs whose row is an error (a crash, a killed worker)",
    )
    p.add_argument(
        "--isolation",
        choices=("fork", "subprocess"),
        default="fork",
        help="fork: workers forked from a warm fork server (default, fast); subprocess: a fresh "
        f"`python -m solar.cli analyze` per {unit}",
    )
    p.add_argument(
        "--ray",
        nargs="?",
        const="",
        default=None,
        metavar="ADDRESS",
        help="run the workers as Ray tasks: no ADDRESS starts a local cluster, "
        "'auto' joins the running one; put it last or write --ray=ADDRESS (pip install 'solar-sol[ray]')",
    )
    p.add_argument(
        "--measured-arch", metavar="NAME", help="GPU of every --measured time (overrides the files)"
    )
    a = p.add_argument_group("analysis flags passed to every `solar analyze`")
    a.add_argument(
        "--precision", metavar="POLICY", help="tensor-core precision policy (exact, fastest)"
    )
    a.add_argument("--clock-mhz", type=_clock, metavar="MHZ", help="locked SM clock")
    a.add_argument("--cache", metavar="CACHE", help="passed through as --cache")
    return a


def register(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
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
        "--level", nargs="+", type=_level, default=[], metavar="N", help="only these levels"
    )
    p.add_argument(
        "--problems", metavar="GLOB", help="only problems whose path or file name matches"
    )
    p.add_argument(
        "--measured",
        nargs="+",
        default=[],
        metavar="[VARIANT=]FILE",
        help="measured times (see below)",
    )
    p.add_argument(
        "--measure", action="store_true", help="time each problem here with `solar validate` (CUDA; on Ray with --ray)"
    )
    p.add_argument(
        "--measure-timeout", type=_seconds("--measure-timeout"), default=600.0, metavar="S", help="seconds per validate run"
    )
    a = add_batch_flags(p, "problem")
    a.add_argument("--mode", metavar="MODE", help="passed through as --mode")
    a.add_argument("--host", metavar="NAME|FILE", help="passed through as --host (the host profile of eager_host)")
    p.set_defaults(fn=run)
    return p


def analysis_flags(args: argparse.Namespace) -> tuple[str, ...]:
    flags: list[str] = []
    for attr, flag in ANALYSIS_FLAGS:
        value = getattr(args, attr, None)
        if value is not None:
            flags += [flag, f"{value:g}" if isinstance(value, float) else str(value)]
    return tuple(flags)


def check_analysis_flags(flags: tuple[str, ...], archs: list[str]) -> None:
    """Parse the flags passed through with `solar analyze`'s own parser, as every worker will, and
    look up a --host profile once (a bad one is one line here, not an error per problem)."""
    args = parser([analyze]).parse_args(["analyze", "problem.py", "--arch", *archs, "--json", *flags])
    if args.host is not None:
        get_host(args.host)


def check_out(out: Path) -> None:
    """OUT must be a folder (or creatable as one) that can be written, its results file a file."""
    check_writable_dir(out, "--out", UsageError)
    results = out / RESULTS_FILE
    if results.exists() and not (results.is_file() and os.access(results, os.R_OK | os.W_OK)):
        raise UsageError(
            f"{results}: not a readable and writable file; move it away or pass another --out"
        )


def run(args: argparse.Namespace) -> int:
    """The subcommand: flags checked, the suite analysed (and measured), the report written."""
    return stoppable(_run, args)


def stoppable(body, args: argparse.Namespace) -> int:
    """`body(args)`; a stop signal ends it with one line and 128 + the signal's number
    (solar.kernelbench.signals), the rows in args.out kept; so does a full disk (one line, exit 2)."""
    with signals_as_exceptions():
        try:
            return body(args)
        except OSError as exc:
            if exc.errno not in DISK_FULL:
                raise
            raise write_failed(Path(exc.filename or args.out / RESULTS_FILE), exc) from None
        except Interrupted as stop:
            stop_server()
            print(f"solar: {_stopped_note(stop.name, args.out)}", file=sys.stderr)
            return stop.exit_code


def checked_batch_flags(args: argparse.Namespace) -> tuple[dict, tuple[str, ...]]:
    """The flags every batch command shares, checked before anything starts: the GPUs (and
    --measured-arch), --out, and the analysis flags as each worker will parse them."""
    archs = resolve_archs(args.arch)
    if args.measured_arch is not None:
        get_spec(args.measured_arch)
    check_out(args.out)
    flags = analysis_flags(args)
    check_analysis_flags(flags, list(archs.values()))
    return archs, flags


def run_config(args: argparse.Namespace, problems, archs: dict, flags: tuple[str, ...]):
    """The suite runner's configuration from the shared batch flags."""
    retry = (("timeout", args.retry_timeouts), ("error", args.retry_errors))
    return RunConfig(
        problems=tuple(problems),
        archs=archs,
        out=args.out,
        flags=flags,
        jobs=args.jobs,
        timeout_s=args.timeout,
        force=args.force,
        isolation=args.isolation,
        ray=args.ray,
        retry=tuple(status for status, wanted in retry if wanted),
    )


def _stopped_note(signal_name: str, out: Path) -> str:
    path = out / RESULTS_FILE
    try:
        kept = len(read_rows(path)[0])
    except (OSError, SolarError):
        kept = 0
    if not kept:
        return f"stopped by {signal_name}; no rows were written"
    return (
        f"stopped by {signal_name}; the {kept} rows in {path} are kept "
        "(run the same command again to resume)"
    )


def _run(args: argparse.Namespace) -> int:
    console = Console(stderr=True, highlight=False)
    # every flag is checked before anything starts
    problems = find_problems(args.root, tuple(args.level), args.problems)
    archs, flags = checked_batch_flags(args)
    measured = [load_measured(spec, args.measured_arch) for spec in args.measured]
    config = run_config(args, problems, archs, flags)
    if not TRACKING:
        console.print(f"note: {NOTE}")
    stats = run_analysis(config)
    console.print(
        f"analysed {stats.launched} problems in {stats.wall_seconds:.1f} s wall ({args.jobs} jobs); "
        f"{stats.skipped} (problem, GPU) pairs already done"
    )
    measure_note = None
    if args.measure:
        if args.ray is not None:
            mstats = measure_on_ray(problems, args.out, args.measure_timeout, args.force, args.ray)
        else:
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
    alone = Parser(prog="solar")
    register(alone.add_subparsers(dest="command", parser_class=Parser))
    try:
        args = alone.parse_args(["kernelbench", *(sys.argv[1:] if argv is None else argv)])
        return args.fn(args)
    except SolarError as exc:
        print(f"solar: error: {' '.join(str(exc).split(chr(10))[0].split())}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # before the run's own signal handling was in place
        print("solar: stopped by SIGINT", file=sys.stderr)
        return 130
