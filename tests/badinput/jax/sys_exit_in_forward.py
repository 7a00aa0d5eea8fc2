# case: sys.exit in forward
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*sys_exit_in_forward\.py:\d+: the model file called sys\.exit\(4\) during tracing with jax\.make_jaxpr
import jax
import jax.numpy as jnp


import sys


def forward(x):
    sys.exit(4)


def get_inputs():
    return [jax.ShapeDtypeStruct((4, 8), jnp.float32)]
