"""One `solar` command line under the program's contract (`run`): a SolarError is one line, exit 2;
Ctrl-C 130; SIGTERM 143 (commands that run user code, under the --timeout clock); a closed stdout 0;
anything else is a bug in solar and keeps its traceback. `parser` builds one from modules."""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import threading
import traceback
from collections.abc import Iterable, Sequence
from types import ModuleType
from typing import Any

from solar.commands.args import Parser
from solar.errors import SolarError, message_line
from solar.frontends import usercode
from solar.frontends.detect import framework_of


def parser(commands: Iterable[ModuleType], **kwargs: Any) -> Parser:
    """A `solar` parser with each command module's subcommands (`module.register(subparsers)`)."""
    p = Parser(prog="solar", **kwargs)
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for command in commands:
        command.register(sub)
    return p


def _preload(path: str) -> None:
    """Import the frontend a file needs before the --timeout clock starts: the limit is on the
    analysis, not on solar's own start-up (importing torch or jax takes seconds on a busy machine)."""
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


def run(parser: argparse.ArgumentParser, argv: Sequence[str] | None = None) -> int:
    """Parse `argv` (default: sys.argv) and run its command; the exit status."""
    debug = False
    try:
        args = parser.parse_args(argv)
        if not getattr(args, "fn", None):
            parser.print_help()
            return 2
        debug = getattr(args, "debug", False)
        runs_user_code = getattr(args, "runs_user_code", False)
        with _terminate_cleanly(args):
            if getattr(args, "check", None):  # what can be checked before torch or jax is imported
                args.check(args)
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
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
