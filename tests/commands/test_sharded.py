"""`solar analyze FILE --system ...`: sharded programs on systems from the command line: JSON with
exact collective bytes, and one-line errors (exit 2) for flags that do not fit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MiB = 1 << 20


def _solar(*argv: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "100"}
    return subprocess.run([sys.executable, "-m", "solar.cli", *argv], capture_output=True, text=True, cwd=ROOT,
                          env=env, timeout=600, check=False)


@pytest.mark.parametrize("file,flags", [
    ("examples/distributed/tp_mlp.py", ("--world-size", "8")),
    ("examples/distributed/dtensor_mlp.py", ("--world-size", "8")),
    ("examples/distributed/shard_map_mlp.py", ()),
])
def test_torch_and_jax_tp_blocks_give_the_same_bounds(file, flags):
    done = _solar("analyze", file, *flags, "--system", "8xA100-SXM", "8xH100-SXM", "--json")
    assert done.returncode == 0, done.stderr
    rows = {r["system"]: r for r in json.loads(done.stdout)}
    (a100,) = rows["8xA100-SXM"]["collectives"]
    (h100,) = rows["8xH100-SXM"]["collectives"]
    # all-reduce of the [2048, 4096] bf16 partial sums: S = 16 MiB; 2 x 7/8 x S without NVLS
    assert (a100["kind"], a100["ranks"], a100["full_bytes"], a100["gpu_bytes"]) == ("all_reduce", 8, 16 * MiB, 28 * MiB)
    assert h100["gpu_bytes"] == 16 * MiB  # NVLS: S
    for r in rows.values():
        assert r["fused_seconds"] == max(r["compute_seconds"], r["memory_seconds"], r["comm_seconds"])
        assert r["unfused_seconds"] > r["fused_seconds"]


def test_dtensor_and_functional_collective_tp_are_the_same_rank_program():
    levels = ("compute_seconds", "memory_seconds", "comm_seconds", "fused_seconds", "cache_aware_seconds", "unfused_seconds")
    rows = []
    for file in ("tp_mlp.py", "dtensor_mlp.py"):
        done = _solar("analyze", f"examples/distributed/{file}", "--world-size", "8", "--system", "8xH100-SXM", "--json")
        assert done.returncode == 0, done.stderr
        (row,) = json.loads(done.stdout)
        rows.append({k: row[k] for k in levels})
    assert rows[0] == rows[1]


SYSTEMS = ("8xH100-SXM", "8xH200-SXM", "8xB200", "8xA100-SXM", "2xL4-PCIe")


@pytest.mark.parametrize("flags,tokens", [
    (("--scenario", "decode", "--context", "4096", "--batch", "8"), 8),
    (("--scenario", "prefill", "--seq", "512"), 512),
])
def test_tp8_llama2_70b_on_every_shipped_system(flags, tokens):
    done = _solar("analyze", "hf:tests/fixtures/hf/llama2-70b.json", *flags, "--tp", "8", "--system", *SYSTEMS, "--json")
    assert done.returncode == 0, done.stderr
    rows = {r["system"]: r for r in json.loads(done.stdout)}
    assert sorted(rows) == sorted([*SYSTEMS[:4], "2xL4-PCIe x4 nodes"])
    for r in rows.values():
        kinds = [c["kind"] for c in r["collectives"]]
        assert kinds == ["all_reduce"] * 160 + ["all_gather"]  # o_proj and down_proj of 80 layers; logits
        assert {c["full_bytes"] for c in r["collectives"][:-1]} == {tokens * 8192 * 2}  # fp16 hidden states
        assert r["collectives"][-1]["full_bytes"] == tokens * 32000 * 2
        assert r["comm_seconds"] > 0
        assert r["fused_seconds"] == max(r["compute_seconds"], r["memory_seconds"], r["comm_seconds"])
    assert rows["2xL4-PCIe x4 nodes"]["collectives"][0]["node_bytes"] > 0


def test_need_ms_prints_the_bandwidth_each_system_needs():
    done = _solar("analyze", "examples/distributed/tp_mlp.py", "--world-size", "8", "--system", "8xH100-SXM",
                  "8xA100-SXM", "--need-ms", "0.06")
    assert done.returncode == 0, done.stderr
    lines = {line.split()[0]: line.split() for line in done.stdout.splitlines() if line.startswith("8x")}
    # 16 MiB per GPU in 60 us = 279.6 GB/s; the A100's compute alone takes longer than 60 us
    assert lines["8xH100-SXM"][-5:] == ["279.6", "500.0", "0.0", "50.0", "yes"]
    assert "compute" in " ".join(lines["8xA100-SXM"][-5:])


@pytest.mark.parametrize("target_ms,want", [
    # stages of 11.48 and 11.92 ms each send or receive S = 2048 x 4096 x 2 B = 16 MiB per micro-batch;
    # with M = 2 the schedule is 36 ms once both stages' S x (1/G) pass 11.92 ms: 3 S / G = 36 ms
    ("36", ["1.4", "500.0", "0.0", "50.0", "yes"]),
    # 1 ms: below the compute alone; the links alone would need 3 S / 1 ms
    ("1", ["50.3", "500.0", "0.0", "50.0", "no:", "compute", "alone", "exceeds", "it"]),
])
def test_need_ms_with_a_pipeline_inverts_the_schedule(target_ms, want):
    flags = ("--scenario", "prefill", "--seq", "2048", "--batch", "2", "--pp", "2", "--microbatches", "2")
    done = _solar("analyze", "hf:tests/fixtures/hf/llama2-7b.json", *flags, "--system", "8xH100-SXM", "--need-ms", target_ms)
    assert done.returncode == 0, done.stderr
    (line,) = [line.split() for line in done.stdout.splitlines() if line.startswith("8xH100-SXM ") and "have" not in line
               and len(line.split()) >= 6 and line.split()[2] == "500.0"]
    assert line[1:] == want


def test_pp4_tp2_llama2_7b_decode_stage_by_stage():
    flags = ("--scenario", "decode", "--context", "1024", "--batch", "8", "--tp", "2", "--pp", "4", "--microbatches", "4")
    done = _solar("analyze", "hf:tests/fixtures/hf/llama2-7b.json", *flags, "--system", "8xH100-SXM", "2xL4-PCIe", "--json")
    assert done.returncode == 0, done.stderr
    rows = {r["system"]: r for r in json.loads(done.stdout)}
    assert sorted(rows) == ["2xL4-PCIe x4 nodes", "8xH100-SXM"]
    hidden = 2 * 1 * 4096 * 2  # micro-batch of 2 sequences x 1 token x hidden 4096, fp16
    for name, r in rows.items():
        assert r["hidden_bytes"] == hidden and r["microbatches"] == 4
        assert [s["layers"] for s in r["stages"]] == [8, 8, 8, 8]
        assert [s["rank"] % 2 for s in r["stages"]] == [0, 0, 0, 0]
        for s, stage in enumerate(r["stages"]):
            kinds = [c["kind"] for c in stage["collectives"]]
            head = ["all_gather"] if s == 3 else []
            assert kinds == ["all_reduce"] * 16 + head + ["send_recv"]  # o_proj, down_proj of 8 layers
            (send,) = [c for c in stage["collectives"] if c["kind"] == "send_recv"]
            assert send["full_bytes"] == hidden
            assert send["gpu_bytes"] == (hidden / 2 if s == 0 else hidden)  # first stage: S / tp each
        assert r["slowest_stage"] == 3  # the output head
        steps = [s["fused_seconds"] for s in r["stages"]]
        assert r["fused_seconds"] == pytest.approx(sum(steps) + 3 * max(steps), rel=1e-12)
    # 2 ranks per L4 node: every stage boundary crosses nodes
    l4 = rows["2xL4-PCIe x4 nodes"]["stages"]
    assert [c["node_bytes"] for s in l4 for c in s["collectives"] if c["kind"] == "send_recv"] == [hidden] * 4


def test_compare_across_systems_has_a_row_per_system_and_the_ratio_to_the_first():
    argv = ("examples/distributed/tp_mlp.py", "--world-size", "8", "--system", "8xH100-SXM", "8xA100-SXM")
    done = _solar("compare", *argv, "--json")
    assert done.returncode == 0, done.stderr
    rows = {r["system"]: r for r in json.loads(done.stdout)}
    assert [c["gpu_bytes"] for c in rows["8xA100-SXM"]["collectives"]] == [28 * MiB]
    assert [c["gpu_bytes"] for c in rows["8xH100-SXM"]["collectives"]] == [16 * MiB]
    same = _solar("analyze", *argv, "--json")
    assert json.loads(same.stdout) == json.loads(done.stdout)
    table = _solar("compare", *argv)
    assert table.returncode == 0, table.stderr
    lines = {line.split()[0]: line.split() for line in table.stdout.splitlines() if line.startswith("8x")}
    ratio = rows["8xA100-SXM"]["fused_seconds"] / rows["8xH100-SXM"]["fused_seconds"]
    assert (lines["8xH100-SXM"][-1], lines["8xA100-SXM"][-1]) == ("1.00", f"{ratio:.2f}")


@pytest.mark.parametrize("fixture", ["mixtral-tiny", "qwen3-moe-tiny"])
def test_moe_pipeline_stages_at_tp1(fixture):
    flags = ("--scenario", "decode", "--context", "64", "--batch", "4", "--pp", "2", "--microbatches", "2")
    done = _solar("analyze", f"hf:tests/fixtures/hf/{fixture}.json", *flags, "--system", "8xH100-SXM", "--json")
    assert done.returncode == 0, done.stderr
    (row,) = json.loads(done.stdout)
    hidden = json.loads((ROOT / f"tests/fixtures/hf/{fixture}.json").read_text())["hidden_size"]
    assert row["hidden_bytes"] == 2 * 1 * hidden * 2  # micro-batch of 2 x 1 token, bf16
    assert [[c["kind"] for c in s["collectives"]] for s in row["stages"]] == [["send_recv"], ["send_recv"]]


BAD = [
    (("analyze", "hf:tests/fixtures/hf/mixtral-tiny.json", "--scenario", "prefill", "--seq", "4", "--system",
      "8xH100-SXM", "--tp", "2", "--sp"), "--sp with mixture-of-experts layers is not supported"),
    (("compare", "examples/distributed/tp_mlp.py", "--arch", "H100-SXM", "--system", "8xH100-SXM"),
     "give --arch (GPUs) or --system (multi-GPU systems), not both"),
    (("compare", "examples/distributed/tp_mlp.py", "--world-size", "8"), "--world-size needs --system NAME"),
    (("compare", "hf:tests/fixtures/hf/llama2-7b.json", "--scenario", "decode"), "solar compare takes hf: models with --system"),
    (("compare", "examples/distributed/tp_mlp.py", "--system", "8xH100-SXM", "--plot", "x.svg"),
     "--plot, --host and --train apply to --arch"),
    (("compare", "examples/distributed/tp_mlp.py", "--system", "8xV100"), "unknown system '8xV100'"),
    (("analyze", "examples/distributed/tp_mlp.py", "--system", "8xH100-SXM", "--pp", "2"),
     "--tp, --ep, --sp, --dp, --pp and --microbatches apply to hf:"),
    (("analyze", "hf:tests/fixtures/hf/llama2-7b.json", "--pp", "2"), "--pp needs --system NAME"),
    (("analyze", "hf:tests/fixtures/hf/llama2-7b.json", "--microbatches", "2"), "--microbatches needs --system NAME"),
    (("analyze", "hf:tests/fixtures/hf/llama2-7b.json", "--system", "8xH100-SXM", "--pp", "64", "--scenario", "decode", "--context", "64"),
     "--pp 64 exceeds the 32 decoder layers"),
    (("analyze", "hf:tests/fixtures/hf/llama2-7b.json", "--system", "8xH100-SXM", "--pp", "2", "--batch", "3",
      "--microbatches", "2", "--scenario", "decode", "--context", "64"), "--dp 1 x --microbatches 2 must divide the batch (3)"),
    (("analyze", "hf:tests/fixtures/hf/llama2-7b.json", "--system", "8xH100-SXM", "--nodes", "1", "--tp", "8",
      "--pp", "2", "--scenario", "decode", "--context", "64"), "the pipeline has 16 ranks (tp 8 x pp 2 x dp 1) but 8xH100-SXM has 8 GPUs"),
    (("analyze", "examples/distributed/tp_mlp.py", "--world-size", "8"), "--world-size needs --system NAME"),
    (("analyze", "examples/distributed/tp_mlp.py", "--system", "8xH100-SXM", "--tp", "8"), "--tp, --ep, --sp, --dp, --pp and --microbatches apply to hf:"),
    (("analyze", "examples/distributed/tp_mlp.py", "--dp", "2"), "--dp needs --system NAME"),
    (("analyze", "hf:tests/fixtures/hf/mixtral-tiny.json", "--ep", "2"), "--ep needs --system NAME"),
    (("analyze", "hf:tests/fixtures/hf/llama2-7b.json", "--system", "8xH100-SXM", "--tp", "2", "--sp", "--scenario",
      "decode", "--context", "64"), "--sp needs --tp 2 to divide the new tokens per sequence (1)"),
    (("analyze", "hf:tests/fixtures/hf/mixtral-tiny.json", "--system", "8xH100-SXM", "--tp", "2", "--ep", "3",
      "--scenario", "decode", "--context", "64"), "--ep 3 must divide the tp x dp = 2 ranks"),
    (("analyze", "hf:tests/fixtures/hf/mixtral-8x7b.json", "--system", "8xH100-SXM", "--tp", "4", "--dp", "2", "--pp",
      "2", "--ep", "8", "--scenario", "decode", "--context", "64", "--batch", "4"), "--ep 8 spans nodes of 8xH100-SXM x2 nodes"),
    (("analyze", "examples/distributed/tp_mlp.py", "--system", "8xV100"), "unknown system '8xV100'"),
    (("analyze", "examples/distributed/tp_mlp.py", "--system", "8xH100-SXM", "--nodes", "0"), "--nodes"),
    (("analyze", "examples/distributed/tp_mlp.py", "--system", "8xH100-SXM", "--world-size", "16", "--nodes", "1"),
     "the program has 16 ranks but 8xH100-SXM has 8 GPUs"),
    (("analyze", "examples/distributed/tp_mlp.py", "--system", "8xH100-SXM", "--mesh", "2xx"), "--mesh '2xx'"),
    (("analyze", "examples/distributed/tp_mlp.py", "--need-ms", "1"), "--need-ms needs --system NAME"),
    (("analyze", "examples/distributed/tp_mlp.py", "--system", "8xH100-SXM", "--need-ms", "-1"), "--need-ms -1.0"),
    (("analyze", "examples/distributed/shard_map_mlp.py", "--arch", "H100-SXM"),
     "the program is sharded over a mesh: bound it per rank with --system NAME"),
]


@pytest.mark.parametrize("argv,message", BAD)
def test_bad_flags_are_one_line(argv, message):
    done = _solar(*argv)
    assert done.returncode == 2
    assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
