"""Benchmarks of solar itself and the problem suite they run on (see benchmarks/suite_tools.py)."""
