"""Reports that fit models: module paths on op rows (and in the IR text), the --group-by roll-ups,
the compact top-N table, the contraction headline of a fused op, and stage progress on stderr."""

from __future__ import annotations

import json
import textwrap

import pytest
import torch

from solar import cli
from solar.commands.args import Progress
from solar.report import render
from solar.api import analyze, load
from solar.errors import SolarError
from solar.ir.parser import parse_program
from solar.ir.printer import format_program
from solar.report import OpReport, group_ops, top_ops


class Block(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)

    def forward(self, x):
        return torch.relu(self.lin(x))


def blocks() -> torch.nn.Module:
    return torch.nn.Sequential(Block(), Block(), Block())


@pytest.fixture(scope="module")
def report():
    return analyze(blocks(), [torch.randn(4, 8)])


def test_op_rows_carry_the_module_path(report) -> None:
    rows = [(o.op, o.module) for o in report.ops]
    assert rows == [
        ("aten.linear.default", "0.lin"), ("aten.relu.default", "0"),
        ("aten.linear.default", "1.lin"), ("aten.relu.default", "1"),
        ("aten.linear.default", "2.lin"), ("aten.relu.default", "2"),
    ]


def test_group_by_layer_sums_to_the_totals_exactly(report) -> None:
    rows = group_ops(report.ops, "layer")
    groups, total = rows[:-1], rows[-1]
    assert sorted(r.name for r in groups) == ["0", "1", "2"]
    assert [r.count for r in groups] == [2, 2, 2]
    assert total.name == "total" and total.count == 6
    assert sum(r.flops for r in groups) == total.flops == report.totals.flops == 1632
    assert sum(r.dram_bytes for r in groups) == total.dram_bytes == report.totals.unfused_dram_bytes
    assert total.seconds == pytest.approx(report.bounds["unfused"].seconds)
    assert sum(r.share for r in groups) == pytest.approx(1.0)


def test_group_by_op_and_module_count_the_rows(report) -> None:
    by_op = {r.name: (r.count, r.flops) for r in group_ops(report.ops, "op")}
    assert by_op == {
        "aten.linear.default": (3, 3 * 512), "aten.relu.default": (3, 3 * 32), "total": (6, 1632)
    }
    by_module = {r.name: r.count for r in group_ops(report.ops, "module")}
    assert by_module == {"0.lin": 1, "1.lin": 1, "2.lin": 1, "0": 1, "1": 1, "2": 1, "total": 6}
    with pytest.raises(SolarError, match="cannot group ops by 'file'"):
        group_ops(report.ops, "file")


def test_layer_is_the_path_to_its_first_index() -> None:
    def op(module: str) -> OpReport:
        return OpReport(
            instance=0, op="aten.mm.default", source="", einsum=[], flops=2, contraction_flops=2,
            dram_bytes=8.0, seconds=1.0, bottleneck="launch", compute_seconds=0.0, memory_seconds=0.0,
            module=module,
        )

    ops = [op("model.layers.3.self_attn.q_proj"), op("model.layers.3.mlp"), op("lm_head"), op("")]
    names = [r.name for r in group_ops(ops, "layer")]
    assert names == ["model.layers.3", "lm_head", "(top)", "total"]


def test_ir_round_trips_module_paths() -> None:
    program = load(blocks(), [torch.randn(4, 8)]).program
    text = format_program(program)
    assert '@op aten.linear.default id=2 at "' in text and 'in "1.lin"' in text
    assert parse_program(text) == program
    modules = {s.origin.module for s in program.stmts if s.origin.instance >= 0}
    assert modules == {"0", "1", "2", "0.lin", "1.lin", "2.lin"}


def _op(k: int) -> OpReport:
    return OpReport(
        instance=k, op=f"aten.op{k % 3}.default", source="", einsum=[], flops=k, contraction_flops=0,
        dram_bytes=float(2 * k), seconds=float(k + 1), bottleneck="memory", compute_seconds=0.0,
        memory_seconds=float(k + 1),
    )


