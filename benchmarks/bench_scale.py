"""How `solar analyze` grows with the length of a program whose layers cannot be shared.

Usage:
    python benchmarks/bench_scale.py [mixed] [ir] [--sizes 500 1000 2000] [--arch H100-SXM]
                                     [--repeat 1] [--timeout 600] [--out FILE.json] [--keep DIR]

Two generated families, each at every --sizes:
  mixed  a model file: an `nn.Sequential` of N layers cycling through Linear (to a new width each
         time), ReLU, LayerNorm, GELU, Linear, Sigmoid, LayerNorm, Tanh, so that no two layers are
         alike and the layer sharing of solar.frontends.torch.share cannot apply;
  ir     IR text of the same chain written directly (no tracing): N layers of about 2.75 statements
         each (20,000 statements: N = 7,273).
Each size is one whole `python -m solar.cli analyze FILE --arch ARCH` process, its CPU seconds
(user + system of the child, the steady number on a shared machine) and wall seconds; the floor,
`python -c "import torch.export"`, is measured in the same run before every size, and each size is
reported as a multiple of the median floor. The growth exponent between two sizes a < b is
log(t_b / t_a) / log(b / a) (1.0: linear), of the whole process and of the part above the floor."""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CYCLE = ("linear", "relu", "layernorm", "gelu", "linear", "sigmoid", "layernorm", "tanh")
FLOOR = [sys.executable, "-c", "import torch.export"]
BATCH = 8
FIRST_WIDTH = 32


def width_after(i: int) -> int:
    """The width a Linear at position i maps to (11 widths, 32..112, in an order that varies)."""
    return 32 + (i * 5 % 11) * 8


def model_file(n: int) -> str:
    """A model file of an n-layer mixed Sequential (KernelBench layout)."""
    return f'''"""A mixed Sequential of {n} layers, no two alike."""
import torch
import torch.nn as nn

N = {n}
CYCLE = {CYCLE!r}
ACTIVATIONS = {{"relu": nn.ReLU, "gelu": nn.GELU, "sigmoid": nn.Sigmoid, "tanh": nn.Tanh}}


def _layers():
    width, out = {FIRST_WIDTH}, []
    for i in range(N):
        kind = CYCLE[i % len(CYCLE)]
        if kind == "linear":
            nxt = 32 + (i * 5 % 11) * 8
            out.append(nn.Linear(width, nxt))
            width = nxt
        elif kind == "layernorm":
            out.append(nn.LayerNorm(width))
        else:
            out.append(ACTIVATIONS[kind]())
    return out


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(*_layers())

    def forward(self, x):
        return self.net(x)


def get_inputs():
    return [torch.randn({BATCH}, {FIRST_WIDTH})]


def get_init_inputs():
    return []
'''


_ACT = {
    "relu": "max({x}, 0.0)",
    "gelu": "{x} * 0.5 * (erf({x} * 0.7071067811865475) + 1.0)",
    "sigmoid": "sigmoid({x})",
    "tanh": "tanh({x})",
}


def ir_text(n: int) -> str:
    """IR text of the same n-layer chain (the statements the torch frontend lowers it to)."""
    params: list[str] = []
    temps: list[str] = []
    body: list[str] = []
    width, cur = FIRST_WIDTH, "x"
    for i in range(n):
        kind = CYCLE[i % len(CYCLE)]
        out = f"t{i}"
        rows = f"i0 in 0..{BATCH}"
        if kind == "linear":
            nxt = width_after(i)
            params += [f"w{i}: f32[{nxt}, {width}]", f"b{i}: f32[{nxt}]"]
            body += [
                f"  for {rows}, i1 in 0..{nxt}:",
                f"    {out}[i0, i1] = b{i}[i1]",
                f"  for {rows}, i1 in 0..{nxt}, r0 in 0..{width}:",
                f"    {out}[i0, i1] += {cur}[i0, r0] * w{i}[i1, r0]",
            ]
            width = nxt
        elif kind == "layernorm":
            params += [f"g{i}: f32[{width}]", f"b{i}: f32[{width}]"]
            temps += [f"m{i}: f32[{BATCH}, 1]", f"s{i}: f32[{BATCH}, 1]"]
            x, mean, rstd = f"{cur}[i0, i1]", f"m{i}[i0, 0]", f"s{i}[i0, 0]"
            body += [
                f"  for {rows}:",
                f"    {mean} = 0.0",
                f"  for {rows}, i1 in 0..{width}:",
                f"    {mean} += {x}",
                f"  for {rows}:",
                f"    {mean} = {mean} * {1 / width!r}",
                f"  for {rows}:",
                f"    {rstd} = 0.0",
                f"  for {rows}, i1 in 0..{width}:",
                f"    {rstd} += ({x} - {mean}) * ({x} - {mean})",
                f"  for {rows}:",
                f"    {rstd} = rsqrt({rstd} * {1 / width!r} + 1e-05)",
                f"  for {rows}, i1 in 0..{width}:",
                f"    {out}[i0, i1] = ({x} - {mean}) * {rstd} * g{i}[i1] + b{i}[i1]",
            ]
        else:
            body += [
                f"  for {rows}, i1 in 0..{width}:",
                f"    {out}[i0, i1] = " + _ACT[kind].format(x=f"{cur}[i0, i1]"),
            ]
        temps.append(f"{out}: f32[{BATCH}, {width}]")
        cur = out
    last = temps.pop()
    head = [f"program chain{n} {{", f"  input x: f32[{BATCH}, {FIRST_WIDTH}]"]
    head += [f"  param {p}" for p in params] + [f"  temp {t}" for t in temps]
    head += [f"  output {last}"]
    return "\n".join(head + body + ["}", ""])


