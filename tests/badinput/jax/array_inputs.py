# case: real arrays in get_inputs (replaced by their shapes)
# run: analyze {file} --arch H100-SXM --json
# exit: 0
# stdout: json
import jax
import jax.numpy as jnp


import numpy as np


def forward(x):
    return x * 2


def get_inputs():
    return [np.zeros((4, 8), np.float32)]
