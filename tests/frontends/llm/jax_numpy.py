"""A JAX program jax.make_jaxpr cannot trace: its forward converts a traced array to NumPy."""

import jax.numpy as jnp
import numpy as np

N = 16
D = 12


def forward(x, w):
    h = jnp.tanh(x @ w)
    return jnp.asarray(np.square(np.asarray(h)))  # host NumPy on a traced value


def get_inputs():
    rng = np.random.default_rng(0)
    return [rng.standard_normal((N, D), np.float32), rng.standard_normal((D, D), np.float32)]
