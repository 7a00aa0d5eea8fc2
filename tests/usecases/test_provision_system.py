"""`solar provision FILE --system S --target-ms T`: the link and NIC bandwidth each system needs,
the same numbers as `solar analyze --system S --need-ms T` (one computation), exact in JSON."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MiB = 1 << 20
TP_MLP = ("examples/distributed/tp_mlp.py", "--world-size", "8")
DECODE = ("hf:tests/fixtures/hf/llama2-70b.json", "--scenario", "decode", "--context", "4096", "--batch", "8", "--tp", "8")
PIPE = ("hf:tests/fixtures/hf/llama2-7b.json", "--scenario", "prefill", "--seq", "2048", "--batch", "2", "--pp", "2",
        "--microbatches", "2")


def _solar(*argv: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "100"}
    done = subprocess.run([sys.executable, "-m", "solar.cli", *argv], capture_output=True, text=True, cwd=ROOT,
                          env=env, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    return done


def _need_rows(text: str) -> list[str]:
    """The rows of the link-bandwidth table (from its title to the end)."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("link bandwidth for a fused bound"))
    return [line.rstrip() for line in lines[start:]]


@pytest.mark.parametrize("program,systems,target_ms", [
    (TP_MLP, ("8xH100-SXM", "8xA100-SXM"), "0.06"),
    (("examples/distributed/shard_map_mlp.py",), ("8xH100-SXM", "2xL4-PCIe"), "0.5"),
    (PIPE, ("8xH100-SXM",), "36"),
])
def test_provision_prints_the_need_ms_table(program, systems, target_ms):
    prov = _solar("provision", *program, "--system", *systems, "--target-ms", target_ms)
    need = _solar("analyze", *program, "--system", *systems, "--need-ms", target_ms)
    rows = _need_rows(prov.stdout)
    assert rows == _need_rows(need.stdout)
    assert [r.split()[0] for r in rows if r.split()[0] in systems] == list(systems)


GB = 1e9


@pytest.mark.parametrize("program,system,target_ms,want", [
    # all-reduce of S = 16 MiB: S per GPU with NVSwitch reduction (H100), 2 x 7/8 x S without (A100)
    (TP_MLP, "8xH100-SXM", "0.06", (16 * MiB / 6e-5, 500 * GB, 0.0, 50 * GB, None)),
    (TP_MLP, "8xA100-SXM", "0.06", (28 * MiB / 6e-5, 325 * GB, 0.0, 25 * GB, "compute")),
    # TP-8 Llama-2-70B decode, batch 8: 160 all-reduces of S = 8 x 8192 x 2 B (S per GPU through NVSwitch's
    # reduction, 2 x 7/8 x S without) and the logits' all-gather of 8 x 32000 x 2 B (7/8 of it)
    (DECODE, "8xH100-SXM", "6", ((160 * 131072 + 448000) / 0.006, 500 * GB, 0.0, 50 * GB, None)),
    (DECODE, "8xA100-SXM", "6", ((160 * 229376 + 448000) / 0.006, 325 * GB, 0.0, 25 * GB, "DRAM")),
    # a pipeline of two stages, M = 2, each sending S = 16 MiB: 3 S / G = 36 ms; 1 ms is below the compute
    (PIPE, "8xH100-SXM", "36", (3 * 16 * MiB / 0.036, 500 * GB, 0.0, 50 * GB, None)),
    (PIPE, "8xH100-SXM", "1", (3 * 16 * MiB / 0.001, 500 * GB, 0.0, 50 * GB, "compute")),
])
def test_provision_json_gives_the_bandwidths_exactly(program, system, target_ms, want):
    (row,) = json.loads(_solar("provision", *program, "--system", system, "--target-ms", target_ms, "--json").stdout)
    keys = ("links_need_bytes_per_s", "links_have_bytes_per_s", "nic_need_bytes_per_s", "nic_have_bytes_per_s",
            "blocked_by")
    assert row["system"] == system and row["target_seconds"] == float(target_ms) * 1e-3
    links, *rest = (row[k] for k in keys)
    assert links == pytest.approx(want[0], rel=1e-12)  # bytes / target: exact up to the last ulp
    assert tuple(rest) == want[1:]


@pytest.mark.parametrize("program,systems,target_ms", [
    (TP_MLP, ("8xH100-SXM", "8xA100-SXM"), "0.06"),
    (PIPE, ("8xH100-SXM",), "36"),
])
def test_analyze_json_carries_provisions_need(program, systems, target_ms):
    prov = json.loads(_solar("provision", *program, "--system", *systems, "--target-ms", target_ms, "--json").stdout)
    rows = json.loads(_solar("analyze", *program, "--system", *systems, "--need-ms", target_ms, "--json").stdout)
    assert [r["system"] for r in rows] == list(systems)
    assert [r["need"] for r in rows] == prov
    plain = json.loads(_solar("analyze", *program, "--system", *systems, "--json").stdout)
    assert [{k: v for k, v in r.items() if k != "need"} for r in rows] == plain
