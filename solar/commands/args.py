"""What `solar`'s subcommands share on the command line: the parser whose errors are one line, the
argument types (a bad value is a one-line usage error before anything runs), the flag groups several
commands take, and the progress lines of an analysis."""

from __future__ import annotations

import argparse
import math
import re
import sys
import time
from pathlib import Path

from solar.backends.assumptions import check_clock_mhz
from solar.errors import UsageError
from solar.frontends.detect import check_frontend_choice, file_frontend, loss_spec
from solar.frontends.llm import cli as llm_cli
from solar.report.html import check_html_path
from solar.report.render import TOP_OPS
from solar.userfiles import check_writable

#: default wall-clock limit of one analysis: far above any real one (a 7B-class model takes seconds).
DEFAULT_TIMEOUT_S = 600.0


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2 (argparse prints usage + line)
        raise UsageError(f"{message} (see `{self.prog} --help`)")


# ---- argument types ------------------------------------------------------------------------------


def finite(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return value


def timeout(text: str) -> float:
    value = finite(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r}: a timeout is seconds >= 0 (0: no limit)")
    return value


#: the units of a memory size (--max-memory), by their lower-case spelling.
SIZE_UNITS = {
    "k": 1e3, "kb": 1e3, "m": 1e6, "mb": 1e6, "g": 1e9, "gb": 1e9, "t": 1e12, "tb": 1e12,
    "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40,
}
_SIZE = re.compile(r"\s*([0-9]*\.?[0-9]+(?:e[0-9]+)?)\s*([a-z]*)\s*", re.IGNORECASE)


def memory_size(text: str) -> int:
    """Bytes of a size with a unit (`500M`, `8GB`, `1.5GiB`); `0`: no limit."""
    m = _SIZE.fullmatch(text)
    unit = m and m.group(2).lower()
    if m and not unit and float(m.group(1)) == 0:
        return 0
    if not m or unit not in SIZE_UNITS or not math.isfinite(float(m.group(1))):
        raise argparse.ArgumentTypeError(f"{text!r} is not a size; give one with a unit, e.g. 500M or 8G (0: no limit)")
    return int(float(m.group(1)) * SIZE_UNITS[unit])


def clock_mhz(text: str) -> float:
    try:
        return check_clock_mhz(finite(text))
    except UsageError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def html_path(text: str) -> str:
    try:
        return check_html_path(text)
    except UsageError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def count(lowest: int):
    """The type of an integer flag of at least `lowest` (and below 2**32)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if not lowest <= value < 2**32:
            raise argparse.ArgumentTypeError(f"{text!r}: must be an integer in {lowest}..{2**32 - 1}")
        return value

    return parse


def new_file(text: str) -> str:
    """The type of a flag naming a file to write: checked writable (solar.userfiles.check_writable)
    as it is parsed, before any work."""
    p = Path(text)
    if p.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is a directory; name the file to write")
    if not p.parent.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r}: folder {str(p.parent)!r} does not exist")
    try:
        check_writable(p, "", UsageError)
    except UsageError as exc:
        raise argparse.ArgumentTypeError(str(exc).strip()) from None
    return text


def microseconds(text: str) -> float:
    value = finite(text)
    if not 0 < value < 1e6:
        raise argparse.ArgumentTypeError(f"{text!r}: a floor is microseconds > 0 (e.g. 4.5)")
    return value


def measured(text: str) -> tuple[str, float]:
    """MODE=SECONDS, a measured time of one execution mode."""
    mode, _, value = text.partition("=")
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if not mode or not seconds > 0:
        raise argparse.ArgumentTypeError(f"expected MODE=SECONDS with SECONDS > 0 (eager=0.0012), got {text!r}")
    return mode, seconds


# ---- flag groups ---------------------------------------------------------------------------------


def add_run_flags(p: argparse.ArgumentParser) -> None:
    """--timeout and --debug (commands that run the user's program)."""
    p.add_argument(
        "--timeout", type=timeout, default=DEFAULT_TIMEOUT_S, metavar="S",
        help=f"wall-clock limit of the analysis in seconds (default {DEFAULT_TIMEOUT_S:g}; 0: none)",
    )
    p.add_argument(
        "--max-memory", type=memory_size, default=None, metavar="SIZE",
        help="real memory the analysis may add to solar's own, e.g. 4G (default: half the "
        "machine's memory; 0: no limit); the program runs on fake tensors and needs little",
    )
    p.add_argument(
        "--debug", action="store_true",
        help="show what the program and torch/JAX print while it is traced, and tracebacks; "
        "verify the IR after every pass",
    )
    p.set_defaults(runs_user_code=True)


def add_mode_flags(p: argparse.ArgumentParser) -> None:
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


def add_share_flag(p: argparse.ArgumentParser) -> None:
    """--no-share-layers (PyTorch model files: solar.frontends.torch.share)."""
    p.add_argument(
        "--no-share-layers", dest="share_layers", action="store_false",
        help="trace every layer of a stack of identical layers (default: trace 4 and stitch the rest)",
    )


class _WithTrain(argparse.Action):
    """A flag of the training step: stored, and noted in `train_flags` (refused without --train)."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        setattr(namespace, self.dest, values)
        namespace.train_flags = (*namespace.train_flags, option_string)


def add_view_flags(p: argparse.ArgumentParser) -> None:
    """--top and --verbose: how much of a report the terminal shows (--json has it all)."""
    p.add_argument("--top", type=count(1), default=TOP_OPS, metavar="N",
                   help=f"show the N slowest ops (default {TOP_OPS})")
    p.add_argument("--verbose", action="store_true",
                   help="the full text of the assumptions, caveats and einsums (default: one short line each)")


def add_train_flags(p: argparse.ArgumentParser) -> None:
    """--train, --loss, --optimizer: bound one training step instead of the forward pass."""
    p.add_argument("--train", action="store_true", help="one training step: forward, loss, backward, optimizer")
    p.add_argument("--loss", default="sum", action=_WithTrain, help="with --train: sum | mean of the outputs, or FILE:function")
    p.add_argument("--optimizer", choices=("sgd", "adamw", "none"), default="adamw", action=_WithTrain, help="with --train")
    p.set_defaults(train_flags=())


def add_level_flags(p: argparse.ArgumentParser) -> None:
    """Floors of the eager_host and recurrence levels (default: the default host profile's and the
    calibrated spec's)."""
    p.add_argument("--host", default=None, metavar="NAME|FILE",
                   help="host profile whose dispatch floors bound eager_host: a name in hardware_specs/hosts/ or a "
                        "profile YAML (default: the default profile, below every calibrated host's)")
    p.add_argument("--dispatch-us", type=microseconds, default=None, metavar="US",
                   help="host dispatch floor per eager op that launches a kernel (eager_host level; default: the host profile's per-op floors)")
    p.add_argument("--grid-sync-us", type=microseconds, default=None, metavar="US",
                   help="grid-wide synchronisation floor per recurrence step (default: the calibrated spec's)")


def add_hf_flags(p: argparse.ArgumentParser) -> None:
    """--scenario, --batch, --seq, --context of an `hf:` model."""
    g = p.add_argument_group("hf:<model id or config.json> (an LLM serving step built from its config)")
    g.add_argument("--scenario", choices=("prefill", "decode"), default=None, help="one prefill of --seq tokens, or one decode step")
    g.add_argument("--batch", type=count(1), default=None, help="sequences in the batch (default 1)")
    g.add_argument("--seq", type=count(1), default=None, help="prefill: prompt tokens per sequence")
    g.add_argument("--context", type=count(0), default=None, help="decode: tokens already in the KV cache")


# ---- progress ------------------------------------------------------------------------------------


class Progress:
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


def check_gpus(args: argparse.Namespace) -> None:
    """The GPU names a command was given (`--arch`, one or several; `--like`) and its host profile
    (`--host`, where the command has the flag), checked before the program's framework is imported:
    a misspelt name is one line at once, not after torch has loaded."""
    from solar import hardware  # pydantic and the spec files: not paid by --help

    arch = getattr(args, "arch", None) or ()
    names = [*([arch] if isinstance(arch, str) else arch), *([args.like] if getattr(args, "like", None) else [])]
    for name in names:
        hardware.get_spec(name)
    if getattr(args, "host", None) is not None:
        hardware.get_host(args.host)


# ---- checks before the program's framework is imported (a command's `check` hook) ---------------

def check_loss(args: argparse.Namespace) -> None:
    """--loss and --optimizer only with --train (as --batch only with hf:); with --train, --loss
    is sum, mean or FILE:function (the frontends' message)."""
    if getattr(args, "train", False):
        loss_spec(getattr(args, "loss", "sum"))
    elif getattr(args, "train_flags", ()):
        flag = args.train_flags[0]
        raise UsageError(f"{flag} applies to a training step; add --train, or drop {flag}")


def check_frontend(args: argparse.Namespace) -> None:
    """The --llm-* flags, and --frontend, --mode and --infer-structure against what the file is (IR
    text, a JAX or a PyTorch program): the loader's own decision (solar.frontends.detect)."""
    if hasattr(args, "llm_base_url"):
        llm_cli.check(args)
    if getattr(args, "train", False) or args.file.startswith("hf:"):
        return
    frontend = getattr(args, "frontend", "auto")
    llm = llm_cli.config(args) if hasattr(args, "llm_base_url") else None
    check_frontend_choice(frontend, llm is not None)
    file_frontend(args.file, frontend, args.mode, args.infer_structure)


def check_program(args: argparse.Namespace) -> None:
    """What a command that loads a program can check before its framework is imported: the GPU
    names and --host, --loss, and the frontend flags against the file."""
    check_gpus(args)
    check_loss(args)
    check_frontend(args)
