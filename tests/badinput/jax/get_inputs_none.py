# case: get_inputs returns None
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*get_inputs_none\.py: 
import jax
import jax.numpy as jnp


def forward(x):
    return x


def get_inputs():
    return None
