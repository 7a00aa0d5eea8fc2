"""`solar specs` and `solar ops`: what solar knows, the GPU specs and the ops with a lowering."""

from __future__ import annotations

import argparse

from rich.table import Table

from solar.report import render


def register(sub: argparse._SubParsersAction) -> None:
    sub.add_parser("specs", help="list the GPU specs").set_defaults(fn=cmd_specs)
    sub.add_parser("ops", help="list the supported ops").set_defaults(fn=cmd_ops)


def cmd_specs(args: argparse.Namespace) -> int:
    from solar import hardware  # pydantic and the spec files: not paid by --help

    table = Table(title="hardware specs: dense peaks at the boost clock (TFLOP/s; int: TOP/s)", title_justify="left")
    keys = ("tf32", "fp16", "bf16", "fp8", "int8", "int4", "fp4")
    for col in ("name", "SMs", "boost MHz", "DRAM TB/s", "L2 MiB", "fp32 SIMT", *keys):
        table.add_column(col, justify="left" if col == "name" else "right", no_wrap=col == "name")
    for s in hardware.list_specs():
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
    from solar.frontends.jax import supported_primitives  # jax
    from solar.frontends.torch.lowerings import LOWERINGS  # torch

    names = sorted(str(op) for op in LOWERINGS)
    print(f"{len(names)} PyTorch core-ATen ops have a lowering:")
    for n in names:
        print(f"  {n}")
    prims = sorted(supported_primitives())
    print(f"{len(prims)} JAX primitives have a lowering:")
    for n in prims:
        print(f"  {n}")
    return 0
