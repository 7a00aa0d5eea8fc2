"""Golden per-problem totals of the repository's suite and examples: FLOPs, contraction FLOPs, DRAM
bytes (compulsory, unfused, cache-aware) and the seconds of every bound level, on each GPU of ARCHS.

Usage:
    python benchmarks/golden_totals.py            # compare with tests/golden/totals.json, exit 1 on a difference
    python benchmarks/golden_totals.py --update   # rewrite tests/golden/totals.json
    python benchmarks/golden_totals.py -k Cumsum  # only problems whose key contains the substring

The file is the reference for refactorings of the IR, lifting and backends: a change that moves a
number must say why (docs/BOUNDS.md). tests/test_golden_totals.py compares every entry."""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.suite_tools import list_problems  # noqa: E402
from solar.backends.levels import SPEC_LEVELS  # noqa: E402

GOLDEN = ROOT / "tests" / "golden" / "totals.json"
ARCHS = ("H100-SXM", "H200-SXM")
REL_TOL = 1e-9  # floats may differ by summation order only


def problem_paths() -> dict[str, Path]:
    """Key (path relative to the repository root) -> file, for the suite and the examples."""
    paths = list_problems(ROOT / "benchmarks" / "suite")
    paths += sorted((ROOT / "examples").glob("*.py")) + sorted((ROOT / "examples" / "jax").glob("*.py"))
    return {p.relative_to(ROOT).as_posix(): p for p in paths}


def totals_of(path: Path) -> dict:
    """{arch: {quantity: value}} for one problem file (loaded once, bounded on every arch)."""
    from solar.api import load

    return loaded_totals(load(str(path)))


# host- and calibration-dependent levels are not golden
LEVELS = tuple(level.value for level in SPEC_LEVELS)


def loaded_totals(loaded) -> dict:
    """{arch: {quantity: value}} for a loaded program (solar.api.Loaded)."""
    from solar.api import analyze_loaded

    out = {}
    for arch in ARCHS:
        report = analyze_loaded(loaded, arch)
        t = report.totals
        row = {
            "flops": t.flops,
            "contraction_flops": t.contraction_flops,
            "dram_bytes": t.dram_bytes,
            "unfused_dram_bytes": t.unfused_dram_bytes,
            "cache_aware_dram_bytes": t.cache_aware_dram_bytes,
        }
        row.update({f"{level}_seconds": b.seconds for level, b in report.bounds.items() if level in LEVELS})
        out[arch] = row
    return out


def differences(expected: dict, actual: dict) -> list[str]:
    """One line per quantity that differs (ints exactly, floats to REL_TOL)."""
    lines = []
    for arch in sorted(set(expected) | set(actual)):
        e, a = expected.get(arch, {}), actual.get(arch, {})
        for key in sorted(set(e) | set(a)):
            x, y = e.get(key), a.get(key)
            same = (
                x is not None
                and y is not None
                and (x == y if isinstance(x, int) and isinstance(y, int) else math.isclose(x, y, rel_tol=REL_TOL))
            )
            if not same:
                lines.append(f"{arch} {key}: golden {x!r}, now {y!r}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--update", action="store_true", help="rewrite the golden file")
    parser.add_argument("-k", dest="filter", default=None, help="only keys containing this substring")
    args = parser.parse_args(argv)
    paths = {k: p for k, p in problem_paths().items() if not args.filter or args.filter in k}
    golden = json.loads(GOLDEN.read_text()) if GOLDEN.exists() else {}
    actual = {}
    failed = 0
    for key, path in paths.items():
        actual[key] = totals_of(path)
        diff = differences(golden.get(key, {}), actual[key])
        if diff and not args.update:
            failed += 1
            print(f"{key}:\n  " + "\n  ".join(diff))
        print(f"  {key}: {'ok' if not diff else 'differs'}", file=sys.stderr, flush=True)
    if args.update:
        golden.update(actual)
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN.write_text(json.dumps(dict(sorted(golden.items())), indent=1) + "\n")
        print(f"wrote {len(actual)} problems to {GOLDEN.relative_to(ROOT)}")
        return 0
    print(f"{len(paths)} problems, {failed} differ from {GOLDEN.relative_to(ROOT)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
