"""Scaling mode of benchmarks/bench_analyze.py: how solar's analysis time grows with the program.

Two families of programs, each at growing size, each size analysed in a fresh process (so that no
cache of an earlier size helps a later one and peak RSS is per size):
  llama     a Llama-shaped decoder stack (hf: config tests/fixtures/hf/llama2-7b.json, prefill of
            --seq tokens, batch 1) at 1, 2, 4, ... --max-layers layers;
  llama-hf  the same stack as `solar analyze hf:` runs it (solar.api.load_hf: from 4 layers on, 4
            traced and the rest stitched, solar/frontends/torch/stitch.py); its "lowering" is
            everything load_hf does beside export, decomposition and passes (both builds, the layer
            check, lowering, stitching), its backends include the per-layer programs;
  densenet  a DenseNet-style chain: layer k concatenates the input and the k earlier layers'
            outputs, then batch norm, ReLU and a 3x3 convolution; depth 2, 4, ... --max-depth.
Per size: CPU seconds of each stage (import, build, export, decomposition, lowering without the
passes, passes, lifting, the first GPU's backends + report, each further GPU's), peak RSS; then a
least-squares fit of log(seconds) against log(size) over the sizes >= --fit-from: the growth
exponent (1.0 = linear). Stage times come from wrapping the stage entry points (torch.export.export,
ExportedProgram.run_decompositions, solar.passes.optimize) for the duration of one run."""

from __future__ import annotations

import contextlib
import json
import math
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LLAMA_CONFIG = ROOT / "tests" / "fixtures" / "hf" / "llama2-7b.json"
ARCHS = ("H100-SXM", "H200-SXM", "A100-SXM4-80GB", "L4", "B200")
STAGES = ("import", "build", "export", "decomposition", "lowering", "passes", "lifting",
          "backends_first_gpu", "backends_per_further_gpu")
# CPU seconds of this process: the machine this runs on is shared, and wall time there measures the
# other jobs as much as solar (the analysis is single-threaded; wall seconds are recorded too).
CLOCK = time.process_time
ANALYSIS = ("export", "decomposition", "lowering", "passes", "lifting", "backends_first_gpu")


@contextlib.contextmanager
def _timed(owner: object, attr: str, into: dict, stage: str):
    """Add the wall seconds of every call of owner.attr to into[stage] while the block runs."""
    original = getattr(owner, attr)

    def wrapper(*args, **kwargs):
        t0 = CLOCK()
        try:
            return original(*args, **kwargs)
        finally:
            into[stage] = into.get(stage, 0.0) + CLOCK() - t0

    setattr(owner, attr, wrapper)
    try:
        yield
    finally:
        setattr(owner, attr, original)


def _densenet(depth: int):
    import torch
    from torch import nn

    class Chain(nn.Module):
        def __init__(self, depth: int, channels: int = 16, growth: int = 8) -> None:
            super().__init__()
            self.layers = nn.ModuleList(
                nn.Sequential(
                    nn.BatchNorm2d(channels + k * growth),
                    nn.ReLU(),
                    nn.Conv2d(channels + k * growth, growth, 3, padding=1, bias=False),
                )
                for k in range(depth)
            )

        def forward(self, x):
            features = [x]
            for layer in self.layers:
                features.append(layer(torch.cat(features, 1)))
            return torch.cat(features, 1)

    return Chain(depth).eval(), (torch.randn(1, 16, 32, 32),)


@contextlib.contextmanager
def _stage_clocks(times: dict):
    """Time torch.export, run_decompositions and solar.passes.optimize into `times` while the block runs."""
    import torch

    import solar.passes

    with (
        _timed(torch.export, "export", times, "export"),
        _timed(torch.export.ExportedProgram, "run_decompositions", times, "decomposition"),
        _timed(solar.passes, "optimize", times, "passes"),
    ):
        yield


def run_one(family: str, size: int, seq: int, archs: tuple[str, ...]) -> dict:
    """Analyse one program of `family` at `size`, in this process; the stage times and peak RSS."""
    times: dict[str, float] = {}
    wall0 = time.perf_counter()
    t0 = CLOCK()
    import torch  # noqa: F401

    import solar.passes  # noqa: F401
    from solar.api import Loaded
    from solar.backends import bounds  # noqa: F401  (scipy's LP solver)
    from solar.frontends.torch import hf, lower_traced, trace_module
    from solar.hardware import list_specs

    list_specs()  # the spec files, read once per process
    if family.startswith("llama"):
        # transformers and its Llama code (imported lazily by a build): import time, not build time
        import transformers.models.llama.modeling_llama  # noqa: F401
    times["import"] = CLOCK() - t0
    if family == "llama-hf":
        return _analysed(family, size, _load_hf(size, seq, times), archs, times, wall0)
    t0 = CLOCK()
    if family == "llama":
        built = hf.build(str(LLAMA_CONFIG), hf.Scenario("prefill", 1, seq), layers=size)
        module, inputs = built.module, built.inputs
    else:
        module, inputs = _densenet(size)
    times["build"] = CLOCK() - t0
    with _stage_clocks(times):
        traced = trace_module(module, inputs, mode="eval")
        t0 = CLOCK()
        program = lower_traced(traced)
        times["lowering"] = CLOCK() - t0 - times.get("passes", 0.0)
    return _analysed(family, size, Loaded(program, traced.flags, None, traced), archs, times, wall0)


