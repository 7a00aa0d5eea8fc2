"""Finding problems in a KernelBench layout."""

from __future__ import annotations

import pytest

from solar.errors import UsageError
from solar.kernelbench.problems import find_problems, level_of
from tests.kernelbench.helpers import RELU, write_suite

FILES = [
    "level1/10_J.py",
    "level1/2_B.py",
    "level1/1_A_matmul.py",
    "level2/1_C_matmul.py",
    "level3/1_D.py",
    "huge/1_H.py",
]


def test_levels_in_natural_order_outside_folders_ignored(tmp_path):
    write_suite(tmp_path, {f: RELU for f in FILES} | {"level1/__init__.py": ""})
    assert [p.rel for p in find_problems(tmp_path)] == [
        "level1/1_A_matmul.py",
        "level1/2_B.py",
        "level1/10_J.py",
        "level2/1_C_matmul.py",
        "level3/1_D.py",
    ]
    assert [p.rel for p in find_problems(tmp_path, (2, 3))] == [
        "level2/1_C_matmul.py",
        "level3/1_D.py",
    ]
    assert [p.rel for p in find_problems(tmp_path, (), "*matmul*")] == [
        "level1/1_A_matmul.py",
        "level2/1_C_matmul.py",
    ]
    assert [p.rel for p in find_problems(tmp_path, (1,), "level1/1*")] == [
        "level1/1_A_matmul.py",
        "level1/10_J.py",
    ]
    assert find_problems(tmp_path, (3,))[0].level == 3 and level_of("huge/1_H.py") is None


def test_a_kernelbench_clone_is_accepted(tmp_path):
    write_suite(tmp_path / "KernelBench", {"level1/1_A.py": RELU})
    (tmp_path / "scripts").mkdir()
    assert [p.rel for p in find_problems(tmp_path)] == ["level1/1_A.py"]


def test_bad_roots_and_empty_selections_are_usage_errors(tmp_path):
    with pytest.raises(UsageError, match="no such folder"):
        find_problems(tmp_path / "missing")
    with pytest.raises(UsageError, match="no levelN folders"):
        find_problems(tmp_path)
    write_suite(tmp_path, {"level1/1_A.py": RELU})
    with pytest.raises(UsageError, match="no problem files at level 4 matching 'x'"):
        find_problems(tmp_path, (4,), "x")
