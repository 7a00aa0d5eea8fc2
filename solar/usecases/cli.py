"""`solar compare` and `solar provision` (one GPU, or the links of multi-GPU systems), and the comparison table and `--plot` of `solar analyze`
with several GPUs."""

from __future__ import annotations

import argparse
from typing import Any

from rich.markup import escape

from solar.backends.assumptions import Assumptions
from solar.backends.levels import SOL_LEVELS, Level
from solar.backends.levels import title as level_title
from solar.commands import sharded
from solar.commands.args import (
    add_hf_flags,
    add_mode_flags,
    add_run_flags,
    add_share_flag,
    add_train_flags,
    check_program,
    clock_mhz,
)
from solar.errors import UsageError
from solar.report import render
from solar.usecases import plots

DEFAULT_ARCHS = ("L4", "A100-SXM4-80GB", "H100-SXM", "H200-SXM", "B200")
DEFAULT_LIKE = "H100-SXM"
COMPARE_EXAMPLES = """examples:
  solar compare examples/matmul.py --arch L4 A100-SXM4-80GB H100-SXM H200-SXM B200
  solar compare examples/attention.py --arch A100 H100 --json
  solar compare examples/mlp.py --plot roofline.png
  solar compare examples/distributed/tp_mlp.py --world-size 8 --system 8xH100-SXM 8xB200 8xA100-SXM
  solar compare hf:meta-llama/Llama-2-70b-hf --scenario decode --context 4096 --tp 8 --system 8xH100-SXM 8xB200
"""
PROVISION_EXAMPLES = """examples:
  solar provision examples/matmul.py --target-ms 0.5 --like H100-SXM
  solar provision examples/layernorm_softmax.py --target-ms 0.05 --like L4 --json
  solar provision examples/mlp.py --target-ms 0.1 --level fused --plot plane.svg
  solar provision examples/distributed/tp_mlp.py --world-size 8 --system 8xH100-SXM 8xA100-SXM --target-ms 0.06
  solar provision hf:meta-llama/Llama-2-70b-hf --scenario decode --context 4096 --tp 8 --system 8xH100-SXM --target-ms 20
"""


