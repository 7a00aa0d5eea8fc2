"""Join the committed eager_host ingredients (benchmarks/eager_host_rows.py) with the committed eager
timings of the same KernelBench files, recomputing the eager_host and recurrence levels with the
calibrated spec's dispatch floors; list violations (a fastest eager run below a bound) and the
median bound / measured per KernelBench level. Exit 1 on any violation. A measured row timed with a
synchronised start ("protocol": "sync_start", benchmarks/eager_host_measure.py) is joined with head
start 0; the others with the calibrated one.

    python benchmarks/eager_host_join.py [--rows R.jsonl] [--measured M.jsonl] [--spec SPEC.yaml] [--dispatch-us X]
        [--table]   (--table: one line per problem)
"""

from __future__ import annotations

import argparse
import statistics
import sys
from dataclasses import dataclass, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.rows import RESULTS, read_rows  # noqa: E402

ROWS = RESULTS / "kernelbench_eager_host_rows.jsonl"
MEASURED = RESULTS / "kernelbench_eager.jsonl"
SYNCED = RESULTS / "kernelbench_level3_sync_start.jsonl"
CORPUS_ROWS = RESULTS / "models_eager_host_rows.jsonl"  # the model corpus (benchmarks/models), against
CORPUS = RESULTS / "models.jsonl"  # its eager timings


@dataclass(frozen=True)
class Joined:
    problem: str
    level: str
    measured_seconds: float  # fastest eager run
    bounds: dict  # level -> seconds (unfused, recurrence, eager_host)
    detail: dict  # fused, eager ops, host total A_n, device total, head start, chains

    @property
    def kind(self) -> str:
        """Which term sets the eager_host bound: host (the host floors less the head start exceed
        the device floors) or device; "recurrent" added where the program has in-order loops."""
        d = self.detail
        kind = "host" if d["host"] - d["lead"] > d["device"] else "device"
        return f"{kind}, recurrent" if d["chains"] else kind


def host_calls(row: dict) -> list:
    """The row's calls as solar.backends.dispatch.HostCall (rows without module data: none)."""
    from solar.backends.dispatch import HostCall

    modules = [tuple(m) for m in row.get("modules", [])]
    return [HostCall(c[0], c[1], tuple(modules[k] for k in c[4]) if len(c) > 4 else (), tuple(c[5]) if len(c) > 5 else ())
            for c in row["calls"]]


def recompute(row: dict, floors, sync_seconds: float) -> dict[str, float]:
    """unfused, recurrence and eager_host of one committed row with these floors."""
    from solar.backends.dispatch import host_floors, pipeline_makespan
    from solar.backends.recurrence import critical_path

    chains = row["chains"]
    path: list[float] = []
    best = 0.0
    if chains:
        _, path, best, _ = critical_path(
            [c[0] for c in chains], [c[1] for c in chains], [set(c[2]) for c in chains], row["sms"], sync_seconds
        )
    host = [0.0] + host_floors(host_calls(row), floors)
    device = [row["front"]] + [max(c[2], path[c[3]]) if c[3] >= 0 else c[2] for c in row["calls"]]
    out = {
        "unfused": row["unfused"],
        "eager_host": pipeline_makespan(host, device, floors.lead_seconds),
    }
    if chains:
        out["recurrence"] = max(row["cache_aware"], best)
    return out


def detail(row: dict, floors) -> dict:
    from solar.backends.dispatch import host_floors

    return {"fused": row["fused"], "ops": len(row["calls"]), "host": sum(host_floors(host_calls(row), floors)),
            "device": row["front"] + sum(c[2] for c in row["calls"]), "lead": floors.lead_seconds,
            "chains": len(row["chains"])}


