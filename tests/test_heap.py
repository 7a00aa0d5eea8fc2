"""solar.heap.settled_heap: objects alive on entry leave the collector's scans for the scope and
come back after it, once for nested scopes; a process that froze objects itself is left alone.
promote_all: what a paused block made goes to the oldest generation, unscanned."""

from __future__ import annotations

import gc

import pytest

from solar.heap import collection_paused, promote_all, settled, settled_heap


@pytest.fixture(autouse=True)
def _unfrozen():
    gc.unfreeze()
    yield
    gc.unfreeze()


def test_objects_alive_on_entry_are_frozen_inside_and_back_after():
    assert gc.get_freeze_count() == 0
    with settled_heap():
        frozen = gc.get_freeze_count()
        assert frozen > 0
        fresh = [{} for _ in range(1000)]  # tracked objects made inside the scope
        # frozen objects that die leave the count (another thread of the process may free some), so
        # the checks are what a second freeze or an early unfreeze would change by far more
        with settled_heap():  # nested: no second freeze (it would take `fresh` too)
            assert gc.get_freeze_count() < frozen + len(fresh)
        assert frozen // 2 < gc.get_freeze_count() < frozen + len(fresh)  # the inner scope left the freeze
        del fresh
    assert gc.get_freeze_count() == 0


def test_the_heap_comes_back_when_the_scope_raises():
    with pytest.raises(ValueError):
        with settled_heap():
            raise ValueError("x")
    assert gc.get_freeze_count() == 0


def test_a_process_that_froze_objects_itself_keeps_them_frozen():
    gc.freeze()
    mine = gc.get_freeze_count()
    fresh = [{} for _ in range(1000)]  # a second freeze would take these too; an unfreeze, all
    # frozen objects that die leave the count (another thread may free some): bounds, not equality
    with settled_heap():
        assert mine // 2 < gc.get_freeze_count() < mine + len(fresh)
    assert mine // 2 < gc.get_freeze_count() < mine + len(fresh)
    del fresh


def test_cyclic_garbage_made_inside_is_collected_after():
    class Node:
        pass

    @settled
    def make_cycle():
        a, b = Node(), Node()
        a.other, b.other = b, a
        return id(a)

    make_cycle()
    assert gc.get_freeze_count() == 0
    assert gc.collect() >= 2  # the cycle was not kept alive by the scope
    assert not any(type(o) is Node for o in gc.get_objects())


@pytest.mark.parametrize("enabled", [True, False])
def test_the_collector_is_paused_in_the_block_and_left_as_it_was(enabled):
    (gc.enable if enabled else gc.disable)()
    try:
        with pytest.raises(ValueError), collection_paused():
            assert not gc.isenabled()
            raise ValueError("x")
        assert gc.isenabled() is enabled
    finally:
        gc.enable()


def test_ir_text_is_parsed_with_the_collector_paused(monkeypatch):
    from solar.ir import parser

    seen = []

    def parse_tree(*args):
        seen.append(gc.isenabled())
        return original(*args)

    original = parser.parse_tree
    monkeypatch.setattr(parser, "parse_tree", parse_tree)
    parser.parse_program("program p {\n  input x: f32[4]\n  output y: f32[4]\n  for i in 0..4:\n    y[i] = x[i]\n}\n")
    assert seen == [False] and gc.isenabled()


class _Made:
    """A tracked object whose generation a test looks up."""


def _in(generation: int) -> set[int]:
    return {id(o) for o in gc.get_objects(generation=generation)}


@pytest.mark.parametrize("frozen_before,then", [(False, 2), (True, 0)])
def test_promote_all_moves_what_a_paused_block_made_to_the_oldest_generation(frozen_before, then):
    if frozen_before:
        gc.freeze()
    try:
        with collection_paused():
            made = [_Made() for _ in range(1000)]
            assert {id(m) for m in made} <= _in(0)
            promote_all()
            assert (gc.get_freeze_count() > 0) is frozen_before  # a process that froze objects: left as it is
            assert {id(m) for m in made} <= _in(then)
    finally:
        gc.unfreeze()