FAMILIES = {"mixed": (".py", model_file), "ir": (".ir", ir_text)}


def _run(command: list[str], timeout_s: float) -> tuple[float, float, int]:
    """(CPU seconds of the child, wall seconds, exit status; -1 on a timeout)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.perf_counter()
    try:
        code = subprocess.run(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=timeout_s, check=False,
            env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])},
        ).returncode
    except subprocess.TimeoutExpired:
        code = -1
    wall = time.perf_counter() - wall
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall, code


def exponent(a: int, ta: float, b: int, tb: float) -> float | None:
    if ta <= 0 or tb <= 0:
        return None
    return math.log(tb / ta) / math.log(b / a)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("families", nargs="*", choices=sorted(FAMILIES), default=None)
    parser.add_argument("--sizes", type=int, nargs="+", default=[500, 1000, 2000])
    parser.add_argument("--arch", default="H100-SXM")
    parser.add_argument("--repeat", type=int, default=1, help="runs per size (median taken)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per run")
    parser.add_argument("--out", type=Path, default=None, help="write the results as JSON")
    parser.add_argument("--keep", type=Path, default=None, help="write the generated files here")
    args = parser.parse_args(argv)
    families = args.families or sorted(FAMILIES)
    folder = args.keep or Path(tempfile.mkdtemp(prefix="solar-scale-"))
    folder.mkdir(parents=True, exist_ok=True)
    floors: list[float] = []
    rows: list[dict] = []
    for family in families:
        suffix, make = FAMILIES[family]
        for n in sorted(args.sizes):
            path = folder / f"{family}_{n}{suffix}"
            path.write_text(make(n))
            cpus, walls, code = [], [], 0
            for _ in range(args.repeat):
                floors.append(_run(FLOOR, args.timeout)[0])
                cpu, wall, code = _run(
                    [sys.executable, "-m", "solar.cli", "analyze", str(path), "--arch", args.arch],
                    args.timeout,
                )
                cpus.append(cpu)
                walls.append(wall)
            row = {"family": family, "size": n, "exit": code,
                   "cpu_s": statistics.median(cpus), "wall_s": statistics.median(walls)}
            rows.append(row)
            print(f"{family:6} {n:6}  cpu {row['cpu_s']:8.2f} s  wall {row['wall_s']:8.2f} s"
                  f"  exit {code}", flush=True)
    floor = statistics.median(floors)
    print(f"floor (import torch.export): {floor:.2f} CPU s (median of {len(floors)})")
    for row in rows:
        row["floor_multiple"] = row["cpu_s"] / floor
    for family in families:
        mine = [r for r in rows if r["family"] == family and r["exit"] == 0]
        for a, b in itertools.pairwise(mine):
            whole = exponent(a["size"], a["cpu_s"], b["size"], b["cpu_s"])
            above = exponent(a["size"], a["cpu_s"] - floor, b["size"], b["cpu_s"] - floor)
            b["exponent"], b["exponent_above_floor"] = whole, above
            print(f"{family:6} {a['size']:6} -> {b['size']:6}: exponent {whole:.2f}"
                  f" (above the floor {above:.2f})" if above is not None else "")
        for r in mine:
            print(f"{family:6} {r['size']:6}  {r['floor_multiple']:6.2f}x the floor")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({
            "python": platform.python_version(), "floor_cpu_s": floor, "floors": floors,
            "load_average": os.getloadavg(), "rows": rows,
        }, indent=2) + "\n")
    return 0 if all(r["exit"] == 0 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
