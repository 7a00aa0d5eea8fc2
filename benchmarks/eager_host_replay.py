"""Where an eager call's host time goes beyond the dispatch floors, without a profiler: per
KernelBench-format file, in a fresh process, three host wall times of one call's work (µs, each the
least of `--reps` runs started on an idle device; docs/BOUNDS.md §17 *What remains*):

    model_us   the model's call as the user makes it (forward, modules, every op)
    replay_us  the same op calls replayed straight, in order, with the arguments they had (recorded
               by a TorchFunctionMode: every Python-level torch call, tensor methods and attribute
               reads included), without the user's Python or the nn.Module machinery
    tight_us   the sum over those calls of each call's own host time in a tight loop of itself at
               its real arguments (solar.validate.dispatch.host_slope: the slope of 16 against 96
               back-to-back calls), the most favourable way to issue it

so model - replay is the Python around the ops, replay - tight what the ops cost more in sequence
than each alone, hot; and tight against the host profile's floors (the ops' cheapest call at a tiny
shape) what an op's real arguments cost. One JSON line per file:

    {"problem", "arch", "calls", "model_us", "replay_us", "tight_us",
     "by_name": {name: [count, tight_us]},
     "by_class": {"name | argument class": [count, tight_us, least_us]}, "environment"}

(by_class: the calls with an argument class, solar.frontends.argclass, each class's least
call too: what a class floor must stay below)

    python benchmarks/eager_host_replay.py FILE... --out OUT.jsonl [--reps 10] [--budget-s 240]

--device cpu (or no CUDA) runs the same on the CPU (a smoke test: no device to wait for).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.eager_host_gap import build, environment, least_host_us, sync  # noqa: E402
from benchmarks.measure_files import file_name  # noqa: E402
from benchmarks.rows import in_fresh_process, row_or_error  # noqa: E402


def recorded(torch: Any, call: Any) -> list[tuple[Any, tuple, dict]]:
    """Every Python-level torch call of one `call()` (func, args, kwargs), in order; nested calls
    (inside a recorded one) are not recorded again."""
    from torch.overrides import TorchFunctionMode

    calls: list[tuple[Any, tuple, dict]] = []

    class Record(TorchFunctionMode):
        def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
            calls.append((func, args, kwargs or {}))
            return func(*args, **(kwargs or {}))

    with torch.no_grad(), Record():
        call()
    return calls


def name_of(func: Any) -> str:
    from torch.overrides import resolve_name

    try:
        return resolve_name(func) or getattr(func, "__name__", repr(func))
    except Exception:  # noqa: BLE001  (a name is only a label)
        return getattr(func, "__name__", repr(func))


def measure_one(path: Path, device: str, reps: int) -> dict:
    import torch

    from solar.frontends.argclass import features, text
    from solar.validate.dispatch import host_slope

    def measure() -> dict:
        model, inputs = build(path, device)
        call = lambda: model(*inputs)  # noqa: E731
        with torch.no_grad():
            least_host_us(torch, device, call, 3)  # warm-up: kernels loaded, plans made
            model_us = least_host_us(torch, device, call, reps)
            calls = recorded(torch, call)

            def replay() -> None:
                for func, args, kwargs in calls:
                    func(*args, **kwargs)

            replay_us = least_host_us(torch, device, replay, reps)
            by_name: dict[str, list] = {}
            by_class: dict[str, list] = {}
            for func, args, kwargs in calls:
                t = host_slope(lambda: func(*args, **kwargs), lambda: sync(torch, device), runs=5) * 1e6  # noqa: B023
                name = name_of(func)
                entry = by_name.setdefault(name, [0, 0.0])
                entry[0] += 1
                entry[1] += t
                tokens = features(name, args, kwargs)
                if tokens:
                    entry = by_class.setdefault(f"{name} | {text(tokens)}", [0, 0.0, t])
                    entry[0], entry[1], entry[2] = entry[0] + 1, entry[1] + t, min(entry[2], t)
        return {
            "calls": len(calls), "model_us": round(model_us, 3), "replay_us": round(replay_us, 3),
            "tight_us": round(sum(t for _, t in by_name.values()), 3),
            "by_name": {k: [n, round(t, 3)] for k, (n, t) in sorted(by_name.items(), key=lambda kv: -kv[1][1])},
            "by_class": {k: [n, round(t, 3), round(least, 3)] for k, (n, t, least) in sorted(by_class.items())},
        }

    return row_or_error(measure, device)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("files", nargs="+", type=Path)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--reps", type=int, default=10)
    p.add_argument("--budget-s", type=float, default=240.0, help="stop starting files after this many seconds")
    p.add_argument("--device", choices=("cuda", "cpu"), default=None, help="default: cuda when available")
    p.add_argument("--one", action="store_true", help=argparse.SUPPRESS)  # one file, in this process
    args = p.parse_args(argv)
    import torch

    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    if args.one:
        print(json.dumps({**measure_one(args.files[0], device, args.reps), "environment": environment(device)}))
        return 0
    end, name, arch = time.time() + args.budget_s, file_name(2), environment(device)["gpu"]
    with args.out.open("a") as out:
        for path in args.files:
            if time.time() > end:
                break
            got = in_fresh_process(__file__, [str(path), "--out", "-", "--reps", str(args.reps), "--device", device, "--one"])
            row = {"problem": name(path), "arch": arch,
                   **(got if isinstance(got, dict) else {"error": f"measuring process failed: {got}"})}
            out.write(json.dumps(row) + "\n")
            out.flush()
            print(path.name, row.get("error") or {k: row[k] for k in ("calls", "model_us", "replay_us", "tight_us")},
                  flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
