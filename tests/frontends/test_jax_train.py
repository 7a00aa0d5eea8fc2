"""JAX training steps: jax.value_and_grad of a loss of a Flax model's output plus an optax update,
as one program; the IR's loss, gradients, parameters and optimizer state checked against JAX's
own evaluation of the step on random data, and the backward's matmul FLOPs counted exactly."""

from __future__ import annotations

import textwrap

import pytest

pytest.importorskip("flax")
pytest.importorskip("optax")

from solar.backends.work import graph_work
from solar.errors import ModelFileError
from solar.frontends.jax.check import check_traced
from solar.frontends.jax.convert import convert
from solar.frontends.jax.train import trace_train_file
from solar.lift import lift

MLP = textwrap.dedent(
    """
    import flax.linen as nn
    import jax, jax.numpy as jnp

    class Model(nn.Module):
        @nn.compact
        def __call__(self, x):
            return nn.Dense(3)(nn.gelu(nn.Dense(6)(x)))

    def get_inputs():
        return [jax.ShapeDtypeStruct((4, 5), jnp.float32)]

    def loss(out, x):
        return jnp.mean((out - 1.0) ** 2)
    """
)


# The same network written with flax.nnx: its nnx.Param leaves are the trained state.
NNX_MLP = textwrap.dedent(
    """
    import jax, jax.numpy as jnp
    from flax import nnx

    class Model(nnx.Module):
        def __init__(self, rngs: nnx.Rngs):
            self.fc1 = nnx.Linear(5, 6, rngs=rngs)
            self.fc2 = nnx.Linear(6, 3, rngs=rngs)

        def __call__(self, x):
            return self.fc2(nnx.gelu(self.fc1(x)))

    def get_inputs():
        return [jax.ShapeDtypeStruct((4, 5), jnp.float32)]

    def loss(out, x):
        return jnp.mean((out - 1.0) ** 2)
    """
)


@pytest.fixture(params=["linen", "nnx"])
def mlp(tmp_path, request):
    path = tmp_path / "mlp.py"
    path.write_text(MLP if request.param == "linen" else NNX_MLP)
    return path


@pytest.mark.parametrize("optimizer", ["none", "sgd", "adamw"])
def test_step_matches_jax(mlp, optimizer):
    traced, notes = trace_train_file(mlp, f"{mlp}:loss", optimizer)
    result = check_traced(traced, seed=0, whole=True)
    assert result.ok, result
    assert any("value_and_grad" in n for n in notes)


def test_dense_backward_flops_exact(mlp):
    traced, _ = trace_train_file(mlp, f"{mlp}:loss", "none")  # dY is data, not a constant
    graph = lift(convert(traced)[0])
    work = graph_work(graph)
    macs = sum(work[n.id].mac_count for n in graph.nodes() if n.is_contraction)
    n, d_in, hidden, d_out = 4, 5, 6, 3
    forward = n * d_in * hidden + n * hidden * d_out
    # backward: dW2 = hᵀ·dY, dH = dY·W2ᵀ, dW1 = xᵀ·dH (x is data: no dX)
    backward = n * hidden * d_out + n * d_out * hidden + n * d_in * hidden
    assert macs == forward + backward


def test_train_needs_parameters(tmp_path):
    path = tmp_path / "f.py"
    path.write_text(
        "import jax, jax.numpy as jnp\ndef forward(x):\n    return x * 2\n"
        "def get_inputs():\n    return [jax.ShapeDtypeStruct((2,), jnp.float32)]\n"
    )
    with pytest.raises(ModelFileError, match="needs parameters"):
        trace_train_file(path)
