"""Every entry of the PyTorch lowering table, checked against the real op on fresh random inputs:
the op runs in PyTorch, its lowering runs in the IR interpreter, and the outputs must agree. The
cases live in tests/frontends/lowering_cases/, one module per op family."""

from __future__ import annotations

import importlib
import pkgutil
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
import torch

import tests.frontends.lowering_cases as cases_pkg
from solar.frontends.compare import relative_error, tolerance
from solar.frontends.torch.check import lower_node, to_numpy
from solar.frontends.torch.context import dtype_of
from solar.frontends.torch.lowerings import LOWERINGS
from solar.ir.interp import run
from solar.ir.verify import verify
from tests.frontends.lowering_cases import Draw, T


def _collect(table: str) -> dict[Any, Any]:
    merged: dict[Any, Any] = {}
    for info in pkgutil.iter_modules(cases_pkg.__path__):
        module = importlib.import_module(f"{cases_pkg.__name__}.{info.name}")
        for op, cases in getattr(module, table, {}).items():
            assert op not in merged, f"{op} has {table} in two modules"
            merged[op] = cases
    return merged


CASES = _collect("CASES")
DRAWS: dict[Any, Draw] = _collect("DRAWS")
BY_PROGRAM: dict[Any, str] = _collect("BY_PROGRAM")  # ops checked through whole programs, with why


def realise(x: Any, gen: torch.Generator) -> Any:
    if isinstance(x, T):
        shape = tuple(reversed(x.shape)) if x.transpose else x.shape
        if x.dtype == torch.bool:
            t = torch.rand(shape, generator=gen) > 0.5
        else:
            t = torch.randn(shape, generator=gen, dtype=torch.float32)
            t = (t.abs() + 0.1 if x.positive else t).to(x.dtype)
        return t.t() if x.transpose else t
    if isinstance(x, list):
        return [realise(v, gen) for v in x]
    if isinstance(x, tuple):
        return tuple(realise(v, gen) for v in x)
    if isinstance(x, dict):
        return {k: realise(v, gen) for k, v in x.items()}
    return x


def test_every_lowering_has_a_case():
    missing = sorted(str(op) for op in LOWERINGS if op not in CASES and op not in BY_PROGRAM)
    assert not missing, f"lowerings without a test case: {missing}"


@pytest.mark.parametrize(
    "op,args,kwargs",
    [(op, args, kwargs) for op, cases in CASES.items() for args, kwargs in cases],
    ids=lambda x: str(x) if hasattr(x, "_schema") else None,
)
@pytest.mark.parametrize("seed", [0, 1])
def test_lowering_matches_real_op(op, args, kwargs, seed):
    gen = torch.Generator().manual_seed(1000 + seed)
    real = realise(list(args), gen)
    kwargs = realise(kwargs, gen)
    with torch.no_grad():
        ref = op(*real, **kwargs)
    node = SimpleNamespace(target=op, name=str(op).split(".")[1], kwargs=kwargs)
    program, names, feed, _ = lower_node(node, real, ref)
    verify(program)
    outs = run(program, feed)
    refs = list(ref) if isinstance(ref, (tuple, list)) else [ref]
    refs = [r for r in refs if not (isinstance(r, torch.Tensor) and r.numel() == 0)]  # left out
    for name, r in zip(names, refs):
        if op in DRAWS:
            _check_draw(DRAWS[op], outs[name], r)
            continue
        error = relative_error(outs[name], to_numpy(r))
        assert error <= max(tolerance([dtype_of(r.dtype)]), 1e-6), (op, name, str(program))


def _check_draw(spec: Draw, ir: Any, ref: torch.Tensor) -> None:
    """A random op's IR output against its specification, and the real output against the same
    specification (so the specification is the real op's)."""
    assert ir.shape == tuple(ref.shape), (ir.shape, tuple(ref.shape))
    assert ir.dtype == ref.numpy().dtype if ref.dtype != torch.bfloat16 else True, (ir.dtype, ref.dtype)
    for values in (np.asarray(ir, dtype=np.float64), ref.double().numpy()):
        if spec.permutation:
            assert sorted(values.tolist()) == list(range(values.size))
        if spec.lo is not None:
            assert values.min() >= spec.lo and values.max() <= spec.hi, (values.min(), values.max())
        if spec.mean is not None:
            assert abs(values.mean() - spec.mean) <= spec.tol, values.mean()
            assert abs(values.std() - spec.std) <= spec.tol, values.std()
