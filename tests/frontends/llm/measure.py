"""Requests, attempts and time per program of the LLM frontend against the scripted server (not a
test: run `python -m tests.frontends.llm.measure`). Each program is translated with a cold cache
(right first time, and wrong-then-right after the diff) and then again from the cache."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from solar.api import load
from solar.frontends.llm import LLMConfig
from solar.frontends.llm import examples as examples_mod
from tests.frontends.llm import programs
from tests.frontends.llm.server import ScriptedServer, reply

ROOT = Path(__file__).resolve().parents[3]
CASES = [
    (
        "examples/llm/data_dependent.py",
        programs.DATA_DEPENDENT,
        programs.DATA_DEPENDENT.replace("2.0, 0.5", "2.0, 0.25"),
    ),
    (
        "examples/llm/custom_function.py",
        programs.CUSTOM_FUNCTION,
        programs.CUSTOM_FUNCTION.replace("* 3.0", "* 2.0"),
    ),
    (
        "examples/llm/numpy_forward.py",
        programs.NUMPY_FORWARD,
        programs.NUMPY_FORWARD.replace("y[i, j] / s[i]", "y[i, j] * s[i]"),
    ),
    (
        "tests/frontends/llm/missing_op.py",
        programs.HYPOT_OP,
        programs.HYPOT_OP.replace("sqrt(", "abs("),
    ),
]
if programs.in_order_supported():
    CASES.append(
        (
            "examples/llm/library_filter.py",
            programs.LIBRARY_FILTER,
            programs.LIBRARY_FILTER.replace("0.9", "0.8"),
        )
    )


def _one(path: Path, replies: list[str], cache: Path) -> tuple[int, int, float]:
    with ScriptedServer([reply(r) for r in replies]) as server:
        start = time.perf_counter()
        loaded = load(path, llm=LLMConfig(server.url, "scripted", cache_dir=cache, backoff_s=0.01))
        seconds = time.perf_counter() - start
    llm = [p for p in loaded.provenance if p.source == "llm"]
    return len(server.requests), max(p.attempts for p in llm), seconds


def main() -> None:
    import torch

    from solar.frontends.torch.lowerings import LOWERINGS

    LOWERINGS.pop(torch.ops.aten.hypot.default, None)  # keep the missing op missing
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "examples"
        t = time.perf_counter()
        examples_mod.load(base)
        print(f"worked examples built once: {time.perf_counter() - t:.2f} s (cached afterwards)")
        print(f"{'program':38} {'scenario':22} {'requests':>8} {'attempts':>8} {'seconds':>8}")
        for rel, right, wrong in CASES:
            for k, (scenario, replies) in enumerate(
                (("right first", [right]), ("wrong, then right", [wrong, right]))
            ):
                cache = Path(tmp) / f"{Path(rel).stem}-{k}"
                cache.mkdir()
                for f in base.iterdir():
                    (cache / f.name).write_bytes(f.read_bytes())
                n, a, s = _one(ROOT / rel, replies, cache)
                print(f"{rel:38} {scenario:22} {n:8d} {a:8d} {s:8.2f}")
                if k == 0:
                    n, a, s = _one(ROOT / rel, [], cache)
                    print(f"{rel:38} {'cache hit':22} {n:8d} {a:8d} {s:8.2f}")


if __name__ == "__main__":
    main()
