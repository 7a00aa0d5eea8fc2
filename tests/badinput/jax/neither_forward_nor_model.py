# case: get_inputs but no forward or Model
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*defines neither forward\(\*inputs\) nor a Flax class Model
import jax
import jax.numpy as jnp


def get_inputs():
    return [jax.ShapeDtypeStruct((4, 8), jnp.float32)]
