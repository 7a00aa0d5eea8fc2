"""benchmarks.rows.row_or_error: a measurement's row, or one line for its failure."""

from __future__ import annotations

import pytest

from benchmarks.rows import row_or_error


def _fails(exc: Exception):
    def measure() -> dict:
        raise exc

    return measure


@pytest.mark.parametrize("measure,row", [
    (lambda: {"measured": {"eager": 1.0}}, {"measured": {"eager": 1.0}}),
    (_fails(ValueError("no such file\nsecond line")), {"error": "ValueError: no such file"}),
    (_fails(MemoryError()), {"error": "MemoryError: "}),
])
def test_a_row_or_its_error(measure, row):
    assert row_or_error(measure, "cpu") == row


def test_an_interrupt_is_not_a_row():
    with pytest.raises(KeyboardInterrupt):
        row_or_error(_fails(KeyboardInterrupt()), "cpu")
