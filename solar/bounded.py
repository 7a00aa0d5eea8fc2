"""Numbers and expressions read from outside solar (workload axes and constraints, IR text, spec
YAML, JSON files and LLM replies), checked for size, digits, nesting and magnitude before anything
is computed from them: hostile input is one error line, never a hang, an overflow or a RecursionError."""

from __future__ import annotations

import ast
import json
import math
import operator
from collections.abc import Callable, Mapping
from typing import Any

from solar.errors import SolarError

#: digits of one integer literal (10**40 is beyond any size, count or rate solar meets).
MAX_DIGITS = 40
#: the largest magnitude an expression's value (and every intermediate value) may reach.
LIMIT = 10**40
#: characters of one expression (an axis expression or constraint is a line).
MAX_TEXT = 1000
#: nesting of one expression's syntax tree, or of one JSON document.
MAX_DEPTH = 100

ErrorType = Callable[[str], SolarError]
Number = int | float


def digits_problem(text: str) -> str | None:
    """Why an integer literal (digits, an optional sign, `_` separators) is too long, or None."""
    digits = sum(c.isdigit() for c in text)
    if digits > MAX_DIGITS:
        return f"a number of {digits} digits (at most {MAX_DIGITS})"
    return None


def magnitude_problem(value: Any) -> str | None:
    """Why a number is out of range (not finite, or beyond LIMIT), or None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return None if -LIMIT <= value <= LIMIT else f"{_scale(value)} is beyond {LIMIT:.0e}"
    if isinstance(value, float):
        if not math.isfinite(value):
            return f"{value!r} is not a finite number"
        return None if abs(value) <= LIMIT else f"{value:.3g} is beyond {LIMIT:.0e}"
    return f"{type(value).__name__} {value!r} is not a real number"


def _scale(value: int) -> str:
    """A huge integer shown by its size (its exact digits may be too many to print)."""
    bits = abs(value).bit_length()
    return f"about 10^{int(bits * math.log10(2))}" if bits > 200 else str(value)


def as_float(value: Number, what: str, error: ErrorType) -> float:
    """`float(value)` for a count that must stay within LIMIT (an exact int may be too large)."""
    problem = magnitude_problem(value)
    if problem:
        raise error(f"{what}: {problem}; sizes this large are no program solar can bound")
    return float(value)


# ---- JSON ----------------------------------------------------------------------------------------


def _json_int(text: str) -> int:
    problem = digits_problem(text)
    if problem:
        raise _JSONNumber(problem)
    return int(text)


class _JSONNumber(ValueError):
    """An integer literal of a JSON document that is too long (raised from the decoder's hook)."""


def loads_json(text: str | bytes, where: str, error: ErrorType) -> Any:
    """A JSON document, or `error("WHERE:LINE:COL: not JSON (...)")`; integers of more than
    MAX_DIGITS digits and nesting past the interpreter's recursion limit are errors too."""
    try:
        return json.loads(text, parse_int=_json_int)
    except json.JSONDecodeError as exc:
        raise error(f"{where}:{exc.lineno}:{exc.colno}: not JSON ({exc.msg})") from None
    except _JSONNumber as exc:
        raise error(f"{where}: {exc}; write a smaller number") from None
    except RecursionError:
        raise error(f"{where}: JSON nested too deeply (thousands of [ or {{); no input of solar nests so") from None



def loads_json_lines(text: str, where: str, error: ErrorType) -> list[Any]:
    """The records of a JSON Lines text (blank lines skipped), each read as `loads_json` reads a
    document; a bad line is `error("WHERE:LINE: not JSON (...)")`."""
    records = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                records.append(loads_json(line, f"{where}:{number}", _JSONLine))
            except _JSONLine as exc:
                raise error(str(exc).replace(f"{where}:{number}:1:", f"{where}:{number}:", 1)) from None
    return records


class _JSONLine(SolarError):
    """One bad line of a JSON Lines text, renamed to the caller's error type."""

# ---- expressions ---------------------------------------------------------------------------------

_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Div: operator.truediv,
}
_UNARY: dict[type, Callable[[Any], Any]] = {ast.UAdd: operator.pos, ast.USub: operator.neg, ast.Not: operator.not_}
_COMPARE: dict[type, Callable[[Any, Any], bool]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge,
}
USE = "use numbers, axis names, + - * / // % ** and comparisons"


