"""A tensor-parallel MLP block with jax.shard_map on a mesh of 8 abstract devices: the first weight
split by columns, the second by rows, the partial sums psum'd (the JAX twin of
examples/distributed/tp_mlp.py).

    solar analyze examples/distributed/shard_map_mlp.py --system 8xH100-SXM
    solar verify examples/distributed/shard_map_mlp.py --world-size 8

`reference` is the block on one device; verify runs the shard_map's body on every rank of the mesh
(operands cut as in_specs says) against it."""

import jax
import jax.numpy as jnp
from jax.sharding import AbstractMesh
from jax.sharding import PartitionSpec as P

TOKENS = 2048
HIDDEN = 4096
FFN = 14336
RANKS = 8
MESH = AbstractMesh((RANKS,), ("tp",))


def block(x, w_up, w_down):
    partial = jax.nn.gelu(x @ w_up) @ w_down
    return x + jax.lax.psum(partial, "tp")


forward = jax.jit(
    jax.shard_map(block, mesh=MESH, in_specs=(P(), P(None, "tp"), P("tp", None)), out_specs=P())
)


def reference(x, w_up, w_down):
    return x + jax.nn.gelu(x @ w_up) @ w_down


def get_inputs():
    return [
        jax.ShapeDtypeStruct((TOKENS, HIDDEN), jnp.bfloat16),
        jax.ShapeDtypeStruct((HIDDEN, FFN), jnp.bfloat16),
        jax.ShapeDtypeStruct((FFN, HIDDEN), jnp.bfloat16),
    ]


def get_verify_inputs():  # sizes the interpreter runs in seconds
    return [
        jax.ShapeDtypeStruct((8, 32), jnp.float32),
        jax.ShapeDtypeStruct((32, 64), jnp.float32),
        jax.ShapeDtypeStruct((64, 32), jnp.float32),
    ]
