"""Multi-GPU timings for checking solar's collective and sharded-program bounds: each collective
(all-reduce, all-gather, reduce-scatter, all-to-all, send/recv) over sizes S = 4 KiB .. 4 GiB, and
the sharded examples' forward, on every rank of a torch.distributed job; rank 0 writes one JSON
line per measurement with the environment, nccl-tests' algbw and busbw, and with --system the bound
solar gives and whether the measurement beat it (a violation).

    torchrun --nproc-per-node 8 benchmarks/multigpu_measure.py --system 8xH100-SXM --out rows.jsonl
    torchrun --nnodes 2 --nproc-per-node 8 ... --system 8xH100-SXM --nodes 2 --out rows.jsonl
    python benchmarks/multigpu_measure.py --spawn 2 --backend gloo --max-bytes 65536 --out rows.jsonl   # CPU
    python benchmarks/multigpu_measure.py --dry-run --world 8 --system 8xH100-SXM   # the plan, no run
    python benchmarks/multigpu_measure.py --rank0 8 --out rank0.jsonl   # one GPU: rank 0's shard alone
    python benchmarks/multigpu_measure.py --join rank0.jsonl --arch H100-SXM   # its per-rank bounds (CPU)
    python benchmarks/multigpu_measure.py --rank0 8 --small --out smoke.jsonl   # CPU: the examples' verify sizes

--rank0 N times each sharded example's rank-0 program alone on this process's one GPU, under a fake
process group of N ranks (torch's `fake` backend: the collectives move nothing; an all-reduce keeps
the local partial sums), so the rank's compute and memory can be checked against its bound without
several GPUs; --join prices the same rank program on --arch (solar's fused bound of its compute and
DRAM: the collectives' local parts are copies) and marks a timing below it a violation. An example
made for a fixed number of ranks (EXAMPLES) runs at that number whatever N is; one missing from
this checkout is skipped with a note. --small builds each example at the sizes `solar verify` runs
(get_verify_init_inputs / get_verify_inputs; an example without them is skipped): a quick run of
every path on a CPU, priced alike.

S is nccl-tests' size: the buffer of all-reduce, reduce-scatter, all-to-all and send/recv, the
output of all-gather. Each timing is the median of --iters calls after --warmup, the ranks
synchronised by a barrier before each call; the time of a call is the slowest rank's."""

from __future__ import annotations

import argparse
import datetime
import functools
import json
import os
import platform
import socket
import statistics
import sys
import time
from fractions import Fraction
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

KINDS = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "send_recv")
# sharded example files -> the ranks they are made for (None: any number, --rank0 N / the job's)
EXAMPLES = {
    "examples/distributed/tp_mlp.py": None,
    "examples/distributed/dtensor_mlp.py": None,
    "examples/distributed/dp_train_step.py": None,
    "examples/distributed/pp_two_stage.py": 2,
    "examples/distributed/tp_decoder_layer.py": None,
    "examples/distributed/moe_ep.py": None,
}


def present(examples: list[str]) -> list[str]:
    """The examples in this checkout; each missing one is noted on stderr and skipped."""
    for e in examples:
        if not (ROOT / e).is_file():
            print(f"note: {e} is not in this checkout; skipped", file=sys.stderr)
    return [e for e in examples if (ROOT / e).is_file()]


def has_verify_sizes(example: str) -> bool:
    return "def get_verify_inputs(" in (ROOT / example).read_text()


def ranks_of(example: str, world: int) -> int:
    return EXAMPLES.get(example) or world


def busbw_factor(kind: str, n: int) -> Fraction:
    """nccl-tests' bus-bandwidth factor (its PERFORMANCE.md): busbw = algbw x factor."""
    from solar.backends.collectives import gpu_factor
    from solar.ir.collectives import Kind

    return gpu_factor(Kind(kind), n, in_network_reduction=False)


def sizes(lo: int, hi: int, step: int) -> list[int]:
    out, s = [], lo
    while s <= hi:
        out.append(s)
        s *= step
    return out


def bound_seconds(kind: str, nbytes: int, world: int, system: Any) -> float:
    """solar's lower bound on one collective of S = nbytes over all `world` ranks of `system`."""
    from solar.backends.collectives import collective_bounds
    from solar.ir.collectives import Collective, Kind

    c = Collective(Kind(kind), "y", "x", (tuple(range(world)),))
    return max(b.seconds for b in collective_bounds(c, nbytes, system).values())


def plan(args: argparse.Namespace, world: int) -> list[dict]:
    rows = [{"kind": k, "bytes": s} for k in args.kinds for s in sizes(args.min_bytes, args.max_bytes, args.step)]
    for row in rows:
        row["world"] = world
    return rows + [{"example": e, "world": world, "needs": ranks_of(e, world)} for e in present(args.examples)]


# ---- running on every rank ------------------------------------------------------------------------


