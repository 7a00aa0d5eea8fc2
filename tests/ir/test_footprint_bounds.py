"""Footprints that isl is not asked to count (solar.ir.polyhedral.footprint_range; docs/BOUNDS.md
§3, "Footprints isl is not asked to count"): loops an access does not use are cut before isl sees
the map, identical maps are counted once, and a union of several quasi-affine maps (window
partitions, rolls) is bounded below by a pairwise disjoint family of its images and above by the sum
of all of them. Every case is checked against isl's exact count of the union, which these small
programs still allow."""

from __future__ import annotations

from solar.ir import polyhedral
from solar.ir.parser import parse_program
from solar.lift import lift


def _exact(program, tensor: str) -> int:
    """The union counted by isl alone, as before the structural path existed."""
    accesses = [(s, ld) for s in program.stmts for ld in s.loads() if ld.tensor == tensor]
    texts = tuple(sorted(
        polyhedral._access_text(
            program, s, a.tensor, a.index, polyhedral._Names(program, s, False), "min", "T"
        )
        for s, a in accesses
    ))
    return polyhedral.count_points(polyhedral._image_text(texts))


def _range(program, tensor: str) -> tuple[int, int]:
    accesses = [(s, ld) for s in program.stmts for ld in s.loads() if ld.tensor == tensor]
    return polyhedral.footprint_range(program, accesses)


# X[16a + b] read as four blocks of 16: s1 the first 12 of each block (48 elements), s2 elements
# 8..15 (32, meeting s1 in 8..11), s3 elements 12..13 (8, disjoint from s1). Three floor-divisions
# and mods in every index (i % 4, i // 4, (i // 4) % 16: more than EXACT_QUASI_ATOMS): the
# structural path.
BLOCKS = """
program blocks {
  input X: f32[64]
  output A: f32[48]
  output B: f32[32]
  output C: f32[8]
  for i in 0..48:
    A[i] = X[16*(i % 4) + ((i // 4) % 16)]
  for i in 0..32:
    B[i] = X[16*(i % 4) + ((i // 4) % 16) + 8]
  for i in 0..8:
    C[i] = X[16*(i % 4) + ((i // 4) % 16) + 12]
}
"""


def test_overlapping_quasi_affine_union_is_bounded_by_a_disjoint_family():
    program = parse_program(BLOCKS)
    assert _exact(program, "X") == 64  # every element of every block
    # greedy from the largest image: s1 (48); s2 meets it; s3 does not: 48 + 8. Upper: 48+32+8 > 64.
    assert _range(program, "X") == (56, 64)
    assert polyhedral.tensor_footprint(program, "X", "read") == 56
    graph = lift(program)
    assert graph.footprints.elements("X", "read") == 56
    assert graph.footprints.at_most("X", "read") == 64
    # one statement alone is one map: counted exactly (injective: its domain's points)
    assert graph.footprints.elements("X", "read", (1,)) == 32
    assert graph.footprints.bounds("X", "read", (0, 2)) == (56, 56)  # disjoint: the exact union


def test_two_overlapping_maps_give_the_largest_image():
    last = "  for i in 0..8:\n    C[i] = X[16*(i % 4) + ((i // 4) % 16) + 12]\n"
    program = parse_program(BLOCKS.replace("+ 8]", "+ 4]").replace(last, ""))
    # s1: 0..11 of each block (48); s2: 4..11 (32), inside s1: the union is s1 exactly
    assert _exact(program, "X") == 48
    assert _range(program, "X") == (48, 64)


def test_disjoint_quasi_affine_pieces_sum_to_the_exact_union():
    """A roll written as two pieces (torch.roll's lowering): disjoint images, so their sum is the
    union, exact."""
    program = parse_program("""
program roll {
  input X: f32[10, 56]
  output Y: f32[10, 56]
  output Z: f32[10, 56]
  for i in 0..560 where 52 - (i % 56) >= 0:
    Y[i // 56, i % 56] = X[i // 56, (i % 56) + 3]
  for i in 0..560 where (i % 56) - 53 >= 0:
    Z[i // 56, i % 56] = X[i // 56, (i % 56) - 53]
}
""")
    assert _exact(program, "X") == 560
    assert _range(program, "X") == (560, 560)


