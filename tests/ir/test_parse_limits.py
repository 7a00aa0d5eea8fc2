"""The IR parser's limits on numbers (solar.bounded): an integer literal of more than 40 digits, a
tensor of more elements or a statement of more iterations than 10**40 is one IRSyntaxError line,
before any count is converted to a float; at the limit the program parses."""

from __future__ import annotations

import pytest

from solar.errors import IRSyntaxError
from solar.ir.parser import parse_program

N39 = "1" + "0" * 39


def _program(sizes: str, loops: str, sym: str = "") -> str:
    return (
        f"program p {{\n{sym}  input a: f32[{sizes}]\n  output y: f32[1]\n"
        f"  for i in 0..1:\n    y[i] = 0.0\n  for i in 0..1, {loops}:\n    y[i] += a[0]\n}}\n"
    )


@pytest.mark.parametrize(
    "text, message",
    [
        (_program("1" + "0" * 40, "k in 0..4"), r"^line 2, column 16: a number of 41 digits \(at most 40\)"),
        (_program("4", "k in 0.." + "9" * 5000), r"^line 6, column 26: a number of 5000 digits"),
        (_program("4", "k in 0..4").replace("y[i] = 0.0", "y[i] = " + "5" * 41), r"^line 5, column 12: a number of 41 digits"),
        (_program(f"{N39}, 11", "k in 0..4"), r"^line \d+, column \d+: tensor 'a' has too many elements \(" + str(11 * 10**39) + r" is beyond 1e\+40\)"),
        (_program("N, N", "k in 0..4", sym=f"  sym N = {N39}\n"), r"^line \d+, column \d+: tensor 'a' has too many elements \(about 10\^78 is beyond 1e\+40\)"),
        (_program("4", f"k in 0..{N39}, m in 0..11"), r"^line \d+, column \d+: too many iterations \(" + str(11 * 10**39) + r" is beyond"),
    ],
    ids=["size-41-digits", "extent-5000-digits", "constant-41-digits", "elements", "elements-through-a-symbol", "iterations"],
)
def test_past_a_limit(text, message):
    with pytest.raises(IRSyntaxError, match=message):
        parse_program(text)


def test_at_the_limit():
    program = parse_program(_program(f"{N39}, 10", f"k in 0..{N39}, m in 0..10"))
    assert program.numel("a") == 10**40
