"""Property tests of the IR text form (hypothesis): well-formed programs, built from IR nodes by
tests/fuzz/irgen.py, round-trip exactly (print -> parse -> print); random mutations of their text
either parse or raise an IRSyntaxError with a line and a column, never another exception; what
parses, the verifier accepts or rejects with an IRVerifyError. At least MIN_TEXTS texts are parsed."""

from __future__ import annotations

import os
import random
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from solar.errors import IRSyntaxError, IRVerifyError
from solar.ir.parser import parse_program
from solar.ir.printer import format_program
from solar.ir.verify import verify
from tests.fuzz.irgen import programs

EXAMPLES = int(os.environ.get("SOLAR_FUZZ_EXAMPLES", "300"))  # generated programs
MUTANTS = 34  # mutated texts per program
MIN_TEXTS = 10_000
POSITION = re.compile(r"^line \d+, column \d+: \S")

VOCAB = [
    "(",
    ")",
    "[",
    "]",
    ",",
    ":",
    "..",
    "=",
    "+=",
    "*=",
    "max=",
    "min=",
    "for ",
    " in ",
    " where ",
    " and ",
    "@op ",
    " id=",
    '"',
    "#",
    "\n",
    " ",
    "{",
    "}",
    "//",
    "%",
    "*",
    "-",
    "+",
    "/",
    "ind(",
    "index(",
    "1e309",
    "0",
    "-1",
    "99999999999999999999",
    "1.5",
    "f32",
    "input ",
    "output ",
    "sym ",
    "temp ",
    "\t",
    "é",
    "\x00",
    "\\",
    "!=",
    "**",
    ";",
    "program ",
    "tf32",
    " at ",
    "\r",
    "<=",
    ">=",
    "==",
    "<",
    ">",
    "nan",
    "-inf",
]


def _span(rnd: random.Random, text: str) -> tuple[int, int]:
    a = rnd.randrange(len(text) + 1)
    return a, min(len(text), a + rnd.randint(1, 12))


def _delete(rnd, text):
    a, b = _span(rnd, text)
    return text[:a] + text[b:]


def _insert(rnd, text):
    a = rnd.randrange(len(text) + 1)
    return text[:a] + rnd.choice(VOCAB) + text[a:]


def _replace_char(rnd, text):
    if not text:
        return text
    a = rnd.randrange(len(text))
    return (
        text[:a] + chr(rnd.choice([rnd.randint(32, 126), rnd.randint(0, 0x2FFF)])) + text[a + 1 :]
    )


def _lines(rnd, text, how):
    lines = text.split("\n")
    i, j = rnd.randrange(len(lines)), rnd.randrange(len(lines))
    if how == "dup":
        lines.insert(i, lines[j])
    else:
        lines[i], lines[j] = lines[j], lines[i]
    return "\n".join(lines)


def _truncate(rnd, text):
    return text[: rnd.randrange(len(text) + 1)]


def _number(rnd, text):
    spots = [m.span() for m in re.finditer(r"\d+", text)]
    if not spots:
        return text
    a, b = rnd.choice(spots)
    return text[:a] + rnd.choice(["0", "-3", "1e400", "18446744073709551617", "2.5", ""]) + text[b:]


# Mutation kinds: one row each.
MUTATIONS = [
    _delete,
    _insert,
    _insert,
    _replace_char,
    _truncate,
    _number,
    lambda rnd, t: _lines(rnd, t, "dup"),
    lambda rnd, t: _lines(rnd, t, "swap"),
]


def mutate(rnd: random.Random, text: str) -> str:
    for _ in range(rnd.randint(1, 3)):
        text = rnd.choice(MUTATIONS)(rnd, text)
    return text


def check_mutant(text: str) -> None:
    """Parse or an IRSyntaxError with a position; what parses verifies or raises IRVerifyError."""
    try:
        program = parse_program(text)
    except IRSyntaxError as exc:
        assert POSITION.match(str(exc)), f"no line/column in {str(exc)[:200]!r} for {text!r}"
        return
    try:
        verify(program)
    except IRVerifyError as exc:
        assert str(exc).strip(), text


def test_ir_text_round_trips_and_mutants_fail_cleanly():
    count = {"texts": 0}

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.filter_too_much,
        ],
    )
    @given(programs(), st.randoms(use_true_random=False))
    def run(program, rnd):
        text = format_program(program)
        again = format_program(parse_program(text))
        assert again == text
        count["texts"] += 1
        for _ in range(MUTANTS):
            check_mutant(mutate(rnd, text))
            count["texts"] += 1

    run()
    assert count["texts"] >= MIN_TEXTS, count
