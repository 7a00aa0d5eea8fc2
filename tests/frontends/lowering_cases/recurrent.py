"""Cases for solar/frontends/torch/lowerings/recurrent.py: (input, hx, params, has_biases,
num_layers, dropout, train, bidirectional, batch_first); params per layer and direction are
w_ih [G*H, in], w_hh [G*H, H] and, with biases, b_ih, b_hh [G*H] (G = 4 LSTM, 3 GRU, 1 RNN)."""

from __future__ import annotations

from typing import Any

import torch

import solar.frontends.torch.lowerings  # noqa: F401  (registers the solar:: custom ops)
from tests.frontends.lowering_cases import F

aten = torch.ops.aten


def _params(gates: int, inp: int, hidden: int, layers: int, dirs: int, bias: bool) -> list:
    out = []
    for layer in range(layers):
        width = inp if layer == 0 else hidden * dirs
        for _ in range(dirs):
            out += [F(gates * hidden, width), F(gates * hidden, hidden)]
            out += [F(gates * hidden), F(gates * hidden)] if bias else []
    return out


def _cases(gates: int, states: int) -> list[tuple[tuple, dict]]:
    def hx(n: int, *batch: int) -> Any:
        return [F(n, *batch, 3) for _ in range(states)] if states > 1 else F(n, *batch, 3)

    return [
        # time-major, one layer
        (
            (
                F(5, 2, 4),
                hx(1, 2),
                _params(gates, 4, 3, 1, 1, True),
                True,
                1,
                0.0,
                False,
                False,
                False,
            ),
            {},
        ),
        # batch-first, two layers, bidirectional
        (
            (
                F(2, 4, 3),
                hx(4, 2),
                _params(gates, 3, 3, 2, 2, True),
                True,
                2,
                0.0,
                False,
                True,
                True,
            ),
            {},
        ),
        # no biases, three layers
        (
            (
                F(4, 1, 2),
                hx(3, 1),
                _params(gates, 2, 3, 3, 1, False),
                False,
                3,
                0.0,
                False,
                False,
                False,
            ),
            {},
        ),
    ]


solar = (
    torch.ops.solar
)  # the custom ops the loader routes torch's kernels to (registered on import)

CASES: dict[Any, list[tuple[tuple, dict]]] = {
    aten.lstm.input: _cases(4, 2),
    aten.gru.input: _cases(3, 1),
    aten.rnn_tanh.input: _cases(1, 1),
    aten.rnn_relu.input: _cases(1, 1),
    solar.lstm.default: _cases(4, 2)[:1],
    solar.gru.default: _cases(3, 1)[:1],
    solar.rnn_tanh.default: _cases(1, 1)[:1],
    solar.rnn_relu.default: _cases(1, 1)[:1],
}
