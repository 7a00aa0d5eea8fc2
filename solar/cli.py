"""The `solar` command: the modules whose subcommands it has (each registers its own), `main`,
which runs one command line under the program's contract (solar.commands.entry: one-line errors,
exit 2; Ctrl-C 130; SIGTERM 143), and `console`, the program itself, which then ends the process
(threads the user's code left running included)."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from solar.commands import analyze, catalog, ir, validate, verify
from solar.commands.entry import finish, parser, run
from solar.frontends.llm import cli as llm_cli
from solar.usecases import cli as usecases_cli

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

what runs as code: model files (.py, PyTorch or JAX; run as you, in a supervised process for
kernelbench and definitions), SOL-ExecBench definition references, and --loss FILE:function.
What never runs, only parsed and checked: IR text, LLM replies, spec YAML, workload and measured
JSON, --symbolic and workload expressions.
"""



@dataclass(frozen=True)
class Deferred:
    """A command whose module is imported only when a command line names it (the batch commands
    import their runners, reports and workers): otherwise `register` adds a stand-in subcommand
    of the same name and help, which is what `solar --help` lists."""

    name: str
    module: str  # its `register(subparsers)` adds the real subcommand
    help: str

    def register(self, subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
        return subparsers.add_parser(self.name, help=self.help)

    def load(self) -> object:
        return importlib.import_module(self.module)


#: the command modules, in the order `solar --help` lists their subcommands.
COMMANDS = (
    analyze,  # analyze
    verify,  # verify
    validate,  # validate, calibrate
    ir,  # ir, einsum
    llm_cli,  # llm-cache list|show|clear
    Deferred("kernelbench", "solar.kernelbench.cli", "bound a KernelBench-layout suite and write a headroom report"),
    Deferred("definitions", "solar.definitions.cli",
             "bound SOL-ExecBench / FlashInfer-Bench definitions and workloads, score kernels"),
    usecases_cli,  # compare, provision
    catalog,  # specs, ops
)


def build_parser(argv: Sequence[str] = ()) -> argparse.ArgumentParser:
    """The `solar` parser for the command line `argv`: the module of a deferred command is
    imported when `argv` names it (its first word that is not an option)."""
    named = next((word for word in argv if not word.startswith("-")), None)
    return parser(
        [c.load() if isinstance(c, Deferred) and c.name == named else c for c in COMMANDS],
        description="Speed-of-light analysis: provable lower bounds on the runtime of a PyTorch or JAX program on a GPU.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    return run(build_parser(argv), argv)


def console() -> None:
    """The `solar` program: run the command line, then end the process with its status."""
    finish(main())


if __name__ == "__main__":
    console()
