"""The report of a sharded program on systems: per system, the slowest rank's time split into
compute, DRAM and communication, the link that binds, the bound levels, and each kind of collective
with the bytes one GPU moves for it; pipelines stage by stage with their schedule's bound."""

from __future__ import annotations

from collections import defaultdict

from rich import box
from rich.table import Table

from solar.backends.collectives import RankBound
from solar.backends.levels import Level
from solar.backends.pipeline import PipelineBound


def _table(title: str) -> Table:
    return Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False,
                 collapse_padding=True)


def us(seconds: float) -> str:
    return f"{seconds * 1e6:,.1f}"


def summary_table(title: str, ranks: dict[str, RankBound], ratio: bool = False) -> Table:
    """One row per system (its shown name -> the slowest rank's bounds); `ratio`: each system's
    fused bound over the first system's."""
    table = _table(title)
    levels = (Level.FUSED, Level.CACHE_AWARE, Level.UNFUSED)
    cols = ("system", "rank", "compute", "DRAM", "comm", "comm binds", *(str(v).replace("_", "-") for v in levels))
    for col in (*cols, *(("× first",) if ratio else ())):
        table.add_column(col, justify="left" if col in ("system", "comm binds") else "right")
    first = next(iter(ranks.values()), None)
    for name, b in ranks.items():
        f = b.analysis.fused
        extra = (f"{b.fused_seconds / first.fused_seconds:.2f}",) if ratio and first and first.fused_seconds else ()
        table.add_row(
            name, str(b.rank), us(f.compute_seconds), us(f.memory_seconds), us(b.comm_fused_seconds),
            b.comm_binds, us(b.fused_seconds), us(b.cache_aware_seconds), us(b.unfused_seconds), *extra,
        )
    return table


def collectives_table(name: str, b: RankBound) -> Table:
    """The collectives of the slowest rank on one system, by kind and group size."""
    rows: dict[tuple[str, int], list[float]] = defaultdict(lambda: [0, 0.0, 0.0, 0.0, 0.0])
    binds: dict[tuple[str, int], set[str]] = defaultdict(set)
    for c in b.collectives:
        row = rows[(c.kind.value, c.group_size)]
        row[0] += 1
        row[1] += c.full_bytes
        row[2] += c.gpu_bytes
        row[3] += c.node_bytes
        row[4] += c.seconds
        binds[(c.kind.value, c.group_size)].add(c.binds)
    table = _table(f"collectives on {name} (rank {b.rank})")
    for col in ("collective", "ranks", "count", "S MiB", "per-GPU MiB", "node NIC MiB", "µs, one by one", "binds"):
        table.add_column(col, justify="left" if col in ("collective", "binds") else "right")
    for (kind, size), (n, s, gpu, node, sec) in rows.items():
        table.add_row(
            kind, str(size), str(n), f"{s / 2**20:,.2f}", f"{gpu / 2**20:,.2f}", f"{node / 2**20:,.2f}", us(sec),
            ", ".join(sorted(binds[(kind, size)])),
        )
    return table


def _have(system) -> tuple[float, float]:
    """(links, NIC): a system's bandwidth per GPU per direction, links counting the NIC too, as the
    need does (solar.backends.collectives)."""
    out = system.scale_out
    nic = out.bandwidth_bytes_per_s_per_direction.value if out else 0.0
    return system.scale_up.bandwidth_bytes_per_s_per_direction.value + nic, nic


def need_table(target_ms: float, needs: dict) -> Table:
    """Per system (shown name -> (system spec, LinkNeed)): the link bandwidth per GPU per direction
    the fused bound needs to fit the target, beside what the system has."""
    table = _table(f"link bandwidth for a fused bound of {target_ms:g} ms (GB/s per GPU per direction)")
    for col in ("system", "links need", "links have", "NIC need", "NIC have", "reachable"):
        table.add_column(col, justify="left" if col in ("system", "reachable") else "right")
    for name, (system, need) in needs.items():
        have, nic = _have(system)
        table.add_row(
            name, f"{need.gpu_bytes_per_s / 1e9:,.1f}", f"{have / 1e9:,.1f}", f"{need.nic_bytes_per_s / 1e9:,.1f}",
            f"{nic / 1e9:,.1f}", f"no: {need.blocked_by} alone exceeds it" if need.blocked_by else "yes",
        )
    return table


def need_json(needs: dict) -> list[dict]:
    """need_table's rows as data, bytes/s per GPU per direction."""
    rows = []
    for name, (system, need) in needs.items():
        have, nic = _have(system)
        rows.append({
            "system": name, "target_seconds": need.target_seconds, "links_need_bytes_per_s": need.gpu_bytes_per_s,
            "links_have_bytes_per_s": have, "nic_need_bytes_per_s": need.nic_bytes_per_s, "nic_have_bytes_per_s": nic,
            "blocked_by": need.blocked_by,
        })
    return rows


def rank_json(name: str, b: RankBound) -> dict:
    f = b.analysis.fused
    return {
        "system": name,
        "rank": b.rank,
        "compute_seconds": f.compute_seconds,
        "memory_seconds": f.memory_seconds,
        "comm_seconds": b.comm_fused_seconds,
        "comm_unfused_seconds": b.comm_unfused_seconds,
        "comm_binds": b.comm_binds,
        "fused_seconds": b.fused_seconds,
        "cache_aware_seconds": b.cache_aware_seconds,
        "unfused_seconds": b.unfused_seconds,
        "collectives": [
            {"kind": c.kind.value, "out": c.out, "ranks": c.group_size, "full_bytes": c.full_bytes,
             "gpu_bytes": c.gpu_bytes, "node_bytes": c.node_bytes, "seconds": c.seconds, "binds": c.binds}
            for c in b.collectives
        ],
    }


def to_json(ranks: dict[str, RankBound]) -> list[dict]:
    return [rank_json(name, b) for name, b in ranks.items()]


def pipeline_table(title: str, pipes: dict[str, PipelineBound]) -> Table:
    """Per system, each stage's slowest rank for one micro-batch and the schedule's bound."""
    table = _table(title)
    levels = (Level.FUSED, Level.CACHE_AWARE, Level.UNFUSED)
    cols = ("system", "stage", "rank", "compute", "DRAM", "comm", "comm binds")
    for col in (*cols, *(str(v).replace("_", "-") for v in levels)):
        table.add_column(col, justify="left" if col in ("system", "comm binds") else "right")
    for name, p in pipes.items():
        for s, b in enumerate(p.stages):
            f = b.analysis.fused
            table.add_row(
                name if s == 0 else "", str(s), str(b.rank), us(f.compute_seconds),
                us(f.memory_seconds), us(b.comm_fused_seconds), b.comm_binds, us(b.fused_seconds),
                us(b.cache_aware_seconds), us(b.unfused_seconds),
            )
        table.add_row(
            "", f"M={p.microbatches}", "", "", "", "", f"slowest {p.slowest}",
            us(p.fused_seconds), us(p.cache_aware_seconds), us(p.unfused_seconds), end_section=True,
        )
    return table


def pipeline_json(pipes: dict[str, PipelineBound]) -> list[dict]:
    return [
        {"system": name, "microbatches": p.microbatches, "hidden_bytes": p.hidden_bytes, "slowest_stage": p.slowest,
         "fused_seconds": p.fused_seconds, "cache_aware_seconds": p.cache_aware_seconds,
         "unfused_seconds": p.unfused_seconds,
         "stages": [{"stage": s, "layers": p.layers[s], **rank_json(name, b)} for s, b in enumerate(p.stages)]}
        for name, p in pipes.items()
    ]
