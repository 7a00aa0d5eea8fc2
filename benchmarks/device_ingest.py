"""File one device call's results (benchmarks/device_session.sh, steps dispatch, floors, graphed) under
benchmarks/results/<host>/, each under the next free name, where benchmarks/host_profiles.py and the
oracle tests (tests/backends/test_eager_host_oracle.py) read them:

  dispatch_run<RUN>_<k>.json      -> dispatch_run<N>.json        (N: the next free, from 2)
  dispatch_shapes_start<RUN>.jsonl -> dispatch_shapes_start<RUN>.jsonl, each row's `run` renamed to its
                                     dispatch file's new name
  floors_run<RUN>.json            -> floors_run<N>.json
  eager_host_cal<RUN>.json        -> eager_host_cal<N>.json
  host_start<RUN>.txt             -> host_start<RUN>.txt
  graphed.jsonl                   -> <suite>_sync_start[_run<N>].jsonl per suite: dispatch/ (the
                                     dispatch-bound programs and the batch-1 variants), models/,
                                     level3/ (KernelBench), FAMILY:SCENARIO (benchmarks/hf_timed.py)

    python benchmarks/device_ingest.py OUT_DIR h100 --run 12 [--dry-run]

A file already there is never overwritten (the start number RUN names a machine start once); a step
the call did not run is skipped. Then: `python benchmarks/host_profiles.py`, and the rows of a suite
new to the folder with benchmarks/eager_host_rows.py.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.rows import read_rows  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"  # one folder per host
SUITES = {"dispatch": "dispatch_sync_start", "models": "models_sync_start", "level3": "kernelbench_level3_sync_start"}
NAMED = "hf_timed_sync_start"  # a timed transformers step, FAMILY:SCENARIO


def free(folder: Path, stem: str, first: int, taken: set[str]) -> str:
    """`stem` + the least N >= first whose file is neither in `folder` nor planned (`{}` marks N)."""
    n = first
    while (folder / stem.format(n)).exists() or stem.format(n) in taken:
        n += 1
    return stem.format(n)


def suite_of(problem: str) -> str:
    return SUITES[problem.split("/")[0]] if "/" in problem else NAMED


def plan(out: Path, folder: Path, run: str) -> list[tuple[str, str | list[dict]]]:
    """(file name in `folder`, the source file's name or the rows to write) for every result found."""
    steps: list[tuple[str, str | list[dict]]] = []
    taken: set[str] = set()

    def add(name: str, what: str | list[dict]) -> str:
        if (folder / name).exists() or name in taken:
            raise FileExistsError(f"{folder / name} exists; a start number names one machine start (pass another --run)")
        taken.add(name)
        steps.append((name, what))
        return name

    renamed = {}
    for src in sorted(out.glob(f"dispatch_run{run}_*.json")):
        renamed[src.stem] = Path(add(free(folder, "dispatch_run{}.json", 2, taken), src.name)).stem
    sweep = out / f"dispatch_shapes_start{run}.jsonl"
    if sweep.is_file():
        add(sweep.name, [{**r, "run": renamed.get(r.get("run", ""), r.get("run"))} for r in read_rows(sweep)])
    for stem in ("floors_run", "eager_host_cal"):
        if (out / f"{stem}{run}.json").is_file():
            add(free(folder, stem + "{}.json", 1, taken), f"{stem}{run}.json")
    if (out / f"host_start{run}.txt").is_file():
        add(f"host_start{run}.txt", f"host_start{run}.txt")
    if (out / "graphed.jsonl").is_file():
        by_suite: dict[str, list[dict]] = {}
        for row in read_rows(out / "graphed.jsonl"):
            by_suite.setdefault(suite_of(row["problem"]), []).append(row)
        for base, rows in by_suite.items():
            name = f"{base}.jsonl" if not (folder / f"{base}.jsonl").exists() else free(folder, base + "_run{}.jsonl", 2, taken)
            add(name, rows)
    return steps


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out", type=Path, help="the folder the device call's $OUT came back to")
    p.add_argument("host", help="the results folder: h100, h200, ...")
    p.add_argument("--run", required=True, help="the RUN the device call was given")
    p.add_argument("--results", type=Path, default=RESULTS)
    p.add_argument("--dry-run", action="store_true", help="print the plan, write nothing")
    a = p.parse_args(argv)
    folder = a.results / a.host
    if not a.out.is_dir() or not folder.is_dir():
        print(f"device_ingest: {a.out if not a.out.is_dir() else folder} is not a folder", file=sys.stderr)
        return 2
    try:
        steps = plan(a.out, folder, a.run)
    except FileExistsError as exc:
        print(f"device_ingest: {exc}", file=sys.stderr)
        return 2
    for name, what in steps:
        print(f"{what if isinstance(what, str) else f'{len(what)} rows'} -> {folder / name}")
        if a.dry_run:
            continue
        if isinstance(what, str):
            shutil.copyfile(a.out / what, folder / name)
        else:
            (folder / name).write_text("".join(json.dumps(r) + "\n" for r in what))
    if not steps:
        print(f"device_ingest: nothing of run {a.run} in {a.out}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
