"""The ingredients of the eager_host and recurrence levels for KernelBench-format files and the timed
transformers steps (benchmarks/hf_timed.py), computed on the CPU and committed as data, so that a
test can recompute both levels with any dispatch floors (the calibrated spec's) and join them with
the committed GPU timings (tests/backends/test_eager_host_oracle.py). One JSON line per file:

    {"problem", "level", "arch", "fused", "cache_aware", "unfused",
     "front": device seconds no eager call accounts for,
     "calls": [[op, launches a kernel, unfused device seconds, chain index or -1,
                [indexes into "modules": the nn.Module calls it runs inside, outermost first],
                a recurrent op's [steps x layers x directions, hidden, batch] or [],
                its argument class (solar.frontends.argclass tokens, space-separated)], ...],
     "modules": [[nn_module_stack key, module class], ...],
     "chains": [[steps, step seconds on the whole GPU, [chains feeding it]], ...], "sms"}

    python benchmarks/eager_host_rows.py DIR/level1 DIR/level2 DIR/level3 --out ROWS.jsonl [--arch H200-SXM]
    python benchmarks/eager_host_rows.py llama3_8b:decode ... --out ROWS.jsonl --arch H100-SXM

An argument that is no folder names a timed step, FAMILY:SCENARIO (benchmarks/hf_timed.py NAMES; `all`:
every one), built as a file is (nothing large allocated); its row is named as its timings are, at
level NAMED_LEVEL.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

NAMED_LEVEL = "hf_timed"  # the level of a timed transformers step's row


def loaded_of(path: Path):
    """The loaded program of a KernelBench-format file, or of the timed transformers step its name
    names (FAMILY:SCENARIO), built under the loader's unallocated mode (benchmarks/join_measured.py)."""
    from solar.api import load

    if path.is_file():
        return load(str(path))
    from benchmarks.hf_timed import program
    from solar.frontends.torch.loader import building

    with building():
        model, inputs = program(path.name)
    return load(model, inputs)


def sources(args: list[str]) -> list[tuple[Path, str]]:
    """(file or step name, level) of every argument: a folder's *.py files at the folder's name, a
    step name (or `all`: every step) at NAMED_LEVEL."""
    out = []
    for a in args:
        if Path(a).is_dir():
            out += [(path, Path(a).name) for path in sorted(Path(a).glob("*.py"))]
        else:
            from benchmarks.hf_timed import NAMES

            out += [(Path(name), NAMED_LEVEL) for name in (NAMES if a == "all" else (a,))]
    return out


def row(path: Path, arch: str) -> dict:
    from solar.api import eager_calls
    from solar.backends.assumptions import Assumptions
    from solar.backends.bounds import analyze_graph
    from solar.backends.compute import compute_time
    from solar.backends.recurrence import _depends, find_chains
    from solar.backends.work import graph_work, total
    from solar.frontends.argclass import text
    from solar.hardware import get_spec
    from solar.lift import lift

    spec = get_spec(arch)
    loaded = loaded_of(path)
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
                      chain_of.get(call.instance, -1) if op is not None else -1, stack, list(call.rnn),
                      text(call.features)])
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
    p.add_argument("dirs", nargs="+", help="KernelBench-format folders or timed step names (FAMILY:SCENARIO, all)")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--arch", default="H200-SXM")
    p.add_argument("--skip", nargs="*", default=[], help="file names to leave out (too slow to analyse here)")
    args = p.parse_args(argv)
    from benchmarks.rows import read_rows

    done = {r["problem"] for r in read_rows(args.out, missing_ok=True)}
    with args.out.open("a") as f:
        for path, level in sources(args.dirs):
            if path.name in done or path.name in args.skip:
                continue
            t0 = time.time()
            out: dict = {"problem": path.name, "level": level, "arch": args.arch}
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
