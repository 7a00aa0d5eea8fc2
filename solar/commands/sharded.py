"""`solar analyze FILE --system NAME ...`: a sharded program (torch.distributed collectives under a
fake process group, an `hf:` step with --tp, a JAX shard_map, or sharded IR text) bounded per rank
on multi-GPU systems, communication beside compute and DRAM; the link bandwidth it needs for a
target time (`--need-ms`, `solar provision --system`)."""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass

from solar.backends.assumptions import Assumptions
from solar.commands.args import count
from solar.errors import UsageError
from solar.report import render


def add_flags(p: argparse.ArgumentParser, need: bool = True) -> None:
    """The flags of a sharded program on systems; `need`: --need-ms too (a command with a target of
    its own, `solar provision --target-ms`, has no need of it)."""
    g = p.add_argument_group("several GPUs (a sharded program on a system: GPUs and their links)")
    g.add_argument("--system", nargs="+", default=None, metavar="NAME",
                   help="system spec names (see `solar specs`): bound the program per rank on each")
    g.add_argument("--nodes", type=count(1), default=None,
                   help="nodes of each system (default: the fewest that hold the program's ranks)")
    g.add_argument("--world-size", type=count(1), default=None, help="ranks of a torch.distributed or JAX program")
    g.add_argument("--mesh", default=None, metavar="AxB", help="device mesh shape (e.g. 2x4); sets the world size")
    g.add_argument("--tp", type=count(1), default=None, help="hf: tensor-parallel degree (Megatron column/row split)")
    g.add_argument("--ep", type=count(1), default=None,
                   help="hf: expert-parallel degree of MoE layers (E / ep experts per rank; tokens dispatched and "
                   "combined by all-to-all)")
    g.add_argument("--sp", action="store_true", default=None,
                   help="hf: sequence parallelism with --tp (all-reduces become reduce-scatter + all-gather)")
    g.add_argument("--dp", type=count(1), default=None,
                   help="hf: data-parallel replicas (each serves batch / dp sequences on its own --tp ranks)")
    g.add_argument("--pp", type=count(1), default=None,
                   help="hf: pipeline stages (consecutive decoder layers; hidden states sent stage to stage)")
    g.add_argument("--microbatches", type=count(1), default=None, metavar="M",
                   help="hf: micro-batches through the pipeline (each batch / (dp x M) sequences; default 1)")
    if need:
        g.add_argument("--need-ms", type=float, default=None, metavar="MS",
                       help="print the link bandwidth each system needs for the fused bound to fit MS milliseconds")
    else:
        p.set_defaults(need_ms=None)


def check(args: argparse.Namespace) -> None:
    """Before anything is imported: flags that need --system, and the systems' names."""
    if args.system is None:
        flags = (
            ("--world-size", args.world_size), ("--mesh", args.mesh), ("--tp", args.tp), ("--ep", args.ep), ("--sp", args.sp), ("--dp", args.dp),
            ("--pp", args.pp), ("--microbatches", args.microbatches), ("--need-ms", args.need_ms),
        )
        for flag, value in flags:
            if value is not None:
                raise UsageError(f"{flag} needs --system NAME (a multi-GPU system; see `solar specs`)")
        if args.nodes is not None:
            raise UsageError("--nodes needs --system NAME (a multi-GPU system; see `solar specs`)")
        return
    if args.need_ms is not None and not 0 < args.need_ms < 1e9:
        raise UsageError(f"--need-ms {args.need_ms}: give a positive time in milliseconds")
    hf_only = (args.tp, args.ep, args.sp, args.dp, args.pp, args.microbatches)
    if any(v is not None for v in hf_only) and not args.file.startswith("hf:"):
        raise UsageError(
            "--tp, --ep, --sp, --dp, --pp and --microbatches apply to hf:<model>; a PyTorch or JAX file gives --world-size or --mesh"
        )
    if args.file.startswith("hf:") and (args.world_size is not None or args.mesh is not None):
        raise UsageError("an hf: model is sharded with --tp; drop --world-size and --mesh")
    from solar.hardware.systems import get_system

    for name in args.system:
        get_system(name, args.nodes or 1)
        if args.ep is not None:  # before the model is traced
            _check_ep(args, _system(name, args.nodes, (args.tp or 1) * (args.pp or 1) * (args.dp or 1)))


