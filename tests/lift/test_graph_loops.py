"""EinsumGraph.loops: the top-level in-order loops with their place in the body, trip counts (a
size symbol resolved) and node ids (what the recurrence level reads instead of the program)."""

from __future__ import annotations

from solar.ir.parser import parse_program
from solar.lift.einsum import InOrderLoop, lift

TEXT = """program two_scans {
  sym T = 6
  input x: f32[6, 3]
  temp h: f32[7, 3]
  output y: f32[4, 3]
  for i in 0..3:
    h[0, i] = 0
  for t in 0..T in order {
    for i in 0..3:
      h[t + 1, i] = h[t, i] + x[t, i]
  }
  for i in 0..3:
    y[0, i] = h[6, i]
  for t in 0..3 in order {
    for i in 0..3:
      y[t + 1, i] = y[t, i] * 2
    for s in 0..2 in order {
      for i in 0..3:
        y[t + 1, i] += y[t, i]
    }
  }
}
"""


def test_loops_name_place_steps_and_nodes():
    graph = lift(parse_program(TEXT))
    assert graph.loops == (
        InOrderLoop(position=1, var="t", steps=6, node_ids=(1,)),
        InOrderLoop(position=3, var="t", steps=3, node_ids=(3, 4)),
    )
    assert [graph.node(i).in_order for i in (3, 4)] == [("t",), ("t", "s")]
