"""Every number of the analysis reports of a corpus, for checking that a change moves none.

For each problem (the suite, the examples, the model corpus, the `hf:` fixtures) the program is loaded
once and analysed on each GPU of ARCHS under each assumption set of VARIANTS; the report's JSON is split
into its numbers (bounds, totals, ops, traffic, library kernels, serving, insights) and its assumption
lines, and both are stored per problem, with a hash of the IR text.

Usage:
    python benchmarks/report_digest.py --out before.json [-k SUBSTRING]
    python benchmarks/report_digest.py --compare before.json after.json [--ignore insights ...]

The comparison says which problems differ in numbers (exactly: the JSON floats as written),
in assumption lines, or in IR text, and exits 1 when any number differs."""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.suite_tools import list_problems  # noqa: E402

ARCHS = ("H100-SXM", "H200-SXM", "L4")
VARIANTS = (  # keyword arguments of solar.api.analyze_loaded
    {},
    {"precision": "fastest"},
    {"cache": "warm", "writeback": False},
)
HF_STEPS = (("prefill", 1, 512, None), ("decode", 4, None, 1024))


def problems() -> dict[str, str]:
    """Key -> what solar.api.load takes (a path), or an `hf:` spec with its scenario."""
    paths = list_problems(ROOT / "benchmarks" / "suite")
    paths += sorted((ROOT / "examples").glob("*.py")) + sorted((ROOT / "examples" / "jax").glob("*.py"))
    paths += sorted((ROOT / "benchmarks" / "models").glob("*.py"))
    out = {p.relative_to(ROOT).as_posix(): str(p) for p in paths}
    for cfg in sorted((ROOT / "tests" / "fixtures" / "hf").glob("*.json")):
        for kind, batch, seq, context in HF_STEPS:
            out[f"hf:{cfg.name}:{kind}"] = json.dumps([str(cfg), kind, batch, seq, context])
    return out


def _load(key: str, what: str):
    from solar.api import load, load_hf

    if key.startswith("hf:"):
        from solar.frontends.torch.hf import scenario

        cfg, kind, batch, seq, context = json.loads(what)
        return load_hf("hf:" + cfg, scenario(kind, batch, seq, context))
    return load(what)


def _split(report_json: dict) -> tuple[dict, list[str]]:
    assumptions = report_json.pop("assumptions", [])
    report_json.pop("solar_version", None)
    return report_json, assumptions


def digest(key: str, what: str) -> dict:
    from solar.api import analyze_loaded

    start = time.process_time()
    try:
        loaded = _load(key, what)
    except Exception as exc:  # a problem this build cannot load is recorded, not fatal
        return {"error": f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"}
    out = {"ir_sha1": hashlib.sha1(str(loaded.program).encode()).hexdigest(), "reports": {}}
    for arch in ARCHS:
        for k, variant in enumerate(VARIANTS):
            report = analyze_loaded(loaded, arch, **variant)
            numbers, assumptions = _split(json.loads(report.model_dump_json()))
            out["reports"][f"{arch}/{k}"] = {"numbers": numbers, "assumptions": assumptions}
    out["cpu_s"] = time.process_time() - start
    return out


def compare(before: dict, after: dict, ignore: tuple[str, ...] = ()) -> int:
    """Print what differs; `ignore`: top-level report keys left out of the numbers compared."""
    bad = 0
    for key in sorted(set(before) | set(after)):
        b, a = before.get(key), after.get(key)
        if b is None or a is None:
            print(f"{key}: only in {'after' if b is None else 'before'}")
            continue
        if "error" in b or "error" in a:
            if b.get("error") != a.get("error"):
                print(f"{key}: error before {b.get('error')!r}, after {a.get('error')!r}")
                bad += 1
            continue
        if b["ir_sha1"] != a["ir_sha1"]:
            print(f"{key}: IR text differs")
        for r in sorted(set(b["reports"]) | set(a["reports"])):
            rb, ra = b["reports"].get(r), a["reports"].get(r)
            if rb is None or ra is None or _kept(rb["numbers"], ignore) != _kept(ra["numbers"], ignore):
                print(f"{key} {r}: NUMBERS DIFFER")
                bad += 1
            elif rb["assumptions"] != ra["assumptions"]:
                gone = [x for x in rb["assumptions"] if x not in ra["assumptions"]]
                new = [x for x in ra["assumptions"] if x not in rb["assumptions"]]
                print(f"{key} {r}: assumption lines differ: -{gone} +{new}")
    print(f"{len(set(before) & set(after))} problems compared, {bad} report(s) with different numbers")
    return 1 if bad else 0


def _kept(numbers: dict, ignore: tuple[str, ...]) -> dict:
    return {k: v for k, v in numbers.items() if k not in ignore}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="write the digest here")
    ap.add_argument("-k", default="", help="only problems whose key contains this")
    ap.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"))
    ap.add_argument("--ignore", nargs="*", default=[], metavar="KEY", help="report keys not compared (e.g. insights)")
    args = ap.parse_args()
    if args.compare:
        before, after = (json.loads(Path(p).read_text()) for p in args.compare)
        return compare(before, after, tuple(args.ignore))
    result = {}
    for key, what in problems().items():
        if args.k in key:
            result[key] = digest(key, what)
            row = result[key]
            print(f"{key}: {row['error'] if 'error' in row else '%.2f CPU s' % row['cpu_s']}", flush=True)
    Path(args.out).write_text(json.dumps(result, indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
