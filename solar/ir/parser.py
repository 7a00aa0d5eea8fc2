"""The one parser of the IR text form printed by solar.ir.printer (see its docstring); the two
round-trip exactly. A LALR grammar (lark) reads the text into a tree of generic expressions; the
builders below turn that tree into IR nodes, deciding by context whether an expression is an index
(affine) or a value.

Terms used here: an *index term* is one entry of `T[...]`: an affine expression, or `ind(v)`
optionally followed by `+ offset` / `- offset` (a data-dependent index). A *header* is one
`for ... [where ...]:` line; several consecutive headers are merged into one loop nest."""

from __future__ import annotations

from typing import Callable, Iterable, Iterator

from lark import Token, Tree

from solar.bounded import magnitude_problem
from solar.errors import IRSyntaxError, NotAffineError
from solar.heap import collection_paused
from solar.ir.affine import Affine, Constraint, as_affine, eq, ge, lt, var
from solar.ir.dtypes import DType
from solar.ir.nodes import (
    Call,
    Cast,
    Const,
    Expr,
    Index,
    IndexTerm,
    Indirect,
    Load,
    Loop,
    Order,
    Origin,
    Program,
    Role,
    Seq,
    Size,
    Stmt,
    Store,
    TensorDecl,
)
from solar.ir.scalar_ops import OPS, ScalarOp, Update
from solar.ir.syntax import edge_token, parse_tree, syntax_error

__all__ = ["parse_program", "parse_stmt", "parse_expr", "parse_affine"]

# ---- public API ----------------------------------------------------------------------------------


def parse_program(text: str) -> Program:
    """Parse a whole `program NAME { ... }`."""
    builder = _Builder(text)
    with collection_paused():
        program = builder.program(parse_tree(text, "program_file").children[0])
    _check_sizes(program, builder)
    return program


def _check_sizes(program: Program, builder: _Builder) -> None:
    """That every tensor's element count and every statement's iteration count (where its sizes
    are bound) is within solar.bounded.LIMIT: the counts priced later as floats."""

    def problem(sizes: Iterable[Size]) -> str | None:
        n = 1
        for s in sizes:
            v = s if isinstance(s, int) else bound.get(s)
            if v is None:
                return None
            n *= v
            if p := magnitude_problem(n):  # stop at the first count past the limit
                return p
        return None

    bound = dict(program.symbols)
    for t, tree in zip(program.tensors, builder.decl_trees):
        if p := problem(t.shape):
            raise builder.error(tree, f"tensor {t.name!r} has too many elements ({p}); write smaller sizes")
    for stmt, tree in zip(program.stmts, builder.stmt_trees):
        if p := problem(loop.extent for loop in stmt.loops):
            raise builder.error(tree, f"too many iterations ({p}); write smaller extents")


def parse_stmt(text: str) -> Stmt:
    """Parse one statement: optional `@op` line, optional `for ...:` header, `T[...] op value`."""
    return _Builder(text).stmt(parse_tree(text, "stmt_file").children[0])


def parse_expr(text: str) -> Expr:
    """Parse a value expression such as `exp(A[i, j] - M[i]) * 0.5`."""
    return _Builder(text).expr(parse_tree(text, "expr_file").children[0])


def parse_affine(text: str) -> Affine:
    """Parse an index expression such as `2*oh + kh - 1` or `(i // 4)`."""
    return _Builder(text).affine(parse_tree(text, "expr_file").children[0])



_FUNCTIONS = sorted(op.value for op in ScalarOp)
_OPS_BY_NAME = {op.value: op for op in ScalarOp}
_DTYPES = {d.text: d for d in DType}
_ORDERS = {"order": False, "order_desc": True}  # order(key, over, rank): ascending / descending
_VALUE_NAMES: dict[str, bool | float] = {
    "true": True,
    "false": False,
    "inf": float("inf"),
    "nan": float("nan"),
}


# ---- tree -> IR ----------------------------------------------------------------------------------

_INFIX = {"add": ScalarOp.ADD, "sub": ScalarOp.SUB, "mul": ScalarOp.MUL, "div": ScalarOp.DIV}
# guard `a CMP b` -> Constraint, normalised by the helpers of affine.py
_COMPARE: dict[str, Callable[[Affine, Affine], Constraint]] = {
    ">=": ge,
    "<=": lambda a, b: ge(b, a),
    ">": lambda a, b: lt(b, a),
    "<": lt,
    "==": eq,
}


