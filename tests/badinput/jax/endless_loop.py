# case: an endless loop in a JAX forward
# run: analyze {file} --json --timeout 15
# exit: 2
# line: ^solar: error: .*did not finish within --timeout 15 s \(stopped while tracing with jax\.make_jaxpr at endless_loop\.py:\d+\)
# process: subprocess
import jax
import jax.numpy as jnp


# The timeout is 15 s, not 5 s, because importing JAX alone can take over 5 s on a loaded
# 2-core machine and the timeout counts the import.
def forward(x):
    while True:
        pass


def get_inputs():
    return [jax.ShapeDtypeStruct((4, 8), jnp.float32)]
