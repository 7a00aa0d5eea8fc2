"""What `solar analyze` prints: the answer first (bounds, the binding level, the mode notice), the
top ops one line each within the console width, the short assumption lines (full text with
--verbose), identical layers folded by --group-by, and "what to fix first" without zero gaps or
repeated lines."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch

from solar import cli
from solar.api import analyze
from solar.report import group_ops, render
from solar.report.insight import Gap, Opportunity
from solar.report.model import TrafficReport

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


class Block(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.up = torch.nn.Linear(16, 32)
        self.down = torch.nn.Linear(32, 16)

    def forward(self, x):
        return x + self.down(torch.relu(self.up(x)))


class Stack(torch.nn.Module):
    """Four identical blocks in a ModuleList and a head."""

    def __init__(self, norm: torch.nn.Module | None = None) -> None:
        super().__init__()
        self.layers = torch.nn.ModuleList(Block() for _ in range(4))
        self.norm = norm if norm is not None else torch.nn.Identity()
        self.head = torch.nn.Linear(16, 4)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.head(self.norm(x))


INPUTS = [torch.randn(8, 16)]


@pytest.fixture(scope="module")
def report():
    return analyze(Stack(), INPUTS)


def _printed(capsys, monkeypatch, report, columns: int, **view) -> list[str]:
    monkeypatch.setenv("COLUMNS", str(columns))
    render.print_report(report, **view)
    return [line.rstrip() for line in capsys.readouterr().out.splitlines()]


def test_the_answer_comes_first_and_the_assumptions_last(report, capsys, monkeypatch) -> None:
    lines = _printed(capsys, monkeypatch, report, 120)
    heads = ["Stack on H100-SXM", "bounds", "binds: any implementation ≥ ", "top 10 of 17 ops by time", "totals: ",
             "what to fix first:", "assumptions (--verbose for the full text):"]
    at = [next(k for k, line in enumerate(lines) if line.startswith(h)) for h in heads]
    assert at == sorted(at) and at[:3] == [0, 1, at[1] + 3 + len(report.bounds)]  # title, header, rule, rows
    for line, (level, b) in zip(lines[at[1] + 3:], report.bounds.items()):
        assert re.match(rf"{level} +{re.escape(render.fmt_seconds(b.seconds))}  +{b.bottleneck} ", line)


@pytest.mark.parametrize("columns", [80, 120, 200])
def test_every_line_fits_and_every_top_op_is_one_row(columns, capsys, monkeypatch) -> None:
    r = analyze(Stack(), INPUTS)
    lines = _printed(capsys, monkeypatch, r, columns, top=5)
    assert max(len(line) for line in lines) <= columns
    for level in r.bounds:  # one line per level
        assert sum(line.startswith(f"{level} ") for line in lines) == 1
    table = lines[lines.index(next(x for x in lines if x.startswith("top 5 of 17 ops"))) + 3:]
    rows = table[:7]
    shown = sorted(r.ops, key=lambda o: -o.seconds)[:5]
    for op, row in zip(shown, rows):  # one line per op: its name, its time, its source line
        assert row.startswith(op.op) and render.fmt_seconds(op.seconds) in row
        assert row.rstrip().endswith(op.source.split(": ", 1)[0]) or columns < 120
    assert rows[5].startswith("other (12 ops, ") and rows[6].startswith("total (17 ops, 100.0%)")


def test_a_wide_console_shows_the_einsum_cut_to_its_column(report, capsys, monkeypatch) -> None:
    lines = _printed(capsys, monkeypatch, report, 200, top=3)
    op = max(report.ops, key=lambda o: o.seconds)
    row = next(line for line in lines if line.startswith(op.op))
    assert op.headline[:20] in row
    assert "…" in row or op.headline in row


def test_verbose_shows_the_full_assumptions_and_einsums(report, capsys, monkeypatch) -> None:
    short = _printed(capsys, monkeypatch, report, 120)
    full = _printed(capsys, monkeypatch, report, 1000, verbose=True)
    tail = short[short.index("assumptions (--verbose for the full text):") + 1:-1]
    assert tail == [f"  {render.short(a)}" for a in report.assumptions]
    assert all(len(line) <= 120 for line in tail)
    assert full[full.index("assumptions:") + 1:-1] == [f"  - {a}" for a in report.assumptions]


@pytest.mark.parametrize(
    "line, expected",
    [
        ("precision: exact — fp32 contractions stay fp32 (SIMT) unless", "precision: exact"),
        ("cache: cold — L2 flushed before the run: every input", "cache: cold"),
        ("end: the run ends with its last kernel; output bytes up to the L2", "end: the run ends with its last kernel"),
        ("module mode: as constructed (training mode unless the file says otherwise), no gradients",
         "module mode: as constructed"),
        ("eager_host: not reported: no calibrated dispatch floors for H100-SXM (run", "eager_host: not reported"),
        ("launch: every kernel takes at least the spec's minimum kernel time",
         "launch: every kernel takes at least the spec's minimum kernel time"),
        ("IR of the whole program: traced", "IR of the whole program: traced"),
        ("a line without a key (and a remark)", "a line without a key"),
    ],
)
def test_an_assumption_is_short_as_its_key_and_head(line, expected) -> None:
    assert render.short(line) == expected


# ---- the module mode ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "norm, mode, notice",
    [
        (torch.nn.BatchNorm1d(16), None, ("mode: traced in training mode, as constructed (it changes BatchNorm1d); "
                                          "for inference pass --mode eval")),
        (torch.nn.Dropout(0.1), None, ("mode: traced in training mode, as constructed (it changes Dropout); "
                                       "for inference pass --mode eval")),
        (torch.nn.BatchNorm1d(16).eval(), None, ("mode: traced in eval mode, as constructed (it changes "
                                                 "BatchNorm1d); for a training-mode forward pass --mode train")),
        (torch.nn.Sequential(torch.nn.BatchNorm1d(16), torch.nn.Dropout(0.5).eval()), None,
         ("mode: traced as constructed: BatchNorm1d in training mode, Dropout in eval mode; pass --mode eval "
          "or --mode train to put every layer in one mode")),
        (torch.nn.BatchNorm1d(16), "eval", None),  # a mode was asked for
        (torch.nn.BatchNorm1d(16), "train", None),
        (torch.nn.BatchNorm1d(16, track_running_stats=False), None, None),  # batch statistics in both modes
        (torch.nn.Dropout(0.0), None, None),  # drops nothing in either mode
        (torch.nn.LayerNorm(16), None, None),  # no mode-dependent layer
    ],
)
def test_the_mode_notice_names_the_layers_and_the_flag(norm, mode, notice, capsys, monkeypatch) -> None:
    r = analyze(Stack(norm), INPUTS, mode=mode)
    assert r.notices == ([notice] if notice else [])
    lines = _printed(capsys, monkeypatch, r, 1000)
    binds = next(k for k, line in enumerate(lines) if line.startswith("binds: "))
    assert (lines[binds + 1] == notice) if notice else not any(line.startswith("mode: ") for line in lines)


def test_the_cli_prints_the_mode_notice_unless_mode_is_given(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    path = tmp_path / "bn.py"
    path.write_text(
        "import torch\n\n"
        "class Model(torch.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.conv = torch.nn.Conv2d(3, 8, 3)\n"
        "        self.bn = torch.nn.BatchNorm2d(8)\n\n"
        "    def forward(self, x):\n"
        "        return self.bn(self.conv(x))\n\n"
        "def get_inputs():\n"
        "    return [torch.randn(2, 3, 8, 8)]\n"
    )
    assert cli.main(["analyze", str(path)]) == 0
    out = capsys.readouterr().out
    assert "mode: traced in training mode, as constructed (it changes BatchNorm2d); for inference pass --mode eval" in out
    assert cli.main(["analyze", str(path), "--mode", "eval"]) == 0
    assert "mode: traced" not in capsys.readouterr().out


# ---- --group-by folds identical groups --------------------------------------------------------------


def test_group_by_layer_folds_identical_layers(report) -> None:
    rows = group_ops(report.ops, "layer", fold=True)
    assert [(r.name, r.repeat, r.count) for r in rows] == [
        ("layers.{0..3}", 4, 16), ("head", 1, 1), ("total", 1, 17),
    ]
    unfolded = group_ops(report.ops, "layer")
    assert [r.name for r in unfolded][:4] == ["layers.0", "layers.1", "layers.2", "layers.3"]
    folded, total = rows[0], rows[-1]
    assert folded.flops == sum(r.flops for r in unfolded[:4])
    assert folded.seconds == pytest.approx(sum(r.seconds for r in unfolded[:4]), rel=1e-12)
    assert sum(r.seconds for r in rows[:-1]) == pytest.approx(total.seconds, rel=1e-12)
    by_module = {r.name: r.repeat for r in group_ops(report.ops, "module", fold=True)}
    assert by_module == {"layers.{0..3}.up": 4, "layers.{0..3}.down": 4, "layers.{0..3}": 4, "head": 1, "total": 1}


def test_group_by_keeps_a_different_layer_apart(report) -> None:
    """Layer 2 slower than the others: layers 0, 1 and 3 fold ("0..1,3"), layer 2 stays its own row."""
    ops = [o.model_copy(update={"seconds": 2 * o.seconds}) if o.module.startswith("layers.2") else o
           for o in report.ops]
    names = [(r.name, r.repeat) for r in group_ops(ops, "layer", fold=True)]
    assert names == [("layers.{0..1,3}", 3), ("layers.2", 1), ("head", 1), ("total", 1)]


def test_cli_group_by_layer_prints_one_row_times_four(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    path = tmp_path / "stack.py"
    path.write_text(
        "import torch\n"
        f"{_source(Block)}\n{_source(Stack)}\n"
        "Model = Stack\n\n"
        "def get_inputs():\n"
        "    return [torch.randn(8, 16)]\n"
    )
    assert cli.main(["analyze", str(path), "--group-by", "layer"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"│ layers\.\{0\.\.3\} × 4 +│ 16 ", out) and "│ layers.1 " not in out
    assert "× N: N groups of the same ops and the same time in one row, their sum" in out


def _source(cls: type) -> str:
    import inspect

    return inspect.getsource(cls)


# ---- what to fix first --------------------------------------------------------------------------------


def _fix_first(report, capsys, gaps, opportunities) -> list[str]:
    from rich.console import Console

    r = report.model_copy(update={"insights": report.insights.model_copy(
        update={"gaps": gaps, "opportunities": opportunities})})
    render.print_fix_first(Console(width=200), r)
    return [line.rstrip() for line in capsys.readouterr().out.splitlines()]


def test_a_gap_that_prints_as_zero_is_left_out(report, capsys) -> None:
    gaps = [Gap(lo="fused", hi="cache_aware", seconds=0.0, by_term={}, parts=[]),
            Gap(lo="cache_aware", hi="library", seconds=4e-9, by_term={"launch": 4e-9}, parts=[]),
            Gap(lo="library", hi="unfused", seconds=2e-6, by_term={"launch": 2e-6}, parts=[])]
    lines = _fix_first(report, capsys, gaps, [])
    assert lines == ["what to fix first:", "  library -> unfused: +2.00 µs (mostly launch)"]


def test_an_opportunity_names_its_place_and_count(report, capsys) -> None:
    ops = [Opportunity(kind="fusion", what="fuse add into its neighbours", seconds=3e-6, lo="library", hi="unfused",
                       where="model.py:33", count=4),
           Opportunity(kind="precision", what="run dot_general at the fastest precision", seconds=1e-6,
                       caveat="fp32 contractions round their inputs: results differ", where="model.py:12")]
    lines = _fix_first(report, capsys, [], ops)
    assert lines[1:] == [
        "  1. fusion (model.py:33): fuse add into its neighbours (× 4) — up to 3.00 µs (library -> unfused)",
        ("  2. precision (model.py:12): run dot_general at the fastest precision — up to 1.00 µs "
         "[caveat: fp32 contractions round their inputs]"),
    ]


def test_jax_opportunities_name_their_line_and_none_repeats(capsys, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "400")
    assert cli.main(["analyze", str(EXAMPLES / "jax" / "moe_router.py")]) == 0
    out = [line.rstrip() for line in capsys.readouterr().out.splitlines()]
    fixes = [line for line in out[out.index("what to fix first:") + 1:] if re.match(r"  \d\. ", line)]
    assert len(fixes) == 3 and len({f.split(". ", 1)[1] for f in fixes}) == 3
    assert [f for f in fixes if "precision" in f] == [
        f"  {n}. precision (moe_router.py:{line}): run dot_general at the fastest precision (it runs on tensor tf32 "
        f"now) — up to 3.36 µs [caveat: fp32 contractions on TF32/BF16 tensor cores round their inputs]"
        for n, line in ((2, 34), (3, 35))
    ]


def test_top_chooses_how_many_ops(capsys, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    assert cli.main(["analyze", str(EXAMPLES / "conv_block.py"), "--top", "2"]) == 0
    out = capsys.readouterr().out
    assert "top 2 of 5 ops by time (unfused: one kernel per op)" in out and "other (3 ops, " in out
    assert cli.main(["analyze", str(EXAMPLES / "conv_block.py"), "--top", "0"]) == 2
    assert "argument --top: '0': must be an integer in 1.." in capsys.readouterr().err


TRAFFIC = [  # (compulsory, dependency-forced, capacity-forced, cache-aware, S) bytes -> the two lines
    ((67.109e6, 0, 0, 67.109e6, 125.96e6),
     ("DRAM traffic: compulsory 67.109 MB, dependency-forced +0 B, capacity-forced +0 B",
      "  -> cache-aware 67.109 MB (on-chip storage S = 125.960 MB)")),
    ((999.999e12, 999.999e12, 999.999e12, 999.999e12, 999.999e12),  # the widest numbers
     ("DRAM traffic: compulsory 999.999 TB, dependency-forced +999.999 TB, capacity-forced +999.999 TB",
      "  -> cache-aware 999.999 TB (on-chip storage S = 999.999 TB)")),
]


@pytest.mark.parametrize("sizes,expected", TRAFFIC)
def test_the_traffic_lines_fit_the_console(sizes, expected) -> None:
    c, d, z, a, s = sizes
    traffic = TrafficReport(onchip_bytes=s, l2_resident_bytes=0, compulsory_bytes=c, dependency_forced_bytes=d,
                            capacity_forced_bytes=z, cache_aware_bytes=a, forced=[])
    assert traffic.lines() == expected
    assert max(len(line) for line in traffic.lines()) <= 100
    assert traffic.summary() == f"{expected[0]} {expected[1].strip()}"


@pytest.mark.parametrize("bounds, label", [
    # graphed charges its in-graph launches, eager_host the host's dispatch, which no term carries
    ({"unfused": (4e-6, 1e-6, 3e-6, 1e-6), "graphed": (5e-6, 1e-6, 3e-6, 2e-6), "eager_host": (9e-6, 1e-6, 3e-6, 1e-6)},
     ["unfused -> graphed: +1.00 µs (mostly launch)", "graphed -> eager_host: +4.00 µs (mostly host dispatch)"]),
    ({"unfused": (4e-6, 1e-6, 3e-6, 1e-6), "eager_host": (6e-6, 1e-6, 3e-6, 1e-6)},
     ["unfused -> eager_host: +2.00 µs (mostly host dispatch)"]),
    ({"unfused": (4e-6, 1e-6, 3e-6, 1e-6), "eager_host": (4.5e-6, 1e-6, 3e-6, 1e-6), "graphed": (6e-6, 1e-6, 3e-6, 3e-6)},
     ["unfused -> eager_host: +0.50 µs (mostly host dispatch)", "unfused -> graphed: +2.00 µs (mostly launch)"]),
])
def test_a_gap_names_the_host_dispatch_eager_host_adds(report, capsys, bounds, label) -> None:
    from solar.report.insight import gaps
    from solar.report.model import BoundReport

    made = {level: BoundReport(seconds=s, bottleneck="memory", compute_seconds=c, memory_seconds=m, launch_seconds=la)
            for level, (s, c, m, la) in bounds.items()}
    r = report.model_copy(update={"bounds": made, "ops": []})
    lines = _fix_first(report, capsys, gaps(r), [])
    assert lines == ["what to fix first:", *(f"  {line}" for line in label)]