@dataclass(frozen=True)
class Bounds:
    """A sharded program on each system the flags name: `by_system` maps a system's shown name to
    (its spec, the slowest rank's RankBound, or the PipelineBound of --pp / --microbatches)."""

    ranks: int
    collectives: int
    pipeline: tuple  # the pipeline's stages (solar.frontends.torch.pp), empty without one
    by_system: dict


def bounds(args: argparse.Namespace, assumptions: Assumptions) -> Bounds:
    """The program the flags name, bounded per rank on every system of --system."""
    from solar.backends.bounds import analyze_graph
    from solar.multigpu import analyze_pipeline, analyze_sharded, verify_sharded

    if args.pp is not None or args.microbatches is not None:
        stages = _stages(args)
        tp, dp, m, pp = args.tp or 1, args.dp or 1, args.microbatches or 1, len(stages)
        by_system = {}
        for name in args.system:
            system = _system(name, args.nodes, tp * pp * dp)
            by_system[system.shown] = (system, analyze_pipeline(stages, tp, dp, m, system, assumptions))
        return Bounds(tp * pp * dp, 0, tuple(stages), by_system)
    loaded, sharded = _load(args)
    systems = [_system(name, args.nodes, sharded.world) for name in args.system]
    verify_sharded(sharded)
    by_system = {}
    for system in systems:
        analysis = analyze_graph(loaded.graph, system.gpu_spec, assumptions) if loaded else None
        by_system[system.shown] = (system, analyze_sharded(sharded, system, assumptions, analysis))
    return Bounds(sharded.world, len(sharded.collectives), (), by_system)


def needs(b: Bounds, target_ms: float) -> dict:
    """Per system (shown name -> (spec, LinkNeed)): the least per-GPU link and NIC bandwidths at
    which the fused bound (a pipeline's: its schedule) fits `target_ms` milliseconds."""
    from solar.multigpu import link_need, pipeline_need

    need = pipeline_need if b.pipeline else link_need
    return {name: (s, need(r, s.per_node, target_ms * 1e-3)) for name, (s, r) in b.by_system.items()}


def _with_need(rows: list[dict], args: argparse.Namespace, b: Bounds, table) -> list[dict]:
    """Each system's JSON row with, under --need-ms, the link bandwidth it needs (`solar provision
    --system --json`'s row for that system)."""
    if args.need_ms is None:
        return rows
    need = {r["system"]: r for r in table.need_json(needs(b, args.need_ms))}
    return [{**row, "need": need[row["system"]]} for row in rows]


def run(args: argparse.Namespace, assumptions: Assumptions, compare: bool = False) -> int:
    """The report of `solar analyze --system` (`compare`: `solar compare --system`, each system's
    bound also as a ratio to the first system's)."""
    table = _report()
    b = bounds(args, assumptions)
    if b.pipeline:
        return _pipeline_out(args, b, table)
    ranks = {name: r for name, (_, r) in b.by_system.items()}
    if args.json:
        print(json.dumps(_with_need(table.to_json(ranks), args, b, table), indent=1))
        return 0
    out = render.console()
    out.print(table.summary_table(_title(args, b), ranks, compare))
    for name, r in ranks.items():
        if r.collectives:
            out.print(table.collectives_table(name, r))
    if args.need_ms is not None:
        out.print(table.need_table(args.need_ms, needs(b, args.need_ms)))
    return 0


def provision(args: argparse.Namespace, assumptions: Assumptions, target_ms: float) -> int:
    """`solar provision --system`: the link and NIC bandwidth each system needs for the program's
    fused bound to fit `target_ms` (the numbers of `solar analyze --system --need-ms`)."""
    table = _report()
    b = bounds(args, assumptions)
    need = needs(b, target_ms)
    if args.json:
        print(json.dumps(table.need_json(need), indent=1))
        return 0
    out = render.console()
    if b.pipeline:
        out.print(table.pipeline_table(_pipeline_title(args, b), {n: p for n, (_, p) in b.by_system.items()}))
    else:
        out.print(table.summary_table(_title(args, b), {n: r for n, (_, r) in b.by_system.items()}))
    out.print(table.need_table(target_ms, need))
    return 0


def _report():
    """solar.report.sharded (rich and the bounds: imported by a command that prints)."""
    from solar.report import sharded

    return sharded


def _title(args: argparse.Namespace, b: Bounds) -> str:
    return (
        f"{args.file}: {b.ranks} ranks, {b.collectives} collective(s) per rank; the slowest rank, "
        "µs (communication overlaps compute and DRAM at fused and cache-aware, adds at unfused)"
    )


