"""Join the committed eager_host ingredients (benchmarks/eager_host_rows.py) with the committed timings
of the same files (measured.eager; measured.graphed: a CUDA-graph replay of the eager kernels),
recomputing the unfused, recurrence, eager_host and graphed levels with a host profile's dispatch
floors and the calibrated spec's device floors; list violations (a fastest run below a bound that
claims that execution, solar.backends.levels) and, per suite level, the median and the least
measured / bound (the margin). Exit 1 on any violation. A measured row timed with a synchronised
start ("protocol": "sync_start", benchmarks/eager_host_measure.py) is joined with head start 0; the
others with the profile's.

    python benchmarks/eager_host_join.py [--rows R.jsonl] [--measured M.jsonl] [--host NAME|FILE]
        [--gpu H200-SXM] [--dispatch-us X] [--min-kernel-us T] [--table]   (--table: one line per problem;
        --min-kernel-us: what the suites give with that minimum kernel time)
"""

from __future__ import annotations

import argparse
import statistics
import sys
from dataclasses import dataclass, field, replace
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
    bounds: dict  # level -> seconds (unfused, recurrence, eager_host, graphed)
    detail: dict  # fused, eager ops, host total A_n, device total, head start, chains
    measured: dict = field(default_factory=dict)  # execution -> fastest run (eager, graphed)

    def violations(self) -> list:
        from solar.backends.levels import violations

        return violations(self.bounds, self.measured or {"eager": self.measured_seconds})

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
    from solar.frontends.argclass import parse

    modules = [tuple(m) for m in row.get("modules", [])]
    return [HostCall(c[0], c[1], tuple(modules[k] for k in c[4]) if len(c) > 4 else (), tuple(c[5]) if len(c) > 5 else (),
                     parse(c[6]) if len(c) > 6 else frozenset())
            for c in row["calls"]]


def with_min_kernel(row: dict, t_min: float | None) -> dict:
    """The row as if the spec's minimum kernel time were `t_min` (at least the one the row was made
    with): every kernel's floor raised to it, fused raised to it, unfused at least the sum of the
    raised kernel floors (the row's unattributed traffic may hide in the added slack: not added)."""
    if t_min is None:
        return row
    calls = [[c[0], c[1], max(c[2], t_min) if c[1] and c[2] > 0 else c[2], *c[3:]] for c in row["calls"]]
    return {**row, "calls": calls, "fused": max(row["fused"], t_min),
            "unfused": max(row["unfused"], row["front"] + sum(c[2] for c in calls))}


def recompute(row: dict, floors, sync_seconds: float, graph_floor: float = 0.0) -> dict[str, float]:
    """fused, unfused, recurrence, eager_host and graphed of one committed row with these floors and
    the in-graph kernel floor (solar.backends.graphed over the row's kernels: its calls that launch)."""
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
    excess = [max(c[2], graph_floor) - c[2] for c in row["calls"] if c[1] and c[2] > 0]
    added = sum(excess) - max(excess) if excess else 0.0
    out = {
        "fused": row["fused"],
        "unfused": row["unfused"],
        "eager_host": pipeline_makespan(host, device, floors.lead_seconds),
        "graphed": max(row["unfused"], row["front"] + sum(c[2] for c in row["calls"]) + added),
    }
    if chains:
        out["recurrence"] = max(row["cache_aware"], best)
    return out


def detail(row: dict, floors) -> dict:
    from solar.backends.dispatch import host_floors

    return {"fused": row["fused"], "ops": len(row["calls"]), "host": sum(host_floors(host_calls(row), floors)),
            "device": row["front"] + sum(c[2] for c in row["calls"]), "lead": floors.lead_seconds,
            "chains": len(row["chains"])}


def join(rows_path: Path = ROWS, measured_path: Path = MEASURED, host: str | None = "h200-host",
         dispatch_us: float | None = None, gpu: str = "H200-SXM", min_kernel_us: float | None = None) -> list[Joined]:
    from solar.backends.dispatch import floors_from_host, floors_given
    from solar.backends.graphed import GRAPH_MARGIN
    from solar.backends.recurrence import GRID_SYNC_MARGIN
    from solar.hardware.host import get_host
    from solar.hardware.spec import calibrated_spec

    spec = calibrated_spec(gpu)
    device = spec.device_floors if spec is not None else None
    floors = floors_given(dispatch_us * 1e-6) if dispatch_us is not None else floors_from_host(get_host(host))
    sync = GRID_SYNC_MARGIN * device.grid_sync_seconds.value if device is not None else 0.0
    graph_floor = GRAPH_MARGIN * device.cuda_graph_kernel_seconds.value if device is not None else 0.0
    measured: dict[str, dict] = {}  # per problem, per execution its fastest run (a file may be timed twice)
    protocol: dict[str, str] = {}
    for r in read_rows(measured_path):
        for execution, t in r.get("measured", {}).items():
            if isinstance(t, dict) and t.get("min_seconds") is not None:
                best = measured.setdefault(r["problem"], {})
                best[execution] = min(best.get(execution, t["min_seconds"]), t["min_seconds"])
                if execution == "eager":
                    protocol[r["problem"]] = r.get("protocol", "")
    synced = replace(floors, lead_seconds=0.0)  # the host issues nothing before the start event
    by_file: dict[str, list[str]] = {}  # a timing named folder/file found by its file alone, if unique
    for name in measured:
        by_file.setdefault(name.rsplit("/", 1)[-1], []).append(name)
    out = []
    for row in read_rows(rows_path):
        row = with_min_kernel(row, None if min_kernel_us is None else min_kernel_us * 1e-6)
        key = f"{row['level']}/{row['problem']}"  # measured rows are named level/file
        only = by_file.get(row["problem"], [])
        key = key if key in measured else row["problem"] if row["problem"] in measured or len(only) != 1 else only[0]
        if "error" in row or "eager" not in measured.get(key, {}):
            continue
        m = measured[key]
        f = synced if protocol.get(key) == "sync_start" else floors
        out.append(Joined(row["problem"], row["level"], m["eager"], recompute(row, f, sync, graph_floor),
                          detail(row, f), dict(m)))
    return out