def _load_hf(size: int, seq: int, times: dict):
    """The llama-hf step of `size` layers through solar.api.load_hf (shared from 4 layers on)."""
    import tempfile

    from solar.api import load_hf
    from solar.frontends.torch import hf

    config = json.loads(LLAMA_CONFIG.read_text())
    config["num_hidden_layers"] = size
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "config.json"
        path.write_text(json.dumps(config))
        t0 = CLOCK()
        with _stage_clocks(times):
            loaded = load_hf(f"hf:{path}", hf.Scenario("prefill", 1, seq))
        traced = sum(times.get(k, 0.0) for k in ("export", "decomposition", "passes"))
        times["lowering"] = CLOCK() - t0 - traced
    return loaded


def _analysed(family: str, size: int, loaded, archs: tuple[str, ...], times: dict, wall0: float) -> dict:
    """Lift `loaded` and run the backends on each of `archs` (the first timed apart, the others
    averaged); the row of `run_one`."""
    from benchmarks.bench_analyze import peak_rss_mib
    from solar.api import analyze_loaded

    t0 = CLOCK()
    graph = loaded.graph
    times["lifting"] = CLOCK() - t0
    per_gpu = []
    for arch in archs:
        t0 = CLOCK()
        analyze_loaded(loaded, arch)
        per_gpu.append(CLOCK() - t0)
    if per_gpu:
        times["backends_first_gpu"] = per_gpu[0]
    further = per_gpu[1:]
    times["backends_per_further_gpu"] = sum(further) / len(further) if further else 0.0
    times["analysis"] = sum(times.get(s, 0.0) for s in ANALYSIS)
    return {
        "family": family, "size": size, "statements": len(loaded.program.stmts),
        "tensors": len(loaded.program.tensors), "nodes": len(graph), "seconds": times,
        "wall_seconds": time.perf_counter() - wall0, "peak_rss_mib": peak_rss_mib(),
    }


def growth_exponent(points: list[tuple[int, float]]) -> float | None:
    """Least-squares slope of log(seconds) on log(size); None with fewer than two sizes."""
    pts = [(math.log(n), math.log(t)) for n, t in points if n > 0 and t > 0]
    if len(pts) < 2:
        return None
    mx = sum(x for x, _ in pts) / len(pts)
    my = sum(y for _, y in pts) / len(pts)
    sxx = sum((x - mx) ** 2 for x, _ in pts)
    return sum((x - mx) * (y - my) for x, y in pts) / sxx if sxx else None


def sizes(limit: int, start: int) -> list[int]:
    out, n = [], start
    while n <= limit:
        out.append(n)
        n *= 2
    return out


def run(families: list[str], max_layers: int, max_depth: int, seq: int, fit_from: int,
        archs: tuple[str, ...]) -> dict:
    """Every size of every family in its own process; rows, fitted exponents, printed tables."""
    rows = []
    for family in families:
        todo = sizes(max_layers, 1) if family.startswith("llama") else sizes(max_depth, 2)
        for size in todo:
            cmd = [sys.executable, str(Path(__file__)), family, str(size), str(seq), ",".join(archs)]
            out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
            if out.returncode != 0:
                tail = (out.stderr.strip().splitlines() or ["(no output)"])[-1]
                rows.append({"family": family, "size": size, "error": tail})
                print(f"{family} {size}: ERROR {tail}", flush=True)
                continue
            row = json.loads(out.stdout.strip().splitlines()[-1])
            rows.append(row)
            s = row["seconds"]
            print(
                f"{family:>8} {size:>3}: {row['statements']:>5} stmts  "
                + "  ".join(f"{k} {s.get(k, 0.0):.2f}" for k in STAGES)
                + f"  analysis {s['analysis']:.2f} s  peak RSS {row['peak_rss_mib']:.0f} MiB",
                flush=True,
            )
    fits = {}
    for family in families:
        ok = [r for r in rows if r["family"] == family and "error" not in r and r["size"] >= fit_from]
        fits[family] = {
            stage: growth_exponent([(r["size"], r["seconds"].get(stage, 0.0)) for r in ok])
            for stage in (*STAGES[2:], "analysis")
        }
        shown = ", ".join(f"{k} {v:.2f}" for k, v in fits[family].items() if v is not None)
        print(f"growth exponent of {family} (sizes >= {fit_from}): {shown}")
    return {"rows": rows, "growth_exponents": fits, "fit_from": fit_from, "archs": list(archs)}


if __name__ == "__main__":  # one size, in a fresh process (called by `run`)
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 20000))
    family, size, seq, archs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    print(json.dumps(run_one(family, size, seq, tuple(archs.split(",")))))
