"""The grammar of the IR text form (lark, LALR) and its syntax errors: the text is read into a tree
of generic expressions, and every error names line, column and what was expected, with a caret.
solar.ir.parser turns the tree into IR nodes."""

from __future__ import annotations

from functools import lru_cache
from typing import Iterator

from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken
from lark.lark import PostLex

from solar.bounded import digits_problem
from solar.errors import IRSyntaxError

__all__ = ["MAX_DEPTH", "edge_token", "parse_tree", "syntax_error"]

# Value and index expressions share one expression grammar (`expr`): which one a piece of text is
# follows from where it stands, and the builders give a precise message (e.g. "`/` in an index")
# instead of a bare LALR "unexpected token". Keywords are soft: lark's contextual lexer only treats
# `for`, `where`, `and`, ... as keywords where the grammar can accept them, so `where(c, a, b)` is a
# call. Declaration kinds (`sym`, `input`, ...) are plain names checked by the builder, so a tensor
# may be called `input`.
_GRAMMAR = r"""
program_file: program _NL?
stmt_file: stmt _NL?
expr_file: expr _NL?

program: "program" PROGNAME "{" _NL? (_item _NL)* _item? "}"
_item: decl | symdef | stmt | seq
seq: FOR loop IN ORDER "{" _NL? (_node _NL)* _node? "}"
_node: stmt | seq
decl: NAME NAME ":" NAME "[" [sizes] "]" [UPDATES NAME]
symdef: NAME NAME "=" NUMBER
sizes: _size ("," _size)* ","?
_size: NUMBER | NAME

stmt: [origin _NL] header* body
origin: AT_OP OPNAME "id" "=" signed [TF32] ["at" STRING] ["in" STRING]
signed: MINUS? NUMBER
header: FOR loop ("," loop)* ["where" guard ("and" guard)*] ":" _NL?
    | IF guard ("and" guard)* ":" _NL?
loop: NAME "in" NUMBER ".." _size
guard: expr (CMP expr)+
body: NAME "[" [exprs] "]" UPDATE expr

exprs: expr ("," expr)* ","?
?expr: sum
?sum: product
    | sum PLUS product -> add
    | sum MINUS product -> sub
?product: unary
    | product STAR unary -> mul
    | product SLASH unary -> div
    | product DSLASH unary -> floordiv
    | product PERCENT unary -> mod
?unary: atom
    | MINUS unary -> neg
?atom: NUMBER -> number
    | NAME -> name
    | NAME LPAR [exprs] RPAR -> call
    | NAME LSQB [exprs] RSQB -> load
    | LPAR expr RPAR -> paren

PROGRAM: "program"
FOR: "for"
IN: "in"
ORDER: "order"
WHERE: "where"
IF: "if"
AND: "and"
AT_OP: "@op"
ID: "id"
AT: "at"
TF32: "tf32"
UPDATES: "updates"
LBRACE: "{"
RBRACE: "}"
LPAR: "("
RPAR: ")"
LSQB: "["
RSQB: "]"
COMMA: ","
COLON: ":"
DOTDOT: ".."
EQUAL: "="
UPDATE: "max=" | "min=" | "+=" | "*=" | "="
CMP: ">=" | "<=" | "==" | ">" | "<"
PLUS: "+"
MINUS: "-"
STAR: "*"
DSLASH: "//"
SLASH: "/"
PERCENT: "%"
NAME: /[A-Za-z_][A-Za-z0-9_]*/
NUMBER: /\d+\.(?!\.)\d*([eE][+-]?\d+)?|\.\d+([eE][+-]?\d+)?|\d+[eE][+-]?\d+|\d+/
STRING: /"[^"\n]*"/
OPNAME.-1: /[^\s"#]+/
PROGNAME.-1: /[^\s{}"#]+/
_NL: /(\r?\n[\t \f]*)+/
COMMENT: /#[^\n]*/
%ignore COMMENT
%ignore /[\t \f\r]+/
"""

# A newline ends a statement, except inside brackets or after a token that cannot end one (so long
# expressions may be wrapped); blank and comment-only lines collapse into one newline.
_OPEN = {"LPAR", "LSQB"}
_CLOSE = {"RPAR", "RSQB"}
_CONTINUES = frozenset(
    "PLUS MINUS STAR SLASH DSLASH PERCENT COMMA UPDATE EQUAL CMP WHERE IF AND LBRACE".split()
)


class _Newlines(PostLex):
    always_accept = ("_NL",)

    def process(self, stream: Iterator[Token]) -> Iterator[Token]:
        depth = 0
        prev: str | None = None
        for tok in stream:
            if tok.type == "_NL":
                if depth > 0 or prev is None or prev == "_NL" or prev in _CONTINUES:
                    continue
            elif tok.type in _OPEN:
                depth += 1
            elif tok.type in _CLOSE:
                depth = max(0, depth - 1)
            prev = tok.type
            yield tok


@lru_cache(maxsize=1)
def _lark() -> Lark:
    """The compiled parser, built once per process."""
    return Lark(
        _GRAMMAR,
        parser="lalr",
        lexer="contextual",
        postlex=_Newlines(),
        start=["program_file", "stmt_file", "expr_file"],
        maybe_placeholders=True,
    )


# ---- syntax errors -------------------------------------------------------------------------------

_DESCRIBE = {
    "NAME": "a name",
    "NUMBER": "a number",
    "STRING": 'a quoted string "..."',
    "OPNAME": "an op name",
    "PROGNAME": "a program name",
    "UPDATE": "an update (=, +=, *=, max=, min=)",
    "CMP": "a comparison (>=, <=, >, <, ==)",
    "_NL": "end of line",
    "$END": "end of input",
}
def syntax_error(text: str, line: int, column: int, message: str) -> IRSyntaxError:
    """`line L, column C: message`, then the source line and a caret under column C."""
    lines = text.splitlines() or [""]
    line = min(max(line, 1), len(lines))
    src = lines[line - 1].expandtabs(1)
    return IRSyntaxError(
        f"line {line}, column {column}: {message}\n  {src}\n  {' ' * (column - 1)}^"
    )


