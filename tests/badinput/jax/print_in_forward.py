# case: print() in forward and get_inputs with --json
# run: analyze {file} --arch H100-SXM --json
# exit: 0
# stdout: json
import jax
import jax.numpy as jnp


print('import')


def forward(x):
    print('tracing', x)
    return x * 2


def get_inputs():
    print('inputs')
    return [jax.ShapeDtypeStruct((4, 8), jnp.float32)]
