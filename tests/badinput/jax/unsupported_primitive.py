# case: a primitive without a lowering
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*unsupported JAX primitive 'sort'
import jax
import jax.numpy as jnp


def forward(x):
    return jnp.sort(x, axis=1)


def get_inputs():
    return [jax.ShapeDtypeStruct((4, 8), jnp.float32)]
