"""Per-stage wall time of solar's frontend side on one program: build, torch.export, decompositions,
lowering, IR passes (and peak RSS).

Usage:
    python benchmarks/profile_frontend.py hf:tests/fixtures/hf/llama2-7b.json --seq 4096 [--layers 8]
    python benchmarks/profile_frontend.py /work/main/.kb/level3/16_DenseNet201.py
    python benchmarks/profile_frontend.py FILE --cprofile 30      # also the 30 costliest functions
    python benchmarks/profile_frontend.py FILE --retrace          # without the direct lowering

The stages are the ones `solar.api.load` runs (loader.trace_file / trace_module, then
convert.convert_returning with and without the passes), timed one by one; `--repeat` takes the
best of several runs of the lowering and pass stages (their inputs do not change)."""

from __future__ import annotations

import argparse
import cProfile
import pstats
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


class Stages:
    """Wall and CPU seconds per stage (CPU time is the steadier number on a shared machine)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.cpu: dict[str, float] = {}

    def time(self, name: str, fn, *args):
        t0, c0 = time.perf_counter(), time.process_time()
        out = fn(*args)
        self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - t0
        self.cpu[name] = self.cpu.get(name, 0.0) + time.process_time() - c0
        return out


def _built(spec: str, seq: int, batch: int, layers: int | None):
    """(module, inputs, name, source file) of the program to profile, built without allocation."""
    if spec.startswith("hf:"):
        from solar.frontends.torch import hf

        b = hf.build(spec[3:], hf.Scenario("prefill", batch, seq, 0), layers=layers)
        return b.module.eval(), b.inputs, b.name, None
    from solar.frontends.files import import_model_file
    from solar.frontends.torch.loader import construct

    path = str(Path(spec).resolve())
    model, inputs, _ = construct(import_model_file(path), path)
    return model, inputs, Path(spec).stem, path


def _trace(model, inputs, path, st: Stages, decomposition=None):
    """What loader.export_decomposed does, stage by stage."""
    import warnings

    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode

    from solar.frontends.torch import Decomposition, loader
    from solar.frontends.torch.fake import fakeify, fakeify_module

    with FakeTensorMode(allow_non_fake_inputs=True) as fake:
        model = st.time("fakeify", fakeify_module, model, fake)
        inputs = tuple(fakeify(x, fake) for x in inputs)
        with torch.no_grad(), warnings.catch_warnings(), loader.Redirect(), loader.CpuFunctions(copy=False):
            warnings.simplefilter("ignore")
            ep = st.time("export", lambda: torch.export.export(model, inputs, strict=False))
            # direct where it can, else the re-trace
            ep, _ = st.time("decompose", loader.decompose, ep, decomposition or Decomposition.DIRECT)
    return ep


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("spec", help="hf:<config.json> or a KernelBench-format model file")
    ap.add_argument("--seq", type=int, default=2048)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--layers", type=int, default=None, help="hf: override num_hidden_layers")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--retrace", action="store_true", help="always run_decompositions (no direct lowering)")
    ap.add_argument("--cprofile", type=int, default=0, metavar="N", help="print the N costliest functions")
    args = ap.parse_args(argv)

    st = Stages()
    t0 = time.perf_counter()
    import torch  # noqa: F401

    import solar.api  # noqa: F401
    from solar.frontends.torch import Decomposition, Traced, convert, loader
    from solar.passes import optimize

    decomposition = Decomposition.RETRACE if args.retrace else Decomposition.DIRECT

    if args.spec.startswith("hf:"):  # the imports transformers makes on first use, and torch's lazy ones
        m, x, _, _ = _built(args.spec, 8, 1, 0)
        _trace(m, x, None, Stages())
    st.seconds["imports"] = time.perf_counter() - t0
    st.cpu["imports"] = time.process_time()
    prof = cProfile.Profile() if args.cprofile else None
    if prof:
        prof.enable()
    model, inputs, name, path = st.time("build", _built, args.spec, args.seq, args.batch, args.layers)
    ep = _trace(model, inputs, path, st, decomposition)
    traced = Traced(ep, name, path, loader.framework_flags())
    nodes = sum(1 for n in ep.graph.nodes if n.op == "call_function")
    for _ in range(args.repeat):  # the best of the runs, by CPU time
        one = Stages()
        raw, _, _ = one.time("lower", convert.convert_returning, traced, False)
        program = one.time("passes", optimize, raw)
        for k in ("lower", "passes"):
            if one.cpu[k] < st.cpu.get(k, float("inf")):
                st.seconds[k], st.cpu[k] = one.seconds[k], one.cpu[k]
    if prof:
        prof.disable()
    after = sum(v for k, v in st.seconds.items() if k != "imports")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{name}: {nodes} core-ATen nodes, {len(raw.stmts)} statements lowered, {len(program.stmts)} after passes")
    print(f"  {'stage':<13} {'wall':>8}   {'cpu':>8}")
    for k, v in st.seconds.items():
        print(f"  {k:<13} {v:8.2f} s {st.cpu.get(k, float('nan')):8.2f} s")
    cpu = sum(v for k, v in st.cpu.items() if k != "imports")
    print(f"  {'total':<13} {after:8.2f} s {cpu:8.2f} s after imports; peak RSS {rss:.0f} MiB")
    if prof:
        pstats.Stats(prof).sort_stats("cumulative").print_stats(args.cprofile)
    return 0


if __name__ == "__main__":
    sys.exit(main())
