"""A small valid JAX file."""

import jax
import jax.numpy as jnp


def forward(x, w):
    return jax.nn.relu(x @ w)


def get_inputs():
    return [jax.ShapeDtypeStruct((64, 32), jnp.float32), jax.ShapeDtypeStruct((32, 16), jnp.float32)]