def test_top_ops_keeps_the_slowest_and_sums_the_rest() -> None:
    ops = [_op(k) for k in range(45)]
    shown, summary = top_ops(ops, 20)
    assert [o.instance for o in shown] == list(range(44, 24, -1))
    other, total = summary
    assert (other.name, other.count, other.flops) == ("other", 25, sum(range(25)))
    assert other.dram_bytes == 2.0 * sum(range(25))
    assert (total.name, total.count, total.flops) == ("total", 45, sum(range(45)))
    assert other.seconds + sum(o.seconds for o in shown) == total.seconds
    assert [r.name for r in top_ops(ops[:5], 20)[1]] == ["total"]


def test_compact_table_for_many_ops(report) -> None:
    from rich.console import Console

    many = report.model_copy(update={"ops": [_op(k) for k in range(45)]})
    con = Console(width=200, record=True)
    con.print(render.op_table(many, per_op=False, group_by=None, top=20))
    text = con.export_text()
    assert "other (25 ops, " in text and "total (45 ops, 100.0%)" in text and "top 20 of 45 ops" in text
    assert "aten.op2.default" in text  # instance 44, the slowest
    con = Console(width=200, record=True)
    con.print(render.op_table(many, per_op=True, group_by=None))
    assert "other (" not in con.export_text()


def test_fused_op_headline_is_its_contraction() -> None:
    class Attention(torch.nn.Module):
        def forward(self, q, k, v):
            return torch.nn.functional.scaled_dot_product_attention(q, k, v)

    r = analyze(Attention(), [torch.randn(1, 2, 4, 8)] * 3)
    (sdpa,) = [o for o in r.ops if "scaled_dot_product" in o.op]
    assert len(sdpa.contractions) == 2 and len(sdpa.einsum) > 2
    assert all("Σ" in eq for eq in sdpa.contractions) and set(sdpa.contractions) <= set(sdpa.einsum)
    assert sdpa.headline == "; ".join(sdpa.contractions)
    plain = sdpa.model_copy(update={"contractions": [], "einsum": ["a", "bbb", "cc"]})
    assert plain.headline == "bbb"


MODEL_FILE = textwrap.dedent(
    """
    import torch

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(8, 8)

        def forward(self, x):
            return torch.relu(self.lin(x))

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = torch.nn.Sequential(Block(), Block())
            self.head = torch.nn.Linear(8, 2)

        def forward(self, x):
            return self.head(self.layers(x))

    def get_inputs():
        return [torch.randn(4, 8)]

    def get_init_inputs():
        return []
    """
)


@pytest.fixture
def model_file(tmp_path):
    path = tmp_path / "stack.py"
    path.write_text(MODEL_FILE)
    return str(path)


def test_cli_group_by_shows_the_group_names(model_file, capsys) -> None:
    assert cli.main(["analyze", model_file, "--group-by", "layer"]) == 0
    captured = capsys.readouterr()
    assert "ops by layer" in captured.out
    for name in ("layers.{0..1} × 2", "head", "total"):  # the two identical layers in one row
        assert name in captured.out
    assert "layers.0.lin" not in captured.out and "layers.0 " not in captured.out
    assert captured.err == ""  # not a terminal: no progress lines


def test_cli_rejects_an_unknown_grouping(model_file, capsys) -> None:
    assert cli.main(["analyze", model_file, "--group-by", "file"]) == 2
    assert "--group-by: invalid choice: 'file'" in capsys.readouterr().err


def test_json_has_the_module_of_each_op_and_progress_stays_on_stderr(model_file, capsys, monkeypatch) -> None:
    monkeypatch.setattr(Progress, "enabled", staticmethod(lambda: True))  # as on a terminal
    assert cli.main(["analyze", model_file, "--json"]) == 0
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    modules = [o["module"] for o in data["ops"]]
    assert modules == ["layers.0.lin", "layers.0", "layers.1.lin", "layers.1", "head"]
    assert "solar: tracing and lowering" in captured.err and "solar: pricing H100-SXM..." in captured.err
    assert "solar: analysed in" in captured.err
