# case: a syntax error in a JAX file
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*syntax_error\.py:\d+: syntax error
import jax
import jax.numpy as jnp


def forward(x:
    return x
