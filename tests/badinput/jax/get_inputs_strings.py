# case: get_inputs returns strings
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*an input of type str is not an array
import jax
import jax.numpy as jnp


def forward(x):
    return x


def get_inputs():
    return ['a']
