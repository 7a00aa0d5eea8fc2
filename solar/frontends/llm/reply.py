"""Finding the IR in a model's reply: the last complete `program NAME { ... }` block. Everything
around it (markdown fences, explanations, code in other languages, instructions) is ignored; the
block itself goes only to the IR parser."""

from __future__ import annotations

import re

from solar.errors import LLMError

_START = re.compile(r"(?m)^[ \t]*program[ \t]+[^\s{}\"#]+[ \t]*\{")


class NoProgram(LLMError):
    """The reply holds no complete IR program."""


def extract_program(text: str) -> str:
    """The text of the last complete `program ... { ... }` block of `text` (braces matched, quoted
    strings and comments skipped)."""
    found: list[str] = []
    for match in _START.finditer(text):
        end = _closing(text, match.end())
        if end is not None:
            found.append(text[match.start() : end])
    if not found:
        raise NoProgram(
            "the reply holds no complete IR program; reply with one `program NAME { ... }` block "
            "in the IR text form"
        )
    return found[-1].strip() + "\n"


def _closing(text: str, pos: int) -> int | None:
    """Index just past the `}` closing the block opened before `pos`."""
    depth = 1
    k = pos
    while k < len(text):
        c = text[k]
        if c == '"':
            close = text.find('"', k + 1)
            newline = text.find("\n", k + 1)
            k = close if close != -1 and (newline == -1 or close < newline) else k
        elif c == "#":
            newline = text.find("\n", k)
            k = len(text) if newline == -1 else newline
            continue
        elif c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return k + 1
        k += 1
    return None
