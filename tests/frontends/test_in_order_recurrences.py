"""Every recurrence has one form, an in-order loop, and `solar.ir.interp.run` on the program the
backends count equals the framework's output: torch cumsum (forward, reverse, exclusive), cumprod,
RNN/GRU/LSTM (multi-layer, bidirectional; see also test_recurrent.py), lax.scan, fori_loop."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from solar.frontends.torch import loader
from solar.frontends.torch.convert import convert_with_bindings
from solar.ir.interp import run
from solar.ir.nodes import Seq


class Fn(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *xs):
        return self.fn(*xs)


def _exclusive(x):
    zeros = torch.zeros_like(x.narrow(1, 0, 1))
    return torch.cumsum(torch.cat((zeros, x), 1).narrow(1, 0, x.size(1)), 1)


TORCH_CASES = {
    "cumsum": (Fn(lambda x: torch.cumsum(x, 1)), (5, 9)),
    "cumsum_reverse": (Fn(lambda x: torch.cumsum(x.flip(1), 1).flip(1)), (5, 9)),
    "cumsum_exclusive": (Fn(_exclusive), (5, 9)),
    "cumprod": (Fn(lambda x: torch.cumprod(x * 0.5 + 1.0, 0)), (7, 3)),
    "lstm_2_layers_bidirectional": (nn.LSTM(4, 5, num_layers=2, bidirectional=True), (6, 2, 4)),
    "gru_2_layers_bidirectional": (nn.GRU(4, 5, num_layers=2, bidirectional=True), (6, 2, 4)),
    "rnn_tanh_2_layers": (nn.RNN(4, 5, num_layers=2), (6, 2, 4)),
}


def _torch_outputs(out):
    if isinstance(out, torch.Tensor):
        return [out]
    return [t for o in out for t in _torch_outputs(o)]


@pytest.mark.parametrize("name", sorted(TORCH_CASES))
def test_torch_recurrence_runs_in_the_interpreter_as_counted(name):
    model, shape = TORCH_CASES[name]
    torch.manual_seed(0)
    x = torch.randn(*shape)
    program, bindings = convert_with_bindings(loader.trace_module(model, (x,)))
    assert any(isinstance(n, Seq) for n in program.body)
    feed = {}
    for tensor, (kind, key) in bindings.items():
        feed[tensor] = x.numpy() if kind == "input" else model.state_dict()[key].numpy()
    outs = run(program, feed)
    with torch.no_grad():
        expected = _torch_outputs(model(x))
    assert len(outs) == len(expected)
    for got, ref in zip(outs.values(), expected):
        np.testing.assert_allclose(got, ref.numpy(), rtol=1e-5, atol=1e-5)


def test_jax_scan_and_fori_loop_run_in_the_interpreter_as_counted():
    jax = pytest.importorskip("jax")
    jnp, lax = jax.numpy, jax.lax
    from solar.frontends.jax import lower_callable
    from solar.frontends.jax.check import check_callable

    def scan(h, xs):
        def step(c, x):
            c = jnp.tanh(c * 0.9 + x)
            return c, c.sum()

        return lax.scan(step, h, xs)

    def fori(x):
        return lax.fori_loop(0, 5, lambda i, c: c * 0.5 + jnp.sin(c) + i, x)

    F = lambda *s: jax.ShapeDtypeStruct(s, jnp.float32)  # noqa: E731
    for fn, args in ((scan, [F(3), F(6, 3)]), (fori, [F(4)])):
        program, _ = lower_callable(fn, args)
        (seq,) = [n for n in program.body if isinstance(n, Seq)]
        assert seq.extent == {scan: 6, fori: 5}[fn]
        result = check_callable(fn, args)
        assert [c.mode for c in result.checks] == ["full"] and result.ok, result.checks
