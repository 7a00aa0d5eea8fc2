"""End-to-end JAX frontend tests: the same model in PyTorch and Flax bounds alike, exact counts for
contractions, loops as time loops, flags, file conventions, error paths, speed and memory."""

from __future__ import annotations

import re
import textwrap
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

jax = pytest.importorskip("jax")
pytest.importorskip("flax")

import flax.linen as fnn
import jax.numpy as jnp
import torch
from jax import lax

import solar
from solar.api import Loaded, analyze_loaded
from solar.errors import ModelFileError, SolarError, UnsupportedOpError
from solar.frontends.jax import (
    check_callable,
    check_file,
    is_jax_file,
    is_jax_object,
    lower_callable,
    lower_file,
    supported_primitives,
)
from solar.frontends.jax.check import check_traced
from solar.frontends.jax.loader import trace_module
from solar.ir.dtypes import DType
from solar.ir.nodes import Seq
from solar.lift import lift

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = sorted((ROOT / "examples" / "jax").glob("*.py"))
ARCH = "H100-SXM"


def F(*shape: int) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(shape, jnp.float32)


def analyze_jax(fn, inputs, writeback: bool = True):
    program, traced = lower_callable(fn, inputs)
    return analyze_loaded(Loaded(program, traced.flags, traced.source_file), ARCH, writeback=writeback)


# ---- the same model in PyTorch and in Flax -------------------------------------------------------


class FlaxMLP(fnn.Module):
    @fnn.compact
    def __call__(self, x):
        return fnn.Dense(32)(fnn.relu(fnn.Dense(128)(x)))


class FlaxConvBlock(fnn.Module):
    @fnn.compact
    def __call__(self, x):
        x = fnn.relu(fnn.Conv(16, (3, 3), strides=(2, 2), padding=((1, 1), (1, 1)))(x))
        return fnn.Conv(
            16, (3, 3), padding=((1, 1), (1, 1)), feature_group_count=4, use_bias=False
        )(x)


def test_mlp_in_torch_and_flax_bounds_alike():
    torch_mlp = torch.nn.Sequential(
        torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 32)
    )
    t = solar.analyze(torch_mlp, (torch.randn(16, 64),), arch=ARCH, writeback=False)
    j = analyze_jax(FlaxMLP(), [F(16, 64)], writeback=False)  # every output byte, as the formula
    assert (
        j.totals.contraction_flops == t.totals.contraction_flops == 2 * 16 * (64 * 128 + 128 * 32)
    )
    assert (
        j.totals.dram_bytes
        == t.totals.dram_bytes
        == 4 * (16 * 64 + 64 * 128 + 128 + 128 * 32 + 32 + 16 * 32)
    )


def test_conv_block_in_torch_and_flax_bounds_alike():
    class TorchConvBlock(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = torch.nn.Conv2d(8, 16, 3, stride=2, padding=1)
            self.c2 = torch.nn.Conv2d(16, 16, 3, padding=1, groups=4, bias=False)

        def forward(self, x):
            return self.c2(torch.relu(self.c1(x)))

    t = solar.analyze(TorchConvBlock(), (torch.randn(2, 8, 15, 15),), arch=ARCH)
    j = analyze_jax(FlaxConvBlock(), [F(2, 15, 15, 8)])
    assert t.totals.contraction_flops > 0
    assert j.totals.contraction_flops == t.totals.contraction_flops
    assert j.totals.dram_bytes == t.totals.dram_bytes


# ---- exact counts --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fn,shapes,flops",
    [
        (
            lambda a, b: lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,)))),
            [(6, 20, 36), (6, 36, 12)],
            2 * 6 * 20 * 12 * 36,
        ),
        (
            lambda q, k: jnp.einsum("bhqd,bhkd->bhqk", q, k),
            [(2, 3, 40, 16), (2, 3, 24, 16)],
            2 * 2 * 3 * 40 * 24 * 16,
        ),
        (
            lambda a, b: lax.dot_general(a, b, (((1, 3), (2, 0)), ((0,), (1,)))),
            [(4, 5, 7, 3), (3, 4, 5, 9)],
            2 * 4 * 7 * 9 * 5 * 3,
        ),
    ],
)
def test_dot_general_with_batch_dims_counts_exact_macs(fn, shapes, flops):
    report = analyze_jax(fn, [F(*s) for s in shapes])
    assert report.totals.contraction_flops == flops
    assert report.totals.flops == flops
    program, _ = lower_callable(fn, [F(*s) for s in shapes])
    assert sum(n.is_contraction for n in lift(program)) == 1


