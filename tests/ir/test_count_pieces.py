"""Parametric counts by pieces (solar.ir.polyhedral.set_count_pieces / image_count_pieces), the
form solar.symbolic reads without importing islpy: the polynomial as isl writes it and the
piece's affine conditions on the parameters."""

from __future__ import annotations

from solar.ir.polyhedral import CountPiece, image_count_pieces, set_count_pieces


def ge0(n: str, const: str) -> tuple:
    """The condition `n * N + const >= 0` (one conjunction of one inequality)."""
    return ((("N", n), (1, const)), False),


def test_a_triangle_is_one_piece_everywhere():
    pieces = set_count_pieces("[N] -> { [i, j] : 0 <= j <= i < N }", ("N",))
    assert pieces == (CountPiece("(1/2 * N + 1/2 * N^2)", None),)


def test_a_shifted_range_holds_where_it_is_not_empty():
    (piece,) = set_count_pieces("[N] -> { [i] : 0 <= i < N - 3 }", ("N",))
    assert piece.polynomial == "(-3 + N)"
    assert piece.condition == (ge0("1", "-4"),)  # N - 4 >= 0


def test_union_of_images_splits_where_the_ranges_meet():
    maps = ("[N] -> { [i] -> T[i] : 0 <= i < N }", "[N] -> { [i] -> T[i + 2] : 0 <= i < N }")
    pieces = {p.polynomial: p.condition for p in image_count_pieces(maps, ("N",))}
    assert pieces == {
        "2 * N": (ge0("-1", "2"),),  # N <= 2: disjoint
        "(2 + N)": (ge0("1", "-3"),),  # N >= 3: they overlap
    }
