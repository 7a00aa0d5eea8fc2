"""Benchmark of how fast `solar` fails: argument errors, `--help`, `solar specs` and `validate` /
`calibrate` without CUDA, each command line in a fresh process.

Usage:
    python benchmarks/bench_errors.py [--repeat 5] [--limit-s 1.0] [--root DIR]
                                      [--out benchmarks/results/errors_times.json] [-k SUBSTRING]

Every command line of CASES runs --repeat times as `solar.cli.main(argv)` in a fresh Python process
(cwd and PYTHONPATH: --root, the solar tree to measure; default this checkout). Its CPU seconds
(user + sys, from getrusage(RUSAGE_CHILDREN) deltas) are kept, the minimum reported; the process also
says whether torch or jax was imported. Prints a table and writes JSON with the environment. Exit
status 1 if any command line's minimum CPU seconds exceed --limit-s, or a command line's exit status
is not the expected one, else 0.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: (command line, expected exit status); {tmp} is a scratch folder (nothing in it exists).
#: `validate` and `calibrate` without --arch expect 2 on a machine without CUDA (see _expected).
CASES: tuple[tuple[str, int], ...] = (
    ("--help", 0),
    ("specs", 0),
    ("frobnicate", 2),
    ("analyze examples/matmul.py --bogus", 2),
    ("analyze examples/matmul.py --precision nope", 2),
    ("analyze examples/matmul.py --arch V100", 2),
    ("analyze examples/matmul.py --clock-mhz -1", 2),
    ("analyze {tmp}/missing.py", 2),
    ("analyze hf:x --seq 0", 2),
    ("analyze examples/matmul.py --seq 8", 2),
    ("analyze hf:x --train", 2),
    ("analyze examples/matmul.py --frontend llm", 2),
    ("analyze examples/matmul.py --frontend jax", 2),
    ("analyze examples/jax/flax_mlp.py --mode eval", 2),
    ("analyze examples/matmul.py --llm-base-url http://localhost:8000/v1", 2),
    ("analyze examples/matmul.py --measured-ops {tmp}/missing.json", 2),
    ("analyze examples/matmul.py --train --loss bogus", 2),
    ("verify {tmp}/missing.py", 2),
    ("verify examples/mlp.py --seed -1", 2),
    ("ir", 2),
    ("ir {tmp}/missing.py", 2),
    ("ir examples/matmul.py --frontend jax", 2),
    ("einsum {tmp}/missing.py", 2),
    ("einsum examples/jax/flax_mlp.py --mode eval", 2),
    ("validate examples/mlp.py --arch V100", 2),
    ("validate {tmp}/missing.py", 2),
    ("validate examples/mlp.py --reps 0", 2),
    ("validate examples/mlp.py --train --loss bogus", 2),
    ("validate examples/mlp.py", 2),
    ("calibrate --arch V100", 2),
    ("calibrate --out {tmp}/no/such/x.yaml", 2),
    ("calibrate", 2),
    ("kernelbench benchmarks/suite --arch H100-SXM --out {tmp}/kb --jobs 0", 2),
    ("kernelbench benchmarks/suite --arch V100 --out {tmp}/kb", 2),
    ("kernelbench {tmp}/missing --arch H100-SXM --out {tmp}/kb", 2),
    ("kernelbench benchmarks/suite --arch H100-SXM --out {tmp}/kb --precision nope", 2),
    ("definitions benchmarks/definitions --arch V100 --out {tmp}/defs", 2),
    ("definitions benchmarks/definitions", 2),
    ("definitions benchmarks/definitions --out {tmp}/defs --suspicious-ratio 0.5", 2),
    ("compare examples/matmul.py --clock-mhz -1", 2),
    ("compare examples/matmul.py --arch L4 V100", 2),
    ("compare examples/jax/flax_mlp.py --mode eval", 2),
    ("provision examples/matmul.py --target-ms 1 --train --loss bogus", 2),
    ("provision examples/matmul.py --target-ms 0", 2),
    ("provision examples/matmul.py --target-ms 1 --like V100", 2),
    ("llm-cache bogus", 2),
    ("ops --bogus", 2),
)

#: runs one command line in the child: its exit status, then whether torch / jax were imported.
CHILD = (
    "import sys\n"
    "from solar.cli import main\n"
    "try:\n"
    "    rc = main(sys.argv[1:])\n"
    "except SystemExit as exc:  # --help\n"
    "    rc = exc.code\n"
    "print('@@bench', rc, 'torch' in sys.modules, 'jax' in sys.modules)\n"
)


def _has_cuda() -> bool:
    """Whether this machine has a CUDA device (then validate/calibrate would measure, not fail)."""
    code = "import torch; print(torch.cuda.is_available())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    return out.stdout.strip() == "True"


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def _git_commit(root: Path) -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def environment(root: Path) -> dict:
    return {
        "python": platform.python_version(),
        "torch": _version("torch"),
        "jax": _version("jax"),
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "loadavg": list(os.getloadavg()),
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "root": "." if root == ROOT else str(root),
        "git_commit": _git_commit(root),
    }


def run_once(argv: list[str], root: Path) -> dict:
    """One fresh process: CPU seconds (user + sys), exit status, stderr lines, heavy imports."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run([sys.executable, "-c", CHILD, *argv], capture_output=True, text=True, cwd=root, env=env, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    marks = [line.split() for line in proc.stdout.splitlines() if line.startswith("@@bench ")]
    rc, torch, jax = (int(marks[-1][1]), marks[-1][2] == "True", marks[-1][3] == "True") if marks else (proc.returncode, None, None)
    return {"cpu_s": cpu, "rc": rc, "stderr_lines": len(proc.stderr.strip().splitlines()), "torch": torch, "jax": jax}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5, help="fresh processes per command line (minimum reported)")
    ap.add_argument("--limit-s", type=float, default=1.0, help="CPU seconds a command line may take")
    ap.add_argument("--root", type=Path, default=ROOT, help="the solar tree to run (cwd and PYTHONPATH)")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks/results/errors_times.json")
    ap.add_argument("-k", default=None, metavar="SUBSTRING", help="only command lines containing SUBSTRING")
    opts = ap.parse_args(argv)
    root = opts.root.resolve()
    cuda = _has_cuda()
    tmp = Path(tempfile.mkdtemp(prefix="solar-bench-errors-"))
    rows = []
    failed = False
    try:
        print(f"{'command line':<78} {'rc':>3} {'min CPU s':>9} {'torch':>5} {'jax':>5}")
        for line, expected in CASES:
            if opts.k and opts.k not in line:
                continue
            needs_gpu = line in ("validate examples/mlp.py", "calibrate")
            if cuda and needs_gpu:
                continue  # with a GPU these measure for real: not an error path
            argv_ = line.format(tmp=tmp).split()
            runs = [run_once(argv_, root) for _ in range(opts.repeat)]
            best = min(r["cpu_s"] for r in runs)
            last = runs[-1]
            ok = best <= opts.limit_s and last["rc"] == expected
            failed |= not ok
            rows.append({
                "command": f"solar {line}", "expected_rc": expected, "rc": last["rc"],
                "stderr_lines": last["stderr_lines"], "torch": last["torch"], "jax": last["jax"],
                "min_cpu_s": round(best, 3), "cpu_s": [round(r["cpu_s"], 3) for r in runs], "ok": ok,
            })
            flag = "" if ok else "  <-- FAIL"
            print(f"{'solar ' + line:<78} {last['rc']:>3} {best:>9.2f} {last['torch']!s:>5} {last['jax']!s:>5}{flag}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    worst = max((r["min_cpu_s"] for r in rows), default=0.0)
    print(f"{len(rows)} command lines, worst {worst:.2f} CPU s (limit {opts.limit_s:g}); "
          f"{sum(not r['ok'] for r in rows)} failed")
    opts.out.parent.mkdir(parents=True, exist_ok=True)
    opts.out.write_text(json.dumps({
        "environment": environment(root), "repeat": opts.repeat, "limit_s": opts.limit_s, "cuda": cuda,
        "rows": rows,
    }, indent=2) + "\n")
    print(f"wrote {opts.out}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
