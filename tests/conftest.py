"""Test-suite settings: the IR verifier runs after every IR pass (solar.passes)."""

import solar.passes

solar.passes.verify_between_passes = True
