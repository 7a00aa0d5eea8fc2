"""Where an eager call's host time goes: per KernelBench-format file, the eager time (synchronised
start, as benchmarks/eager_host_measure.py times it), the host's own wall time of one call, and a
breakdown of that host time from torch.profiler (docs/BOUNDS.md §17): the Python-level ATen ops
(the top-level `aten::` events, inclusive of what they dispatch), the Python outside any op, the
share of that in nn.Module call machinery (a second profile with the Python tracer), and the device
busy time. One JSON line per file:

    {"problem", "arch", "protocol": "sync_start",
     "measured": {"eager": {min_seconds, median_seconds, reps, host_seconds}},
     "profile": {"calls", "wall_us", "ops", "ops_us", "outside_us", "before_first_us", "after_last_us",
                 "device_busy_us", "device_end_us", "by_op": {name: [count, host_us, device_us]},
                 "seq": [[name, host_us, gap_before_us, device_us], ...]},
     "modules": {"calls", "wall_us", "ops_us", "module_us", "by_class": {cls: [count, module_us]}},
     "module_calls": {"calls", "wall_us", "direct_us", "module_us", "rounds"},
     "floors": {"host", "by_op": {name: [count, floor_us]}, "kernel_us", "any_us", "empty_module_us"},
     "environment"}

`profile` is of the profiled call with the least wall time (`--calls` of them, each started on an
idle GPU, L2 flushed); `seq` lists its top-level ops in program order (host_us inclusive, the
Python gap before each, its kernels' device time), for a join with the committed eager_host rows.
`modules` is one call under the Python tracer, which inflates every Python frame: read its shares,
not its absolute times. `module_calls` measures the same without a profiler: the host wall time of
one call (least of `rounds`, each started on an idle device) as PyTorch runs it and with
`nn.Module.__call__` replaced by a direct call of `forward` (no hook machinery; the two alternate),
their difference the module calls' own host time in context (measured before the profiles). `floors`
prices each op name as the host profile of this GPU's host does (the least floor of the op's
overloads; none: the kernel or any-op floor applies). Each file is measured in its own process.

    python benchmarks/eager_host_gap.py FILE... --out OUT.jsonl [--budget-s 240] [--reps 10] [--calls 3]
        [--device cuda|cpu] [--host NAME]

--device cpu (or no CUDA) profiles on the CPU: no device times, a smoke test of the breakdown.

    python benchmarks/eager_host_gap.py --join GAP.jsonl --rows ROWS.jsonl [--host NAME]

joins the rows it wrote with the committed eager_host rows of the same files
(benchmarks/eager_host_rows.py) on any CPU: per program the host wall time, the ops' and the
Python's share of it, the floors the host profile charges (before its margin), and per op name the
in-context host time per call against the floor per call, largest shortfall first.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.measure_files import file_name  # noqa: E402
from benchmarks.rows import in_fresh_process, row_or_error  # noqa: E402

CALL = "eager_host_gap.call"  # the record_function range around each profiled call
HOSTS = {"H100": "h100-host", "H200": "h200-host"}  # GPU name -> the committed profile of its host


def build(path: Path, device: str) -> tuple[Any, list]:
    """The file's model and inputs on `device`, as solar validate builds them."""
    import torch

    if device == "cuda":
        from solar.validate.run import build_on_gpu, to_device

        model, inputs = build_on_gpu(path)
        return model.cuda(), to_device(list(inputs), torch)
    from solar.frontends.torch.loader import import_model_file

    module = import_model_file(path)
    torch.manual_seed(0)
    model = module.Model(*getattr(module, "get_init_inputs", lambda: [])())
    return model, list(module.get_inputs())


