"""Sequence-parallel attention with jax.shard_map, DeepSpeed-Ulysses style, on a mesh of 8 abstract
devices: each rank holds a slice of the sequence for every head; an all-to-all trades it for the
whole sequence of a slice of the heads (split the heads, join the sequence), attention runs per
head, and a second all-to-all trades back (split the sequence, join the heads).

    solar analyze examples/distributed/shard_map_ulysses.py --system 8xH100-SXM
    solar verify examples/distributed/shard_map_ulysses.py --world-size 8

`reference` is the attention on one device; verify runs the shard_map's body on every rank (q, k
and v cut by the sequence, as in_specs says) against it."""

import jax
import jax.numpy as jnp
from jax.sharding import AbstractMesh
from jax.sharding import PartitionSpec as P

SEQ = 16384
HEADS = 32
HEAD_DIM = 128
RANKS = 8
MESH = AbstractMesh((RANKS,), ("sp",))


def reference(q, k, v):  # [sequence, heads, head dim]
    scores = jnp.einsum("qhd,khd->hqk", q, k) / jnp.sqrt(jnp.float32(q.shape[-1])).astype(q.dtype)
    return jnp.einsum("hqk,khd->qhd", jax.nn.softmax(scores, axis=-1), v)


def block(q, k, v):
    heads = [jax.lax.all_to_all(t, "sp", 1, 0, tiled=True) for t in (q, k, v)]  # [SEQ, HEADS / RANKS, d]
    return jax.lax.all_to_all(reference(*heads), "sp", 0, 1, tiled=True)  # [SEQ / RANKS, HEADS, d]


forward = jax.jit(jax.shard_map(block, mesh=MESH, in_specs=(P("sp"),) * 3, out_specs=P("sp")))


def get_inputs():
    return [jax.ShapeDtypeStruct((SEQ, HEADS, HEAD_DIM), jnp.bfloat16)] * 3


def get_verify_inputs():  # sizes the interpreter runs in seconds
    return [jax.ShapeDtypeStruct((32, 16, 4), jnp.float32)] * 3
