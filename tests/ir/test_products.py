"""An access's image as the product of its independent parts (solar.ir.products): the parts found,
and footprints that equal isl's count of the whole map."""

from __future__ import annotations

import pytest

from solar.ir import polyhedral
from solar.ir.affine import Affine, as_affine, ge, var
from solar.ir.dtypes import DType
from solar.ir.nodes import Const, Indirect, Load, Loop, Program, Role, Stmt, Store, TensorDecl
from solar.ir.products import independent_parts
from solar.ir.scalar_ops import Update

n, c, h, w, r, s = (var(x) for x in "nchwrs")


def _stmt(loops, index, guards=()) -> tuple[Stmt, Load]:
    load = Load("x", tuple(as_affine(t) for t in index))
    stmt = Stmt(
        tuple(Loop(v, e) for v, e in loops),
        Store("y", (Affine(),)),
        Update.ADD,
        load,
        tuple(guards),
    )
    return stmt, load


def _program(stmt: Stmt, shape) -> Program:
    decls = (
        TensorDecl("x", tuple(shape), DType.F32, Role.INPUT),
        TensorDecl("y", (1,), DType.F32, Role.OUTPUT),
    )
    init = Stmt((), Store("y", (Affine(),)), Update.ASSIGN, Const(0.0))
    return Program("p", decls, (init, stmt))


def _padded_conv_input(H: int, C: int):
    loops = (("n", 2), ("h", H), ("w", H), ("c", C), ("r", 3), ("s", 3))
    guards = (ge(h + r - 1, 0), ge(H - h - r, 0), ge(w + s - 1, 0), ge(H - w - s, 0))
    return _stmt(loops, (n, c, h + r - 1, w + s - 1), guards)


def _whole_map_count(program: Program, stmt: Stmt, load: Load) -> int:
    """isl's count of the image of the whole map, without the product rule."""
    names = polyhedral._Names(program, stmt, False)
    names.loop = {v: f"_v{k}" for k, v in enumerate(stmt.loop_vars)}
    text = polyhedral._access_text(program, stmt, "x", load.index, names, "min", "T")
    return polyhedral.count_points(polyhedral._image_text((text,)))


def test_padded_convolution_input_splits_into_batch_channel_and_two_windows():
    stmt, load = _padded_conv_input(7, 5)
    parts = independent_parts(stmt, load.index)
    assert [p.stmt.loop_vars for p in parts] == [("n",), ("h", "r"), ("w", "s"), ("c",)]
    assert [p.dims for p in parts] == [(0,), (2,), (3,), (1,)]
    assert [len(p.stmt.guards) for p in parts] == [0, 2, 2, 0]


def test_one_group_indirect_terms_and_constant_guards_are_not_split():
    stmt, load = _stmt((("h", 4), ("r", 3)), (h + r,))
    assert independent_parts(stmt, load.index) is None
    ind = (Indirect(Load("x", (as_affine(h),))), as_affine(r))
    assert independent_parts(stmt, ind) is None
    stmt, load = _stmt((("h", 4), ("r", 3)), (h, r), (ge(as_affine(0), 1),))
    assert independent_parts(stmt, load.index) is None


@pytest.mark.parametrize(
    "loops, index, guards",
    [
        ((("h", 6), ("r", 3), ("c", 4)), (c, h + r - 1), (ge(h + r - 1, 0), ge(5 - h - r + 1, 0))),
        ((("h", 6), ("r", 3), ("c", 4)), (2, c, h + r), ()),  # a constant dimension
        ((("h", 6), ("c", 4), ("r", 2)), (2 * h + r, c // 2), ()),  # a floor-division
        ((("h", 6), ("c", 4), ("r", 2)), (h,), (ge(c - 1, 0),)),  # a guarded loop nothing indexes
        ((("h", 6), ("c", 4), ("r", 2)), (h,), (ge(c - 9, 0),)),  # an empty part: nothing read
        ((("h", 6), ("c", 4)), (h, 3 * c + 1), ()),
    ],
)
def test_footprint_equals_the_count_of_the_whole_map(loops, index, guards):
    stmt, load = _stmt(loops, index, guards)
    program = _program(stmt, (40,) * len(index))
    program_stmt = program.stmts[1]
    expected = _whole_map_count(program, program_stmt, load)
    assert polyhedral.footprint_range(program, [(program_stmt, load)]) == (expected, expected)


def test_padded_convolution_footprint_is_the_whole_input():
    stmt, load = _padded_conv_input(7, 5)
    program = _program(stmt, (2, 5, 7, 7))
    assert polyhedral.footprint_range(program, [(program.stmts[1], load)]) == (490, 490)
    assert _whole_map_count(program, program.stmts[1], load) == 490
