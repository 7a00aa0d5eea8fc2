"""`solar validate` and `solar calibrate`: time real CUDA kernels, check that no bound is beaten, and
measure the achievable ceilings of a calibrated spec variant."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from rich.table import Table

from solar.commands.args import add_train_flags, check_gpus, check_loss, count, new_file
from solar.errors import UsageError
from solar.frontends.detect import framework_of
from solar.report import render
from solar.validate.device import check_cuda_driver


def register(sub: argparse._SubParsersAction) -> None:
    val = sub.add_parser("validate", help="time the real CUDA kernels and check no bound is beaten")
    val.add_argument("file")
    val.add_argument("--arch", default=None, metavar="NAME", help="spec to use (default: detected from the GPU)")
    val.add_argument("--compile", action="store_true", help="also time torch.compile of the model")
    val.add_argument("--reps", type=count(1), default=50, help="timed calls per mode (median and min reported)")
    val.add_argument("--json", action="store_true", help="print the result as JSON")
    val.add_argument("--host", default=None, metavar="NAME|FILE",
                     help="host profile whose dispatch floors bound eager_host (default: the default profile)")
    add_train_flags(val)
    val.set_defaults(fn=cmd_validate, check=check_validate)
    cal = sub.add_parser("calibrate", help="measure achievable ceilings and write a calibrated spec variant")
    cal.add_argument("--out", type=new_file, default=None, help="output YAML (default: hardware_specs/calibrated/NAME.yaml)")
    cal.add_argument("--arch", default=None, metavar="NAME", help="spec to extend (default: detected)")
    cal.add_argument("--dispatch-only", action="store_true", help="measure the host dispatch floors only and write the host profile (--out: its path)")
    cal.add_argument("--host-name", default=None, type=host_name, metavar="NAME",
                     help="name of the host profile written to hardware_specs/hosts/NAME.yaml (default: local; with "
                          "--dispatch-only --out FILE: FILE's name); pass it to analyze --host")
    cal.add_argument("--raw", type=new_file, default=None, metavar="FILE", help="also write the dispatch measurements as JSON")
    cal.set_defaults(fn=cmd_calibrate, check=check_calibrate)


def host_name(text: str) -> str:
    """A host profile name: letters, digits, '.', '_', '-' (it names a file)."""
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", text) or text == "default":
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a host profile name: letters, digits, '.', '_' or '-', not 'default'"
        )
    return text


def check_validate(args: argparse.Namespace) -> None:
    """Before torch is imported: the model file can be read and parsed, --arch names a GPU, --loss
    is one, and this machine may have a CUDA device (none without an NVIDIA driver: one line at once)."""
    framework_of(args.file)
    check_gpus(args)
    check_loss(args)
    check_cuda_driver()


def check_calibrate(args: argparse.Namespace) -> None:
    """Before torch is imported: the profile's name fits the file it goes to, --arch names a GPU and
    this machine may have a CUDA device."""
    args.host_name = profile_name(args)
    check_gpus(args)
    check_cuda_driver()


def profile_name(args: argparse.Namespace) -> str:
    """The host profile's name: a profile is read back (`--host FILE`) only under its file's name, so
    with --dispatch-only --out FILE it is FILE's name (and --host-name, where given, must be it);
    else --host-name or `local`."""
    if not (args.dispatch_only and args.out):
        return args.host_name or "local"
    stem = Path(args.out).stem
    if args.host_name is None:
        try:
            return host_name(stem)
        except argparse.ArgumentTypeError as exc:
            raise UsageError(f"--out {args.out}: the profile is named after its file, and {exc}; rename the file") from None
    if args.host_name != stem:
        raise UsageError(f"--host-name {args.host_name} differs from --out {args.out}: a host profile is named after its "
                         f"file; pass --out {Path(args.out).with_name(args.host_name + '.yaml')} or drop --host-name")
    return stem


def cmd_validate(args: argparse.Namespace) -> int:
    from solar.validate import run, train  # torch and the analysis: not paid by --help

    if args.train:
        result = train.validate_train_file(args.file, args.arch, args.loss, args.optimizer, reps=min(args.reps, 20))
    else:
        result = run.validate_file(args.file, arch=args.arch, compile=args.compile, reps=args.reps, host=args.host)
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
    from solar.validate.calibrate import calibrate  # torch

    measured = calibrate(args.out, args.arch, args.dispatch_only, args.raw, args.host_name)
    dispatch = measured.pop("dispatch", {})
    for key, m in measured.items():
        print(f"{key}: {m['value']:.4g}")
    for key, value in dispatch.items():
        if isinstance(value, float):
            print(f"dispatch.{key}: {value:.4g}")
    return 0
