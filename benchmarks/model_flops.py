"""solar's contraction FLOPs against torch.utils.flop_counter.FlopCounterMode over the real-model corpus.

Usage:
    python benchmarks/model_flops.py [--shrunk] [-k SUBSTRING] [--timeout 900]
                                     [--out benchmarks/results/model_flops.json]

For every file in benchmarks/models/ (at full size, or its SHRUNK variant), one subprocess each:
``solar.analyze(path)`` (contraction FLOPs, wall seconds, peak RSS) and FlopCounterMode on fake
tensors (benchmarks/model_corpus.py). Prints a markdown table — model, solar FLOPs, FlopCounterMode
FLOPs, difference, reason (the file's FLOP_DIFF, or the error that stopped it) — and writes JSON.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.model_corpus import list_models, model_facts, write_shrunk  # noqa: E402

REASONS = {
    "none": "",
    "causal": "causal attention: solar counts the S(S+1)/2 kept scores, FlopCounterMode all S^2",
    "padding": "padded convolutions: solar counts only taps that touch real input",
    "moe": "MoE: solar counts the top-k experts per token; FlopCounterMode has no rule for _grouped_mm (0)",
    "int8": "FlopCounterMode has no rule for torch._weight_int8pack_mm (counts 0)",
}

_CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, {root!r})
import solar.frontends.torch
import solar
from benchmarks.model_corpus import flop_counter_flops
out = {{}}
start = time.perf_counter()
try:
    report = solar.analyze({path!r}, arch="H100-SXM")
    out["solar"] = report.totals.contraction_flops
    out["fused_seconds"] = report.bounds["fused"].seconds
except Exception as exc:
    out["error"] = (type(exc).__name__ + ": " + str(exc)).splitlines()[0][:300]
out["seconds"] = time.perf_counter() - start
out["rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
try:
    out["flop_counter"] = flop_counter_flops({path!r})
except Exception as exc:
    out["flop_counter_error"] = (type(exc).__name__ + ": " + str(exc)).splitlines()[0][:300]
print("RESULT " + json.dumps(out))
"""


def run_one(path: Path, timeout: float) -> dict:
    code = _CHILD.format(root=str(ROOT), path=str(path))
    try:
        proc = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, cwd=ROOT
        )
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s"}
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT ") :])
    return {"error": (proc.stderr.strip().splitlines() or ["no result"])[-1][:300]}


def _fmt(x: float | None) -> str:
    return "—" if x is None else f"{x / 1e9:,.1f} G"


def table(rows: list[dict]) -> str:
    lines = [
        "| model | solar contraction FLOPs | FlopCounterMode FLOPs | diff | reason |",
        "|---|---:|---:|---:|---|",
    ]
    for r in rows:
        s, f = r.get("solar"), r.get("flop_counter")
        diff = f"{(s - f) / f * 100:+.2f} %" if s is not None and f else "—"
        if "error" in r:
            why = f"not analysed: {r['error']}"
        elif s is not None and f and abs(s - f) <= 0.01 * f:
            why = ""
        else:
            why = REASONS.get(r["flop_diff"], r["flop_diff"])
        lines.append(f"| {r['model']} | {_fmt(s)} | {_fmt(f)} | {diff} | {why} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shrunk", action="store_true", help="each model's SHRUNK variant")
    ap.add_argument("-k", default="", help="only models whose file name contains one of these (a,b,...)")
    ap.add_argument("--timeout", type=float, default=900.0)
    ap.add_argument(
        "--out", type=Path, default=ROOT / "benchmarks" / "results" / "model_flops.json"
    )
    args = ap.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for path in list_models():
            if not any(k in path.name for k in args.k.split(",")):
                continue
            target = write_shrunk(path, Path(tmp)) if args.shrunk else path
            row = {
                "model": path.stem,
                "flop_diff": model_facts(path)["flop_diff"],
                **run_one(target, args.timeout),
            }
            print(json.dumps(row), file=sys.stderr, flush=True)
            rows.append(row)
    print(table(rows))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    env = {
        "date": _dt.date.today().isoformat(),
        "python": platform.python_version(),
        "machine": platform.machine(),
    }
    try:
        import torch

        env["torch"] = torch.__version__
    except ImportError:  # pragma: no cover
        pass
    args.out.write_text(
        json.dumps({"environment": env, "shrunk": args.shrunk, "rows": rows}, indent=2)
    )
    return 0 if all("error" not in r for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