def eager_times(torch: Any, call: Any, device: str, reps: int) -> dict:
    """Eager min/median (CUDA: sync_start, L2 flushed) and the host's wall time of one call started
    on an idle device (least of 5)."""
    if device == "cuda":
        from solar.validate.device import query_device
        from solar.validate.timing import time_cuda

        t = time_cuda(call, query_device().l2_bytes, reps, sync_start=True)
        timing = {"median_seconds": t.median_seconds, "min_seconds": t.min_seconds, "reps": t.reps}
    else:
        timing = {}
    host = []
    with torch.no_grad():
        for _ in range(max(5, 0 if timing else reps)):
            sync(torch, device)
            t0 = time.perf_counter()
            call()
            host.append(time.perf_counter() - t0)
            sync(torch, device)
    if not timing:
        timing = {"median_seconds": statistics.median(host), "min_seconds": min(host), "reps": len(host)}
    return {**timing, "host_seconds": min(host)}


def sync(torch: Any, device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()


def least_host_us(torch: Any, device: str, work: Any, reps: int) -> float:
    """The least host wall time of `work()` started on an idle device (µs)."""
    best = float("inf")
    for _ in range(reps):
        sync(torch, device)
        t0 = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - t0)
        sync(torch, device)
    return best * 1e6


def profiled(torch: Any, call: Any, device: str, calls: int, stack: bool) -> Any:
    """The profiler's events of `calls` calls, each in a CALL range, started on an idle device."""
    from torch.profiler import ProfilerActivity, profile, record_function

    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" and not stack else [])
    flush = torch.empty(1 << 26, dtype=torch.uint8, device=device) if device == "cuda" else None
    with torch.no_grad(), profile(activities=acts, with_stack=stack) as prof:
        for k in range(calls):
            if flush is not None:
                flush.fill_(k & 0xFF)
            sync(torch, device)
            with record_function(CALL):
                call()
            sync(torch, device)
    return prof.events()


def span(e: Any) -> float:
    return e.time_range.end - e.time_range.start


def is_op(e: Any) -> bool:
    return e.name.startswith("aten::") and not getattr(e, "is_python_function", False)


def top_ops(e: Any) -> list:
    """The ATen ops under `e` that no other ATen op encloses (the ops Python called), in order."""
    out = []
    for c in e.cpu_children:
        out.extend([c] if is_op(c) else top_ops(c))
    return out


def is_device(e: Any) -> bool:
    return "CUDA" in str(e.device_type)


def union_us(intervals: list[tuple[float, float]]) -> float:
    total, end = 0.0, float("-inf")
    for a, b in sorted(intervals):
        if b > end:
            total += b - max(a, end)
            end = b
    return total


def breakdown(events: Any) -> dict:
    """The profiled call with the least wall time: its top-level ops, the Python around them and
    the device busy time of its kernels (all in µs)."""
    calls = sorted((e for e in events if e.name == CALL and not is_device(e)), key=lambda e: e.time_range.start)
    if not calls:
        raise RuntimeError("the profiler recorded no call")
    kernels = [(e.time_range.start, e.time_range.end) for e in events  # the device's own work, not the call's range
               if is_device(e) and e.name != CALL and not getattr(e, "is_user_annotation", False)]
    rows = []
    for k, c in enumerate(calls):
        ops = top_ops(c)
        stop = calls[k + 1].time_range.start if k + 1 < len(calls) else float("inf")
        mine = [(a, b) for a, b in kernels if c.time_range.start <= a < stop]
        seq, prev = [], c.time_range.start
        for o in ops:
            seq.append([o.name, round(span(o), 3), round(max(0.0, o.time_range.start - prev), 3),
                        round(o.device_time_total, 3)])
            prev = max(prev, o.time_range.end)
        rows.append((span(c), c, ops, mine, seq, prev))
    wall, c, ops, mine, seq, last = min(rows, key=lambda r: r[0])
    by_op: dict[str, list] = {}
    for name, host, _, dev in seq:
        entry = by_op.setdefault(name, [0, 0.0, 0.0])
        entry[0] += 1
        entry[1] = round(entry[1] + host, 3)
        entry[2] = round(entry[2] + dev, 3)
    ops_us = sum(r[1] for r in seq)
    return {
        "calls": len(calls),
        "wall_us": round(wall, 3),
        "walls_us": [round(r[0], 3) for r in rows],
        "ops": len(seq),
        "ops_us": round(ops_us, 3),
        "outside_us": round(wall - ops_us, 3),
        "before_first_us": round(seq[0][2], 3) if seq else round(wall, 3),
        "after_last_us": round(c.time_range.end - last, 3) if seq else 0.0,
        "device_busy_us": round(union_us(mine), 3),
        "device_end_us": round(max((b for _, b in mine), default=c.time_range.start) - c.time_range.start, 3),
        "kernels": len(mine),
        "by_op": dict(sorted(by_op.items(), key=lambda kv: -kv[1][1])),
        "seq": seq,
    }


