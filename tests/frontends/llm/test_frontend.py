"""End to end: programs the tracer cannot read, and a program with one op that has no lowering,
analysed with the scripted server; the bound equals the one of a hand-written IR of the program."""

from __future__ import annotations

from pathlib import Path

import pytest

from solar.api import analyze_loaded, load
from solar.errors import LLMError, TraceError, UnsupportedOpError
from solar.frontends.llm.symbolic import bind
from solar.ir.parser import parse_program
from tests.frontends.llm import programs
from tests.frontends.llm.server import ScriptedServer, reply

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples" / "llm"
HERE = Path(__file__).resolve().parent

pytestmark = pytest.mark.usefixtures("with_examples")


def _bounds(report) -> dict[str, float]:
    """The fused and cache-aware bounds. (The unfused, library, graphed and eager_host ones depend
    on how statements group into eager kernels and ops: a whole program written by the LLM is one
    group, the least it can be.)"""
    return {level: b.seconds for level, b in report.bounds.items() if level in ("fused", "cache_aware")}


def _hand_bound(text: str, sizes: dict[str, int], arch: str = "H100-SXM"):
    from solar.api import Loaded

    program = bind(parse_program(text), sizes)
    return analyze_loaded(Loaded(program, (), None), arch)


def test_data_dependent_control_flow(make_config) -> None:
    path = EXAMPLES / "data_dependent.py"
    with pytest.raises(TraceError, match="SOLAR_LLM_BASE_URL"):  # no endpoint: the error and a hint
        load(path)
    with ScriptedServer([reply(f"```\n{programs.DATA_DEPENDENT}```")]) as server:
        loaded = load(path, llm=make_config(server.url))
        assert len(server.requests) == 1
        prompt = server.requests[0]["messages"][1]["content"]
    assert "could not trace the model: GuardOnDataDependentSymNode" in prompt  # the tracer's error
    assert "input 0: float32[64, 128]" in prompt and "proj_weight: float32[96, 128]" in prompt
    report = analyze_loaded(loaded, "H100-SXM")
    hand = _hand_bound(programs.DATA_DEPENDENT, {"B": 64, "F": 128, "O": 96})
    assert _bounds(report) == _bounds(hand) and report.totals.flops == hand.totals.flops
    assert report.bounds["unfused"].seconds <= hand.bounds["unfused"].seconds
    assert report.bounds["library"].seconds <= hand.bounds["library"].seconds
    # matmul, max, and per output element: compare, select, scale
    assert report.totals.flops == 2 * 64 * 96 * 128 + 64 * 128 + 3 * 64 * 96
    (prov,) = report.provenance
    assert prov.source == "llm" and prov.model == "scripted-model" and prov.attempts == 1
    assert len(prov.shapes) >= 2 and "BATCH=64, FEATURES=128, OUT_FEATURES=96" in prov.shapes[0]
    assert any("written by LLM scripted-model" in a for a in report.assumptions)


@pytest.mark.parametrize(
    "name, ir",
    [("custom_function", programs.CUSTOM_FUNCTION), ("numpy_forward", programs.NUMPY_FORWARD)],
)
def test_inputs_the_tracer_cannot_read(name: str, ir: str, make_config) -> None:
    path = EXAMPLES / f"{name}.py"
    with pytest.raises((TraceError, UnsupportedOpError)):
        load(path, frontend="torch")
    with ScriptedServer([reply(ir)]) as server:
        loaded = load(path, llm=make_config(server.url))
    (prov,) = loaded.provenance
    assert prov.attempts == 1 and len(prov.shapes) >= 2 and prov.max_error < 1e-4
    assert loaded.program.name == name


def test_recurrence_through_a_library(make_config) -> None:
    from tests.frontends.llm.programs import LIBRARY_FILTER, in_order_supported

    if not in_order_supported():
        pytest.skip("the IR parser reads no in-order loops (`for t in 0..T in order:`)")
    with ScriptedServer([reply(LIBRARY_FILTER)]) as server:
        loaded = load(EXAMPLES / "library_filter.py", llm=make_config(server.url))
    (prov,) = loaded.provenance
    assert prov.attempts == 1 and len(prov.shapes) >= 2


def test_one_unsupported_op(make_config, monkeypatch) -> None:
    import torch

    from solar.frontends.torch.lowerings import LOWERINGS

    monkeypatch.delitem(LOWERINGS, torch.ops.aten.hypot.default, raising=False)  # keep it missing
    path = HERE / "missing_op.py"
    with pytest.raises(UnsupportedOpError, match="aten.hypot.default"):
        load(path, frontend="torch")
    with ScriptedServer([reply(programs.HYPOT_OP)]) as server:
        loaded = load(path, llm=make_config(server.url))
        assert len(server.requests) == 1
        ask = server.requests[0]["messages"][1]["content"]
    assert "`aten.hypot.default`" in ask and "in0: float32[32, 40]" in ask
    traced, op = loaded.provenance
    assert traced.source == "traced" and traced.part == "the rest of the program"
    assert op.source == "llm" and op.part == "aten.hypot.default" and len(op.shapes) >= 2
    report = analyze_loaded(loaded, "H100-SXM")
    hand = _hand_bound(programs.MISSING_OP_WHOLE, {})
    assert _bounds(report) == pytest.approx(_bounds(hand), rel=1e-12)
    assert (
        report.totals.flops == hand.totals.flops
        and report.totals.dram_bytes == hand.totals.dram_bytes
    )


