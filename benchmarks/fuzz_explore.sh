#!/usr/bin/env bash
# Fresh random examples for the property tests (CI runs them derandomised): N rounds of the IR
# text fuzzer with EXAMPLES programs each, then the spec and in-order-loop property tests.
# usage: bash benchmarks/fuzz_explore.sh [ROUNDS] [EXAMPLES]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-4}
examples=${2:-1000}
for r in $(seq "$rounds"); do
  echo "round $r"
  SOLAR_HYPOTHESIS=explore SOLAR_FUZZ_EXAMPLES=$examples .venv/bin/python -m pytest -q -x \
    -p no:cacheprovider tests/fuzz tests/ir/test_seq_property.py
done
