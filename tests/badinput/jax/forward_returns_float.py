# case: forward returns a Python float
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*the program returned only constants
import jax
import jax.numpy as jnp


def forward(x):
    return 3.5


def get_inputs():
    return [jax.ShapeDtypeStruct((4, 8), jnp.float32)]