def _stages(args: argparse.Namespace):
    """The pipeline stages of the hf: step the flags name (solar.frontends.torch.pp)."""
    from solar.frontends.torch.pp import load_hf_stages, scenario

    step = scenario(args.scenario, args.batch, args.seq, args.context)
    return load_hf_stages(
        args.file, step, args.tp or 1, args.pp or 1, args.dp or 1, args.microbatches or 1, args.ep or 1, bool(args.sp)
    )


def _check_ep(args: argparse.Namespace, system) -> None:
    """Expert-parallel groups inside one node: the least-traffic routing keeps tokens on the node
    where it can, which the all-to-all of a group spanning nodes does not express. A group is ep
    consecutive ranks of a stage's tp x dp (rank d * tp + t), placed as solar.backends.pipeline places
    them (replica d, stage s, position t: d * pp * tp + s * tp + t)."""
    ep, tp, pp, dp = args.ep or 1, args.tp or 1, args.pp or 1, args.dp or 1
    if ep == 1:
        return
    nodes = {
        frozenset((r // tp * pp * tp + s * tp + r % tp) // system.per_node for r in range(g, g + ep))
        for s in range(pp) for g in range(0, tp * dp, ep)
    }
    if any(len(n) > 1 for n in nodes):
        raise UsageError(
            f"--ep {ep} spans nodes of {system.shown} ({system.per_node} GPUs each); expert parallelism across "
            "nodes is not bounded yet: give a smaller --ep (or fewer stages between a group's replicas)"
        )


def _pipeline_title(args: argparse.Namespace, b: Bounds) -> str:
    tp, dp, m, stages = args.tp or 1, args.dp or 1, args.microbatches or 1, b.pipeline
    return (
        f"{args.file}: {len(stages)} stage(s) of {', '.join(str(s.layers) for s in stages)} layers x tp {tp} x dp {dp} = "
        f"{tp * len(stages) * dp} ranks; each stage's slowest rank per micro-batch, µs; the schedule of M = {m} "
        "micro-batches: the stages' sum plus (M - 1) x the slowest"
    )


def _pipeline_out(args: argparse.Namespace, b: Bounds, table) -> int:
    pipes = {name: p for name, (_, p) in b.by_system.items()}
    if args.json:
        print(json.dumps(_with_need(table.pipeline_json(pipes), args, b, table), indent=1))
        return 0
    out = render.console()
    out.print(table.pipeline_table(_pipeline_title(args, b), pipes))
    if args.need_ms is not None:
        out.print(table.need_table(args.need_ms, needs(b, args.need_ms)))
    return 0


def _system(name: str, nodes: int | None, world: int):
    """System `name` with `nodes` nodes, or the fewest that hold `world` ranks."""
    from solar.hardware.systems import get_system

    one = get_system(name)
    return get_system(name, nodes or max(1, -(-world // one.per_node)))


def _load(args: argparse.Namespace):
    """(Loaded or None, Sharded) of the file the flags name."""
    from solar.ir.collectives import parse_sharded, sharded_of

    if args.file.endswith(".ir"):
        from solar.errors import IRSyntaxError
        from solar.userfiles import read_text

        return None, parse_sharded(read_text(args.file, "an IR text file", IRSyntaxError))
    if args.file.startswith("hf:"):
        from solar.frontends.torch.hf import scenario
        from solar.frontends.torch.tp import load_hf_tp

        tp, dp = args.tp or 1, args.dp or 1
        step = scenario(args.scenario, args.batch, args.seq, args.context)
        loaded = load_hf_tp(args.file, step, tp, dp, args.ep or 1, bool(args.sp))
        return loaded, sharded_of(loaded.program, tp * dp)
    return _load_file(args, sharded_of)


def _load_file(args: argparse.Namespace, sharded_of):
    from solar import api
    from solar.frontends.detect import framework_of

    if framework_of(args.file) == "jax":
        from solar.frontends.jax.sharded import load_sharded

        world = args.world_size
        loaded, world = load_sharded(args.file, world, args.mesh)
        return loaded, sharded_of(loaded.program, world)
    from solar.frontends.torch.distributed import fake_world, parse_mesh, world_of

    mesh = parse_mesh(args.mesh) if args.mesh else None
    world = world_of(args.world_size, mesh)
    with fake_world(world, mesh):
        loaded = api.load(args.file, mode=args.mode, share_layers=args.share_layers, debug=args.debug)
    return loaded, sharded_of(loaded.program, world)
