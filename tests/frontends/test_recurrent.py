"""Recurrent nets (nn.RNN / GRU / LSTM): one in-order loop over the time step per layer and
direction (size independent of the sequence length); the interpreter running that very program
reproduces PyTorch (multi-layer, bidirectional, batch_first); counts are T x the body; exact MACs."""

from __future__ import annotations


import pytest
import torch
import torch.nn as nn

from solar.backends.memory import fused_dram_bytes, op_groups, unfused_dram_bytes
from solar.backends.work import graph_work, total
from solar.frontends.torch import trace_module
from solar.frontends.torch.check import check_module
from solar.frontends.torch.convert import convert
from solar.ir.nodes import Seq
from solar.lift import lift

L2_BYTES = 4096.0  # small, so that the unfused per-kernel rules see temps spill


class Net(nn.Module):
    def __init__(
        self, kind: str, layers: int, bidirectional: bool, batch_first: bool, with_state: bool
    ):
        super().__init__()
        cls = {"lstm": nn.LSTM, "gru": nn.GRU, "tanh": nn.RNN, "relu": nn.RNN}[kind]
        extra = {"nonlinearity": kind} if kind in ("tanh", "relu") else {}
        self.rnn = cls(
            5, 6, num_layers=layers, bidirectional=bidirectional, batch_first=batch_first, **extra
        )
        self.kind, self.with_state = kind, with_state

    def forward(self, x, h):
        if not self.with_state:
            return self.rnn(x)[0]
        state = (h, torch.tanh(h)) if self.kind == "lstm" else h
        out, last = self.rnn(x, state)
        return out, last[0] if self.kind == "lstm" else last


CONFIGS = [
    (kind, layers, bidi, bf, state)
    for kind in ("lstm", "gru", "tanh", "relu")
    for layers, bidi, bf, state in ((1, False, False, True), (2, True, True, False))
]


def _model(kind, layers, bidi, bf, state, steps=4, batch=3):
    torch.manual_seed(0)
    model = Net(kind, layers, bidi, bf, state)
    x = torch.randn(batch, steps, 5) if bf else torch.randn(steps, batch, 5)
    h = torch.randn(layers * (2 if bidi else 1), batch, 6)
    return model, (x, h)


def _counts(program):
    work = total(graph_work(lift(program)).values())
    unfused = unfused_dram_bytes(program, op_groups(program), L2_BYTES)
    return work, fused_dram_bytes(program), unfused


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: "-".join(map(str, c)))
def test_in_order_program_reproduces_torch_and_counts_steps_times_body(config):
    model, inputs = _model(*config)
    program = convert(trace_module(model, inputs))
    layers, bidi = config[1], config[2]
    seqs = [n for n in program.body if isinstance(n, Seq)]
    assert len(seqs) == layers * (2 if bidi else 1)
    assert all(s.extent == 4 for s in seqs)
    # each statement of a body counts its domain once per step
    steps4, steps8 = (
        _counts(convert(trace_module(*_model(*config, steps=n)))) for n in (4, 8)
    )
    assert steps4[0].mac_count < steps8[0].mac_count
    result = check_module(model, inputs)
    assert result.ok and not result.unchecked, result.checks
    assert [c.mode for c in result.checks] == ["full"]


def test_analysis_form_does_not_grow_with_the_sequence():
    sizes = []
    for steps in (4, 64):
        model, inputs = _model("lstm", 2, True, False, True, steps=steps)
        sizes.append(len(convert(trace_module(model, inputs)).stmts))
    assert sizes[0] == sizes[1]


@pytest.mark.parametrize("with_state,skipped", [(True, 0), (False, 1)])
def test_lstm_macs_are_exact(with_state, skipped):
    """Input projection T*B*4H*I plus recurrence T*B*4H*H; a zero initial state (the default)
    makes the first step's recurrent product vanish."""
    steps, batch, inp, hidden = 7, 3, 5, 6
    model, inputs = _model("lstm", 1, False, False, with_state, steps=steps, batch=batch)
    work = total(graph_work(lift(convert(trace_module(model, inputs)))).values())
    gates = 4 * hidden
    assert (
        work.mac_count == steps * batch * gates * inp + (steps - skipped) * batch * gates * hidden
    )


def test_lstm_over_512_steps_is_a_loop_not_an_unrolling():
    """KernelBench-sized: batch 10, 512 steps, hidden 256, two layers."""
    model = nn.LSTM(128, 256, num_layers=2, batch_first=True)
    x = torch.randn(10, 512, 128)
    program = convert(trace_module(model, (x,)))
    work = total(graph_work(lift(program)).values())
    assert len(program.stmts) < 40
    assert work.mac_count == 512 * 10 * 1024 * (128 + 256 + 256 + 256) - 2 * 10 * 1024 * 256
