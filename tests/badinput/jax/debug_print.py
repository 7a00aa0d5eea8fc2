# case: jax.debug.print in forward (no lowering yet: named, with the line)
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*unsupported JAX primitive 'debug_print' at debug_print\.py:\d+
import jax
import jax.numpy as jnp


def forward(x):
    jax.debug.print('x = {}', x)
    return x * 2


def get_inputs():
    return [jax.ShapeDtypeStruct((4, 8), jnp.float32)]
