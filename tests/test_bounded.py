"""solar.bounded: numbers and expressions from outside, refused with one line before they are
computed when they pass a limit (digits, magnitude, length, nesting), exact values otherwise; and
solar.userfiles' writability checks of output paths."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from solar import bounded
from solar.errors import SolarError, UsageError
from solar.userfiles import check_writable, check_writable_dir


class Bad(SolarError):
    pass


ENV = {"a": 3, "b": 4, "big": 10**39}


@pytest.mark.parametrize(
    "text, value",
    [
        ("(a + 1) * b // 2 - a % 2 + 2 ** a", 15),
        ("a / 2", 1.5),
        ("2 ** 132", 2**132),  # the largest power of two within LIMIT
        ("1 ** 10**39", 1),  # a base of 1 stays 1 at any exponent
        ("(-1) ** (10**39 + 1)", -1),
        ("0 ** big", 0),
        ("2 ** -2", 0.25),
        ("big * 10", 10**40),
        ("a < b <= 4 and not a == b", True),
        ("a > b or b % 2 == 1", False),
        ("-" * 97 + "a", -3),  # 99 levels deep
    ],
)
def test_values_within_the_limits_are_exact(text, value):
    got = bounded.evaluate(text, ENV, "x", Bad)
    assert got == value and type(got) is type(value)


@pytest.mark.parametrize(
    "text, message",
    [
        ("9**9**9**9", r"x: '9\*\*9\*\*9\*\*9' raises 9 to the power 387420489, beyond 1e\+40"),
        ("10**10**10", r"raises 10 to the power 10000000000, beyond 1e\+40"),
        ("2 ** 133", r"'2 \*\* 133' reaches 10889035741470030830827987437816582766592 is beyond 1e\+40"),
        ("2 ** 134", r"raises 2 to the power 134, beyond 1e\+40"),
        ("big * 11", r"reaches 11000000000000000000000000000000000000000 is beyond 1e\+40"),
        ("10.0 ** 400", r"raises 10\.0 to the power 400, beyond 1e\+40"),
        ("1e400 > a", r"reaches inf is not a finite number"),
        ("1 / 1e-300", r"reaches 1e\+300 is beyond 1e\+40"),
        ("(0 - a) ** 0.5", r"reaches complex .* is not a real number"),
        ("a // (b - 4)", r"divides by zero"),
        ("c + 1", r"names 'c', which is no axis with a value here; known: a, b, big"),
        ("__import__('os')", r"uses Call, which an axis expression may not"),
        ("a if b else 1", r"uses IfExp"),
        ("a +", r"'a \+' is not an expression"),
        ("+".join(["1"] * 600), r"an expression of 1199 characters \(at most 1000\)"),
        ("-" * 150 + "a", r"is nested more than 100 levels deep"),
        ("(" * 300 + "a" + ")" * 300, r"is not an expression"),  # the parser's own limit
    ],
)
def test_past_a_limit_is_one_line_before_computing(text, message):
    with pytest.raises(Bad) as info:
        bounded.evaluate(text, ENV, "x", Bad)
    assert re.search(message, str(info.value)), str(info.value)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    "text, value, message",
    [
        ('{"n": [1, 2.5, -3]}', {"n": [1, 2.5, -3]}, None),
        ("9" * 40, int("9" * 40), None),
        ("9" * 41, None, r"w: a number of 41 digits \(at most 40\)"),
        ("-" + "9" * 5000, None, r"w: a number of 5000 digits"),
        ("[" * 100_000, None, r"w: JSON nested too deeply"),
        ('{"a": ', None, r"w:1:7: not JSON \(Expecting value\)"),
    ],
)
def test_json_numbers_and_nesting_are_bounded(text, value, message):
    if message is None:
        assert bounded.loads_json(text, "w", Bad) == value
        return
    with pytest.raises(Bad, match=message):
        bounded.loads_json(text, "w", Bad)


@pytest.mark.parametrize(
    "value, problem",
    [
        (10**40, None),
        (-(10**40), None),
        (10**40 + 1, "10000000000000000000000000000000000000001 is beyond 1e+40"),
        (10**400, "about 10^400 is beyond 1e+40"),
        (1e39, None),
        (1e40, "1e+40 is beyond 1e+40"),  # the float 1e40 is a little above 10**40
        (float("nan"), "nan is not a finite number"),
        (True, None),
    ],
)
def test_magnitude(value, problem):
    assert bounded.magnitude_problem(value) == problem


def test_as_float_refuses_a_count_past_the_limit():
    assert bounded.as_float(10**12, "work", Bad) == 1e12
    with pytest.raises(Bad, match=r"work: about 10\^351 is beyond 1e\+40; sizes this large"):
        bounded.as_float(10**351, "work", Bad)


@pytest.mark.parametrize("text, problem", [("1" * 40, None), ("1_000_" + "0" * 37, "a number of 41 digits (at most 40)"), ("-12", None)])
def test_digits(text, problem):
    assert bounded.digits_problem(text) == problem


# ---- output paths ---------------------------------------------------------------------------------

ROOT = os.geteuid() == 0


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda t: t / "new.svg", None),
        (lambda t: _touch(t / "old.svg"), None),
        (lambda t: t, r"is a directory; name the file to write"),
        (lambda t: t / "no" / "x.svg", r"folder '.*no' does not exist"),
        (lambda t: _touch(t / "f") / "x.svg", r"folder '.*f' does not exist"),
        (lambda t: _fifo(t / "p.svg"), r"not a regular file"),
        (lambda t: Path("/proc/solar-x.svg"), r"--plot /proc/solar-x\.svg: cannot write there"),
    ],
    ids=["new", "existing", "directory", "no-folder", "under-a-file", "fifo", "proc"],
)
def test_check_writable(make, message, tmp_path):
    path = make(tmp_path)
    before = sorted(tmp_path.rglob("*"))
    if message is None:
        check_writable(path, "--plot", UsageError)
    else:
        with pytest.raises(UsageError, match=message):
            check_writable(path, "--plot", UsageError)
    assert sorted(tmp_path.rglob("*")) == before  # nothing made or left behind


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda t: t, None),
        (lambda t: t / "a" / "b", None),
        (lambda t: _touch(t / "f"), r"--out .*f: exists and is not a folder"),
        (lambda t: _touch(t / "f") / "sub", r"--out .*sub: .*f is not a folder"),
        (lambda t: Path("/proc/solar-out/sub"), r"--out /proc/solar-out/sub: cannot write there"),
    ],
    ids=["existing", "to-create", "a-file", "under-a-file", "proc"],
)
def test_check_writable_dir(make, message, tmp_path):
    path = make(tmp_path)
    before = sorted(tmp_path.rglob("*"))
    if message is None:
        check_writable_dir(path, "--out", UsageError)
    else:
        with pytest.raises(UsageError, match=message):
            check_writable_dir(path, "--out", UsageError)
    assert sorted(tmp_path.rglob("*")) == before


@pytest.mark.skipif(ROOT, reason="permission bits do not bind root")
def test_read_only_paths_are_refused(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    old = _touch(ro / "old.svg")
    old.chmod(0o444)
    ro.chmod(0o555)
    try:
        for path in (ro / "new.svg", old):
            with pytest.raises(UsageError, match="cannot write there"):
                check_writable(path, "--plot", UsageError)
        with pytest.raises(UsageError, match="cannot write there"):
            check_writable_dir(ro / "out", "--out", UsageError)
    finally:
        ro.chmod(0o755)


def _touch(path: Path) -> Path:
    path.write_text("existing\n")
    return path


def _fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path
