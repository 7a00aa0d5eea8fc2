# case: forward returns a list of an array it made from nothing, repeated by * (was a 0-FLOP, 0-byte success)
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: forward_returns_created_list\.py: the program returned only constants \(arrays it created
import jax
import jax.numpy as jnp


def forward(x):
    return [jnp.ones(2)] * 3


def get_inputs():
    return [jax.ShapeDtypeStruct((4, 8), jnp.float32)]
