"""JAX outputs that are inputs (or row-major reshapes of them) are aliases: no statement, no bytes,
every bound 0 for a program of nothing else (docs/BOUNDS.md §3, "Aliases and in-place updates")."""

from __future__ import annotations

import pytest

jax = pytest.importorskip("jax")

import jax.numpy as jnp

import solar
from solar.frontends.jax import check

X = 64 * 64 * 4


@pytest.mark.parametrize(
    "fn,dram_bytes,ops",
    [
        (lambda x: x, 0, []),
        (lambda x: x.reshape(-1), 0, []),
        (lambda x: (x, x + 1), 2 * X, ["add"]),
        (lambda x: x.T, 2 * X, ["output_copy"]),  # XLA writes a transpose: a real copy
    ],
    ids=["identity", "reshape", "list", "transpose"],
)
def test_jax_aliases(fn, dram_bytes, ops):
    x = jnp.ones((64, 64), jnp.float32)
    r = solar.analyze(fn, [x], arch="H200-SXM", writeback=False)  # every output byte in DRAM
    assert r.totals.dram_bytes == dram_bytes
    assert [o.op for o in r.ops] == ops
    if not ops:
        assert r.bounds["fused"].seconds == r.bounds["unfused"].seconds == 0.0
    (c,) = check.check_callable(fn, [x]).checks
    assert c.error <= c.tolerance
