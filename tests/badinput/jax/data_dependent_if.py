# case: a Python if on a traced value
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*data_dependent_if\.py:\d+: tracing with jax\.make_jaxpr failed: TracerBoolConversionError
import jax
import jax.numpy as jnp


def forward(x):
    if x.sum() > 0:
        return x
    return -x


def get_inputs():
    return [jax.ShapeDtypeStruct((4, 8), jnp.float32)]
