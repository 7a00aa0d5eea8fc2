"""Sharded JAX programs: a shard_map body is rank 0's program, its collectives lowered over the
mesh's axis groups; run on simulated ranks it reproduces the unsharded function."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest

from solar.errors import UnsupportedOpError, UsageError
from solar.frontends.jax.sharded import load_sharded
from solar.ir.collectives import Kind, run_ranks, sharded_of, verify_sharded

HEADER = '''
import jax
import jax.numpy as jnp
from jax.sharding import AbstractMesh
from jax.sharding import PartitionSpec as P

MESH = AbstractMesh({shape}, {names})


def block(x, w_up, w_down):
{body}


forward = jax.jit(jax.shard_map(block, mesh=MESH, in_specs=(P(), P(None, "{axis}"), P("{axis}", None)),
                                out_specs=P(), check_vma=False))


def get_inputs():
    return [jax.ShapeDtypeStruct((4, 6), jnp.float32), jax.ShapeDtypeStruct((6, 8), jnp.float32),
            jax.ShapeDtypeStruct((8, 6), jnp.float32)]
'''

TP = "    return x + jax.lax.psum(jnp.tanh(x @ w_up) @ w_down, '{axis}')"
ALL = """    p = jax.lax.psum(jnp.tanh(x @ w_up) @ w_down, '{axis}')
    g = jax.lax.all_gather(p, '{axis}', axis=0, tiled=True)
    s = jax.lax.psum_scatter(g, '{axis}', scatter_dimension=0, tiled=True)
    a = jax.lax.all_to_all(s, '{axis}', 0, 0, tiled=True)
    r = jax.lax.ppermute(a, '{axis}', [(i, (i + 1) % {n}) for i in range({n})])
    return x + jax.lax.pmax(r, '{axis}') / {n} + jax.lax.axis_index('{axis}')"""


def _file(tmp_path, body, shape=(2,), names=("tp",), axis="tp"):
    n = dict(zip(names, shape))[axis]
    text = HEADER.format(shape=shape, names=names, axis=axis, body=body.format(axis=axis, n=n))
    path = tmp_path / "sharded.py"
    path.write_text(text)
    return path


@pytest.mark.parametrize("shape,names,axis", [((2,), ("tp",), "tp"), ((2, 2), ("dp", "tp"), "tp")])
def test_simulated_ranks_reproduce_the_unsharded_function(tmp_path, shape, names, axis):
    loaded, world = load_sharded(_file(tmp_path, TP, shape, names, axis), None, None)
    sharded = sharded_of(loaded.program, world)
    verify_sharded(sharded)
    groups = ((0, 1), (2, 3)) if len(shape) == 2 else ((0, 1),)
    assert [(c.kind, c.groups) for c in sharded.collectives] == [(Kind.ALL_REDUCE, groups)]
    rng = np.random.default_rng(0)
    x, up, down = (rng.standard_normal(s).astype(np.float32) for s in ((4, 6), (6, 8), (8, 6)))
    want = np.asarray(x + jnp.tanh(x @ up) @ down)
    names_in = [t.name for t in loaded.program.tensors if t.role.value in ("input", "param")]
    k = 8 // 2
    ranks = [
        dict(zip(names_in, (x, up[:, (r % 2) * k : (r % 2 + 1) * k], down[(r % 2) * k : (r % 2 + 1) * k])))
        for r in range(world)
    ]
    for outputs in run_ranks(sharded, ranks):
        np.testing.assert_allclose(next(iter(outputs.values())), want, rtol=1e-4, atol=1e-4)


def test_every_collective_primitive(tmp_path):
    loaded, world = load_sharded(_file(tmp_path, ALL, (4,)), None, None)
    sharded = sharded_of(loaded.program, world)
    verify_sharded(sharded)
    kinds = [c.kind for c in sharded.collectives]
    assert kinds == [Kind.ALL_REDUCE, Kind.ALL_GATHER, Kind.REDUCE_SCATTER, Kind.ALL_TO_ALL, Kind.SEND_RECV, Kind.ALL_REDUCE]
    assert sharded.collectives[4].shift == 1
    assert all(c.groups == ((0, 1, 2, 3),) for c in sharded.collectives)


BAD = [
    ("    return x + jax.lax.ppermute(x, 'tp', [(0, 1), (1, 0), (2, 2), (3, 3)])", UnsupportedOpError, r"only a shift"),
    ("    return x + jax.lax.psum(x, 'tp', axis_index_groups=[[0, 1], [2, 3]])", UnsupportedOpError, r"axis_index_groups"),
]


@pytest.mark.parametrize("body,error,message", BAD)
def test_unsupported_forms_are_one_line(tmp_path, body, error, message):
    with pytest.raises(error, match=message):
        load_sharded(_file(tmp_path, body, (4,)), None, None)


def test_the_file_s_mesh_decides_the_world(tmp_path):
    with pytest.raises(UsageError, match=r"the file's mesh is 2 \(2 ranks\)"):
        load_sharded(_file(tmp_path, TP), 8, None)


UNSHARDED = '''
import jax
import jax.numpy as jnp


def forward(x, w_up, w_down):
    return x + jnp.tanh(x @ w_up) @ w_down


def get_inputs():
    return [jax.ShapeDtypeStruct((4, 6), jnp.float32), jax.ShapeDtypeStruct((6, 8), jnp.float32),
            jax.ShapeDtypeStruct((8, 6), jnp.float32)]
'''


def test_per_rank_contractions_times_ranks_are_the_unsharded_function_s(tmp_path):
    from solar.backends.bounds import analyze
    from solar.frontends.jax import lower_file
    from solar.hardware import get_spec

    spec = get_spec("H100-SXM")
    plain = tmp_path / "plain.py"
    plain.write_text(UNSHARDED)
    whole = analyze(lower_file(plain)[0], spec).totals.contraction_flops
    loaded, world = load_sharded(_file(tmp_path, TP), None, None)
    part = analyze(loaded.program, spec).totals.contraction_flops
    assert part * world == whole == 2 * (4 * 6 * 8) * 2


A2A = '''
import jax
import jax.numpy as jnp
from jax.sharding import AbstractMesh
from jax.sharding import PartitionSpec as P

MESH = AbstractMesh((4,), ("sp",))


def block(x):
    return jnp.tanh(jax.lax.all_to_all(x * 2, "sp", {split}, {concat}, tiled={tiled}))


forward = jax.jit(jax.shard_map(block, mesh=MESH, in_specs=(P({ins}),), out_specs=P({outs}), check_vma=False))


def reference(x):
    return jnp.tanh({reference})


def get_inputs():
    return [jax.ShapeDtypeStruct({shape}, jnp.float32)]
'''

# (split, concat, tiled, in spec, out spec, global input, reference, per-rank S in bytes, out); each
# reference is what jax.shard_map computes on 4 real host devices (checked with
# XLA_FLAGS=--xla_force_host_platform_device_count=4)
ALL_TO_ALL = [
    # rows sharded -> columns sharded (sequence to head parallelism): the same global array
    (1, 0, True, "'sp', None", "None, 'sp'", (8, 12), "x * 2", 2 * 12 * 4, (8, 3)),
    (0, 1, True, "None, 'sp'", "'sp', None", (8, 12), "x * 2", 8 * 3 * 4, (2, 12)),
    # rank p's j-th row block goes to rank j: rank p ends with row p of every rank's block
    (0, 0, True, "'sp', None", "'sp', None", (16, 12), "(x * 2).reshape(4, 4, 12).transpose(1, 0, 2).reshape(16, 12)",
     4 * 12 * 4, (4, 12)),
    # tiled=False: the split axis (of the group's size) removed, the senders' axis inserted at concat
    (1, 0, False, "'sp', None", "None, 'sp'", (12, 4), "(x * 2).reshape(4, 3, 4).transpose(0, 2, 1).reshape(4, 12)",
     3 * 4 * 4, (4, 3)),
]


@pytest.mark.parametrize("split,concat,tiled,ins,outs,shape,reference,size,out", ALL_TO_ALL)
def test_all_to_all_across_axes_reproduces_the_reference(tmp_path, split, concat, tiled, ins, outs, shape, reference, size, out):
    from solar.api import check_sharded
    from solar.ir.collectives import full_bytes

    path = tmp_path / "a2a.py"
    path.write_text(A2A.format(split=split, concat=concat, tiled=tiled, ins=ins, outs=outs, shape=shape, reference=reference))
    loaded, world = load_sharded(path, None, None)
    sharded = sharded_of(loaded.program, world)
    (c,) = sharded.collectives
    assert (c.kind, c.size, full_bytes(c, sharded.program)) == (Kind.ALL_TO_ALL, 4, size)
    result = check_sharded(str(path), None, "4")
    assert [(r.rank, r.shape) for r in result.checks] == [(r, out) for r in range(4)]
    assert result.bad == ()


def test_ulysses_attention_trades_sequence_for_heads_with_exact_bytes():
    from pathlib import Path

    from solar.backends.bounds import analyze
    from solar.hardware import get_spec
    from solar.ir.collectives import full_bytes

    seq, heads, d, ranks = 16384, 32, 128, 8
    path = Path(__file__).resolve().parents[3] / "examples" / "distributed" / "shard_map_ulysses.py"
    loaded, world = load_sharded(path, None, None)
    sharded = sharded_of(loaded.program, world)
    verify_sharded(sharded)
    # q, k, v to heads and the result back: each the rank's [seq / 8, 32, 128] bf16 (its whole buffer)
    moves = [(c.kind, c.size, full_bytes(c, sharded.program)) for c in sharded.collectives]
    assert moves == [(Kind.ALL_TO_ALL, ranks, seq // ranks * heads * d * 2)] * 4
    # QK^T and PV over the whole sequence for 4 of the 32 heads: an eighth of the attention's
    flops = analyze(sharded.program, get_spec("H100-SXM")).totals.contraction_flops
    assert flops * ranks == 2 * (2 * seq * seq * d * heads)
