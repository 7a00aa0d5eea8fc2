"""A flax.nnx MLP trained with optax.adamw: `solar analyze examples/train/flax_nnx_mlp.py --train`.
The nnx.Param leaves are the trained parameters (and optax's state follows them)."""

import jax
import jax.numpy as jnp
from flax import nnx

BATCH = 8192
D_IN = 1024
HIDDEN = 4096


class Model(nnx.Module):
    def __init__(self, rngs: nnx.Rngs):
        self.fc1 = nnx.Linear(D_IN, HIDDEN, rngs=rngs)
        self.fc2 = nnx.Linear(HIDDEN, HIDDEN, rngs=rngs)
        self.out = nnx.Linear(HIDDEN, D_IN, rngs=rngs)

    def __call__(self, x):
        x = nnx.gelu(self.fc1(x))
        x = nnx.gelu(self.fc2(x))
        return self.out(x)


def get_inputs():
    return [jax.ShapeDtypeStruct((BATCH, D_IN), jnp.float32)]
