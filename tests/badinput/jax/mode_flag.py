# case: --mode on a JAX file
# run: analyze {file} --mode eval --json
# exit: 2
# line: ^solar: error: .*--mode and --infer-structure apply to PyTorch model files, not to JAX files
import jax
import jax.numpy as jnp


def forward(x):
    return x


def get_inputs():
    return [jax.ShapeDtypeStruct((4, 8), jnp.float32)]
