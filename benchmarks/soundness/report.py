"""Join the soundness sweep's H200 measurements (benchmarks/results/h200/soundness.jsonl) with
solar's bounds for the same cases, computed here on the CPU, and list every violation: a measured
minimum below a bound that claims that execution (solar.backends.levels.claims). SDPA cases were
timed once per backend; a bound claims all of them, so it is compared with the fastest.

    python benchmarks/soundness/report.py [--data FILE] [--arch H200-SXM] [--markdown OUT.md]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from benchmarks.rows import RESULTS, read_rows  # noqa: E402

DATA = RESULTS / "soundness.jsonl"


@dataclass(frozen=True)
class Measured:
    case: str
    mode: str
    min_seconds: float
    backend: str | None  # the fastest SDPA backend, for SDPA cases


@dataclass(frozen=True)
class Row:
    case: str
    mode: str
    level: str
    measured_seconds: float
    bound_seconds: float
    backend: str | None

    @property
    def ratio(self) -> float:
        """measured / bound: below 1 is a violation."""
        return self.measured_seconds / self.bound_seconds if self.bound_seconds > 0 else float("inf")


def load_measured(path: Path = DATA) -> tuple[list[Measured], dict[str, str]]:
    """The fastest successful run of every (case, mode), and the environment it was measured in."""
    best: dict[tuple[str, str], Measured] = {}
    env: dict[str, str] = {}
    for row in read_rows(path):
        env = row.get("environment", env)
        if "min_seconds" not in row:
            continue
        key = (row["case"], row["mode"])
        if key not in best or row["min_seconds"] < best[key].min_seconds:
            best[key] = Measured(row["case"], row["mode"], row["min_seconds"], row.get("backend"))
    return list(best.values()), env


def case_bounds(name: str, arch: str = "H200-SXM") -> dict[str, float]:
    """solar's bounds (seconds per level) for one sweep case, traced on the meta device (nothing is
    allocated) with the case's TF32 flags in force."""
    import torch

    from benchmarks.soundness.cases import BY_NAME, restore_tf32, tf32_flags
    from solar.api import analyze_loaded, load

    case = BY_NAME[name]
    old = tf32_flags(case.tf32)
    try:
        with torch.device("meta"):
            model, inputs = case.build()
        report = analyze_loaded(load(model, inputs), arch)
    finally:
        restore_tf32(old)
    return {level: b.seconds for level, b in report.bounds.items()}


def join(measured: list[Measured], bounds: dict[str, dict[str, float]]) -> list[Row]:
    from solar.backends.levels import claims

    rows = []
    for m in measured:
        for level, seconds in bounds[m.case].items():
            if claims(level, m.mode):
                rows.append(Row(m.case, m.mode, level, m.min_seconds, seconds, m.backend))
    return rows


def markdown(rows: list[Row], env: dict[str, str], arch: str) -> str:
    fused = sorted((r for r in rows if r.level == "fused"), key=lambda r: r.ratio)
    violations = [r for r in rows if r.ratio < 1]
    lines = [
        f"GPU: {env.get('gpu')}, driver {env.get('driver_version')}, torch {env.get('torch')}, "
        f"CUDA {env.get('cuda')}; bounds for {arch}; {len({r.case for r in rows})} cases, "
        f"{len({(r.case, r.mode) for r in rows})} timed (case, mode) pairs (min of 30, L2 flushed).",
        "",
        f"**Violations: {len(violations)}**",
        "",
        "| case | mode | fastest backend | measured min | fused bound | ratio | unfused bound | ratio |",
        "|---|---|---|---|---|---|---|---|",
    ]
    unfused = {(r.case, r.mode): r for r in rows if r.level == "unfused"}
    for r in sorted(fused, key=lambda r: (r.case, r.mode)):
        u = unfused.get((r.case, r.mode))
        tail = f"{_us(u.bound_seconds)} | {u.ratio:.2f}" if u else "– | –"
        lines.append(
            f"| {r.case} | {r.mode} | {r.backend or '–'} | {_us(r.measured_seconds)} | "
            f"{_us(r.bound_seconds)} | {r.ratio:.2f} | {tail} |"
        )
    lines += ["", "Tightest five (fused): " + "; ".join(
        f"{r.case} ({r.mode}) {r.ratio:.2f}×" for r in fused[:5])]
    if violations:
        lines += ["", "Violations:"] + [
            f"- {r.case} {r.mode} {r.level}: measured {_us(r.measured_seconds)} < bound {_us(r.bound_seconds)}"
            for r in violations
        ]
    return "\n".join(lines) + "\n"


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:.1f} µs"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, default=DATA)
    p.add_argument("--arch", default="H200-SXM")
    p.add_argument("--markdown", type=Path, default=None)
    args = p.parse_args(argv)
    measured, env = load_measured(args.data)
    return report(measured, env, args.arch, case_bounds, args.markdown)


def report(measured: list[Measured], env: dict[str, str], arch: str, bounds_of: Callable[[str, str], dict[str, float]],
           out: Path | None, errors: dict[str, str] | None = None) -> int:
    """Bound each measured case (`bounds_of(case, arch)`; one that fails is left out of the table:
    printed, or added to `errors`, which are listed below the table), join, print the markdown
    table (and write it to `out`); 1 on any violation, else 0."""
    bounds = {}
    for name in sorted({m.case for m in measured}):
        try:
            bounds[name] = bounds_of(name, arch)
        except Exception as exc:  # reported, and the case is left out of the table
            why = f"analysis failed: {type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
            if errors is None:
                print(f"{name}: {why}")
            else:
                errors[name] = why
    rows = join([m for m in measured if m.case in bounds], bounds)
    text = markdown(rows, env, arch)
    if errors:
        text += "\nNot in the table:\n" + "".join(f"- {k}: {v}\n" for k, v in sorted(errors.items()))
    if out:
        out.write_text(text)
    print(text)
    return 1 if any(r.ratio < 1 for r in rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