class _Builder:
    """Turns a parse tree of `text` into IR nodes; every error points at the offending source."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.decl_trees: list[Tree] = []  # each tensor declaration's tree, in order
        self.stmt_trees: list[Tree] = []  # each statement's tree, in the order Program.stmts has

    # -- errors --
    def error(self, where: Tree | Token, message: str) -> IRSyntaxError:
        tok = edge_token(where, first=True)
        return syntax_error(self.text, tok.line, tok.column, message)

    def source(self, node: Tree | Token) -> str:
        return self.text[
            edge_token(node, first=True).start_pos : edge_token(node, first=False).end_pos
        ]

    # -- program level --
    def program(self, tree: Tree) -> Program:
        name = str(tree.children[0])
        symbols: list[tuple[str, int]] = []
        tensors: list[TensorDecl] = []
        body: list[Tree] = []
        for item in tree.children[1:]:
            if item.data == "symdef":
                symbols.append(self.symdef(item))
            elif item.data == "decl":
                tensors.append(self.decl(item))
                self.decl_trees.append(item)
            else:
                body.append(item)
        return Program(name, tuple(tensors), self.body(body), tuple(symbols))

    def body(self, items: list[Tree]) -> tuple[Stmt | Seq, ...]:
        out: list[Stmt | Seq] = []
        prev: Tree | None = None  # previous statement tree, to catch a body indented under its loop
        for item in items:
            if item.data == "seq":
                out.append(self.seq(item))
                prev = None
            else:
                self.check_indentation(prev, item)
                out.append(self.stmt(item))
                self.stmt_trees.append(item)
                prev = item
        return tuple(out)

    def seq(self, tree: Tree) -> Seq:
        """`for t in 0..T in order { ... }`: an in-order loop around a block."""
        _, loop, _, _, *items = tree.children
        head = self.loop(loop)
        return Seq(head.var, head.extent, self.body([i for i in items if isinstance(i, Tree)]))

    def symdef(self, tree: Tree) -> tuple[str, int]:
        kind, name, value = tree.children
        if kind != "sym":
            raise self.error(
                kind,
                f"unknown declaration {str(kind)!r} with '='; symbols are bound as "
                f"`sym {name} = 128` and tensors declared as `input {name}: f32[...]`",
            )
        return str(name), self.integer(value, "a symbol value")

    def decl(self, tree: Tree) -> TensorDecl:
        role, name, dtype, sizes, _, updates = tree.children
        roles = [r.value for r in Role]
        if role not in roles:
            hint = f"; bind a symbol as `sym {name} = 128`" if role == "sym" else ""
            raise self.error(
                role, f"unknown tensor role {str(role)!r}; expected one of {', '.join(roles)}{hint}"
            )
        shape = tuple(self.size(s) for s in sizes.children) if sizes is not None else ()
        updated = str(updates) if updates is not None else None
        return TensorDecl(str(name), shape, self.dtype(dtype), Role(str(role)), updated)

    def check_indentation(self, prev: Tree | None, stmt: Tree) -> None:
        # A loop nest holds exactly one statement. A loop-less statement indented under the
        # previous loop nest was almost surely meant to be inside it (Python habit); refuse rather
        # than guess.
        if prev is None or _headers(stmt) or not _headers(prev):
            return
        column, prev_start = edge_token(stmt, True).column, edge_token(prev, True)
        if column > prev_start.column:
            raise self.error(
                stmt,
                "this statement is indented under the loop nest of line "
                f"{prev_start.line}, but a loop nest holds exactly one statement; repeat "
                "the `for ...:` header above it, or unindent it if it runs once",
            )

    # -- statements --
    def stmt(self, tree: Tree) -> Stmt:
        origin = self.origin(tree.children[0]) if tree.children[0] is not None else None
        loops: list[Loop] = []
        guards: list[Constraint] = []
        for header in _headers(tree):
            for child in header.children:
                if isinstance(child, Tree) and child.data == "loop":
                    loops.append(self.loop(child))
                elif isinstance(child, Tree) and child.data == "guard":
                    guards.extend(self.guard(child))
        target_name, index, update, value = tree.children[-1].children
        store_index = tuple(self.store_term(t) for t in _items(index))
        return Stmt(
            loops=tuple(loops),
            target=Store(str(target_name), store_index),
            update=Update(str(update)),
            value=self.expr(value),
            guards=tuple(guards),
            origin=origin,
        )

    def origin(self, tree: Tree) -> Origin:
        _, op, instance, tf32, source, module = tree.children
        sign = -1 if len(instance.children) == 2 else 1
        number = self.integer(instance.children[-1], "an op instance id")
        # the printer writes the source between quotes without escapes, so none are read here
        text = str(source)[1:-1] if source is not None else ""
        path = str(module)[1:-1] if module is not None else ""
        return Origin(str(op), sign * number, text, allow_tf32=tf32 is not None, module=path)

    def loop(self, tree: Tree) -> Loop:
        name, lower, extent = tree.children
        if self.integer(lower, "a loop start") != 0:
            raise self.error(
                lower, f"loops start at 0: write `{name} in 0..N` and shift the indices"
            )
        return Loop(str(name), self.size(extent))

    def guard(self, tree: Tree) -> list[Constraint]:
        # `a <= b < c` chains as in Python: a <= b and b < c
        parts = tree.children
        out = []
        for k in range(1, len(parts), 2):
            left, cmp, right = parts[k - 1], parts[k], parts[k + 1]
            out.append(_COMPARE[str(cmp)](self.affine(left), self.affine(right)))
        return out

    def store_term(self, tree: Tree) -> IndexTerm:
        """An affine store index, or a data-dependent one `ind(v) [+ offset]` (scatter)."""
        return self.index_term(tree)

    # -- leaves --
    def integer(self, tok: Token, what: str) -> int:
        if not tok.isdigit():
            raise self.error(tok, f"{what} must be an integer, got {str(tok)!r}")
        return int(tok)

    def size(self, tok: Token) -> Size:
        return str(tok) if tok.type == "NAME" else self.integer(tok, "a size")

    def dtype(self, tok: Token) -> DType:
        if str(tok) not in _DTYPES:
            raise self.error(tok, f"unknown dtype {str(tok)!r}; known: {', '.join(_DTYPES)}")
        return _DTYPES[str(tok)]

    # -- index expressions --
    def affine(self, tree: Tree) -> Affine:
        """An index expression: integers, loop variables, + - *, and // % by positive constants."""
        kind, kids = tree.data, tree.children
        if kind == "number":
            if not kids[0].isdigit():
                raise self.error(tree, f"index expressions are integers, got {str(kids[0])!r}")
            return as_affine(int(kids[0]))
        if kind == "name":
            return var(str(kids[0]))
        if kind == "paren":
            return self.affine(kids[1])
        if kind == "neg":
            return -self.affine(kids[1])
        if kind in ("add", "sub"):
            left, right = self.affine(kids[0]), self.affine(kids[2])
            return left + right if kind == "add" else left - right
        if kind == "mul":
            try:
                return self.affine(kids[0]) * self.affine(kids[2])
            except NotAffineError:
                raise self.error(
                    tree,
                    f"`{self.source(tree)}` is not affine: an index may multiply a "
                    "loop variable only by an integer constant",
                ) from None
        if kind in ("floordiv", "mod"):
            divisor = self.affine(kids[2])
            if not divisor.is_const or divisor.const <= 0:
                raise self.error(
                    kids[2],
                    f"`{self.source(tree)}`: `{kids[1]}` needs a positive integer "
                    "constant on its right, e.g. (i // 2) or (i % 4)",
                )
            left = self.affine(kids[0])
            return left // divisor.const if kind == "floordiv" else left % divisor.const
        if kind == "div":
            raise self.error(
                kids[1],
                "`/` is not allowed in an index expression; use `//` for floor "
                "division, e.g. (i // 2)",
            )
        if kind == "call" and kids[0] == "ind":
            raise self.error(
                tree,
                "`ind(...)` must stand alone as an index term, optionally followed by "
                "`+ offset` or `- offset`, e.g. T[ind(I[i]) + 1, j]",
            )
        if kind == "call":
            raise self.error(
                tree,
                f"function call `{self.source(tree)}` in an index expression; an index "
                "is affine in the loop variables (data-dependent: `ind(T[...])`)",
            )
        if kind == "load":
            raise self.error(
                tree,
                f"a load `{self.source(tree)}` cannot be an index; write a "
                f"data-dependent index as `ind({self.source(tree)})`",
            )
        raise AssertionError(kind)

    def index_term(self, tree: Tree) -> IndexTerm:
        """`ind(v) [+|- offset]` -> Indirect; anything else -> Affine."""
        if not _contains_call(tree, "ind"):
            return self.affine(tree)
        parts = list(_signed_terms(tree, 1))
        inds = [(s, t) for s, t in parts if _is_call(t, "ind")]
        if len(inds) != 1 or inds[0][0] != 1:
            raise self.error(
                tree,
                "an index term may hold one `ind(...)`, added (not subtracted), plus "
                "an affine offset, e.g. ind(I[i]) - 1",
            )
        call = inds[0][1]
        args = _items(call.children[2])
        if len(args) not in (1, 2):
            raise self.error(call, f"ind takes 1 or 2 arguments, got {len(args)}")
        distinct = 1
        if len(args) == 2:  # ind(I[i], d): at least d distinct values
            d = self.affine(args[1])
            if not d.is_const or d.const < 1:
                raise self.error(args[1], "ind's second argument is a positive integer (distinct values)")
            distinct = d.const
        offset = Affine()
        for sign, t in parts:
            if t is not call:
                offset = offset + self.affine(t) * sign
        return Indirect(self.expr(args[0]), offset, distinct)

    # -- value expressions --
    def expr(self, tree: Tree) -> Expr:
        kind, kids = tree.data, tree.children
        if kind == "number":
            return Const(_number(kids[0]))
        if kind == "name":
            if kids[0] in _VALUE_NAMES:
                return Const(_VALUE_NAMES[str(kids[0])])
            raise self.error(
                tree,
                f"bare name {str(kids[0])!r} is not a value: load a tensor as "
                f"{kids[0]}[...], use a loop variable as index({kids[0]}); constants are "
                "numbers, true, false, inf, nan",
            )
        if kind == "paren":
            return self.expr(kids[1])
        if kind == "neg":
            inner = kids[1]
            # `-1.5` and `-inf` are negative constants; negating anything else is neg(x)
            if inner.data == "number":
                return Const(-_number(inner.children[0]))
            if inner.data == "name" and inner.children[0] in ("inf", "nan"):
                return Const(-_VALUE_NAMES[str(inner.children[0])])
            return Call(ScalarOp.NEG, (self.expr(inner),))
        if kind in _INFIX:
            return Call(_INFIX[kind], (self.expr(kids[0]), self.expr(kids[2])))
        if kind in ("floordiv", "mod"):
            raise self.error(
                kids[1],
                f"`{kids[1]}` is only for index expressions; for values use "
                "floor(a / b), or index(...) around an index expression",
            )
        if kind == "load":
            return Load(str(kids[0]), tuple(self.index_term(t) for t in _items(kids[2])))
        if kind == "call":
            return self.call(tree)
        raise AssertionError(kind)

    def call(self, tree: Tree) -> Expr:
        name = str(tree.children[0])
        args = _items(tree.children[2])
        if name == "index":
            self.arity(tree, name, 1, len(args))
            return Index(self.affine(args[0]))
        if name in _DTYPES:
            self.arity(tree, name, 1, len(args))
            return Cast(_DTYPES[name], self.expr(args[0]))
        if name in _ORDERS:
            self.arity(tree, name, 3, len(args))
            if args[1].data != "name":
                raise self.error(args[1], f"{name}'s second argument is the loop variable it orders along")
            return Order(self.expr(args[0]), str(args[1].children[0]), self.affine(args[2]), _ORDERS[name])
        if name == "ind":
            raise self.error(
                tree,
                "`ind(...)` is a data-dependent index and may only stand inside "
                "T[...], e.g. E[ind(I[i]), j]",
            )
        if name not in _OPS_BY_NAME:
            raise self.error(
                tree.children[0],
                f"unknown function {name!r}; known functions: "
                f"{', '.join(_FUNCTIONS)}; casts: {', '.join(_DTYPES)}; index(<affine>)",
            )
        op = _OPS_BY_NAME[name]
        self.arity(tree, name, OPS[op].arity, len(args))
        return Call(op, tuple(self.expr(a) for a in args))

    def arity(self, tree: Tree, name: str, expected: int, got: int) -> None:
        if expected != got:
            plural = "argument" if expected == 1 else "arguments"
            raise self.error(
                tree, f"{name} takes {expected} {plural}, got {got}: `{self.source(tree)}`"
            )