def _end_position(text: str) -> tuple[int, int]:
    """Position just after the last non-blank character (where a missing `}` would go)."""
    lines = text.rstrip().splitlines() or [""]
    return len(lines), len(lines[-1]) + 1


def _describe(terminal: str) -> str:
    if terminal in _DESCRIBE:
        return _DESCRIBE[terminal]
    pattern = _lark().get_terminal(terminal).pattern
    return f"'{pattern.value}'" if pattern.type == "str" else terminal


def _expected(names: set[str]) -> str:
    described = sorted({_describe(n) for n in names if n != "_NL"})
    if "_NL" in names:
        described.append(_DESCRIBE["_NL"])
    return described[0] if len(described) == 1 else "one of " + ", ".join(described)


# Deepest expression nesting accepted: far beyond what a program needs, and within what the
# recursive builders, printer and analyses can walk (Python's recursion limit is ~1000 frames).
MAX_DEPTH = 200


def parse_tree(text: str, start: str) -> Tree:
    try:
        tree = _lark().parse(text, start=start)
    except UnexpectedInput as e:
        raise _translate(text, e) from None
    _check_depth(text, tree)
    _check_numbers(text, tree)
    return tree


def _check_numbers(text: str, tree: Tree) -> None:
    """An IRSyntaxError at an integer literal of more digits than solar.bounded allows (sizes,
    extents and constants are exact integers, computed with before any other check)."""
    for tok in tree.scan_values(lambda v: isinstance(v, Token) and v.type == "NUMBER"):
        problem = tok.isdigit() and digits_problem(tok)
        if problem:
            raise syntax_error(text, tok.line, tok.column, f"{problem}; no size or constant of a program is that large")


def _check_depth(text: str, tree: Tree) -> None:
    """An IRSyntaxError at an expression nested deeper than MAX_DEPTH (walked without recursion)."""
    depth: dict[int, int] = {}
    for sub in tree.iter_subtrees():  # children before parents
        d = 1 + max((depth[id(c)] for c in sub.children if isinstance(c, Tree)), default=0)
        depth[id(sub)] = d
        if d > MAX_DEPTH and sub.data not in ("program", "stmt", "body", "seq"):
            tok = edge_token(sub, first=True)
            raise syntax_error(
                text, tok.line, tok.column,
                f"expression nested more than {MAX_DEPTH} levels deep; split it into statements "
                "that write temp tensors",
            )


def edge_token(node: Tree | Token, first: bool) -> Token:
    """The first (or last) token of a subtree: where it starts (or ends) in the source."""
    if isinstance(node, Token):
        return node
    for child in node.children if first else reversed(node.children):
        if child is not None:
            return edge_token(child, first)
    raise AssertionError(f"empty subtree {node.data}")




def _acceptable(e: UnexpectedInput) -> set[str]:
    """Terminals that would let the parse continue at the error. LALR merges lookahead sets of
    similar states, so the parse table's own `expected` lists tokens from other contexts; replaying
    each candidate on the interactive parser gives the exact set."""
    parser = getattr(e, "interactive_parser", None)
    accepts = set(parser.accepts()) if parser is not None else set()
    if accepts:
        return accepts
    if isinstance(e, UnexpectedCharacters):
        return set(e.allowed)
    return set(getattr(e, "expected", ()) or ())


def _hint(found: str, expected: set[str]) -> str:
    """A suggestion for mistakes that the bare expected-token list does not explain."""
    if found and found[0] in "<>=!" and "CMP" not in expected and "UPDATE" not in expected:
        return "; comparisons in values are functions: lt, le, gt, ge, eq, ne (e.g. gt(a, b))"
    if found.startswith("!") and "CMP" in expected:
        return "; guards are affine: >=, <=, >, <, == joined by `and` (`!=` is not affine)"
    if found and found[0] in "-/" and "UPDATE" in expected:
        return "; to subtract, add the negation: `+= neg(x)`"
    if found == "range":
        return "; loops are written `for i in 0..N, j in 0..M:`"
    if found == "*" and "NUMBER" in expected:
        return "; powers are written pow(a, b)"
    if found == '"' and "STRING" in expected:
        return "; the quoted string is not closed on this line"
    if found == "[" and "UPDATE" in expected:
        return "; index every dimension in one bracket: T[i, j]"
    if found == ";":
        return "; a statement ends at the end of its line (no `;`)"
    return ""


def _translate(text: str, e: UnexpectedInput) -> IRSyntaxError:
    expected = _acceptable(e)
    if isinstance(e, UnexpectedCharacters):
        char = text[e.pos_in_stream] if e.pos_in_stream < len(text) else ""
        what = "a line break" if char == "\n" else f"character {char!r}"
        message = f"unexpected {what}; expected {_expected(expected)}{_hint(char, expected)}"
        return syntax_error(text, e.line, e.column, message)
    if isinstance(e, UnexpectedToken) and e.token.type != "$END":
        tok = e.token
        found = _describe(tok.type) if tok.type == "_NL" else repr(str(tok))
        message = f"unexpected {found}; expected {_expected(expected)}{_hint(str(tok), expected)}"
        return syntax_error(text, tok.line, tok.column, message)
    line, column = _end_position(text)
    hint = "; the program is missing its closing '}'" if "RBRACE" in expected else ""
    return syntax_error(
        text, line, column, f"unexpected end of input; expected {_expected(expected)}{hint}"
    )
