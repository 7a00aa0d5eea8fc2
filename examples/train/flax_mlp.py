"""A Flax MLP trained with optax.adamw: `solar analyze examples/train/flax_mlp.py --train`."""

import flax.linen as nn
import jax
import jax.numpy as jnp

BATCH = 8192
D_IN = 1024
HIDDEN = 4096


class Model(nn.Module):
    @nn.compact
    def __call__(self, x):
        x = nn.gelu(nn.Dense(HIDDEN)(x))
        x = nn.gelu(nn.Dense(HIDDEN)(x))
        return nn.Dense(D_IN)(x)


def get_inputs():
    return [jax.ShapeDtypeStruct((BATCH, D_IN), jnp.float32)]
