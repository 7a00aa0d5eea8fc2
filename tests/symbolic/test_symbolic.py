"""Symbolic bounds: for suite problems with sizes as symbols, every formula (FLOPs, bytes, compute,
memory, launch, fused, unfused) evaluated at each traced size equals the numeric analysis of the
program traced there (FLOPs and bytes exactly); exact formulas for known counts; error paths.

The whole suite runs with `pytest -m slow tests/symbolic` (benchmarks/symbolic_suite.py is the
same sweep as a script)."""

from __future__ import annotations

import functools
import re
from pathlib import Path

import pytest
import sympy

from solar.api import load
from solar.backends.assumptions import Assumptions
from solar.errors import UsageError
from solar.hardware import get_spec
from solar.symbolic import SymbolicError, analyze_symbolic, parse_symbols, trace_file
from solar.symbolic.check import mismatches

SUITE = Path(__file__).resolve().parents[2] / "benchmarks" / "suite"
H100 = get_spec("H100-SXM")


def _program(path: Path):
    return load(path).program


# (problem, GLOBAL=SYMBOL): a cubic count, a guarded triangle with two symbols, strided rounding,
# and an in-order recurrence.
CASES = [
    ("level1/1_Square_matmul.py", "N=N"),
    ("level1/50_SDPA_causal.py", "BATCH=B,SEQ=S"),
    ("level1/8_Conv2d_7x7_stride2.py", "HEIGHT=H"),
    ("level3/51_LSTM.py", "SEQ=S"),
]


@functools.cache
def _traced(path: Path, symbols: str):
    return trace_file(path, symbols, _program)


def _check(path: Path, symbols: str, spec=H100, assumptions=Assumptions()):
    sp = _traced(path, symbols)
    sa = analyze_symbolic(sp, spec, assumptions)
    assert len(sp.points) >= 3
    bad = [
        m
        for p, prog in zip(sp.points, sp.traced)
        for m in mismatches(sa, p, prog, spec, assumptions)
    ]
    assert not bad, bad
    return sp, sa


@pytest.mark.parametrize(("problem", "symbols"), CASES, ids=[c[0].split("/")[1] for c in CASES])
def test_formula_equals_numeric_at_traced_sizes(problem, symbols):
    _check(SUITE / problem, symbols)


def test_known_counts_are_exact_formulas():
    _, sa = _check(SUITE / "level1/1_Square_matmul.py", "N=N")
    n = sympy.Symbol("N", integer=True, positive=True)
    assert sa.flops == 2 * n**3 and sa.contraction_flops == 2 * n**3
    l2 = get_spec("H100-SXM").l2_bytes  # C's bytes beyond the write-back L2 reach DRAM (BOUNDS §3)
    assert sympy.simplify(sa.dram_bytes - (8 * n**2 + sympy.Max(0, 4 * n**2 - l2))) == 0
    # the causal triangle: S(S+1)/2 scores per head, in both contractions
    _, sa = _check(SUITE / "level1/50_SDPA_causal.py", "BATCH=B,SEQ=S")
    s, b = (sympy.Symbol(x, integer=True, positive=True) for x in "SB")
    h, d = 16, 64
    assert sympy.expand(sa.contraction_flops - 2 * 2 * b * h * d * s * (s + 1) / 2) == 0


def test_piecewise_crossovers_on_one_symbol():
    _, sa = _check(SUITE / "level1/1_Square_matmul.py", "N=N", get_spec("L4"))
    lines = sa.regions()
    assert [line.split(": ")[1].split(" =")[0] for line in lines] == ["launch", "memory", "compute"]
    # memory = compute where 12 N^2 / BW = 2 N^3 / rate
    cut = float(re.match(r"N in \[([0-9.e+]+), ([0-9.e+]+)\)", lines[1]).group(2))
    assert cut == pytest.approx(
        sa.evaluate({"N": 1})["memory_seconds"] / sa.evaluate({"N": 1})["compute_seconds"], rel=1e-6
    )


def test_warm_cache_and_fastest_precision():
    _check(
        SUITE / "level1/1_Square_matmul.py",
        "N=N",
        get_spec("A100-SXM4-80GB"),
        Assumptions(precision="fastest", cache="warm"),
    )


def test_bad_symbols_are_one_line_errors(tmp_path):
    with pytest.raises(UsageError, match="GLOBAL=SYMBOL"):
        parse_symbols("batch")
    with pytest.raises(UsageError, match="named twice"):
        parse_symbols("A=X,B=X")
    with pytest.raises(UsageError, match="expected one module-level line `NOPE = <integer>`"):
        trace_file(SUITE / "level1/1_Square_matmul.py", "NOPE=X", _program)


