# case: os._exit in a JAX forward
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*the model file called os\._exit\(0\) during tracing with jax\.make_jaxpr
import jax
import jax.numpy as jnp


import os


def forward(x):
    os._exit(0)


def get_inputs():
    return [jax.ShapeDtypeStruct((4, 8), jnp.float32)]
