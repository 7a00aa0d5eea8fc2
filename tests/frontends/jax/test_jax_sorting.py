"""JAX order statistics end to end: exact counts (bytes only, no work), the same bounds as the
PyTorch sort (one builder serves both frontends), and the MoE router example through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("jax")
pytest.importorskip("flax")

import jax
import jax.numpy as jnp
import torch
from jax import lax

import solar
from solar.api import Loaded, analyze_loaded
from solar.cli import main
from solar.errors import UnsupportedOpError
from solar.frontends.jax import check_callable, lower_callable
from solar.ir.nodes import Role, order_of

ROOT = Path(__file__).resolve().parents[3]
ARCH = "H200-SXM"
F32 = 4


def F(*shape: int) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(shape, jnp.float32)


def _analyze(fn, inputs):
    program, traced = lower_callable(fn, inputs)
    return analyze_loaded(Loaded(program, traced.flags, traced.source_file), ARCH, writeback=False)


def test_top_k_is_priced_at_its_bytes():
    """64 rows of 8 router logits, top 2: the logits read, 2 values and 2 int32 ids written per
    row, and no work (docs/BOUNDS.md, order statistics)."""
    report = _analyze(lambda x: lax.top_k(x, 2), [F(64, 8)])
    assert report.totals.flops == 0
    assert report.totals.dram_bytes == F32 * (64 * 8) + F32 * (64 * 2) + 4 * (64 * 2)


def test_argsort_writes_its_positions_once():
    """An argsort's iota payload is the positions tensor itself: one statement, the keys read and
    the int32 positions written."""
    program, _ = lower_callable(lambda x: jnp.argsort(x, axis=0), [F(12, 5)])
    (stmt,) = program.stmts
    assert order_of(stmt.value) is not None
    assert [t.name for t in program.with_role(Role.OUTPUT)] == [stmt.target.tensor]
    report = _analyze(lambda x: jnp.argsort(x, axis=0), [F(12, 5)])
    assert report.totals.flops == 0
    assert report.totals.dram_bytes == F32 * 12 * 5 + 4 * 12 * 5


def test_sort_positions_stay_inside_the_sort_kernel():
    """jnp.sort writes its values from its own instance: the int64 positions (128 MiB here, past
    L2) never cross a kernel boundary, so the unfused bytes are the keys read and values written."""
    report = _analyze(jnp.sort, [F(4096, 4096)])
    assert report.totals.dram_bytes == F32 * 2 * 4096 * 4096
    assert report.totals.unfused_dram_bytes == report.totals.dram_bytes


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: jnp.median(x, axis=1),
        lambda x: jnp.quantile(x, 0.3, axis=0),
        lambda x: jnp.percentile(x, jnp.array([10.0, 90.0])),
    ],
)
def test_library_functions_built_on_sort_match_jax(fn):
    """jnp's order-statistic functions (their NaN handling is a constant NaN, kept out of the
    table's text round trip) run whole in the interpreter and agree with jax."""
    result = check_callable(fn, [F(6, 9)], seed=3)
    assert result.ok and not result.unchecked, result.checks


def test_approx_top_k_partial_results_are_a_one_line_error():
    with pytest.raises(UnsupportedOpError, match="approx_top_k without aggregate_to_topk") as info:
        lower_callable(lambda x: lax.approx_max_k(x, 2, aggregate_to_topk=False), [F(4, 64)])
    assert "\n" not in str(info.value) and "JAX primitive 'approx_top_k'" in str(info.value)


def test_sort_in_torch_and_jax_bounds_alike():
    class TorchSort(torch.nn.Module):
        def forward(self, x):
            return torch.sort(x, dim=0).values

    t = solar.analyze(TorchSort(), (torch.randn(16, 32),), arch=ARCH, writeback=False)
    j = _analyze(lambda x: jnp.sort(x, axis=0), [F(16, 32)])
    assert j.totals.flops == t.totals.flops == 0
    assert j.totals.dram_bytes == t.totals.dram_bytes == F32 * 2 * 16 * 32


T, D, FF, E, K = 16, 32, 48, 4, 2


def _one_hot_moe(x, router, w_in, w_out):
    """MaxText's dense dispatch: top-2 gates scattered into a (token, expert) combine matrix by a
    one-hot einsum; every expert runs on every token, weighted by the combine matrix."""
    top, ids = lax.top_k(x @ router, K)
    gates = jax.nn.softmax(top, axis=-1)
    combine = jnp.einsum("tk,tke->te", gates, jax.nn.one_hot(ids, E, dtype=x.dtype))
    h = jax.nn.relu(jnp.einsum("td,edf->tef", x, w_in))
    return jnp.einsum("te,ted->td", combine, jnp.einsum("tef,efd->ted", h, w_out))


def test_one_hot_dispatch_moe_counts_exact_and_matches_jax():
    inputs = [F(T, D), F(D, E), F(E, D, FF), F(E, FF, D)]
    report = _analyze(_one_hot_moe, inputs)
    router, combine, experts, out = T * D * E, T * K * E, 2 * T * E * D * FF, T * E * D
    assert report.totals.contraction_flops == 2 * (router + combine + experts + out)
    result = check_callable(_one_hot_moe, inputs, seed=2)
    assert result.ok and not result.unchecked, result.checks


def test_moe_router_example_through_the_cli(capsys):
    """`solar analyze examples/jax/moe_router.py --arch H200-SXM`: the router's T·H·E
    multiply-adds, k experts' SwiGLU (3·H·F each) per token, and the gate-weighted sum."""
    from benchmarks.suite_tools import size_constants

    path = ROOT / "examples" / "jax" / "moe_router.py"
    sizes = {name: value for name, (value, _) in size_constants(path).items()}
    t, h, f, e, k = (sizes[n] for n in ("TOKENS", "D_MODEL", "D_FF", "EXPERTS", "TOP_K"))
    assert main(["analyze", str(path), "--arch", ARCH, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["totals"]["contraction_flops"] == 2 * (t * h * e + k * t * 3 * h * f + t * k * h)
    assert any(op["op"] == "top_k" for op in data["ops"])
