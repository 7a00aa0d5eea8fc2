# case: solar verify --mesh on a shard_map file that defines no reference function
# run: verify {file} --mesh 2
# exit: 2
# line: ^solar: error: verify_shard_map_no_reference\.py: defines no reference\(\*inputs\)
import jax
import jax.numpy as jnp
from jax.sharding import AbstractMesh
from jax.sharding import PartitionSpec as P

MESH = AbstractMesh((2,), ("tp",))


def block(x):
    return jax.lax.psum(x, "tp")


forward = jax.jit(jax.shard_map(block, mesh=MESH, in_specs=(P("tp"),), out_specs=P()))


def get_inputs():
    return [jax.ShapeDtypeStruct((4, 3), jnp.float32)]
