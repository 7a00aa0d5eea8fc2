"""`solar analyze hf:... --ep/--sp --system ...` end to end: the per-GPU bytes of the expert
all-to-alls are the least-traffic routing's rows, and sequence parallelism's collectives replace the
all-reduces byte for byte."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _rows(*argv: str) -> list[dict]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "100"}
    done = subprocess.run([sys.executable, "-m", "solar.cli", "analyze", *argv, "--json"], capture_output=True,
                          text=True, cwd=ROOT, env=env, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_expert_all_to_alls_move_the_least_traffic():
    # 24 tokens, 2 replicas x 2 tensor-parallel ranks: 6 own tokens per rank; 1 of 4 experts local,
    # so 1 of each token's 2 rows leaves: 6 rows of 64 bf16 = 768 bytes each way, per all-to-all
    (row,) = _rows("hf:tests/fixtures/hf/mixtral-tiny.json", "--scenario", "prefill", "--seq", "6", "--batch", "4",
                   "--tp", "2", "--dp", "2", "--ep", "4", "--system", "8xA100-SXM")
    a2a = [c for c in row["collectives"] if c["kind"] == "all_to_all"]
    assert [(c["ranks"], c["full_bytes"], c["gpu_bytes"]) for c in a2a] == [(4, 1024, 768)] * 4  # 2 layers
    gathers = [c for c in row["collectives"] if c["kind"] == "all_gather"]
    assert [(c["ranks"], c["full_bytes"], c["gpu_bytes"]) for c in gathers[:2]] == [(2, 1536, 768)] * 2


@pytest.mark.parametrize("system,ratio", [("8xA100-SXM", 1), ("8xH100-SXM", 2 * 7 / 8)])
def test_sequence_parallel_bytes_against_all_reduce(system, ratio):
    flags = ("hf:tests/fixtures/hf/llama2-7b.json", "--scenario", "prefill", "--seq", "64", "--tp", "8", "--system", system)
    (plain,) = _rows(*flags)
    (sp,) = _rows(*flags, "--sp")
    s = 64 * 4096 * 2  # the [1, 64, 4096] bf16 hidden states
    reduce = [c["gpu_bytes"] for c in plain["collectives"] if c["kind"] == "all_reduce"]
    scatter = [c["gpu_bytes"] for c in sp["collectives"] if c["kind"] == "reduce_scatter"]
    gather = [c["gpu_bytes"] for c in sp["collectives"] if c["kind"] == "all_gather"]
    assert len(reduce) == len(scatter) == 64 and len(gather) == 66  # the head's input and logits too
    assert scatter == [s * 7 / 8] * 64 and gather[:64] == [s * 7 / 8] * 64
    assert sum(scatter) + sum(gather[:64]) == sum(reduce) * ratio