# ---- tree helpers --------------------------------------------------------------------------------


def _items(exprs: Tree | None) -> list[Tree]:
    """The expressions of an `exprs` node (None for an empty list)."""
    return [] if exprs is None else list(exprs.children)


def _headers(stmt: Tree) -> list[Tree]:
    return [c for c in stmt.children if isinstance(c, Tree) and c.data == "header"]


def _number(tok: Token) -> int | float:
    return int(tok) if tok.isdigit() else float(tok)


def _is_call(tree: Tree, name: str) -> bool:
    return isinstance(tree, Tree) and tree.data == "call" and tree.children[0] == name


def _contains_call(tree: Tree, name: str) -> bool:
    return any(_is_call(t, name) for t in tree.iter_subtrees())


def _signed_terms(tree: Tree, sign: int) -> Iterator[tuple[int, Tree]]:
    """Flatten a chain of + and - (and unary minus) into (sign, term) pairs."""
    if tree.data in ("add", "sub"):
        yield from _signed_terms(tree.children[0], sign)
        yield from _signed_terms(tree.children[2], sign if tree.data == "add" else -sign)
    elif tree.data == "neg":
        yield from _signed_terms(tree.children[1], -sign)
    elif tree.data == "paren":
        yield from _signed_terms(tree.children[1], sign)
    else:
        yield sign, tree
