"""The stand-ins for torch._dynamo and symbolic_shapes (solar.frontends.torch.standins): ops on
meta tensors run without importing either, anything else asked of them imports the real module
(in its own order) and answers as it would, and leaving the block leaves torch as it was. Each
case runs in a fresh interpreter, since the test process has imported both long before."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

PRELUDE = """
import sys, torch, torch.export
from solar.frontends.torch.standins import standing_in, stood_in
def loaded(name):
    m = sys.modules.get(name)
    return m is not None and not stood_in(name)
"""

CASES = {
    "meta ops import neither module": """
        with standing_in():
            lin = torch.nn.Linear(8, 4, device="meta")
            y = torch.nn.functional.gelu(lin(torch.randn(2, 8, device="meta"))).softmax(-1)
            torch._check(y.shape[0] == 2)
            assert stood_in("torch._dynamo") and stood_in("torch.fx.experimental.symbolic_shapes")
        assert "torch._dynamo" not in sys.modules and "_dynamo" not in vars(torch)
        assert "torch.fx.experimental.symbolic_shapes" not in sys.modules and "sympy" not in sys.modules
        print(tuple(y.shape))
    """,
    "a submodule import brings the real package": """
        with standing_in():
            torch.randn(2, 2, device="meta") + 1
            import torch.export._trace
            assert loaded("torch._dynamo")
            ep = torch.export.export(torch.nn.Linear(3, 2), (torch.randn(1, 3),), strict=False)
        print(sorted(str(n.target) for n in ep.graph.nodes if n.op == "call_function"))
    """,
    "dynamo works after the block": """
        with standing_in():
            (torch.randn(4, 4, device="meta") @ torch.randn(4, 4, device="meta")).relu()
        f = torch.compile(lambda x: (x * 2).sin(), backend="eager")
        print(round(float(f(torch.ones(1))[0]), 4))
    """,
    "a symbolic value asks the real symbolic_shapes": """
        from torch.fx.experimental.symbolic_shapes import ShapeEnv
        with standing_in():
            pass
        with standing_in():
            from torch.fx.experimental import symbolic_shapes
            assert not stood_in("torch.fx.experimental.symbolic_shapes")
            print(symbolic_shapes.expect_true(True))
    """,
    "sympy.Basic is sympy's once sympy is imported": """
        with standing_in():
            import sympy
            Basic = sympy.Basic
            assert not isinstance(1, Basic) and stood_in("sympy")
            x = sympy.Symbol("x")
            assert not stood_in("sympy") and isinstance(x, Basic) and isinstance(x + 1, sympy.Basic)
        print(isinstance(x, Basic), issubclass(sympy.Add, Basic))
    """,
    "blocks nest": """
        with standing_in():
            with standing_in():
                torch.ones(2, device="meta").exp()
            assert stood_in("torch._dynamo")
        assert "torch._dynamo" not in sys.modules
        print("ok")
    """,
}

EXPECTED = {
    "meta ops import neither module": "(2, 4)",
    "a submodule import brings the real package": "['aten.linear.default']",
    "dynamo works after the block": "0.9093",
    "a symbolic value asks the real symbolic_shapes": "True",
    "blocks nest": "ok",
    "sympy.Basic is sympy's once sympy is imported": "True True",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_stand_ins(name):
    code = PRELUDE + textwrap.dedent(CASES[name])
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == EXPECTED[name]
