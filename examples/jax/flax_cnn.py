"""A Flax (linen) convolution block in NHWC: conv3x3 (stride 2) -> batch norm (inference) -> ReLU
-> conv3x3 -> ReLU -> 2x2 max pool. Strided and padded convolutions count only real multiply-adds."""

import flax.linen as nn
import jax
import jax.numpy as jnp

BATCH = 32
HEIGHT = 112
WIDTH = 112
IN_CHANNELS = 64
OUT_CHANNELS = 128


class Model(nn.Module):
    features: int

    @nn.compact
    def __call__(self, x):
        x = nn.Conv(
            self.features, (3, 3), strides=(2, 2), padding=((1, 1), (1, 1)), use_bias=False
        )(x)
        x = nn.BatchNorm(use_running_average=True)(x)
        x = nn.relu(x)
        x = nn.relu(nn.Conv(self.features, (3, 3), padding="SAME")(x))
        return nn.max_pool(x, (2, 2), strides=(2, 2))


def get_inputs():
    return [jax.ShapeDtypeStruct((BATCH, HEIGHT, WIDTH, IN_CHANNELS), jnp.float32)]


def get_init_inputs():
    return [OUT_CHANNELS]
