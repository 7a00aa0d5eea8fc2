"""`solar ir` and `solar einsum`: print a program's Affine Loop IR or its einsum graph."""

from __future__ import annotations

import argparse

from solar.commands.args import add_mode_flags, add_run_flags, add_share_flag, check_frontend
from solar.frontends.llm import cli as llm_cli


def register(sub: argparse._SubParsersAction) -> None:
    for name, fn, text in (("ir", cmd_ir, "print the Affine Loop IR"), ("einsum", cmd_einsum, "print the einsum graph")):
        c = sub.add_parser(name, help=text)
        c.add_argument("file")
        add_mode_flags(c)
        add_share_flag(c)
        add_run_flags(c)
        if name == "ir":
            llm_cli.add_flags(c)
        c.set_defaults(fn=fn, check=check_frontend)


def cmd_ir(args: argparse.Namespace) -> int:
    from solar.api import ir_text  # the analysis (islpy, lark): not paid by --help

    text = ir_text(
        args.file, mode=args.mode, infer_structure=args.infer_structure,
        frontend=args.frontend, llm=llm_cli.config(args), share_layers=args.share_layers, debug=args.debug,
    )
    print(text, end="")
    return 0


def cmd_einsum(args: argparse.Namespace) -> int:
    from solar.api import einsum_text

    text = einsum_text(
        args.file, mode=args.mode, infer_structure=args.infer_structure, share_layers=args.share_layers,
        debug=args.debug,
    )
    print(text)
    return 0
