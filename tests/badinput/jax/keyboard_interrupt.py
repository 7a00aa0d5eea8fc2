# case: KeyboardInterrupt in get_inputs
# run: analyze {file} --arch H100-SXM --json
# exit: 130
# line: ^solar: interrupted$
import jax
import jax.numpy as jnp


def forward(x):
    return x


def get_inputs():
    raise KeyboardInterrupt
