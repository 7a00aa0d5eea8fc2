# case: an endless loop in a JAX forward
# run: analyze {file} --json --timeout 5
# exit: 2
# line: ^solar: error: .*did not finish within --timeout 5 s \(stopped while tracing with jax\.make_jaxpr at endless_loop\.py:\d+\)
# process: subprocess
import jax
import jax.numpy as jnp


def forward(x):
    while True:
        pass


def get_inputs():
    return [jax.ShapeDtypeStruct((4, 8), jnp.float32)]
