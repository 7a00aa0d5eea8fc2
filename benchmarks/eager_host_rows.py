"""The ingredients of the eager_host and recurrence levels for KernelBench-format files, computed on
the CPU and committed as data, so that a test can recompute both levels with any dispatch floors
(the calibrated spec's) and join them with the committed GPU timings
(tests/backends/test_eager_host_oracle.py). One JSON line per file:

    {"problem", "level", "arch", "fused", "cache_aware", "unfused",
     "front": device seconds no eager call accounts for,
     "calls": [[op, launches a kernel, unfused device seconds, chain index or -1,
                [indexes into "modules": the nn.Module calls it runs inside, outermost first],
                a recurrent op's [steps x layers x directions, hidden, batch] or []], ...],
     "modules": [[nn_module_stack key, module class], ...],
     "chains": [[steps, step seconds on the whole GPU, [chains feeding it]], ...], "sms"}

    python benchmarks/eager_host_rows.py DIR/level1 DIR/level2 DIR/level3 --out ROWS.jsonl [--arch H200-SXM]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def row(path: Path, arch: str) -> dict:
    from solar.api import eager_calls, load
    from solar.backends.assumptions import Assumptions
    from solar.backends.bounds import analyze_graph
    from solar.backends.compute import compute_time
    from solar.backends.recurrence import _depends, find_chains
    from solar.backends.work import graph_work, total
    from solar.hardware import get_spec
    from solar.lift import lift

    spec = get_spec(arch)
    loaded = load(str(path))
    graph = lift(loaded.program)
    a = Assumptions(tf32_flags=loaded.flags)
    analysis = analyze_graph(graph, spec, a)
    chains = find_chains(graph)
    works = graph_work(graph) if chains else {}
    needs = _depends(graph, chains) if chains else {}
    chain_of = {c.instance: k for k, c in enumerate(chains) if c.instance is not None}
    rows = {op.instance: op for op in analysis.ops if op.instance is not None}
    calls, used, modules = [], set(), {}
    for call in eager_calls(loaded) or ():
        op = rows.get(call.instance) if call.instance not in used else None
        if op is not None:
            used.add(op.instance)
        launches = op is not None and op.launch_seconds > 0
        stack = [modules.setdefault(m, len(modules)) for m in call.modules]
        calls.append([call.op, launches, 0.0 if op is None else op.seconds,
                      chain_of.get(call.instance, -1) if op is not None else -1, stack, list(call.rnn)])
    rest = [op.seconds for op in analysis.ops if op.instance is None or op.instance not in used]
    front = sum(rest) + analysis.unfused.seconds - sum(op.seconds for op in analysis.ops)
    return {
        "fused": analysis.fused.seconds,
        "cache_aware": analysis.cache_aware.seconds,
        "unfused": analysis.unfused.seconds,
        "front": max(0.0, front),
        "calls": calls,
        "modules": [list(m) for m in modules],
        "chains": [
            [c.steps,
             float(compute_time(total(works[i] for i in c.stmt_ids), spec, a).seconds) / c.steps,
             sorted(needs[k])]
            for k, c in enumerate(chains)
        ],
        "sms": spec.sm_count.value,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dirs", nargs="+", type=Path)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--arch", default="H200-SXM")
    p.add_argument("--skip", nargs="*", default=[], help="file names to leave out (too slow to analyse here)")
    args = p.parse_args(argv)
    from benchmarks.rows import read_rows

    done = {r["problem"] for r in read_rows(args.out, missing_ok=True)}
    with args.out.open("a") as f:
        for d in args.dirs:
            for path in sorted(d.glob("*.py")):
                if path.name in done or path.name in args.skip:
                    continue
                t0 = time.time()
                out: dict = {"problem": path.name, "level": d.name, "arch": args.arch}
                try:
                    out.update(row(path, args.arch))
                except Exception as exc:  # recorded, not fatal: the join leaves the file out
                    out["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}"
                f.write(json.dumps(out) + "\n")
                f.flush()
                print(path.name, f"{time.time() - t0:.1f}s", out.get("error", ""), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
