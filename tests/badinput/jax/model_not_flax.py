# case: Model is a plain class
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*Model\(\.\.\.\) is a Model, not a Flax module
import jax
import jax.numpy as jnp


class Model:
    def __call__(self, x):
        return x


def get_inputs():
    return [jax.ShapeDtypeStruct((4, 8), jnp.float32)]
