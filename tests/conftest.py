"""Test-suite settings: the IR verifier runs after every IR pass (solar.passes); property tests are
derandomised (the same examples on every run, so a CI result is reproducible) unless
SOLAR_HYPOTHESIS=explore asks for fresh random examples (`benchmarks/fuzz_explore.sh`)."""

import os

import pytest
from hypothesis import settings

import solar.passes


@pytest.fixture(autouse=True)
def _verify_between_passes():
    with solar.passes.verifying(True):
        yield

settings.register_profile("ci", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False, database=None)
settings.load_profile(os.environ.get("SOLAR_HYPOTHESIS", "ci"))
