"""Programs longer than Python's recursion limit: the dependency-forced re-read analysis walks def-use
chains of any length, and its work grows linearly with the chain."""

from __future__ import annotations

import sys

from solar.backends import reread
from solar.backends.reread import find_rereads
from solar.ir.parser import parse_program
from solar.lift import lift

ROWS, COLS = 4, 64


def chain(n: int) -> str:
    """y = x / s, where s sums each row of tanh applied n times to x: s depends on every element of
    x's row through a chain of n statements."""
    temps = [f"  temp t{k}: f32[{ROWS}, {COLS}]" for k in range(n)]
    body = [f"  for i in 0..{ROWS}, j in 0..{COLS}:\n    t0[i, j] = tanh(x[i, j])"]
    body += [
        f"  for i in 0..{ROWS}, j in 0..{COLS}:\n    t{k}[i, j] = tanh(t{k - 1}[i, j])"
        for k in range(1, n)
    ]
    body += [
        f"  for i in 0..{ROWS}:\n    s[i] = 0.0",
        f"  for i in 0..{ROWS}, j in 0..{COLS}:\n    s[i] += t{n - 1}[i, j]",
        f"  for i in 0..{ROWS}, j in 0..{COLS}:\n    y[i, j] = x[i, j] / s[i]",
    ]
    head = [f"program chain{n} {{", f"  input x: f32[{ROWS}, {COLS}]", *temps]
    head += [f"  temp s: f32[{ROWS}]", f"  output y: f32[{ROWS}, {COLS}]"]
    return "\n".join([*head, *body, "}"]) + "\n"


def test_a_chain_longer_than_the_recursion_limit_is_analysed():
    n = sys.getrecursionlimit() + 500
    (found,) = find_rereads(lift(parse_program(chain(n))), 0.0)
    assert (found.tensor, found.stat, found.groups, found.group_elements) == ("x", "s", ROWS, COLS)


def test_the_work_grows_linearly_with_the_chain(monkeypatch):
    calls = {"count": 0}
    original = reread.plain_load

    def counted(*args):
        calls["count"] += 1
        return original(*args)

    monkeypatch.setattr(reread, "plain_load", counted)
    counts = []
    for length in (200, 400, 800):
        calls["count"] = 0
        find_rereads(lift(parse_program(chain(length))), 0.0)
        counts.append(calls["count"])
    assert counts[2] - counts[1] == 2 * (counts[1] - counts[0]) > 0  # the same work per statement
