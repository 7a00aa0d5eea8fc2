# case: get_params returns strings
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*an input of type str is not an array
import jax
import jax.numpy as jnp


def forward(params, x):
    return x


def get_params():
    return {'w': 'weights.bin'}


def get_inputs():
    return [jax.ShapeDtypeStruct((4, 8), jnp.float32)]