def _depth(tree: ast.AST) -> int:
    """The depth of a syntax tree, walked without recursion."""
    deepest, stack = 0, [(tree, 1)]
    while stack:
        node, d = stack.pop()
        deepest = max(deepest, d)
        stack.extend((child, d + 1) for child in ast.iter_child_nodes(node))
    return deepest


def parse_expression(text: str, where: str, error: ErrorType) -> ast.Expression:
    """The syntax tree of an expression of at most MAX_TEXT characters and MAX_DEPTH levels."""
    text = text.strip()
    if len(text) > MAX_TEXT:
        raise error(f"{where}: an expression of {len(text)} characters (at most {MAX_TEXT}); write it shorter")
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        raise error(f"{where}: {text!r} is not an expression; write e.g. 'H_qo == H_kv * H_r'") from None
    if _depth(tree) > MAX_DEPTH:
        raise error(f"{where}: {text[:40]!r}... is nested more than {MAX_DEPTH} levels deep; write it flatter")
    return tree


def names(text: str) -> set[str]:
    """The names an expression uses (none when it is no expression of bounded size)."""
    if len(text.strip()) > MAX_TEXT:
        return set()
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return set()
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}


def evaluate(text: str, env: Mapping[str, Number], where: str, error: ErrorType) -> Any:
    """Evaluate an arithmetic expression over `env`: numbers, names, + - * / // % **, unary signs,
    comparisons (chained), and / or / not. Every value is checked against LIMIT as it is made, and
    a power is refused before it is computed when its result would pass LIMIT; anything else is
    `error(one line)`."""
    tree = parse_expression(text, where, error)

    def checked(value: Any) -> Any:
        problem = magnitude_problem(value)
        if problem:
            raise error(f"{where}: {text!r} reaches {problem}; axes and constraints are sizes")
        return value

    def power(base: Number, exponent: Number) -> Number:
        if isinstance(base, int) and isinstance(exponent, int) and exponent >= 0:
            if abs(base) > 1 and exponent * (abs(base).bit_length() - 1) > LIMIT.bit_length():
                raise error(f"{where}: {text!r} raises {base} to the power {exponent}, beyond {LIMIT:.0e}; axes and constraints are sizes")
            return base**exponent
        try:
            return base**exponent
        except OverflowError:
            raise error(f"{where}: {text!r} raises {base} to the power {exponent}, beyond {LIMIT:.0e}") from None

    def ev(node: ast.AST) -> Any:
        match node:
            case ast.Expression(body=body):
                return ev(body)
            case ast.Constant(value=v) if isinstance(v, (int, float)) and not isinstance(v, bool):
                return checked(v)
            case ast.Name(id=name):
                if name not in env:
                    raise error(f"{where}: {text!r} names {name!r}, which is no axis with a value here; known: {', '.join(sorted(env))}")
                return checked(env[name])
            case ast.BinOp(left=l, op=ast.Pow(), right=r):
                return checked(power(ev(l), ev(r)))
            case ast.BinOp(left=l, op=op, right=r) if type(op) in _BINARY:
                return checked(_BINARY[type(op)](ev(l), ev(r)))
            case ast.UnaryOp(op=op, operand=x) if type(op) in _UNARY:
                return _UNARY[type(op)](ev(x))
            case ast.BoolOp(op=ast.And(), values=vs):
                return all(ev(v) for v in vs)
            case ast.BoolOp(op=ast.Or(), values=vs):
                return any(ev(v) for v in vs)
            case ast.Compare(left=left, ops=ops, comparators=rights):
                values = [ev(left), *(ev(r) for r in rights)]
                return all(
                    _COMPARE[type(o)](a, b) if type(o) in _COMPARE else bad(o)
                    for o, a, b in zip(ops, values, values[1:])
                )
        return bad(node)

    def bad(node: ast.AST) -> Any:
        raise error(f"{where}: {text!r} uses {type(node).__name__}, which an axis expression may not; {USE}")

    try:
        return ev(tree)
    except ZeroDivisionError:
        raise error(f"{where}: {text!r} divides by zero for axes {dict(env)}") from None
    except OverflowError:  # a float operation past the float range
        raise error(f"{where}: {text!r} overflows; axes and constraints are sizes") from None
