# case: a primitive without a lowering
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*unsupported JAX primitive 'cholesky'
import jax
import jax.numpy as jnp


def forward(x):
    return jnp.linalg.cholesky(x)


def get_inputs():
    return [jax.ShapeDtypeStruct((8, 8), jnp.float32)]
