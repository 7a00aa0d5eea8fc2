"""A Flax (linen) MLP: Dense -> ReLU -> Dense -> ReLU -> Dense on a batch of feature vectors.
Three GEMMs with bias and activation epilogues; the hidden activations need not reach DRAM."""

import flax.linen as nn
import jax
import jax.numpy as jnp

BATCH_SIZE = 128
INPUT_SIZE = 4096
HIDDEN_SIZE = 8192
OUTPUT_SIZE = 1000


class Model(nn.Module):
    hidden: int
    out: int

    @nn.compact
    def __call__(self, x):
        x = nn.relu(nn.Dense(self.hidden)(x))
        x = nn.relu(nn.Dense(self.hidden)(x))
        return nn.Dense(self.out)(x)


def get_inputs():
    return [jax.ShapeDtypeStruct((BATCH_SIZE, INPUT_SIZE), jnp.float32)]


def get_init_inputs():
    return [HIDDEN_SIZE, OUTPUT_SIZE]
