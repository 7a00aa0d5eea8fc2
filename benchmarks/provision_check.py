"""Check solar provision's inverses on real programs: for each file, target T = FRACTION x the
like GPU's bound, every returned amount re-priced must give a bound equal to T (exact inverses; the
compute LPs to their 1e-10 tolerance). The host dispatch floors (traced PyTorch files) are checked at
their own target T_e = eager device stage / FRACTION, the uniform floor re-priced through
`analyze_loaded(..., dispatch_us=floor)`'s eager_host level. Prints the largest |bound with it / T - 1|
per file.

    PYTHONPATH=. python benchmarks/provision_check.py benchmarks/suite/level1/*.py --like H100-SXM
"""

from __future__ import annotations

import argparse
import sys
import time

from solar.api import analyze_loaded, load
from solar.errors import SolarError
from solar.usecases.provision import SCALED, UNIFORM, provision_loaded


def dispatch_deviations(loaded, like: str, level: str, fraction: float, device_seconds: float) -> list[tuple[str, float]]:
    """|eager_host with the returned floor / T_e − 1| for the uniform floor (through the API) and
    the factor on the calibrated floors (its check)."""
    target = device_seconds / fraction
    prov = provision_loaded(loaded, target, like, level)
    out = []
    uniform = prov.requirement(UNIFORM).value
    if uniform is not None:
        report = analyze_loaded(loaded, like, dispatch_us=uniform * 1e6)
        out.append((UNIFORM, report.bounds["eager_host"].seconds / target - 1))
    scaled = prov.requirement(SCALED)
    if scaled.check_seconds is not None:
        out.append((SCALED, scaled.check_seconds / target - 1))
    return out


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
        if first.eager_ops and first.eager_device_seconds:
            checked += dispatch_deviations(loaded, args.like, args.level, args.fraction, first.eager_device_seconds)
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
