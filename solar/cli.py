"""The `solar` command: a thin layer over solar.api. Errors from the SolarError family print as one
line and exit 2; Ctrl-C prints one line and exits 130; anything else is a bug in solar and keeps
its traceback. The analysis commands run under a wall-clock limit (`--timeout`) and, with
`--debug`, show what the user's code and torch/JAX print and the traceback of an error."""

from __future__ import annotations

import argparse
import contextlib
import math
import signal
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import Sequence

from solar.errors import SolarError, UsageError, message_line
from solar import render
from solar.frontends import usercode

EXAMPLES = """examples:
  solar analyze examples/matmul.py --arch H100-SXM
  solar analyze model.py --arch L4 A100-SXM4-80GB H200-SXM --json
  solar verify examples/mlp.py
  solar analyze model.py --mode eval --infer-structure
  solar validate examples/mlp.py --compile      (on a CUDA GPU)
  solar calibrate                               (on a CUDA GPU)
  solar ir examples/matmul.py
  solar analyze program.ir --arch H100-SXM      (IR text, as `solar ir` prints it)
  solar analyze examples/llm/data_dependent.py --llm-base-url http://localhost:8000/v1 --llm-model NAME
  solar llm-cache list
  solar einsum examples/attention.py
  solar kernelbench benchmarks/suite --arch H200-SXM --out report/ --jobs 2
  solar definitions benchmarks/definitions --arch B200 --clock-mhz 1500 --out defs/
  solar compare model.py --arch L4 A100-SXM4-80GB H100-SXM H200-SXM B200 --plot roofline.png
  solar provision model.py --target-ms 0.5 --like H100-SXM
  solar specs
  solar ops
"""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2 (argparse prints usage + line)
        raise UsageError(f"{message} (see `{self.prog} --help`)")


# ---- argument types: a bad value is a one-line usage error before anything runs ------------------

# Default wall-clock limit of one analysis: far above any real one (a 7B-class model takes seconds).
DEFAULT_TIMEOUT_S = 600.0


def _finite(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return value


def _timeout(text: str) -> float:
    value = _finite(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r}: a timeout is seconds >= 0 (0: no limit)")
    return value


def _clock_mhz(text: str) -> float:
    from solar.api import check_clock_mhz

    try:
        return check_clock_mhz(_finite(text))
    except UsageError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _count(lowest: int):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if not lowest <= value < 2**32:
            raise argparse.ArgumentTypeError(f"{text!r}: must be an integer in {lowest}..{2**32 - 1}")
        return value

    return parse


def _new_file(text: str) -> str:
    p = Path(text)
    if p.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is a directory; name the YAML file to write")
    if not p.parent.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r}: folder {str(p.parent)!r} does not exist")
    return text


class _Progress:
    """Stage lines on stderr ("solar: pricing H100-SXM...") while stderr is a terminal. Never when it
    is not: a successful command's stderr stays empty for scripts (and the bad-input corpus), which a
    wall-clock threshold ("print once it runs past 2 s") would break on a loaded machine."""

    @staticmethod
    def enabled() -> bool:
        return sys.stderr.isatty()

    def __init__(self) -> None:
        self.start = time.monotonic()
        self.on = self.enabled()

    def __call__(self, stage: str) -> None:
        if self.on:
            print(f"solar: {stage}...", file=sys.stderr, flush=True)

    def done(self) -> None:
        if self.on:
            print(f"solar: analysed in {time.monotonic() - self.start:.1f} s", file=sys.stderr, flush=True)


