"""Sharded PyTorch programs: functional collectives traced under a fake process group become
collective statements; rank programs run on simulated ranks reproduce the single-device original;
an hf: step with --tp shards its contractions exactly (per-rank FLOPs x ranks = unsharded FLOPs)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from solar.backends.bounds import analyze
from solar.errors import UsageError
from solar.frontends.select import load
from solar.frontends.torch.distributed import fake_world, parse_mesh, world_of
from solar.frontends.torch.hf import scenario
from solar.frontends.torch.tp import load_hf_tp
from solar.hardware import get_spec
from solar.ir.collectives import Kind, run_ranks, sharded_of, verify_sharded
from solar.ir.interp import run

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "sharded" / "tp_mlp.py"
# the fixture's tensor-parallel MLP, its sum all-reduced, all-gathered and max-reduce-scattered back
# (the same values: every rank's block of the stacked sums is the sum), returning the block's output
EDITS = (
    ("            partial = funcol.all_reduce(partial, REDUCTION, dist.group.WORLD)\n",
     ("            partial = funcol.all_reduce(partial, REDUCTION, dist.group.WORLD)\n"
      "            stacked = funcol.all_gather_tensor(partial, 0, dist.group.WORLD)\n"
      '            partial = funcol.reduce_scatter_tensor(stacked, "max", 0, dist.group.WORLD)\n')),
    ("        return x + partial, torch.relu(self.up(x))\n", "        return x + partial\n"),
)


def _tp_file() -> str:
    text = FIXTURE.read_text()
    for old, new in EDITS:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    return text


TP_FILE = _tp_file()


def _params(program) -> dict[str, tuple[int, ...]]:
    return {t.name: program.shape(t.name) for t in program.tensors if t.role.value in ("input", "param")}


@pytest.mark.parametrize("world", [2, 4])
def test_simulated_ranks_reproduce_the_original(tmp_path, world):
    path = tmp_path / "tp.py"
    path.write_text(TP_FILE)
    original = load(str(path), share_layers=False).program
    with fake_world(world):
        sharded = sharded_of(load(str(path), share_layers=False).program, world)
    verify_sharded(sharded)
    assert [c.kind for c in sharded.collectives] == [Kind.ALL_REDUCE, Kind.ALL_GATHER, Kind.REDUCE_SCATTER]
    assert all(c.groups == (tuple(range(world)),) for c in sharded.collectives)
    rng = np.random.default_rng(world)
    shapes = _params(original)
    full = {name: rng.standard_normal(shape).astype(np.float32) for name, shape in shapes.items()}
    (up,) = [n for n in shapes if n.startswith("up")]
    (down,) = [n for n in shapes if n.startswith("down")]
    (x,) = [n for n in shapes if n not in (up, down)]
    k = 8 // world
    ranks = [
        {x: full[x], up: full[up][r * k : (r + 1) * k], down: full[down][:, r * k : (r + 1) * k]}
        for r in range(world)
    ]
    want = next(iter(run(original, full).values()))
    for outputs in run_ranks(sharded, ranks):
        np.testing.assert_allclose(next(iter(outputs.values())), want, rtol=1e-5, atol=1e-5)


TINY_LLAMA = {
    "model_type": "llama", "hidden_size": 256, "intermediate_size": 512, "num_attention_heads": 8,
    "num_key_value_heads": 4, "num_hidden_layers": 2, "vocab_size": 1024, "torch_dtype": "bfloat16",
    "max_position_embeddings": 512, "tie_word_embeddings": False,
}


@pytest.mark.parametrize("tp", [2, 4, 8])
@pytest.mark.parametrize("kind,seq,context", [("prefill", 16, None), ("decode", None, 32)])
def test_tp_shards_every_contraction_exactly(tmp_path, tp, kind, seq, context):
    config = tmp_path / "config.json"
    config.write_text(json.dumps(TINY_LLAMA))
    step = scenario(kind, 2, seq, context)
    spec = get_spec("H100-SXM")
    whole = analyze(load_hf_tp(f"hf:{config}", step, 1).program, spec)
    loaded = load_hf_tp(f"hf:{config}", step, tp)
    sharded = sharded_of(loaded.program, tp)
    verify_sharded(sharded)
    part = analyze(sharded.program, spec)
    tokens = 2 * (seq or 1)
    # 4 key/value heads: at tp 8 each rank keeps one, so 8 ranks project 8 (4 twice): the extra K and
    # V projections are 2 (K, V) x 2 flops x tokens x hidden 256 x head dim 32 x 4 heads x 2 layers
    replicated = 2 * 2 * tokens * 256 * 32 * max(0, tp - 4) * 2
    assert part.totals.contraction_flops * tp == whole.totals.contraction_flops + replicated
    kinds = [c.kind for c in sharded.collectives]
    assert kinds == [Kind.ALL_REDUCE] * 4 + [Kind.ALL_GATHER]  # o_proj and down_proj per layer, logits
    assert sharded.program.shape(sharded.collectives[0].arg) == (2, seq or 1, 256)
    assert sharded.program.numel(sharded.collectives[-1].out) == tokens * 1024


BAD = [
    (lambda: parse_mesh("2xq"), r"--mesh '2xq': write the mesh shape"),
    (lambda: world_of(4, (2, 4)), r"--world-size 4 differs from --mesh 2x4 \(8 ranks\)"),
    (lambda: world_of(None, None), r"--world-size must be 1\.\.65536"),
]


@pytest.mark.parametrize("fn,message", BAD)
def test_bad_flags_are_one_line(fn, message):
    with pytest.raises(UsageError, match=message):
        fn()


def test_tp_that_does_not_divide_the_heads(tmp_path):
    config = tmp_path / "config.json"
    config.write_text(json.dumps(TINY_LLAMA))
    with pytest.raises(UsageError, match=r"--tp 3 must divide the attention heads \(8\)"):
        load_hf_tp(f"hf:{config}", scenario("decode", 1, None, 4), 3)


@pytest.mark.parametrize("world", [2, 4])  # at 8 each rank's contraction has one term: a product, not a sum
def test_per_rank_contractions_times_ranks_are_the_original_s(tmp_path, world):
    path = tmp_path / "tp.py"
    path.write_text(TP_FILE)
    spec = get_spec("H100-SXM")
    whole = analyze(load(str(path), share_layers=False).program, spec)
    with fake_world(world):
        part = analyze(load(str(path), share_layers=False).program, spec)
    assert part.totals.contraction_flops * world == whole.totals.contraction_flops == 2 * (4 * 6 * 8) * 2


def test_dp_replicas_own_their_batch_and_their_tp_groups(tmp_path):
    config = tmp_path / "config.json"
    config.write_text(json.dumps(TINY_LLAMA))
    loaded = load_hf_tp(f"hf:{config}", scenario("decode", 4, None, 8), 2, dp=2)
    sharded = sharded_of(loaded.program, 4)
    verify_sharded(sharded)
    assert {c.groups for c in sharded.collectives} == {((0, 1), (2, 3))}
    assert sharded.program.shape(sharded.collectives[0].arg) == (2, 1, 256)  # batch 4 over 2 replicas
    with pytest.raises(UsageError, match=r"--dp 3 must divide the batch \(4\)"):
        load_hf_tp(f"hf:{config}", scenario("decode", 4, None, 8), 2, dp=3)
