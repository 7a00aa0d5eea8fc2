# case: the Flax module's constructor raises
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*building Model\(\*get_init_inputs\(\)\) failed: ValueError: bad config
import flax.linen as nn
import jax
import jax.numpy as jnp


class Model(nn.Module):
    def __post_init__(self):
        raise ValueError('bad config')

    def __call__(self, x):
        return x


def get_inputs():
    return [jax.ShapeDtypeStruct((4, 8), jnp.float32)]