def _add_hf_flags(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("hf:<model id or config.json> (an LLM serving step built from its config)")
    g.add_argument("--scenario", choices=("prefill", "decode"), default=None, help="one prefill of --seq tokens, or one decode step")
    g.add_argument("--batch", type=_count(1), default=None, help="sequences in the batch (default 1)")
    g.add_argument("--seq", type=_count(1), default=None, help="prefill: prompt tokens per sequence")
    g.add_argument("--context", type=_count(0), default=None, help="decode: tokens already in the KV cache")


def _load_hf(args: argparse.Namespace):
    """The `hf:` form of analyze; --scenario and its flags belong to it alone."""
    from solar.api import load_hf
    from solar.frontends.torch.hf import scenario

    hf_flags = (args.scenario, args.batch, args.seq, args.context)
    if not args.file.startswith("hf:"):
        if any(f is not None for f in hf_flags):
            raise UsageError("--scenario, --batch, --seq and --context apply to hf:<model id or config.json>")
        return None
    if args.train or args.mode or args.infer_structure:
        raise UsageError("hf: models are analysed for inference; drop --train, --mode and --infer-structure")
    return load_hf(args.file, scenario(*hf_flags))


def cmd_analyze(args: argparse.Namespace) -> int:
    from solar.api import analyze_loaded, load
    from solar.frontends.llm.cli import config as llm_config
    from solar.hardware import get_spec
    from solar.report import reports_to_json

    for arch in args.arch:  # a bad GPU name or spec file is reported before the program is traced
        get_spec(arch)
    if args.symbolic:
        from solar.backends.assumptions import Assumptions
        from solar.symbolic.cli import run

        a = Assumptions(precision=args.precision, cache=args.cache, clock_mhz=args.clock_mhz)
        return run(args, a, lambda path: load(path, train=args.train).program)
    progress = _Progress()
    progress(f"tracing and lowering {args.file}")
    loaded = _load_hf(args) or load(
        args.file, mode=args.mode, infer_structure=args.infer_structure,
        train=args.train, loss=args.loss, optimizer=args.optimizer,
        frontend=args.frontend, llm=llm_config(args), share_layers=args.share_layers,
    )
    reports = []
    for a in args.arch:
        progress(f"pricing {a}")
        reports.append(analyze_loaded(
            loaded, a, args.precision, args.clock_mhz, args.cache,
            dispatch_us=args.dispatch_us, grid_sync_us=args.grid_sync_us, measured_ops=args.measured_ops,
        ))
    progress.done()
    if args.measured:
        from solar.report import with_insights

        reports = [with_insights(r, measured=dict(args.measured)) for r in reports]
    from solar.usecases.cli import show_analysis  # several GPUs: one comparison table; --plot

    if args.json:
        print(reports_to_json(reports))
    if not show_analysis(args, loaded, reports) and not args.json:
        for r in reports:
            render.print_report(r, args.per_op, args.group_by)
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    from rich.table import Table

    from solar.frontends.detect import framework_of

    framework = framework_of(args.file)
    if framework == "ir":
        raise UsageError(
            f"{args.file}: verify compares a program's IR with the program's own outputs, and IR text "
            "has no program behind it; `solar ir FILE` parses and verifies it"
        )
    if framework == "jax":
        from solar.frontends.jax import check_file as check_jax_file

        result = check_jax_file(args.file, seed=args.seed)
    else:
        from solar.frontends.torch.check import check_file

        result = check_file(args.file, seed=args.seed, mode=args.mode, infer_structure=args.infer_structure)
    table = Table(title=f"verify {result.program}: IR interpreter vs PyTorch", title_justify="left")
    for col in ("op", "shapes", "mode", "rel. error", "tolerance", "result", "source"):
        table.add_column(col, overflow="fold")
    for c in result.checks:
        status = "unchecked" if c.mode == "unchecked" else ("ok" if c.ok else "MISMATCH")
        table.add_row(c.what, c.shapes, c.mode, f"{c.error:.2e}", f"{c.tolerance:.0e}", status + (f" ({c.note})" if c.note else ""), c.source)
    render.console().print(table)
    bad = [c for c in result.checks if c.mode != "unchecked" and not c.ok]
    print(
        f"{len(result.checks) - len(bad) - len(result.unchecked)} checked ok, {len(bad)} mismatched, "
        f"{len(result.unchecked)} unchecked"
    )
    return 1 if bad else 0


def cmd_validate(args: argparse.Namespace) -> int:
    from rich.table import Table

    from solar.validate.run import validate_file

    if args.train:
        from solar.validate.train import validate_train_file

        result = validate_train_file(args.file, args.arch, args.loss, args.optimizer, reps=min(args.reps, 20))
    else:
        result = validate_file(args.file, arch=args.arch, compile=args.compile, reps=args.reps)
    if args.json:
        print(result.to_json())
        return 1 if result.violations else 0
    table = Table(title=f"validate {result.problem} on {result.environment.get('gpu')} (spec {result.arch})", title_justify="left")
    for col in ("mode", "median", "min", *(f"{level} bound" for level in result.bounds), "headroom (median / fused)"):
        table.add_column(col)
    for mode, t in result.measured.items():
        table.add_row(
            mode, render.fmt_seconds(t.median_seconds), render.fmt_seconds(t.min_seconds),
            *(render.fmt_seconds(b) for b in result.bounds.values()), f"{result.headroom.get(mode, 0):.2f}x",
        )
    render.console().print(table)
    env = ", ".join(f"{k}={v}" for k, v in result.environment.items())
    print(f"environment: {env}")
    if result.error:
        print(f"note: {result.error}")
    for v in result.violations:
        print(f"VIOLATION: {v.describe()} — a bug in solar's bound model")
    print(f"{len(result.violations)} violations")
    return 1 if result.violations else 0


def cmd_calibrate(args: argparse.Namespace) -> int:
    from solar.validate.calibrate import calibrate

    measured = calibrate(args.out, args.arch, args.dispatch_only, args.raw)
    dispatch = measured.pop("dispatch", {})
    for key, m in measured.items():
        print(f"{key}: {m['value']:.4g}")
    for key, value in dispatch.items():
        if isinstance(value, float):
            print(f"dispatch.{key}: {value:.4g}")
    return 0


def cmd_ir(args: argparse.Namespace) -> int:
    from solar.api import ir_text
    from solar.frontends.llm.cli import config as llm_config

    text = ir_text(
        args.file, mode=args.mode, infer_structure=args.infer_structure,
        frontend=args.frontend, llm=llm_config(args), share_layers=args.share_layers,
    )
    print(text, end="")
    return 0


def cmd_einsum(args: argparse.Namespace) -> int:
    from solar.api import einsum_text

    print(einsum_text(args.file, mode=args.mode, infer_structure=args.infer_structure, share_layers=args.share_layers))
    return 0


def cmd_specs(args: argparse.Namespace) -> int:
    from rich.table import Table

    from solar.hardware import list_specs

    table = Table(title="hardware specs: dense peaks at the boost clock (TFLOP/s; int: TOP/s)", title_justify="left")
    keys = ("tf32", "fp16", "bf16", "fp8", "int8", "int4", "fp4")
    for col in ("name", "SMs", "boost MHz", "DRAM TB/s", "L2 MiB", "fp32 SIMT", *keys):
        table.add_column(col, justify="left" if col == "name" else "right", no_wrap=col == "name")
    for s in list_specs():
        rates = [s.tensor_rate(k) for k in keys]
        table.add_row(
            s.name,
            f"{s.sm_count.value:g}",
            f"{s.boost_clock_mhz.value:g}",
            f"{s.dram_bytes_per_s / 1e12:g}",
            f"{s.l2_bytes / 2**20:g}",
            f"{s.simt_flops_per_s['fp32'].value / 1e12:.1f}",
            *("-" if r is None else f"{r / 1e12:.1f}" for r in rates),
        )
    render.console().print(table)
    return 0


def cmd_ops(args: argparse.Namespace) -> int:
    from solar.frontends.torch.lowerings import LOWERINGS

    from solar.frontends.jax import supported_primitives

    names = sorted(str(op) for op in LOWERINGS)
    print(f"{len(names)} PyTorch core-ATen ops have a lowering:")
    for n in names:
        print(f"  {n}")
    prims = sorted(supported_primitives())
    print(f"{len(prims)} JAX primitives have a lowering:")
    for n in prims:
        print(f"  {n}")
    return 0


def _microseconds(text: str) -> float:
    value = _finite(text)
    if not 0 < value < 1e6:
        raise argparse.ArgumentTypeError(f"{text!r}: a floor is microseconds > 0 (e.g. 4.5)")
    return value


def _add_level_flags(p: argparse.ArgumentParser) -> None:
    """Floors of the eager_host and recurrence levels (default: the calibrated spec's)."""
    p.add_argument("--dispatch-us", type=_microseconds, default=None, metavar="US",
                   help="host dispatch floor per eager op that launches a kernel (eager_host level; default: the calibrated spec's per-op floors)")
    p.add_argument("--grid-sync-us", type=_microseconds, default=None, metavar="US",
                   help="grid-wide synchronisation floor per recurrence step (default: the calibrated spec's)")


def _add_run_flags(p: argparse.ArgumentParser) -> None:
    """--timeout and --debug (commands that run the user's program)."""
    p.add_argument(
        "--timeout", type=_timeout, default=DEFAULT_TIMEOUT_S, metavar="S",
        help=f"wall-clock limit of the analysis in seconds (default {DEFAULT_TIMEOUT_S:g}; 0: none)",
    )
    p.add_argument(
        "--debug", action="store_true",
        help="show what the program and torch/JAX print while it is traced, and tracebacks; "
        "verify the IR after every pass",
    )
    p.set_defaults(runs_user_code=True)


def _add_mode_flags(p: argparse.ArgumentParser) -> None:
    """--mode and --infer-structure (PyTorch model files)."""
    p.add_argument(
        "--mode", choices=("train", "eval"), default=None,
        help="put the module in train or eval mode before tracing (default: as constructed, i.e. "
        "training mode, no gradients, as KernelBench runs it)",
    )
    p.add_argument(
        "--infer-structure", action="store_true",
        help="sample get_inputs() once and use value structure found there (e.g. a triangular "
        "input) as a stated assumption",
    )


def _add_share_flag(p: argparse.ArgumentParser) -> None:
    """--no-share-layers (PyTorch model files: solar.frontends.torch.share)."""
    p.add_argument(
        "--no-share-layers", dest="share_layers", action="store_false",
        help="trace every layer of a stack of identical layers (default: trace 4 and stitch the rest)",
    )


def _add_train_flags(p: argparse.ArgumentParser) -> None:
    """--train, --loss, --optimizer: bound one training step instead of the forward pass."""
    p.add_argument("--train", action="store_true", help="one training step: forward, loss, backward, optimizer")
    p.add_argument("--loss", default="sum", help="with --train: sum | mean of the outputs, or FILE:function")
    p.add_argument("--optimizer", choices=("sgd", "adamw", "none"), default="adamw", help="with --train")


def _measured(text: str) -> tuple[str, float]:
    mode, _, value = text.partition("=")
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if not mode or not seconds > 0:
        raise argparse.ArgumentTypeError(f"expected MODE=SECONDS with SECONDS > 0 (eager=0.0012), got {text!r}")
    return mode, seconds


def build_parser() -> argparse.ArgumentParser:
    from solar.frontends.llm.cli import add_cache_parser as add_llm_cache
    from solar.frontends.llm.cli import add_flags as add_llm_flags

    p = _Parser(
        prog="solar",
        description="Speed-of-light analysis: provable lower bounds on the runtime of a PyTorch program on a GPU.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    a = sub.add_parser("analyze", help="bound a program on one or more GPUs")
    a.add_argument(
        "file", help="KernelBench-format model file (Model, get_inputs, get_init_inputs), a JAX file, or .ir text"
    )
    a.add_argument("--arch", nargs="+", default=["H100-SXM"], metavar="NAME", help="GPU spec names (see `solar specs`)")
    a.add_argument("--json", action="store_true", help="print JSON (one object per arch; a list when several)")
    a.add_argument("--precision", choices=("exact", "fastest"), default="exact", help="tensor-core precision policy")
    a.add_argument(
        "--clock-mhz", type=_clock_mhz, default=None, metavar="MHZ",
        help="locked SM clock in MHz (scales compute rates, not DRAM)",
    )
    a.add_argument(
        "--cache", choices=("cold", "warm"), default="cold",
        help="cold: L2 flushed before the run (default); warm: inputs up to the L2 capacity may be resident",
    )
    a.add_argument(
        "--measured", nargs="+", type=_measured, default=[], metavar="MODE=SECONDS",
        help="measured times (eager=0.0012 compile=8e-4): opportunities rank the time lost per level",
    )
    a.add_argument(
        "--measured-ops", default=None, metavar="FILE",
        help="per-op measured times (benchmarks/measure_ops.py JSON/JSONL): each op's time lost against its bound, ranked",
    )
    a.add_argument("--per-op", action="store_true", help="show every op and every einsum node")
    _add_level_flags(a)
    a.add_argument(
        "--group-by", choices=("module", "layer", "op"), default=None,
        help="roll the op table up by module path, by layer (the path to its first index: "
        "layers.3), or by op type",
    )
    _add_hf_flags(a)
    from solar.usecases.cli import add_analyze_flags, add_parser as add_usecases

    add_analyze_flags(a)  # --plot
    _add_train_flags(a)
    _add_mode_flags(a)
    _add_share_flag(a)
    _add_run_flags(a)
    add_llm_flags(a)
    from solar.symbolic.cli import add_flags as add_symbolic_flags

    add_symbolic_flags(a)
    a.set_defaults(fn=cmd_analyze)
    v = sub.add_parser("verify", help="compare the IR's outputs with the program's own outputs")
    v.add_argument("file")
    v.add_argument("--seed", type=_count(0), default=0, help="seed of the random inputs")
    _add_mode_flags(v)
    _add_run_flags(v)
    v.set_defaults(fn=cmd_verify)
    val = sub.add_parser("validate", help="time the real CUDA kernels and check no bound is beaten")
    val.add_argument("file")
    val.add_argument("--arch", default=None, metavar="NAME", help="spec to use (default: detected from the GPU)")
    val.add_argument("--compile", action="store_true", help="also time torch.compile of the model")
    val.add_argument("--reps", type=_count(1), default=50, help="timed calls per mode (median and min reported)")
    val.add_argument("--json", action="store_true", help="print the result as JSON")
    _add_train_flags(val)
    val.set_defaults(fn=cmd_validate)
    cal = sub.add_parser("calibrate", help="measure achievable ceilings and write a calibrated spec variant")
    cal.add_argument("--out", type=_new_file, default=None, help="output YAML (default: hardware_specs/calibrated/NAME.yaml)")
    cal.add_argument("--arch", default=None, metavar="NAME", help="spec to extend (default: detected)")
    cal.add_argument("--dispatch-only", action="store_true", help="measure the host dispatch floors only; keep the existing calibrated ceilings")
    cal.add_argument("--raw", type=_new_file, default=None, metavar="FILE", help="also write the dispatch measurements as JSON")
    cal.set_defaults(fn=cmd_calibrate)
    for name, fn, text in (("ir", cmd_ir, "print the Affine Loop IR"), ("einsum", cmd_einsum, "print the einsum graph")):
        c = sub.add_parser(name, help=text)
        c.add_argument("file")
        _add_mode_flags(c)
        _add_share_flag(c)
        _add_run_flags(c)
        if name == "ir":
            add_llm_flags(c)
        c.set_defaults(fn=fn)
    add_llm_cache(sub)  # `solar llm-cache list|show|clear`
    from solar.kernelbench.cli import add_parser as add_kernelbench

    add_kernelbench(sub)  # `solar kernelbench ROOT ...`: headroom reports over a KernelBench tree
    from solar.definitions.cli import add_parser as add_definitions

    add_definitions(sub)  # `solar definitions DIR ...`: SOL-ExecBench / FlashInfer-Bench definitions
    add_usecases(sub)  # `solar compare`, `solar provision`
    sub.add_parser("specs", help="list the GPU specs").set_defaults(fn=cmd_specs)
    sub.add_parser("ops", help="list the supported ops").set_defaults(fn=cmd_ops)
    return p


def _preload(path: str) -> None:
    """Import the frontend a file needs before the --timeout clock starts: the limit is on the
    analysis, not on solar's own start-up (importing torch or jax takes seconds on a busy machine)."""
    from solar.frontends.detect import framework_of

    framework = "torch" if path.startswith("hf:") else framework_of(path)
    if framework == "torch":
        import torch.export._trace  # noqa: F401  - torch.export imports most of torch lazily

        import solar.frontends.torch.loader  # noqa: F401
    elif framework == "jax":
        import solar.frontends.jax.loader  # noqa: F401


class _Terminated(KeyboardInterrupt):
    """SIGTERM during a command that runs user code (passes through user-code guards as Ctrl-C does)."""


@contextlib.contextmanager
def _terminate_cleanly(args: argparse.Namespace):
    """While a command that runs user code runs in the main thread, SIGTERM ends it as Ctrl-C
    does: one line, exit 143 (other commands keep their own handling)."""
    if not getattr(args, "runs_user_code", False) or threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        raise _Terminated()

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    debug = False
    try:
        args = parser.parse_args(argv)
        if not getattr(args, "fn", None):
            parser.print_help()
            return 2
        debug = getattr(args, "debug", False)
        usercode.configure(debug=debug)
        if debug:  # a pass that breaks a program is named at once
            from solar import passes

            verify_before = passes.verify_between_passes
            passes.verify_between_passes = True
        runs_user_code = getattr(args, "runs_user_code", False)
        with _terminate_cleanly(args):
            if runs_user_code:
                _preload(args.file)
            with usercode.deadline(args.timeout if runs_user_code else None):
                return args.fn(args)
    except SolarError as exc:
        if debug:
            traceback.print_exc()
        print(f"solar: error: {message_line(exc)}", file=sys.stderr)
        return 2
    except _Terminated:
        print("solar: terminated", file=sys.stderr)
        return 143
    except KeyboardInterrupt:  # Ctrl-C (or a KeyboardInterrupt raised by the user's code)
        print("solar: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `solar ops | head`: the reader left; not an error
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    finally:
        usercode.configure(debug=False)
        if debug:
            passes.verify_between_passes = verify_before


if __name__ == "__main__":
    sys.exit(main())