def forward_of(m: Any) -> float:
    """The µs of a module call's own `forward` (the first Python frame named forward below it)."""
    todo = list(m.cpu_children)
    while todo:
        e = todo.pop(0)
        if e.name.endswith(": forward") or e.name.startswith("nn.Module: "):
            return span(e)
        todo.extend(e.cpu_children)
    return 0.0


def module_breakdown(events: Any) -> dict:
    """One call under the Python tracer: the nn.Module calls' own time (call minus its forward)."""
    c = next(e for e in events if e.name == CALL)
    mods = []
    todo = list(c.cpu_children)
    while todo:
        e = todo.pop()
        if e.name.startswith("nn.Module: "):
            mods.append(e)
        todo.extend(e.cpu_children)
    by_class: dict[str, list] = {}
    for m in mods:
        cls = m.name[len("nn.Module: "):].rsplit("_", 1)[0]
        entry = by_class.setdefault(cls, [0, 0.0])
        entry[0] += 1
        entry[1] = round(entry[1] + span(m) - forward_of(m), 3)
    return {
        "calls": len(mods),
        "wall_us": round(span(c), 3),
        "ops_us": round(sum(span(o) for o in top_ops(c)), 3),
        "module_us": round(sum(v[1] for v in by_class.values()), 3),
        "by_class": by_class,
    }


def module_calls(torch: Any, call: Any, device: str, rounds: int) -> dict:
    """The host wall time of one call (least of `rounds`, started on an idle device) as PyTorch runs
    it and with every nn.Module call made a direct call of its `forward`, alternating (µs)."""
    module = torch.nn.Module
    original, count = module.__call__, [0]

    def direct(self: Any, *args: Any, **kwargs: Any) -> Any:
        count[0] += 1
        return self.forward(*args, **kwargs)

    def wall() -> float:
        sync(torch, device)
        t0 = time.perf_counter()
        call()
        t = time.perf_counter() - t0
        sync(torch, device)
        return t

    best = {"wall": float("inf"), "direct": float("inf")}
    with torch.no_grad():
        for _ in range(rounds):
            best["wall"] = min(best["wall"], wall())
            module.__call__ = direct
            try:
                count[0] = 0
                best["direct"] = min(best["direct"], wall())
            finally:
                module.__call__ = original
    return {
        "calls": count[0], "wall_us": round(best["wall"] * 1e6, 3), "direct_us": round(best["direct"] * 1e6, 3),
        "module_us": round((best["wall"] - best["direct"]) * 1e6, 3), "rounds": rounds,
    }


def host_floors(profile: Any, names: list[str]) -> dict:
    """Each op name priced as the host profile prices it (µs): the least floor of its overloads."""
    f = profile.floors
    out = {}
    for name in names:
        base = name.removeprefix("aten::")
        floors = [v for k, v in f.torch_eager_op_seconds.items() if k.split(".")[1] == base]
        out[name] = round(min(floors) * 1e6, 4) if floors else None
    return {
        "host": profile.name, "by_op": out, "kernel_us": round(f.torch_eager_kernel_seconds * 1e6, 4),
        "any_us": round(f.torch_eager_any_seconds * 1e6, 4),
        "empty_module_us": round((f.torch_empty_module_seconds or 0.0) * 1e6, 4),
    }


def measure_one(path: Path, device: str, reps: int, calls: int, host: Any, deadline: float) -> dict:
    import torch

    def measure() -> dict:
        model, inputs = build(path, device)
        call = lambda: model(*inputs)  # noqa: E731
        row: dict = {"measured": {"eager": eager_times(torch, call, device, reps)}}
        row["module_calls"] = module_calls(torch, call, device, max(reps, 10))  # before any profiler runs
        row["profile"] = breakdown(profiled(torch, call, device, calls, stack=False))
        if time.time() < deadline:  # the Python tracer is the slowest part: only with time left
            row["modules"] = module_breakdown(profiled(torch, call, device, 1, stack=True))
        if host is not None:
            row["floors"] = host_floors(host, list(row["profile"]["by_op"]))
        return row

    return row_or_error(measure, device)


