"""CPU seconds per stage of an `hf:` serving step as `solar.api.load_hf` + `analyze_loaded` run it
with structure sharing (solar.frontends.torch.stitch): imports, the full model's outline (built on
the meta device, hf.outline) and the shortened model built for real, the layer check (the config's modeling module, which transformers imports
lazily on the first build, counts as an import), tracing TRACED layers, lowering + passes, stitching to N layers
(and to TRACED, TRACED + 1 for the per-layer bound), lifting, and the backends on one GPU; and the
peak RSS.

Usage:
    python benchmarks/bench_hf.py tests/fixtures/hf/llama2-7b.json prefill 4096
    python benchmarks/bench_hf.py tests/fixtures/hf/llama2-70b.json decode 4096   # context C

CPU seconds are the steady number on a shared machine; the totals are checked against
`load_hf` (the same program) by tests/frontends/test_stitch.py, not here."""

from __future__ import annotations

import importlib
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def main(argv: list[str]) -> int:
    if len(argv) != 3 or argv[1] not in ("prefill", "decode"):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    c0 = time.process_time()
    import transformers  # noqa: F401

    from benchmarks.bench_analyze import peak_rss_mib
    from solar.api import Loaded, analyze_loaded
    from solar.backends import bounds  # noqa: F401
    from solar.frontends.torch import hf, trace_module
    from solar.frontends.torch.stitch import TRACED, lower_shared

    spec, kind, n = argv[0], argv[1], int(argv[2])
    model_type = hf.read_config(spec).model_type  # its modeling module is imported lazily: import it here
    importlib.import_module(f"transformers.models.{model_type}.modeling_{model_type}")
    imports = time.process_time() - c0
    step = hf.Scenario("prefill", 1, n, 0) if kind == "prefill" else hf.Scenario("decode", 1, 1, n)
    stages: dict[str, float] = {}

    def timed(name, fn, *args):
        c = time.process_time()
        out = fn(*args)
        stages[name] = stages.get(name, 0.0) + time.process_time() - c
        return out

    c1 = time.process_time()
    full = timed("outline of N layers", lambda: hf.outline(spec, step) or hf.build(spec, step))
    small = timed(f"build {TRACED}", hf.build, spec, step, TRACED)
    why = timed("layer check", hf.unshared, full, small)
    if why is not None:
        print(f"not shared: {why}", file=sys.stderr)
        return 1
    traced = timed(f"trace {TRACED} layers", trace_module, small.module, small.inputs, None, "eval")
    shared = timed("lower + passes", lower_shared, traced, hf.layer_list(small)[0])
    program, stitched = timed("stitch to N", shared.at, full.layers)
    parts = timed(f"stitch to {TRACED}, {TRACED + 1}", lambda: [shared.at(k) for k in (TRACED, TRACED + 1)])
    loaded = Loaded(program, traced.flags, None, stitched)
    timed("lifting", lambda: loaded.graph)
    report = timed("backends (1 GPU)", analyze_loaded, loaded, "H200-SXM")
    timed("per-layer programs", lambda: [analyze_loaded(Loaded(p, traced.flags, None, t), "H200-SXM") for p, t in parts])
    total = time.process_time() - c1
    peak = peak_rss_mib()
    print(f"{Path(spec).stem} {kind} {n}: {full.layers} layers, {len(program.stmts)} statements, "
          f"fused {report.bounds['fused'].seconds * 1e3:.3f} ms")
    print(f"  imports {imports:.2f} CPU s")
    for name, seconds in stages.items():
        print(f"  {name:<22} {seconds:.2f}")
    print(f"  total after imports    {total:.2f} CPU s; peak RSS {peak:.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
