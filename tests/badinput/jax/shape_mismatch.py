# case: a matmul of mismatched shapes
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*shape_mismatch\.py:\d+: tracing with jax\.make_jaxpr failed: TypeError
import jax
import jax.numpy as jnp


def forward(x):
    return x @ x


def get_inputs():
    return [jax.ShapeDtypeStruct((4, 8), jnp.float32)]