def environment(device: str) -> dict:
    import platform

    import torch

    if device == "cuda":
        from solar.validate.device import environment as gpu_env

        return gpu_env()
    return {"gpu": "none (cpu)", "torch": torch.__version__, "cpu": platform.processor() or platform.machine()}


def host_profile(name: str | None, env: dict) -> Any:
    """The named host profile, else the committed one of this GPU's host (None: none matches)."""
    from solar.hardware.host import get_host

    name = name or next((h for g, h in HOSTS.items() if g in env.get("gpu", "")), None)
    return get_host(name) if name else None


def op_name(op: str) -> str:
    """`aten::conv2d` and `aten.conv2d.default` both -> conv2d (the profiler names no overload)."""
    return op.removeprefix("aten::").split(".")[1] if op.startswith("aten.") else op.removeprefix("aten::")


def joined(gap: dict, row: dict, floors: Any) -> dict:
    """One program's gap row against its eager_host row priced by `floors` (µs): the host wall
    time, what the profiled ops and the Python outside them took, the floors' total, and per op
    name [calls profiled, calls in the row, host µs per call in context, floor µs per call]."""
    from benchmarks.eager_host_join import host_calls
    from solar.backends.dispatch import host_floors

    calls = host_calls(row)
    own = host_floors(calls, floors)
    bare = [floors.floor(c.op, c.launches, c.rnn, c.features) for c in calls]
    prof = gap["profile"]
    by: dict[str, list[float]] = {}
    for name, (count, host_us, _) in prof["by_op"].items():
        entry = by.setdefault(op_name(name), [0, 0, 0.0, 0.0])
        entry[0] += count
        entry[2] += host_us
    for c, t in zip(calls, bare):
        entry = by.setdefault(op_name(c.op), [0, 0, 0.0, 0.0])
        entry[1] += 1
        entry[3] += t * 1e6
    per_call = {k: [n, m, h / n if n else 0.0, f / m if m else 0.0] for k, (n, m, h, f) in by.items()}
    short = lambda kv: kv[1][0] * (kv[1][2] - kv[1][3])  # noqa: E731  in-context time the floors miss
    mods, direct = gap.get("modules", {}), gap.get("module_calls", {})
    return {
        "problem": gap["problem"],
        "eager_us": gap["measured"]["eager"]["min_seconds"] * 1e6,
        "host_us": gap["measured"]["eager"]["host_seconds"] * 1e6,
        "wall_us": prof["wall_us"], "ops_us": prof["ops_us"], "outside_us": prof["outside_us"],
        "module_share": mods["module_us"] / mods["wall_us"] if mods.get("calls") else None,  # none seen: no share
        "module_calls": (direct["calls"], direct["module_us"]) if direct else None,
        "device_busy_us": prof["device_busy_us"],
        "floors_us": sum(own) * 1e6, "op_floors_us": sum(bare) * 1e6, "ops": (prof["ops"], len(calls)),
        "by_op": dict(sorted(per_call.items(), key=short, reverse=True)),
    }


