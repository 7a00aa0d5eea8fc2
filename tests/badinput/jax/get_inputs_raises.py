# case: get_inputs raises
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*get_inputs_raises\.py:\d+: get_inputs\(\) failed: ValueError: no shapes
import jax
import jax.numpy as jnp


def forward(x):
    return x


def get_inputs():
    raise ValueError('no shapes')