def _model_file(tmp_path: Path, globals_: str, body: str, shape: str) -> Path:
    f = tmp_path / "model.py"
    f.write_text(
        f"import torch\nimport torch.nn as nn\n{globals_}\n"
        "class Model(nn.Module):\n"
        "    def forward(self, x):\n"
        f"{body}"
        f"def get_inputs():\n    return [torch.randn({shape})]\n"
        "def get_init_inputs():\n    return []\n"
    )
    return f


def test_a_size_inside_a_flattened_index_is_refused(tmp_path):
    f = _model_file(
        tmp_path, "SEQ = 8", "        return x.reshape(-1, 4).t() @ x.reshape(-1, 4)\n", "2, SEQ, 4"
    )
    with pytest.raises(SymbolicError, match="changes with the symbols"):
        trace_file(f, "SEQ=S", _program)


def test_a_structure_that_changes_with_the_size_is_refused(tmp_path):
    body = "        for _ in range(STEPS):\n            x = torch.relu(x) * 2\n        return x\n"
    f = _model_file(tmp_path, "STEPS = 2", body, "8, 8")
    with pytest.raises(SymbolicError, match="structure changes between"):
        trace_file(f, "STEPS=T", _program)


def _suite():
    from benchmarks.symbolic_suite import size_global

    for f in sorted(SUITE.glob("level*/*.py")):
        g = size_global(f.read_text())
        if g is not None:
            yield pytest.param(f, g, id=f.stem)


FLATTENED = "changes with the symbols"  # a reshape of B*S back into B, S: isl divides by no parameter
# Suite problems refused with one line, and the line (re-run `pytest -m slow tests/symbolic` after
# the write-back merge: 74 formulas equal the numeric analysis, these 7 are refused as before).
REFUSED = {
    "12_Linear_Dropout_GELU_LayerNorm": FLATTENED,
    "4_Linear_GELU_LayerNorm": FLATTENED,
    "50_Embedding_MLP": FLATTENED,
    "52_QKV_projection_causal_SDPA": FLATTENED,
    "3_Transformer_encoder_block": FLATTENED,
    "50_MinGPT_block_causal_attention": "could not trace",  # SEQ is capped by the causal mask's size
    "53_Vanilla_RNN_step": "in-place updates",
}


@pytest.mark.slow
@pytest.mark.parametrize(("path", "name"), list(_suite()))
def test_whole_suite(request, path, name):
    if "slow" not in (request.config.getoption("markexpr") or ""):
        pytest.skip("the whole suite runs with -m slow")
    if path.stem in REFUSED:
        from solar.errors import SolarError

        with pytest.raises(SolarError, match=REFUSED[path.stem]):
            _check(path, f"{name}=X")
        return
    _check(path, f"{name}=X")


def test_cli_and_api(tmp_path, capsys):
    import json

    import solar
    from solar.cli import main

    body = "        return x @ x\n"
    f = _model_file(tmp_path, "N = 16", body, "N, N")
    assert main(["analyze", str(f), "--symbolic", "N=N", "--arch", "L4", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    n = sympy.Symbol("N", integer=True, positive=True)
    written = sympy.Max(0, 4 * n**2 - get_spec("L4").l2_bytes)  # beyond the write-back L2
    dram = sympy.sympify(out["formulas"]["dram_bytes"], locals={"N": n})
    assert out["formulas"]["flops"] == "2*N**3" and sympy.simplify(dram - (4 * n**2 + written)) == 0
    assert out["at_traced"]["flops"] == 2 * 16**3
    sa = solar.analyze(str(f), symbols="N=N", arch="L4")
    assert sa.evaluate({"N": 32})["flops"] == 2 * 32**3
    assert main(["analyze", str(f), "--symbolic", "N"]) == 2  # one line, exit 2
    assert "GLOBAL=SYMBOL" in capsys.readouterr().err


def test_cache_aware_reread_term_beyond_the_traced_sizes(tmp_path):
    """Train-mode batch norm re-reads x when a channel's slice exceeds on-chip storage: at the
    traced batches (16, 32, 48) it fits, at 512 it does not; the formula holds at both."""
    from solar.symbolic.trace import with_values

    path = SUITE / "level1/25_BatchNorm2d_batch_statistics.py"
    sp, sa = _check(path, "BATCH=B")
    assert isinstance(sa.cache_aware_dram_bytes, sympy.Add) and sa.cache_aware_dram_bytes.has(
        sympy.Max
    )
    f = tmp_path / path.name
    f.write_text(with_values(path.read_text(), {"BATCH": 512}))
    program = load(f).program
    assert sa.evaluate({"B": 512})["cache_aware_dram_bytes"] > sa.evaluate({"B": 512})["dram_bytes"]
    assert not mismatches(sa, {"B": 512}, program, H100)
