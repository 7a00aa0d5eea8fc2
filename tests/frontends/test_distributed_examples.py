"""The sharded PyTorch examples traced as rank 0 of 8: their collectives with exact bytes, and their
per-rank contraction FLOPs against the same file on one rank."""

from __future__ import annotations

import pytest

from solar.backends.bounds import analyze
from solar.frontends.select import load
from solar.frontends.torch.distributed import fake_world
from solar.hardware import get_spec
from solar.ir.collectives import Kind, full_bytes, sharded_of, verify_sharded

MiB = 1 << 20


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
