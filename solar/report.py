"""The analysis report: one pydantic model per (program, GPU), built from a backend Analysis. The
CLI renders it as a table or JSON; the Python API returns it."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict

from solar import __version__


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    def to_json(self, indent: int | None = 2) -> str:
        return self.model_dump_json(indent=indent)


class BoundReport(_Model):
    seconds: float
    bottleneck: str
    compute_seconds: float
    memory_seconds: float
    launch_seconds: float
    binding_unit: str | None = None


class OpReport(_Model):
    instance: int | None
    op: str
    source: str
    einsum: list[str]
    flops: int
    contraction_flops: int
    dram_bytes: float
    seconds: float
    bottleneck: str
    compute_seconds: float
    memory_seconds: float


class TotalsReport(_Model):
    flops: int
    contraction_flops: int
    dram_bytes: float
    unfused_dram_bytes: float
    arithmetic_intensity: float  # flops per compulsory DRAM byte


class Report(_Model):
    solar_version: str = __version__
    program: str
    arch: str
    assumptions: list[str]
    totals: TotalsReport
    bounds: dict[str, BoundReport]
    ops: list[OpReport]

    @property
    def sol_seconds(self) -> float:
        return self.bounds["fused"].seconds


def build_report(program_name: str, analysis: Any, graph: Any) -> Report:
    """Turn a backend Analysis (solar.backends.bounds.Analysis) into the report model."""
    nodes = {n.id: n for n in graph.nodes()}

    def bound(b: Any) -> BoundReport:
        return BoundReport(
            seconds=b.seconds,
            bottleneck=b.bottleneck,
            compute_seconds=b.compute_seconds,
            memory_seconds=b.memory_seconds,
            launch_seconds=b.launch_seconds,
            binding_unit=b.binding_unit,
        )

    t = analysis.totals
    return Report(
        program=program_name,
        arch=analysis.spec,
        assumptions=analysis.assumptions.describe(),
        totals=TotalsReport(
            flops=t.flops,
            contraction_flops=t.contraction_flops,
            dram_bytes=t.dram_bytes,
            unfused_dram_bytes=t.unfused_dram_bytes,
            arithmetic_intensity=t.flops / t.dram_bytes if t.dram_bytes else 0.0,
        ),
        bounds={"fused": bound(analysis.fused), "unfused": bound(analysis.unfused)},
        ops=[
            OpReport(
                instance=op.instance,
                op=op.op,
                source=op.source,
                einsum=[nodes[i].equation for i in op.node_ids],
                flops=op.flops,
                contraction_flops=op.contraction_flops,
                dram_bytes=op.dram_bytes,
                seconds=op.seconds,
                bottleneck=op.bottleneck,
                compute_seconds=op.compute_seconds,
                memory_seconds=op.memory_seconds,
            )
            for op in analysis.ops
        ],
    )


def reports_to_json(reports: list[Report]) -> str:
    """One object for one arch, a list for several (the `solar analyze --json` format)."""
    data = [r.model_dump(mode="json") for r in reports]
    return json.dumps(data[0] if len(data) == 1 else data, indent=2)