def _conv_macs(n, h, w, c, o, groups, k, stride, pad):
    """Brute-force count of multiply-adds whose input position is inside the image."""
    oh = (h + pad[0][0] + pad[0][1] - k[0]) // stride[0] + 1
    ow = (w + pad[1][0] + pad[1][1] - k[1]) // stride[1] + 1
    ih = np.arange(oh)[:, None] * stride[0] + np.arange(k[0])[None, :] - pad[0][0]
    iw = np.arange(ow)[:, None] * stride[1] + np.arange(k[1])[None, :] - pad[1][0]
    valid = int(((ih >= 0) & (ih < h)).sum()) * int(((iw >= 0) & (iw < w)).sum())
    return n * o * (c // groups) * valid


@pytest.mark.parametrize(
    "h,w,c,o,groups,k,stride,pad",
    [
        (17, 13, 6, 8, 1, (3, 3), (2, 2), ((1, 1), (1, 1))),
        (16, 16, 8, 12, 4, (5, 3), (3, 2), ((2, 0), (1, 2))),
        (9, 11, 4, 4, 4, (3, 3), (2, 1), ((1, 1), (0, 0))),
    ],
)
def test_strided_nhwc_conv_counts_exact_macs(h, w, c, o, groups, k, stride, pad):
    def conv(x, wt):
        return lax.conv_general_dilated(
            x,
            wt,
            stride,
            pad,
            dimension_numbers=("NHWC", "HWIO", "NHWC"),
            feature_group_count=groups,
        )

    report = analyze_jax(conv, [F(2, h, w, c), F(*k, c // groups, o)])
    assert report.totals.contraction_flops == 2 * _conv_macs(2, h, w, c, o, groups, k, stride, pad)
    assert check_callable(conv, [F(2, h, w, c), F(*k, c // groups, o)]).ok


# ---- loops ---------------------------------------------------------------------------------------


def _rnn(h, w, xs):
    def step(carry, x):
        carry = jnp.tanh(carry @ w + x)
        return carry, carry

    return lax.scan(step, h, xs)


@pytest.mark.parametrize(
    "fn",
    [_rnn, lambda h, w, xs: lax.fori_loop(0, xs.shape[0], lambda i, c: jnp.tanh(c @ w + xs[i]), h)],
)
def test_loops_become_time_loops_not_copies(fn):
    programs = {}
    for steps in (4, 64):
        program, _ = lower_callable(fn, [F(3, 8), F(8, 8), F(steps, 3, 8)])
        programs[steps] = program
        timed = [s for s, (seqs, _) in zip(program.stmts, program.nested()) if seqs]
        assert timed and all(program.size(s.loops[0].extent) == steps for s in timed)
        assert len({s.origin.instance for s in timed}) == 1  # one loop, one kernel
        report = analyze_loaded(Loaded(program, (), None), ARCH)
        assert report.totals.contraction_flops == steps * 2 * 3 * 8 * 8
    assert len(programs[4].stmts) == len(programs[64].stmts)
    assert check_callable(fn, [F(3, 8), F(8, 8), F(5, 3, 8)]).ok


def test_static_while_loop_and_unknown_trip_count():
    def counted(x):
        return lax.while_loop(lambda s: s[0] < 10, lambda s: (s[0] + 3, s[1] * 0.5), (1, x))[1]

    program, _ = lower_callable(counted, [F(4)])
    assert {program.size(n.extent) for n in program.body if isinstance(n, Seq)} == {3}
    assert check_callable(counted, [F(4)]).ok

    def data_dependent(x):
        return lax.while_loop(lambda s: s.sum() < 10.0, lambda s: s * 2, x)

    with pytest.raises(SolarError, match="trip count is not static"):
        lower_callable(data_dependent, [F(4)])


# ---- precision flags -----------------------------------------------------------------------------


def _dot_tf32(program) -> set[bool]:
    return {n.origin.allow_tf32 for n in lift(program) if n.is_contraction}


def test_default_precision_allows_tf32_and_highest_does_not():
    mm = lambda a, b: a @ b
    program, traced = lower_callable(mm, [F(8, 8), F(8, 8)])
    assert _dot_tf32(program) == {True}
    assert traced.flags == (("jax.config.jax_default_matmul_precision=None, so allow_tf32", True),)
    with jax.default_matmul_precision("highest"):
        program, traced = lower_callable(mm, [F(8, 8), F(8, 8)])
    assert _dot_tf32(program) == {False} and traced.flags[0][1] is False
    program, _ = lower_callable(lambda a, b: jnp.dot(a, b, precision="highest"), [F(8, 8), F(8, 8)])
    assert _dot_tf32(program) == {False}
    exact = analyze_jax(lambda a, b: jnp.dot(a, b, precision="highest"), [F(256, 256), F(256, 256)])
    tf32 = analyze_jax(mm, [F(256, 256), F(256, 256)])
    assert tf32.bounds["fused"].compute_seconds < exact.bounds["fused"].compute_seconds


def test_bf16_preset_is_priced_as_bf16_products():
    fn = lambda a, b: lax.dot(a, b, precision=lax.DotAlgorithmPreset.BF16_BF16_F32)
    program, _ = lower_callable(fn, [F(8, 8), F(8, 8)])
    assert {n.contraction_dtype for n in lift(program) if n.is_contraction} == {DType.BF16}


# ---- files, objects, errors ----------------------------------------------------------------------


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def test_unsupported_primitive_names_it_and_the_source_line(tmp_path):
    path = _write(
        tmp_path,
        "bad.py",
        """\
        import jax
        import jax.numpy as jnp

        def forward(x):
            y = x * 2
            return jnp.linalg.cholesky(y)

        def get_inputs():
            return [jax.ShapeDtypeStruct((8, 8), jnp.float32)]
        """,
    )
    with pytest.raises(UnsupportedOpError) as info:
        lower_file(path)
    message = str(info.value)
    assert "\n" not in message
    assert re.search(
        r"unsupported JAX primitive 'cholesky' at bad\.py:6: return jnp\.linalg\.cholesky\(y\)",
        message,
    )


def test_unsupported_sort_variant_names_the_primitive_and_the_source_line(tmp_path):
    path = _write(
        tmp_path,
        "lex.py",
        """\
        import jax
        import jax.numpy as jnp

        def forward(x):
            y = x * 2
            return jnp.lexsort((x, y), axis=0)

        def get_inputs():
            return [jax.ShapeDtypeStruct((8, 4), jnp.float32)]
        """,
    )
    with pytest.raises(UnsupportedOpError) as info:
        lower_file(path)
    message = str(info.value)
    assert "\n" not in message
    assert re.search(
        r"sort with num_keys=2 .* not supported yet.* JAX primitive 'sort' at lex\.py:6: "
        r"return jnp\.lexsort\(\(x, y\), axis=0\)",
        message,
    )


@pytest.mark.parametrize(
    "text,match",
    [
        ("def forward(x):\n    return x\n", "defines no get_inputs"),
        (
            "import jax\ndef get_inputs():\n    return [jax.ShapeDtypeStruct((2,), 'float32')]\n",
            "neither forward",
        ),
        (
            "def get_inputs():\n    return [1 / 0]\ndef forward(x):\n    return x\n",
            r"m\.py:2: get_inputs\(\) failed",
        ),
        ("def get_inputs():\n    return ['a']\ndef forward(x):\n    return x\n", "not an array"),
        (
            "import jax\ndef get_inputs():\n    return [jax.ShapeDtypeStruct((2,), 'float32')]\ndef forward(x):\n    return x.nope\n",
            r"m\.py:5: tracing with jax\.make_jaxpr failed",
        ),
        ("class Model:\n    pass\ndef get_inputs():\n    return []\n", "not a Flax module"),
    ],
)
def test_file_convention_errors_are_one_line(tmp_path, text, match):
    path = _write(tmp_path, "m.py", text)
    with pytest.raises(ModelFileError, match=match) as info:
        lower_file(path)
    assert "\n" not in str(info.value)


def test_forward_with_params_jit_and_nnx_files(tmp_path):
    path = _write(
        tmp_path,
        "params.py",
        """\
        import jax
        import jax.numpy as jnp

        @jax.jit
        def forward(params, x):
            return jnp.tanh(x @ params["w"]) + params["b"]

        def get_params():
            return {"w": jax.ShapeDtypeStruct((16, 32), jnp.float32), "b": jax.ShapeDtypeStruct((32,), jnp.float32)}

        def get_inputs():
            return [jax.ShapeDtypeStruct((4, 16), jnp.float32)]
        """,
    )
    program, _ = lower_file(path)
    roles = {t.name: t.role.value for t in program.tensors if t.role.value in ("input", "param")}
    assert roles == {"b": "param", "w": "param", "x": "input"}
    assert (
        len({s.origin.instance for s in program.stmts if s.origin.instance >= 0}) == 3
    )  # jit unwrapped
    assert check_file(path).ok

    nnx_file = _write(
        tmp_path,
        "nnx_model.py",
        """\
        import jax
        import jax.numpy as jnp
        from flax import nnx

        class Model(nnx.Module):
            def __init__(self, din, dout, *, rngs):
                self.lin = nnx.Linear(din, dout, rngs=rngs)

            def __call__(self, x):
                return nnx.relu(self.lin(x))

        def get_inputs():
            return [jax.ShapeDtypeStruct((8, 24), jnp.float32)]

        def get_init_inputs():
            return [24, 40]
        """,
    )
    program, _ = lower_file(nnx_file)
    params = {t.name: t.shape for t in program.tensors if t.role.value == "param"}
    assert params == {"lin_bias": (40,), "lin_kernel": (24, 40)}
    assert check_file(nnx_file).ok


def test_call_sites_are_op_instances():
    class Net(fnn.Module):
        @fnn.compact
        def __call__(self, x):
            x = fnn.Dense(8)(x)
            x = fnn.gelu(x)
            return fnn.LayerNorm()(x)

    program, _ = lower_callable(Net(), [F(4, 8)])
    by_source: dict[str, set[int]] = {}
    for s in program.stmts:
        by_source.setdefault(s.origin.source, set()).add(s.origin.instance)
    assert all(len(ids) == 1 for ids in by_source.values()), by_source
    assert len(by_source) == 3 and all(
        "x = fnn." in src or "return fnn." in src for src in by_source
    )


@pytest.mark.parametrize(
    "obj,expected",
    [
        (lambda x: x, True),
        (jax.jit(lambda x: x), True),
        (FlaxMLP(), True),
        (torch.nn.Linear(2, 2), False),
        (FlaxMLP, False),
        ("model.py", False),
        (3, False),
    ],
)
def test_is_jax_object(obj, expected):
    assert is_jax_object(obj) is expected


@pytest.mark.parametrize(
    "source,expected",
    [
        ("import jax.numpy as jnp\n", True),
        ("from flax import linen as nn\n", True),
        ("import jax\nimport torch\n", False),
        ("import torch\n", False),
        ("import numpy\n", False),
        ("def broken(:\n", False),
    ],
)
def test_is_jax_file(tmp_path, source, expected):
    assert is_jax_file(_write(tmp_path, "m.py", source)) is expected


def test_supported_primitives_lists_the_table():
    names = supported_primitives()
    assert {"dot_general", "conv_general_dilated", "scan", "while", "gather"} <= set(names)
    assert list(names) == sorted(names)


def test_nothing_the_size_of_the_model_is_allocated():
    class Huge(fnn.Module):
        @fnn.compact
        def __call__(self, x):
            return fnn.Dense(65536)(fnn.Dense(65536)(x))  # 16 GiB of fp32 weights each

    lower_callable(Huge(), [F(8, 65536)])  # warm up tracing caches
    tracemalloc.start()
    program, traced = lower_callable(Huge(), [F(8, 65536)])
    report = analyze_loaded(Loaded(program, traced.flags, None), ARCH)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert report.totals.contraction_flops == 2 * 2 * 8 * 65536 * 65536
    assert peak < 64 * 2**20


# ---- examples ------------------------------------------------------------------------------------


def test_examples_analyse():
    """Each example traces, lowers and bounds (its analysis time is measured by
    benchmarks/bench_analyze.py, not asserted here)."""
    assert len(EXAMPLES) == 5
    for path in EXAMPLES:
        program, traced = lower_file(path)
        report = analyze_loaded(Loaded(program, traced.flags, traced.source_file), ARCH)
        assert report.totals.contraction_flops > 0 and report.bounds["fused"].seconds > 0


def test_robot_example_scan_and_check():
    program, _ = lower_file(ROOT / "examples" / "jax" / "robot_mpc.py")
    assert any(isinstance(n, Seq) and program.size(n.extent) == 64 for n in program.body)
    result = check_file(ROOT / "examples" / "jax" / "robot_mpc.py")
    assert result.ok and not result.unchecked, [c for c in result.checks if not c.ok]


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_examples_verify_whole_at_shrunk_sizes(path):
    """Every size constant divided by 8 (benchmarks/suite_tools), the whole program run in the
    interpreter: its outputs must match JAX's."""
    from benchmarks.suite_tools import load_problem

    traced = trace_module(load_problem(path, shrink=8), path)
    result = check_traced(traced, whole=True)
    assert [c.mode for c in result.checks] == ["full"]
    assert result.ok, result.checks