def join_main(gap_path: Path, rows_path: Path, host: str | None) -> int:
    from benchmarks.rows import read_rows
    from solar.backends.dispatch import floors_from_host
    from solar.hardware.host import get_host

    profile = get_host(host)
    floors = floors_from_host(profile).scaled(1 / profile.margin)  # the least measured, before the margin
    rows = {r["problem"]: r for r in read_rows(rows_path) if "error" not in r}
    print(f"floors: {profile.name} / {profile.margin:g} (the least measured); µs")
    print("| problem | eager | host wall | profiled wall | ops | outside ops | module calls | floors | floors / host wall "
          "| device busy | ops profiled / traced | largest shortfalls (op: calls x (in context - floor)) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for g in read_rows(gap_path):
        row = rows.get(Path(g["problem"]).name)
        if "profile" not in g or row is None:
            continue
        j = joined(g, row, floors)
        worst = ", ".join(f"{k}: {n} x ({h:.1f} - {f:.1f})" for k, (n, m, h, f) in list(j["by_op"].items())[:3])
        share = "" if j["module_share"] is None else f"{j['module_share']:.0%} of tracer wall"
        if j["module_calls"]:
            n, us = j["module_calls"]
            share = f"{n} calls, {us:.0f} µs ({us / n if n else 0:.2f}/call)" + (f"; {share}" if share else "")
        print(f"| {j['problem']} | {j['eager_us']:.0f} | {j['host_us']:.0f} | {j['wall_us']:.0f} | {j['ops_us']:.0f} | "
              f"{j['outside_us']:.0f} | {share} | {j['floors_us']:.0f} | {j['floors_us'] / j['host_us']:.2f} | "
              f"{j['device_busy_us']:.0f} | {j['ops'][0]} / {j['ops'][1]} | {worst} |")
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--join"]:
        j = argparse.ArgumentParser(description="join gap rows with eager_host rows")
        j.add_argument("--join", type=Path, required=True)
        j.add_argument("--rows", type=Path, required=True)
        j.add_argument("--host", default=None)
        a = j.parse_args(argv)
        return join_main(a.join, a.rows, a.host)
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("files", nargs="+", type=Path)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--budget-s", type=float, default=240.0, help="stop starting files after this many seconds")
    p.add_argument("--reps", type=int, default=10, help="timed eager calls per file")
    p.add_argument("--calls", type=int, default=3, help="profiled calls per file (the least wall time is kept)")
    p.add_argument("--device", choices=("cuda", "cpu"), default=None, help="default: cuda when available")
    p.add_argument("--host", default=None, help="host profile to price the ops with (default: this GPU's host)")
    p.add_argument("--until", type=float, default=None, help=argparse.SUPPRESS)  # one file, in this process
    args = p.parse_args(argv)
    if args.until is not None:
        return one_file(args)
    start = time.time()
    name = file_name(2)
    files = [f for f in args.files if f.suffix == ".py"]
    with args.out.open("a") as out:
        for k, path in enumerate(files):
            now = time.time()
            end = start + args.budget_s
            row: dict = {"problem": name(path), "protocol": "sync_start"}
            if now > end - 2:
                row["skipped"] = "time budget"
            else:  # the Python-tracer profile only while this file's share of the budget lasts
                share = (end - now) / max(1, len(files) - k)
                row.update(in_own_process(path, args, min(end, now + share)))
            out.write(json.dumps(row) + "\n")
            out.flush()
            prof = row.get("profile", {})
            print(path.name, f"{time.time() - now:.1f}s", row.get("error", row.get("skipped", "")),
                  {k: prof.get(k) for k in ("wall_us", "ops", "ops_us", "outside_us", "device_busy_us")}
                  if prof else "", flush=True)
    return 0


def in_own_process(path: Path, args: argparse.Namespace, until: float) -> dict:
    """One file's row, measured in a fresh interpreter: a process that has run a profiler session
    dispatches slower afterwards (the next programs' host time up to 2.6x a clean process's on an
    H100 host; the module-call swap alone does not: benchmarks/eager_host_aftereffect.py), so no
    file is timed after another's profile."""
    cmd = [str(path), "--out", "-", "--reps", str(args.reps), "--calls", str(args.calls), "--until", repr(until)]
    cmd += [a for k, v in (("--device", args.device), ("--host", args.host)) if v for a in (k, v)]
    row = in_fresh_process(__file__, cmd)
    return row if isinstance(row, dict) else {"error": f"measuring process failed: {row}"}


def one_file(args: argparse.Namespace) -> int:
    """The row of `args.files[0]` (its environment included) on stdout, as one JSON line."""
    import torch

    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    env = environment(device)
    row = {"arch": env["gpu"], **measure_one(args.files[0], device, args.reps, args.calls,
                                             host_profile(args.host, env), args.until), "environment": env}
    print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
