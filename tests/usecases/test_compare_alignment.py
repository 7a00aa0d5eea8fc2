"""solar compare with a mix of calibrated and uncalibrated GPUs: the table's columns are the union of
the rows' levels in report order, each cell under its own level ("–" where a GPU lacks it), in any
order of the GPUs; the JSON row of a GPU has only the levels it has."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.table import Table

from solar.api import analyze_archs, load
from solar.backends.levels import ordered, title
from solar.report import render
from solar.usecases import cli
from solar.usecases.compare import build_comparison

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = ("matmul", "layernorm_softmax")  # files: their eager op list gives the eager_host level

MIXED = ["L4", "A100-SXM4-80GB", "H100-SXM", "H200-SXM", "B200"]  # H200-SXM has calibrated floors
ORDERS = [MIXED, ["H200-SXM", *[a for a in MIXED if a != "H200-SXM"]], ["L4", "H200-SXM"], ["H200-SXM", "L4"]]


@pytest.fixture(scope="module")
def loaded():
    return {name: load(str(ROOT / "examples" / f"{name}.py")) for name in PROGRAMS}


def _printed_table(c, monkeypatch) -> Table:
    shown = []

    class Console:
        def print(self, x, **_):
            if isinstance(x, Table):
                shown.append(x)

    monkeypatch.setattr(render, "console", Console)
    cli.print_comparison(c)
    (table,) = shown
    return table


@pytest.mark.parametrize("order", ORDERS, ids=lambda o: ",".join(o))
@pytest.mark.parametrize("program", PROGRAMS)
def test_every_cell_under_its_level(loaded, program, order, monkeypatch):
    reports = analyze_archs(loaded[program], order)
    c = build_comparison(loaded[program], reports)
    union = ordered(lv for r in reports for lv in r.bounds)
    assert "eager_host" in union  # the calibrated GPU has a level the others lack
    for row, rep in zip(c.rows, reports):
        assert list(row.levels) == list(rep.bounds)  # the JSON row: only the levels that GPU has
    table = _printed_table(c, monkeypatch)
    headers = [str(col.header) for col in table.columns]
    assert headers[2 : 2 + len(union)] == [title(lv) for lv in union]
    columns = [list(col._cells) for col in table.columns]
    assert all(len(cells) == len(c.rows) for cells in columns)  # as many cells per row as headers
    for i, row in enumerate(c.rows):
        assert columns[0][i] == row.arch
        for j, level in enumerate(union):
            cell = columns[2 + j][i]
            if level in row.levels:
                assert cell.startswith(render.fmt_seconds(row.levels[level].seconds) + " ("), (row.arch, level, cell)
                assert cell.endswith(row.levels[level].binds)
            else:
                assert cell == "–", (row.arch, level, cell)
