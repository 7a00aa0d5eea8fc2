"""Time KernelBench-format files on the CUDA GPU at hand, without analysing them there (the bounds
are computed on any CPU from the committed rows: benchmarks/join_measured.py). Each file is built
on the GPU as `solar validate` builds it and timed the same way (solar.validate.run.measure: L2
flushed before every call, CUDA events, min and median), eagerly and, with --compile, under
torch.compile. One JSON line per file, in the shape `solar kernelbench --measured` reads.

    python benchmarks/measure_files.py FILE|FAMILY:SCENARIO... --out OUT.jsonl [--compile] [--reps 30] [--budget-s 500]
        [--warm-jobs N] [--name-depth 2]

--warm-jobs N first compiles every file under torch.compile in N parallel processes (untimed, one
subprocess per file, --warm-timeout each), filling torch's on-disk compile caches (FX graph, AOT
autograd, Triton kernels); the timed pass then runs one file at a time as before, and its compile
step is mostly cache hits. The GPU is never shared while a time is taken: warming ends first.
--name-depth 2 names a row `level1/1_Name.py` (the parent folder and the file). A FILE may instead
name a step of the timed transformers subset, `FAMILY:SCENARIO` (benchmarks/hf_timed.py NAMES).
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.rows import error_line  # noqa: E402


def build_on_gpu(path: Path) -> tuple[Any, list]:
    """The model and inputs of a KernelBench-format file (solar.validate.run.build_on_gpu) or of a
    timed transformers step named FAMILY:SCENARIO (benchmarks/hf_timed.py), made on the GPU."""
    from solar.validate.device import require_cuda
    from solar.validate.run import build_on_gpu as build_file

    if path.is_file():
        return build_file(path)
    from benchmarks.hf_timed import program  # transformers: only for a named step

    torch = require_cuda()
    torch.manual_seed(0)
    with torch.device("cuda"):
        return program(str(path))


def measure_one(path: Path, compile_: bool, reps: int, then: Callable[[Any, list], dict] | None = None) -> dict:
    """The file's row: its eager (and compiled) times; `then(model, inputs)` adds to it (the
    model and inputs on the GPU), e.g. per-op times (benchmarks/measure_ops.py)."""
    import torch

    from solar.validate.run import measure

    try:
        model, inputs = build_on_gpu(path)
        measured, error = measure(model, inputs, compile_, reps)
        row: dict = {"measured": {m: t.model_dump() for m, t in measured.items()}}
        if error:
            row["error"] = error
        if then is not None:
            row.update(then(model, inputs))
        return row
    except Exception as exc:  # a model that does not fit or fails to build is a row
        return {"error": error_line(exc)}
    finally:
        model = inputs = None  # noqa: F841
        gc.collect()
        torch.cuda.empty_cache()


def warm_one(path: Path) -> None:
    """Compile and run the file's model once under torch.compile (no timing): fills the caches."""
    import torch

    from solar.validate.run import to_device

    model, inputs = build_on_gpu(path)
    compiled = torch.compile(model.cuda())
    with torch.no_grad():  # as time_cuda runs it: the graph compiled for no_grad is the one reused
        compiled(*to_device(list(inputs), torch))
    torch.cuda.synchronize()


def warm(paths: list[Path], jobs: int, timeout_s: float, deadline: float) -> None:
    """warm_one for every file, `jobs` subprocesses at a time; failures are only printed."""
    import subprocess
    from concurrent.futures import ThreadPoolExecutor

    def run(path: Path) -> str:
        left = deadline - time.time()
        if left <= 0:
            return f"{path.name}: warm skipped (time budget)"
        try:
            done = subprocess.run([sys.executable, __file__, "--warm-only", str(path)],
                                  capture_output=True, text=True, timeout=min(timeout_s, left), check=False)
            return f"{path.name}: warm rc={done.returncode}"
        except subprocess.TimeoutExpired:
            return f"{path.name}: warm timed out"

    with ThreadPoolExecutor(jobs) as pool:
        for line in pool.map(run, paths):
            print(line, flush=True)


def write_rows(files: list[Path], out: Path, deadline: float, measure: Callable[[Path], dict],
               show: Callable[[Path, dict], tuple], name: Callable[[Path], str], **extra: Any) -> None:
    """Append one JSON line per file to `out`, flushed as it goes: {problem: name(path), arch,
    **extra}, then measure(path)'s fields (past `deadline`: skipped) and the environment; print
    show(path, row) for each."""
    from solar.validate.device import environment

    env = environment()
    with out.open("a") as f:
        for path in files:
            row: dict = {"problem": name(path), "arch": env["gpu"], **extra}
            row.update({"skipped": "time budget"} if time.time() > deadline else measure(path))
            row["environment"] = env
            f.write(json.dumps(row) + "\n")
            f.flush()
            print(*show(path, row), flush=True)


def file_name(depth: int) -> Callable[[Path], str]:
    """A file's problem name: its name (depth 1) or folder/name (depth 2; a name with no folder, such
    as a timed step's FAMILY:SCENARIO, stays as it is)."""
    return lambda path: f"{path.parent.name}/{path.name}" if depth == 2 and path.parent.name else path.name


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--warm-only"]:
        warm_one(Path(argv[1]))
        return 0
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("files", nargs="+", type=Path)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--compile", action="store_true")
    p.add_argument("--reps", type=int, default=30)
    p.add_argument("--budget-s", type=float, default=500.0)
    p.add_argument("--warm-jobs", type=int, default=0)
    p.add_argument("--warm-timeout", type=float, default=180.0)
    p.add_argument("--warm-budget-s", type=float, default=240.0)
    p.add_argument("--name-depth", type=int, choices=(1, 2), default=1)
    args = p.parse_args(argv)
    start = time.time()
    if args.compile and args.warm_jobs > 0:
        warm(args.files, args.warm_jobs, args.warm_timeout, start + args.warm_budget_s)
        print(f"warmed in {time.time() - start:.0f} s", flush=True)
    write_rows(
        args.files, args.out, start + args.budget_s, lambda path: measure_one(path, args.compile, args.reps),
        lambda path, row: (path.name, {m: t["min_seconds"] for m, t in row.get("measured", {}).items()}, row.get("error", "")),
        file_name(args.name_depth),
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
