# case: a JAX file without get_inputs
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*no_get_inputs\.py: defines no get_inputs\(\)
import jax
import jax.numpy as jnp


def forward(x):
    return x * 2