def test_op_the_model_cannot_write_falls_back_to_the_whole_program(
    make_config, monkeypatch
) -> None:
    import torch

    from solar.frontends.torch.lowerings import LOWERINGS

    monkeypatch.delitem(LOWERINGS, torch.ops.aten.hypot.default, raising=False)
    whole = (
        programs.MISSING_OP_WHOLE.replace("f32[32, 40]", "f32[R, C]")
        .replace("0..32", "0..R")
        .replace("0..40", "0..C")
    )
    whole = whole.replace(
        "program missing_op {", "program missing_op {\n  sym R = 32\n  sym C = 40"
    )
    with ScriptedServer([reply("I cannot.")] + [reply(whole)]) as server:
        loaded = load(HERE / "missing_op.py", llm=make_config(server.url, attempts=1))
        assert len(server.requests) == 2
    (prov,) = loaded.provenance
    assert prov.part == "missing_op.py (whole program)"


def test_frontend_llm_without_endpoint_is_a_usage_error() -> None:
    from solar.errors import UsageError

    with pytest.raises(UsageError, match="--frontend llm needs an endpoint"):
        load(EXAMPLES / "data_dependent.py", frontend="llm")


def test_llm_failure_is_one_line(make_config) -> None:
    with ScriptedServer([reply("no idea")]) as server:
        with pytest.raises(
            LLMError, match=r"no IR from scripted-model matched the original in 1 attempt"
        ):
            load(EXAMPLES / "numpy_forward.py", llm=make_config(server.url, attempts=1))


def test_new_op_written_from_the_reference(make_config, monkeypatch) -> None:
    """The IR of logcumsumexp, written from docs/IR.md's worked examples alone (see programs.py),
    checked against torch.logcumsumexp at several small shapes and used at the traced shape."""
    import torch

    from solar.frontends.torch.lowerings import LOWERINGS
    from tests.frontends.llm.programs import LOGCUMSUMEXP_OP, in_order_supported

    if not in_order_supported():
        pytest.skip("the IR parser reads no in-order loops (`for t in 0..T in order:`)")
    monkeypatch.delitem(LOWERINGS, torch.ops.aten.logcumsumexp.default, raising=False)
    with ScriptedServer([reply(LOGCUMSUMEXP_OP)]) as server:
        loaded = load(HERE / "new_op.py", llm=make_config(server.url))
    traced, op = loaded.provenance
    assert op.part == "aten.logcumsumexp.default" and op.attempts == 1 and len(op.shapes) >= 2
    assert op.max_error < 1e-5
    report = analyze_loaded(loaded, "H100-SXM")
    # per step t >= 1 and row: max, sub, abs, neg, exp, log1p, add; then the scale by 0.5
    assert report.totals.flops == 16 * 23 * 7 + 16 * 24


def test_jax_program_the_tracer_cannot_read(make_config) -> None:
    pytest.importorskip("jax")
    path = HERE / "jax_numpy.py"
    with pytest.raises(TraceError, match="SOLAR_LLM_BASE_URL"):
        load(path)
    with ScriptedServer([reply(programs.JAX_NUMPY)]) as server:
        loaded = load(path, llm=make_config(server.url))
        prompt = server.requests[0]["messages"][1]["content"]
    assert "a JAX file: forward(*get_inputs())" in prompt and "TracerArrayConversionError" in prompt
    (prov,) = loaded.provenance
    assert prov.attempts == 1 and len(prov.shapes) >= 2 and prov.max_error < 1e-5


def test_wrong_op_ir_gets_the_real_ops_difference(make_config, monkeypatch) -> None:
    import torch

    from solar.frontends.torch.lowerings import LOWERINGS

    monkeypatch.delitem(LOWERINGS, torch.ops.aten.hypot.default, raising=False)
    wrong = programs.HYPOT_OP.replace("sqrt(", "abs(")
    with ScriptedServer([reply(wrong), reply(programs.HYPOT_OP)]) as server:
        loaded = load(HERE / "missing_op.py", llm=make_config(server.url))
        feedback = server.requests[1]["messages"][-1]["content"]
    assert "output out0: max relative error" in feedback and "float32[6, 6]" in feedback
    assert loaded.provenance[1].attempts == 2