def join(rows_path: Path = ROWS, measured_path: Path = MEASURED, spec_path: Path | None = None,
         dispatch_us: float | None = None) -> list[Joined]:
    from solar.backends.dispatch import floors_from_spec, floors_given
    from solar.backends.recurrence import GRID_SYNC_MARGIN
    from solar.hardware.spec import calibrated_spec, load_spec_file

    spec = load_spec_file(spec_path) if spec_path else calibrated_spec("H200-SXM")
    dispatch = spec.dispatch if spec is not None else None
    if dispatch_us is not None:
        floors = floors_given(dispatch_us * 1e-6)
    elif dispatch is not None:
        floors = floors_from_spec(spec.name, dispatch)
    else:
        raise SystemExit("no dispatch floors: the calibrated spec has no `dispatch` section; pass --dispatch-us")
    sync = GRID_SYNC_MARGIN * dispatch.grid_sync_seconds if dispatch is not None else 0.0
    measured: dict[str, dict] = {}  # per problem, its fastest eager row (a file may time one twice)
    for r in read_rows(measured_path):
        t = r.get("measured", {}).get("eager")
        if t is not None and (r["problem"] not in measured
                              or t["min_seconds"] < measured[r["problem"]]["measured"]["eager"]["min_seconds"]):
            measured[r["problem"]] = r
    synced = replace(floors, lead_seconds=0.0)  # the host issues nothing before the start event
    out = []
    for row in read_rows(rows_path):
        key = f"{row['level']}/{row['problem']}"  # measured rows are named level/file
        key = key if key in measured else row["problem"]
        if "error" in row or key not in measured:
            continue
        m = measured[key]
        f = synced if m.get("protocol") == "sync_start" else floors
        out.append(Joined(row["problem"], row["level"], m["measured"]["eager"]["min_seconds"], recompute(row, f, sync),
                          detail(row, f)))
    return out


def summary(joined: list[Joined]) -> list[dict]:
    """Per (KernelBench level, bound level): n, violations, min / median bound / measured."""
    lines = []
    for level in sorted({j.level for j in joined}):
        rows = [j for j in joined if j.level == level]
        for bound in ("unfused", "recurrence", "eager_host"):
            ratios = [j.bounds[bound] / j.measured_seconds for j in rows if bound in j.bounds]
            if ratios:
                lines.append({
                    "kernelbench": level, "bound": bound, "n": len(ratios),
                    "violations": sum(r > 1 for r in ratios),
                    "median": statistics.median(ratios), "max": max(ratios),
                })
    return lines


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=Path, default=ROWS)
    p.add_argument("--measured", type=Path, default=MEASURED)
    p.add_argument("--spec", type=Path, default=None)
    p.add_argument("--dispatch-us", type=float, default=None)
    p.add_argument("--table", action="store_true")
    args = p.parse_args(argv)
    joined = join(args.rows, args.measured, args.spec, args.dispatch_us)
    if args.table:
        print("| problem | kind | eager ops | eager us | host floors us | device floors us | fused / eager | "
              "unfused / eager | eager_host / eager |")
        print("|---|---|---|---|---|---|---|---|---|")
        for j in sorted(joined, key=lambda j: (j.level, j.bounds["eager_host"] / j.measured_seconds)):
            t, d = j.measured_seconds, j.detail
            print(f"| {j.level}/{j.problem} | {j.kind} | {d['ops']} | {t * 1e6:.1f} | {d['host'] * 1e6:.1f} | "
                  f"{d['device'] * 1e6:.1f} | {d['fused'] / t:.3f} | {j.bounds['unfused'] / t:.3f} | "
                  f"{j.bounds['eager_host'] / t:.3f} |")
    print("| KernelBench | bound | n | violations | median bound / eager | max |")
    print("|---|---|---|---|---|---|")
    for s in summary(joined):
        print(f"| {s['kernelbench']} | {s['bound']} | {s['n']} | {s['violations']} | {s['median']:.3f} | {s['max']:.3f} |")
    bad = [(j.problem, b, v, j.measured_seconds) for j in joined for b, v in j.bounds.items() if v > j.measured_seconds]
    for problem, b, v, m in bad:
        print(f"VIOLATION {problem}: {b} {v * 1e6:.1f} us > measured {m * 1e6:.1f} us")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
