"""The sharded PyTorch examples traced as rank 0 of a fake process group: their collectives with
exact bytes (S, nccl-tests' size), and their per-rank contractions against the single-device
original's (a data-parallel step splits them exactly; a pipeline adds its bubble)."""

from __future__ import annotations

from pathlib import Path

import pytest

from solar.backends.bounds import analyze
from solar.frontends.select import load
from solar.frontends.torch.distributed import fake_world
from solar.hardware import get_spec
from solar.ir.collectives import Kind, full_bytes, sharded_of, verify_sharded

MiB = 1 << 20
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "distributed"
H, F = 4096, 16384  # dp_train_step
PH, PF, PT, M = 8192, 28672, 4096, 4  # pp_two_stage: hidden, ffn, tokens per micro-batch, micro-batches

CASES = [  # (file, world, [(kind, shift, S bytes)], rank contraction flops, single-device contraction flops)
    # one bucket: both gradients and the loss, bf16; five products of 2 x tokens x H x F flops each
    # (two forward, the gradients of both weights and of the hidden activations; none for x)
    ("dp_train_step.py", 8, [(Kind.ALL_REDUCE, 1, (2 * H * F + 1) * 2)],
     5 * 2 * (32768 // 8) * H * F, 5 * 2 * 32768 * H * F),
    # M + 1 ticks, each one block and one send of the [tokens, hidden] bf16 activations to the next rank
    ("pp_two_stage.py", 2, [(Kind.SEND_RECV, 1, PT * PH * 2)] * (M + 1),
     (M + 1) * 2 * 2 * PT * PH * PF, 2 * M * 2 * 2 * PT * PH * PF),
]


@pytest.mark.parametrize("file,world,moves,rank_flops,whole_flops", CASES)
def test_examples_collectives_and_contractions(file, world, moves, rank_flops, whole_flops):
    spec = get_spec("H100-SXM")
    whole = load(str(EXAMPLES / file), share_layers=False)
    with fake_world(world):
        loaded = load(str(EXAMPLES / file), share_layers=False)
    sharded = sharded_of(loaded.program, world)
    verify_sharded(sharded)
    assert [(c.kind, c.shift, full_bytes(c, sharded.program)) for c in sharded.collectives] == moves
    assert all(c.groups == (tuple(range(world)),) for c in sharded.collectives)
    assert analyze(sharded.program, spec).totals.contraction_flops == rank_flops
    assert analyze(whole.program, spec).totals.contraction_flops == whole_flops


PERMUTE = '''
import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol


class Model(torch.nn.Module):
    def forward(self, x):
        n = dist.get_world_size()
        return funcol.permute_tensor(x.flatten(), {ring}, dist.group.WORLD).view_as(x) * 2


def get_inputs():
    return [torch.randn(4, 6)]
'''


@pytest.mark.parametrize("ring,shift", [("[(r + 1) % n for r in range(n)]", 1), ("[(r + 3) % n for r in range(n)]", 3),
                                        ("list(range(n))", 0)])
def test_permute_tensor_is_a_send_recv_by_its_shift(tmp_path, ring, shift):
    path = tmp_path / "permute.py"
    path.write_text(PERMUTE.format(ring=ring))
    with fake_world(4):
        program = load(str(path), share_layers=False).program
    (c,) = sharded_of(program, 4).collectives
    assert (c.kind, c.shift, full_bytes(c, program)) == (Kind.SEND_RECV, shift, 4 * 6 * 4)


def test_a_permutation_that_is_not_a_shift_is_one_line(tmp_path):
    from solar.errors import UnsupportedOpError

    path = tmp_path / "swap.py"
    path.write_text(PERMUTE.format(ring="[1, 0, 3, 2]"))  # 0 -> 1 but 1 -> 0: rank 0 receives from 1
    with fake_world(4), pytest.raises(UnsupportedOpError, match=r"rank 0 sends to 1 but receives from 1"):
        load(str(path), share_layers=False)


@pytest.mark.parametrize("path,kind,nbytes,scale", [
    # two all-to-alls of the 8 experts x 1024 chosen rows x 4096 bf16: 64 MiB each; every rank
    # routes its own 4096 tokens, so a rank computes what one GPU computes for 4096 tokens
    ("examples/distributed/moe_ep.py", Kind.ALL_TO_ALL, 64 * MiB, 1),
    # two all-reduces of the [4, 2048, 4096] bf16 partial sums; heads, key/value heads and the MLP
    # split 8 ways exactly
    ("examples/distributed/tp_decoder_layer.py", Kind.ALL_REDUCE, 64 * MiB, 8),
])
def test_examples_shard_exactly(path, kind, nbytes, scale):
    spec = get_spec("H100-SXM")
    whole = analyze(load(path, share_layers=False).program, spec).totals.contraction_flops
    with fake_world(8):
        sharded = sharded_of(load(path, share_layers=False).program, 8)
    verify_sharded(sharded)
    assert [c.kind for c in sharded.collectives] == [kind, kind]
    assert [full_bytes(c, sharded.program) for c in sharded.collectives] == [nbytes, nbytes]
    assert all(c.groups == (tuple(range(8)),) for c in sharded.collectives)
    assert analyze(sharded.program, spec).totals.contraction_flops * scale == whole
