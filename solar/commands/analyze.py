"""`solar analyze`: bound a program on one or more GPUs (a report per GPU, or JSON; with several GPUs
one comparison table; `--symbolic` for formulas)."""

from __future__ import annotations

import argparse

from solar.backends.assumptions import Assumptions
from solar.commands import sharded
from solar.commands.args import (
    Progress,
    add_hf_flags,
    add_level_flags,
    add_mode_flags,
    add_run_flags,
    add_share_flag,
    add_train_flags,
    add_view_flags,
    check_frontend,
    check_gpus,
    check_loss,
    clock_mhz,
    html_path,
    measured,
)
from solar.errors import UsageError
from solar.frontends.llm import cli as llm_cli
from solar.report import html, render, reports_to_json, with_insights
from solar.symbolic import cli as symbolic_cli
from solar.usecases import cli as usecases_cli
from solar.userfiles import read_text


def register(sub: argparse._SubParsersAction) -> None:
    a = sub.add_parser("analyze", help="bound a program on one or more GPUs")
    a.add_argument(
        "file", help="KernelBench-format model file (Model, get_inputs, get_init_inputs), a JAX file, or .ir text"
    )
    a.add_argument("--arch", nargs="+", default=["H100-SXM"], metavar="NAME", help="GPU spec names (see `solar specs`)")
    a.add_argument("--json", action="store_true", help="print JSON (one object per arch; a list when several)")
    a.add_argument("--precision", choices=("exact", "fastest"), default="exact", help="tensor-core precision policy")
    a.add_argument(
        "--clock-mhz", type=clock_mhz, default=None, metavar="MHZ",
        help="locked SM clock in MHz (scales compute rates, not DRAM)",
    )
    a.add_argument(
        "--cache", choices=("cold", "warm"), default="cold",
        help="cold: L2 flushed before the run (default); warm: inputs up to the L2 capacity may be resident",
    )
    a.add_argument(
        "--measured", nargs="+", type=measured, default=[], metavar="MODE=SECONDS",
        help="measured times (eager=0.0012 compile=8e-4): opportunities rank the time lost per level",
    )
    a.add_argument(
        "--measured-ops", default=None, metavar="FILE",
        help="per-op measured times (benchmarks/measure_ops.py JSON/JSONL): each op's time lost against its bound, ranked",
    )
    a.add_argument("--per-op", action="store_true", help="show every op and every einsum node")
    a.add_argument("--html", type=html_path, default=None, metavar="OUT.html",
                   help="also write a self-contained HTML report (one section per GPU)")
    add_view_flags(a)
    add_level_flags(a)
    a.add_argument(
        "--group-by", choices=("module", "layer", "op"), default=None,
        help="roll the op table up by module path, by layer (the path to its first index: "
        "layers.3), or by op type",
    )
    add_hf_flags(a)
    usecases_cli.add_analyze_flags(a)  # --plot
    add_train_flags(a)
    add_mode_flags(a)
    add_share_flag(a)
    add_run_flags(a)
    sharded.add_flags(a)
    llm_cli.add_flags(a)
    symbolic_cli.add_flags(a)
    a.set_defaults(fn=cmd_analyze, check=check_analyze)


def check_hf_flags(args: argparse.Namespace) -> None:
    """--scenario and its flags belong to the `hf:` form alone, which analyses for inference."""
    if not args.file.startswith("hf:"):
        if any(f is not None for f in (args.scenario, args.batch, args.seq, args.context)):
            raise UsageError("--scenario, --batch, --seq and --context apply to hf:<model id or config.json>")
    elif args.train or args.mode or args.infer_structure:
        raise UsageError("hf: models are analysed for inference; drop --train, --mode and --infer-structure")


#: what a --measured-ops file is, in its one-line errors (as solar.report.measured_ops reads it).
MEASURED_OPS_FILE = "a per-op measurement file (benchmarks/measure_ops.py)"


def check_analyze(args: argparse.Namespace) -> None:
    """What analyze checks before the program's framework is imported: the GPU names, the `hf:`
    flags, the loss and frontend flags against the file, and that a --measured-ops file can be read
    (none of which --symbolic reads)."""
    check_gpus(args)
    sharded.check(args)
    symbolic_cli.check(args)
    if args.symbolic and args.html:
        raise UsageError("--html writes the numeric report; drop --symbolic or --html")
    if args.symbolic:
        return
    check_hf_flags(args)
    check_loss(args)
    check_frontend(args)
    if args.measured_ops is not None:
        read_text(args.measured_ops, MEASURED_OPS_FILE, UsageError)


def _load_hf(args: argparse.Namespace):
    """The `hf:` form of analyze (its flags checked by check_hf_flags)."""
    from solar import api

    if not args.file.startswith("hf:"):
        return None
    from solar.frontends.torch.hf import scenario  # torch

    return api.load_hf(args.file, scenario(args.scenario, args.batch, args.seq, args.context), debug=args.debug)


def cmd_analyze(args: argparse.Namespace) -> int:
    from solar import api  # the analysis (islpy, lark): not paid by --help or a bad flag
    from solar.hardware import get_host, get_spec

    for arch in args.arch:  # a bad GPU name or spec file is reported before the program is traced
        get_spec(arch)
    if args.host is not None:  # so is a bad host profile
        get_host(args.host)
    assumptions = Assumptions(precision=args.precision, cache=args.cache, clock_mhz=args.clock_mhz)
    if args.symbolic:
        return symbolic_cli.run(args, assumptions, lambda path: api.load(path, train=args.train, debug=args.debug).program)
    if args.system:
        return sharded.run(args, assumptions)
    progress = Progress()
    progress(f"tracing and lowering {args.file}")
    loaded = _load_hf(args) or api.load(
        args.file, mode=args.mode, infer_structure=args.infer_structure,
        train=args.train, loss=args.loss, optimizer=args.optimizer,
        frontend=args.frontend, llm=llm_cli.config(args), share_layers=args.share_layers, debug=args.debug,
    )
    reports = api.analyze_archs(
        loaded, args.arch, assumptions,
        on_arch=lambda a: progress(f"pricing {a}"),
        dispatch_us=args.dispatch_us, grid_sync_us=args.grid_sync_us, measured_ops=args.measured_ops,
        host=args.host,
    )
    progress.done()
    if args.measured:
        reports = [with_insights(r, measured=dict(args.measured)) for r in reports]
    if args.html:
        html.write_page(args.html, reports)
    if args.json:
        print(reports_to_json(reports))
    # several GPUs: one comparison table; --plot
    if not usecases_cli.show_analysis(args, loaded, reports) and not args.json:
        for r in reports:
            render.print_report(r, args.per_op, args.group_by, top=args.top, verbose=args.verbose)
    return 0
