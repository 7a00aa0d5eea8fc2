"""One `solar` command line under the program's contract (`run`): a SolarError is one line, exit 2;
Ctrl-C 130; SIGTERM 143 (commands that run user code, under the --timeout clock and the
--max-memory limit); a closed stdout 0; anything else is a bug in solar and keeps its traceback.
`parser` builds one from modules; `finish` ends the process once a command line has run."""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib
import os
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
from solar.heap import collection_paused, promote_all


def parser(commands: Iterable[ModuleType], **kwargs: Any) -> Parser:
    """A `solar` parser with each command module's subcommands (`module.register(subparsers)`)."""
    p = Parser(prog="solar", **kwargs)
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for command in commands:
        command.register(sub)
    return p


# What an hf: model needs beyond torch, imported with it: transformers' model base and auto classes
# (the config's own modeling module is imported when the model is built).
HF_MODULES = ("transformers.modeling_utils", "transformers.models.auto")


def _preload(path: str) -> None:
    """Import the frontend a file needs before the --timeout clock starts: the limit is on the
    analysis, not on solar's own start-up (importing torch or jax takes seconds on a busy machine).
    No collection runs during the imports (they allocate much and free little), and what they made
    goes to the oldest generation unscanned (`promote_all`): otherwise the first young collection
    after them walks every object of torch (and of transformers)."""
    framework = "torch" if path.startswith("hf:") else framework_of(path)
    with collection_paused():
        if framework == "torch":
            import torch.export  # noqa: F401

            import solar.frontends.torch.loader  # noqa: F401

            for name in HF_MODULES if path.startswith("hf:") else ():
                with contextlib.suppress(ImportError):  # transformers is an optional dependency
                    importlib.import_module(name)
        elif framework == "jax":
            import solar.frontends.jax.loader  # noqa: F401
        promote_all()


def _memory_limit(args: argparse.Namespace) -> contextlib.AbstractContextManager:
    """The --max-memory limit of a command that runs user code (default: a share of the machine)."""
    if not getattr(args, "runs_user_code", False):
        return contextlib.nullcontext()
    limit = getattr(args, "max_memory", None)
    return usercode.memory_limit(usercode.default_memory_limit() if limit is None else limit)


def run(parser: argparse.ArgumentParser, argv: Sequence[str] | None = None) -> int:
    """Parse `argv` (default: sys.argv) and run its command; the exit status."""
    debug = False
    try:
        args = parser.parse_args(argv)
        if not getattr(args, "fn", None):
            usage = " ".join(parser.format_usage().split())
            print(f"{usage} — name a command (`{parser.prog} --help` lists them)", file=sys.stderr)
            return 2
        debug = getattr(args, "debug", False)
        runs_user_code = getattr(args, "runs_user_code", False)
        with usercode.stop_signals() if runs_user_code else contextlib.nullcontext():
            if getattr(args, "check", None):  # what can be checked before torch or jax is imported
                args.check(args)
            if runs_user_code:
                _preload(args.file)
            with usercode.deadline(args.timeout if runs_user_code else None), _memory_limit(args):
                return args.fn(args)
    except SolarError as exc:
        if debug:
            traceback.print_exc()
        print(f"solar: error: {message_line(exc)}", file=sys.stderr)
        return 2
    except usercode.Signalled as exc:  # Ctrl-C or SIGTERM while a command ran user code
        print(exc.line, file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:  # Ctrl-C during any other command
        print("solar: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `solar ops | head`: the reader left; not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def finish(code: int) -> None:
    """End the `solar` process with `code` once its command line has run (its result written).
    Threads the user's code started and left running would keep the interpreter alive after
    its last line: with any non-daemon thread left, stdout and stderr are flushed and the
    process ends at once (os._exit); otherwise it exits as usual (atexit functions run, files are
    closed). Where no code of a user's file ran (an hf: model, IR text), every object alive is first
    moved out of the cyclic collector's reach (`gc.freeze`): the interpreter's shutdown runs full
    collections over torch's modules, the model and the program, which the end of the process
    frees anyway (a second or more for an hf: model). A user's file keeps them: what its objects
    do when collected at shutdown (a file it left open is flushed) is done."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    if any(t.is_alive() and not t.daemon for t in threading.enumerate() if t is not threading.current_thread()):
        os._exit(code)
    if not usercode.files_run():
        gc.freeze()
    sys.exit(code)
