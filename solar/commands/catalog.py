"""`solar specs` and `solar ops`: what solar knows, the GPU specs and the ops with a lowering."""

from __future__ import annotations

import argparse

from rich.table import Table

from solar.report import render


def register(sub: argparse._SubParsersAction) -> None:
    sub.add_parser("specs", help="list the GPU and system specs").set_defaults(fn=cmd_specs)
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
    render.console().print(_systems_table())
    return 0


def _systems_table() -> Table:
    from solar.hardware.systems import list_systems

    table = Table(title="system specs: GPU x topology (link GB/s per GPU per direction)", title_justify="left")
    for col in ("name", "GPU", "GPUs/node", "scale-up", "GB/s", "in-switch reduce", "scale-out", "GB/s "):
        table.add_column(col, justify="left" if col in ("name", "GPU", "scale-up", "scale-out") else "right")
    for s in list_systems():
        out = s.scale_out
        table.add_row(
            s.name,
            s.gpu,
            str(s.per_node),
            s.scale_up.generation,
            f"{s.scale_up.bandwidth_bytes_per_s_per_direction.value / 1e9:g}",
            "yes" if s.scale_up.in_network_reduction.value else "no",
            "-" if out is None else out.generation,
            "-" if out is None else f"{out.bandwidth_bytes_per_s_per_direction.value / 1e9:g}",
        )
    return table


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
