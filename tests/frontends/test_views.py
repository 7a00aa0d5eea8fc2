"""Lazy views compose their index maps once (frontends/views.py `indexed`) and combinations of
guarded pieces are pruned as they are formed (builder.call): expressions and alternatives stay of
the size of the program, not of the chain of views."""

from __future__ import annotations

from solar.frontends import views
from solar.frontends.builder import ProgramBuilder, loop_vars, mul, reduce
from solar.ir.affine import FloorDiv, Mod, ge, lt, simplify, var
from solar.ir.dtypes import DType
from solar.ir.nodes import Load, Role, loads, map_indices
from solar.ir.scalar_ops import Update

F32 = DType.F32


def _atoms(e) -> int:
    """Number of atoms of an affine expression, floor-divisions and moduli counted with their
    insides."""
    n = 0
    for atom, _ in e.terms:
        n += 1 + (_atoms(atom.expr) if isinstance(atom, (FloorDiv, Mod)) else 0)
    return n


def _window_partition(x: views.View, w: int) -> views.View:
    """Swin's window_partition: (B, H, W, C) -> (B*H/w*W/w, w, w, C) by view/permute/view."""
    b, h, wd, c = x.shape
    y = views.reshape(x, (b, h // w, w, wd // w, w, c))
    y = views.permute(y, (0, 1, 3, 2, 4, 5))
    return views.reshape(y, (-1, w, w, c))


def _window_reverse(y: views.View, w: int, b: int, h: int, wd: int) -> views.View:
    y = views.reshape(y, (b, h // w, wd // w, w, w, -1))
    y = views.permute(y, (0, 1, 3, 2, 4, 5))
    return views.reshape(y, (b, h, wd, -1))


def _rounds(n: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Atoms per index of the base tensor's load after n rounds of partition, flatten to tokens
    and reverse: as the view gives it, and simplified with the consumer's loop ranges (as the
    statement builder does)."""
    x = views.tensor("x", (2, 56, 56, 96), F32)
    v = x
    for _ in range(n):
        v = _window_partition(v, 7)
        v = views.reshape(v, (-1, 49, 96))
        v = _window_reverse(views.reshape(v, (-1, 7, 7, 96)), 7, 2, 56, 56)
    idx = tuple(var(f"i{k}") for k in range(4))
    ranges = {f"i{k}": (0, n - 1) for k, n in enumerate(x.shape)}
    ((guards, expr),) = v.at(idx)
    assert guards == ()
    (raw,) = loads(expr)
    (load,) = loads(map_indices(expr, lambda e: simplify(e, ranges)))
    assert load.tensor == "x"
    return tuple(_atoms(t) for t in raw.index), tuple(_atoms(t) for t in load.index)


def test_chains_of_window_partitions_do_not_grow_their_indices():
    """Each round composes to the same small index (closures composed at each use nested every
    step's floor-divisions inside the next one's: thousands of atoms after a few rounds)."""
    one = _rounds(1)
    assert max(one[0]) <= 16 and max(one[1]) <= 8
    assert _rounds(3) == one


def test_shifted_windows_keep_small_indices():
    """A roll by (-3, -3) then a partition: four pieces (the roll's), each index small."""
    from solar.frontends.torch.lowerings.index_maps import roll_view

    x = views.tensor("x", (1, 56, 56, 96), F32)
    shifted = roll_view(roll_view(x, -3, 1), -3, 2)
    v = views.reshape(_window_partition(shifted, 7), (-1, 49, 96))
    alts = v.at(tuple(var(f"i{k}") for k in range(3)))
    assert len(alts) == 4
    assert max(_atoms(t) for _, e in alts for ld in loads(e) for t in ld.index) <= 12


def test_slice_of_a_concatenation_keeps_only_its_piece():
    a, b = views.tensor("a", (4, 3), F32), views.tensor("b", (4, 5), F32)
    v = views.slice_(views.cat([a, b], 1), 1, 3, 8)
    ((guards, expr),) = v.at((var("i"), var("j")))
    assert guards == ()
    assert expr == Load("b", (var("i"), var("j")))


def test_feasible_sees_pieces_that_cannot_meet():
    i = var("i")
    assert not views.feasible((ge(i, 0), lt(i, 32), ge(i, 32), lt(i, 64)))
    assert views.feasible((ge(i, 0), lt(i, 32), ge(i, 16)))
    assert not views.feasible((ge(i * 2 + var("j") * 2, 8), lt(i + var("j"), 4)))  # 2L >= 8, L < 4
    assert views.feasible((ge(i + var("j"), 4), lt(i, 4)))  # different forms: not decided here


def test_square_of_a_concatenation_has_one_statement_per_piece():
    """sum(x * x) over a cat of k pieces: k statements (of the k² combinations of pieces only the
    k feasible ones are formed)."""
    b = ProgramBuilder.new("p")
    pieces = []
    for k in range(6):
        name = b.declare(f"f{k}", (2, 4), F32, Role.INPUT)
        pieces.append(views.tensor(name, (2, 4), F32))
    x = views.cat(pieces, 1)
    reduce(b, "s", x, [1], False, Update.ADD, F32, value=lambda t, i: mul(t, t))
    reducing = [s for s in b.stmts if s.update is Update.ADD]
    assert len(reducing) == 6
    assert all(len({ld.tensor for ld in s.loads()}) == 1 for s in reducing)
    _, idx = loop_vars("i", (2, 24))
    assert len(mul(x.at(idx), x.at(idx))) == 6 * 6 - 30  # two equal (not identical) terms: pruned