def _plot_path(text: str) -> str:
    try:
        return plots.check_plot_path(text)
    except UsageError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _positive_ms(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of milliseconds") from None
    if not (value > 0 and value < float("inf")):
        raise argparse.ArgumentTypeError(
            f"{text!r}: a target is a positive, finite number of milliseconds"
        )
    return value


def add_analyze_flags(p: argparse.ArgumentParser) -> None:
    """`--plot` for `solar analyze`."""
    p.add_argument(
        "--plot",
        type=_plot_path,
        default=None,
        metavar="FILE",
        help="draw the program on every GPU's roofline (.svg, .png or .pdf)",
    )


def show_analysis(args: argparse.Namespace, loaded: Any, reports: list) -> bool:
    """After `solar analyze`: with several GPUs print the one comparison table (after the per-GPU
    reports when --per-op or --group-by asks for them); write --plot. True when it printed."""
    several = len(reports) > 1
    comparison = None
    if several or args.plot:
        from solar.usecases.compare import build_comparison  # scipy.optimize

        comparison = build_comparison(loaded, reports, args.precision, args.clock_mhz, args.cache)
    if args.plot:
        plots.roofline(comparison, args.plot)
    if args.json or not several:
        return False
    if args.per_op or args.group_by:
        for r in reports:
            render.print_report(r, args.per_op, args.group_by, top=args.top, verbose=args.verbose)
    print_comparison(comparison)
    return True


def print_comparison(c: Any) -> None:
    con = render.console()
    title = f"{c.program} on {len(c.rows)} GPUs (ratio: bound / {c.reference}'s)"
    levels = c.levels()  # the union over the GPUs: a calibrated one may have more
    cols = ("GPU", "clock", *(level_title(lv) for lv in levels), "what changes the binding (fused)",
            "precision paths")
    table = render.table(escape(title), cols, show_lines=True)
    for row in c.rows:
        cells = [
            f"{render.fmt_seconds(cell.seconds)} ({'-' if cell.ratio is None else f'{cell.ratio:.3g}'}x)\n{cell.binds}"
            if (cell := row.levels.get(level)) is not None
            else "–"
            for level in levels
        ]
        paths = " ".join(row.tensor_paths) or "none"
        prec = "\n".join([*row.precision, f"tensor: {paths}"])
        change = row.change.get(Level.FUSED, "-")
        ca = row.change.get(Level.CACHE_AWARE)
        if ca and ca != change:  # forced traffic moved the binding term
            change += f"\ncache-aware: {ca}"
        table.add_row(escape(row.arch), row.clock, *cells, escape(change), escape(prec))
    con.print(table)
    con.print(
        f"totals: {render.fmt_count(c.flops, 'FLOP')}, compulsory DRAM {render.fmt_count(c.dram_bytes, 'B')}, "
        f"cache-aware DRAM {render.fmt_count(c.cache_aware_dram_bytes, 'B')} (on the reference GPU); "
        f"precision {c.precision}, cache {c.cache}; dense datasheet peaks",
        highlight=False,
    )


def print_provision(p: Any) -> None:
    con = render.console()
    con.print(
        f"[bold]{escape(p.program)}[/bold]: target {render.fmt_seconds(p.target_seconds)}, {p.level} bound, "
        f"like [bold]{escape(p.like)}[/bold] (there: {render.fmt_seconds(p.like_seconds)}; compute "
        f"{render.fmt_seconds(p.compute_seconds)}, memory {render.fmt_seconds(p.memory_seconds)}, launch "
        f"{render.fmt_seconds(p.launch_seconds)})",
        highlight=False,
    )
    cols = ("resource", "needed", f"{p.like} has", "ratio", "bound with it", "note")
    table = render.table("each resource alone (the others as on the like GPU)", cols)
    for r in p.requirements:
        needed = (
            "-"
            if r.value is None
            else ("<= " if r.limit == "max" else ">= ") + _amount(r.value, r.unit)
        )
        table.add_row(
            escape(r.resource),
            needed,
            "-" if r.like_value is None else _amount(r.like_value, r.unit),
            "-" if r.ratio is None else f"{r.ratio:.4g}x",
            "-" if r.check_seconds is None else render.fmt_seconds(r.check_seconds),
            escape(r.note),
        )
    con.print(table)
    if p.frontier:
        f = p.frontier[0]
        con.print(
            f"{p.level} frontier: one corner (its terms are a max): DRAM >= {_amount(f.bandwidth_bytes_per_s, 'bytes/s')} "
            f"and compute >= {f.compute_scale:.4g}x {p.like}'s rates",
            highlight=False,
        )
    if p.unfused_frontier:
        pts = ", ".join(
            f"({_amount(q.bandwidth_bytes_per_s, 'bytes/s')}, {q.compute_scale:.4g}x)"
            for q in p.unfused_frontier[:8]
        )
        more = f" ... {len(p.unfused_frontier)} points" if len(p.unfused_frontier) > 8 else ""
        con.print(
            f"unfused (eager) frontier (bandwidth, compute scale): {pts}{more}", highlight=False
        )
    meets = [s.arch for s in p.specs if s.meets]
    con.print(
        f"specs meeting the target at the {p.level} bound: {', '.join(meets) or 'none'}",
        highlight=False,
    )
    for s in p.specs:
        con.print(
            f"  {s.arch}: {render.fmt_seconds(s.seconds)}{'' if s.meets else ' (misses)'}",
            highlight=False,
        )


def _amount(x: float, unit: str) -> str:
    if unit == "s":
        return render.fmt_seconds(x)
    if unit == "x":
        return f"{x:.6g}x"
    if unit == "MHz":
        return f"{x:.6g} MHz"
    if unit == "bytes":
        return render.fmt_count(x, "B")
    return render.fmt_count(x, unit.replace("bytes/s", "B/s"))


def _check_system(args: argparse.Namespace, refused: str | None) -> None:
    """--system takes a sharded program per rank (as `analyze --system`); without it, the sharding
    and hf: flags do not apply. `refused`: the line for one-GPU flags given with --system."""
    hf = (args.scenario, args.batch, args.seq, args.context)
    if args.system is not None:
        if refused:
            raise UsageError(refused)
        if not args.file.startswith("hf:") and any(f is not None for f in hf):
            raise UsageError("--scenario, --batch, --seq and --context apply to hf:<model id or config.json>")
    elif args.file.startswith("hf:") or any(f is not None for f in hf):
        raise UsageError(
            f"solar {args.command} takes hf: models with --system; for one GPU use solar analyze hf:... --arch"
        )
    sharded.check(args)
    check_program(args)


def check_compare(args: argparse.Namespace) -> None:
    """--system compares multi-GPU systems; without it, --arch compares GPUs."""
    if args.system is not None and args.arch is not None:
        raise UsageError("give --arch (GPUs) or --system (multi-GPU systems), not both")
    one_gpu = args.plot or args.host is not None or args.train
    _check_system(args, "--plot, --host and --train apply to --arch; drop them with --system" if one_gpu else None)
    if args.arch is None and args.system is None:
        args.arch = list(DEFAULT_ARCHS)


def check_provision(args: argparse.Namespace) -> None:
    """--system provisions the links of multi-GPU systems; without it, one GPU like --like."""
    flags = (("--like", args.like), ("--level", args.level), ("--plot", args.plot), ("--train", args.train or None))
    given = [f for f, v in flags if v is not None]
    _check_system(args, f"{given[0]} provisions one GPU; with --system solar provisions the links for the fused "
                  f"bound: drop {given[0]}" if given else None)


def cmd_compare(args: argparse.Namespace) -> int:
    from solar import api
    from solar.usecases.compare import build_comparison  # scipy.optimize

    if args.system:
        assumptions = Assumptions(precision=args.precision, clock_mhz=args.clock_mhz, cache=args.cache)
        return sharded.run(args, assumptions, compare=True)
    loaded = _load(args)
    assumptions = Assumptions(precision=args.precision, clock_mhz=args.clock_mhz, cache=args.cache)
    reports = api.analyze_archs(loaded, args.arch, assumptions, host=args.host)
    comparison = build_comparison(loaded, reports, assumptions)
    return _emit(args, comparison, "roofline", print_comparison)


def cmd_provision(args: argparse.Namespace) -> int:
    from solar import hardware
    from solar.usecases.provision import provision_loaded  # scipy.optimize

    assumptions = Assumptions(precision=args.precision, clock_mhz=args.clock_mhz)
    if args.system:
        return sharded.provision(args, assumptions, args.target_ms)
    like, level = args.like or DEFAULT_LIKE, args.level or Level.CACHE_AWARE.value
    hardware.get_spec(like)
    loaded = _load(args)
    prov = provision_loaded(loaded, args.target_ms / 1e3, like, level, assumptions)
    return _emit(args, prov, "provision_plane", print_provision)


def _emit(args: argparse.Namespace, result: Any, plot: str, show: Any) -> int:
    """--plot (the solar.usecases.plots function named `plot`), then JSON or the table."""
    if args.plot:
        getattr(plots, plot)(result, args.plot)
    if args.json:
        print(result.to_json())
    else:
        show(result)
    return 0


def _load(args: argparse.Namespace) -> Any:
    from solar import api, hardware  # the analysis (islpy, lark): not paid by --help

    if getattr(args, "arch", None):
        for arch in args.arch:
            hardware.get_spec(arch)
    return api.load(
        args.file,
        mode=args.mode,
        infer_structure=args.infer_structure,
        train=args.train,
        loss=args.loss,
        optimizer=args.optimizer,
        debug=args.debug,
    )


def register(sub: argparse._SubParsersAction) -> None:
    """`solar compare` and `solar provision`."""

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("file", help="KernelBench-format model file, a JAX file, or .ir text")
        p.add_argument("--json", action="store_true", help="print the result as JSON")
        p.add_argument(
            "--precision",
            choices=("exact", "fastest"),
            default="exact",
            help="tensor-core precision policy",
        )
        p.add_argument(
            "--clock-mhz",
            type=clock_mhz,
            default=None,
            metavar="MHZ",
            help="locked SM clock in MHz",
        )
        p.add_argument(
            "--plot",
            type=_plot_path,
            default=None,
            metavar="FILE",
            help="write the plot (.svg, .png, .pdf)",
        )
        add_train_flags(p)
        add_mode_flags(p)
        add_run_flags(p)

    c = sub.add_parser(
        "compare",
        help="one program's bounds across GPUs, as one table",
        epilog=COMPARE_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    common(c)
    c.add_argument(
        "--arch",
        nargs="+",
        default=None,
        metavar="NAME",
        help=f"GPU spec names; the first is the reference (default: {' '.join(DEFAULT_ARCHS)})",
    )
    add_hf_flags(c)
    add_share_flag(c)
    sharded.add_flags(c)
    c.add_argument(
        "--cache", choices=("cold", "warm"), default="cold", help="cache state before the run"
    )
    c.add_argument(
        "--host", default=None, metavar="NAME|FILE",
        help="host profile whose dispatch floors bound eager_host (default: the default profile)",
    )
    c.set_defaults(fn=cmd_compare, check=check_compare)
    p = sub.add_parser(
        "provision",
        help="the least hardware with which a program could meet a target time",
        epilog=PROVISION_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    common(p)
    p.add_argument(
        "--target-ms",
        type=_positive_ms,
        required=True,
        metavar="T",
        help="target time in milliseconds",
    )
    p.add_argument(
        "--like", default=None, metavar="NAME",
        help=f"the GPU whose other resources are kept (default {DEFAULT_LIKE})",
    )
    p.add_argument(
        "--level",
        choices=sorted(lv.value for lv in SOL_LEVELS),
        default=None,
        help="the bound to invert (default cache_aware; on-chip capacity always uses it)",
    )
    add_hf_flags(p)
    add_share_flag(p)
    sharded.add_flags(p, need=False)
    p.set_defaults(fn=cmd_provision, check=check_provision)
