"""compute_time on exact counts past solar.bounded.LIMIT: one SolarError line, not an OverflowError
from converting the count to a float; at the limit the time is the closed form."""

from __future__ import annotations

import pytest

from solar.backends import Work, compute_time
from solar.bounded import LIMIT
from solar.errors import SolarError
from solar.hardware import get_spec
from solar.ir.scalar_ops import CostClass

H100 = get_spec("H100-SXM")
FMA = (CostClass.FMA, "fp32")


def test_work_at_the_limit_is_priced():
    assert compute_time(Work.make(simt={FMA: LIMIT}), H100).seconds == LIMIT / H100.simt_rate("fp32")


@pytest.mark.parametrize("amount", [LIMIT + 1, 10**400])
def test_work_past_the_limit_is_one_line(amount):
    with pytest.raises(SolarError, match=r"^the program's work \(operations of one class\): .* is beyond 1e\+40; sizes this large"):
        compute_time(Work.make(simt={FMA: amount}), H100)