ROWS_SUFFIX = "_eager_host_rows.jsonl"


def pairs(folder: Path) -> list[tuple[Path, Path]]:
    """(rows, timings) of one host folder: each `SUITE_eager_host_rows.jsonl` with every other
    `SUITE*.jsonl` there whose rows carry measured runs (eager, graphed): a new GPU's or host's data
    is its folder of such files."""
    out = []
    for rows in sorted(folder.glob(f"*{ROWS_SUFFIX}")):
        suite = rows.name.removesuffix(ROWS_SUFFIX)
        for timings in sorted(folder.glob(f"{suite}*.jsonl")):
            if timings != rows and any(isinstance(r.get("measured"), dict) for r in read_rows(timings)):
                out.append((rows, timings))
    return out


def gpu_of(rows: Path) -> str:
    """The GPU spec the rows were computed for."""
    return next(iter(read_rows(rows)))["arch"]


def host_of(folder: Path) -> str:
    """The host profile of the machine that ran a folder's timings (`<folder>-host`), else the default."""
    from solar.hardware.host import HOST_DIR

    name = f"{folder.name}-host"
    return name if (HOST_DIR / f"{name}.yaml").is_file() else "default"


def summary(joined: list[Joined]) -> list[dict]:
    """Per (KernelBench level, bound level): n, violations, min / median bound / measured."""
    lines = []
    for level in sorted({j.level for j in joined}):
        rows = [j for j in joined if j.level == level]
        for bound, execution in (("fused", "eager"), ("unfused", "eager"), ("recurrence", "eager"), ("eager_host", "eager"),
                                 ("graphed", "graphed")):
            ratios = [j.bounds[bound] / j.measured[execution] for j in rows
                      if bound in j.bounds and execution in j.measured]
            if ratios:
                lines.append({
                    "kernelbench": level, "bound": bound, "execution": execution, "n": len(ratios),
                    "violations": sum(r > 1 for r in ratios),
                    "median": statistics.median(ratios), "max": max(ratios), "margin": 1 / max(ratios),
                })
    return lines


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=Path, default=ROWS)
    p.add_argument("--measured", type=Path, default=MEASURED)
    p.add_argument("--host", default="h200-host", help="host profile (name or YAML); default: the host that ran the timings")
    p.add_argument("--gpu", default="H200-SXM", help="GPU whose calibrated device floors apply")
    p.add_argument("--dispatch-us", type=float, default=None)
    p.add_argument("--table", action="store_true")
    p.add_argument("--min-kernel-us", type=float, default=None,
                   help="what-if: the spec's min_kernel_seconds at this value (kernel floors raised to it)")
    args = p.parse_args(argv)
    joined = join(args.rows, args.measured, args.host, args.dispatch_us, args.gpu, args.min_kernel_us)
    if args.table:
        print("| problem | kind | eager ops | eager us | host floors us | device floors us | fused / eager | "
              "unfused / eager | eager_host / eager |")
        print("|---|---|---|---|---|---|---|---|---|")
        for j in sorted(joined, key=lambda j: (j.level, j.bounds["eager_host"] / j.measured_seconds)):
            t, d = j.measured_seconds, j.detail
            print(f"| {j.level}/{j.problem} | {j.kind} | {d['ops']} | {t * 1e6:.1f} | {d['host'] * 1e6:.1f} | "
                  f"{d['device'] * 1e6:.1f} | {d['fused'] / t:.3f} | {j.bounds['unfused'] / t:.3f} | "
                  f"{j.bounds['eager_host'] / t:.3f} |")
    print("| suite | bound | vs | n | violations | median bound / measured | max | margin (least measured / bound) |")
    print("|---|---|---|---|---|---|---|---|")
    for s in summary(joined):
        print(f"| {s['kernelbench']} | {s['bound']} | {s['execution']} | {s['n']} | {s['violations']} | "
              f"{s['median']:.3f} | {s['max']:.3f} | {s['margin']:.3f} |")
    bad = [(j.problem, v) for j in joined for v in j.violations()]
    for problem, v in bad:
        print(f"VIOLATION {problem}: {v.describe()}")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
