"""Check solar provision's inverses on real programs: for each file, target T = FRACTION x the
like GPU's bound, every returned amount re-priced must give a bound equal to T (exact inverses; the
compute LPs to their 1e-10 tolerance). Prints the largest |bound with it / T - 1| per file.

    PYTHONPATH=. python benchmarks/provision_check.py benchmarks/suite/level1/*.py --like H100-SXM
"""

from __future__ import annotations

import argparse
import sys
import time

from solar.api import load
from solar.errors import SolarError
from solar.usecases.provision import provision_loaded


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("files", nargs="+")
    p.add_argument("--like", default="H100-SXM")
    p.add_argument("--fraction", type=float, default=0.5)
    p.add_argument("--level", default="cache_aware", choices=("fused", "cache_aware"))
    args = p.parse_args(argv)
    worst_all = 0.0
    for f in args.files:
        try:
            loaded = load(f)
        except SolarError as exc:
            print(f"{f}: skipped ({str(exc)[:80]})")
            continue
        first = provision_loaded(loaded, 1.0, args.like, args.level)
        target = first.like_seconds * args.fraction
        t = time.perf_counter()
        prov = provision_loaded(loaded, target, args.like, args.level)
        seconds = time.perf_counter() - t
        checked = [
            (r.resource, r.check_seconds / target - 1) for r in prov.requirements if r.check_seconds
        ]
        worst = max((abs(d) for _, d in checked), default=0.0)
        worst_all = max(worst_all, worst)
        met = ", ".join(r for r, _ in checked) or "none reachable alone"
        print(
            f"{f}: {len(checked)} inverses checked (max |rel dev| {worst:.2e}; {met}); {seconds:.2f} s"
        )
    print(f"largest relative deviation over all files: {worst_all:.2e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