def test_loops_the_index_does_not_use_are_cut_before_isl():
    """SwinV2's q/k/v projection reads the window-partitioned activations once per output column:
    with the column loop j cut, the map is injective and its count is the 98 window positions, with
    no isl count of the image (which took barvinok minutes at SwinV2's size)."""
    program = parse_program("""
program windows {
  input X: f32[2, 49]
  output Y: f32[98, 5]
  for i in 0..98, j in 0..5, r in 0..1:
    Y[i, j] += X[i // 49, 7*((i % 49) // 7) + (i % 7)]
}
""")
    accesses = [(s, ld) for s in program.stmts for ld in s.loads()]
    maps = polyhedral._reduced_maps(program, accesses, "min")
    ((stmt, _),) = maps.values()
    assert stmt.loop_vars == ("i",)
    assert _range(program, "X") == (98, 98) == (_exact(program, "X"),) * 2


def test_guards_on_cut_loops_only_need_a_point():
    """A loop linked to nothing in the index but through its own guard is cut with that guard; an
    empty cut part leaves the access touching nothing."""
    text = """
program cut {
  input X: f32[8]
  output Y: f32[8, 6]
  for i in 0..8, j in 0..6 where (j % 3) - G >= 0:
    Y[i, j] = X[(i + 3) % 8]
}
"""
    assert _range(parse_program(text.replace("G", "2")), "X") == (8, 8)
    assert _range(parse_program(text.replace("G", "3")), "X") == (0, 0)


def test_affine_unions_keep_the_exact_isl_count():
    """No floor-division or mod: the union goes to isl as before, exact (12, not 7 + 7)."""
    program = parse_program("""
program diagonal {
  input X: f32[12]
  output A: f32[4, 4]
  output B: f32[4, 4]
  for i in 0..4, j in 0..4:
    A[i, j] = X[i + j]
  for i in 0..4, j in 0..4:
    B[i, j] = X[i + j + 5]
}
""")
    assert _range(program, "X") == (12, 12) == (_exact(program, "X"),) * 2
    assert lift(program).footprints.elements("X", "read") == 12


def test_one_non_injective_quasi_affine_map_is_counted_exactly():
    program = parse_program("""
program halves {
  input X: f32[4]
  output Y: f32[8]
  for i in 0..8:
    Y[i] = X[i // 2]
}
""")
    assert _range(program, "X") == (4, 4)


def test_an_in_place_update_subtracts_the_upper_bound_of_what_it_overwrites():
    """`inplace_bytes` reads |y read| - |W| initial values: W must be bounded from above there. Here
    the two writes overwrite all of y (exactly 64 elements; their disjoint family only 48), so no
    initial value is read: 0 bytes, where the lower bound would claim (64 - 48) * 4."""
    from solar.backends.memory import inplace_bytes, priced_stmts

    program = parse_program("""
program overwrite {
  input x: f32[64]
  output y: f32[64] updates x
  output z: f32[64]
  for i in 0..64:
    y[i] = x[i]
  for i in 0..48:
    y[16*(i % 4) + ((i // 4) % 16)] = 2.0
  for i in 0..32:
    y[16*(i % 4) + ((i // 4) % 16) + 8] = 3.0
  for i in 0..64:
    z[i] = y[i]
}
""")
    graph = lift(program)
    kept = priced_stmts(graph)
    assert kept == frozenset({1, 2, 3})
    assert graph.footprints.bounds("y", "write", kept) == (48, 64)
    assert inplace_bytes(graph, "y", kept) == (0.0, 48 * 4.0)
