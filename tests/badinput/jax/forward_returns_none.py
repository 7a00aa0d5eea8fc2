# case: forward returns None (not a 0-FLOP success)
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*forward_returns_none\.py: the program returned nothing \(None\)
import jax
import jax.numpy as jnp


def forward(x):
    y = x * 2


def get_inputs():
    return [jax.ShapeDtypeStruct((4, 8), jnp.float32)]
