"""The `solar` command: the modules whose subcommands it has (each registers its own), `main`,
which runs one command line under the program's contract (solar.commands.entry: one-line errors,
exit 2; Ctrl-C 130; SIGTERM 143), and `console`, the program itself, which then ends the process
(threads the user's code left running included)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from solar.commands import analyze, catalog, ir, validate, verify
from solar.commands.entry import finish, parser, run
from solar.definitions import cli as definitions_cli
from solar.frontends.llm import cli as llm_cli
from solar.kernelbench import cli as kernelbench_cli
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

#: the command modules, in the order `solar --help` lists their subcommands.
COMMANDS = (
    analyze,  # analyze
    verify,  # verify
    validate,  # validate, calibrate
    ir,  # ir, einsum
    llm_cli,  # llm-cache list|show|clear
    kernelbench_cli,  # kernelbench: headroom reports over a KernelBench tree
    definitions_cli,  # definitions: SOL-ExecBench / FlashInfer-Bench definitions
    usecases_cli,  # compare, provision
    catalog,  # specs, ops
)


def build_parser() -> argparse.ArgumentParser:
    return parser(
        COMMANDS,
        description="Speed-of-light analysis: provable lower bounds on the runtime of a PyTorch or JAX program on a GPU.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def main(argv: Sequence[str] | None = None) -> int:
    return run(build_parser(), argv)


def console() -> None:
    """The `solar` program: run the command line, then end the process with its status."""
    finish(main())


if __name__ == "__main__":
    console()
