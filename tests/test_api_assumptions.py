"""solar.api takes one Assumptions per request; the separate precision / clock_mhz / cache /
writeback arguments, positional or keyword, build the same object (assumptions_of)."""

from __future__ import annotations

import pytest

from solar.api import analyze_archs, analyze_loaded, assumptions_of, load
from solar.backends.assumptions import Assumptions
from solar.errors import UsageError
from solar.ir.dtypes import DType
from tests.backends.test_bounds import matmul


def test_policy_arguments_build_one_assumptions() -> None:
    want = Assumptions(precision="fastest", cache="warm", clock_mhz=1410.0, writeback=False)
    assert assumptions_of("fastest", 1410, "warm", False) == want
    assert assumptions_of(precision="fastest", clock_mhz=1410, cache="warm", writeback=False) == want
    assert assumptions_of("fastest", clock_mhz=1410, cache="warm", writeback=False) == want
    assert assumptions_of(want) == want
    assert assumptions_of() == Assumptions()
    assert assumptions_of(precision=None) == Assumptions()  # None: the default


def test_policy_arguments_are_checked() -> None:
    with pytest.raises(UsageError, match="outside 10..10000 MHz"):
        assumptions_of(clock_mhz=5)
    with pytest.raises(UsageError, match="outside 10..10000 MHz"):
        assumptions_of(Assumptions(clock_mhz=5.0))
    with pytest.raises(UsageError, match="not both"):
        assumptions_of(Assumptions(), precision="fastest")
    with pytest.raises(TypeError, match="multiple values for argument 'precision'"):
        assumptions_of("exact", precision="fastest")
    with pytest.raises(UsageError, match="unknown precision policy"):
        assumptions_of("fast")


def test_analyze_loaded_takes_assumptions_or_policy_arguments() -> None:
    loaded = load(matmul(256, 256, 256, DType.BF16))
    a = Assumptions(precision="fastest", clock_mhz=1410.0)
    by_object = analyze_loaded(loaded, "H100-SXM", a)
    assert analyze_loaded(loaded, "H100-SXM", "fastest", 1410) == by_object
    assert analyze_loaded(loaded, "H100-SXM", precision="fastest", clock_mhz=1410) == by_object
    seen: list[str] = []
    reports = analyze_archs(loaded, ["H100-SXM", "L4"], a, on_arch=seen.append)
    assert seen == ["H100-SXM", "L4"] and reports[0] == by_object
