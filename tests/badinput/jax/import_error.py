# case: a JAX file importing a missing package
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: .*import_error\.py:\d+: importing the model file failed: ModuleNotFoundError
import jax
import jax.numpy as jnp


import no_such_jax_addon
