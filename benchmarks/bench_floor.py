"""Whole-process cost of `solar` command lines as multiples of the floor every torch user pays,
`python -c "import torch.export"`, measured in the same run.

Usage:
    python benchmarks/bench_floor.py [--repeat 3] [--root DIR ...] [--names NAME ...] [-k SUBSTRING]
                                     [--out FILE.json]

Every case runs --repeat times in a fresh process, alternated with the floor (floor, case 1,
case 2, ..., floor, case 1, ...), with cwd and PYTHONPATH set to each --root in turn (default: this
checkout; give two trees, a "before" and an "after", to compare them in one alternated run). CPU
seconds (user + system of the child, from getrusage(RUSAGE_CHILDREN)) are the steady number on a
shared machine; wall seconds are recorded too. The "fake-tensor mode" case is the floor of any
trace on fake tensors (making PyTorch's FakeTensorMode loads torch._dynamo). Each tree's `solar`
is byte-compiled first (as an installed package is), so that no case pays for compiling solar's
source. Reported: the median of each case and of the floor, and the case's median over the
floor's median."""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOLAR = ("-m", "solar.cli")
CASES: dict[str, tuple[str, ...]] = {
    "single op": (*SOLAR, "analyze", "examples/matmul.py", "--arch", "H100-SXM"),
    "argument error": (*SOLAR, "analyze", "examples/matmul.py", "--arch", "V100"),
    "hf: 70B prefill 2048": (*SOLAR, "analyze", "hf:tests/fixtures/hf/llama2-70b.json",
                             "--scenario", "prefill", "--seq", "2048", "--arch", "H100-SXM"),
    "hf: 70B decode 2048": (*SOLAR, "analyze", "hf:tests/fixtures/hf/llama2-70b.json",
                            "--scenario", "decode", "--context", "2048", "--arch", "H100-SXM"),
}
FLOOR = ("-c", "import torch.export")
# What any trace on fake tensors pays before it traces anything: PyTorch's FakeTensorMode imports
# torch._dynamo when it is made (and every Python dispatch mode's first call does too).
CASES["fake-tensor mode"] = ("-c", "import torch.export; from torch._subclasses.fake_tensor import "
                             "FakeTensorMode; FakeTensorMode()")


def run(args: tuple[str, ...], root: Path) -> tuple[float, float, int]:
    """(CPU seconds, wall seconds, exit status) of `python ARGS` in `root`."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.perf_counter()
    code = subprocess.run([sys.executable, *args], cwd=root, env=env, stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL, check=False).returncode
    wall = time.perf_counter() - wall
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall, code


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--root", type=Path, nargs="+", default=[ROOT])
    parser.add_argument("--names", nargs="+", default=None,
                        help="a name for each --root (default: its folder name)")
    parser.add_argument("-k", dest="filter", default=None, help="only cases containing this")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    cases = {k: v for k, v in CASES.items() if not args.filter or args.filter in k}
    names = args.names or [root.resolve().name for root in args.root]
    if len(names) != len(args.root):
        parser.error("give one --names entry per --root")
    label = {str(root): name for root, name in zip(args.root, names)}
    for root in args.root:  # solar as installed: its bytecode compiled once, as pip compiles it
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(root / "solar")], check=True)
    samples: dict[tuple[str, str], list[tuple[float, float, int]]] = {}
    for _ in range(args.repeat):
        for root in args.root:
            samples.setdefault((str(root), "floor"), []).append(run(FLOOR, root))
            for name, case in cases.items():
                samples.setdefault((str(root), name), []).append(run(case, root))
    floor = statistics.median(s[0] for (_, n), got in samples.items() if n == "floor" for s in got)
    rows = []
    print(f"{'tree':30} {'case':22} {'CPU s':>7} {'wall s':>7} {'x floor':>8}  exit")
    for (root, name), got in samples.items():
        cpu = statistics.median(s[0] for s in got)
        wall = statistics.median(s[1] for s in got)
        codes = sorted({s[2] for s in got})
        rows.append({"tree": label[root], "case": name, "cpu_s": cpu, "wall_s": wall,
                     "floor_multiple": cpu / floor, "exit": codes, "samples": got})
        print(f"{root[-30:]:30} {name:22} {cpu:7.2f} {wall:7.2f} {cpu / floor:8.2f}  {codes}")
    print(f"floor (import torch.export): {floor:.2f} CPU s, median of every tree's runs;"
          f" load average {os.getloadavg()[0]:.1f}")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"python": platform.python_version(), "floor_cpu_s": floor,
                                        "load_average": os.getloadavg(), "rows": rows}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