def _buffers(kind: str, nbytes: int, world: int, device: Any) -> tuple[Any, Any]:
    import torch

    dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
    elems = max(world, nbytes // torch.tensor([], dtype=dtype).element_size())
    elems -= elems % world
    full = torch.ones(elems, dtype=dtype, device=device)
    part = torch.ones(elems // world, dtype=dtype, device=device)
    return {
        "all_reduce": (full, full),
        "all_gather": (part, full),  # S is the gathered output
        "reduce_scatter": (full, part),
        "all_to_all": (full, torch.empty_like(full)),
        "send_recv": (full, torch.empty_like(full)),
    }[kind]


def _call(kind: str, src: Any, dst: Any, rank: int, world: int) -> None:
    import torch.distributed as dist

    if kind == "all_reduce":
        dist.all_reduce(src)
    elif kind == "all_gather":
        dist.all_gather_into_tensor(dst, src)
    elif kind == "reduce_scatter":
        dist.reduce_scatter_tensor(dst, src)
    elif kind == "all_to_all":
        dist.all_to_all_single(dst, src)
    else:  # each rank sends to the next and receives from the previous (ppermute by one)
        ops = [dist.P2POp(dist.isend, src, (rank + 1) % world), dist.P2POp(dist.irecv, dst, (rank - 1) % world)]
        for req in dist.batch_isend_irecv(ops):
            req.wait()


def _timed(fn: Any, device: Any, warmup: int, iters: int) -> float:
    """Median seconds of fn() (the slowest rank's: every rank's time, max-reduced)."""
    import torch
    import torch.distributed as dist

    for _ in range(warmup):
        fn()
    times = []
    for _ in range(iters):
        dist.barrier()
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        start = time.perf_counter()
        fn()
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        t = torch.tensor([time.perf_counter() - start], dtype=torch.float64, device=device)
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        times.append(float(t.item()))
    return statistics.median(times)


def built(path: str, small: bool = False) -> tuple[Any, list]:
    """(Model, inputs) of an example file as this process's rank builds them; `small`: at the
    sizes `solar verify` runs (get_verify_init_inputs / get_verify_inputs, where the file has them)."""
    from solar.frontends.files import import_model_file

    module = import_model_file(path)
    init = getattr(module, "get_init_inputs", list)
    inputs = module.get_inputs
    if small:
        init = getattr(module, "get_verify_init_inputs", init)
        inputs = getattr(module, "get_verify_inputs", inputs)
    return module.Model(*init()), list(inputs())


def _example(path: str, device: Any, small: bool = False) -> Any:
    import torch

    model, inputs = built(path, small)
    model = model.to(device).eval()
    inputs = [x.to(device) for x in inputs]

    def run() -> None:
        with torch.no_grad():
            model(*inputs)

    return run


def rank0_alone(args: argparse.Namespace) -> int:
    """Time each example's rank-0 program on one device under a fake process group of --rank0 ranks."""
    import torch
    import torch.distributed as dist
    from torch.testing._internal.distributed.fake_pg import FakeStore

    device = torch.device("cuda", 0) if torch.cuda.is_available() else torch.device("cpu")
    with open(args.out, "a") as out:
        for example in present(args.examples):
            if args.small and not has_verify_sizes(example):
                print(f"note: {example} has no get_verify_inputs(); skipped at --small", file=sys.stderr)
                continue
            world = ranks_of(example, args.rank0)
            dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=world)
            row = {"example": example, "world": world, "rank": 0, "small": args.small}
            try:
                row["env"] = environment(device, "fake")
                run = _example(str(ROOT / example), device, args.small)
                row["seconds"] = _timed_alone(run, device, args.warmup, args.iters)
            except Exception as exc:  # noqa: BLE001 - one example's failure is its row; the others run
                row["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            finally:
                dist.destroy_process_group()
            out.write(json.dumps(row) + "\n")
            print(json.dumps({k: v for k, v in row.items() if k != "env"}))
    return 0


def _timed_alone(fn: Any, device: Any, warmup: int, iters: int) -> float:
    """Median seconds of fn() on one device (CUDA events around each call; wall clock on a CPU)."""
    if device.type == "cuda":
        from solar.validate.timing import event_seconds

        return statistics.median(event_seconds(fn, iters, warmup))
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(iters):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def join(args: argparse.Namespace) -> int:
    """Each --rank0 timing beside the fused bound of the same rank program on --arch."""
    from solar import api
    from solar.backends.assumptions import Assumptions
    from solar.backends.bounds import analyze_graph
    from solar.frontends.torch.distributed import fake_world
    from solar.hardware import get_spec

    spec = get_spec(args.arch)
    rows = [json.loads(line) for line in Path(args.join).read_text().splitlines() if line.strip()]
    violations = 0
    timed = [row for row in rows if "seconds" in row]
    for row in rows:
        if "seconds" not in row:
            print(f"note: {row['example']} has no timing ({row.get('error', 'no seconds')}); skipped", file=sys.stderr)
    rows = timed
    for row in rows:
        with fake_world(row["world"]):
            if row.get("small"):
                model, inputs = built(str(ROOT / row["example"]), small=True)
                loaded = api.load(model, inputs)
            else:
                loaded = api.load(str(ROOT / row["example"]))
        bound = analyze_graph(loaded.graph, spec, Assumptions()).fused.seconds
        row.update(arch=args.arch, bound_seconds=float(bound), violation=bool(row["seconds"] < bound))
        violations += row["violation"]
        print(json.dumps({k: v for k, v in row.items() if k != "env"}))
    print(f"{len(rows)} timing(s), {violations} violation(s)")
    return 1 if violations else 0


def environment(device: Any, backend: str) -> dict:
    import torch
    import torch.distributed as dist

    env = {
        "host": socket.gethostname(), "python": platform.python_version(), "torch": torch.__version__,
        "backend": backend, "world": dist.get_world_size(), "date": datetime.datetime.now(datetime.UTC).isoformat(),
        "device": str(device),
    }
    if device.type == "cuda":
        env["gpu"] = torch.cuda.get_device_name(device)
        env["cuda"] = torch.version.cuda
        env["nccl"] = ".".join(map(str, torch.cuda.nccl.version()))
    return env


def worker(args: argparse.Namespace) -> None:
    import torch
    import torch.distributed as dist

    if not dist.is_initialized():
        dist.init_process_group(args.backend)
    rank, world = dist.get_rank(), dist.get_world_size()
    if args.backend == "nccl":
        local = int(os.environ.get("LOCAL_RANK", rank % max(torch.cuda.device_count(), 1)))
        torch.cuda.set_device(local)
        device = torch.device("cuda", local)
    else:
        device = torch.device("cpu")
    system = _system(args)
    env = environment(device, args.backend)
    out = open(args.out, "a") if rank == 0 else None  # noqa: SIM115 - closed below
    try:
        for row in plan(args, world):
            try:
                if "example" in row and row["needs"] != world:
                    raise ValueError(f"the example is made for {row['needs']} ranks")
                if "example" in row:
                    seconds = _timed(_example(str(ROOT / row["example"]), device), device, args.warmup, args.iters)
                else:
                    src, dst = _buffers(row["kind"], row["bytes"], world, device)
                    call = functools.partial(_call, row["kind"], src, dst, rank, world)
                    seconds = _timed(call, device, args.warmup, args.iters)
                    row["algbw_bytes_per_s"] = row["bytes"] / seconds
                    row["busbw_bytes_per_s"] = float(row["bytes"] / seconds * busbw_factor(row["kind"], world))
                    if system is not None:
                        row["bound_seconds"] = bound_seconds(row["kind"], row["bytes"], world, system)
                        row["violation"] = seconds < row["bound_seconds"]
                row["seconds"] = seconds
            except (RuntimeError, ValueError) as exc:  # a backend without this collective (gloo)
                row["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            if out is not None:
                out.write(json.dumps({**row, "system": args.system, "nodes": args.nodes, "env": env}) + "\n")
                out.flush()
    finally:
        if out is not None:
            out.close()
        dist.destroy_process_group()


def _system(args: argparse.Namespace) -> Any:
    if args.system is None:
        return None
    from solar.hardware.systems import get_system

    return get_system(args.system, args.nodes)


def _spawned(rank: int, world: int, port: int, args: argparse.Namespace) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank), WORLD_SIZE=str(world))
    worker(args)


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--kinds", nargs="+", choices=KINDS, default=list(KINDS))
    p.add_argument("--min-bytes", type=int, default=4096)
    p.add_argument("--max-bytes", type=int, default=4 << 30)
    p.add_argument("--step", type=int, default=4, help="size factor between measurements")
    p.add_argument("--examples", nargs="*", default=list(EXAMPLES), help="sharded example files (rank programs)")
    p.add_argument("--small", action="store_true", help="with --rank0: the examples at their verify sizes (a CPU smoke run)")
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--backend", choices=("nccl", "gloo"), default="nccl")
    p.add_argument("--system", default=None, help="system spec to bound each collective on (see `solar specs`)")
    p.add_argument("--nodes", type=int, default=1)
    p.add_argument("--spawn", type=int, default=0, help="start this many local ranks (no torchrun)")
    p.add_argument("--dry-run", action="store_true", help="print the measurement plan as JSON lines; run nothing")
    p.add_argument("--world", type=int, default=8, help="ranks of the --dry-run plan")
    p.add_argument("--rank0", type=int, default=0, metavar="N",
                   help="time each example's rank-0 program alone on one GPU under a fake group of N ranks")
    p.add_argument("--join", default=None, metavar="ROWS", help="--rank0 rows to price on --arch (no GPU needed)")
    p.add_argument("--arch", default="H100-SXM", help="GPU spec of --join")
    p.add_argument("--out", default="multigpu_rows.jsonl")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    if args.join:
        return join(args)
    if args.rank0:
        return rank0_alone(args)
    if args.dry_run:
        system = _system(args)
        for row in plan(args, args.world):
            if system is not None and "kind" in row:
                row["bound_seconds"] = bound_seconds(row["kind"], row["bytes"], args.world, system)
            print(json.dumps(row))
        return 0
    if args.spawn:
        import socket as sockets

        import torch.multiprocessing as mp

        with sockets.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        mp.spawn(_spawned, args=(args.spawn, port, args), nprocs=args.spawn, join=True)
        return 0
    worker(args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
