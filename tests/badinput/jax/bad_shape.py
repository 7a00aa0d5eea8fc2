# case: a negative dimension in a ShapeDtypeStruct
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*program .bad_shape.: tensor .x. dimension 0: size -1 is not positive
import jax
import jax.numpy as jnp


def forward(x):
    return x


def get_inputs():
    return [jax.ShapeDtypeStruct((-1, 4), jnp.float32)]
