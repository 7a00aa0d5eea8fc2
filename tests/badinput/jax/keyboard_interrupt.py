# case: KeyboardInterrupt in get_inputs and no signal arrived: the file's error, not an interrupt
# run: analyze {file} --arch H100-SXM --json
# exit: 2
# line: ^solar: error: keyboard_interrupt\.py:\d+: get_inputs\(\) raised KeyboardInterrupt, though no Ctrl-C arrived
import jax
import jax.numpy as jnp


def forward(x):
    return x


def get_inputs():
    raise KeyboardInterrupt
