# case: get_inputs returns ints (not a 0-FLOP success)
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*get_inputs\(\) returned no array \(only int\)
import jax
import jax.numpy as jnp


def forward(x, y):
    return x + y


def get_inputs():
    return [1, 2]
